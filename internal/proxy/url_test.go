package proxy

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// A proxy's `to` is read as Mountebank's dry run reads it (node's new URL): each row is what
// Mountebank 2.9.1 answered for that `to` (error code and message or input), checked side by side.
func TestParseTo(t *testing.T) {
	tests := []struct {
		to       config.Value
		host     string // the URL's host when accepted
		code, is string // the error's code and message (or input) when refused
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "", ""},
		{"HTTP://X:80", "x", "", ""},
		{"http:x", "x", "", ""},
		{"http:/x/", "x", "", ""},
		{"  http://x  ", "x", "", ""},
		{"http://\tx", "x", "", ""},
		{"http://%41", "a", "", ""},
		{"http://x:", "x", "", ""},
		{"http://x?y", "x", "", ""},
		{"http://u@x", "x", "", ""},
		{"https://[::1]:1", "[::1]:1", "", ""},
		{"http://0x7f.1", "127.0.0.1", "", ""},
		{"http://x/.", "x", "", ""},
		{"http://x/a/..", "x", "", ""},
		{"tcp://x:1", "x:1", "", ""},
		{"tcp://", "", "", ""},
		{"x-y:/%zz:443", "", "", ""},
		{"mailto:x", "", "", ""},
		{[]any{"http://x"}, "x", "", ""},
		{"nope", "", "ERR_INVALID_URL", "nope"},
		{"", "", "ERR_INVALID_URL", ""},
		{"http://", "", "ERR_INVALID_URL", "http://"},
		{"http://u@", "", "ERR_INVALID_URL", "http://u@"},
		{"http://a b", "", "ERR_INVALID_URL", "http://a b"},
		{"http://x:12a", "", "ERR_INVALID_URL", "http://x:12a"},
		{"http://x:99999", "", "ERR_INVALID_URL", "http://x:99999"},
		{"tcp://x:65536", "", "ERR_INVALID_URL", "tcp://x:65536"},
		{"http://1.2.3.256", "", "ERR_INVALID_URL", "http://1.2.3.256"},
		{"http://1.2.3.4.5", "", "ERR_INVALID_URL", "http://1.2.3.4.5"},
		{"http://08", "", "ERR_INVALID_URL", "http://08"},
		{"http://xn--a", "", "ERR_INVALID_URL", "http://xn--a"},
		{"x-y://:/a", "", "ERR_INVALID_URL", "x-y://:/a"},
		{"file://x:1", "", "ERR_INVALID_URL", "file://x:1"},
		{"1a:b", "", "ERR_INVALID_URL", "1a:b"},
		{1.0, "", "ERR_INVALID_URL", "1"},
		{nil, "", "ERR_INVALID_URL", "null"},
		{true, "", "ERR_INVALID_URL", "true"},
		{"http://x/y", "", "bad data", "proxy.to must not contain a path '/y'"},
		{"tcp://x/y", "x", "", ""},
		{"http://x/a b", "", "bad data", "proxy.to must not contain a path '/a%20b'"},
		{"httpx://a/b", "", "bad data", "proxy.to must not contain a path '/b'"},
		{"httpx://a", "", "bad data", "proxy.to must not contain a path ''"},
		{"httpx:/\\a/./b", "", "bad data", "proxy.to must not contain a path '/\\a/b'"},
		// node's parser (ada) keeps a non-special path empty when a final ".." finds nothing to
		// remove (node 20: new URL("httpx://a_b:443/..").pathname is "").
		{"httpx://a_b:443/..", "", "bad data", "proxy.to must not contain a path ''"},
		{"httpx://a/b/../..", "", "bad data", "proxy.to must not contain a path ''"},
		{"httpx://a/./..", "", "bad data", "proxy.to must not contain a path ''"},
		{"httpx://a/%2e%2e", "", "bad data", "proxy.to must not contain a path ''"},
		{"httpx://a/b/..", "a", "", ""},
		{"httpx://a/../.", "a", "", ""},
		{"httpx://a//..", "a", "", ""},
		{"http://a/..", "a", "", ""},
		// A Windows drive letter where a file URL's host would be is its path (node 20:
		// new URL("file://x:") is file:///x:); a host of two letters and a colon is not.
		{"file://x:", "", "", ""},
		{"file://X|/a", "", "", ""},
		{"file://ab:", "", "ERR_INVALID_URL", "file://ab:"},
		{"file://x:a", "", "ERR_INVALID_URL", "file://x:a"},
	}
	for _, tt := range tests {
		u, err := ParseTo(tt.to, true)
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("ParseTo(%q): %v, want it accepted", tt.to, err)
		case tt.code == "" && u.Host != tt.host:
			t.Errorf("ParseTo(%q).Host = %q, want %q", tt.to, u.Host, tt.host)
		case tt.code != "" && err == nil:
			t.Errorf("ParseTo(%q) accepted, want %s", tt.to, tt.code)
		case tt.code != "":
			is := err.Message
			if err.Input != nil {
				is = *err.Input
			}
			if err.Code != tt.code || is != tt.is {
				t.Errorf("ParseTo(%q) = %s %q, want %s %q", tt.to, err.Code, is, tt.code, tt.is)
			}
		}
	}
	if _, err := ParseTo(nil, false); err == nil || err.Message != "Missing to" {
		t.Errorf("ParseTo without to = %v, want Missing to", err)
	}
}

// TestCompileHostless: a `to` without a host (file://x:, foo:///) is proxied to localhost, as
// node's http.request with an empty hostname does (Mountebank then answers "Unable to connect").
func TestCompileHostless(t *testing.T) {
	for _, to := range []string{"file://x:", "foo:///", "file:///tmp"} {
		p, err := Compile(config.NewObject("to", to), 1<<20)
		if err != nil {
			t.Fatalf("Compile(to %q): %v", to, err)
		}
		if p.client.Addr != "localhost:80" {
			t.Errorf("Compile(to %q) dials %q, want localhost:80", to, p.client.Addr)
		}
	}
}
