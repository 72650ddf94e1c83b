package config

import "testing"

// Node's own errors pass through Mountebank as they are, keys in node's order (Node 20).
func TestNodeErrorsRender(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"port taken, wildcard", AddrInUse("", 4545),
			`{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"::","port":4545}`},
		{"port taken, host", AddrInUse("127.0.0.1", 4545),
			`{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"127.0.0.1","port":4545}`},
		{"address not local", ListenFailed("EADDRNOTAVAIL", -99, "10.99.1.2", 4546),
			`{"code":"EADDRNOTAVAIL","errno":-99,"syscall":"listen","address":"10.99.1.2","port":4546}`},
		{"unknown host", LookupFailed("ENOTFOUND", -3008, "no.such.host.invalid"),
			`{"errno":-3008,"code":"ENOTFOUND","syscall":"getaddrinfo","hostname":"no.such.host.invalid"}`},
		{"lookup failed for now", LookupFailed("EAI_AGAIN", -3001, "example.test"),
			`{"errno":-3001,"code":"EAI_AGAIN","syscall":"getaddrinfo","hostname":"example.test"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(MarshalJSON(tt.err.Render(), 0)); got != tt.want {
				t.Errorf("Render() = %s, want %s", got, tt.want)
			}
			if tt.err.Message == "" {
				t.Error("no message for logs and the command line")
			}
		})
	}
}
