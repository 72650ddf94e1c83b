package config

import (
	"slices"
	"strings"
	"testing"
)

// rawDocs are documents whose rendering is easy to get wrong: nesting, empty objects and
// arrays, escapes that look like structure, numbers JavaScript spells its own way, unicode,
// duplicate keys and nulls.
var rawDocs = []string{
	`{}`,
	`[]`,
	`{"a":{}}`,
	`{"a":[],"b":[{}],"c":[[],[[]]]}`,
	`{"predicates":[{"equals":{"method":"GET","path":"/scale/1"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"stub\":\"scale\",\"index\":1}"}}]}`,
	`{"s":"a,b:c{d}[e]\"f\\","t":"\\","u":"\"{"}`,
	`{"n":[1.0,1e3,-0,0.1,1e21,1e-7,123456789012345678901234567890,5e-324,1.7976931348623157e308]}`,
	`{"big":1e400,"neg":-1e400}`,
	`{"u":"\u00e9\u2028\ud83d\ude00\u0000\u001f","raw":"é😀","lone":"\ud800"}`,
	`{"k":1,"k":2,"j":null,"k":3}`,
	`{"a":null,"b":true,"c":false,"d":[null,true,false]}`,
	`{"nested":{"a":{"b":{"c":[1,{"d":[]}]}}}}`,
	`{"":"","\"":"\\"}`,
}

// TestRawObjectRendersAsItsObject holds a RawObject's rendering to the object it stands for
// at every indent and level, with and without members after its own.
func TestRawObjectRendersAsItsObject(t *testing.T) {
	for _, doc := range rawDocs {
		v, err := ParseJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		text := string(MarshalJSON(v, 0))
		for _, indent := range []int{0, 2, 4} {
			for _, wrap := range []bool{false, true} {
				var want, got []byte
				raw := &RawObject{Text: text} // an array's text renders alike; only objects take members
				if wrap {
					want = AppendJSON(nil, []any{NewObject("x", v)}, indent)
					got = AppendJSON(nil, []any{NewObject("x", raw)}, indent)
				} else {
					want = AppendJSON(nil, v, indent)
					got = AppendJSON(nil, raw, indent)
				}
				if string(got) != string(want) {
					t.Errorf("%s at indent %d (nested %v):\ngot  %s\nwant %s", doc, indent, wrap, got, want)
				}
			}
			o, isObj := v.(*Object)
			if !isObj {
				continue
			}
			more := []Member{{Key: "matches", Value: []any{NewObject("a", 1.0)}}, {Key: "_links", Value: NewObject("self", NewObject("href", "x"))}}
			full := &Object{Members: append(append([]Member(nil), o.Members...), more...)}
			want := AppendJSON(nil, []any{full}, indent)
			got := AppendJSON(nil, []any{&RawObject{Text: text, More: more}}, indent)
			if string(got) != string(want) {
				t.Errorf("%s with members at indent %d:\ngot  %s\nwant %s", doc, indent, got, want)
			}
			var w strings.Builder
			if err := WriteJSON(&w, []any{&RawObject{Text: text, More: more}}, indent); err != nil || w.String() != string(want) {
				t.Errorf("%s written at indent %d: %v\ngot  %s\nwant %s", doc, indent, err, w.String(), want)
			}
			packed := &RawObject{Text: PackJSON([]byte(text)), More: more, Packed: true}
			if got := AppendJSON(nil, []any{packed}, indent); string(got) != string(want) {
				t.Errorf("%s packed, with members at indent %d:\ngot  %s\nwant %s", doc, indent, got, want)
			}
		}
	}
}

// FuzzRawObject holds the rendering of any document's compact text to the document's.
func FuzzRawObject(f *testing.F) {
	for _, doc := range rawDocs {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := ParseJSON([]byte(doc))
		if err != nil {
			return
		}
		text := string(MarshalJSON(v, 0))
		for _, indent := range []int{0, 2} {
			want := AppendJSON(nil, []any{v}, indent)
			got := AppendJSON(nil, []any{&RawObject{Text: text}}, indent)
			if string(got) != string(want) {
				t.Fatalf("%q at indent %d:\ngot  %s\nwant %s", doc, indent, got, want)
			}
		}
		if got := AppendUnpackedJSON(nil, PackJSON([]byte(text))); string(got) != text {
			t.Fatalf("%q: text %q packs and unpacks to %q", doc, text, got)
		}
		if over := []byte(text); string(AppendPackedJSON(over[:0], over)) != PackJSON([]byte(text)) {
			t.Fatalf("%q: text %q packs over itself differently", doc, text)
		}
		back, err := ParseJSONText(text)
		if err != nil {
			t.Fatalf("%q: its text %q does not parse: %v", doc, text, err)
		}
		if again := string(MarshalJSON(back, 0)); again != text {
			t.Fatalf("%q: text %q parses to %q", doc, text, again)
		}
	})
}

// TestPackJSON: packed text unpacks to the text, and is shorter for a plain stub.
func TestPackJSON(t *testing.T) {
	docs := append([]string{
		`{"predicates":[{"equals":{"method":"GET","path":"/x","query":{"a":"b"}},"caseSensitive":true}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"a\":1}","_mode":"text"}}]}`,
		`{"s":"\u0001\u001f\"},\",\""}`,
	}, rawDocs...)
	for _, doc := range docs {
		v, err := ParseJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		text := MarshalJSON(v, 0)
		packed := PackJSON(text)
		if got := AppendUnpackedJSON(nil, packed); string(got) != string(text) {
			t.Errorf("%s packs to %q, which unpacks to %s", text, packed, got)
		}
		over := slices.Clone(text)
		if got := AppendPackedJSON(over[:0], over); string(got) != packed {
			t.Errorf("%s packs over itself to %q, want %q", text, got, packed)
		}
	}
	plain := `{"predicates":[{"equals":{"method":"GET","path":"/scale/12345"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"stub\":\"scale\",\"index\":12345}"}}]}`
	if n := len(PackJSON([]byte(plain))); n > 90 {
		t.Errorf("a plain stub's %d B of text pack to %d B", len(plain), n)
	}
}
