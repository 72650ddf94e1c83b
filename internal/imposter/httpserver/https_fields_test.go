package httpserver

import (
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// An https imposter's TLS fields fail as Mountebank 2.9.1 (node 20) fails on them
// (test/compat scenario https-tls-field-types).
func TestTLSConfigFieldErrors(t *testing.T) {
	key, cert := imposter.TLSText(config.NewObject(), "key"), imposter.TLSText(config.NewObject(), "cert")
	tests := []struct {
		name   string
		fields []any
		want   string // the rendered error, "" for none
	}{
		{"defaults", nil, ""},
		{"lists of texts", []any{"key", []any{key}, "cert", []any{cert}}, ""},
		{"ca a number", []any{"ca", 1.0}, `{"code":"ERR_INVALID_ARG_TYPE"}`},
		{"ca a list of numbers", []any{"ca", []any{1.0}}, `{"code":"ERR_INVALID_ARG_TYPE"}`},
		{"cert a number", []any{"cert", 1.0, "key", key}, `{"code":"ERR_INVALID_ARG_TYPE"}`},
		{"key an object", []any{"key", config.NewObject()}, `{"code":"ERR_INVALID_ARG_TYPE"}`},
		{"key true", []any{"key", true}, `{"code":"ERR_INVALID_ARG_TYPE"}`},
		{"ciphers a number", []any{"ciphers", 1.0}, `{}`},
		{"ciphers a list", []any{"ciphers", []any{"HIGH"}}, `{}`},
		{"key and cert swapped", []any{"key", cert, "cert", key},
			`{"library":"PEM routines","reason":"no start line","code":"ERR_OSSL_PEM_NO_START_LINE"}`},
		{"key an empty list", []any{"key", []any{}}, ""},
		{"cert an empty list", []any{"cert", []any{}, "mutualAuth", true}, ""},
		{"both empty lists", []any{"key", []any{}, "cert", []any{}}, ""},
		{"key an empty list, cert no PEM", []any{"key", []any{}, "cert", "junk"},
			`{"library":"PEM routines","reason":"no start line","code":"ERR_OSSL_PEM_NO_START_LINE"}`},
		{"cert an empty list, key no PEM", []any{"cert", []any{}, "key", "junk"},
			`{"library":"DECODER routines","reason":"unsupported","code":"ERR_OSSL_UNSUPPORTED"}`},
		{"key a list of an empty text", []any{"key", []any{""}},
			`{"library":"DECODER routines","reason":"unsupported","code":"ERR_OSSL_UNSUPPORTED"}`},
	}
	for _, tt := range tests {
		conf, err := TLSConfig(config.NewObject(tt.fields...))
		// An empty list for a key or cert: the imposter starts and fails every handshake.
		if fails := conf != nil && conf.GetConfigForClient != nil; fails != strings.Contains(tt.name, "empty list") && err == nil {
			t.Errorf("%s: every handshake fails %v", tt.name, fails)
		}
		got := ""
		if err != nil {
			ce, ok := err.(*config.Error)
			if !ok {
				t.Fatalf("%s: %T %v, want a *config.Error", tt.name, err, err)
			}
			got = string(config.MarshalJSON(ce.Render(), 0))
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
