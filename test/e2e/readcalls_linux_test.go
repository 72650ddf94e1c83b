package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// readCalls is the read system calls process pid has made (syscr of /proc/PID/io).
func readCalls(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		t.Skipf("cannot read the process's I/O counts: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no syscr in /proc/PID/io")
	return 0
}

// TestKeepAliveRequestIsOneRead: an http imposter reads a keep-alive connection's request with
// one read(2), not a second one that finds the socket empty once the answer is written (that
// was a third of a request's system calls).
func TestKeepAliveRequestIsOneRead(t *testing.T) {
	// One P: the runtime then wakes its poller's thread through its eventfd (a read each)
	// less often, whose reads would blur the count.
	args := mockdproc.Args()
	cmd := exec.Command(mockdBin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	s, err := startCmd(t, cmd, strings.Join(args, " "))
	if err != nil {
		t.Fatal(err)
	}
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"ok"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c := dialImposter(t, "http", port)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReader(c)
	get := func() {
		t.Helper()
		if _, err := io.WriteString(c, "GET /n HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("%d %q, want 200 ok", resp.StatusCode, body)
		}
	}
	get() // the connection is accepted and served
	pid := s.cmd.Process.Pid
	before := readCalls(t, pid)
	const requests = 200
	for range requests {
		get()
	}
	reads := readCalls(t, pid) - before
	t.Logf("%d read system calls for %d requests", reads, requests)
	if reads > requests+requests/4 {
		t.Errorf("%d read system calls for %d requests, want about one a request", reads, requests)
	}
}
