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
			v, err := config.ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":` + tc.responses + `}]}`))
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
			st := im.tbl.Load().stubs[0]
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
