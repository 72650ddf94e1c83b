package request

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/jsvalue"
)

type nodeCases struct {
	URLs    [][3]*string         `json:"urls"`
	Queries [][2]json.RawMessage `json:"queries"`
	UTF8    [][2]json.RawMessage `json:"utf8"`
}

func loadNodeCases(t *testing.T) nodeCases {
	t.Helper()
	b, err := os.ReadFile("testdata/node_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var nc nodeCases
	if err := json.Unmarshal(b, &nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestNodeURL compares nodeURL with node's new URL(target, base).
func TestNodeURL(t *testing.T) {
	for _, c := range loadNodeCases(t).URLs {
		target := *c[0]
		if c[1] == nil {
			continue // node throws; mb answers 500
		}
		for _, own := range []bool{false, true} {
			path, search := nodeURL([]byte(target), own)
			if path != *c[1] {
				t.Errorf("nodeURL(%q, %v) path = %q, want %q", target, own, path, *c[1])
			}
			if search != *c[2] {
				t.Errorf("nodeURL(%q, %v) search = %q, want %q", target, own, search, *c[2])
			}
		}
	}
}

// jsObject groups pairs as querystring.parse does and renders them as node's
// JSON.stringify would (keys in first-seen order).
func jsObject(kvs []KV) string {
	var order []string
	vals := map[string][]string{}
	for _, kv := range kvs {
		if _, ok := vals[kv.Name]; !ok {
			order = append(order, kv.Name)
		}
		vals[kv.Name] = append(vals[kv.Name], kv.Value)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		var vb []byte
		if len(vals[k]) == 1 {
			vb, _ = json.Marshal(vals[k][0])
		} else {
			vb, _ = json.Marshal(vals[k])
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}

func TestParseQueryNode(t *testing.T) {
	for _, c := range loadNodeCases(t).Queries {
		var in string
		if err := json.Unmarshal(c[0], &in); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, c[1]); err != nil {
			t.Fatal(err)
		}
		got := jsObject(ParseQuery(nil, in))
		// encoding/json escapes <, >, & and U+FFFD the same way on both sides
		var norm any
		_ = json.Unmarshal(want.Bytes(), &norm)
		if got != want.String() {
			var g any
			_ = json.Unmarshal([]byte(got), &g)
			if !reflect.DeepEqual(g, norm) || !sameKeyOrder(got, want.String()) {
				t.Errorf("ParseQuery(%q) = %s, want %s", in, got, want.String())
			}
		}
	}
}

func sameKeyOrder(a, b string) bool {
	da, db := json.NewDecoder(strings.NewReader(a)), json.NewDecoder(strings.NewReader(b))
	for {
		ta, ea := da.Token()
		tb, eb := db.Token()
		if ea != nil || eb != nil {
			return ea != nil && eb != nil
		}
		if !reflect.DeepEqual(ta, tb) {
			return false
		}
	}
}

func TestParseQueryMaxKeys(t *testing.T) {
	var parts []string
	parts = append(parts, "", "", "")
	for i := 0; i < 1005; i++ {
		parts = append(parts, fmt.Sprintf("k%d=v", i))
	}
	got := ParseQuery(nil, strings.Join(parts, "&"))
	if len(got) != 997 {
		t.Fatalf("ParseQuery kept %d pairs, want 997 (node counts the first 1000 pieces)", len(got))
	}
}

func TestDecodeUTF8Node(t *testing.T) {
	for _, c := range loadNodeCases(t).UTF8 {
		var in []int
		var want string
		_ = json.Unmarshal(c[0], &in)
		_ = json.Unmarshal(c[1], &want)
		b := make([]byte, len(in))
		for i, v := range in {
			b[i] = byte(v)
		}
		if got := jsvalue.DecodeUTF8(b); got != want {
			t.Errorf("jsvalue.DecodeUTF8(% x) = %q, want %q (node)", b, got, want)
		}
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want any
	}{
		{`{"a":1}`, true, map[string]any{"a": 1.0}},
		{` [1,"x",null,true] `, true, []any{1.0, "x", nil, true}},
		{`5`, true, 5.0},
		{`"s"`, true, "s"},
		{`null`, true, nil},
		{``, false, nil},
		{`abc`, false, nil},
		{`{"a":}`, false, nil},
		{`{"a":1,"a":2}`, true, map[string]any{"a": 2.0}},
		{`[1,]`, false, nil},
		{`{"a":1} x`, false, nil},
	}
	for _, tt := range tests {
		got, ok := ParseJSON(tt.in)
		if ok != tt.ok || (ok && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseJSON(%q) = %#v, %v; want %#v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMbHeader(t *testing.T) {
	h := []KV{{"x-e", ""}, {"X-E", "a"}, {"x-e", "z"}, {"A", "1"}, {"A", "2"}}
	if v, arr, ok := mbHeader(h, "X-e"); !ok || arr || v != "z" {
		t.Errorf("mbHeader x-e = %q %v %v, want z (first exact name x-e, '' replaced)", v, arr, ok)
	}
	if _, arr, ok := mbHeader(h, "a"); !ok || !arr {
		t.Errorf("mbHeader a: want array")
	}
	if _, _, ok := mbHeader(h, "b"); ok {
		t.Errorf("mbHeader b: want not found")
	}
}

func TestIsURLEncodedForm(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/x-www-form-urlencoded":                 true,
		" application/x-www-form-urlencoded ; charset=utf8": true,
		"Application/x-www-form-urlencoded":                 false,
		"application/json":                                  false,
		"":                                                  false,
	} {
		if got := IsURLEncodedForm(ct); got != want {
			t.Errorf("IsURLEncodedForm(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestResetAndPool(t *testing.T) {
	r := Acquire()
	r.Method, r.Path = "GET", "/x"
	r.Query = append(r.Query, KV{"a", "b"})
	r.SetMemo(7, "v")
	r.Body = `{"a":1}`
	if _, ok := r.JSON(); !ok {
		t.Fatal("JSON() on JSON body: not ok")
	}
	Release(r)
	r = Acquire()
	defer Release(r)
	if r.Method != "" || len(r.Query) != 0 || r.jsonDone {
		t.Fatalf("Acquire after Release: not reset: %+v", r)
	}
	if _, ok := r.Memo(7); ok {
		t.Fatal("Memo survived Reset")
	}
}

// ctxFor parses raw as the server would and returns a request context holding it.
func ctxFor(t *testing.T, raw string) *fasthttp.RequestCtx {
	t.Helper()
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}, nil)
	return ctx
}

// TestArenaReuse checks that strings taken from a Released request keep their value after
// the pool hands its memory on, and that a Recycled request's memory serves the next one.
func TestArenaReuse(t *testing.T) {
	first := ctxFor(t, "POST /first?a=1 HTTP/1.1\r\nHost: one\r\nX-Latin: \xe9t\xe9\r\nContent-Length: 5\r\n\r\nhello")
	second := ctxFor(t, "PUT /2nd?b=22 HTTP/1.1\r\nHost: two\r\nX-Latin: zzzz\r\nContent-Length: 5\r\n\r\nWORLD")
	r := Acquire()
	FromHTTP(first, r)
	kept := []string{r.Method, r.Path, r.Query[0].Value, r.HeaderList()[0].Value, r.HeaderList()[1].Value, r.Body}
	want := []string{"POST", "/first", "1", "one", "été", "hello"}
	Release(r)
	for i := 0; i < 3; i++ {
		r = Acquire()
		FromHTTP(second, r)
		r.HeaderList() // parsed into the request's memory too
		Recycle(r)
	}
	if !reflect.DeepEqual(kept, want) {
		t.Fatalf("strings of a released request changed: %q, want %q", kept, want)
	}
	r = Acquire()
	defer Release(r)
	FromHTTP(first, r)
	got := []string{r.Method, r.Path, r.Query[0].Value, r.HeaderList()[0].Value, r.HeaderList()[1].Value, r.Body}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("request filled after Recycle: %q, want %q", got, want)
	}
}

// serve starts a fasthttp server like the imposter's (raw header names) and
// returns its address and a channel receiving each request as FromHTTP
// built it.
func serve(t *testing.T) (string, chan *Request) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *Request, 4)
	s := &fasthttp.Server{
		DisableHeaderNamesNormalizing: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			r := &Request{}
			FromHTTP(ctx, r)
			ch <- r
			ctx.SetBodyString("ok")
		},
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Shutdown() })
	return ln.Addr().String(), ch
}

func roundTrip(t *testing.T, addr, raw string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		t.Fatal(err)
	}
}

func TestFromHTTPLoopback(t *testing.T) {
	addr, ch := serve(t)
	body := "a=1&b=x+y&a=%C3%A9"
	roundTrip(t, addr, "POST /a/../Users%20x/?q=1&q=2&name=caf%C3%A9&flag HTTP/1.1\r\n"+
		"Host: example\r\n"+
		"x-f: 1\r\n"+
		"X-F: 2\r\n"+
		"User-Agent: test\r\n"+
		"x-f:  3 \r\n"+
		"X-Latin: \xc3\xa9\r\n"+
		"Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"+
		fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	r := <-ch
	if r.Method != "POST" || r.Path != "/Users%20x/" {
		t.Errorf("method, path = %q, %q; want POST, /Users%%20x/", r.Method, r.Path)
	}
	wantQ := []KV{{"q", "1"}, {"q", "2"}, {"name", "café"}, {"flag", ""}}
	if !reflect.DeepEqual(r.Query, wantQ) {
		t.Errorf("query = %v, want %v", r.Query, wantQ)
	}
	wantH := []KV{{"Host", "example"}, {"x-f", "1"}, {"X-F", "2"}, {"User-Agent", "test"}, {"x-f", "3"},
		{"X-Latin", "Ã©"}, {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
		{"Content-Length", fmt.Sprint(len(body))}}
	if !reflect.DeepEqual(r.Headers, wantH) {
		t.Errorf("headers = %q, want %q", r.Headers, wantH)
	}
	if r.Body != body || !r.HasForm {
		t.Errorf("body, hasForm = %q, %v", r.Body, r.HasForm)
	}
	wantF := []KV{{"a", "1"}, {"b", "x y"}, {"a", "é"}}
	if !reflect.DeepEqual(r.Form, wantF) {
		t.Errorf("form = %v, want %v", r.Form, wantF)
	}
	if !strings.HasPrefix(r.RequestFrom(), "::ffff:127.0.0.1:") || r.IP() != "::ffff:127.0.0.1" {
		t.Errorf("requestFrom, ip = %q, %q", r.RequestFrom(), r.IP())
	}
}

func TestFromHTTPEncodings(t *testing.T) {
	addr, ch := serve(t)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(`{"a":"b"}`))
	_ = w.Close()
	roundTrip(t, addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", gz.Len(), gz.String()))
	if r := <-ch; r.Body != `{"a":"b"}` || r.BodyMissing {
		t.Errorf("gzip body = %q (missing %v)", r.Body, r.BodyMissing)
	}
	roundTrip(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc")
	if r := <-ch; r.Body != "" || !r.BodyMissing {
		t.Errorf("bad gzip: body = %q, missing %v; want undefined body", r.Body, r.BodyMissing)
	}
	roundTrip(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: GZIP\r\nContent-Length: 3\r\n\r\nabc")
	if r := <-ch; r.Body != "abc" || r.BodyMissing {
		t.Errorf("GZIP (not exactly gzip) must be left alone: body = %q", r.Body)
	}
	roundTrip(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na\xffb")
	if r := <-ch; r.Body != "a\uFFFDb" {
		t.Errorf("invalid UTF-8 body = %q, want replacement character", r.Body)
	}
	roundTrip(t, addr, "GET /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n")
	if r := <-ch; r.HasForm {
		t.Errorf("empty body must not have a form")
	}
}

func TestNodeAddr(t *testing.T) {
	tests := []struct {
		addr     net.Addr
		plain    bool
		ip, from string
	}{
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, false, "::ffff:10.0.0.1", "::ffff:10.0.0.1:80"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, true, "10.0.0.1", "10.0.0.1:80"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 9}, false, "::1", "::1:9"},
	}
	for _, tt := range tests {
		ip, from := nodeAddr(tt.addr, tt.plain)
		if ip != tt.ip || from != tt.from {
			t.Errorf("nodeAddr(%v, %v) = %q, %q; want %q, %q", tt.addr, tt.plain, ip, from, tt.ip, tt.from)
		}
	}
}

// TestClientTextKeptByTheView checks the address text a request view keeps for its next
// requests (Reset keeps it): the same address gives the same text without formatting it again,
// and another address, or the same one with the other IPv4 form, gives its own.
func TestClientTextKeptByTheView(t *testing.T) {
	a := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}
	b := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 81} // another connection of the same host
	v6 := &net.TCPAddr{IP: net.ParseIP("::1"), Port: 9}
	r := Acquire()
	defer Release(r)
	for i, tc := range []struct {
		addr     net.Addr
		plain    bool
		ip, from string
	}{
		{a, false, "::ffff:10.0.0.1", "::ffff:10.0.0.1:80"},
		{a, false, "::ffff:10.0.0.1", "::ffff:10.0.0.1:80"},
		{a, true, "10.0.0.1", "10.0.0.1:80"},
		{b, true, "10.0.0.1", "10.0.0.1:81"},
		{a, true, "10.0.0.1", "10.0.0.1:80"},
		{v6, true, "::1", "::1:9"},
		{nil, false, "", ""},
		{v6, false, "::1", "::1:9"},
		{fakeAddr("pipe"), false, "pipe", "pipe"},
		{v6, false, "::1", "::1:9"},
	} {
		r.Reset()
		r.addr, r.plainIPv4 = tc.addr, tc.plain
		if r.RequestFrom() != tc.from || r.IP() != tc.ip {
			t.Errorf("%d: %v (plain %v): %q, %q; want %q, %q", i, tc.addr, tc.plain, r.RequestFrom(), r.IP(), tc.from, tc.ip)
		}
	}
	r.Reset()
	r.addr = a
	_ = r.RequestFrom()
	r.Reset()
	r.addr = a
	if n := testing.AllocsPerRun(100, func() { r.addrDone = false; r.addr = a; _ = r.RequestFrom() }); n != 0 {
		t.Errorf("the same address again: %v allocations, want 0", n)
	}
}

// fakeAddr is an address that is not TCP's.
type fakeAddr string

func (a fakeAddr) Network() string { return "pipe" }
func (a fakeAddr) String() string  { return string(a) }

// TestLazyHeaders checks that a request's headers are parsed on first use, the same as when
// they are parsed at once, unless a Content-Encoding or a form body needs them at once.
func TestLazyHeaders(t *testing.T) {
	r := Acquire()
	defer Release(r)
	FromHTTP(ctxFor(t, "GET /x HTTP/1.1\r\nHost: h\r\nX-A:  1 \r\nx-a: 2\r\nX-Latin: \xe9\r\n\r\n"), r)
	want := []KV{{"Host", "h"}, {"X-A", "1"}, {"x-a", "2"}, {"X-Latin", "é"}}
	if got := r.HeaderList(); !reflect.DeepEqual(got, want) {
		t.Fatalf("HeaderList = %q, want %q", got, want)
	}
	if v, ok := r.Header("X-LATIN"); !ok || v != "é" {
		t.Fatalf("Header(X-LATIN) = %q, %v", v, ok)
	}
	r.Reset()
	// gzip with no body cannot be decoded: Mountebank then has no body at all.
	FromHTTP(ctxFor(t, "GET /x HTTP/1.1\r\nHost: h\r\n  content-ENCODING: gzip\r\n\r\n"), r)
	if !r.BodyMissing {
		t.Fatal("empty gzip body: BodyMissing = false")
	}

	// With a body, the headers wait too unless an encoding or a form may need them.
	for _, tc := range []struct {
		name, head string
		lazy, form bool
	}{
		{"json", "Content-Type: application/json\r\nX-A: 1\r\n", true, false},
		{"form", "Content-Type: application/x-www-form-urlencoded\r\nX-A: 1\r\n", false, true},
		{"form type in another header", "Content-Type: text/plain\r\nX-A: application/x-www-form-urlencoded\r\n", true, false},
		{"form type, odd spacing", "  content-type :application/x-www-form-urlencoded\r\nX-A: 1\r\n", false, true},
		{"gzip", "Content-Encoding: identity\r\nX-A: 1\r\n", false, false},
	} {
		r.Reset()
		FromHTTP(ctxFor(t, "POST /x HTTP/1.1\r\nHost: h\r\n"+tc.head+"Content-Length: 3\r\n\r\na=b"), r)
		if lazy := r.rawHeaders != nil; lazy != tc.lazy || r.HasForm != tc.form || r.Body != "a=b" {
			t.Errorf("%s: lazy %v, form %v, body %q; want lazy %v, form %v", tc.name, lazy, r.HasForm, r.Body, tc.lazy, tc.form)
		}
		if h := r.HeaderList(); len(h) != 4 || h[2].Name != "X-A" {
			t.Errorf("%s: HeaderList = %q", tc.name, h)
		}
	}
}

// TestProtoHeader checks that a header named __proto__ is left out, as Mountebank loses it
// (headersMap.ofRaw assigns it as the prototype of its plain object), whether the headers are
// parsed at once (a form body) or on first use; other spellings are ordinary headers.
func TestProtoHeader(t *testing.T) {
	for _, req := range []string{
		"GET /x HTTP/1.1\r\nHost: h\r\n__proto__: p\r\n__PROTO__: q\r\n__proto__: r\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: h\r\n__proto__: p\r\n__PROTO__: q\r\n__proto__: r\r\n" +
			"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b",
	} {
		r := Acquire()
		FromHTTP(ctxFor(t, req), r)
		h := r.HeaderList()
		if len(h) < 2 || h[0] != (KV{"Host", "h"}) || h[1] != (KV{"__PROTO__", "q"}) {
			t.Errorf("HeaderList = %q", h)
		}
		for _, kv := range h {
			if kv.Name == "__proto__" {
				t.Errorf("HeaderList kept %q", kv)
			}
		}
		Release(r)
	}
}

// TestMBHeaderValues: a header's values as Mountebank's headersMap.get gives them: the first
// name matching case-insensitively, its values combined as ofRaw combines them.
func TestMBHeaderValues(t *testing.T) {
	r := Acquire()
	defer Release(r)
	FromHTTP(ctxFor(t, "GET /x HTTP/1.1\r\nHost: h\r\nOrigin: \r\nOrigin: a\r\norigin: lower\r\nX-E: \r\n"+
		"X-M: 1\r\nX-M: \r\nX-M: 2\r\nX-T: \r\nX-T: \r\n\r\n"), r)
	for name, want := range map[string][]string{
		"origin": {"a"},
		"X-E":    {""},
		"x-m":    {"1", "", "2"},
		"X-T":    {""},
		"X-None": nil,
	} {
		if got := r.MBHeader(name); !reflect.DeepEqual(got, want) {
			t.Errorf("MBHeader(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestHasHeaderFold(t *testing.T) {
	for raw, want := range map[string]bool{
		"Host: a\r\nContent-Encoding: gzip\r\n":    true,
		"content-encoding:br":                      true,
		"Host: a\r\n\tCONTENT-ENCODING : x\r\n":    true,
		"Host: a\r\nX-Content-Encoding: gzip\r\n":  false,
		"Host: content-encoding\r\n":               false,
		"Content-Encodin":                          false,
		"Accept: a-b\r\nA-Content-Encoding: x\r\n": false,
		"x-content-encoding\ncontent-encoding: y":  true,
		"content-content-encoding: y":              false,
		"":                                         false,
	} {
		if got := hasHeaderFold([]byte(raw), "content-encoding"); got != want {
			t.Errorf("hasHeaderFold(%q) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzHasHeaderFold holds the hyphen-anchored search to the plain definition: some line,
// after leading blanks, starts with the name in any ASCII case.
func FuzzHasHeaderFold(f *testing.F) {
	for _, s := range []string{"Host: a\r\nContent-Encoding: gzip\r\n", " content-encoding", "a-b\n\tCONTENT-ENCODING", "content-encodin"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		const name = "content-encoding"
		want := false
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimLeft(line, " \t")
			if len(line) >= len(name) && strings.ToLower(line[:len(name)]) == name && asciiOnly(line[:len(name)]) {
				want = true
			}
		}
		if got := hasHeaderFold(raw, name); got != want {
			t.Fatalf("hasHeaderFold(%q) = %v, want %v", raw, got, want)
		}
	})
}

func TestHeadersNeeded(t *testing.T) {
	for _, c := range []struct {
		raw            string
		withBody, want bool
	}{
		{"Host: a\r\nContent-Encoding: gzip\r\n", false, true},
		{"content-encoding:br", false, true},
		{"Host: a\r\n\tCONTENT-ENCODING : x\r\n", false, true},
		{"Host: a\r\nX-Content-Encoding: gzip\r\n", false, false},
		{"Host: content-encoding\r\n", false, false},
		{"Content-Encodin", false, false},
		{"Accept: a-b\r\nA-Content-Encoding: x\r\n", false, false},
		{"x-content-encoding\ncontent-encoding: y", false, true},
		{"content-content-encoding: y", false, false},
		{"", true, false},
		{"Host: a\r\nContent-Type: application/x-www-form-urlencoded\r\n", true, true},
		{"Host: a\r\nContent-Type: application/x-www-form-urlencoded\r\n", false, false},
		{"Host: a\r\n content-TYPE:application/x-www-form-urlencoded; charset=utf-8\r\n", true, true},
		{"Host: a\r\nContent-Type: application/X-www-form-urlencoded\r\n", true, false},
		{"Host: a\r\nContent-Type: application/json\r\nX-Type: application/x-www-form-urlencoded\r\n", true, false},
		{"Content-Type: application/json\r\nContent-Length: 3\r\n", true, false},
	} {
		if got := headersNeeded([]byte(c.raw), c.withBody); got != c.want {
			t.Errorf("headersNeeded(%q, %t) = %v, want %v", c.raw, c.withBody, got, c.want)
		}
	}
}

// FuzzHeadersNeeded holds headersNeeded to what it stands for: the parsed headers name a
// Content-Encoding, or, with a body, a Content-Type that is the urlencoded form (as
// FromHTTPLimit reads them); it may answer true for more, never false for those.
func FuzzHeadersNeeded(f *testing.F) {
	for _, s := range []string{"Host: a\r\nContent-Encoding: gzip\r\n", " content-encoding", "a-b\n\tCONTENT-ENCODING", "content-encodin",
		"Content-Type: application/x-www-form-urlencoded\r\n", "content-type :  application/x-www-form-urlencoded ; a=b\r\n", "Content-Type: a\r\ncontent-type: application/x-www-form-urlencoded"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, withBody bool) {
		var r Request
		r.reserve(2 * len(raw))
		headers := r.parseRawHeaders(nil, raw)
		_, _, enc := mbHeader(headers, "Content-Encoding")
		ct, ctArray, hasCT := mbHeader(headers, "Content-Type")
		need := enc || withBody && hasCT && !ctArray && IsURLEncodedForm(ct)
		if need && !headersNeeded(raw, withBody) {
			t.Fatalf("headersNeeded(%q, %t) = false, but the parsed headers %q need it", raw, withBody, headers)
		}
	})
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestShareInto: the copy a script gets has the same fields as the request, parses raw headers
// itself (the request's stay unparsed), and owns its name/value lists.
func TestShareInto(t *testing.T) {
	cases := []struct {
		name, raw   string
		parseFirst  bool // the request parsed its headers before the copy
		wantHeaders []KV
	}{
		{"raw headers", "GET /x?a=1&b=2 HTTP/1.1\r\nHost: h\r\nX-Latin: \xe9\r\n\r\n", false,
			[]KV{{"Host", "h"}, {"X-Latin", "é"}}},
		{"parsed headers", "GET /x?a=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n", true,
			[]KV{{"Host", "h"}, {"X-A", "1"}}},
		{"form body", "POST /f HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nk=v&w=x", false,
			[]KV{{"Host", "h"}, {"Content-Type", "application/x-www-form-urlencoded"}, {"Content-Length", "7"}}},
		{"no list to copy", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", false, []KV{{"Host", "h"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Acquire()
			defer Release(r)
			FromHTTP(ctxFor(t, tc.raw), r)
			if tc.parseFirst {
				r.HeaderList()
			}
			rawBefore := r.rawHeaders != nil
			var c Request
			r.ShareInto(&c)
			if (r.rawHeaders != nil) != rawBefore {
				t.Fatal("ShareInto parsed the request's headers")
			}
			if got := c.HeaderList(); !sameKVs(got, tc.wantHeaders) {
				t.Fatalf("copy's headers %q, want %q", got, tc.wantHeaders)
			}
			if got := r.HeaderList(); !sameKVs(got, tc.wantHeaders) {
				t.Fatalf("request's headers %q, want %q", got, tc.wantHeaders)
			}
			same := c.Method == r.Method && c.Path == r.Path && c.Body == r.Body && c.HasForm == r.HasForm &&
				sameKVs(c.Query, r.Query) && sameKVs(c.Form, r.Form) && c.IP() == r.IP()
			if !same {
				t.Fatalf("copy %+v differs from request %+v", c, *r)
			}
			// The lists are the copy's own.
			for _, l := range [][]KV{r.Query, r.Headers, r.Form} {
				for i := range l {
					l[i] = KV{"changed", "changed"}
				}
			}
			for _, l := range [][]KV{c.Query, c.Headers, c.Form} {
				for _, kv := range l {
					if kv.Name == "changed" {
						t.Fatalf("the copy shares a list with the request: %q", l)
					}
				}
			}
		})
	}
}

// sameKVs compares name/value lists, an empty list equal to none.
func sameKVs(a, b []KV) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHolds: Holds tells the strings a Recycle would hand to the next request (those of the
// arena the request's strings were last made in) from any other memory.
func TestHolds(t *testing.T) {
	ctx := ctxFor(t, "POST /first?a=1 HTTP/1.1\r\nHost: one\r\nContent-Length: 5\r\n\r\nhello")
	r := Acquire()
	defer Release(r)
	if r.Holds([]byte("x")) {
		t.Error("an empty request holds memory")
	}
	FromHTTP(ctx, r)
	for _, s := range []string{r.Path, r.Query[0].Value, r.HeaderList()[0].Value, r.Body} {
		if !r.Holds(unsafe.Slice(unsafe.StringData(s), len(s))) {
			t.Errorf("%q: not held", s)
		}
	}
	other := []byte("hello")
	if r.Holds(other) || r.Holds(nil) || r.Holds(ctx.Request.Body()) {
		t.Error("memory the request does not own is held")
	}
}

// TestNoHeaderLines: a request without header lines has no headers, also over HTTP/1.0, where
// fasthttp adds a Connection: close of its own (Mountebank records {}).
func TestNoHeaderLines(t *testing.T) {
	for _, raw := range []string{"GET /c HTTP/1.0\r\n\r\n", "GET /c HTTP/1.1\r\nHost: h\r\n\r\n"} {
		r := Acquire()
		FromHTTP(ctxFor(t, raw), r)
		var got []string
		for _, h := range r.HeaderList() {
			got = append(got, h.Name+": "+h.Value)
		}
		want := []string(nil)
		if strings.Contains(raw, "Host") {
			want = []string{"Host: h"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: headers %q, want %q", raw, got, want)
		}
		Release(r)
	}
}

// TestSetData checks a tcp request's Data against Mountebank's rendering (base64 in binary
// mode, node's UTF-8 decoding otherwise), and that it is made in the request's memory (which
// Recycle hands on), where a Released request's Data keeps its value.
func TestSetData(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("PING\n"), []byte("\x00\x01\xff\xfe"), []byte("caf\xc3\xa9 \xe2\x82"), []byte(strings.Repeat("x", 1000))} {
		for _, binary := range []bool{false, true} {
			want := jsvalue.DecodeUTF8(in)
			if binary {
				want = base64.StdEncoding.EncodeToString(in)
			}
			r := Acquire()
			r.SetData(in, binary)
			if r.Data() != want {
				t.Errorf("SetData(%q, binary %v) = %q, want %q", in, binary, r.Data(), want)
			}
			Release(r)
		}
	}
	r := Acquire()
	r.SetData([]byte("first"), false)
	kept := r.Data()
	Release(r)
	r = Acquire()
	r.SetData([]byte("other"), false)
	if kept != "first" {
		t.Fatalf("Data of a released request changed to %q", kept)
	}
	inArena := r.Holds(unsafe.Slice(unsafe.StringData(r.Data()), len(r.Data())))
	Recycle(r)
	if !inArena {
		t.Errorf("Data was not made in the request's memory")
	}
}

// TestSetDataBinaryOnDemand: in binary mode the base64 is made when Data is first asked for;
// what depends on it before (Size, the record) counts and writes what Data then gives, and a
// copy for scripts (ShareInto) has it.
func TestSetDataBinaryOnDemand(t *testing.T) {
	payload := []byte("\x00\x01\xffPING\n")
	want := base64.StdEncoding.EncodeToString(payload)
	made := func() *Request {
		r := Acquire()
		r.TCP = true
		r.SetData(payload, true)
		r.SetClient("127.0.0.1", "127.0.0.1:7")
		return r
	}
	r := made()
	if !r.dataLazy || r.data != "" {
		t.Fatalf("SetData made the base64 at once (%q)", r.data)
	}
	if raw, ok := r.BinaryData(); !ok || string(raw) != string(payload) {
		t.Errorf("BinaryData = %q, %v", raw, ok)
	}
	size, recLen := r.Size(), r.RecordLen()
	rec, addr := r.AppendRecord(nil)
	if len(rec) != recLen {
		t.Errorf("record of %d bytes, RecordLen said %d", len(rec), recLen)
	}
	var back Request
	back.FromRecord(rec, addr)
	if back.Data() != want {
		t.Errorf("from the record: Data %q, want %q", back.Data(), want)
	}
	if got := r.Data(); got != want || r.Data() != got || !r.Holds(unsafe.Slice(unsafe.StringData(got), len(got))) {
		t.Errorf("Data = %q (again %q), want %q in the request's memory", got, r.Data(), want)
	}
	if r.Size() != size {
		t.Errorf("Size %d once Data is made, %d before", r.Size(), size)
	}
	Release(r)
	r = made()
	var c Request
	r.ShareInto(&c)
	if c.Data() != want {
		t.Errorf("ShareInto: Data %q, want %q", c.Data(), want)
	}
	Release(r)
}

// headerBoth returns Header(name) read from the unparsed block raw (rawHeader) and from the
// parsed list, and whether the first read left the block unparsed. When PlainHeaderName
// accepts name, PlainHeader must read what Header reads: lazy holds its answer instead when
// it does not.
func headerBoth(raw, name string) (lazy, parsed KV, stillRaw bool, okLazy, okParsed bool) {
	a := &Request{rawHeaders: []byte(raw)}
	b := &Request{rawHeaders: []byte(raw)}
	b.HeaderList()
	va, oka := a.Header(name)
	vb, okb := b.Header(name)
	if PlainHeaderName(name) {
		c := &Request{rawHeaders: []byte(raw)}
		if vc, okc := c.PlainHeader(name); vc != va || okc != oka || (c.rawHeaders != nil) != (a.rawHeaders != nil) {
			return KV{"PlainHeader", vc}, KV{name, vb}, c.rawHeaders != nil, okc, okb
		}
	}
	return KV{name, va}, KV{name, vb}, a.rawHeaders != nil, oka, okb
}

// TestPlainHeaderName: the names PlainHeader reads without the checks Header makes.
func TestPlainHeaderName(t *testing.T) {
	for name, want := range map[string]bool{"": true, "X-Trace": true, "host": true, "__proto__": true,
		"x-a ": false, " host": false, "\tx": false, "x\t": false, "x-colon: a": false, ":": false, "é": false, "\xe9": false} {
		if got := PlainHeaderName(name); got != want {
			t.Errorf("PlainHeaderName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRawHeader: one header read from the block without parsing the others answers as the
// parsed list does: case-insensitive names, the first of several, values trimmed, __proto__
// left out, names or values past ASCII (latin1) left to the parse.
func TestRawHeader(t *testing.T) {
	raw := "Host: h\r\nX-A:  1 \r\nx-a: 2\r\nX-Latin: \xe9\r\n\xe9: e\r\n__proto__: p\r\n__PROTO__: q\r\n" +
		"No-Colon\r\n: empty name\r\nX-Empty:\r\nX-Tab:\t v\t\r\n  X-Ows  : w\r\nX-Colon: a:b\r\nX-Last: z"
	for _, tc := range []struct {
		name, want string
		found, raw bool // raw: answered without parsing the block
	}{
		{"host", "h", true, true},
		{"X-A", "1", true, true},
		{"x-A", "1", true, true},
		{"X-LATIN", "é", true, false},
		{"é", "e", true, false},
		{"\xe9", "", false, false},
		{"__proto__", "q", true, true}, // __proto__ itself is left out
		{"__Proto__", "q", true, true},
		{"No-Colon", "", false, true},
		{"", "empty name", true, true},
		{"x-empty", "", true, true},
		{"x-tab", "v", true, true},
		{"x-ows", "w", true, true},
		{"x-colon", "a:b", true, true},
		{"x-last", "z", true, true},
		{"missing", "", false, true},
		{"x-a ", "", false, true},       // names are trimmed: none ends with a space
		{" host", "", false, true},      // nor starts with one
		{"x-colon: a", "", false, true}, // nor holds a ':'
		{"X-Colon:a", "", false, true},  //
		{"x-ows  ", "", false, true},    //
		{"x", "", false, true},          // a prefix of names is no name
	} {
		lazy, parsed, stillRaw, okLazy, okParsed := headerBoth(raw, tc.name)
		if lazy != parsed || okLazy != okParsed {
			t.Errorf("Header(%q) = %q %v unparsed, %q %v parsed", tc.name, lazy.Value, okLazy, parsed.Value, okParsed)
		}
		if parsed.Value != tc.want || okParsed != tc.found || stillRaw != tc.raw {
			t.Errorf("Header(%q) = %q %v (block unparsed %v), want %q %v (%v)", tc.name, parsed.Value, okParsed, stillRaw, tc.want, tc.found, tc.raw)
		}
	}
}

// FuzzRawHeader: Header read from the unparsed block answers as from the parsed list.
func FuzzRawHeader(f *testing.F) {
	f.Add("Host: h\r\nX-A:  1 \r\nx-a: 2\r\n", "x-a")
	f.Add("\xe9: e\r\n__proto__: p\r\nX: \xe9\r\n", "x")
	f.Add(": v\n\r\nA:b:c", "")
	f.Fuzz(func(t *testing.T, raw, name string) {
		lazy, parsed, _, okLazy, okParsed := headerBoth(raw, name)
		if lazy != parsed || okLazy != okParsed {
			t.Errorf("Header(%q) of %q = %q %v unparsed, %q %v parsed", name, raw, lazy.Value, okLazy, parsed.Value, okParsed)
		}
	})
}

// TestNeedsUnescape: the short loop and the long IndexByte look find '%' and '+' anywhere.
func TestNeedsUnescape(t *testing.T) {
	for _, s := range []string{"", "q", "x", "abc", "a%", "+a", "a+b", "%41", "0123456789abcdef", "0123456789abcde+",
		"0123456789abcdef0", "0123456789abcdef+", "%123456789abcdef0", "0123456789abcdef0123456789%", "é+", "\xff%"} {
		want := strings.ContainsAny(s, "%+")
		if got := needsUnescape(s); got != want {
			t.Errorf("needsUnescape(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestMethodString: a request's method is the one sent, in its case; the common ones are
// the constants rather than copies in the request's arena.
func TestMethodString(t *testing.T) {
	for _, tc := range []struct {
		method  string
		inArena bool
	}{
		{"GET", false}, {"POST", false}, {"PUT", false}, {"DELETE", false}, {"PATCH", false},
		{"HEAD", false}, {"OPTIONS", false},
		{"get", true}, {"Post", true}, {"PROPFIND", true}, {"GETX", true}, {"TRACE", true},
	} {
		r := Acquire()
		FromHTTP(ctxFor(t, tc.method+" /x HTTP/1.1\r\nHost: h\r\n\r\n"), r)
		if r.Method != tc.method {
			t.Errorf("%s: Method = %q", tc.method, r.Method)
		}
		if in := r.Holds(unsafe.Slice(unsafe.StringData(r.Method), len(r.Method))); in != tc.inArena {
			t.Errorf("%s: in the arena %v, want %v", tc.method, in, tc.inArena)
		}
		Release(r)
	}
}

// TestFromHTTPViewOwnership: FromHTTPView leaves a large body that needs no decoding where
// fasthttp read it (no copy; Holds knows that memory), and KeepBody takes that buffer from the
// context, so that a body written into the context after it (the connection's next request)
// does not change the view's Body. Every other body is r's own memory, as FromHTTPLimit makes
// it, and KeepBody leaves the context's body alone.
func TestFromHTTPViewOwnership(t *testing.T) {
	large := strings.Repeat("0123456789abcdef", maxArena/16+1)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(large))
	_ = w.Close()
	for _, tt := range []struct {
		name, raw, want string
		viewed          bool
	}{
		{"large", rawPost("text/plain", "", large), large, true},
		{"small", rawPost("text/plain", "", "small body"), "small body", false},
		{"arena-size", rawPost("text/plain", "", large[:maxArena]), large[:maxArena], false},
		{"large-invalid", rawPost("text/plain", "", large+"\xff"), large + "\uFFFD", false},
		{"large-gzip", rawPost("text/plain", "gzip", gz.String()), large, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxFor(t, tt.raw)
			received := ctx.Request.Body()
			var r Request
			FromHTTPView(ctx, &r, false, DefaultMaxBody, HeaderLines{})
			if r.Body != tt.want {
				t.Fatalf("Body: %d bytes, want %d", len(r.Body), len(tt.want))
			}
			inCtx := unsafe.StringData(r.Body) == unsafe.SliceData(received)
			if inCtx != tt.viewed || r.Holds(unsafe.Slice(unsafe.StringData(r.Body), len(r.Body))) != (tt.viewed || len(r.Body) <= maxArena) {
				t.Fatalf("Body in the context's buffer: %t, want %t; Holds: %t", inCtx, tt.viewed, r.Holds([]byte(r.Body)))
			}
			KeepBody(ctx, &r)
			if tt.viewed != (len(ctx.Request.Body()) == 0) {
				t.Fatalf("after KeepBody the context's body has %d bytes (viewed %t)", len(ctx.Request.Body()), tt.viewed)
			}
			ctx.Request.SetBody(bytes.Repeat([]byte{'X'}, len(received))) // the next request, in whatever buffer ctx has
			if r.Body != tt.want {
				t.Fatalf("Body changed by the context's next body")
			}
			if r.Holds(unsafe.Slice(unsafe.StringData(r.Body), len(r.Body))) && len(r.Body) > maxArena {
				t.Fatal("Holds: a kept body is still the memory the next request is read into")
			}
		})
	}
	// FromHTTPLimit copies every body.
	ctx := ctxFor(t, rawPost("text/plain", "", large))
	var r Request
	FromHTTPLimit(ctx, &r, false, DefaultMaxBody)
	if unsafe.StringData(r.Body) == unsafe.SliceData(ctx.Request.Body()) {
		t.Fatal("FromHTTPLimit: Body is the context's buffer")
	}
}

// rawPost is a POST of body with a Content-Type and, when encoding is not empty, a
// Content-Encoding.
func rawPost(contentType, encoding, body string) string {
	h := "POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: " + contentType + "\r\n"
	if encoding != "" {
		h += "Content-Encoding: " + encoding + "\r\n"
	}
	return h + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// parseRawHeadersByBytes is parseRawHeaders as it was before it found line ends and colons
// with bytes.IndexByte and checked for ASCII a word at a time: FuzzParseRawHeadersAsBefore
// holds the two equal.
func parseRawHeadersByBytes(raw []byte) []KV {
	latin1 := func(b []byte) string {
		var sb strings.Builder
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return sb.String()
	}
	var dst []KV
	for len(raw) > 0 {
		i := 0
		for i < len(raw) && raw[i] != '\n' {
			i++
		}
		line := raw[:i]
		if i < len(raw) {
			raw = raw[i+1:]
		} else {
			raw = nil
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		c := 0
		for c < len(line) && line[c] != ':' {
			c++
		}
		if c == len(line) {
			continue
		}
		name := TrimOWS(line[:c])
		if protoKey(name) {
			continue
		}
		dst = append(dst, KV{latin1(name), latin1(TrimOWS(line[c+1:]))})
	}
	return dst
}

// FuzzParseRawHeadersAsBefore: parseRawHeaders reads any header block as the byte-by-byte
// loop did (lines, colons, spaces, latin1 past ASCII at any place of a word).
func FuzzParseRawHeadersAsBefore(f *testing.F) {
	for _, s := range []string{"Host: 127.0.0.1:4545\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n", "a:b", ":", "\n\n:\r\n", "X-Long-Name-Here:  v\xe9lue with spaces \t\r\nno colon\r\n__proto__: x\r\n",
		"A: 0123456\x80\r\nB: 01234567\xff\r\nC:\x80234567\r\n", "k:v\rx\nk2 : v2\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r Request
		got := r.parseRawHeaders(nil, raw)
		want := parseRawHeadersByBytes(raw)
		if len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", raw, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %q, want %q", raw, got, want)
			}
		}
	})
}

// TestASCIIBytes: asciiBytes finds a byte past ASCII at every place of slices shorter and
// longer than a word.
func TestASCIIBytes(t *testing.T) {
	for n := range 26 {
		plain := []byte(strings.Repeat("a", n))
		if !asciiBytes(plain) {
			t.Errorf("%q: not ASCII", plain)
		}
		for at := range n {
			for _, c := range []byte{0x7f, 0x80, 0xc3, 0xff} {
				b := bytes.Clone(plain)
				b[at] = c
				if got, want := asciiBytes(b), c < 0x80; got != want {
					t.Errorf("asciiBytes(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
