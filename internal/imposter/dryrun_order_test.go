package imposter

import (
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestDryRunToErrorComesFirst: Mountebank's dry run resolves a stub's responses at once and the
// first to fail is the error shown; a proxy's bad `to` fails before any answer comes, so it
// wins over a TypeError of an earlier proxy's predicateGenerators (which fail only once that
// proxy has answered). In order otherwise.
func TestDryRunToErrorComesFirst(t *testing.T) {
	const gens = `{"proxy":{"to":"http://127.0.0.1:26851","predicateGenerators":[{"matches":{"query":true},"predicateOperator":"exists"}]}}`
	tests := []struct{ name, responses, want string }{
		{"path after a generator error", gens + `,{"proxy":{"to":"http://127.0.0.1:26851/base"}}`, "proxy.to must not contain a path '/base'"},
		{"missing to after a generator error", `{"proxy":{"to":"http://x","predicateGenerators":[{"x":1}]}},{"is":{}},{"proxy":{}}`, "Missing to"},
		{"generator error alone", gens + `,{"is":{}}`, "Cannot create property 'method' on boolean"},
		{"a bad to first", `{"proxy":{"to":"http://x/a"}},{"proxy":{"to":"http://x/b"}}`, "proxy.to must not contain a path '/a'"},
	}
	for _, tt := range tests {
		_, err := New(impostertest.Def(t, `{"protocol":"http","stubs":[{"responses":[`+tt.responses+`]}]}`), Options{Logger: slog.New(slog.DiscardHandler)})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
