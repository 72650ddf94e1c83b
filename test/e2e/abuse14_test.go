package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientThatDoesNotReadItsAnswerIsClosed: a client that asks an http imposter for an answer
// larger than the sockets' buffers and never reads it has its connection closed once the write
// has made no progress for --idle-timeout, as a tcp imposter's is. It was
// held, with the goroutine serving it, for as long as the client kept it open: nothing timed out
// a connection neither idle nor receiving a request.
func TestClientThatDoesNotReadItsAnswerIsClosed(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("counts the process's descriptors in /proc")
	}
	s := start(t, "--idle-timeout", "1s")
	port := listenFree(t)
	const size = 32 << 20
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":%q}}]}]}`, port, strings.Repeat("z", size))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp, "Connection", "close"); status != 201 {
		t.Fatalf("create: %d %.200s", status, body)
	}
	client.CloseIdleConnections()
	// The process's sockets (not its other descriptors: the admin API's reserve, /dev/null,
	// is let go of and taken again around accepts).
	dir := "/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/fd"
	fds := func() int {
		list, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range list {
			if to, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(to, "socket:") {
				n++
			}
		}
		return n
	}
	for _, tt := range []struct{ name, addr, path string }{
		{"imposter", "127.0.0.1:" + strconv.Itoa(port), "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The count once the admin API's connections from before are closed.
			before := fds()
			for settle := time.Now().Add(10 * time.Second); time.Now().Before(settle); {
				time.Sleep(200 * time.Millisecond)
				n := fds()
				if n == before {
					break
				}
				before = n
			}
			c, err := net.DialTimeout("tcp", tt.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.(*net.TCPConn).SetReadBuffer(4096)
			if _, err := io.WriteString(c, "GET "+tt.path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); fds() <= before; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the connection was not accepted")
				}
			}
			// Never read: the answer's write stalls, and is given up at the idle timeout (its
			// socket's descriptor closed), while the client keeps the connection open.
			for deadline := time.Now().Add(30 * time.Second); fds() > before; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d sockets open, %d before: the connection of a client that did not read its answer for 30 idle timeouts was kept", fds(), before)
				}
			}
		})
	}
}
