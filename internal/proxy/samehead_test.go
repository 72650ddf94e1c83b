package proxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// sameHeadAnswers are answers an origin sends one after the other on a kept-alive connection,
// each head like the one before it or not: the same bytes (the head taken for the one before),
// the same head with another body, a Date changed, a header added, another type (binary), a
// head that only begins as the one before did and is refused, one node skips empty lines before,
// chunked and HTTP/1.0 answers (not plain), a HEAD's answer, and one that closes the connection.
var sameHeadAnswers = func() []string {
	a := "HTTP/1.1 200 OK\r\nServer: o\r\nDate: Sat, 28 Nov 2026 16:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"
	b := strings.Replace(a, "16:00:00", "16:00:01", 1)
	return []string{
		a + "hello", a + "hello", a + "world", a + "hello",
		b + "hello", b + "hello",
		strings.Replace(b, "text/plain", "image/png", 1) + "\x89PNG\x00",
		b + "hello",
		strings.Replace(b, "Content-Length", "X-A: 1\r\nContent-Length", 1) + "hello",
		b + "hello",
		strings.Replace(b, "Content-Length: 5", "Content-Length: 4", 1) + "hell",
		b + "hello",
		"\r\n" + b + "hello",
		b + "hello",
		strings.Replace(b, "Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n", 1) + "5\r\nhello\r\n0\r\n\r\n",
		b + "hello",
		strings.Replace(b, "HTTP/1.1", "HTTP/1.0", 1) + "hello",
		b + "hello",
		strings.Replace(b, "Content-Length", "Connection: close\r\nContent-Length", 1) + "hello",
		b + "hello",
		strings.Replace(b, "\r\n\r\n", "\r\n\n", 1) + "hello", // refused: LF without CR
		b + "hello",
		b + "hello",
	}
}()

// TestForwardSameHeadAgain: what Forward makes of answers whose head may be the one before
// (see exchange.last), or whose bytes may be the plain answer's before (see Proxy.plain), is
// what it makes of each answer read whole (noRepeats): the answer,
// the bytes kept, the plain answer served, or the error, for every answer of sameHeadAnswers,
// GET and HEAD, one after the other on kept-alive connections.
func TestForwardSameHeadAgain(t *testing.T) {
	run := func(every bool) []string {
		noRepeats.Store(every)
		defer noRepeats.Store(false)
		var n atomic.Int64
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		serveRaw(t, ln, func(net.Conn) string { return sameHeadAnswers[(n.Add(1)-1)%int64(len(sameHeadAnswers))] })
		p, cerr := Compile(config.NewObject("to", "http://"+ln.Addr().String()), 0)
		if cerr != nil {
			t.Fatal(cerr)
		}
		var out []string
		for i := range 2 * len(sameHeadAnswers) {
			method := "GET"
			if i >= len(sameHeadAnswers) && i%3 == 0 {
				method = "HEAD"
			}
			var k Kept
			var pl Plain
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a head misread waits for its body
			answer, err := p.Forward(ctx, &Request{Method: method, URI: []byte("/x"), Keep: &k, Plain: &pl})
			cancel()
			s := fmt.Sprintf("%s %q: err %v kept %q/%d", method, sameHeadAnswers[i%len(sameHeadAnswers)], err, k.text, k.head)
			if answer != nil {
				s += " answer " + string(config.MarshalJSON(answer, 0))
			} else if err == nil {
				s += fmt.Sprintf(" plain %d %q %v %q", pl.Status, pl.Headers, pl.Binary, pl.Body)
			}
			out = append(out, s)
		}
		return out
	}
	want := run(true)
	got := run(false)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d:\n%s\nread whole:\n%s", i+1, got[i], want[i])
		}
	}
}

// FuzzPeekHeaderSame: peekHeader given the head block read before (last: a final answer's,
// which checkHeadLines read whole) finds what it finds without it: the same block, skip,
// lines and error, whatever arrives after that head.
func FuzzPeekHeaderSame(f *testing.F) {
	a := "HTTP/1.1 200 OK\r\nDate: Sat, 28 Nov 2026 16:00:00 GMT\r\nContent-Length: 5\r\n\r\n"
	f.Add([]byte(a), []byte(a+"hello"))
	f.Add([]byte(a), []byte(strings.Replace(a, "16:00:00", "16:00:01", 1)+"hello"))
	f.Add([]byte(a), []byte(a[:len(a)-2]+"\n"))
	f.Add([]byte(a), []byte("\r\n"+a))
	f.Add([]byte(a), []byte(a[:20]))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"))
	f.Fuzz(func(t *testing.T, prev, b []byte) {
		start, end, lastLines, perr := checkHeadLines(prev, nil)
		if perr != nil || end == 0 || start != 0 || strings.HasPrefix(string(prev), "HTTP/1.1 1") || strings.HasPrefix(string(prev), "HTTP/1.0 1") {
			return // not a final answer's head block from its first byte
		}
		last := prev[:end]
		read := func(last []byte) string {
			br := bufio.NewReaderSize(strings.NewReader(string(b)), 4096)
			block, skip, lines, same, err := peekHeader(br, nil, last)
			if same {
				lines = lastLines
			}
			return fmt.Sprintf("%q %d %v %v", block, skip, lines, err)
		}
		if got, want := read(last), read(nil); got != want {
			t.Errorf("after %q, %q:\n%s\nwant\n%s", last, b, got, want)
		}
	})
}
