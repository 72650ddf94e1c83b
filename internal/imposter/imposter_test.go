package imposter

import (
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestLargeRepeatCounted: a stub whose repeats are large keeps each response once and counts
// its turns (repeat 1e9 made a billion-entry slice: more memory than the machine had); the
// cycle is the one the expanded list gives, wrapping included, and small repeats stay expanded.
func TestLargeRepeatCounted(t *testing.T) {
	for _, tc := range []struct {
		name, responses string
		entries         int
		places          map[uint64]string // place in the cycle: the body answered there
	}{
		{"small", `[{"is":{"body":"a"},"repeat":2},{"is":{"body":"b"}}]`, 3,
			map[uint64]string{0: "a", 1: "a", 2: "b", 3: "a", 5: "b"}},
		{"large", `[{"is":{"body":"a"},"repeat":2},{"is":{"body":"b"},"repeat":1e9},{"is":{"body":"c"}}]`, 4,
			map[uint64]string{0: "a", 1: "a", 2: "b", 1e9 + 1: "b", 1e9 + 2: "c", 1e9 + 3: "a", 2*(1e9+3) + 2: "b"}},
		{"large first", `[{"is":{"body":"a"},"repeat":2147483646},{"is":{"body":"b"},"repeat":"abc"},{"is":{"body":"c"},"repeat":2}]`, 2,
			map[uint64]string{0: "a", 2147483645: "a", 2147483646: "c", 2147483647: "c", 2147483648: "a"}},
		{"expanded", `[{"is":{"body":"a"},"repeat":60},{"is":{"body":"b"},"repeat":60}]`, 120,
			map[uint64]string{59: "a", 60: "b", 119: "b", 120: "a"}},
		{"expanded, then counted", `[{"is":{"body":"a"},"repeat":3},{"is":{"body":"b"},"repeat":65},{"is":{"body":"c"}}]`, 5,
			map[uint64]string{2: "a", 3: "b", 67: "b", 68: "c", 69: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := oneStub(t, tc.responses)
			if len(st.responses) != tc.entries {
				t.Errorf("%d entries, want %d", len(st.responses), tc.entries)
			}
			for at, want := range tc.places {
				r, _ := st.at(at).(*isResponse)
				if r == nil || get(r.is, "body") != want {
					t.Errorf("place %d: %v, want %s", at, r, want)
				}
			}
		})
	}
}

// oneStub is the one stub of an http imposter whose stub has the responses given (JSON).
func oneStub(t *testing.T, responses string) *stub {
	t.Helper()
	v, err := config.ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":` + responses + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	im, err := New(def, Options{Logger: slog.New(slog.DiscardHandler), Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	return im.tbl.Load().stubs[0]
}

// TestFalsyResponsesServedOnce: a 0 or false among a stub's responses is answered as an empty
// is in the cycle's first turn only, as Mountebank's stub shifts it off its list and does not
// push it back; the later turns go through the others, repeats kept (expanded or counted),
// and a stub whose responses are all 0 or false answers an empty is for ever.
func TestFalsyResponsesServedOnce(t *testing.T) {
	for _, tc := range []struct {
		name, responses string
		want            []string // the bodies answered from the first request on ("-": empty is)
	}{
		{"between", `[0,{"is":{"body":"a"}},false]`, []string{"-", "a", "-", "a", "a", "a"}},
		{"repeats", `[{"is":{"body":"a"}},0,{"is":{"body":"b"},"repeat":2},false,{"is":{"body":"c"}}]`,
			[]string{"a", "-", "b", "b", "-", "c", "a", "b", "b", "c", "a"}},
		{"counted", `[{"is":{"body":"a"},"repeat":65},-0,{"is":{"body":"b"}}]`,
			append(append(append(append(repeat("a", 65), "-", "b"), repeat("a", 65)...), "b"), "a")},
		{"all", `[false,0]`, []string{"-", "-", "-", "-", "-"}},
		{"none", `[{"is":{"body":"a"}},{"is":{"body":"b"}}]`, []string{"a", "b", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := oneStub(t, tc.responses)
			for i, want := range tc.want {
				r, _ := st.nextResponse().(*isResponse)
				if r == nil {
					t.Fatalf("request %d: not an is response", i)
				}
				got := "-"
				if b, ok := get(r.is, "body").(string); ok {
					got = b
				}
				if got != want {
					t.Errorf("request %d: body %q, want %q", i, got, want)
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestHeaderValuesUTF8WithLength: a header value past ASCII goes out as UTF-8 (the line is not
// wide) in an answer with a Content-Length and a text body that is not empty, as node writes
// the header block with the body's first piece; otherwise as Latin-1. The defaultResponse's
// body and _mode count as the answer's. Lines shared with other answers are not changed.
func TestHeaderValuesUTF8WithLength(t *testing.T) {
	for _, tc := range []struct {
		name, is, dflt string
		utf8           bool
	}{
		{"length and text", `{"headers":{"X-A":"grün","Content-Length":"1"},"body":"x"}`, `{}`, true},
		{"length in lower case, JSON body", `{"headers":{"X-A":"grün","content-length":"1"},"body":{"a":1}}`, `{}`, true},
		{"no length", `{"headers":{"X-A":"grün"},"body":"x"}`, `{}`, false},
		{"empty body", `{"headers":{"X-A":"grün","Content-Length":"0"},"body":""}`, `{}`, false},
		{"binary body", `{"headers":{"X-A":"grün","Content-Length":"1"},"body":"eA==","_mode":"binary"}`, `{}`, false},
		{"default body", `{"headers":{"X-A":"grün","Content-Length":"1"}}`, `{"body":"d"}`, true},
		{"default binary mode", `{"headers":{"X-A":"grün","Content-Length":"1"},"body":"eA=="}`, `{"_mode":"binary"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is, err := config.ParseJSON([]byte(tc.is))
			if err != nil {
				t.Fatal(err)
			}
			d, err := config.ParseJSON([]byte(tc.dflt))
			if err != nil {
				t.Fatal(err)
			}
			def := defaultsOf(d.(*config.Object))
			plain := compileIs(is.(*config.Object), def, nil) // compiled once: its lines are kept
			lines := plain.headers
			wide := false
			for _, h := range lines {
				wide = wide || h.wide
			}
			if got := !wide; got != tc.utf8 {
				t.Errorf("values as UTF-8: %v, want %v", got, tc.utf8)
			}
		})
	}
	// An answer built on a base whose lines it shares (a decorate that changed the body only)
	// copies them rather than changing the base's.
	b, _ := config.ParseJSON([]byte(`{"headers":{"X-A":"grün","Content-Length":"0"},"body":""}`))
	base := compileIs(b.(*config.Object), defaultsOf(nil), nil)
	w, _ := config.ParseJSON([]byte(`{"headers":{"X-A":"grün","Content-Length":"0"},"body":"x"}`))
	built := compileIs(w.(*config.Object), defaultsOf(nil), base)
	if !base.headers[0].wide || built.headers[0].wide {
		t.Errorf("base line wide %v (want true), built line wide %v (want false)", base.headers[0].wide, built.headers[0].wide)
	}
}
