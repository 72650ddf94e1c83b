package netconn

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
)

// plainTCP listens with plain TCP, as node (Mountebank) does. Go's default is Multipath TCP
// where the kernel has it, whose sockets cost about half as much again to open and close (a
// client suite's create-then-delete pair per test) for no use: clients connect with plain TCP.
var plainTCP = func() *net.ListenConfig {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return &lc
}()

// ListenTCP listens on host:port with plain TCP (not Multipath), as net.Listen("tcp") would
// otherwise (SO_REUSEADDR; an empty or wildcard host takes IPv6 and IPv4 where the system has
// both), and serves the connections through poller p (see Listen). With the FIFO poller on
// Linux and host an IP address or empty, the listening socket is made with plain system calls
// and registered with the FIFO poller only, never with the runtime's (see listenRaw); a
// hostname, or the runtime poller, goes through the net package. The errors are the net
// package's (a *net.OpError wrapping the system call's error).
func ListenTCP(host string, port int, p Poller) (net.Listener, error) {
	if p != PollerGo {
		if ip, ok := literalIP(host); ok {
			if l, err := listenRaw(ip, port); !errors.Is(err, errNoRaw) {
				if err != nil {
					return nil, err
				}
				return l, nil
			}
		}
	}
	ln, err := plainTCP.Listen(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	l, err := Listen(ln.(*net.TCPListener), p)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return l, nil
}

// literalIP parses host as net.Listen would an IP address: "" is the wildcard (nil); false for
// a hostname or an address with a zone, which listenRaw leaves to the net package.
func literalIP(host string) (net.IP, bool) {
	if host == "" {
		return nil, true
	}
	if p := lastIP.Load(); p != nil && p.host == host {
		return p.ip, true
	}
	ip := net.ParseIP(host)
	if ip != nil {
		lastIP.Store(&parsedIP{host, ip})
	}
	return ip, ip != nil
}

// lastIP is the last host literalIP parsed, and its address (never changed): a client suite
// creates its imposters on one host, one after the other, and each parse was an allocation.
var lastIP atomic.Pointer[parsedIP]

type parsedIP struct {
	host string
	ip   net.IP
}

// Starter is what StartOnConn starts with a listener's first connection.
type Starter interface {
	StartServing()
}

// StartFunc is a function as a Starter.
type StartFunc func()

// StartServing calls f.
func (f StartFunc) StartServing() { f() }
