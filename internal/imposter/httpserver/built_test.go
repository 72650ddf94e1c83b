package httpserver

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestBuiltAnswersConcurrently: answers built per request (inject, decorate) come from a pool
// of wires given back once written; requests served at once on many connections each get their
// own status, header lines and body.
func TestBuiltAnswersConcurrently(t *testing.T) {
	im := startBench(t, `{"protocol":"http","port":4545,"stubs":[`+
		`{"predicates":[{"startsWith":{"path":"/inject/"}}],"responses":[{"inject":"function (config) { return { statusCode: 201, headers: { 'X-Path': config.request.path, 'X-Two': 'b' }, body: 'p=' + config.request.path }; }"}]},`+
		`{"predicates":[{"startsWith":{"path":"/decorate/"}}],"responses":[{"is":{"statusCode":202,"headers":{"Content-Type":"text/plain"},"body":"d"},`+
		`"_behaviors":{"decorate":"(config) => { config.response.body = config.response.body + config.request.path; config.response.headers['X-Path'] = config.request.path; }"}}]}]}`)
	c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 16}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for i := range 200 {
				kind, status, body := "inject", 201, "p="
				if (g+i)%2 == 1 {
					kind, status, body = "decorate", 202, "d"
				}
				path := "/" + kind + "/" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
				req.SetRequestURI("http://" + c.Addr + path)
				if err := c.Do(req, resp); err != nil {
					t.Error(err)
					return
				}
				if resp.StatusCode() != status || string(resp.Body()) != body+path || string(resp.Header.Peek("X-Path")) != path {
					t.Errorf("%s: %d %q X-Path %q", path, resp.StatusCode(), resp.Body(), resp.Header.Peek("X-Path"))
					return
				}
				if kind == "inject" && string(resp.Header.Peek("X-Two")) != "b" {
					t.Errorf("%s: X-Two %q", path, resp.Header.Peek("X-Two"))
				}
			}
		}()
	}
	wg.Wait()
}

// TestRecycledRequestsKeepTheirStrings: a request whose answer the native evaluator built gives
// its memory to the next request once written, and nothing may still read it then. Served on
// many connections at once, each answer shows its own request's strings: a body that is the
// request's own text (so the request is not recycled), header values read from the request
// (copied when written), and a goja decorate that keeps the first path in the imposter's state
// (its requests are never recycled: the state's string must stay as it was).
func TestRecycledRequestsKeepTheirStrings(t *testing.T) {
	im := startBench(t, `{"protocol":"http","port":4545,"stubs":[`+
		`{"predicates":[{"startsWith":{"path":"/own/"}}],"responses":[{"inject":"function (config) { return { headers: { 'X-Path': config.request.path, 'X-Q': config.request.query.q }, body: config.request.path }; }"}]},`+
		`{"predicates":[{"startsWith":{"path":"/native/"}}],"responses":[{"inject":"function (config) { return { headers: { 'X-Path': config.request.path }, body: JSON.stringify({ p: config.request.path, q: config.request.query.q }) }; }"}]},`+
		`{"predicates":[{"startsWith":{"path":"/state/"}}],"responses":[{"is":{"body":"s"},`+
		`"_behaviors":{"decorate":"(config) => { config.state.first = config.state.first || config.request.path; config.response.body = config.state.first + '|' + config.request.path; }"}}]},`+
		// A native decorate, then one on goja that keeps the first's first result in the state.
		`{"predicates":[{"startsWith":{"path":"/chain/"}}],"responses":[{"is":{"body":"c"},"behaviors":[`+
		`{"decorate":"(config) => { config.response.body = config.response.body + config.request.path; }"},`+
		`{"decorate":"(config) => { config.state.chain = config.state.chain || config.response.body; config.response.body = config.state.chain + '|' + config.response.body; }"}]}]}]}`)
	c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 16}
	get := func(req *fasthttp.Request, resp *fasthttp.Response, path string) bool {
		req.SetRequestURI("http://" + c.Addr + path)
		if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
			t.Errorf("%s: %v %d %q", path, err, resp.StatusCode(), resp.Body())
			return false
		}
		return true
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	if !get(req, resp, "/state/first") || string(resp.Body()) != "/state/first|/state/first" {
		t.Fatalf("first state answer %q", resp.Body())
	}
	if !get(req, resp, "/chain/first") || string(resp.Body()) != "c/chain/first|c/chain/first" {
		t.Fatalf("first chain answer %q", resp.Body())
	}
	fasthttp.ReleaseRequest(req)
	fasthttp.ReleaseResponse(resp)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for i := range 400 {
				id := strconv.Itoa(g) + "-" + strconv.Itoa(i)
				switch i % 4 {
				case 0:
					path := "/own/" + id + "/" + strings.Repeat("x", i%50)
					if get(req, resp, path+"?q="+id) && (string(resp.Body()) != path || string(resp.Header.Peek("X-Path")) != path ||
						string(resp.Header.Peek("X-Q")) != id) {
						t.Errorf("%s: %q X-Path %q X-Q %q", path, resp.Body(), resp.Header.Peek("X-Path"), resp.Header.Peek("X-Q"))
						return
					}
				case 1:
					path := "/native/" + id
					if get(req, resp, path+"?q="+id) && (string(resp.Body()) != `{"p":"`+path+`","q":"`+id+`"}` ||
						string(resp.Header.Peek("X-Path")) != path) {
						t.Errorf("%s: %q X-Path %q", path, resp.Body(), resp.Header.Peek("X-Path"))
						return
					}
				case 3:
					path := "/chain/" + id
					if get(req, resp, path) && string(resp.Body()) != "c/chain/first|c"+path {
						t.Errorf("%s: %q", path, resp.Body())
						return
					}
				default:
					path := "/state/" + id
					if get(req, resp, path) && string(resp.Body()) != "/state/first|"+path {
						t.Errorf("%s: %q", path, resp.Body())
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestRecycledRequestsBodyWrittenLater: an answer's body is written after the handler returns,
// so a body in memory the next request reuses is either not reused (the request's own text: the
// request is not recycled) or copied (a string the native call made in the request's slab).
// Two requests served one after the other in this goroutine: the second takes the first's
// request and slab from the pools; the first's body must not have changed.
func TestRecycledRequestsBodyWrittenLater(t *testing.T) {
	for _, tc := range []struct{ name, response, want string }{
		{"request's text", `{"inject":"function (config) { return { headers: { 'X-Path': config.request.path }, body: config.request.path }; }"}`, "/first/aaaaaaaa"},
		{"slab's text", `{"inject":"function (config) { return { headers: { 'X-Path': config.request.path }, body: JSON.stringify({ p: config.request.path }) }; }"}`,
			`{"p":"/first/aaaaaaaa"}`},
		{"decorated", `{"is":{"headers":{"X-Path":"p"},"body":"b"},"_behaviors":{"decorate":"(config) => { config.response.body = config.response.body + config.request.path; config.response.headers['X-Path'] = config.request.path; }"}}`,
			"b/first/aaaaaaaa"},
	} {
		imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[` + tc.response + `]}]}`
		h, first := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/first/aaaaaaaa", "", ""), false)
		second := impostertest.RequestCtx(t, impostertest.RawRequest("GET", "/other/bbbbbbbb", "", ""))
		for range 3 {
			serveOnce(t, h, first)
			serveOnce(t, h, second)
			if got := string(first.Response.Body()); got != tc.want {
				t.Fatalf("%s: first body %q after the second request, want %q", tc.name, got, tc.want)
			}
			if got := string(first.Response.Header.Peek("X-Path")); got != "/first/aaaaaaaa" {
				t.Fatalf("%s: first X-Path %q after the second request", tc.name, got)
			}
		}
	}
}

// TestBuiltHeadersMemo: the header lines of a response's built answers are compiled once and
// kept (imposter's headerMemo) for answers with the same names and values: the kept lines are
// the first answer's, copied (its strings were in memory the next request reuses), and an
// answer with other headers gets its own. Inject and decorate, one request after the other.
func TestBuiltHeadersMemo(t *testing.T) {
	for _, tc := range []struct{ name, response string }{
		{"inject", `{"inject":"function (config) { return { headers: { 'Content-Type': 'text/plain', 'X-J': config.request.path + '!' }, body: 'b' }; }"}`},
		{"decorate", `{"is":{"headers":{"Content-Type":"text/plain"},"body":"b"},"_behaviors":{"decorate":"(config) => { config.response.headers['X-J'] = config.request.path + '!'; }"}}`},
		{"decorate-array", `{"is":{"headers":{"Content-Type":"text/plain","X-L":["1","2"]},"body":"b"},"_behaviors":{"decorate":"(config) => { config.response.headers['X-J'] = config.request.path + '!'; }"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newBenchHandler(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[`+tc.response+`]}]}`, impostertest.RawRequest("GET", "/", "", ""), false)
			for _, path := range []string{"/first", "/second", "/first", "/third-and-longer", "/first"} {
				ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", path, "", ""))
				serveOnce(t, h, ctx)
				if got := string(ctx.Response.Header.Peek("X-J")); got != path+"!" {
					t.Fatalf("%s: X-J %q", path, got)
				}
				if got := string(ctx.Response.Header.ContentType()); got != "text/plain" {
					t.Fatalf("%s: Content-Type %q", path, got)
				}
				if tc.name == "decorate-array" && !strings.Contains(ctx.Response.Header.String(), "\r\nX-L: 1\r\nX-L: 2\r\nX-J: "+path+"!\r\n") {
					t.Fatalf("%s: %q", path, ctx.Response.Header.String())
				}
			}
		})
	}
}

// TestHeaderValuesWrittenAsLatin1: a header value past ASCII goes on the wire one byte a
// character, as node writes it, whether compiled with the stub or built per request (the line's
// flag is set when it is compiled); an ASCII value is written as it is.
func TestHeaderValuesWrittenAsLatin1(t *testing.T) {
	for _, response := range []string{
		`{"is":{"headers":{"X-U":"grün","X-A":"plain"}}}`,
		`{"inject":"function (config) { return { headers: { 'X-U': 'gr\u00fcn', 'X-A': 'plain' } }; }"}`,
		`{"is":{"headers":{"X-A":"plain"}},"_behaviors":{"decorate":"(config) => { config.response.headers['X-U'] = 'gr\u00fcn'; }"}}`,
	} {
		h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[`+response+`]}]}`, impostertest.RawRequest("GET", "/", "", ""), false)
		for range 3 {
			serveOnce(t, h, ctx)
			if u, a := string(ctx.Response.Header.Peek("X-U")), string(ctx.Response.Header.Peek("X-A")); u != "gr\xfcn" || a != "plain" {
				t.Fatalf("%s: X-U %q X-A %q", response, u, a)
			}
		}
	}
}

// TestConstantDecorateOwnsItsAnswer: the answer kept for a decorate that reads only
// config.response (built in the first request's slab, whose strings and objects serve the next
// requests) stays whole while other requests reuse that memory, through the handler that
// releases slabs and recycles requests; a decorate reading the request still answers each one.
func TestConstantDecorateOwnsItsAnswer(t *testing.T) {
	imp := `{"protocol":"http","port":4545,"stubs":[
		{"predicates":[{"equals":{"path":"/c"}}],"responses":[{"is":{"headers":{"Content-Type":"text/plain"},"body":"body"},
			"_behaviors":{"decorate":"(config) => { config.response.body = config.response.body + '-constant'; config.response.headers['X-C'] = config.response.body + '-h\u00e9'; }"}}]},
		{"responses":[{"is":{"headers":{"X-O":"o"},"body":"other"},
			"_behaviors":{"decorate":"(config) => { config.response.body = config.request.path + '-xxxxxxxxxxxxxxxxxxxxxxxx'; config.response.headers['X-C'] = config.request.path + '-yyyyyyyyyyyyyyyy'; }"}}]}]}`
	h, _ := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/", "", ""), false)
	for i, path := range []string{"/c", "/c", "/a-long-path-1", "/c", "/another-path-2", "/b", "/c", "/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "/c"} {
		ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", path, "", ""))
		serveOnce(t, h, ctx)
		wantBody, wantH := path+"-xxxxxxxxxxxxxxxxxxxxxxxx", path+"-yyyyyyyyyyyyyyyy"
		if path == "/c" {
			wantBody, wantH = "body-constant", "body-constant-h\xe9" // the header as node writes it (latin1)
		}
		if got := string(ctx.Response.Body()); got != wantBody {
			t.Errorf("request %d %s: body %q, want %q", i, path, got, wantBody)
		}
		if got := string(ctx.Response.Header.Peek("X-C")); got != wantH {
			t.Errorf("request %d %s: X-C %q, want %q", i, path, got, wantH)
		}
	}
}
