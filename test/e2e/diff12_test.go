package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestProxyPostAfterOriginClosed: an origin that answers each request (HTTP/1.1, no
// Connection: close) and then closes its connection still answers every POST proxied to it,
// as through Mountebank; mockd sent every other POST on the kept-alive connection the origin
// had closed and answered 500 "Unable to connect". The test sends each request once the
// origin has closed the connection of the one before.
func TestProxyPostAfterOriginClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { c.Close(); closed <- struct{}{} }()
				br := bufio.NewReader(c)
				length := 0
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
					if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "content-length") {
						length, _ = strconv.Atoi(strings.TrimSpace(value))
					}
				}
				if _, err := io.CopyN(io.Discard, br, int64(length)); err != nil {
					return
				}
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}()
		}
	}()
	s := start(t)
	port := listenFree(t)
	code, got := createImposter(t, s.Admin, map[string]any{"protocol": "http", "port": port,
		"stubs": []any{map[string]any{"responses": []any{map[string]any{"proxy": map[string]any{
			"to": "http://" + ln.Addr().String(), "mode": "proxyTransparent"}}}}}})
	if code != 201 {
		t.Fatalf("POST imposter: %d %v", code, got)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/orders"
	for i := range 4 {
		status, _, body := do(t, http.MethodPost, url, `{"n":`+strconv.Itoa(i)+`}`)
		if status != 200 || body != "ok" {
			t.Fatalf("POST %d: %d %q, want 200 ok", i+1, status, body)
		}
		<-closed // the origin closed that connection
	}
}
