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

// TestClientThatDoesNotReadItsAnswerIsClosed: a client that asks an http imposter, or the admin
// API, for an answer larger than the sockets' buffers and never reads it has its connection
// closed once the write has made no progress for --idle-timeout, as a tcp imposter's is. It was
// held, with the goroutine serving it, for as long as the client kept it open: nothing timed out
// a connection neither idle nor receiving a request.
func TestClientThatDoesNotReadItsAnswerIsClosed(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("reads the sockets' states in /proc/net/tcp")
	}
	s := start(t, "--idle-timeout", "1s")
	port := listenFree(t)
	const size = 32 << 20
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":%q}}]}]}`, port, strings.Repeat("z", size))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp, "Connection", "close"); status != 201 {
		t.Fatalf("create: %d %.200s", status, body)
	}
	admin := strings.TrimPrefix(s.Admin, "http://")
	for _, tt := range []struct{ name, addr, path string }{
		{"imposter", "127.0.0.1:" + strconv.Itoa(port), "/"},
		{"admin API", admin, "/imposters/" + strconv.Itoa(port)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", tt.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.(*net.TCPConn).SetReadBuffer(4096)
			if _, err := io.WriteString(c, "GET "+tt.path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			// Never read: the answer's write stalls, and is given up at the idle timeout: the
			// server's end of the connection is closed (no longer established with a socket
			// of the process: a socket closed with unsent data lingers in FIN-WAIT-1, its
			// inode 0), while the client keeps its end open.
			server := c.LocalAddr().(*net.TCPAddr).Port
			for deadline := time.Now().Add(30 * time.Second); serverEndOpen(t, server); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the connection of a client that did not read its answer for 30 idle timeouts was kept")
				}
			}
		})
	}
}

// serverEndOpen reports whether /proc/net/tcp lists the server's end of the loopback connection
// whose client port is client as established and held by a process (its inode not 0).
func serverEndOpen(t *testing.T, client int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	remote := fmt.Sprintf(":%04X", client)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		if len(f) > 9 && strings.HasSuffix(f[2], remote) && f[3] == "01" && f[9] != "0" {
			return true
		}
	}
	return false
}
