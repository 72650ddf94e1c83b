package e2e

import (
	"net"
	"sync"
	"testing"
)

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// listenFree returns a loopback port that was free a moment ago. The kernel may give a port it
// just released to the next caller, so one test process never hands out the same port twice:
// two parallel tests would otherwise start imposters on one port.
func listenFree(t *testing.T) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
}
