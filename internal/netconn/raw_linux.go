//go:build linux

package netconn

import (
	"syscall"
	"unsafe"
)

// The FIFO poller's system calls never block (its fds are non-blocking, epoll_wait is asked
// not to wait, a socket is closed without lingering), so it makes them raw: without the
// runtime's entersyscall/exitsyscall. Those cost little themselves, but the first one after the
// process was idle wakes the runtime's monitor thread (sysmon), which then polls every 20 µs
// for a millisecond: a server that answers one client at a time (a test suite creating and
// deleting imposters, bench's admin-pairs) woke it on every request, a third of its CPU time
// on a busy core went to the monitor and its context switches. read and write keep the race
// detector's view of them (raw_race_linux.go).

func rawSyscallErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// rawAccept4 is accept4(2) with flags, and the peer's address.
func rawAccept4(fd, flags int) (int, syscall.Sockaddr, error) {
	var rsa syscall.RawSockaddrAny
	l := uint32(syscall.SizeofSockaddrAny)
	nfd, _, e := syscall.RawSyscall6(syscall.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&l)), uintptr(flags), 0, 0)
	if e != 0 {
		return -1, nil, e
	}
	return int(nfd), sockaddrOf(&rsa), nil
}

// sockaddrOf converts an inet or inet6 address as the syscall package does; nil for another family.
func sockaddrOf(rsa *syscall.RawSockaddrAny) syscall.Sockaddr {
	switch rsa.Addr.Family {
	case syscall.AF_INET:
		pp := (*syscall.RawSockaddrInet4)(unsafe.Pointer(rsa))
		sa := &syscall.SockaddrInet4{Addr: pp.Addr}
		p := (*[2]byte)(unsafe.Pointer(&pp.Port))
		sa.Port = int(p[0])<<8 + int(p[1])
		return sa
	case syscall.AF_INET6:
		pp := (*syscall.RawSockaddrInet6)(unsafe.Pointer(rsa))
		sa := &syscall.SockaddrInet6{Addr: pp.Addr, ZoneId: pp.Scope_id}
		p := (*[2]byte)(unsafe.Pointer(&pp.Port))
		sa.Port = int(p[0])<<8 + int(p[1])
		return sa
	}
	return nil
}

// rawSetsockoptInt is setsockopt(2) of an int option.
func rawSetsockoptInt(fd, level, opt, value int) error {
	v := int32(value)
	_, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&v)), 4, 0)
	return rawSyscallErr(e)
}

// rawClose is close(2).
func rawClose(fd int) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	return rawSyscallErr(e)
}

// rawEpollCtl is epoll_ctl(2).
func rawEpollCtl(epfd, op, fd int, ev *syscall.EpollEvent) error {
	_, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	return rawSyscallErr(e)
}

// rawEpollPoll is epoll_wait(2) that does not wait (timeout 0).
func rawEpollPoll(epfd int, events []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
