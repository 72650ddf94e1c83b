//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serveRaw answers every request read from a connection with answer(n), n counting the
// requests of the connection from 1, and closes the connection when close(n) says so.
func serveRaw(t *testing.T, answer func(n int) string, closeAfter func(n int) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					req.Body.Close()
					if _, err := c.Write([]byte(answer(n))); err != nil || closeAfter(n) {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestRunLoad(t *testing.T) {
	fast := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("pong") }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go fast.Serve(ln)
	t.Cleanup(func() { fast.Shutdown() })

	never := func(int) bool { return false }
	chunkedClose := serveRaw(t, func(int) string {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\npo\r\n2\r\nng\r\n0\r\n\r\n"
	}, func(int) bool { return true })
	untilClose := serveRaw(t, func(int) string { return "HTTP/1.1 200 OK\r\n\r\npong" }, func(int) bool { return true })
	big := strings.Repeat("x", 300<<10) // larger than a socket buffer and the read buffer
	bigBody := serveRaw(t, func(int) string {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(big), big)
	}, never)
	wrong := serveRaw(t, func(n int) string {
		if n%2 == 0 {
			return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nPONG"
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"
	}, never)
	garbage := serveRaw(t, func(int) string { return "SSH-2.0-x\r\n\r\n" }, never)
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close()

	for _, tc := range []struct {
		name, addr  string
		want        string
		wrong       bool // some answers are wrong
		readErrs    bool
		connectErrs bool
	}{
		{name: "keep-alive", addr: ln.Addr().String(), want: "pong"},
		{name: "chunked, closing", addr: chunkedClose, want: "pong"},
		{name: "body until close", addr: untilClose, want: "pong"},
		{name: "big body", addr: bigBody, want: big},
		{name: "wrong answers", addr: wrong, want: "pong", wrong: true},
		{name: "not http", addr: garbage, want: "pong", readErrs: true},
		{name: "refused", addr: refusedAddr, want: "pong", connectErrs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadConfig{addr: tc.addr, request: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
				want: expect{Status: 200, Body: tc.want}, conns: 4, dur: 300 * time.Millisecond, timeout: 5 * time.Second}
			var res loadResult
			if tc.connectErrs || tc.readErrs {
				var err error
				if res, err = runLoad(cfg); err != nil {
					t.Fatal(err)
				}
			} else {
				res = loadSome(t, cfg)
			}
			t.Logf("%+v", res)
			if tc.connectErrs || tc.readErrs {
				if res.Requests != 0 || (tc.connectErrs && res.ConnectErr == 0) || (tc.readErrs && res.ReadErr == 0) {
					t.Fatalf("want only failures, got %+v", res)
				}
				return
			}
			if res.Requests == 0 || res.ConnectErr+res.ReadErr+res.WriteErr+res.TimeoutErr != 0 {
				t.Fatalf("want answers and no errors, got %+v", res)
			}
			if tc.wrong != (res.WrongAnswers > 0) || res.WrongAnswers >= res.Requests {
				t.Fatalf("wrong answers %d of %d", res.WrongAnswers, res.Requests)
			}
			if res.P50US <= 0 || res.P99US < res.P50US || res.MaxUS < res.P99US {
				t.Fatalf("latencies p50 %v p99 %v max %v", res.P50US, res.P99US, res.MaxUS)
			}
		})
	}
}

// loadSome runs cfg, and again with twice the duration (up to 16 times cfg.dur) while fewer than
// 10 requests were answered: on a loaded machine a short run may not get the CPU to send any,
// and what these tests check is the answers, not how many fit in a time.
func loadSome(t *testing.T, cfg loadConfig) loadResult {
	t.Helper()
	limit := 16 * cfg.dur
	for {
		res, err := runLoad(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests >= 10 || res.errors() != 0 || cfg.dur >= limit {
			return res
		}
		t.Logf("%d requests in %v: running again for %v", res.Requests, cfg.dur, 2*cfg.dur)
		cfg.dur *= 2
	}
}

// A server that never answers: the request is counted as a timeout, once.
func TestRunLoadTimeout(t *testing.T) {
	addr := serveRaw(t, func(int) string { return "" }, func(int) bool { return false })
	res, err := runLoad(loadConfig{addr: addr, request: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		want: expect{Status: 200}, conns: 2, dur: 200 * time.Millisecond, timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.TimeoutErr == 0 {
		t.Fatalf("want timeouts only, got %+v", res)
	}
}

// The generator speaks TLS 1.3 on keep-alive connections, shaking hands before the run.
func TestRunLoadHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") }))
	srv.EnableHTTP2 = false
	srv.StartTLS()
	t.Cleanup(srv.Close)
	res := loadSome(t, loadConfig{addr: srv.Listener.Addr().String(), request: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		want: expect{Status: 200, Body: "pong"}, conns: 4, dur: 300 * time.Millisecond, timeout: 5 * time.Second, proto: "https"})
	if res.Requests == 0 || res.errors() != 0 {
		t.Fatalf("want answers and no errors, got %+v", res)
	}
}

// A tcp answer is complete when it is as long as the expected one; a wrong one is counted.
func TestRunLoadTCP(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		wrong        bool
	}{{"right", "PONG\n", false}, {"wrong", "PANG\n", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						buf := make([]byte, 64)
						for {
							if _, err := c.Read(buf); err != nil {
								return
							}
							// The answer in two writes: the generator waits for all of it.
							c.Write([]byte(tc.answer[:2]))
							c.Write([]byte(tc.answer[2:]))
						}
					}()
				}
			}()
			res, err := runLoad(loadConfig{addr: ln.Addr().String(), request: []byte("PING\n"), want: expect{Body: "PONG\n"},
				conns: 2, dur: 200 * time.Millisecond, timeout: 5 * time.Second, proto: "tcp"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests == 0 || res.ConnectErr+res.ReadErr+res.WriteErr+res.TimeoutErr != 0 || (res.WrongAnswers > 0) != tc.wrong {
				t.Fatalf("got %+v", res)
			}
		})
	}
}
