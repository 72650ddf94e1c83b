package proxy

import (
	"strings"
	"testing"
)

// FuzzParseTo: reading a proxy's `to` never panics, and a URL it accepts with a special scheme
// (http, https, ws, wss, ftp) has a host, holds no character a host cannot, and reads back the
// same from its own printing (scheme://host[:port]), as node's parser gives href back.
func FuzzParseTo(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080", "HTTP://X:80", "http:x", "http://%41", "https://[::1]:1",
		"http://0x7f.1", "http://x/a/..", "tcp://x:1", "tcp://", "x-y:/%zz:443", "http://u@", "http://a b",
		"http://[::ffff:1.2.3.4]", "http://xn--nxasmq6b", "http://é.com", "http://1.2.3.4.5", "http:\\\\x\\", "ftp://x:21/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseTo(s, true)
		if err != nil || u == nil {
			return
		}
		if _, special := specialPorts[u.Scheme]; !special {
			return
		}
		if u.Host == "" || strings.ContainsAny(u.Host, " \t\r\n/\\?#@") {
			t.Fatalf("%q: accepted with host %q", s, u.Host)
		}
		again, err2 := ParseTo(u.Scheme+"://"+u.Host, true)
		if err2 != nil || again.Scheme != u.Scheme || again.Host != u.Host {
			t.Fatalf("%q -> %s://%s, which reads as %v %v", s, u.Scheme, u.Host, again, err2)
		}
	})
}

// An IPv6 host is printed as node's URL parser prints it (node 20's answers, checked by hand).
func TestParseToIPv6(t *testing.T) {
	for in, want := range map[string]string{
		"http://[::ffff:1.2.3.4]":   "[::ffff:102:304]",
		"http://[::FFFF:1.2.3.4]:1": "[::ffff:102:304]:1",
		"http://[0:0::1]:80":        "[::1]",
		"http://[1:2:3:4:5:6:7:8]":  "[1:2:3:4:5:6:7:8]",
		"http://[::1.2.3.4]":        "[::102:304]",
		"http://[1:0:0:2:0:0:0:3]":  "[1:0:0:2::3]",
		"http://[1:0:0:2:0:0:3:4]":  "[1::2:0:0:3:4]",
		"http://[1:0:2:3:4:5:6:7]":  "[1:0:2:3:4:5:6:7]",
		"http://[::]":               "[::]",
		"http://[::1%25eth0]":       "",
		"http://[1.2.3.4]":          "",
	} {
		u, err := ParseTo(in, true)
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: accepted as %s, node refuses it", in, u.Host)
		case want != "" && (err != nil || u.Host != want):
			t.Errorf("%s: got %v %v, want host %s", in, u, err, want)
		}
	}
}
