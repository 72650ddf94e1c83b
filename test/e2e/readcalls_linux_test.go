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

// startOneP starts mockd with one P (GOMAXPROCS=1): the runtime then wakes its poller's thread
// through its eventfd (a read each) less often, whose reads would blur a count of read calls.
func startOneP(t *testing.T) *server {
	t.Helper()
	args := mockdproc.Args()
	cmd := exec.Command(mockdBin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	s, err := startCmd(t, cmd, strings.Join(args, " "))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oneReadEach makes request (one exchange on one connection) 201 times and fails the test
// unless s read the last 200 with about one read(2) each.
func oneReadEach(t *testing.T, s *server, request func()) {
	t.Helper()
	request() // the connection is accepted and served
	pid := s.cmd.Process.Pid
	before := readCalls(t, pid)
	const requests = 200
	for range requests {
		request()
	}
	reads := readCalls(t, pid) - before
	t.Logf("%d read system calls for %d requests", reads, requests)
	if reads > requests+requests/4 {
		t.Errorf("%d read system calls for %d requests, want about one a request", reads, requests)
	}
}

// TestKeepAliveRequestIsOneRead: an http imposter reads a keep-alive connection's request with
// one read(2), not a second one that finds the socket empty once the answer is written (that
// was a third of a request's system calls).
func TestKeepAliveRequestIsOneRead(t *testing.T) {
	s := startOneP(t)
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
	oneReadEach(t, s, get)
}

// TestTCPRequestIsOneRead: a tcp imposter reads each request of a connection with one read(2),
// not a second one that finds the socket empty once the answer is written (its connections wait
// on the FIFO poller, as http's do).
func TestTCPRequestIsOneRead(t *testing.T) {
	s := startOneP(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,"stubs":[{"predicates":[{"equals":{"data":"ping"}}],"responses":[{"is":{"data":"pong"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c := dialImposter(t, "tcp", port)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	buf := make([]byte, 4)
	exchange := func() {
		t.Helper()
		if _, err := io.WriteString(c, "ping"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
			t.Fatalf("%q, %v; want pong", buf, err)
		}
	}
	oneReadEach(t, s, exchange)
}
