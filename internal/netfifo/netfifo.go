// Package netfifo serves TCP connections whose waiting readers wake in the order their data
// arrived.
//
// Go's runtime poller hands the goroutines of one poll back in reverse order of readiness. On a
// saturated server that alternates the order connections are served in from one round to the
// next, so a connection served first in one round is served last in the next, and the slowest
// answers take about twice the mean (p99 ≈ 2× p50 with 50 busy connections on one core, where a
// server that keeps arrival order stays near the mean). A Listener keeps arrival order: its
// connections are not registered with the runtime poller but with an epoll instance of this
// package, and one goroutine takes their readiness from it in the kernel's order (first ready,
// first reported) and wakes the waiting readers in that order.
//
// On systems without epoll, Listen returns the listener it was given.
package netfifo
