package metrics

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// writeProcess writes the process_* metrics Prometheus' process collector writes on Linux,
// read from /proc as it reads them. One that cannot be read is left out.
func writeProcess(b *bytes.Buffer) {
	// The fields of /proc/self/stat after the command, which is in parentheses and may hold
	// spaces: f[0] is field 3 (state); utime is field 14, stime 15, starttime 22, vsize 23, rss 24.
	var f []string
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f = strings.Fields(string(stat[i+1:]))
		}
	}
	if len(f) < 22 {
		f = nil
	}
	num := func(field int) float64 {
		v, _ := strconv.ParseFloat(f[field-3], 64)
		return v
	}
	const userHZ = 100 // as procfs assumes
	// In the order of their names, as Prometheus' client writes them.
	if f != nil {
		gauge(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", (num(14)+num(15))/userHZ)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		gauge(b, "process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(lim.Cur))
	}
	if in, out, ok := netOctets(); ok {
		gauge(b, "process_network_receive_bytes_total", "Number of bytes received by the process over the network.", "counter", in)
		gauge(b, "process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", "counter", out)
	}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			gauge(b, "process_open_fds", "Number of open file descriptors.", "gauge", float64(len(names)))
		}
	}
	if f == nil {
		return
	}
	gauge(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", num(24)*float64(os.Getpagesize()))
	if boot := bootTime(); boot > 0 {
		gauge(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", boot+num(22)/userHZ)
	}
	gauge(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", num(23))
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		gauge(b, "process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge", float64(lim.Cur))
	}
}

// bootTime is when the machine started, in seconds since the epoch (btime of /proc/stat).
func bootTime() float64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			t, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t
		}
	}
	return 0
}

// netOctets returns InOctets and OutOctets of the IpExt lines of /proc/self/net/netstat.
func netOctets() (in, out float64, ok bool) {
	data, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "IpExt:") || !strings.HasPrefix(lines[i+1], "IpExt:") {
			continue
		}
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		found := 0
		for j := 1; j < len(names) && j < len(values); j++ {
			v, err := strconv.ParseFloat(values[j], 64)
			if err != nil {
				continue
			}
			switch names[j] {
			case "InOctets":
				in, found = v, found+1
			case "OutOctets":
				out, found = v, found+1
			}
		}
		return in, out, found == 2
	}
	return 0, 0, false
}
