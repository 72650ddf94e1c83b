package imposter

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

func mustJSON(t *testing.T, s string) *config.Object {
	t.Helper()
	v, err := config.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*config.Object)
}

func TestCompileResponse(t *testing.T) {
	tests := []struct {
		name, resp, def string
		status          int
		body            string
		headers         []header
	}{
		{"empty is", `{"is":{}}`, ``, 200, "", nil},
		{"text body", `{"is":{"statusCode":201,"body":"hi"}}`, ``, 201, "hi", nil},
		{"string status", `{"is":{"statusCode":"404"}}`, ``, 404, "", nil},
		{"JSON body keeps order, 4 spaces", `{"is":{"body":{"b":1,"a":[1,"x"]}}}`, ``, 200, "{\n    \"b\": 1,\n    \"a\": [\n        1,\n        \"x\"\n    ]\n}", nil},
		{"array body", `{"is":{"body":[1,2]}}`, ``, 200, "[\n    1,\n    2\n]", nil},
		{"number body", `{"is":{"body":42}}`, ``, 200, "42", nil},
		{"headers: arrays repeat, numbers as text", `{"is":{"headers":{"X-A":["1","2"],"X-N":5}}}`, ``, 200, "", []header{{"X-A", "1", true, false, false}, {"X-A", "2", false, false, false}, {"X-N", "5", true, false, false}}},
		{"header with a line break is not settable", `{"is":{"headers":{"X-B":"a\r\nb","x-b":"c"}}}`, ``, 200, "", []header{{"X-B", "a\r\nb", false, true, false}, {"x-b", "c", true, false, false}}},
		{"a value past ASCII is written as Latin1", `{"is":{"headers":{"X-U":"grün","X-A":"plain"}}}`, ``, 200, "", []header{{"X-U", "grün", true, false, true}, {"X-A", "plain", true, false, false}}},
		{"content-length recomputed", `{"is":{"headers":{"Content-Length":"999"},"body":"abc"}}`, ``, 200, "abc", nil},
		{"defaultResponse fills each field", `{"is":{"body":"own"}}`, `{"statusCode":418,"headers":{"X-D":"d"},"body":"dflt"}`, 418, "own", []header{{"X-D", "d", true, false, false}}},
		{"own headers replace default headers", `{"is":{"headers":{"X-O":"o"}}}`, `{"headers":{"X-D":"d"},"body":"dflt"}`, 200, "dflt", []header{{"X-O", "o", true, false, false}}},
		{"binary", `{"is":{"_mode":"binary","body":"aGk=\n"}}`, ``, 200, "hi", nil},
		{"binary from default mode", `{"is":{"body":"aGk"}}`, `{"_mode":"binary"}`, 200, "hi", nil},
		{"binary skips the URL-safe alphabet as Mountebank does", `{"is":{"_mode":"binary","body":"QUJD-_"}}`, ``, 200, "ABC", nil},
		{"binary JSON body: its text with 4-space indent is decoded", `{"is":{"_mode":"binary","body":[-2.5,null]}}`, ``, 200, "\xdb\x99\xee\x96", nil},
	}
	for _, tt := range tests {
		var def *config.Object
		if tt.def != "" {
			def = mustJSON(t, tt.def)
		}
		r := &newIsResponse(mustJSON(t, tt.resp), defaultsOf(def)).http
		if r.fail != nil || int(r.status) != tt.status || string(r.body) != tt.body || len(r.headers) != len(tt.headers) {
			t.Errorf("%s: got status %d (%v) body %q headers %v, want %d %q %v", tt.name, r.status, r.fail, r.body, r.headers, tt.status, tt.body, tt.headers)
			continue
		}
		for i := range tt.headers {
			if r.headers[i] != tt.headers[i] {
				t.Errorf("%s: header %d = %v, want %v", tt.name, i, r.headers[i], tt.headers[i])
			}
		}
	}
}

func TestCheckResponse(t *testing.T) {
	tests := map[string]string{
		`{"is":{}}`:                  "",
		`{}`:                         "unrecognized response type",
		`{"is":null}`:                "unrecognized response type",
		`{"is":{},"inject":"x"}`:     "each response object must have only one response type",
		`{"is":{},"proxy":{"to":1}}`: "each response object must have only one response type",
	}
	for in, want := range tests {
		err := checkResponse(mustJSON(t, in))
		got := ""
		if err != nil {
			got = err.Message
		}
		if got != want {
			t.Errorf("checkResponse(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestJournalBounds(t *testing.T) {
	var j journal
	j.init(3, 1<<20)
	for i := 0; i < 5; i++ {
		j.addObject(config.NewObject("n", float64(i)), timeZero, NoStub, nil, nil)
	}
	list := j.list()
	if len(list) != 3 {
		t.Fatalf("journal kept %d entries, want 3", len(list))
	}
	for i, want := range []float64{2, 3, 4} {
		if got, _ := list[i].req.Get("n"); got != want {
			t.Errorf("entry %d = %v, want %v (oldest dropped first)", i, got, want)
		}
	}
	j.init(100, 200)
	j.clear()
	for i := 0; i < 10; i++ {
		j.addObject(config.NewObject("body", "0123456789012345678901234567890123456789"), timeZero, NoStub, nil, nil)
	}
	if j.bytes > 200 {
		t.Errorf("journal holds %d bytes, budget 200", j.bytes)
	}
	if len(j.list()) == 0 {
		t.Error("journal dropped everything")
	}
}

// TestDecorateLeavesStubAlone serves a decorated response several times: the decorate
// reads the stub's own `is` object (no copy), so each answer must be decorated exactly once.
func TestDecorateLeavesStubAlone(t *testing.T) {
	h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[{
		"is":{"statusCode":200,"headers":{"X-A":"1"},"body":"b"},
		"_behaviors":{"wait":0,"decorate":"(config) => { config.response.body += '+d'; config.response.headers['X-A'] += '+h'; delete config.response.statusCode; }"}}]}]}`,
		impostertest.SimpleRequest, false)
	for i := 0; i < 3; i++ {
		serveOnce(t, h, ctx)
		if body, xa := string(ctx.Response.Body()), string(ctx.Response.Header.Peek("X-A")); body != "b+d" || xa != "1+h" {
			t.Fatalf("answer %d: body %q, X-A %q; want b+d, 1+h", i, body, xa)
		}
	}
}

// TestCompileIsReusesBase checks that compileIs takes from the base response exactly the parts
// whose values are the base's own (as a decorate leaves them), and compiles the rest.
func TestCompileIsReusesBase(t *testing.T) {
	const stub = `{"statusCode":201,"headers":{"X-A":"1","Connection":"close"},"body":{"k":"v"}}`
	tests := []struct {
		name    string
		def     string
		is      func(base *config.Object) *config.Object
		whole   bool // the result is the base itself
		headers bool // the base's header lines are reused
		body    bool // the base's body is reused
	}{
		{"same object", ``, func(b *config.Object) *config.Object { return b }, true, true, true},
		{"same members in a new object", ``, func(b *config.Object) *config.Object {
			return &config.Object{Members: append([]config.Member(nil), b.Members...)}
		}, false, true, true},
		{"new body", ``, func(b *config.Object) *config.Object {
			o := config.Clone(b).(*config.Object)
			h, _ := b.Get("headers")
			o.Set("headers", h)
			o.Set("body", "text")
			return o
		}, false, true, false},
		{"new headers", ``, func(b *config.Object) *config.Object {
			o := &config.Object{Members: append([]config.Member(nil), b.Members...)}
			o.Set("headers", config.NewObject("X-A", "1", "Connection", "close"))
			return o
		}, false, false, true},
		{"no headers", ``, func(b *config.Object) *config.Object {
			o := &config.Object{Members: append([]config.Member(nil), b.Members...)}
			o.Delete("headers")
			return o
		}, false, false, true},
		{"binary mode set", ``, func(b *config.Object) *config.Object {
			o := &config.Object{Members: append([]config.Member(nil), b.Members...)}
			o.Set("_mode", "binary")
			return o
		}, false, true, false},
		{"string body", ``, func(b *config.Object) *config.Object {
			o := &config.Object{Members: append([]config.Member(nil), b.Members...)}
			o.Set("body", "x")
			return o
		}, false, true, false},
	}
	for _, tt := range tests {
		var def *config.Object
		if tt.def != "" {
			def = mustJSON(t, tt.def)
		}
		baseIs := mustJSON(t, stub)
		base := compileIs(baseIs, defaultsOf(def), nil)
		is := tt.is(baseIs)
		got := compileIs(is, defaultsOf(def), base)
		want := compileIs(is, defaultsOf(def), nil)
		if (got == base) != tt.whole {
			t.Errorf("%s: result is base: %v, want %v", tt.name, got == base, tt.whole)
		}
		if got.status != want.status || string(got.body) != string(want.body) || got.hasConnection != want.hasConnection ||
			got.hasContentLength != want.hasContentLength || len(got.headers) != len(want.headers) {
			t.Errorf("%s: got %d %q %v, want %d %q %v", tt.name, got.status, got.body, got.headers, want.status, want.body, want.headers)
			continue
		}
		for i := range want.headers {
			if got.headers[i] != want.headers[i] {
				t.Errorf("%s: header %d = %v, want %v", tt.name, i, got.headers[i], want.headers[i])
			}
		}
		if shared := len(got.headers) > 0 && &got.headers[0] == &base.headers[0]; shared != tt.headers {
			t.Errorf("%s: header lines reused: %v, want %v", tt.name, shared, tt.headers)
		}
		if shared := len(got.body) > 0 && &got.body[0] == &base.body[0]; shared != tt.body {
			t.Errorf("%s: body reused: %v, want %v", tt.name, shared, tt.body)
		}
	}
	// The default response applies alike when neither has the field.
	def := mustJSON(t, `{"headers":{"X-D":"d"},"body":"dflt"}`)
	base := compileIs(mustJSON(t, `{"statusCode":200}`), defaultsOf(def), nil)
	got := compileIs(mustJSON(t, `{"statusCode":202,"body":""}`), defaultsOf(def), base)
	if got.status != 202 || string(got.body) != "dflt" || len(got.headers) != 1 || &got.headers[0] != &base.headers[0] {
		t.Errorf("defaults: got %d %q %v", got.status, got.body, got.headers)
	}
}

// TestDecorateAnswers serves decorated responses through the handler, for the ways a script can
// change the response, twice each (the second answer must not see the first's changes).
func TestDecorateAnswers(t *testing.T) {
	tests := []struct {
		name, script string
		status       int
		headers      map[string]string // "" means absent
		body         string
	}{
		{"nothing changed", `(config) => { var b = config.response.body; }`,
			201, map[string]string{"X-A": "1", "Content-Type": "application/json"}, "{\n    \"k\": \"v\"\n}"},
		{"body only", `(config) => { config.response.body = 'text'; }`,
			201, map[string]string{"X-A": "1", "Content-Type": "application/json"}, "text"},
		{"number body", `(config) => { config.response.body = 7; }`,
			201, map[string]string{"X-A": "1"}, "7"},
		{"object body changed", `(config) => { config.response.body.k = 'w'; }`,
			201, map[string]string{"X-A": "1"}, "{\n    \"k\": \"w\"\n}"},
		{"header added", `(config) => { config.response.headers['X-B'] = 2; }`,
			201, map[string]string{"X-A": "1", "X-B": "2", "Content-Type": "application/json"}, "{\n    \"k\": \"v\"\n}"},
		{"header deleted", `(config) => { delete config.response.headers['X-A']; }`,
			201, map[string]string{"X-A": "", "Content-Type": "application/json"}, "{\n    \"k\": \"v\"\n}"},
		{"status only", `(config) => { config.response.statusCode = 404; }`,
			404, map[string]string{"X-A": "1"}, "{\n    \"k\": \"v\"\n}"},
		{"replaced", `() => ({ statusCode: 202, headers: { 'X-R': 'r' }, body: 'new' })`,
			202, map[string]string{"X-A": "", "X-R": "r"}, "new"},
		{"promise", `(config) => new Promise(r => setTimeout(() => { config.response.body = 'late'; r(config.response); }, 1))`,
			201, map[string]string{"X-A": "1"}, "late"},
	}
	for _, tt := range tests {
		imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{
			"is":{"statusCode":201,"headers":{"X-A":"1","Content-Type":"application/json"},"body":{"k":"v"}},
			"_behaviors":{"decorate":` + strconv.Quote(tt.script) + `}}]}]}`
		h, ctx := newBenchHandler(t, imp, impostertest.SimpleRequest, false)
		for i := 0; i < 3; i++ { // built, then (a constant decorate's) fixed answer
			ctx.Response.Reset()
			h.handle(ctx)
			if got := ctx.Response.StatusCode(); got != tt.status {
				t.Errorf("%s %d: status %d, want %d (body %s)", tt.name, i, got, tt.status, ctx.Response.Body())
			}
			for k, v := range tt.headers {
				if got := string(ctx.Response.Header.Peek(k)); got != v {
					t.Errorf("%s %d: header %s = %q, want %q", tt.name, i, k, got, v)
				}
			}
			if got := string(ctx.Response.Body()); got != tt.body {
				t.Errorf("%s %d: body %q, want %q", tt.name, i, got, tt.body)
			}
		}
	}
}

// TestProduceKeepsCompiledParts checks that a decorate which leaves the headers, or everything,
// as they were gets the stub's compiled header lines, or its compiled response itself.
func TestProduceKeepsCompiledParts(t *testing.T) {
	for _, tt := range []struct {
		script         string
		whole, headers bool
	}{
		{`(config) => { var b = config.response.body; }`, true, true},
		{`(config) => { config.response.body = 'text'; }`, false, true},
		{`(config) => { config.response.headers['X-B'] = '2'; }`, false, false},
	} {
		imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{
			"is":{"statusCode":201,"headers":{"X-A":"1"},"body":"b"},"_behaviors":{"decorate":` + strconv.Quote(tt.script) + `}}]}]}`
		h, ctx := newBenchHandler(t, imp, impostertest.SimpleRequest, false)
		req := request.Acquire()
		request.FromHTTPListen(ctx, req, h.im.plainIPv4)
		_, resp, _, _, rerr := h.im.resolve(h.im.tbl.Load(), req)
		if rerr != nil {
			t.Fatal(rerr)
		}
		out, _, err := h.im.produce(context.Background(), req, resp, nil)
		if err != nil {
			t.Fatal(err)
		}
		compiled := &resp.(*isResponse).http
		if (out == compiled) != tt.whole {
			t.Errorf("%s: result is the compiled response: %v, want %v", tt.script, out == compiled, tt.whole)
		}
		if shared := len(out.headers) > 0 && &out.headers[0] == &compiled.headers[0]; shared != tt.headers {
			t.Errorf("%s: header lines reused: %v, want %v", tt.script, shared, tt.headers)
		}
	}
}

// A recorded request keeps its own name/value lists: the handler's request goes back to the
// pool and is reused, and the journal still lists what was asked.
func TestJournalKeepsRequest(t *testing.T) {
	var j journal
	j.init(10, 1<<20)
	r := request.Acquire()
	r.Method, r.Path, r.Body = "POST", "/orders", "hello"
	r.Query = append(r.Query, request.KV{Name: "q", Value: "1"}, request.KV{Name: "q", Value: "2"})
	r.Headers = append(r.Headers, request.KV{Name: "X-Tenant", Value: "acme"})
	r.SetClient("127.0.0.1", "127.0.0.1:5000")
	j.addRequest(r, timeZero, 0, nil, nil)
	request.Release(r)
	r = request.Acquire() // the pool may hand the same request back
	r.Query = append(r.Query, request.KV{Name: "other", Value: "x"})
	r.Headers = append(r.Headers, request.KV{Name: "Other", Value: "y"})
	got := string(config.MarshalJSON(j.list()[0].req, 0))
	want := `{"requestFrom":"127.0.0.1:5000","method":"POST","path":"/orders","query":{"q":["1","2"]},"headers":{"X-Tenant":"acme"},"body":"hello","ip":"127.0.0.1"}`
	if got != want {
		t.Errorf("journal lists\n%s\nwant\n%s", got, want)
	}
	request.Release(r)
}

// TestDebugMatchShowsTheResponseSent: with --debug, a match records the `is` object that
// answered, for http and for tcp (whose `is` responses have no compiled http answer).
func TestDebugMatchShowsTheResponseSent(t *testing.T) {
	for _, tt := range []struct{ imposter, want string }{
		{`{"protocol":"http","stubs":[{"responses":[{"is":{"body":"ok"}}]}]}`, `"response":{"body":"ok"}`},
		{`{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"ok"}}]}]}`, `"response":{"data":"ok"}`},
	} {
		im := newCore(t, tt.imposter, Options{Debug: true})
		req := (&request.Request{Method: "GET", Path: "/", TCP: strings.Contains(tt.imposter, "tcp")}).SetDataText("x")
		req.SetClient("127.0.0.1", "127.0.0.1:5000")
		a := im.Resolve(req)
		if a.Err != nil {
			t.Fatal(a.Err)
		}
		im.RecordMatch(&a)
		if got := string(config.MarshalJSON(im.Stubs(false).Matches(0), 0)); !strings.Contains(got, tt.want) {
			t.Errorf("%s: matches %s, want one with %s", tt.imposter, got, tt.want)
		}
	}
}

// TestStatusCodeAsWriteHead holds statusCode to what Mountebank 2.9.1 answered for each value
// (node's writeHead: statusCode |= 0, then 100..999); the 0 codes are its 500 errors.
func TestStatusCodeAsWriteHead(t *testing.T) {
	for _, tc := range []struct {
		json string
		want int
	}{
		{`200`, 200}, {`"201"`, 201}, {`" 203 "`, 203}, {`"2.04e2"`, 204}, {`[200]`, 200}, {`["201"]`, 201},
		{`[[202]]`, 202}, {`"0x70"`, 112}, {`4294967496`, 200}, {`-4294967096`, 200}, {`999.9`, 999},
		{`null`, 200}, {`0`, 200}, {`""`, 200},
		{`[1,2]`, 0}, {`"1e3"`, 0}, {`99.9`, 0}, {`"abc"`, 0}, {`[]`, 0}, {`{}`, 0}, {`true`, 0}, {`99999`, 0},
	} {
		v, err := config.ParseJSON([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		got, err := statusCode(v)
		if tc.want == 0 {
			if err == nil || !strings.HasPrefix(err.Error(), "Invalid status code: ") {
				t.Errorf("statusCode(%s) = %d, %v; want an invalid status code error", tc.json, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("statusCode(%s) = %d, %v; want %d", tc.json, got, err, tc.want)
		}
	}
}

// TestHeaderCharacters checks isToken and validValue, one character at a time and as part of
// longer text, against node's definitions written out.
func TestHeaderCharacters(t *testing.T) {
	token := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("^_`-!#$%&'*+.|~", r)
	}
	value := func(r rune) bool { return !(r < ' ' && r != '\t' || r == 0x7f || r > 0xff) }
	for r := rune(0); r < 0x180; r++ {
		for _, s := range []string{string(r), "ab" + string(r), string(r) + "cd", "é" + string(r)} {
			wantToken, wantValue := true, true
			for _, c := range s {
				wantToken = wantToken && token(c)
				wantValue = wantValue && value(c)
			}
			if got := isToken(s); got != wantToken {
				t.Errorf("isToken(%q) = %v", s, got)
			}
			if got := validValue(s); got != wantValue {
				t.Errorf("validValue(%q) = %v", s, got)
			}
		}
	}
}

func TestCheckHeaderAsNode(t *testing.T) {
	tests := []struct {
		name, value, code string
	}{
		{"X-A", "plain", ""},
		{"X-A", "tab\tok", ""},
		{"X-A", "caf\u00e9 \u00ff", ""},
		{"X-A", "\u4e2d", "ERR_INVALID_CHAR"},
		{"X-A", "a\r\nb", "ERR_INVALID_CHAR"},
		{"X-A", "del\x7f", "ERR_INVALID_CHAR"},
		{"X K", "a", "ERR_INVALID_HTTP_TOKEN"},
		{"", "a", "ERR_INVALID_HTTP_TOKEN"},
		{"X-\u00fc", "a", "ERR_INVALID_HTTP_TOKEN"},
		{"^_`-!#$%&'*+.|~", "a", ""},
	}
	for _, tt := range tests {
		err := checkHeader(tt.name, tt.value)
		code := ""
		if err != nil {
			c, _ := err.Raw.Get("code")
			code = c.(string)
		}
		if code != tt.code {
			t.Errorf("checkHeader(%q, %q) = %q, want %q", tt.name, tt.value, code, tt.code)
		}
		// Status reads the lines' flags set when they were compiled: the same answer, after a
		// good line, as a repeated line, and in a wire that takes its lines from a base.
		for _, hs := range []*config.Object{
			config.NewObject(tt.name, tt.value),
			config.NewObject("X-Ok", "fine", tt.name, []any{"first", tt.value}),
		} {
			base := compileIs(config.NewObject("headers", hs, "body", "a"), defaultsOf(nil), nil)
			built := compileIs(config.NewObject("headers", hs, "body", "b"), defaultsOf(nil), base)
			// Lines a decorate keeps from the base, and lines it puts where the base had others.
			kept := compileIs(config.NewObject("headers", &config.Object{Members: append(slices.Clone(hs.Members), config.Member{Key: "X-New", Value: "n"})}, "body", "c"), defaultsOf(nil), base)
			other := compileIs(config.NewObject("headers", config.NewObject("X-Ok", "fine"), "body", "a"), defaultsOf(nil), nil)
			replaced := compileIs(config.NewObject("headers", hs, "body", "d"), defaultsOf(nil), other)
			for _, w := range []*wire{base, built, kept, replaced} {
				_, err := (&Answer{out: w}).Status()
				got := ""
				if err != nil {
					c, _ := err.(*config.Error).Raw.Get("code")
					got = c.(string)
				}
				if got != tt.code {
					t.Errorf("Status of headers %s = %q, want %q", config.MarshalJSON(hs, 0), got, tt.code)
				}
			}
		}
	}
	if got := Latin1("caf\u00e9"); got != "caf\xe9" {
		t.Errorf("Latin1(café) = %q", got)
	}
	if s := "ascii"; Latin1(s) != s {
		t.Error("Latin1 changed ASCII")
	}
}

func TestBinaryBodyNotText(t *testing.T) {
	for resp, want := range map[string]bool{
		`{"is":{"_mode":"binary","body":7}}`:    true,
		`{"is":{"_mode":"binary","body":true}}`: true,
		`{"is":{"_mode":"binary","body":0}}`:    false, // falsy: the default body, ''
		`{"is":{"_mode":"binary","body":"QQ"}}`: false,
		`{"is":{"body":7}}`:                     false,
	} {
		if got := newIsResponse(mustJSON(t, resp), defaultsOf(nil)).http.binaryNotText; got != want {
			t.Errorf("%s: binaryNotText = %v, want %v", resp, got, want)
		}
	}
}

// TestJournalOfRecycledRequests serves requests as the http handler does, recycling each
// request whose answer keeps none of its strings: a recorded imposter's requests are recycled
// now (the journal copies them), and the journal still lists each as it was sent, in order.
func TestJournalOfRecycledRequests(t *testing.T) {
	im, err := New(impostertest.Def(t, strings.Replace(impostertest.SimpleStub, `"port":4545,`, `"port":4545,"recordRequests":true,`, 1)),
		Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	raws := []string{
		"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /hello?x=1&x=2 HTTP/1.1\r\nHost: b\r\nX-Latin: \xe9\r\n\r\n",
		"POST /form HTTP/1.1\r\nHost: c\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2",
		"PUT /other HTTP/1.1\r\nHost: dddddddddddddddddddddddddddddddddddddd\r\nContent-Length: 4\r\n\r\nbody",
	}
	recycled := 0
	for i := range 3 * len(raws) {
		req := request.Acquire()
		request.FromHTTP(impostertest.RequestCtx(t, raws[i%len(raws)]), req)
		a := im.Resolve(req)
		if im.Recyclable(&a) {
			recycled++
			request.Recycle(req)
		} else {
			request.Release(req)
		}
	}
	if recycled != 3*len(raws) {
		t.Errorf("%d of %d recorded requests recycled", recycled, 3*len(raws))
	}
	want := []string{
		`{"requestFrom":"::ffff:127.0.0.1:50000","method":"GET","path":"/hello","query":{},"headers":{"Host":"a"},"body":"","ip":"::ffff:127.0.0.1"}`,
		`{"requestFrom":"::ffff:127.0.0.1:50000","method":"GET","path":"/hello","query":{"x":["1","2"]},"headers":{"Host":"b","X-Latin":"é"},"body":"","ip":"::ffff:127.0.0.1"}`,
		`{"requestFrom":"::ffff:127.0.0.1:50000","method":"POST","path":"/form","query":{},"headers":{"Host":"c","Content-Type":"application/x-www-form-urlencoded","Content-Length":"7"},"body":"a=1&b=2","ip":"::ffff:127.0.0.1","form":{"a":"1","b":"2"}}`,
		`{"requestFrom":"::ffff:127.0.0.1:50000","method":"PUT","path":"/other","query":{},"headers":{"Host":"dddddddddddddddddddddddddddddddddddddd","Content-Length":"4"},"body":"body","ip":"::ffff:127.0.0.1"}`,
	}
	list := im.RecordedRequests()
	if len(list) != 3*len(raws) {
		t.Fatalf("journal lists %d requests, want %d", len(list), 3*len(raws))
	}
	for i, r := range list {
		if got := string(config.MarshalJSON(r.Request, 0)); got != want[i%len(want)] {
			t.Errorf("request %d lists\n%s\nwant\n%s", i, got, want[i%len(want)])
		}
	}
}

// TestHeaderMemoOwnsItsStrings: a headerMemo keeps copies of the names and values it was made
// from that are in memory the next request reuses, the others as they are, matches only
// headers equal to them member for member, and is not made for a value that is not a string.
func TestHeaderMemoOwnsItsStrings(t *testing.T) {
	buf := []byte("X-Path/first!")
	name, value := unsafe.String(&buf[0], 6), unsafe.String(&buf[6], 7)
	ho := config.NewObject("Content-Type", "text/plain", name, value)
	out := &wire{}
	out.compileHeaders(ho, nil)
	inBuf := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= uintptr(unsafe.Pointer(&buf[0])) && p < uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf))
	}
	m := newHeaderMemo(ho, out, inBuf)
	if m == nil {
		t.Fatal("no memo")
	}
	copy(buf, "X-Nope/other!")
	if !m.matches(config.NewObject("Content-Type", "text/plain", "X-Path", "/first!")) {
		t.Errorf("memo changed with the memory it was made from: %q", m.src)
	}
	if got := m.lines[1]; got.name != "X-Path" || got.value != "/first!" || !got.set || got.bad {
		t.Errorf("line %+v", got)
	}
	for _, other := range []*config.Object{
		config.NewObject("Content-Type", "text/plain", "X-Path", "/second"),
		config.NewObject("Content-Type", "text/plain"),
		config.NewObject("Content-Type", "text/plain", "X-Path", "/first!", "X-More", "1"),
		config.NewObject("Content-Type", "text/plain", "x-path", "/first!"),
		config.NewObject("Content-Type", "text/plain", "X-Path", []any{"/first!"}),
	} {
		if m.matches(other) {
			t.Errorf("memo matches %s", config.MarshalJSON(other, 0))
		}
	}
	if unsafe.StringData(m.src[0]) != unsafe.StringData(ho.Members[0].Key) || unsafe.StringData(m.lines[0].value) != unsafe.StringData("text/plain") {
		t.Error("memo copied a string that is not volatile")
	}
	if newHeaderMemo(config.NewObject("X-N", 1.0), out, inBuf) != nil || newHeaderMemo(config.NewObject("X-L", []any{"a"}), out, inBuf) != nil {
		t.Error("memo made for a value that is not a string")
	}
}

// TestIsFields: isFields takes the first member of each of the four names, and no other member
// (names of the same lengths included).
func TestIsFields(t *testing.T) {
	o := config.NewObject("bodx", "no", "_modf", "no", "headerz", "no", "statusCodf", "no", "x", "no")
	o.Members = append(o.Members, config.Member{Key: "body", Value: "b"}, config.Member{Key: "statusCode", Value: 201.0},
		config.Member{Key: "body", Value: "second"}, config.Member{Key: "_mode", Value: "binary"}, config.Member{Key: "headers", Value: "h"},
		config.Member{Key: "_mode", Value: "text"}, config.Member{Key: "statusCode", Value: 500.0})
	status, headers, body, mode := isFields(o)
	if status != 201.0 || headers != "h" || body != "b" || mode != "binary" {
		t.Errorf("isFields = %v %v %v %v", status, headers, body, mode)
	}
	if s, h, b, m := isFields(nil); s != nil || h != nil || b != nil || m != nil {
		t.Error("isFields(nil) found fields")
	}
	if s, h, b, m := isFields(config.NewObject("bodx", "no", "_modf", "no")); s != nil || h != nil || b != nil || m != nil {
		t.Error("isFields found a field of another name")
	}
}

// TestConstantDecorateFixed: a response whose decorates read only config.response is built for
// its first request and answered with that answer afterwards (static), in memory of its own: the
// slab and request memory its first answer was built in serve other requests afterwards. A
// decorate that reads the request is built for every request, and so is any with --debug.
func TestConstantDecorateFixed(t *testing.T) {
	imp := `{"protocol":"http","port":4545,"stubs":[
		{"predicates":[{"equals":{"path":"/c"}}],"responses":[{"is":{"headers":{"Content-Type":"text/plain"},"body":"body"},
			"_behaviors":{"decorate":"(config) => { config.response.body = config.response.body + '-constant'; config.response.headers['X-C'] = config.response.body + '-h'; }"}}]},
		{"responses":[{"is":{"headers":{"X-O":"o"},"body":"other"},
			"_behaviors":{"decorate":"(config) => { config.response.body = config.request.path + '-xxxxxxxxxxxxxxxxxxxxxxxx'; config.response.headers['X-C'] = config.request.path + '-yyyyyyyyyyyyyyyy'; }"}}]}]}`
	for _, debug := range []bool{false, true} {
		def := impostertest.Def(t, imp)
		log := slog.New(slog.DiscardHandler)
		im, err := New(def, Options{Logger: log, Script: script.New(script.Options{Logger: log}), Debug: debug})
		if err != nil {
			t.Fatal(err)
		}
		h := &testServer{im: im}
		stubs := im.tbl.Load().stubs
		constant, other := stubs[0].responses[0].(*isResponse), stubs[1].responses[0].(*isResponse)
		if constant.constant == debug || other.constant {
			t.Fatalf("debug %v: constant %v and %v", debug, constant.constant, other.constant)
		}
		for i, path := range []string{"/c", "/c", "/a-long-path-1", "/c", "/another-path-2", "/b", "/c"} {
			ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", path, "", ""))
			h.handle(ctx)
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("debug %v, request %d %s: %d %s", debug, i, path, ctx.Response.StatusCode(), ctx.Response.Body())
			}
			wantBody, wantH := path+"-xxxxxxxxxxxxxxxxxxxxxxxx", path+"-yyyyyyyyyyyyyyyy"
			if path == "/c" {
				wantBody, wantH = "body-constant", "body-constant-h"
			}
			if got := string(ctx.Response.Body()); got != wantBody {
				t.Errorf("debug %v, request %d %s: body %q, want %q", debug, i, path, got, wantBody)
			}
			if got := string(ctx.Response.Header.Peek("X-C")); got != wantH {
				t.Errorf("debug %v, request %d %s: X-C %q, want %q", debug, i, path, got, wantH)
			}
			if got := string(ctx.Response.Header.ContentType()); path == "/c" && got != "text/plain" {
				t.Errorf("debug %v, request %d: Content-Type %q", debug, i, got)
			}
		}
		if fixed := constant.fixed.Load() != nil; fixed == debug {
			t.Errorf("debug %v: fixed answer kept: %v", debug, fixed)
		}
		if other.fixed.Load() != nil {
			t.Errorf("debug %v: the request's decorate got a fixed answer", debug)
		}
	}
}

// TestShapedInjectAnswersAsBuilt: an inject function whose answer's members but the body are
// constants (script.Scope.InjectShape) answers from its compiled shape and the body of the call,
// exactly as the whole object built and compiled for each request answers: status, header lines,
// body, and errors, with a defaultResponse filling in.
func TestShapedInjectAnswersAsBuilt(t *testing.T) {
	fns := []struct {
		src    string
		shaped bool
	}{
		{`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`, true},
		{`(config) => ({ body: config.request.path })`, true},
		{`(config) => ({ body: config.request.query.q })`, true}, // undefined without q: goja's answer
		{`(config) => ({ statusCode: 201 })`, true},
		{`(config) => ({ statusCode: '404', headers: { 'X-N': 1, 'Content-Length': '99', 'Connection': 'close' }, body: config.request.method })`, true},
		{`(config) => ({ statusCode: 99, body: 'bad status' })`, true},
		{`(config) => ({ headers: { 'X-Bad': 'a\u0001b' }, body: 'bad header' })`, true},
		{`(config) => ({ headers: { 'X-W': 'caf\u00e9' }, body: config.request.path + '\u00e9' })`, true},
		{`(config) => ({ _mode: 'binary', body: 'QUJD' })`, true},
		{`(config) => ({ _mode: 'binary', body: 7 })`, true},
		{`(config) => ({ body: { path: config.request.path, n: 1, list: [1, 'a'] } })`, true},
		{`(config) => ({ body: config.request.path === '/empty' ? '' : 'full' })`, true},
		{`(config) => ({ body: JSON.stringify({ q: config.request.query }, null, 2) })`, true},
		{`(config) => ({ headers: { 'X-P': config.request.path }, body: 'x' })`, false},
	}
	reqs := []string{"/", "/a/b?q=1&r=2", "/empty", "/%C3%A9t%C3%A9?q=%E2%82%AC"}
	for _, fn := range fns {
		imp := `{"protocol":"http","port":4545,"defaultResponse":{"statusCode":202,"headers":{"X-Def":"d"},"body":"default body"},
			"stubs":[{"responses":[{"inject":` + strconv.Quote(fn.src) + `}]}]}`
		def := impostertest.Def(t, imp)
		log := slog.New(slog.DiscardHandler)
		im, err := New(def, Options{Logger: log, Script: script.New(script.Options{Logger: log})})
		if err != nil {
			t.Fatal(err)
		}
		h := &testServer{im: im}
		ir := im.tbl.Load().stubs[0].responses[0].(*injectResponse)
		if ir.shaped != fn.shaped {
			t.Fatalf("%s: shaped %v, want %v", fn.src, ir.shaped, fn.shaped)
		}
		answer := func(path string) string {
			ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", path, "", ""))
			h.handle(ctx)
			// Without the Date header: the two answers may be made in two different seconds.
			s := ctx.Response.String()
			if i := strings.Index(s, "\r\nDate: "); i >= 0 {
				if j := strings.Index(s[i+2:], "\r\n"); j >= 0 {
					s = s[:i] + s[i+2+j:]
				}
			}
			return s
		}
		for _, path := range reqs {
			got := answer(path)
			ir.shaped = false
			want := answer(path)
			ir.shaped = fn.shaped
			if got != want {
				t.Errorf("%s, %s:\nshaped %q\n built %q", fn.src, path, got, want)
			}
		}
	}
}

// TestTemplateAnswersRecycleTheRequest serves templated answers as the http handler does: a
// template without behaviors keeps none of the request's strings (its text is rendered and
// copied), so the request is recycled and its memory serves the next one; every answer, kept
// until the end, still reads as it was rendered, including a JSONPath the request named (kept
// in the compiled expressions' cache). With a behavior, or --debug, the request is released.
func TestTemplateAnswersRecycleTheRequest(t *testing.T) {
	tpl := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"is":{"statusCode":200,"template":true,` +
		`"headers":{"X-Path":"{{request.path.[1]}}","X-Each":"{{#each request.query.q}}{{this}};{{/each}}"},` +
		`"body":"{{request.method}} {{request.headers.X-Name}} {{jsonPath request.body request.query.p}} {{lookup request.headers 'x-name'}} {{#with request}}{{path}}{{/with}}"}BEHAVIORS}]}]}`
	serve := func(def string, debug bool) (recycled int) {
		im, err := New(impostertest.Def(t, def), Options{Logger: slog.New(slog.DiscardHandler), Debug: debug})
		if err != nil {
			t.Fatal(err)
		}
		type kept struct {
			body       []byte
			path, each string
			want       [3]string
		}
		var answers []kept
		for i := range 40 {
			p := []string{"$.name", "$.nick"}[i%2]
			name := strings.Repeat(string(rune('a'+i%26)), 1+i%7)
			raw := "POST /users/" + name + "?q=" + name + "&q=2&p=" + p + " HTTP/1.1\r\nHost: h\r\nX-Name: " + name +
				"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(`{"name":"N","nick":"K"}`)) + "\r\n\r\n" +
				`{"name":"N","nick":"K"}`
			req := request.Acquire()
			request.FromHTTP(impostertest.RequestCtx(t, raw), req)
			a := im.Resolve(req)
			err := im.Build(context.Background(), req, nil, nil, &a)
			if err != nil {
				t.Fatal(err)
			}
			selected := map[string]string{"$.name": "N", "$.nick": "K"}[p]
			k := kept{body: a.Body(), want: [3]string{"POST " + name + " " + selected + " " + name + " /users/" + name, name, name + ";2;"}}
			for _, h := range a.out.headers {
				switch h.name {
				case "X-Path":
					k.path = h.value
				case "X-Each":
					k.each = h.value
				}
			}
			answers = append(answers, k)
			if im.Recyclable(&a) {
				recycled++
				im.Done(&a)
				request.Recycle(req)
			} else {
				im.Done(&a)
				request.Release(req)
			}
		}
		for i, k := range answers {
			want := k.want[0]
			if string(k.body) != want || k.path != k.want[1] || k.each != k.want[2] {
				t.Errorf("answer %d reads %q, X-Path %q, X-Each %q; want %q, %q, %q", i, k.body, k.path, k.each, want, k.want[1], k.want[2])
			}
		}
		return recycled
	}
	if n := serve(strings.Replace(tpl, "BEHAVIORS", "", 1), false); n != 40 {
		t.Errorf("%d of 40 requests recycled, want all", n)
	}
	if n := serve(strings.Replace(tpl, "BEHAVIORS", `,"_behaviors":{"copy":{"from":"path","into":"${P}","using":{"method":"regex","selector":".*"}}}`, 1), false); n != 0 {
		t.Errorf("with a copy behavior: %d of 40 requests recycled, want none", n)
	}
	if n := serve(strings.Replace(tpl, "BEHAVIORS", "", 1), true); n != 0 {
		t.Errorf("with --debug: %d of 40 requests recycled, want none", n)
	}
}

// TestIsASCII: isASCII, eight bytes at a time, finds a byte past ASCII at every place of
// values shorter and longer than a word (the last word overlaps the ones before it).
func TestIsASCII(t *testing.T) {
	for n := range 26 {
		plain := strings.Repeat("a", n)
		if !isASCII(plain) {
			t.Errorf("%q: not ASCII", plain)
		}
		for at := range n {
			for _, c := range []byte{0x7f, 0x80, 0xc3, 0xff} {
				b := []byte(plain)
				b[at] = c
				if got, want := isASCII(string(b)), c < 0x80; got != want {
					t.Errorf("isASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// TestHeadersNotAnObject: headers that are a truthy value but not an object (the response's
// own, or the defaultResponse's for a response without headers) fail the request as
// Mountebank's postProcess does when it sets Connection on them in strict mode: a TypeError
// naming the value as V8 does, before an invalid status code; a binary body that is not text
// fails first. A falsy value is no headers, and an array is an object.
func TestHeadersNotAnObject(t *testing.T) {
	tests := []struct {
		name, resp, def, want string
	}{
		{"true", `{"is":{"headers":true}}`, ``, "Cannot create property 'Connection' on boolean 'true'"},
		{"string", `{"is":{"headers":"x"}}`, ``, "Cannot create property 'Connection' on string 'x'"},
		{"number", `{"is":{"headers":1.5}}`, ``, "Cannot create property 'Connection' on number '1.5'"},
		{"default's", `{"is":{"body":"b"}}`, `{"headers":5}`, "Cannot create property 'Connection' on number '5'"},
		{"falsy own, default's", `{"is":{"headers":0}}`, `{"headers":"d"}`, "Cannot create property 'Connection' on string 'd'"},
		{"before the status code", `{"is":{"statusCode":"abc","headers":true}}`, ``, "Cannot create property 'Connection' on boolean 'true'"},
		{"after a binary body that is not text", `{"is":{"_mode":"binary","body":5,"headers":true}}`, ``, "response.body.replace is not a function"},
		{"own object over default's", `{"is":{"headers":{"X-A":"1"}}}`, `{"headers":true}`, ""},
		{"false", `{"is":{"headers":false}}`, ``, ""},
		{"empty string", `{"is":{"headers":""}}`, ``, ""},
		{"array", `{"is":{"headers":[]}}`, ``, ""},
	}
	for _, tt := range tests {
		var def *config.Object
		if tt.def != "" {
			def = mustJSON(t, tt.def)
		}
		a := Answer{out: &newIsResponse(mustJSON(t, tt.resp), defaultsOf(def)).http}
		_, err := a.Status()
		got := ""
		if err != nil {
			got = err.Error()
			if ce, ok := err.(*config.Error); ok && ce.Raw != nil {
				m, _ := ce.Raw.Get("message") // the message as the answer shows it
				got, _ = m.(string)
			}
		}
		if got != tt.want {
			t.Errorf("%s: Status() error %q, want %q", tt.name, got, tt.want)
		}
		if tt.want != "" && strings.HasPrefix(tt.want, "Cannot") {
			if !a.HeadersNotObject() {
				t.Errorf("%s: HeadersNotObject() = false", tt.name)
			} else if e := a.HeadersError("Access-Control-Allow-Headers"); !strings.Contains(e.Error(), "'Access-Control-Allow-Headers' on ") {
				t.Errorf("%s: HeadersError = %q", tt.name, e.Error())
			}
		}
	}
}
