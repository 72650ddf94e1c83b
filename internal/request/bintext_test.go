package request

import (
	"testing"

	"github.com/mockd/mockd/internal/jsvalue"
)

// TestBinaryText: a binary tcp request's payload as the text a predicate compares is what
// decoding Data's base64 would give (node's Buffer toString), lowercased as JavaScript does.
func TestBinaryText(t *testing.T) {
	for _, tc := range []struct {
		payload, text, lower string
	}{
		{"\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bGET user 42", "\x00\x00\x00\x0bget user 42"},
		{"hello", "hello", "hello"},
		{"ÜBER straße", "ÜBER straße", "über straße"},
		{"İ", "İ", "i̇"},
		{"\xffAB", "\ufffdAB", "\ufffdab"},
		{"ab\xc3", "ab\ufffd", "ab\ufffd"},
	} {
		r := Acquire()
		r.SetData([]byte(tc.payload), true)
		for _, lower := range []bool{false, true, false, true} { // the second time from the memo
			got, ok := r.BinaryText(lower)
			want := tc.text
			if lower {
				want = tc.lower
			}
			if !ok || got != want {
				t.Errorf("%q lower %v: got %q, %v; want %q", tc.payload, lower, got, ok, want)
			}
		}
		Release(r)
	}
	for _, r := range []*Request{new(Request).SetDataText("aGVsbG8="), func() *Request { r := Acquire(); r.SetData([]byte("x"), false); return r }(), func() *Request { r := Acquire(); r.SetData(nil, true); return r }()} {
		if s, ok := r.BinaryText(true); ok {
			t.Errorf("a request SetData did not make from a binary payload has a binary text: %q", s)
		}
	}
}

// FuzzBinaryText: BinaryText agrees with decoding the payload and lowercasing it, and the
// payload's arena copy is independent of the caller's buffer.
func FuzzBinaryText(f *testing.F) {
	for _, s := range []string{"GET user 42", "ÜBER", "\xff\xfe", "İstanbul", "", "ABC\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		want := jsvalue.DecodeUTF8(b)
		r := Acquire()
		defer Release(r)
		r.SetData(b, true)
		for i := range b {
			b[i] ^= 0xff // the caller reuses its buffer
		}
		if got, ok := r.BinaryText(false); !ok || got != want {
			t.Fatalf("text %q, want %q", got, want)
		}
		if got, _ := r.BinaryText(true); got != jsvalue.ToLower(want) {
			t.Fatalf("lowered %q, want %q", got, jsvalue.ToLower(want))
		}
		if got, _ := r.BinaryText(false); got != want {
			t.Fatalf("text after lowering %q, want %q", got, want)
		}
	})
}
