package config

import "testing"

// TestSameJSON checks that SameJSON tells apart every change AppendJSON shows (a kind, a
// number's bits, a key, the members' order, a length) and that a value is the same as its
// copy.
func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"responses":[{"is":{"statusCode":200,"body":"ok"}}]}`, `{"responses":[{"is":{"statusCode":200,"body":"ok"}}]}`, true},
		{`{"a":[1,true,null,"x",{}]}`, `{"a":[1,true,null,"x",{}]}`, true},
		{`{"a":200}`, `{"a":200.0}`, true}, // one number
		{`{"a":200}`, `{"a":201}`, false},
		{`{"a":"200"}`, `{"a":200}`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":[1]}`, `{"a":[1,1]}`, false},
		{`{"a":[]}`, `{"a":{}}`, false},
		{`{"a":null}`, `{"a":false}`, false},
		{`{"a":true}`, `{"a":false}`, false},
		{`{"a":"x"}`, `{"a":"y"}`, false},
		{`{"a":0}`, `{"a":-0}`, false}, // never wrong: other bits
	} {
		a, err := ParseJSON([]byte(tc.a))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseJSON([]byte(tc.b))
		if err != nil {
			t.Fatal(err)
		}
		if got := SameJSON(a, b); got != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := SameJSON(b, a); got != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
		if !SameJSON(a, Clone(a)) {
			t.Errorf("%s is not the same as its copy", tc.a)
		}
	}
	for _, v := range []Value{map[string]any{}, &RawObject{Text: "{}"}, (*Object)(nil)} {
		if SameJSON(v, v) {
			t.Errorf("SameJSON(%#v, itself): a kind ParseJSON does not make is never the same", v)
		}
	}
}

// FuzzSameJSON checks SameJSON against what it stands for: two parsed values it calls the same
// render alike, and a value is the same as its copy.
func FuzzSameJSON(f *testing.F) {
	for _, s := range [][2]string{{`{"a":1}`, `{"a":1}`}, {`{"a":[1,"x",null]}`, `{"a":[1,"x",false]}`}, {`1e400`, `1e401`}, {`"\u00e9"`, `"é"`}} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, err := ParseJSON(x)
		if err != nil {
			return
		}
		b, err := ParseJSON(y)
		if err != nil {
			return
		}
		ta, tb := string(AppendJSON(nil, a, 0)), string(AppendJSON(nil, b, 0))
		if SameJSON(a, b) && ta != tb {
			t.Fatalf("the same values render %s and %s", ta, tb)
		}
		if ta == string(AppendJSON(nil, Clone(a), 0)) && !SameJSON(a, Clone(a)) {
			t.Fatalf("%s is not the same as its copy", ta)
		}
	})
}

// TestStubPath checks the paths of a document's stubs, those made once and those made when
// asked.
func TestStubPath(t *testing.T) {
	for i, want := range map[int]string{0: "stubs[0]", 9: "stubs[9]", 15: "stubs[15]", 16: "stubs[16]", 1234: "stubs[1234]"} {
		if got := stubPath(i); got != want {
			t.Errorf("stubPath(%d) = %q, want %q", i, got, want)
		}
	}
}
