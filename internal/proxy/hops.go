package proxy

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
)

// MaxHops is how many of this process's proxies (http and tcp) one request may go through: a
// proxy whose request has come through MaxHops of them already does not forward it and fails
// it with LoopError. An imposter that proxies to itself, or two that proxy to each other, sent
// each request round until the process ran out of file descriptors (Mountebank does too): a
// tcp loop then held every descriptor for --idle-timeout, and no imposter could accept a
// client meanwhile.
const MaxHops = 16

// hops knows the connections this process's proxies have open to origins while a request is
// on them, by their local address, with how many proxies that request has gone through. An
// imposter of this process that receives a request on such a connection (its client's address
// is that local address) knows the request's hops without anything added on the wire, so what
// an origin sees is what it saw before.
var hops struct {
	n  atomic.Int32 // entries in m: none, and HopsOf looks up nothing
	mu sync.Mutex
	m  map[netip.AddrPort]int
}

// ports marks the ports this process's imposters listen on (see Serving), counting the
// imposters on each (one on each host it may be bound to). Only a connection to one of them can
// bring a request back to this process, so Enter records no other: a proxy to an origin
// elsewhere (the usual case) pays a bit test, not the table's lock and map.
var ports struct {
	mu   sync.Mutex
	n    map[int]int
	bits [1 << 10]atomic.Uint64
}

// Serving records that an imposter of this process listens on port (on), or no longer does.
func Serving(port int, on bool) {
	if port <= 0 || port > 0xffff {
		return
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.n == nil {
		ports.n = map[int]int{}
	}
	if on {
		ports.n[port]++
	} else if ports.n[port]--; ports.n[port] <= 0 {
		delete(ports.n, port)
	}
	w, bit := &ports.bits[port>>6], uint64(1)<<(port&63)
	if ports.n[port] > 0 {
		w.Or(bit)
	} else {
		w.And(^bit)
	}
}

// served reports whether an imposter of this process listens on port.
func served(port int) bool {
	return port > 0 && port <= 0xffff && ports.bits[port>>6].Load()&(uint64(1)<<(port&63)) != 0
}

// Hop is a connection's entry in the table of proxy connections (see Enter); its zero value is
// no entry.
type Hop struct{ local netip.AddrPort }

// Enter records that conn, a connection this process opened to an origin, carries a request
// that has gone through hop of its proxies (this one included), until Leave; nothing when the
// origin's port is not one an imposter of this process listens on (see Serving).
func Enter(conn net.Conn, hop int) Hop {
	if r, ok := conn.RemoteAddr().(*net.TCPAddr); !ok || r == nil || !served(r.Port) {
		return Hop{}
	}
	local, ok := addrPort(conn.LocalAddr())
	if !ok {
		return Hop{}
	}
	hops.mu.Lock()
	if hops.m == nil {
		hops.m = map[netip.AddrPort]int{}
	}
	hops.m[local] = hop
	hops.n.Store(int32(len(hops.m)))
	hops.mu.Unlock()
	return Hop{local}
}

// Leave forgets h's connection (nothing for the zero Hop).
func (h Hop) Leave() {
	if !h.local.IsValid() {
		return
	}
	hops.mu.Lock()
	delete(hops.m, h.local)
	hops.n.Store(int32(len(hops.m)))
	hops.mu.Unlock()
}

// HopsOf returns how many of this process's proxies a request from client (its address) has
// gone through: 0 unless client is a connection one of them has open (see Enter).
func HopsOf(client netip.AddrPort) int {
	if hops.n.Load() == 0 || !client.IsValid() {
		return 0
	}
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	hops.mu.Lock()
	n := hops.m[client]
	hops.mu.Unlock()
	return n
}

// HopsOfAddr is HopsOf of a connection's remote address.
func HopsOfAddr(a net.Addr) int {
	if hops.n.Load() == 0 {
		return 0
	}
	client, _ := addrPort(a)
	return HopsOf(client)
}

// LoopError is the error of a proxy that does not forward a request because it has gone
// through MaxHops of this process's proxies already (see MaxHops).
func LoopError(to string) *config.Error {
	return &config.Error{Code: config.CodeInvalidProxy, Message: fmt.Sprintf(
		"proxy loop: the request has gone through %d proxies of this mockd already; not forwarded to %s",
		MaxHops, config.MarshalJSON(to, 0))}
}

// addrPort is a's address and port with an IPv4 address unmapped, when a is TCP's.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	t, ok := a.(*net.TCPAddr)
	if !ok || t == nil {
		return netip.AddrPort{}, false
	}
	ap := t.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ap.IsValid()
}
