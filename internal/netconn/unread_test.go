package netconn

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestUnreadBodies: with ListenOptions.UnreadBody answering, the rest of a large Content-Length
// body is read past without reaching the server's buffer (the handler is told: Lines says
// BodyUnread, Unread returns the answer), while bodies that are small, chunked, encoded or
// arrive with their header block are read as before; without an answer every body is read in
// full. Requests pipelined on one connection, behind and between such bodies (one of them
// holding request lines of its own), over plain tcp and TLS, written at once or in small
// pieces, are answered each in turn: the connection stays in sync.
func TestUnreadBodies(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		for _, pieces := range []bool{false, true} {
			for _, unread := range []bool{true, false} {
				t.Run(fmt.Sprintf("tls=%t/pieces=%t/unread=%t", useTLS, pieces, unread), func(t *testing.T) {
					unreadBodies(t, useTLS, pieces, unread)
				})
			}
		}
	}
}

// pinned is what the test listener's UnreadBody answers.
type pinned struct{ n int }

// unreadReq is one request of unreadBodies and what its handler must be told.
type unreadReq struct {
	raw, path string
	size      int
	unread    bool // read past, when the listener answers
	expect    bool // Expect: 100-continue
}

// unreadBody is the body of size bytes unreadBodies sends to path: its last letter repeated, or
// for /smuggler request lines (which must stay body).
func unreadBody(path string, size int) string {
	if path == "/smuggler" {
		return strings.Repeat("GET /r HTTP/1.1\r\nHost: x\r\n\r\n", size/26+1)[:size]
	}
	return strings.Repeat(path[len(path)-1:], size)
}

func unreadBodies(t *testing.T, useTLS, pieces, answer bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pin := &pinned{1}
	opts := ListenOptions{UnreadBody: func() any {
		if answer {
			return pin
		}
		return nil
	}}
	if useTLS {
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{testCert(t)}}
	}
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			// full tells whether the server holds the body sent (unreadBody of the path).
			body, path := ctx.Request.Body(), string(ctx.Path())
			full := bytes.Equal(body, []byte(unreadBody(path, len(body))))
			unread := Lines(ctx.Conn()).BodyUnread
			if p := Unread(ctx.Conn()); unread != (p == any(pin)) {
				unread = !unread // disagree: the answer shows it
			}
			fmt.Fprintf(ctx, "%s %d unread=%t full=%t", path, ctx.Request.Header.ContentLength(), unread, full)
		}),
		ConnState:          IdleConnState,
		Logger:             quietLogger{},
		MaxRequestBodySize: 8 << 20,
	}
	il := NewIdleListener(ln, opts)
	serveTest(t, srv, il)

	post := func(path string, size int, unread bool, extra string) unreadReq {
		raw := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n%s", path, extra, size, unreadBody(path, size))
		return unreadReq{raw: raw, path: path, size: size, unread: unread, expect: strings.Contains(extra, "100-continue")}
	}
	chunked := func(path string, size int) unreadReq {
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", path)
		for left := size; left > 0; left -= 50000 {
			n := min(left, 50000)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, unreadBody(path, n))
		}
		b.WriteString("0\r\n\r\n")
		return unreadReq{raw: b.String(), path: path, size: -1} // fasthttp's length of a chunked body
	}
	get := func(path string) unreadReq {
		return unreadReq{raw: "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n", path: path, size: -2} // fasthttp's length of no body
	}
	reqs := []unreadReq{
		post("/a", 1<<20, true, ""),
		get("/b"),
		chunked("/c", 300000),
		post("/d", 100, false, ""),
		post("/smuggler", 300000, true, ""),
		post("/e", 1<<20, false, "Content-Encoding: gzip\r\n"),
		post("/f", 2<<20, true, "Content-Type: text/plain\r\n"),
		get("/g"),
		post("/h", 400000, true, "Expect: 100-continue\r\n"),
		post("/i", 1<<20, true, ""),
	}
	c := dialTest(t, il.Addr().String(), useTLS)
	defer c.Close()
	go func() {
		for _, r := range reqs {
			b := []byte(r.raw)
			step := len(b)
			if pieces {
				step = 1000 // header blocks and bodies split across reads
			}
			for len(b) > 0 {
				n := min(step, len(b))
				if _, err := c.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
				if pieces && step < 70000 {
					step *= 3
				}
			}
		}
	}()
	br := bufio.NewReader(c)
	for _, r := range reqs {
		resp, err := http.ReadResponse(br, nil)
		if err == nil && r.expect && resp.StatusCode == http.StatusContinue {
			resp, err = http.ReadResponse(br, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", r.path, err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		unread := answer && r.unread
		want := fmt.Sprintf("%s %d unread=%t full=%t", r.path, r.size, unread, !unread)
		if string(got) != want {
			t.Fatalf("answer %q, want %q", got, want)
		}
	}
}

// FuzzUnreadBodies sends requests made from the input (Content-Length bodies of up to ~1 MiB,
// requests without a body, chunked ones), pipelined on one connection in writes of a size the
// input picks, to a server whose listener reads large bodies past, and to one whose listener
// does not: both must answer every request in order, with its path and length, and only the
// first is ever told a body was read past.
func FuzzUnreadBodies(f *testing.F) {
	f.Add([]byte{0x90, 0x00, 0x41, 0xff}, uint16(1000))
	f.Add([]byte{0x80, 0x10, 0x03, 0x01, 0xfe}, uint16(65535))
	f.Add([]byte{0x7f, 0x7f, 0x02}, uint16(7))
	f.Fuzz(func(t *testing.T, spec []byte, step uint16) {
		if len(spec) == 0 || len(spec) > 8 || step == 0 {
			return
		}
		var stream strings.Builder
		var want []string
		for i, c := range spec {
			path := fmt.Sprintf("/r%d", i)
			switch {
			case c < 0x10:
				stream.WriteString("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
				want = append(want, path+" -2")
			case c < 0x20:
				n := int(c-0x10+1) * 20000 // not empty: fasthttp gives an empty chunked body length 0
				fmt.Fprintf(&stream, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", path, n, strings.Repeat("c", n))
				want = append(want, path+" -1")
			default:
				n := int(c-0x20) * 4500 // up to ~1 MiB
				fmt.Fprintf(&stream, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, n, strings.Repeat("GET / HTTP/1.1\r\n\r\n"[i%4:i%4+1], n))
				want = append(want, fmt.Sprintf("%s %d", path, n))
			}
		}
		for _, answer := range []bool{true, false} {
			got := serveStream(t, []byte(stream.String()), int(step), answer, len(want))
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("unread=%t: answer %d %q, want %q", answer, i, got[i], want[i])
				}
			}
		}
	})
}

// serveStream serves stream, written in steps of step bytes, on one connection to a server whose
// listener's UnreadBody answers (or not), and returns the n answers, each "path length"; a
// handler told of a body read past when UnreadBody does not answer fails the test.
func serveStream(t *testing.T, stream []byte, step int, answer bool, n int) []string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	il := NewIdleListener(ln, ListenOptions{UnreadBody: func() any {
		if answer {
			return true
		}
		return nil
	}})
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			if !answer && (Lines(ctx.Conn()).BodyUnread || Unread(ctx.Conn()) != nil) {
				fmt.Fprint(ctx, "told of a body read past")
				return
			}
			fmt.Fprintf(ctx, "%s %d", ctx.Path(), ctx.Request.Header.ContentLength())
		}),
		ConnState:          IdleConnState,
		Logger:             quietLogger{},
		MaxRequestBodySize: 8 << 20,
	}
	serveTest(t, srv, il)
	c := dialTest(t, il.Addr().String(), false)
	defer c.Close()
	go func() {
		for len(stream) > 0 {
			k := min(step, len(stream))
			if _, err := c.Write(stream[:k]); err != nil {
				return
			}
			stream = stream[k:]
		}
	}()
	br := bufio.NewReader(c)
	out := make([]string, n)
	for i := range out {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d of %d: %v", i+1, n, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}
