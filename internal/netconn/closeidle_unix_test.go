//go:build unix

package netconn

import (
	"bufio"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// finArrived reports whether the peer's FIN is already in c's receive queue, without waiting.
func finArrived(t *testing.T, c net.Conn) bool {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), make([]byte, 1), syscall.MSG_DONTWAIT|syscall.MSG_PEEK)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return n == 0 && rerr == nil
}

// CloseIdle has sent an idle connection's FIN when it returns: an imposter's DELETE is answered
// after it, and a keep-alive client (Node.js's agent) that reused the connection once it had the
// answer got ECONNRESET where Mountebank's client gets ECONNREFUSED (the FIFO poller closed the
// socket on the thread of the read waiting on it, after the DELETE's answer).
func TestCloseIdleSendsFINBeforeReturning(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run("fifo="+strconv.FormatBool(fifo), func(t *testing.T) {
			for round := range 20 {
				il, _, _ := holdServerOn(t, fifo, ListenOptions{})
				c, err := net.Dial("tcp", il.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
					t.Fatalf("body %q", got)
				}
				for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
					il.mu.Lock()
					idle := 0
					for ic := range il.conns {
						if ic.since.Load() != 0 {
							idle++
						}
					}
					il.mu.Unlock()
					if idle == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the connection never became idle")
					}
				}
				if busy := il.CloseIdle(); busy != 0 {
					t.Fatalf("%d busy", busy)
				}
				if !finArrived(t, c) {
					t.Fatalf("round %d: CloseIdle returned before the idle connection's FIN was sent", round)
				}
				_ = c.Close()
			}
		})
	}
}
