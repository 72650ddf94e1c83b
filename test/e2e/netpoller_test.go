package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// epollInstances counts the epoll instances process pid holds: Go's runtime has one, and the
// FIFO poller of --netpoller fifo adds its own once an http imposter listens.
func epollInstances(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot list %s: %v", dir, err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == "anon_inode:[eventpoll]" {
			n++
		}
	}
	return n
}

// --netpoller chooses how http imposters (and a proxy's origin connections) wait for data: fifo
// (the default) serves them through mockd's own epoll instance, go through Go's runtime poller;
// both answer the same.
// A YAML server block sets it too, and an unknown value is refused before anything starts.
func TestNetpoller(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the FIFO poller is Linux's (elsewhere both are Go's runtime poller)")
	}
	yaml := filepath.Join(t.TempDir(), "server.yaml")
	if err := os.WriteFile(yaml, []byte("server:\n  netpoller: go\nimposters: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		epoll int
	}{
		{"default", nil, 2},
		{"fifo", []string{"--netpoller", "fifo"}, 2},
		{"go", []string{"--netpoller", "go"}, 1},
		{"yaml", []string{"-c", yaml}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.args...)
			port := listenFree(t)
			imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"served"}}]}]}`, port)
			if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}
			if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); status != 200 || body != "served" {
				t.Fatalf("GET through the imposter: %d %q, want 200 \"served\"", status, body)
			}
			// A proxy's origin connections wait as the imposters do: on the FIFO poller with
			// fifo, on Go's with go (no epoll instance of mockd's own).
			proxyPort := listenFree(t)
			proxy := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"proxy":{"to":"http://127.0.0.1:%d","mode":"proxyAlways"}}]}]}`, proxyPort, port)
			if status, _, body := do(t, "POST", s.Admin+"/imposters", proxy); status != 201 {
				t.Fatalf("create the proxy: %d %s", status, body)
			}
			for range 3 { // kept-alive origin connections carry the later requests
				if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(proxyPort)+"/", ""); status != 200 || body != "served" {
					t.Fatalf("GET through the proxy: %d %q, want 200 \"served\"", status, body)
				}
			}
			if got := epollInstances(t, s.cmd.Process.Pid); got != tc.epoll {
				t.Errorf("mockd %s holds %d epoll instances, want %d", strings.Join(tc.args, " "), got, tc.epoll)
			}
		})
	}
	out, err := exec.Command(mockdBin, "serve", "--port", "0", "--netpoller", "kqueue").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown poller "kqueue": want go or fifo`) {
		t.Errorf("--netpoller kqueue: %v\n%s\nwant a refusal naming go and fifo", err, out)
	}
}
