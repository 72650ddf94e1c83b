package imposter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// netHTTP is a protocol served by net/http, answering with the resolved response's body: the
// core starts and stops any Server, and knows no protocol server. fifo asks for the FIFO
// poller's listener, as http and https do.
func netHTTP(fifo bool) Protocol {
	return func(*config.Imposter) (Prepared, error) {
		return Prepared{FIFO: fifo, New: func(im *Imposter) Server {
			return &netHTTPServer{srv: &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a := im.Resolve(&request.Request{Method: r.Method, Path: r.URL.Path})
				_, _ = w.Write(a.Body())
			})}}
		}}, nil
	}
}

type netHTTPServer struct{ srv *http.Server }

func (s *netHTTPServer) Serve(ln net.Listener) error {
	if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
func (s *netHTTPServer) CloseIdle() int                     { s.srv.SetKeepAlivesEnabled(false); return 1 }
func (s *netHTTPServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// A protocol that asks for it (http and https do, see servers' test) serves through the FIFO
// poller (on Linux) unless told to use Go's, others (tcp) through the runtime poller; stopping
// any of them frees its port.
func TestImposterListeners(t *testing.T) {
	protocols := map[string]Protocol{"http": netHTTP(true), "https": netHTTP(true), "tcp": netHTTP(false)}
	for _, tc := range []struct {
		protocol string
		poller   netconn.Poller
		fifo     bool
	}{
		{"http", "", true},
		{"https", netconn.PollerFIFO, true},
		{"http", netconn.PollerGo, false},
		{"https", netconn.PollerGo, false},
		{"tcp", "", false},
	} {
		t.Run(tc.protocol+"-"+string(tc.poller), func(t *testing.T) {
			v, err := config.ParseJSON([]byte(`{"protocol":"` + tc.protocol + `","stubs":[{"responses":[{"is":{"body":"hi","data":"hi"}}]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			d, errs := config.ParseImposter(v, config.ParseOptions{})
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			im, err := New(d, Options{Host: "127.0.0.1", Poller: tc.poller, Logger: slog.New(slog.DiscardHandler), Protocols: protocols})
			if err != nil {
				t.Fatal(err)
			}
			if err := im.Start(); err != nil {
				t.Fatal(err)
			}
			inner := im.ln.(*netconn.RetryListener).Listener
			isFifo := fmt.Sprintf("%T", inner) == "*netconn.FIFOListener"
			if want := tc.fifo && runtime.GOOS == "linux"; isFifo != want {
				t.Errorf("listener %T: FIFO poller %v, want %v", inner, isFifo, want)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(im.port))
			if tc.protocol == "http" {
				resp, err := http.Get("http://" + addr + "/")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if string(body) != "hi" {
					t.Errorf("body %q, want \"hi\"", body)
				}
			}
			im.Stop(context.Background())
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("port still bound after Stop: %v", err)
			}
			_ = ln.Close()
		})
	}
}

// recordingServer records whether the core ran Serve and Shutdown.
type recordingServer struct {
	netHTTPServer
	served, shut chan struct{}
}

func (s *recordingServer) Serve(ln net.Listener) error {
	close(s.served)
	return s.netHTTPServer.Serve(ln)
}

func (s *recordingServer) Shutdown(ctx context.Context) error {
	close(s.shut)
	return s.netHTTPServer.Shutdown(ctx)
}

// An imposter on a FIFO listener serves from its first connection on: one created and stopped
// without a connection never ran Serve (no goroutine: a client suite's create-then-delete pair)
// nor Shutdown, and frees its port; one connected to serves and is shut down.
func TestServeStartsWithTheFirstConnection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the FIFO poller is Linux's")
	}
	for _, connect := range []bool{false, true} {
		t.Run(fmt.Sprintf("connect=%v", connect), func(t *testing.T) {
			var rs *recordingServer
			proto := func(*config.Imposter) (Prepared, error) {
				return Prepared{FIFO: true, New: func(im *Imposter) Server {
					inner := netHTTP(true)
					p, _ := inner(nil)
					rs = &recordingServer{netHTTPServer: *p.New(im).(*netHTTPServer), served: make(chan struct{}), shut: make(chan struct{})}
					return rs
				}}, nil
			}
			v, err := config.ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":[{"is":{"body":"hi"}}]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			d, errs := config.ParseImposter(v, config.ParseOptions{})
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			im, err := New(d, Options{Host: "127.0.0.1", Logger: slog.New(slog.DiscardHandler), Protocols: map[string]Protocol{"http": proto}})
			if err != nil {
				t.Fatal(err)
			}
			if err := im.Start(); err != nil {
				t.Fatal(err)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(im.Port()))
			if connect {
				resp, err := http.Get("http://" + addr + "/")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if string(body) != "hi" {
					t.Errorf("body %q, want \"hi\"", body)
				}
			} else if im.serving.Load() != serveDeferred {
				t.Errorf("serving = %d before any connection, want %d (deferred)", im.serving.Load(), serveDeferred)
			}
			im.Stop(context.Background())
			for name, ch := range map[string]chan struct{}{"Serve": rs.served, "Shutdown": rs.shut} {
				select {
				case <-ch:
					if !connect {
						t.Errorf("%s was called for an imposter no one connected to", name)
					}
				default:
					if connect {
						t.Errorf("%s was not called for an imposter that served a request", name)
					}
				}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("port still bound after Stop: %v", err)
			}
			_ = ln.Close()
		})
	}
}
