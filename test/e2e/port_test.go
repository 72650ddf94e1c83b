package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
)

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// listenFree returns a loopback port that was free a moment ago. It is drawn from below the
// kernel's ephemeral range (32768 and up on Linux, 49152 on macOS), so neither an outgoing
// connection's source port nor a server on port 0 (mockd --port 0 included) can be given it
// between the test's choosing it and mockd's binding it, or while a test restarts mockd on it.
// One test process never hands out the same port twice.
func listenFree(t *testing.T) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for tries := 0; ; tries++ {
		port := 20000 + rand.IntN(32768-20000)
		if handedOut.ports[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if tries > 1000 {
				t.Fatalf("no free port below 32768: %v", err)
			}
			continue
		}
		ln.Close()
		handedOut.ports[port] = true
		return port
	}
}
