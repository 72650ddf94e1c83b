package netconn

import (
	"net"
	"testing"
)

// TestLiteralIP: each host is parsed as net.ParseIP parses it, whichever host came before
// (literalIP keeps the last one it parsed).
func TestLiteralIP(t *testing.T) {
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"::1", true},
		{"localhost", false},
		{"127.0.0.1", true},
		{"", true}, // the wildcard
		{"::ffff:127.0.0.1", true},
		{"127.0.0.1%lo", false},
	} {
		got, ok := literalIP(tc.host)
		want := net.ParseIP(tc.host)
		if ok != tc.ok || !got.Equal(want) || ok && (tc.host == "") != (got == nil) {
			t.Errorf("literalIP(%q) = %v, %v; want %v, %v", tc.host, got, ok, want, tc.ok)
		}
	}
}
