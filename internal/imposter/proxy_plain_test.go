package imposter

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
)

// switchingOrigin answers every request on a loopback port (one answer a request, on kept-alive
// connections) with the answer set last; it returns its address and the setter.
func switchingOrigin(tb testing.TB) (string, func(answer string)) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	var current atomic.Pointer[string]
	empty := ""
	current.Store(&empty)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					// The proxy sends GETs without a body: a request ends at its blank line.
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if line == "\r\n" {
							break
						}
					}
					if _, err := c.Write([]byte(*current.Load())); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func(a string) { current.Store(&a) }
}

// originAnswer is an HTTP/1.1 answer of status, the header lines of head (lines split at
// '\n'; a line with a CR, or naming the framing headers, is left out: the origin's answers must
// stay in step with the requests) with one Content-Length line (its name spelled as lengthName)
// and body. A 204 or 304 has no body.
func originAnswer(status int, head, lengthName string, body []byte) string {
	if status == 204 || status == 304 {
		body = nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d X\r\n", status)
	for _, l := range strings.Split(head, "\n") {
		name, _, _ := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if l == "" || strings.ContainsAny(l, "\r") || strings.EqualFold(name, "content-length") ||
			strings.EqualFold(name, "transfer-encoding") || strings.EqualFold(name, "connection") {
			continue
		}
		b.WriteString(l + "\r\n")
	}
	b.WriteString(lengthName + ": " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	return b.String()
}

// sameWire reports how got, an answer served, differs from want in what goes on the wire
// ("" for not at all): the `is` it was compiled from is not compared.
func sameWire(got, want *wire) string {
	switch {
	case got == nil || want == nil:
		if got != want {
			return fmt.Sprintf("answer %v, want %v", got, want)
		}
		return ""
	case got.status != want.status || (got.fail == nil) != (want.fail == nil) ||
		got.fail != nil && *got.fail != *want.fail:
		return fmt.Sprintf("status %d, want %d", got.status, want.status)
	case len(got.headers) != len(want.headers):
		return fmt.Sprintf("headers %+v, want %+v", got.headers, want.headers)
	case string(got.body) != string(want.body):
		return fmt.Sprintf("body %q, want %q", got.body, want.body)
	case got.hasConnection != want.hasConnection || got.hasContentLength != want.hasContentLength ||
		got.compiled != want.compiled || got.binaryNotText != want.binaryNotText:
		return fmt.Sprintf("flags %+v, want %+v", *got, *want)
	}
	for i := range got.headers {
		if got.headers[i] != want.headers[i] {
			return fmt.Sprintf("header %d %+v, want %+v", i, got.headers[i], want.headers[i])
		}
	}
	return ""
}

// proxyAlwaysPair is two imposters proxying to one origin in proxyAlways mode, asked alike:
// one serves plain answers from their bytes, the other (treesOnly) from their trees, as before
// plainWire.
type proxyAlwaysPair struct {
	plain, trees *Imposter
}

func newProxyAlwaysPair(tb testing.TB, addr, defaultResponse string) proxyAlwaysPair {
	tb.Helper()
	imp := `{"protocol":"http","port":4545,` + defaultResponse + `"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	var p proxyAlwaysPair
	for _, im := range []**Imposter{&p.plain, &p.trees} {
		h, _ := newBenchHandler(tb, imp, impostertest.RawRequest("GET", "/", "", ""), false)
		*im = h.im
	}
	return p
}

// ask sends a GET of path through both and reports how their answers differ ("" for not at
// all). Both answers, and the errors, are compared as they go on the wire.
func (p proxyAlwaysPair) ask(tb testing.TB, path string) string {
	tb.Helper()
	serve := func(im *Imposter, plain bool) (*wire, string) {
		defer treesOnly.Store(treesOnly.Swap(!plain))
		ctx := impostertest.RequestCtx(tb, impostertest.RawRequest("GET", path, "", ""))
		req := request.Acquire()
		defer request.Release(req)
		request.FromHTTPLimit(ctx, req, im.PlainIPv4(), im.MaxBody())
		a := im.Resolve(req)
		if a.Err != nil {
			tb.Fatal(a.Err)
		}
		if err := im.Build(context.Background(), req, ctx.Request.Header.RequestURI(), ctx.Request.Body(), &a); err != nil {
			return nil, err.Error()
		}
		_, err := a.Status()
		return a.out, fmt.Sprint(err)
	}
	got, gotErr := serve(p.plain, true)
	want, wantErr := serve(p.trees, false)
	if gotErr != wantErr {
		return fmt.Sprintf("error %q, want %q", gotErr, wantErr)
	}
	return sameWire(got, want)
}

// recorded reports how the stubs the two recorded differ, as the API shows them and as
// `replayable` does ("" for not at all); _proxyResponseTime (the milliseconds each took) is
// left out.
func (p proxyAlwaysPair) recorded() string {
	show := func(im *Imposter) (defs, replayable string) {
		s := im.Stubs(false)
		for i := range s.Len() {
			d := s.Def(i)
			list, _ := get(d, "responses").([]any)
			for _, r := range list {
				if is := config.AsObject(get(config.AsObject(r), "is")); is != nil {
					is.Delete("_proxyResponseTime")
				}
			}
			defs += string(config.MarshalJSON(d, 0)) + "\n"
			out, _, _ := s.AppendReplayableJSON(nil, i, false)
			replayable += string(out) + "\n"
		}
		return defs, replayable
	}
	gotDefs, gotReplay := show(p.plain)
	wantDefs, wantReplay := show(p.trees)
	switch {
	case gotDefs != wantDefs:
		return fmt.Sprintf("recorded\n%s\nwant\n%s", gotDefs, wantDefs)
	case gotReplay != wantReplay:
		return fmt.Sprintf("replayable\n%s\nwant\n%s", gotReplay, wantReplay)
	}
	return ""
}

// forget deletes the stubs the two recorded, keeping their proxies (and what those keep of the
// answers before).
func (p proxyAlwaysPair) forget(tb testing.TB) {
	for _, im := range []*Imposter{p.plain, p.trees} {
		for im.Stubs(false).Len() > 1 {
			if err := im.DeleteStub(1); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// plainCases are answers plainWire serves from their bytes, and answers it leaves to their
// trees (JSON, empty, repeated names, invalid UTF-8, not plain).
var plainCases = []struct {
	name, answer string
}{
	{"bench's", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\norder 7, from the origin"},
	{"fasthttp's", "HTTP/1.1 200 OK\r\nServer: fasthttp\r\nDate: Sat, 28 Nov 2026 12:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi"},
	{"binary", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nX-L: caf\xe9\r\nContent-Length: 4\r\n\r\n\x89PN\x00"},
	{"gzip", "HTTP/1.1 201 Created\r\nContent-Encoding: gzip\r\ncontent-length: 2\r\n\r\n\x1f\x8b"},
	{"Latin-1 value and UTF-8 body", "HTTP/1.1 200 OK\r\nX-Latin: caf\xe9\r\nCONTENT-LENGTH: 6\r\n\r\n\xc3\xa9t\xc3\xa9!"},
	{"connection close", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy"},
	{"keep-alive", "HTTP/1.1 200 OK\r\nconnection: keep-alive\r\nContent-Length: 4\r\n\r\nbusy"},
	{"names folding alike", "HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 1\r\n\r\nz"},
	{"bad value for node's writeHead", "HTTP/1.1 200 OK\r\nX-A: \x7f\r\nContent-Length: 1\r\n\r\nz"},
	{"status 999", "HTTP/1.1 999 X\r\nContent-Length: 1\r\n\r\nz"},
	{"many lines", "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\nI: 9\r\nJ: 10\r\nK: 11\r\nL: 12\r\nM: 13\r\nContent-Length: 1\r\n\r\nz"},
	{"long body", "HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n" + strings.Repeat("a", 300)},
	{"JSON", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"a\":[1,2.0]}"},
	{"not JSON after all", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnope"},
	{"empty body", "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 0\r\n\r\n"},
	// The Latin-1 line of an empty body goes out as Latin-1; the one before a body, as UTF-8.
	{"Latin-1 value and an empty body", "HTTP/1.1 200 OK\r\nX-Latin: caf\xe9\r\nContent-Length: 0\r\n\r\n"},
	{"repeated name", "HTTP/1.1 200 OK\r\nSet-Cookie: a\r\nX:\r\nSet-Cookie: b\r\nX: 1\r\nContent-Length: 1\r\n\r\nz"},
	{"invalid UTF-8", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\xffb"},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
	{"refused by node", "HTTP/1.1 200 OK\r\nX A: 1\r\nContent-Length: 2\r\n\r\nhi"},
}

// TestPlainAnswersAsTrees: proxyAlways serves and records every answer as it did when it made
// each answer's tree and compiled it (treesOnly): the answers served are the same on the
// wire, one after another (each answer's lines are checked against the one before's), and the
// recorded stubs are the same, with and without a defaultResponse.
func TestPlainAnswersAsTrees(t *testing.T) {
	for _, dr := range []string{"", `"defaultResponse":{"statusCode":202,"headers":{"X-D":"d"},"body":"default"},`} {
		addr, answer := switchingOrigin(t)
		p := newProxyAlwaysPair(t, addr, dr)
		for _, tc := range plainCases {
			answer(tc.answer)
			for i, path := range []string{"/a", "/a", "/b", "/a"} {
				if diff := p.ask(t, path); diff != "" {
					t.Errorf("%s, request %d (%s): %s", tc.name, i+1, dr, diff)
				}
			}
		}
		// Each answer after another: the lines of one are compared with the one's before.
		for _, tc := range plainCases {
			for _, next := range plainCases {
				answer(tc.answer)
				p.ask(t, "/c")
				answer(next.answer)
				if diff := p.ask(t, "/c"); diff != "" {
					t.Errorf("%s after %s (%s): %s", next.name, tc.name, dr, diff)
				}
			}
		}
		if diff := p.recorded(); diff != "" {
			t.Errorf("(%s) %s", dr, diff)
		}
	}
}

// TestPlainAnswerShared: a plain answer equal to the one before (an origin that repeats
// itself) is the one before, not compiled again; one whose lines are the one before's shares
// them.
func TestPlainAnswerShared(t *testing.T) {
	addr, answer := switchingOrigin(t)
	p := newProxyAlwaysPair(t, addr, "")
	answer(plainCases[1].answer)
	ask := func() *wire {
		ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", "/a", "", ""))
		req := request.Acquire()
		defer request.Release(req)
		request.FromHTTPLimit(ctx, req, p.plain.PlainIPv4(), p.plain.MaxBody())
		a := p.plain.Resolve(req)
		if err := p.plain.Build(context.Background(), req, ctx.Request.Header.RequestURI(), nil, &a); err != nil {
			t.Fatal(err)
		}
		return a.out
	}
	first, second := ask(), ask()
	if first != second {
		t.Errorf("the same answer twice was compiled twice")
	}
	answer(strings.Replace(plainCases[1].answer, "hi", "ho", 1))
	third := ask()
	if third == second || len(third.headers) == 0 || &third.headers[0] != &second.headers[0] {
		t.Errorf("an answer of the same lines and another body: %p, lines %p, want a new answer sharing %p", third, third.headers, second.headers)
	}
}

// FuzzPlainAnswersAsTrees is TestPlainAnswersAsTrees for any answer: a status, header lines and
// a body, served twice, then with other lines, then again.
func FuzzPlainAnswersAsTrees(f *testing.F) {
	f.Add(uint16(200), "Content-Type: text/plain", "Content-Type: text/plain\nDate: x", "Content-Length", []byte("order 7, from the origin"))
	f.Add(uint16(201), "X-L: caf\xe9\nContent-Type: image/gif", "x-l: caf\xe9", "content-length", []byte("\x00\xff"))
	f.Add(uint16(500), "Set-Cookie: a\nSet-Cookie: b", "X:\nX: 1", "CONTENT-LENGTH", []byte(`{"a":1}`))
	f.Add(uint16(799), "X-A: \x01", "Content-Encoding: br", "Content-Length", []byte("\xc3\xa9"))
	addr, answer := switchingOrigin(f)
	p := newProxyAlwaysPair(f, addr, "")
	f.Fuzz(func(t *testing.T, status uint16, head, head2, lengthName string, body []byte) {
		if !strings.EqualFold(lengthName, "content-length") {
			lengthName = "Content-Length"
		}
		code := 200 + int(status)%800
		a, b := originAnswer(code, head, lengthName, body), originAnswer(code, head2, lengthName, body)
		for i, next := range []string{a, a, b, a} {
			answer(next)
			if diff := p.ask(t, "/f"); diff != "" {
				t.Fatalf("request %d of %q then %q: %s", i+1, a, b, diff)
			}
		}
		if diff := p.recorded(); diff != "" {
			t.Fatal(diff)
		}
		p.forget(t)
	})
}
