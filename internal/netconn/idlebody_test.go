package netconn

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// TestIdleConnectionBodyBuffers: once a keep-alive connection has waited for its next request
// for leanTicks of the sweeper, the body buffers fasthttp keeps with it for that request (the
// request's, the response's) are let go of when they grew past IdleBodyBytes, and kept, to be
// read and written into again, when they did not. An idle connection that had sent or been sent
// 1 MiB held that 1 MiB (twice when the answer was copied in) for as long as it stayed open. A
// connection whose next request comes before that keeps them, whatever their size.
func TestIdleConnectionBodyBuffers(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int  // of the first request's body and of its answer
		kept bool // the buffers serve the second request
	}{
		{"1 KiB", 1 << 10, true},
		{"40 KiB", 40 << 10, true},
		{"64 KiB", IdleBodyBytes, true},
		{"64 KiB + 1", IdleBodyBytes + 1, false},
		{"1 MiB", 1 << 20, false},
		{"4 MiB", 4 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, useTLS := range []bool{false, true} {
				t.Run(fmt.Sprintf("tls=%t", useTLS), func(t *testing.T) {
					idleBodyBuffers(t, useTLS, tc.size, tc.kept, true)
				})
				t.Run(fmt.Sprintf("tls=%t/busy", useTLS), func(t *testing.T) {
					idleBodyBuffers(t, useTLS, tc.size, true, false)
				})
			}
		})
	}
}

// bodyPtrs are where a request's body and its answer's lay, and their capacities.
type bodyPtrs struct {
	req, resp       unsafe.Pointer
	reqCap, respCap int
}

// idleBodyBuffers sends a body of size bytes, answered with a copy, then one of 1 byte, and
// tells whether the second request found the first's buffers (kept); with idle the connection
// waits between the two until the sweeper (ticking every 10 ms) has looked at its buffers, and
// without it the sweeper never ticks.
func idleBodyBuffers(t *testing.T, useTLS bool, size int, kept, idle bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := ListenOptions{}
	if useTLS {
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{testCert(t)}}
	}
	seen := make(chan bodyPtrs, 2)
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			body := ctx.Request.Body()
			resp := ctx.Response.Body() // empty: the buffer the last answer was written from, if kept
			seen <- bodyPtrs{unsafe.Pointer(unsafe.SliceData(body)), unsafe.Pointer(unsafe.SliceData(resp)), cap(body), cap(resp)}
			ctx.Response.SetBody(body) // copied into the response's buffer
		}),
		ConnState: IdleConnState,
		Logger:    quietLogger{},
	}
	every := time.Hour
	if idle {
		every = 10 * time.Millisecond
	}
	il := newIdleListener(ln, opts, every)
	serveTest(t, srv, il)
	c := dialTest(t, il.Addr().String(), useTLS)
	defer c.Close()
	br := bufio.NewReader(c)
	post := func(body string) {
		t.Helper()
		if _, err := fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Fatal(err)
		}
		var resp fasthttp.Response
		if err := resp.Read(br); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.Body(), []byte(body)) {
			t.Fatalf("the answer is %d bytes, not the %d sent", len(resp.Body()), len(body))
		}
	}
	post(strings.Repeat("a", size))
	first := <-seen
	if idle {
		waitReleased(t, il)
	}
	post("b")
	second := <-seen
	if first.reqCap < size {
		t.Fatalf("the first request's body lay in %d bytes, fewer than its %d", first.reqCap, size)
	}
	if kept {
		// The first answer's buffer was empty (nothing was written from it before): the second
		// request finds the first's buffers, the ones the connection keeps.
		if second.req != first.req {
			t.Errorf("the second request's body was read into another buffer (cap %d), not the %d bytes the first's was", second.reqCap, first.reqCap)
		}
		if second.respCap < size {
			t.Errorf("the second answer's buffer holds %d bytes: the first answer's (%d) was not kept", second.respCap, size)
		}
		return
	}
	if second.reqCap > IdleBodyBytes || second.req == first.req {
		t.Errorf("the second request's body lay in %d bytes (the first's buffer: %t): the %d-byte buffer of the first stayed with the connection", second.reqCap, second.req == first.req, first.reqCap)
	}
	if second.respCap > IdleBodyBytes {
		t.Errorf("the second answer found a buffer of %d bytes: the first answer's stayed with the connection", second.respCap)
	}
}

// waitReleased waits until the sweeper of il has let go of the large body buffers of one of its
// connections (which stays parked in the read of its next request until then).
func waitReleased(t *testing.T, il *IdleListener) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		il.mu.Lock()
		released := false
		for c := range il.conns {
			released = released || c.park.Load() == parkReleased
		}
		il.mu.Unlock()
		if released {
			return
		}
	}
	t.Fatal("the sweeper did not look at the idle connection's buffers in 30 s")
}
