// Package netconn is the connection machinery under mockd's servers, apart from what they
// serve: how connections wait for data (Go's runtime poller, or this package's FIFO poller),
// RetryListener (accepting through failures), IdleListener with IdleConnState and TrackRequests
// (idle and header timeouts, draining on shutdown, request framing checks for fasthttp),
// and Server (a goroutine per connection, all closed on shutdown, for tcp and smtp). It
// imports nothing of mockd.
//
// # Pollers
//
// Go's runtime poller hands the goroutines of one poll back in reverse order of readiness. On a
// saturated server that alternates the order connections are served in from one round to the
// next, so a connection served first in one round is served last in the next, and the slowest
// answers take about twice the mean (p99 ≈ 2× p50 with 50 busy connections on one core, where a
// server that keeps arrival order stays near the mean). The FIFO poller keeps arrival order: its
// connections are not registered with the runtime poller but with an epoll instance of this
// package, and one goroutine takes their readiness from it in the kernel's order (first ready,
// first reported) and wakes the waiting readers in that order. TestFIFOServesInArrivalOrder
// shows the property. Without epoll (not Linux) the FIFO poller is the runtime's.
package netconn

import (
	"fmt"
	"net"
)

// Poller says how a listener's connections wait for data.
type Poller string

const (
	// PollerFIFO wakes the connections in the order their data arrived (ListenFIFO); the default.
	PollerFIFO Poller = "fifo"
	// PollerGo leaves the connections to Go's runtime poller.
	PollerGo Poller = "go"
)

// ParsePoller reads a --netpoller value: "go" or "fifo" ("" is fifo).
func ParsePoller(s string) (Poller, error) {
	switch Poller(s) {
	case PollerFIFO, "":
		return PollerFIFO, nil
	case PollerGo:
		return PollerGo, nil
	}
	return "", fmt.Errorf("unknown poller %q: want go or fifo", s)
}

// Listen serves the connections ln accepts through poller p; with PollerFIFO see ListenFIFO.
// The returned listener owns ln.
func Listen(ln *net.TCPListener, p Poller) (net.Listener, error) {
	if p == PollerGo {
		return ln, nil
	}
	return ListenFIFO(ln)
}

// bodyPoller is a connection whose reads can poll a moment for a body's next bytes before they
// wait (FIFOConn.pollBody).
type bodyPoller interface {
	pollBody(on bool) (missed bool)
}

// progressReporter is a connection that tells p of the bytes its writes send, as they go
// (FIFOConn, rawIOConn).
type progressReporter interface{ reportWrites(p writeProgress) }

// writeProgress is told of the bytes a connection's system call sent (idleConn.wrote).
type writeProgress interface{ wrote(n int) }
