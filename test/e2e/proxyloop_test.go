package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestProxyLoopsEnd: an imposter that proxies to itself, or two that proxy to each other
// (http and tcp, proxyAlways and proxyOnce), answer a request with the proxy loop error once
// it has gone round MaxHops (16) of mockd's proxies, and the other imposters answer meanwhile.
// A tcp loop went on until mockd ran out of file descriptors, then held all of them, and the
// client, for --idle-timeout (no imposter could accept a client meanwhile); an http loop ended
// at fasthttp's 512 connections to one origin, with "no free connections available to host".
func TestProxyLoopsEnd(t *testing.T) {
	s := start(t)
	create := func(protocol string) int {
		t.Helper()
		status, _, out := do(t, "POST", s.Admin+"/imposters", `{"protocol":"`+protocol+`"}`)
		if status != 201 {
			t.Fatalf("POST /imposters = %d %s", status, out)
		}
		return int(jsonBody(t, out)["port"].(float64))
	}
	proxyTo := func(port int, to string, mode string) {
		t.Helper()
		body := fmt.Sprintf(`{"stubs":[{"responses":[{"proxy":{"to":%q,"mode":%q}}]}]}`, to, mode)
		if status, _, out := do(t, "PUT", fmt.Sprintf("%s/imposters/%d/stubs", s.Admin, port), body); status != 200 {
			t.Fatalf("PUT stubs = %d %s", status, out)
		}
	}
	other := create("http")
	if status, _, out := do(t, "PUT", fmt.Sprintf("%s/imposters/%d/stubs", s.Admin, other),
		`{"stubs":[{"responses":[{"is":{"body":"other"}}]}]}`); status != 200 {
		t.Fatalf("PUT stubs = %d %s", status, out)
	}
	const want = "proxy loop: the request has gone through 16 proxies of this mockd already"
	for _, tt := range []struct {
		protocol string
		pair     bool
		mode     string
	}{
		{"http", false, "proxyAlways"},
		{"http", true, "proxyOnce"},
		{"tcp", false, "proxyAlways"},
		{"tcp", true, "proxyOnce"},
	} {
		name := tt.protocol + " " + tt.mode
		if tt.pair {
			name += " pair"
		}
		t.Run(name, func(t *testing.T) {
			a := create(tt.protocol)
			b := a
			if tt.pair {
				b = create(tt.protocol)
				proxyTo(b, fmt.Sprintf("%s://127.0.0.1:%d", tt.protocol, a), tt.mode)
			}
			proxyTo(a, fmt.Sprintf("%s://127.0.0.1:%d", tt.protocol, b), tt.mode)
			var got string
			if tt.protocol == "http" {
				status, _, out := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/loop", a), "")
				if status != 500 {
					t.Errorf("status %d, want 500", status)
				}
				got = out
			} else {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", a))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := c.Write([]byte("hello")); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 4096)
				n, err := c.Read(buf)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				got = string(buf[:n])
			}
			if !strings.Contains(got, want) {
				t.Errorf("answer %s\nwant one holding %q", got, want)
			}
			if status, _, out := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", other), ""); status != 200 || out != "other" {
				t.Errorf("another imposter answered %d %q", status, out)
			}
		})
	}
}
