package match

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// TestScenarioPredicatesAreFast: the predicates of bench/'s scenarios are fast nodes (every
// leaf under not, or and and), so the speed layer answers them without the reference; shapes
// it does not specialise are reference nodes.
func TestScenarioPredicatesAreFast(t *testing.T) {
	var fast func(p *pred) bool
	fast = func(p *pred) bool {
		if p.op == opNot || p.op == opOr || p.op == opAnd {
			for _, s := range p.subs() {
				if !fast(s) {
					return false
				}
			}
			return true
		}
		return p.fast
	}
	for _, sc := range benchScenarios {
		if strings.HasPrefix(sc.name, "reference-") {
			continue
		}
		s, err := Compile(sc.stubs(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, ps := range s.stubs {
			if !fast(ps[0]) {
				t.Errorf("%s: stub %d is not a fast node", sc.name, i)
			}
		}
		r := sc.req()
		if got, err := s.Find(r); got != sc.want || err != nil {
			t.Errorf("%s: Find = %d, %v; want %d", sc.name, got, err, sc.want)
		}
		request.Release(r)
	}

	for _, src := range []string{
		`{"equals":{"query":{"a":"1"}},"except":"x"}`,
		`{"deepEquals":{"body":{"a":"1"}},"except":"x"}`,
		`{"equals":{"body":{"a":[[1]]}}}`,
		`{"equals":{"body":["a"]}}`,
		`{"equals":{"query":{"a":{"b":1}}}}`,
		`{"contains":{"body":{"a":1}}}`,
		`{"equals":{"query":{"q":["1","2"]}}}`,
		`{"deepEquals":{"body":"x"},"jsonpath":{"selector":"$.a"}}`,
		`{"equals":{"body":"x","path":"/"},"jsonpath":{"selector":"$.a"}}`,
		`{"equals":{"body":"x"},"xpath":{"selector":"//a:b"}}`,
		`{"equals":{"Path":"/a"},"caseSensitive":true}`,
		`{"equals":"x"}`,
		`{"inject":"function () { return true; }"}`,
	} {
		s, err := Compile([][]any{{decodeOne(t, src)}}, Options{Injector: &fakeInjector{}})
		if err != nil {
			t.Fatal(err)
		}
		if fast(s.stubs[0][0]) {
			t.Errorf("%s is a fast node, want a reference node", src)
		}
	}
}

func decodeOne(t *testing.T, src string) any {
	t.Helper()
	return decode(t, "[["+src+"]]")[0][0]
}

// TestBinaryModeFastNodes: in binary mode (a tcp imposter with mode binary) equals, contains,
// startsWith and endsWith on data are fast nodes that base64-decode the request's data in their
// pipe, and answer as the reference does, case-insensitively by default, with except, and for
// data that is not valid base64.
func TestBinaryModeFastNodes(t *testing.T) {
	opts := Options{Binary: true, TCP: true}
	datas := []string{"AAAAC0dFVCB1c2VyIDQy", "aGVsbG8gV29ybGQ=", "SEVMTE8=", "", "not base64!", "aGVsbG8"}
	for _, src := range []string{
		`{"equals":{"data":"AAAAC0dFVCB1c2VyIDQy"}}`,
		`{"equals":{"data":"aGVsbG8gd29ybGQ="}}`,
		`{"equals":{"data":"aGVsbG8gd29ybGQ="},"caseSensitive":true}`,
		`{"contains":{"data":"bGxv"}}`,
		`{"startsWith":{"data":"aGVs"}}`,
		`{"endsWith":{"data":"V29ybGQ="}}`,
		`{"equals":{"data":"aGVsbG8gV29ybGQ="},"except":"o"}`,
		`{"equals":{"data":""}}`,
		`{"equals":{"data":"w7xiZXIgc3RyYcOfZQ=="}}`,
		`{"contains":{"data":"SEVMTE8="},"caseSensitive":true}`,
		`{"endsWith":{"data":"SGVsbG8="},"except":"\\s"}`,
	} {
		v, err := config.ParseJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		preds := []any{v}
		set, err := Compile([][]any{config.Plain(preds).([]any)}, opts)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if !set.stubs[0][0].fast {
			t.Errorf("%s: not a fast node", src)
		}
		ref := NewReference([]config.Value{preds}, opts)
		for _, data := range datas {
			agreeAll(t, set, ref, (&request.Request{TCP: true}).SetDataText(data), src+" on "+data)
		}
		// A request the tcp server made (SetData) carries its payload as received, which the
		// fast node reads rather than decoding Data: the same answers, non-ASCII and invalid
		// UTF-8 payloads included.
		for _, payload := range payloads {
			r := request.Acquire()
			r.TCP = true
			r.SetData([]byte(payload), true)
			agreeAll(t, set, ref, r, fmt.Sprintf("%s on payload %q", src, payload))
			request.Release(r)
		}
	}
}

// payloads are binary tcp payloads for TestBinaryModeFastNodes: ASCII with capitals, a length
// prefix, UTF-8 beyond ASCII (capitals whose lowercase differs in length), invalid UTF-8.
var payloads = []string{
	"\x00\x00\x00\x0bGET user 42", "hello World", "HELLO", "hello", "", "ÜBER straße", "İstanbul",
	"\xff\xfeHELLO", "hello \xc3", "\xf0\x9f\x98\x80 Hello",
}

// binaryDataCases are expected values and payloads for binaryDataEquals: equal bytes, equal but
// for case, ASCII that lowercases alike, payloads whose text lowercases to another length
// (U+212A KELVIN SIGN is "k", U+0130 is "i̇"), invalid UTF-8 against its replacement's bytes.
var binaryDataCases = [][2]string{
	{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bGET user 42"},
	{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bget USER 42"},
	{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bGET user 43"},
	{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0cGET user 42"},
	{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bGET user 4"},
	{"k", "\u212a"}, {"K", "\u212a"}, {"kk", "k\u212a"}, {"\u212a", "k"}, {"\u212a", "K"}, {"\u212a", "\u212a"},
	{"i\u0307", "\u0130"}, {"\u0130", "I"}, {"\u0130", "\u0130"},
	{"\ufffd", "\xff"}, {"\xff", "\xef\xbf\xbd"}, {"\xff", "\xfe"}, {"a\xff", "A\xfe"}, {"\xef\xbf\xbd\xef\xbf\xbd", "\xff\xfe"},
	{"AB", "ab"}, {"ab", "AB"}, {"a", "ab"}, {"[", "{"}, {"@", "`"}, {"Z", "z"}, {"z", "Z"},
	{"ÜBER", "über"}, {"über", "ÜBER"}, {"", "x"},
}

// TestBinaryDataEquals: equals and deepEquals on a binary tcp request's data, which compare the
// payload's bytes when they tell (binaryDataEquals), answer as the reference does, case-
// sensitive or not.
func TestBinaryDataEquals(t *testing.T) {
	for _, tc := range binaryDataCases {
		for _, op := range []string{"equals", "deepEquals"} {
			for _, cs := range []bool{false, true} {
				agreeOnBinaryData(t, op, []byte(tc[0]), []byte(tc[1]), cs)
			}
		}
	}
}

// FuzzBinaryDataEquals compares equals on a binary tcp request's data with the reference.
func FuzzBinaryDataEquals(f *testing.F) {
	for _, tc := range binaryDataCases {
		f.Add([]byte(tc[0]), []byte(tc[1]), false, false)
	}
	f.Add([]byte("Hello"), []byte("hELLO"), true, true)
	f.Fuzz(func(t *testing.T, expected, payload []byte, caseSensitive, deep bool) {
		op := "equals"
		if deep {
			op = "deepEquals"
		}
		agreeOnBinaryData(t, op, expected, payload, caseSensitive)
	})
}

func agreeOnBinaryData(t *testing.T, op string, expected, payload []byte, caseSensitive bool) {
	t.Helper()
	src := fmt.Sprintf(`{%q:{"data":%q},"caseSensitive":%v}`, op, base64.StdEncoding.EncodeToString(expected), caseSensitive)
	v, err := config.ParseJSON([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	preds := []any{v}
	opts := Options{Binary: true, TCP: true}
	set, err := Compile([][]any{config.Plain(preds).([]any)}, opts)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	ref := NewReference([]config.Value{preds}, opts)
	r := request.Acquire()
	defer request.Release(r)
	r.TCP = true
	r.SetData(payload, true)
	agreeAll(t, set, ref, r, fmt.Sprintf("%s on payload %q", src, payload))
}
