package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// loadResult is what one load run measured. Latencies are in microseconds. WrongAnswers counts
// responses whose status or body was not the expected one (the Go generator checks every
// response; wrk can only compare the mean response size with the checked one).
type loadResult struct {
	Requests     int64   `json:"requests"`
	DurationUS   int64   `json:"duration_us"`
	Bytes        int64   `json:"bytes"`
	ConnectErr   int64   `json:"connect"`
	ReadErr      int64   `json:"read"`
	WriteErr     int64   `json:"write"`
	StatusErr    int64   `json:"status"`
	TimeoutErr   int64   `json:"timeout"`
	WrongAnswers int64   `json:"wrong"`
	P50US        float64 `json:"p50_us"`
	P99US        float64 `json:"p99_us"`
	MaxUS        float64 `json:"max_us"`
	EngineCPU    float64 `json:"engine_cpu_pct,omitempty"` // filled in by the harness
	LoadCPU      float64 `json:"load_cpu_pct,omitempty"`   // the generator's, filled in by the harness

	rssLoaded, rssEnd int64 // the engine's KiB before the round's traffic and after its run (harness)
}

func (r *loadResult) rps() float64 {
	if r.DurationUS == 0 {
		return 0
	}
	return float64(r.Requests) / (float64(r.DurationUS) / 1e6)
}

// errors is every failed request: transport errors, timeouts and wrong answers.
func (r *loadResult) errors() int64 {
	return r.ConnectErr + r.ReadErr + r.WriteErr + r.StatusErr + r.TimeoutErr + r.WrongAnswers
}

// rawRequest renders req as the bytes both generators send (for tcp, its body alone).
func rawRequest(req request, addr, proto string) []byte {
	if proto == "tcp" {
		return []byte(req.Body)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.Path, addr)
	for _, h := range req.Headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if req.Body != "" || req.Method == "POST" || req.Method == "PUT" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(req.Body))
	}
	b.WriteString("\r\n")
	b.WriteString(req.Body)
	return b.Bytes()
}

// checked is the outcome of sending a scenario's request once.
type checked struct {
	OK       bool
	Status   int
	Body     string
	WireSize int // bytes of the whole response on the wire
	Close    bool
	Took     time.Duration
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// clientTLS is the generators' TLS: version 1.3, any certificate (every engine serves a
// self-signed one), HTTP/1.1.
var clientTLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13} //nolint:gosec // loopback test servers

// checkOnce sends req once on a fresh connection (TLS for https) and compares the answer with
// want.
func checkOnce(addr, proto string, req request, want expect) (checked, error) {
	var conn net.Conn
	var err error
	d := &net.Dialer{Timeout: 30 * time.Second} // a JVM may make its certificate on the first handshake
	if proto == "https" {
		conn, err = tls.DialWithDialer(d, "tcp", addr, clientTLS)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return checked{}, fmt.Errorf("connect %s: %w", addr, err)
	}
	defer conn.Close()
	t0 := time.Now()
	_ = conn.SetDeadline(t0.Add(60 * time.Second))
	if _, err := conn.Write(rawRequest(req, addr, proto)); err != nil {
		return checked{}, fmt.Errorf("write: %w", err)
	}
	if proto == "tcp" {
		got := make([]byte, 0, len(want.Body))
		buf := make([]byte, 64<<10)
		for len(got) < len(want.Body) {
			n, err := conn.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		c := checked{Body: string(got), WireSize: len(got), Took: time.Since(t0)}
		c.OK = c.Body == want.Body
		return c, nil
	}
	cr := &countingReader{r: conn}
	br := bufio.NewReaderSize(cr, 64<<10)
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		return checked{}, fmt.Errorf("read response: %w", err)
	}
	c := checked{Status: resp.StatusCode(), Body: string(resp.Body()), WireSize: cr.n - br.Buffered(), Close: resp.ConnectionClose(), Took: time.Since(t0)}
	c.OK = answerOK(c.Status, resp.Body(), want)
	return c, nil
}

func answerOK(status int, body []byte, want expect) bool {
	if status != want.Status {
		return false
	}
	if want.Contains != "" {
		return bytes.Contains(body, []byte(want.Contains))
	}
	return string(body) == want.Body
}

// luaString quotes s as a Lua string literal.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// wrkScript writes the Lua script that sets the request and prints the summary as JSON.
func wrkScript(dir, name string, req request) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "-- generated by mockd-bench for scenario %s\n", name)
	fmt.Fprintf(&b, "wrk.method = %s\n", luaString(req.Method))
	if req.Body != "" {
		fmt.Fprintf(&b, "wrk.body = %s\n", luaString(req.Body))
	}
	for _, h := range req.Headers {
		fmt.Fprintf(&b, "wrk.headers[%s] = %s\n", luaString(h[0]), luaString(h[1]))
	}
	b.WriteString(`done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%.1f,"p99_us":%.1f,"max_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`)
	p := filepath.Join(dir, name+".lua")
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

// loadSpec is one load run.
type loadSpec struct {
	Addr        string
	Req         request
	Want        expect
	Connections int
	Duration    time.Duration
	Timeout     time.Duration
	CPU         string // taskset CPU list for the generator; "" runs unpinned
	Proto       string // "" or "http", "https", "tcp"
	WireSize    int    // the checked response size, used by wrk's size check
}

func pinned(cpu string, name string, args ...string) (string, []string) {
	if cpu == "" {
		return name, args
	}
	return "taskset", append([]string{"-c", cpu, name}, args...)
}

// runWrk runs wrk once with the scenario's script.
func runWrk(ctx context.Context, spec loadSpec, script string) (*loadResult, error) {
	secs := int(spec.Duration.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	name, args := pinned(spec.CPU, "wrk", "-t1", "-c"+strconv.Itoa(spec.Connections), "-d"+strconv.Itoa(secs)+"s",
		"--timeout", strconv.Itoa(int(spec.Timeout/time.Second))+"s", "-s", script, "http://"+spec.Addr+spec.Req.Path)
	ctx, cancel := context.WithTimeout(ctx, spec.Duration+spec.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("wrk: %w: %s", err, lastLines(string(out), 5))
	}
	res, err := parseResultLine(out)
	if err != nil {
		return nil, fmt.Errorf("wrk: %w: %s", err, lastLines(string(out), 5))
	}
	res.LoadCPU = cpuPct(cmd, spec.Duration)
	// wrk cannot check bodies cheaply; a mean response size off by more than 2% from the
	// checked response (for example an empty no-match answer) counts every request wrong.
	if res.Requests > 0 && spec.WireSize > 0 {
		mean := float64(res.Bytes) / float64(res.Requests)
		if d := mean - float64(spec.WireSize); d > 0.02*float64(spec.WireSize)+2 || -d > 0.02*float64(spec.WireSize)+2 {
			res.WrongAnswers = res.Requests
		}
	}
	return res, nil
}

func parseResultLine(out []byte) (*loadResult, error) {
	for _, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] == '{' {
			var r loadResult
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("parse summary %q: %w", line, err)
			}
			return &r, nil
		}
	}
	return nil, errors.New("no summary line in output")
}

// runGoGen runs this binary's own generator ("loadgen" subcommand) pinned to spec.CPU.
func runGoGen(ctx context.Context, spec loadSpec, dir, name string) (*loadResult, error) {
	reqFile := filepath.Join(dir, name+".req")
	if err := os.WriteFile(reqFile, rawRequest(spec.Req, spec.Addr, spec.Proto), 0o644); err != nil {
		return nil, err
	}
	wantFile := filepath.Join(dir, name+".want")
	wantBody, mode := spec.Want.Body, "equals"
	if spec.Want.Contains != "" {
		wantBody, mode = spec.Want.Contains, "contains"
	}
	if err := os.WriteFile(wantFile, []byte(wantBody), 0o644); err != nil {
		return nil, err
	}
	return runSelf(ctx, spec.CPU, spec.Duration, spec.Duration+spec.Timeout+30*time.Second, "loadgen", "-addr", spec.Addr, "-request", reqFile,
		"-want-status", strconv.Itoa(spec.Want.Status), "-want-body", wantFile, "-want-mode", mode, "-c", strconv.Itoa(spec.Connections),
		"-d", spec.Duration.String(), "-timeout", spec.Timeout.String(), "-proto", spec.Proto)
}

// runSelf runs this binary's subcommand sub (loadgen, pairs) pinned to cpu for a run of d,
// killed after limit, and reads the loadResult it prints.
func runSelf(ctx context.Context, cpu string, d, limit time.Duration, sub string, args ...string) (*loadResult, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	name, a := pinned(cpu, self, append([]string{sub}, args...)...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, a...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", sub, err, lastLines(string(out), 5))
	}
	res, err := parseResultLine(out)
	if err != nil {
		return nil, err
	}
	res.LoadCPU = cpuPct(cmd, d)
	return res, nil
}

// cpuPct is the CPU time a finished command used, as a percentage of one core over d.
func cpuPct(cmd *exec.Cmd, d time.Duration) float64 {
	if cmd.ProcessState == nil || d <= 0 {
		return 0
	}
	return 100 * (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / d.Seconds()
}

// histogram records latencies in microseconds with about 1.5% precision: exact below 128 µs,
// then 64 sub-buckets per power of two.
type histogram struct {
	counts [128 + 48*64]int64
	total  int64
	max    int64
}

func bucketOf(v int64) int {
	if v < 128 {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 7
	return 128 + (shift-1)*64 + int(v>>shift) - 64
}

func bucketValue(i int) float64 {
	if i < 128 {
		return float64(i)
	}
	shift := (i-128)/64 + 1
	m := int64((i-128)%64 + 64)
	// midpoint of the bucket
	return float64(m<<shift) + float64(int64(1)<<shift)/2
}

func (h *histogram) record(us int64) {
	i := bucketOf(us)
	if i >= len(h.counts) {
		i = len(h.counts) - 1
	}
	h.counts[i]++
	h.total++
	if us > h.max {
		h.max = us
	}
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

func (h *histogram) percentile(p float64) float64 {
	if h.total == 0 {
		return 0
	}
	rank := int64(p / 100 * float64(h.total))
	if rank >= h.total {
		rank = h.total - 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen > rank {
			// A bucket's midpoint can lie above the largest sample in it.
			return min(bucketValue(i), float64(h.max))
		}
	}
	return float64(h.max)
}

// loadConfig is what one run of the Go generator does.
type loadConfig struct {
	addr    string
	request []byte // the raw request, sent again on each connection as soon as it is answered
	want    expect
	conns   int
	dur     time.Duration
	timeout time.Duration // a request unanswered for longer counts as a timeout
	proto   string        // "http" (or ""), "https" (TLS, handshake before the first request) or "tcp"
}

// loadgenMain is the Go generator ("loadgen" subcommand): keep-alive connections that each send
// the request again as soon as the answer is in, check every answer's status and body, and
// reconnect when the server closes the connection (Connection: close, as Mountebank does). It
// prints its loadResult as JSON.
func loadgenMain(args []string) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	addr := fs.String("addr", "", "host:port")
	reqFile := fs.String("request", "", "file holding the raw HTTP request")
	wantStatus := fs.Int("want-status", 200, "expected status")
	wantFile := fs.String("want-body", "", "file holding the expected body")
	wantMode := fs.String("want-mode", "equals", "equals or contains")
	conns := fs.Int("c", 50, "connections")
	dur := fs.Duration("d", 5*time.Second, "duration")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout")
	proto := fs.String("proto", "http", "http, https or tcp (raw bytes: the answer is the expected body's length)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raw, err := os.ReadFile(*reqFile)
	if err != nil {
		return err
	}
	wantBody, err := os.ReadFile(*wantFile)
	if err != nil {
		return err
	}
	cfg := loadConfig{addr: *addr, request: raw, want: expect{Status: *wantStatus}, conns: *conns, dur: *dur, timeout: *timeout, proto: *proto}
	if *wantMode == "contains" {
		cfg.want.Contains = string(wantBody)
	} else {
		cfg.want.Body = string(wantBody)
	}
	if cfg.conns < 1 {
		return errors.New("-c: want at least one connection")
	}
	res, err := runLoad(cfg)
	if err != nil {
		return err
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	return nil
}

func median(rs []*loadResult) *loadResult {
	s := append([]*loadResult(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rps() < s[j].rps() })
	return s[len(s)/2]
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
