package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// listHead is the head forward writes for a direct request of method, target, body length and
// header block raw by way of the parsed list (setHeader), and what rawHead writes: ok false
// when rawHead leaves it to the list.
func listHead(t testing.TB, p *Proxy, method, target string, raw []byte, bodyLen int) (list, fromRaw string, ok bool) {
	t.Helper()
	var view request.Request
	view.SetRawHeaders(raw)
	got, ok := p.rawHead(nil, method, []byte(target), view.RawHeaderBlock(), bodyLen)
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	req.Header.DisableSpecialHeader()
	body := make([]byte, bodyLen)
	p.setHeader(&req, &Request{Method: method, URI: []byte(target), From: &view, Body: body}, []byte(target), true)
	return string(req.Header.Header()), string(got), ok
}

// rawHeadSeeds are header blocks as clients send them and as they should not: folded lines,
// white space around names and values, empty values, __proto__, Host, Content-Length and
// Transfer-Encoding in other cases and repeated, a '\r' inside a line, a line ending in '\n'
// alone, a last line without its end, lines without ':', bytes past ASCII.
var rawHeadSeeds = []string{
	"Host: 127.0.0.1:4545\r\n\r\n",
	"Host: 127.0.0.1:4545\r\nUser-Agent: bench\r\n\r\n",
	"Host: localhost:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
	"host: a\r\nHOST: b\r\nhosts: c\r\nhos: d\r\nContent-LENGTH: 9\r\ncontent-length: 3\r\nTRANSFER-encoding: chunked\r\n\r\n",
	"X-A:b\r\nX-B:  c  \r\n X-C : d\r\nX-D:\r\nX-E: \r\nX-F:\t\r\nX-G: \tg\r\n\r\n",
	"__proto__: x\r\n__Proto__: y\r\n __proto__ : z\r\n\r\n",
	"X-A: b\rc\r\nX-B: d\r\n\r\n",
	"X-A: b\nX-B: c\r\n\nno colon\r\n:empty name\r\nX-C: e",
	"X-A: b\r\nX-B: c\r",
	"X-Latin: caf\xe9\r\nN\xe4me: v\r\n\r\n",
	"X-Fold: a\r\n  folded: b\r\n\tmore\r\n\r\n",
	"",
	"\r\n",
}

// TestRawHeadAsTheList: for every seed, rawHead writes what the list's way writes (or leaves it
// to it), and writes the lines of common clients' requests itself.
func TestRawHeadAsTheList(t *testing.T) {
	p, cerr := Compile(config.NewObject("to", "http://127.0.0.1:9"), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	for _, raw := range rawHeadSeeds {
		for _, bodyLen := range []int{0, 5} {
			list, got, ok := listHead(t, p, "GET", "/orders/7?x=1", []byte(raw), bodyLen)
			if ok && got != list {
				t.Errorf("%q: rawHead wrote\n%q\nthe list\n%q", raw, got, list)
			}
			if !ok && !strings.Contains(raw, "b\rc") {
				t.Errorf("%q: rawHead left it to the list", raw)
			}
		}
	}
	// Injected headers are written by the list.
	pi, cerr := Compile(config.NewObject("to", "http://127.0.0.1:9", "injectHeaders", config.NewObject("X-A", "b")), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	if _, _, ok := listHead(t, pi, "GET", "/", []byte(rawHeadSeeds[0]), 0); ok {
		t.Error("rawHead wrote a request with injected headers")
	}
}

// FuzzRawHead: rawHead writes what the list's way writes, whatever the block, method and body.
func FuzzRawHead(f *testing.F) {
	for _, raw := range rawHeadSeeds {
		f.Add("GET", []byte(raw), 0)
	}
	f.Add("POST", []byte("Content-Length: 2\r\n\r\n"), 2)
	f.Add("", []byte("Host: a\r\n\r\n"), 0)
	f.Add("GE\rT", []byte("Host: a\r\n\r\n"), 0)
	p, cerr := Compile(config.NewObject("to", "http://[::1]:8080"), 0)
	if cerr != nil {
		f.Fatal(cerr)
	}
	f.Fuzz(func(t *testing.T, method string, raw []byte, bodyLen int) {
		if bodyLen < 0 || bodyLen > 1<<10 {
			return
		}
		list, got, ok := listHead(t, p, method, "/f", raw, bodyLen)
		if ok && got != list {
			t.Errorf("%q %q: rawHead wrote\n%q\nthe list\n%q", method, raw, got, list)
		}
	})
}

// TestForwardLeavesHeadersUnparsed: a request forwarded from its header block is sent as the
// list would send it, and its headers are not parsed for it (the view still has its block).
func TestForwardLeavesHeadersUnparsed(t *testing.T) {
	addr, requests, _ := recordingOrigin(t, 0)
	p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	var view request.Request
	raw := "Host: 127.0.0.1:4545\r\nUser-Agent: bench\r\nContent-Length: 2\r\nX-A:  b \r\n\r\n"
	view.SetRawHeaders([]byte(raw))
	if _, err := p.Forward(context.Background(), &Request{Method: "POST", URI: []byte("/f?q"), From: &view, Body: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	want := "POST /f?q HTTP/1.1\r\nhost: " + addr + "\r\nUser-Agent: bench\r\nX-A: b\r\nContent-Length: 2\r\n\r\nhi"
	if got := requests(); len(got) != 1 || got[0] != want {
		t.Errorf("the origin got %q, want %q", got, want)
	}
	if string(view.RawHeaderBlock()) != raw {
		t.Errorf("the request's headers were parsed to be forwarded: block %q", view.RawHeaderBlock())
	}
}

// TestForwardHeadAgain: a head written for a request is written again only for a request that
// would have the same (see exchange.sameHead): requests differing in their header block, method,
// target or body length, one after the other, and the same one again, each reach the origin as
// its own; so do requests through another proxy (another origin, another Host line).
func TestForwardHeadAgain(t *testing.T) {
	addr, requests, _ := recordingOrigin(t, 0)
	addr2, requests2, _ := recordingOrigin(t, 0)
	p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	p2, cerr := Compile(config.NewObject("to", "http://"+addr2), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	type sent struct {
		p                     *Proxy
		method, target, block string
		body                  string
	}
	a := sent{p, "GET", "/a", "Host: x\r\nX-A: 1\r\n\r\n", ""}
	for i, s := range []sent{
		a, a,
		{p, "GET", "/a", "Host: x\r\nX-A: 2\r\n\r\n", ""},
		a,
		{p, "GET", "/a", "Host: x\r\nX-A: 1\r\n\r\n", "body"},
		{p, "GET", "/a", "Host: x\r\nX-A: 1\r\n\r\n", "ydob"},
		a,
		{p, "PUT", "/a", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		a,
		{p, "GE", "T/a", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		a,
		{p, "GET", "/b", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		a,
		{p, "GET", "/ab", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		{p, "GET", "/a?", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		{p, "GET", "/a?", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		a,
		{p2, "GET", "/a", "Host: x\r\nX-A: 1\r\n\r\n", ""},
		a,
		{p, "GET", "/a", "Host: x\r\nX-A: 1\rb\r\n\r\n", ""},
		a,
	} {
		var view request.Request
		view.SetRawHeaders([]byte(s.block))
		target := []byte(s.target)
		if s.target == "T/a" {
			target = []byte("/T/a") // direct targets begin with '/'
		}
		before, before2 := len(requests()), len(requests2())
		// (A head written for another request may leave the origin waiting for a body: the
		// context ends the exchange then.)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.p.Forward(ctx, &Request{Method: s.method, URI: target, From: &view, Body: []byte(s.body)})
		cancel()
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		direct, _ := requestTarget(target) // "/a?" goes out as "/a"
		list, _, _ := listHead(t, s.p, s.method, string(direct), []byte(s.block), len(s.body))
		got, want := requests(), list+s.body
		if s.p == p2 {
			got, before = requests2(), before2
		}
		if len(got) != before+1 || got[before] != want {
			t.Errorf("request %d: the origin got %q, want %q", i, got[before:], want)
		}
	}
}
