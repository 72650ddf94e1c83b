package config

import (
	"strings"
	"testing"
)

func TestIndentation(t *testing.T) {
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	tests := []struct {
		name, doc string
		members   int // each writes ": " indented, ":" compact: not indentation
	}{
		{"scalar", `1`, 0},
		{"string", `"a\nb"`, 0},
		{"empty", `[]`, 0},
		{"empty object", `{}`, 0},
		{"flat", `[1,2,3]`, 0},
		{"object", `{"a":1,"b":[true,{"c":{}}]}`, 3},
		{"nested 100", deep(100), 0},
		{"wide", `[` + strings.Repeat(deep(30)+",", 20) + `1]`, 0},
		{"imposter", `{"port":1,"stubs":[{"responses":[{"is":{"body":{"a":[1,{"b":null}]}}}]}]}`, 7},
	}
	for _, tt := range tests {
		v, err := ParseJSON([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, indent := range []int{2, 4} {
			want := len(AppendJSON(nil, v, indent)) - len(AppendJSON(nil, v, 0)) - tt.members
			if got := Indentation(v, indent, 1<<40); got != want {
				t.Errorf("%s, indent %d: %d, want %d", tt.name, indent, got, want)
			}
		}
	}
}

// TestIndentationStops: past the limit the walk stops (an answer above it, not the total):
// 10,000 levels would be 200 MB, counted no further than about a level past 1 MB.
func TestIndentationStops(t *testing.T) {
	v, err := ParseJSON([]byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)))
	if err != nil {
		t.Fatal(err)
	}
	if got := Indentation(v, 2, 1<<20); got <= 1<<20 || got > 1<<20+2*2*10000+2 {
		t.Fatalf("got %d", got)
	}
	if got, all := Indentation(v, 2, 1<<40), len(AppendJSON(nil, v, 2))-20000; got != all {
		t.Fatalf("got %d, want %d", got, all)
	}
}
