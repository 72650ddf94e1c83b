package imposter

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/script"
)

// renderErrors is the errors array the API shows for err.
func renderErrors(t *testing.T, err error) string {
	t.Helper()
	var list config.Errors
	var one *config.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = config.Errors{one}
	default:
		t.Fatalf("error %v (%T) is not an API error", err, err)
	}
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = string(config.MarshalJSON(e.Render(), 0))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Stub fields of a type Mountebank's dry run throws a TypeError on are refused with the stub
// alone as the error (scenario error-stub-field-types); falsy ones are none.
func TestStubFieldTypes(t *testing.T) {
	onlyStub := func(stub string) string {
		return `[{"source":` + string(config.MarshalJSON(stub, 0)) + `}]`
	}
	tests := []struct {
		name, protocol, stub string
		want                 string // "" when the imposter is created
	}{
		{"predicates true", "http", `{"predicates":true,"responses":[{"is":{}}]}`, onlyStub(`{"predicates":true,"responses":[{"is":{}}]}`)},
		{"predicates object", "http", `{"predicates":{},"responses":[{"is":{}}]}`, onlyStub(`{"predicates":{},"responses":[{"is":{}}]}`)},
		{"predicates string tcp", "tcp", `{"predicates":"s","responses":[{"is":{}}]}`, onlyStub(`{"predicates":"s","responses":[{"is":{}}]}`)},
		{"predicates empty string", "http", `{"predicates":"","responses":[{"is":{}}]}`, ""},
		{"predicates false", "http", `{"predicates":false,"responses":[{"is":{}}]}`, ""},
		{"predicate empty string", "http", `{"predicates":[""],"responses":[{"is":{}}]}`,
			`[{"code":"bad data","message":"missing predicate","source":"{\"predicates\":[\"\"],\"responses\":[{\"is\":{}}]}"}]`},
		{"not of 0", "http", `{"predicates":[{"not":0}],"responses":[{"is":{}}]}`,
			`[{"code":"bad data","message":"missing predicate","source":"{\"predicates\":[{\"not\":0}],\"responses\":[{\"is\":{}}]}"}]`},
		{"generators object", "http", `{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":{}}}]}`,
			onlyStub(`{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":{}}}]}`)},
		{"generator number", "http", `{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":[1]}}]}`,
			onlyStub(`{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":[1]}}]}`)},
		{"generator null tcp", "tcp", `{"responses":[{"proxy":{"to":"tcp://127.0.0.1:1","predicateGenerators":[null]}}]}`,
			onlyStub(`{"responses":[{"proxy":{"to":"tcp://127.0.0.1:1","predicateGenerators":[null]}}]}`)},
		{"generators false", "http", `{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":false}}]}`, ""},
		{"proxy true", "http", `{"responses":[{"proxy":true}]}`, onlyStub(`{"responses":[{"proxy":true}]}`)},
		{"proxy string tcp", "tcp", `{"responses":[{"proxy":"s"}]}`, onlyStub(`{"responses":[{"proxy":"s"}]}`)},
		{"proxy array", "http", `{"responses":[{"proxy":[1]}]}`,
			`[{"code":"bad data","message":"Missing to","source":"{\"responses\":[{\"proxy\":[1]}]}"}]`},
		{"response number", "http", `{"responses":[{"is":{}},1]}`, onlyStub(`{"responses":[{"is":{}},1]}`)},
		{"response true", "http", `{"responses":[true]}`, onlyStub(`{"responses":[true]}`)},
		{"behaviors empty string", "http", `{"responses":[{"is":{},"behaviors":""}]}`, ""},
		{"behaviors 0", "http", `{"responses":[{"is":{},"behaviors":0}]}`, ""},
	}
	log := slog.New(slog.DiscardHandler)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := New(impostertest.Def(t, `{"protocol":"`+tt.protocol+`","stubs":[`+tt.stub+`]}`), Options{Logger: log})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v, want the imposter", err)
				}
				if im.StubCount() != 1 {
					t.Errorf("%d stubs, want 1", im.StubCount())
				}
				return
			}
			if err == nil {
				t.Fatalf("New accepted %s, want %s", tt.stub, tt.want)
			}
			if got := renderErrors(t, err); got != tt.want {
				t.Errorf("errors\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Injected predicateGenerators run on the request of Mountebank's dry run when the stub is
// created: one that fails refuses it with Mountebank's error, V8's messages for results that
// are not arrays (scenario proxy-generators-inject-dry-run).
func TestInjectedGeneratorsDryRun(t *testing.T) {
	tests := []struct{ name, inject, want string }{
		{"throws", `function (config) { throw new Error('boom'); }`, `"data":"boom"`},
		{"number", `function (config) { return 5; }`, `"data":"Spread syntax requires ...iterable[Symbol.iterator] to be a function"`},
		{"nothing", `function (config) { }`, `"data":"eval(...) is not iterable (cannot read property undefined)"`},
		{"null", `function (config) { return null; }`, `"data":"eval(...) is not iterable (cannot read property null)"`},
		{"throws a primitive", `function (config) { throw 3; }`, `"source":"(function (config) { throw 3; })(config);"}]`},
		{"works on the dry run's request", `function (config) { return [{ equals: { method: config.request.method } }]; }`, ""},
	}
	log := slog.New(slog.DiscardHandler)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := `{"responses":[{"proxy":{"to":"http://127.0.0.1:1","predicateGenerators":[{"inject":` + string(config.MarshalJSON(tt.inject, 0)) + `}]}}]}`
			_, err := New(impostertest.Def(t, `{"protocol":"http","stubs":[`+stub+`]}`), Options{Logger: log, Script: script.New(script.Options{Logger: log})})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v, want the imposter", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New accepted the stub, want %s", tt.want)
			}
			prefix := `[{"code":"invalid injection","message":"invalid predicateGenerator injection","source":"(` + tt.inject + `)(config);"`
			if got := renderErrors(t, err); !strings.HasPrefix(strings.ReplaceAll(got, `\"`, `"`), strings.ReplaceAll(prefix, `\"`, `"`)) || !strings.Contains(got, tt.want) {
				t.Errorf("errors\n got %s\nwant %s…%s", got, prefix, tt.want)
			}
		})
	}
}
