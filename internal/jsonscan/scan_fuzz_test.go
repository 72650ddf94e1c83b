package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fuzzKeys are the paths and field sets the fuzz targets read a text with.
var fuzzKeys = [][]string{{}, {"a"}, {"a", "b"}, {"name"}, {"a", "b", "c"}, {"A"}, {"a", "a"}, {"äb", "x"}}

var fuzzSeeds = []string{
	`{"name":"Ada","tags":[1,2,3]}`, `{"a":{"b":[1,{"c":2}],"B":null},"A":true}`, `{"a":1,"a":2}`,
	`{"a":{"b":{"c":"x"},"b":1}}`, `{ "a" : [ ] , "b" : { } }`, `{"a":[[[{"b":1}]]],"b":{"a":{}}}`,
	`{"a":"\n"}`, `{"a":1e2}`, `{"a":-0.5}`, `{"a":01}`, `{"a":1} x`, `[{"a":1}]`, `{"a":tru}`,
	"{\"a\":\"\x01\"}", `{"äb":{"x":"ẞ"}}`, `{"a":{"b":{}}}`, `{"a":[]}`, `{}`, `{"a":{"b":[]}}`,
	strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat(`[`, 66) + strings.Repeat("]", 66),
	`{"a":` + strings.Repeat(`[`, 64) + strings.Repeat("]", 64) + `}`,
	`{"a":` + strings.Repeat(`[`, 65) + strings.Repeat("]", 65) + `}`,
}

// FuzzAgainstReference: Path and Fields answer as the recursive scanner they replaced did,
// result and spans alike, for every text and path.
func FuzzAgainstReference(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, i, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, s string, sel int, lower bool) {
		keys := fuzzKeys[uint(sel)%uint(len(fuzzKeys))]
		start, end, res := Path(s, keys, lower)
		rs, re, rres := refPath(s, keys, lower)
		if res != rres || start != rs || end != re {
			t.Fatalf("Path(%q, %q, %v) = %d %d:%d, reference %d %d:%d", s, keys, lower, res, start, end, rres, rs, re)
		}
		var spans, rspans [3][2]int
		n := min(len(keys), 3)
		ok, rok := Fields(s, keys[:n], lower, spans[:n]), refFields(s, keys[:n], lower, rspans[:n])
		if ok != rok || ok && spans != rspans {
			t.Fatalf("Fields(%q, %q, %v) = %v %v, reference %v %v", s, keys[:n], lower, ok, spans, rok, rspans)
		}
	})
}

// FuzzAgainstEncodingJSON: what Path finds or misses, encoding/json reads as valid JSON with
// the same value at the path (or none there).
func FuzzAgainstEncodingJSON(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, i)
	}
	f.Fuzz(func(t *testing.T, s string, sel int) {
		keys := fuzzKeys[uint(sel)%uint(len(fuzzKeys))]
		start, end, res := Path(s, keys, false)
		if res == Unsure {
			return
		}
		if !json.Valid([]byte(s)) {
			t.Fatalf("Path(%q, %q) = %d, but encoding/json finds it invalid", s, keys, res)
		}
		var doc any
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		v, present := doc, true
		for _, k := range keys {
			m, isObj := v.(map[string]any)
			if !isObj {
				present = false
				break
			}
			if v, present = m[k]; !present {
				break
			}
		}
		if res == Missing {
			if present {
				t.Fatalf("Path(%q, %q) missing, encoding/json selects %v", s, keys, v)
			}
			return
		}
		if !present {
			t.Fatalf("Path(%q, %q) = %q, encoding/json selects nothing", s, keys, s[start:end])
		}
		var got any
		dec = json.NewDecoder(strings.NewReader(s[start:end]))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil || dec.More() {
			t.Fatalf("Path(%q, %q) = %q: not one JSON value (%v)", s, keys, s[start:end], err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("Path(%q, %q) = %#v, encoding/json selects %#v", s, keys, got, v)
		}
	})
}

// TestDeepNesting: a megabyte of '[' (or of objects) is refused at the depth bound, without
// recursion, as soon as the bound is passed.
func TestDeepNesting(t *testing.T) {
	for _, s := range []string{
		`{"a":` + strings.Repeat("[", 1<<20),
		`{"a":` + strings.Repeat(`{"a":`, 1<<18),
		strings.Repeat("{", 1<<20),
	} {
		if _, _, res := Path(s, []string{"a"}, false); res != Unsure {
			t.Errorf("Path of %d bytes of nesting = %d, want Unsure", len(s), res)
		}
		var spans [1][2]int
		if Fields(s, []string{"a"}, false, spans[:]) {
			t.Errorf("Fields of %d bytes of nesting = true", len(s))
		}
	}
	// The bound: a value at depth maxScanDepth is read, one deeper is not.
	for depth, want := range map[int]Result{maxScanDepth - 1: Found, maxScanDepth: Unsure} {
		s := `{"a":` + strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) + "}"
		if _, _, res := Path(s, []string{"a"}, false); res != want {
			t.Errorf("Path at depth %d = %d, want %d", depth, res, want)
		}
	}
}
