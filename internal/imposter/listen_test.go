package imposter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/netconn"
)

// http and https imposters serve through the FIFO poller (on Linux) unless told to use Go's, tcp
// imposters through the runtime poller; stopping any of them frees its port.
func TestImposterListeners(t *testing.T) {
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
			im, err := New(d, Options{Host: "127.0.0.1", Poller: tc.poller, Logger: slog.New(slog.DiscardHandler)})
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
