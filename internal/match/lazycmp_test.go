package match

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// randomValue makes values as request bodies parse to: nested arrays, objects (maps and
// config.Objects), strings of one- to four-byte characters, some long enough to pass the first
// prefix, numbers, booleans, null and undefined.
func randomValue(rng *rand.Rand, depth int) any {
	switch k := rng.Intn(10); {
	case k < 2 && depth < 5:
		n := rng.Intn(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomValue(rng, depth+1)
		}
		return a
	case k == 2 && depth < 5:
		m := map[string]any{}
		for i := rng.Intn(3); i > 0; i-- {
			m[randomString(rng, 3)] = randomValue(rng, depth+1)
		}
		return m
	case k == 3 && depth < 5:
		o := &config.Object{}
		for i := rng.Intn(3); i > 0; i-- {
			o.Set(randomString(rng, 3), randomValue(rng, depth+1))
		}
		return o
	case k == 4:
		return []float64{0, 1, -1, 1.5, 12, math.NaN(), math.Inf(1)}[rng.Intn(7)]
	case k == 5:
		return []any{nil, jsvalue.Undef, true, false}[rng.Intn(4)]
	case k == 6:
		return []string{"", "1", " 2 ", "1,2", "Infinity", "0x10", "true"}[rng.Intn(7)]
	}
	return randomString(rng, []int{2, 10, 70, 600}[rng.Intn(4)])
}

func randomString(rng *rand.Rand, max int) string {
	var b strings.Builder
	for n := rng.Intn(max + 1); n > 0; n-- {
		b.WriteString([]string{"a", "b", ",", "\"", "é", "ë", "\uffff", "\ue000", "😀", "😁", "\x01"}[rng.Intn(11)])
	}
	return b.String()
}

// TestLazyCompareAgreesWithEager: comparing prefixes gives what comparing the whole strings
// gives, for objects (stable stringification) and for an object against anything else
// (JavaScript's <); objectNumber is Number(String(v)).
func TestLazyCompareAgreesWithEager(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var c lazyCompare
	for i := 0; i < 30000; i++ {
		a, b := randomValue(rng, 0), randomValue(rng, 0)
		if i%3 == 0 { // share a long prefix
			a, b = []any{"x" + strings.Repeat("é", 40), a}, []any{"x" + strings.Repeat("é", 40), b}
		}
		if isObject(a) && isObject(b) {
			want := jsvalue.Less16(string(appendCanon(nil, a)), string(appendCanon(nil, b)))
			if got := c.less(canonSource{a}, canonSource{b}); got != want {
				t.Fatalf("canon less(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
		if isObject(a) != isObject(b) {
			if got, want := c.mixedLess(a, b), jsLess(a, b); got != want {
				t.Fatalf("mixedLess(%#v, %#v) = %v, want %v", a, b, got, want)
			}
		}
		if isObject(a) {
			got, want := objectNumber(a), jsvalue.Number(jsString(a))
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("objectNumber(%#v) = %v, want %v", a, got, want)
			}
		}
	}
}

// TestLazyCompareCutsBetweenCharacters: a prefix ends between characters, so a character cut
// at the first limit is never taken for another (😀 is the surrogate D83D, below U+E000).
func TestLazyCompareCutsBetweenCharacters(t *testing.T) {
	var c lazyCompare
	x := strings.Repeat("x", 63)
	for _, tt := range []struct {
		a, b any
		want bool
	}{
		{[]any{x + "😀"}, x + "\ue000", true},
		{x + "\ue000", []any{x + "😀"}, false},
		{[]any{x + "😀"}, []any{x[1:] + "\ue000"}, true}, // canon: 62 x after `["`
	} {
		var got bool
		if isObject(tt.a) && isObject(tt.b) {
			got = c.less(canonSource{tt.a}, canonSource{tt.b})
		} else {
			got = c.mixedLess(tt.a, tt.b)
		}
		if got != tt.want {
			t.Errorf("less(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestSortJSAgreesWithNode: sortJS orders arrays as Mountebank's predicates.js does on Node 20
// (testdata/sort_cases.json, made by gen_sort_cases.js), also where its comparator is not
// consistent (null against strings, numbers against arrays).
func TestSortJSAgreesWithNode(t *testing.T) {
	data, err := os.ReadFile("testdata/sort_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ In, Out []any }
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		for _, budget := range []int{-1, 1 << 20} { // stringified lazily, or in advance
			got, ok := sortWithin(c.In, budget)
			if !ok || !reflect.DeepEqual(got, c.Out) && !(len(got) == 0 && len(c.Out) == 0) {
				t.Fatalf("case %d (budget %d): sortJS(%v)\n = %v\nwant %v", i, budget, c.In, got, c.Out)
			}
		}
	}
}
