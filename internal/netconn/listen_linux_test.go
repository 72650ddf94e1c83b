package netconn

import (
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// ListenTCP's socket of plain system calls is the one net.Listen makes: the same address and
// family (the wildcard takes IPv4 and IPv6), SO_REUSEADDR, served through the FIFO poller, its
// port free again once closed; a hostname goes through the net package. So is one made from a
// spare socket (PrepareSpares), and a busy port fails alike.
func TestListenTCP(t *testing.T) {
	for _, spare := range []bool{false, true} {
		t.Run(map[bool]string{false: "made", true: "spare"}[spare], func(t *testing.T) {
			testListenTCP(t, spare)
		})
	}
}

// dropSpares closes the spare sockets, and forgets which families were wanted.
func dropSpares() {
	for i := range spares.fd {
		if v := spares.fd[i].Swap(0); v != 0 {
			_ = rawClose(int(v - 1))
		}
		spares.want[i].Store(false)
	}
	spares.pending.Store(false)
}

func testListenTCP(t *testing.T, spare bool) {
	for _, tc := range []struct {
		host string
		dial []string
		raw  bool
	}{
		{"127.0.0.1", []string{"127.0.0.1"}, true},
		{"127.0.0.2", []string{"127.0.0.2"}, true},
		{"::1", []string{"::1"}, true},
		{"", []string{"127.0.0.1", "::1"}, true},
		{"0.0.0.0", []string{"127.0.0.1", "::1"}, true},
		{"::", []string{"127.0.0.1", "::1"}, true},
		{"localhost", []string{"127.0.0.1"}, false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			ref, err := net.Listen("tcp", net.JoinHostPort(tc.host, "0"))
			if err != nil {
				t.Skipf("net.Listen cannot listen on %q: %v", tc.host, err)
			}
			port := ref.Addr().(*net.TCPAddr).Port
			want := ref.Addr().String()
			_ = ref.Close()

			dropSpares()
			if spare {
				// A listener in each family makes both wanted, then the spares are made.
				for _, h := range []string{"127.0.0.1", "::1"} {
					if l, err := ListenTCP(h, 0, PollerFIFO); err == nil {
						_ = l.Close()
					}
				}
				if !PrepareSpares() {
					t.Fatal("PrepareSpares had nothing to do after a listener was made")
				}
			}
			var spareFDs []int64
			for i := range spares.fd {
				if v := spares.fd[i].Load(); v != 0 {
					spareFDs = append(spareFDs, v-1)
				}
			}
			if spare != (len(spareFDs) > 0) {
				t.Fatalf("spare sockets %v, want some: %v", spareFDs, spare)
			}
			l, err := ListenTCP(tc.host, port, PollerFIFO)
			if err != nil {
				t.Fatal(err)
			}
			fl, ok := l.(*FIFOListener)
			if !ok {
				t.Fatalf("ListenTCP returned %T, want *FIFOListener", l)
			}
			if raw := fl.tl == nil; raw != tc.raw {
				t.Errorf("made with plain system calls: %v, want %v", raw, tc.raw)
			}
			if spare && tc.raw && !slices.Contains(spareFDs, int64(fl.fd)) {
				t.Errorf("listener fd %d is none of the spares %v", fl.fd, spareFDs)
			}
			if got := l.Addr().String(); got != want {
				t.Errorf("Addr() = %s, want %s (net.Listen's)", got, want)
			}
			if v, err := syscall.GetsockoptInt(fl.fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR); err != nil || v != 1 {
				t.Errorf("SO_REUSEADDR = %d, %v; want 1", v, err)
			}
			for _, d := range tc.dial {
				if d == "::1" && !hasIPv6(t) {
					continue
				}
				s, c := pair(t, l, net.JoinHostPort(d, strconv.Itoa(port)))
				if _, err := c.Write([]byte("ping")); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 4)
				if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "ping" {
					t.Fatalf("server read %q, %v; want ping", buf, err)
				}
			}

			if spare {
				PrepareSpares() // the second listen takes a spare too
			}
			_, err = ListenTCP(tc.host, port, PollerFIFO)
			_, netErr := net.Listen("tcp", net.JoinHostPort(tc.host, strconv.Itoa(port)))
			if !errors.Is(err, syscall.EADDRINUSE) || netErr == nil || err.Error() != netErr.Error() {
				t.Errorf("second listen on the port: %v; want net.Listen's %v", err, netErr)
			}

			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := net.Listen("tcp", net.JoinHostPort(tc.host, strconv.Itoa(port)))
			if err != nil {
				t.Fatalf("port still bound after Close: %v", err)
			}
			_ = again.Close()
		})
	}
}

// hasIPv6 reports whether the machine has an IPv6 loopback.
func hasIPv6(t *testing.T) bool {
	t.Helper()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// Port 0 takes a free port, which Addr reports.
func TestListenTCPPortZero(t *testing.T) {
	l, err := ListenTCP("127.0.0.1", 0, PollerFIFO)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := l.Addr().(*net.TCPAddr)
	if a.Port == 0 || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("Addr() = %v, want 127.0.0.1 and a port", a)
	}
	c, err := net.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}

// With the runtime poller, ListenTCP is net.Listen's listener.
func TestListenTCPGoPoller(t *testing.T) {
	l, err := ListenTCP("127.0.0.1", 0, PollerGo)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ok := l.(*net.TCPListener); !ok {
		t.Fatalf("ListenTCP returned %T, want *net.TCPListener", l)
	}
}

// The admin API's connections make the spare sockets while they wait for a request: a read
// that finds nothing to read prepares them, then waits as before.
func TestReadPreparesSpares(t *testing.T) {
	dropSpares()
	t.Cleanup(dropSpares)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := RawIOListener(ln.(*net.TCPListener))
	defer l.Close()
	s, c := pair(t, l, l.Addr().String())
	l2, err := ListenTCP("127.0.0.1", 0, PollerFIFO) // wants an IPv4 spare
	if err != nil {
		t.Fatal(err)
	}
	_ = l2.Close()
	if spares.fd[0].Load() != 0 {
		t.Fatal("a spare exists before any read waited")
	}
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := io.ReadFull(s, buf)
		got <- err
	}()
	for spares.pending.Load() {
		runtime.Gosched() // the read finds nothing, prepares the spare, then waits
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if spares.fd[0].Load() == 0 {
		t.Error("no IPv4 spare after a read waited")
	}
	if spares.fd[1].Load() != 0 {
		t.Error("an IPv6 spare made though no IPv6 listener was")
	}
}
