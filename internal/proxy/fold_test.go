package proxy

import (
	"context"
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
