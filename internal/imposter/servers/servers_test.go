package servers

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// TestStopRightAfterStart checks that an imposter stopped before its server goroutine began to
// serve still closes its port and stops: fasthttp's Shutdown closes only the listeners Serve has
// registered, and an http imposter's Stop used to wait forever when it won that race. tcp and
// smtp imposters, which serve with a loop of their own, are held to the same.
func TestStopRightAfterStart(t *testing.T) {
	for _, protocol := range []string{"http", "https", "tcp", "smtp"} {
		t.Run(protocol, func(t *testing.T) {
			v, err := config.ParseJSON([]byte(`{"protocol":"` + protocol + `","stubs":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			d, errs := config.ParseImposter(v, config.ParseOptions{})
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			for i := 0; i < 200; i++ {
				im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: slog.New(slog.DiscardHandler), Protocols: Protocols()})
				if err != nil {
					t.Fatal(err)
				}
				if err := im.Start(); err != nil {
					t.Fatal(err)
				}
				stopped := make(chan struct{})
				go func() {
					im.Stop(context.Background())
					close(stopped)
				}()
				select {
				case <-stopped:
				case <-time.After(10 * time.Second):
					t.Fatalf("Stop right after Start did not return (round %d)", i)
				}
			}
		})
	}
}

// TestFIFO: http, https and tcp ask for the FIFO poller's listener (busy connections served in
// the order their requests arrived, a request read with one read(2)); smtp's connections wait
// on the runtime's poller.
func TestFIFO(t *testing.T) {
	def := &config.Imposter{Header: &config.Object{}}
	for name, protocol := range Protocols() {
		prepared, err := protocol(def)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := name == "http" || name == "https" || name == "tcp"; prepared.FIFO != want || prepared.New == nil {
			t.Errorf("%s: FIFO %v, want %v", name, prepared.FIFO, want)
		}
	}
}
