package httpserver

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/script"
)

// TestStoppedImposterIsReleased: once an http imposter is stopped, nothing of the server keeps
// it (fasthttp's worker pool keeps a goroutine with the fasthttp.Server for a while after Serve
// returns), so a client that creates and deletes imposters in a loop does not hold them all.
func TestStoppedImposterIsReleased(t *testing.T) {
	for _, proto := range []string{"http", "https"} {
		t.Run(proto, func(t *testing.T) {
			ref := startAndStop(t, proto)
			for range 5 {
				goruntime.GC()
				if ref.Value() == nil {
					return
				}
			}
			t.Fatal("the stopped imposter is still reachable")
		})
	}
}

// startAndStop starts an imposter, serves one request, stops it and returns a weak reference.
func startAndStop(t *testing.T, proto string) weak.Pointer[imposter.Imposter] {
	d := impostertest.Def(t, strings.Replace(impostertest.SimpleStub, `"protocol":"http","port":4545`, `"protocol":"`+proto+`"`, 1))
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: log, Script: script.New(script.Options{Logger: log}),
		Protocols: map[string]imposter.Protocol{"http": HTTP, "https": HTTPS}})
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Start(); err != nil {
		t.Fatal(err)
	}
	if proto == "http" { // one request, so that the pool has a worker
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(impostertest.SimpleRequest)); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("answer %q, %v", line, err)
		}
		_ = c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	im.Stop(ctx)
	return weak.Make(im)
}

// TestStoppedServerLeavesNoPoolGoroutine: an http imposter is served without fasthttp's
// worker pool, whose cleaner goroutine kept the fasthttp.Server (and a timer) for a second after
// the imposter stopped: a client creating and deleting imposters in a loop left thousands.
func TestStoppedServerLeavesNoPoolGoroutine(t *testing.T) {
	startAndStop(t, "http")
	buf := make([]byte, 1<<20)
	stacks := string(buf[:goruntime.Stack(buf, true)])
	if strings.Contains(stacks, "fasthttp.(*workerPool)") {
		t.Fatalf("a goroutine of fasthttp's worker pool outlives the stopped imposter:\n%s", stacks)
	}
}

// A server is made without its fasthttp.Server, which Serve makes: one never served (an
// imposter deleted before any connection) has none, and shuts down as having no connection.
func TestServerMadeWhenServed(t *testing.T) {
	d := impostertest.Def(t, impostertest.SimpleStub)
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: log, Protocols: map[string]imposter.Protocol{"http": HTTP}})
	if err != nil {
		t.Fatal(err)
	}
	h := newServer(im, nil)
	if h.srv != nil || h.live != nil {
		t.Fatal("newServer made the fasthttp.Server before Serve")
	}
	if busy := h.CloseIdle(); busy != 0 {
		t.Errorf("CloseIdle of a server never served: %d busy", busy)
	}
	if err := h.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of a server never served: %v", err)
	}
}
