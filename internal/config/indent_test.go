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

// TestTextIndentation: read from a value's compact text, the indentation is what Indentation
// counts of the value, at any level, and the count stops soon past the limit.
func TestTextIndentation(t *testing.T) {
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	for _, doc := range []string{`1`, `"a[{,\"}]"`, `[]`, `{}`, `[1,2,3]`, `{"a":1,"b":[true,{"c":{}}]}`, deep(100),
		`[` + strings.Repeat(deep(30)+",", 20) + `1]`, `{"stubs":[{"responses":[{"is":{"body":{"a":[1,{"b":null}],"s":"x\\\"]"}}}]}]}`} {
		checkTextIndentation(t, doc)
	}
	text := deep(10000)
	if got := TextIndentation(text, 2, 0, 1<<20); got <= 1<<20 || got > 1<<20+2*2*10000+2 {
		t.Fatalf("got %d", got)
	}
}

func checkTextIndentation(t *testing.T, doc string) {
	t.Helper()
	v, err := ParseJSON([]byte(doc))
	if err != nil {
		return
	}
	text := string(AppendJSON(nil, v, 0))
	for _, indent := range []int{2, 4} {
		for _, level := range []int{0, 2} {
			if got, want := TextIndentation(text, indent, level, 1<<40), IndentationAt(v, indent, level, 1<<40); got != want {
				t.Fatalf("%.100s, indent %d at %d: %d, want %d", text, indent, level, got, want)
			}
		}
	}
}

// FuzzTextIndentation: any JSON's compact text indents as its value does.
func FuzzTextIndentation(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"]"}],"c":{}}`, `[[],[[]],{}]`, `"\\\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 4096 {
			return
		}
		checkTextIndentation(t, doc)
	})
}
