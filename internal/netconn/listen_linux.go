//go:build linux

package netconn

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// errNoRaw says listenRaw cannot make the listener (no epoll): ListenTCP uses the net package.
var errNoRaw = errors.New("no raw listener")

// listenRaw makes a listening socket on ip:port (nil ip: the wildcard) with plain system calls
// (socket, setsockopt, bind, listen, as the net package makes one) and registers it with the
// FIFO poller only. The net package would register it with the runtime's poller too, and
// closing it then costs an epoll_ctl and the runtime's bookkeeping of its close; the system
// calls go through the runtime's entersyscall, the first of which after an idle spell wakes the
// runtime's monitor thread (see raw_linux.go). A client suite creates and deletes an imposter
// per test: for it, the socket's life is most of what creating and deleting costs.
func listenRaw(ip net.IP, port int) (net.Listener, error) {
	p := thePoller()
	if p == nil {
		return nil, errNoRaw
	}
	fd, sa, err := rawListenSocket(ip, port)
	if err != nil {
		return nil, err
	}
	l := &FIFOListener{pollFD: pollFD{fd: fd, p: p}, fresh: true}
	l.r.init() // a listener only reads: its write signal is never waited on
	if port == 0 {
		var rsa syscall.RawSockaddrAny
		n := uint32(syscall.SizeofSockaddrAny)
		if _, _, e := syscall.RawSyscall(syscall.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n))); e != 0 {
			_ = rawClose(fd)
			return nil, listenError(ip, port, "getsockname", e)
		}
		sa = sockaddrOf(&rsa)
	}
	l.addr = tcpAddr(sa).(*net.TCPAddr)
	if err := p.add(fd, &l.fdWaiters, syscall.EPOLLIN|epollET); err != nil {
		// As ListenFIFO, which leaves a listener epoll refuses to the runtime's poller.
		_ = rawClose(fd)
		return nil, errNoRaw
	}
	return l, nil
}

// rawListenSocket is the net package's listening socket for "tcp" on ip:port, with Multipath
// TCP off: the wildcard listens on IPv6 and IPv4 (an AF_INET6 socket with IPV6_V6ONLY off)
// unless the system has no IPv6, an IPv4 address on AF_INET, any other on AF_INET6. It
// returns the address bound.
func rawListenSocket(ip net.IP, port int) (int, syscall.Sockaddr, error) {
	if ip == nil || ip.IsUnspecified() {
		fd, sa, err := rawListenOn(syscall.AF_INET6, &syscall.SockaddrInet6{Port: port}, ip, port)
		if err == nil || !errors.Is(err, syscall.EAFNOSUPPORT) {
			return fd, sa, err
		}
		return rawListenOn(syscall.AF_INET, &syscall.SockaddrInet4{Port: port}, ip, port)
	}
	if ip4 := ip.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip4)
		return rawListenOn(syscall.AF_INET, sa, ip, port)
	}
	sa := &syscall.SockaddrInet6{Port: port}
	copy(sa.Addr[:], ip.To16())
	return rawListenOn(syscall.AF_INET6, sa, ip, port)
}

func rawListenOn(family int, sa syscall.Sockaddr, ip net.IP, port int) (int, syscall.Sockaddr, error) {
	fd, ok := spares.take(family)
	if !ok {
		var call string
		var err error
		if fd, call, err = newListenSocket(family); err != nil {
			return -1, nil, listenError(ip, port, call, err)
		}
		spares.wanted(family) // a family the system has (the wildcard tries IPv6 first)
	}
	fail := func(call string, e error) (int, syscall.Sockaddr, error) {
		_ = rawClose(fd)
		return -1, nil, listenError(ip, port, call, e)
	}
	if err := rawBind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_LISTEN, uintptr(fd), uintptr(listenBacklog()), 0); e != 0 {
		return fail("listen", e)
	}
	return fd, sa, nil
}

// newListenSocket makes a socket of family with the options of a listening one (IPv6 also
// takes IPv4: IPV6_V6ONLY off; SO_REUSEADDR), not bound yet; on failure it names the call.
func newListenSocket(family int) (int, string, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_SOCKET, uintptr(family), syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if e != 0 {
		return -1, "socket", e
	}
	fd := int(r)
	if family == syscall.AF_INET6 {
		if err := rawSetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0); err != nil {
			_ = rawClose(fd)
			return -1, "setsockopt", err
		}
	}
	if err := rawSetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		_ = rawClose(fd)
		return -1, "setsockopt", err
	}
	return fd, "", nil
}

// spares holds, for each family a listener was made in, one socket made ahead by
// newListenSocket (unbound: it holds no port, and nothing connects to it), which the next
// listener of that family binds: a client suite's POST /imposters then makes two system calls
// fewer (socket and setsockopt, a third of what listening costs the kernel), the spare being
// made while the admin API waits for the client's next request (PrepareSpares).
var spares spareSockets

type spareSockets struct {
	fd      [2]atomic.Int64 // by familyIndex: a spare's fd + 1, 0 for none
	want    [2]atomic.Bool  // by familyIndex: a socket was made in that family
	pending atomic.Bool     // a spare was taken, or a socket made, since the last prepare
}

func familyIndex(family int) int {
	if family == syscall.AF_INET6 {
		return 1
	}
	return 0
}

// take returns the spare socket of family, if there is one, and asks for the next.
func (s *spareSockets) take(family int) (int, bool) {
	if v := s.fd[familyIndex(family)].Swap(0); v != 0 {
		s.pending.Store(true)
		return int(v - 1), true
	}
	return -1, false
}

// wanted asks for spares of family, in which a socket was just made.
func (s *spareSockets) wanted(family int) {
	if i := familyIndex(family); !s.want[i].Load() {
		s.want[i].Store(true)
	}
	s.pending.Store(true)
}

// prepare makes the spare of each family a listener was made in, if it has none; false if
// there was nothing to do.
func (s *spareSockets) prepare() bool {
	if !s.pending.Load() || !s.pending.CompareAndSwap(true, false) {
		return false
	}
	for i, family := range [...]int{syscall.AF_INET, syscall.AF_INET6} {
		if !s.want[i].Load() || s.fd[i].Load() != 0 {
			continue
		}
		gateShared() // not on a descriptor freed for the reserve
		fd, _, err := newListenSocket(family)
		gateDone()
		if err != nil {
			continue // out of fds, or no IPv6: the next listener makes its own, and says why
		}
		if !s.fd[i].CompareAndSwap(0, int64(fd)+1) {
			_ = rawClose(fd)
		}
	}
	return true
}

// PrepareSpares makes ahead what the next listener needs (see spares), if anything; it
// reports whether there was something to do. A server calls it when it has nothing else to
// do: the admin API's connections do when they wait for the next request.
func PrepareSpares() bool { return spares.prepare() }

func rawBind(fd int, sa syscall.Sockaddr) error {
	var ptr unsafe.Pointer
	var n uintptr
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		raw := syscall.RawSockaddrInet4{Family: syscall.AF_INET, Addr: a.Addr}
		p := (*[2]byte)(unsafe.Pointer(&raw.Port))
		p[0], p[1] = byte(a.Port>>8), byte(a.Port)
		ptr, n = unsafe.Pointer(&raw), syscall.SizeofSockaddrInet4
		_, _, e := syscall.RawSyscall(syscall.SYS_BIND, uintptr(fd), uintptr(ptr), n)
		return rawSyscallErr(e)
	case *syscall.SockaddrInet6:
		raw := syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Addr: a.Addr, Scope_id: a.ZoneId}
		p := (*[2]byte)(unsafe.Pointer(&raw.Port))
		p[0], p[1] = byte(a.Port>>8), byte(a.Port)
		ptr, n = unsafe.Pointer(&raw), syscall.SizeofSockaddrInet6
		_, _, e := syscall.RawSyscall(syscall.SYS_BIND, uintptr(fd), uintptr(ptr), n)
		return rawSyscallErr(e)
	}
	return syscall.EAFNOSUPPORT
}

// listenError is the net package's error for a failed listen on ip:port (which names an
// unspecified address, even ::, 0.0.0.0).
func listenError(ip net.IP, port int, call string, e error) error {
	if ip != nil && ip.IsUnspecified() {
		ip = net.IPv4zero
	}
	return &net.OpError{Op: "listen", Net: "tcp", Addr: &net.TCPAddr{IP: ip, Port: port}, Err: os.NewSyscallError(call, e)}
}

// listenBacklog is the net package's backlog: the system's somaxconn.
var listenBacklog = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return syscall.SOMAXCONN
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return syscall.SOMAXCONN
	}
	return n
})
