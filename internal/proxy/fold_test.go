package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// TestForwardHeaderNamesFolded: the client's Host, Content-Length and Transfer-Encoding are
// known in any case, an 's' written as U+017F (which strings.EqualFold folds to 's') included,
// and names near them (one letter more or less) go out as they are.
func TestForwardHeaderNamesFolded(t *testing.T) {
	addr, requests, _ := recordingOrigin(t, 0)
	p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	for _, tc := range []struct {
		headers []request.KV
		want    string
	}{
		{[]request.KV{{Name: "HOST", Value: "a"}, {Name: "Ho\u017ft", Value: "b"}, {Name: "hosts", Value: "c"}, {Name: "hos", Value: "d"}},
			"POST /f HTTP/1.1\r\nhost: " + addr + "\r\nhosts: c\r\nhos: d\r\nContent-Length: 2\r\n\r\nhi"},
		{[]request.KV{{Name: "Tran\u017ffer-Encoding", Value: "chunked"}, {Name: "TRANSFER-ENCODING", Value: "chunked"}, {Name: "Transfer-Encodings", Value: "x"}, {Name: "Content-LENGTH", Value: "9"}},
			"POST /f HTTP/1.1\r\nTransfer-Encodings: x\r\nhost: " + addr + "\r\nContent-LENGTH: 2\r\n\r\nhi"},
		{[]request.KV{{Name: "Content-Lengths", Value: "1"}, {Name: "Content-Lengt", Value: "2"}},
			"POST /f HTTP/1.1\r\nContent-Lengths: 1\r\nContent-Lengt: 2\r\nhost: " + addr + "\r\nContent-Length: 2\r\n\r\nhi"},
	} {
		before := len(requests())
		if _, err := p.Forward(context.Background(), &Request{Method: "POST", URI: []byte("/f"), Headers: tc.headers, Body: []byte("hi")}); err != nil {
			t.Fatal(err)
		}
		if got := requests(); len(got) != before+1 || got[before] != tc.want {
			t.Errorf("%v: the origin got %q, want %q", tc.headers, got[before:], tc.want)
		}
	}
}

// TestTokenFoldByWords: tokenFold, eight bytes at a time, says what the byte-by-byte fold says, for
// every name it is given, in upper, lower and mixed case, with any one byte changed to any
// value, and for names shorter and longer than a word.
func TestTokenFoldByWords(t *testing.T) {
	byByte := func(name []byte, lower string) bool {
		for i := range len(lower) {
			if name[i]|0x20 != lower[i] {
				return false
			}
		}
		return true
	}
	lowers := []string{"content-type", "content-encoding", "connection", "content-length", "transfer-encoding", "trailer",
		"a", "ab-cdefg", "ab-cdefgh", "abcdefghabcdefgh", "abcdefghabcdefghi"}
	for _, lower := range lowers {
		cases := [][]byte{[]byte(lower), []byte(strings.ToUpper(lower)), []byte(strings.ToUpper(lower[:len(lower)/2]) + lower[len(lower)/2:])}
		for i := range len(lower) {
			for c := range 256 {
				b := []byte(lower)
				b[i] = byte(c)
				cases = append(cases, b)
			}
		}
		for _, name := range cases {
			if got, want := tokenFold(name, lower), byByte(name, lower); got != want {
				t.Fatalf("tokenFold(%q, %q) = %v, want %v", name, lower, got, want)
			}
		}
		if !tokenFold([]byte(strings.ToUpper(lower)), lower) || !tokenFold([]byte(lower+"x"), lower) {
			t.Errorf("%q: not folded", lower)
		}
	}
}
