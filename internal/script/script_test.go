package script

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func testRequest() *request.Request {
	r := &request.Request{
		Method:  "POST",
		Path:    "/users/42",
		Query:   []request.KV{{Name: "a", Value: "1"}, {Name: "a", Value: "2"}, {Name: "b", Value: "x"}},
		Headers: []request.KV{{Name: "Host", Value: "localhost"}, {Name: "X-Id", Value: "7"}, {Name: "Content-Type", Value: "application/json"}},
		Body:    `{"name":"ann","n":3}`,
	}
	r.SetClient("127.0.0.1", "127.0.0.1:5555")
	return r
}

func jsonOf(v config.Value) string { return string(config.MarshalJSON(v, 0)) }

// newEngine is an engine for tests. Tests that are not about the time limit pass time.Minute:
// far above what any call takes, even on a loaded machine, so a slow run is never a time-out.
func newEngine(t testing.TB, timeout time.Duration) *Engine {
	t.Helper()
	return New(Options{Timeout: timeout, Env: map[string]string{"MOCKD_TEST": "yes"}})
}

func TestResponse(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"config form sync", `function (config) { return { statusCode: 201, body: config.request.path }; }`,
			`{"statusCode":201,"body":"/users/42"}`},
		{"old positional form", `function (request, state, logger) { return { body: request.method + ' ' + request.path + ' ' + request.query.a.join('|') }; }`,
			`{"body":"POST /users/42 1|2"}`},
		{"downcast keys", `function (config) { return { body: Object.keys(config).join(',') }; }`,
			`{"body":"request,state,logger,callback,requestFrom,method,path,query,headers,body,ip"}`},
		{"request shape", `function (config) { return { body: config.request }; }`,
			`{"body":{"requestFrom":"127.0.0.1:5555","method":"POST","path":"/users/42","query":{"a":["1","2"],"b":"x"},"headers":{"Host":"localhost","X-Id":"7","Content-Type":"application/json"},"body":"{\"name\":\"ann\",\"n\":3}","ip":"127.0.0.1"}}`},
		{"async callback config", `function (config) { setTimeout(function () { config.callback({ body: 'later' }); }, 5); }`,
			`{"body":"later"}`},
		{"async callback positional", `function (request, state, logger, callback) { setTimeout(() => callback({ body: 'cb' }), 1); }`,
			`{"body":"cb"}`},
		{"sync callback", `function (config) { config.callback({ body: 'now' }); }`, `{"body":"now"}`},
		// The callback is made when first read (or passed at once to a function that may read
		// its fourth argument): it is still one function, and JSON leaves it out.
		{"callback is the fourth argument", `function (config, state, logger, done) { done({ body: String(config.callback === done) }); }`,
			`{"body":"true"}`},
		{"callback through arguments", `function (config) { arguments[3]({ body: String(arguments[3] === config.callback) }); }`,
			`{"body":"true"}`},
		{"callback read twice is one function", `function (config) { return { body: String(config.callback === config.callback) + typeof config.callback }; }`,
			`{"body":"truefunction"}`},
		{"config as JSON leaves the callback out", `function (config) { return { body: Object.keys(JSON.parse(JSON.stringify(config))).join(',') }; }`,
			`{"body":"request,state,logger,requestFrom,method,path,query,headers,body,ip"}`},
		{"config returned whole leaves the callback out", `function (config) { return { body: { method: config.method, c: config } }; }`,
			`{"body":{"method":"POST","c":{"request":{"requestFrom":"127.0.0.1:5555","method":"POST","path":"/users/42","query":{"a":["1","2"],"b":"x"},"headers":{"Host":"localhost","X-Id":"7","Content-Type":"application/json"},"body":"{\"name\":\"ann\",\"n\":3}","ip":"127.0.0.1"},"state":{},"logger":{},"requestFrom":"127.0.0.1:5555","method":"POST","path":"/users/42","query":{"a":["1","2"],"b":"x"},"headers":{"Host":"localhost","X-Id":"7","Content-Type":"application/json"},"body":"{\"name\":\"ann\",\"n\":3}","ip":"127.0.0.1"}}}`},
		{"promise", `function (config) { return new Promise(r => setTimeout(() => r({ body: 'p' }), 2)); }`, `{"body":"p"}`},
		{"string result is empty response", `function () { return 'hello'; }`, `{}`},
		{"undefined fields dropped", `function () { return { a: undefined, f: function () {}, n: NaN, d: [undefined, 1] }; }`,
			`{"n":null,"d":[null,1]}`},
		{"arrow function", `(config) => ({ body: config.request.headers['X-Id'] })`, `{"body":"7"}`},
		{"Buffer and process", `function () { return { body: Buffer.from('hi').toString('base64') + Buffer.from('aGk=', 'base64').toString() + process.env.MOCKD_TEST }; }`,
			`{"body":"aGk=hiyes"}`},
		{"require util", `function () { return { body: require('util').format('%s-%d', 'a', 5) }; }`, `{"body":"a-5"}`},
		{"require crypto", `function () { return { body: require('crypto').createHash('md5').update('abc').digest('hex') }; }`,
			`{"body":"900150983cd24fb0d6963f7d28e17f72"}`},
		{"this is undefined (strict)", `function () { return { body: typeof this }; }`, `{"body":"undefined"}`},
		{"JSON body from request", `function (config) { var b = JSON.parse(config.request.body); return { body: { hello: b.name, n: b.n + 1 } }; }`,
			`{"body":{"hello":"ann","n":4}}`},
	}
	e := newEngine(t, time.Minute)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := e.NewScope(nil)
			got, err := s.Response(context.Background(), tc.src, testRequest())
			if err != nil {
				t.Fatalf("Response(%s): %v", tc.src, err)
			}
			if g := jsonOf(got); g != tc.want {
				t.Errorf("Response(%s)\n got %s\nwant %s", tc.src, g, tc.want)
			}
		})
	}
}

// A callback kept from an earlier call answers nothing in a later one: each call has its own.
func TestResponseOldCallback(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for i, tc := range []struct{ src, want string }{
		{`function (config) { config.state.old = config.callback; config.callback({ body: 'first' }); }`, `{"body":"first"}`},
		{`function (config) { config.state.old({ body: 'old' }); return { body: 'second' }; }`, `{"body":"second"}`},
		{`function (config) { config.state.old({ body: 'old' }); setTimeout(() => config.callback({ body: 'third' }), 1); }`, `{"body":"third"}`},
	} {
		got, err := s.Response(context.Background(), tc.src, testRequest())
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if g := jsonOf(got); g != tc.want {
			t.Errorf("call %d = %s, want %s", i, g, tc.want)
		}
	}
}

func TestResponseErrors(t *testing.T) {
	tests := []struct {
		name, src, message, data string // data "-" means absent
	}{
		{"throw", `function (config) { throw new Error('boom'); }`, MsgResponse, "boom"},
		{"reference error", `function (config) { return nothing.x; }`, MsgResponse, "nothing is not defined"},
		{"thrown string has no data", `function () { throw 'str'; }`, MsgResponse, "-"},
		{"strict mode", `function () { undeclared = 1; return {}; }`, MsgResponse, "undeclared is not defined"},
		{"syntax error", `function (config) { return {`, MsgResponse, ""},
		{"never calls back", `function (config) { }`, MsgResponse, ""},
		{"rejected promise", `function () { return Promise.reject(new Error('no')); }`, MsgResponse, "no"},
		{"require of a module mockd lacks", `function () { return require('child_process'); }`, MsgResponse, "Cannot find module 'child_process'"},
		{"fs error", `function () { return require('fs').readFileSync('/nonexistent/x'); }`, MsgResponse, "ENOENT: no such file or directory, open '/nonexistent/x'"},
	}
	e := newEngine(t, time.Minute)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.NewScope(nil).Response(context.Background(), tc.src, testRequest())
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Response(%s) error = %v, want *config.Error", tc.src, err)
			}
			if ce.Code != config.CodeInvalidInjection || ce.Message != tc.message {
				t.Errorf("Response(%s) = %q/%q, want invalid injection/%q", tc.src, ce.Code, ce.Message, tc.message)
			}
			src := config.AsObject(ce.Source)
			if s, _ := src.Get("source"); s != responseSource(tc.src) {
				t.Errorf("source = %v, want %q", s, responseSource(tc.src))
			}
			data, has := src.Get("data")
			switch {
			case tc.data == "-" && has:
				t.Errorf("data = %v, want absent", data)
			case tc.data != "-" && tc.data != "" && data != tc.data:
				t.Errorf("data = %v, want %q", data, tc.data)
			}
		})
	}
}

func TestResponseNull(t *testing.T) {
	_, err := newEngine(t, time.Minute).NewScope(nil).Response(context.Background(), `function () { return null; }`, testRequest())
	if err == nil || !strings.Contains(err.Error(), "reading 'statusCode'") {
		t.Errorf("null response error = %v", err)
	}
}

func TestStatePersistsAndIsolated(t *testing.T) {
	e := newEngine(t, time.Minute)
	a, b := e.NewScope(nil), e.NewScope(nil)
	const resp = `function (config) { config.state.n = (config.state.n || 0) + 1; return { body: String(config.state.n) }; }`
	const pred = `function (config) { return config.state.n === 2; }`
	const old = `function (request, state, logger, callback, imposterState) { state.m = (state.m || 0) + 10; return { body: state.m + '/' + imposterState.n }; }`
	ctx := context.Background()
	for i, want := range []string{"1", "2"} {
		got, err := a.Response(ctx, resp, testRequest())
		if err != nil || jsonOf(got) != `{"body":"`+want+`"}` {
			t.Fatalf("call %d: %v %v, want body %s", i, jsonOf(got), err, want)
		}
	}
	if ok, err := a.Predicate(pred, testRequest()); !ok || err != nil {
		t.Errorf("predicate on shared state = %v, %v; want true", ok, err)
	}
	if ok, err := b.Predicate(pred, testRequest()); ok || err != nil {
		t.Errorf("predicate on other scope = %v, %v; want false", ok, err)
	}
	// The positional state is Mountebank's injectState, not imposterState.
	got, err := a.Response(ctx, old, testRequest())
	if err != nil || jsonOf(got) != `{"body":"10/2"}` {
		t.Errorf("positional state: %s %v", jsonOf(got), err)
	}
	dec := `function (config, response) { response.body = 'n=' + config.state.n; }`
	got, err = a.Decorate(ctx, dec, testRequest(), config.NewObject("body", "x"))
	if err != nil || jsonOf(got) != `{"body":"n=2"}` {
		t.Errorf("decorate state: %s %v", jsonOf(got), err)
	}
}

func TestPredicate(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`function (config) { return config.request.path === '/users/42'; }`, true},
		{`function (config) { return config.path === '/nope'; }`, false},
		{`function (config, logger, imposterState) { logger.info('x %s', 1); return typeof imposterState === 'object'; }`, true},
		{`function (request) { return request.headers['X-Id'] === '7'; }`, true},
		{`function () { return 'non-empty'; }`, true},
		{`function () { return 0; }`, false},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		got, err := s.Predicate(tc.src, testRequest())
		if err != nil || got != tc.want {
			t.Errorf("Predicate(%s) = %v, %v; want %v", tc.src, got, err, tc.want)
		}
	}
	_, err := s.Predicate(`function () { throw new Error('p'); }`, testRequest())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Message != MsgPredicate {
		t.Errorf("throwing predicate error = %v", err)
	}
}

func TestDecorate(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"modify in place", `function (request, response) { response.body = response.body + request.path; }`, `{"statusCode":200,"body":"x/users/42"}`},
		{"config form", `function (config) { config.response.headers = { 'X-A': config.request.method }; }`, `{"statusCode":200,"body":"x","headers":{"X-A":"POST"}}`},
		{"replace", `function (config) { return { statusCode: 202, body: Object.keys(config).join(',') }; }`,
			`{"statusCode":202,"body":"request,response,logger,state,requestFrom,method,path,query,headers,body,ip"}`},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		in := config.NewObject("statusCode", 200.0, "body", "x")
		got, err := s.Decorate(context.Background(), tc.src, testRequest(), in)
		if err != nil || jsonOf(got) != tc.want {
			t.Errorf("%s: Decorate = %s, %v; want %s", tc.name, jsonOf(got), err, tc.want)
		}
		if jsonOf(in) != `{"statusCode":200,"body":"x"}` {
			t.Errorf("%s: input changed to %s", tc.name, jsonOf(in))
		}
	}
	_, err := s.Decorate(context.Background(), `function () { throw new Error('d'); }`, testRequest(), config.NewObject())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Message != MsgDecorate {
		t.Errorf("throwing decorate error = %v", err)
	}
}

func TestWait(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	ms, err := s.Wait(`function () { return 40 + 2; }`)
	if err != nil || ms != 42 {
		t.Errorf("Wait = %v, %v; want 42", ms, err)
	}
	_, err = s.Wait(`function () { throw new Error('w'); }`)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Message != MsgWait || jsonOf(ce.Source) != `{"source":"function () { throw new Error('w'); }","data":"w"}` {
		t.Errorf("throwing wait error = %v %s", err, jsonOf(ce.Source))
	}
}

func TestTimeout(t *testing.T) {
	e := newEngine(t, 100*time.Millisecond)
	s := e.NewScope(nil)
	for _, src := range []string{
		`function () { while (true) {} }`,
		`function (config) { setTimeout(function () { config.callback({}); }, 10000); }`,
		`function () { return new Promise(function () { setInterval(function () {}, 5); }); }`,
	} {
		_, err := s.Response(context.Background(), src, testRequest())
		if err == nil || !strings.Contains(jsonOf(err.(*config.Error).Source), "timed out") {
			t.Errorf("%s: error = %v, want a time-out", src, err)
		}
		got, err := s.Response(context.Background(), `function () { return { body: 'ok' }; }`, testRequest())
		if err != nil || jsonOf(got) != `{"body":"ok"}` {
			t.Errorf("after %s: %s %v", src, jsonOf(got), err)
		}
	}
	if ok, err := s.Predicate(`function () { for (;;) {} }`, testRequest()); ok || err == nil {
		t.Errorf("endless predicate = %v, %v", ok, err)
	}
	if _, err := s.Wait(`function () { for (;;) {} }`); err == nil {
		t.Errorf("endless wait succeeded")
	}
}

func TestConcurrent(t *testing.T) {
	e := newEngine(t, time.Minute)
	scopes := []*Scope{e.NewScope(nil), e.NewScope(nil)}
	const src = `function (config) { config.state.n = (config.state.n || 0) + 1; return { body: config.request.path }; }`
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s := scopes[g%2]
			for i := 0; i < 50; i++ {
				got, err := s.Response(context.Background(), src, testRequest())
				if err != nil || jsonOf(got) != `{"body":"/users/42"}` {
					t.Errorf("concurrent call: %s %v", jsonOf(got), err)
					return
				}
				if _, err := s.Decorate(context.Background(), `function (c, r) { r.body = 'd'; }`, testRequest(), config.NewObject("body", "x")); err != nil {
					t.Errorf("concurrent decorate: %v", err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	for i, s := range scopes {
		got, _ := s.Response(context.Background(), `function (config) { return { body: String(config.state.n) }; }`, testRequest())
		if jsonOf(got) != `{"body":"200"}` {
			t.Errorf("scope %d state after concurrent calls = %s, want 200", i, jsonOf(got))
		}
	}
}

func TestLazyObjects(t *testing.T) {
	r := testRequest()
	r.Headers = append(r.Headers, request.KV{Name: "X-Id", Value: "8"}, request.KV{Name: "X-E", Value: ""}, request.KV{Name: "X-E", Value: "later"})
	tests := []struct{ src, want string }{
		{`function (c) { return { body: c.request.headers['X-Id'] }; }`, `{"body":["7","8"]}`},
		{`function (c) { return { body: c.request.headers['X-E'] }; }`, `{"body":"later"}`}, // headersMap replaces an empty value
		{`function (c) { c.request.path = '/changed'; return { body: c.path + ' ' + c.request.path }; }`, `{"body":"/users/42 /changed"}`},
		{`function (c) { c.request.query.extra = 'e'; return { body: c.query === c.request.query && c.query.extra === 'e' }; }`, `{"body":true}`},
		{`function (c) { delete c.request.headers; c.request.added = 1; return { body: Object.keys(c.request).join(',') }; }`,
			`{"body":"requestFrom,method,path,query,body,ip,added"}`},
		{`function (c) { return { body: JSON.parse(JSON.stringify(c.request.query)) }; }`, `{"body":{"a":["1","2"],"b":"x"}}`},
		{`function (c) { var n = 0; for (var k in c.request) { n++; } return { body: n + ' ' + ('path' in c.request) + ' ' + c.request.hasOwnProperty('ip') }; }`, `{"body":"7 true true"}`},
		{`function (c) { return { body: Object.assign({}, c.request.headers) }; }`, `{"body":{"Host":"localhost","X-Id":["7","8"],"Content-Type":"application/json","X-E":"later"}}`},
		{`function (c) { c.state.req = c.request; return { body: c.state.req.method }; }`, `{"body":"POST"}`},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		got, err := s.Response(context.Background(), tc.src, r)
		if err != nil || jsonOf(got) != tc.want {
			t.Errorf("Response(%s) = %s, %v; want %s", tc.src, jsonOf(got), err, tc.want)
		}
	}
	// A request kept in state from an earlier call still reads the same values after the caller
	// reuses its Request.
	s2 := newEngine(t, time.Minute).NewScope(nil)
	pooled := testRequest()
	if _, err := s2.Response(context.Background(), `function (c) { c.state.req = c.request; return {}; }`, pooled); err != nil {
		t.Fatal(err)
	}
	pooled.Reset()
	pooled.Path, pooled.Headers = "/other", append(pooled.Headers, request.KV{Name: "Zzz", Value: "reused"})
	got, err := s2.Response(context.Background(), `function (c) { return { body: c.state.req.path + ' ' + Object.keys(c.state.req.headers).join(',') }; }`, pooled)
	if err != nil || jsonOf(got) != `{"body":"/users/42 Host,X-Id,Content-Type"}` {
		t.Errorf("request kept in state: %s %v", jsonOf(got), err)
	}
	got, err = s.Response(context.Background(), `function (c) { return { body: c.state.req.path }; }`, testRequest())
	if err != nil || jsonOf(got) != `{"body":"/users/42"}` {
		t.Errorf("request kept in state: %s %v", jsonOf(got), err)
	}
}

func TestRequestObject(t *testing.T) {
	r := testRequest()
	r.HasForm, r.Form = true, []request.KV{{Name: "f", Value: "1"}}
	want := `{"requestFrom":"127.0.0.1:5555","method":"POST","path":"/users/42","query":{"a":["1","2"],"b":"x"},"headers":{"Host":"localhost","X-Id":"7","Content-Type":"application/json"},"body":"{\"name\":\"ann\",\"n\":3}","ip":"127.0.0.1","form":{"f":"1"}}`
	if got := jsonOf(Request(r)); got != want {
		t.Errorf("Request = %s\nwant %s", got, want)
	}
	tcp := (&request.Request{TCP: true}).SetDataText("hello")
	tcp.SetClient("1.2.3.4", "1.2.3.4:5")
	if got := jsonOf(Request(tcp)); got != `{"requestFrom":"1.2.3.4:5","ip":"1.2.3.4","data":"hello"}` {
		t.Errorf("tcp Request = %s", got)
	}
}

// TestProgramCacheBounded checks that compiled programs of ever-new scripts do not accumulate.
func TestProgramCacheBounded(t *testing.T) {
	e := newEngine(t, time.Minute)
	for i := 0; i < programCacheLimit+300; i++ {
		if err := e.Check("() => " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	e.programs.Range(func(any, any) bool { n++; return true })
	if n > programCacheLimit {
		t.Fatalf("program cache holds %d programs, limit %d", n, programCacheLimit)
	}
}

// TestTimeoutAcrossCalls checks the time limit of calls that follow one another: a call may run
// past the deadline of the call before it, and a call that runs too long is stopped at its own
// deadline, not at the one of the call before it. Only lower bounds on time are checked: a slow
// machine makes the calls longer, never shorter.
func TestTimeoutAcrossCalls(t *testing.T) {
	// Wide margins, so a loaded machine (a late start of the busy call) cannot fail it: the busy
	// call takes 2.5 s of its own 4 s and still runs past the quick call's deadline, at 4 s.
	const limit = 4 * time.Second
	s := newEngine(t, limit).NewScope(nil)
	quick := `function () { return 1; }`
	busy := `function () { var end = Date.now() + 2500; while (Date.now() < end) {} return 1; }`
	for i := 0; i < 2; i++ {
		if _, err := s.Wait(quick); err != nil {
			t.Fatal(err)
		}
		time.Sleep(limit / 2)
		// Runs from limit/2 to limit/2+2.5s after the quick call began: past its deadline.
		if _, err := s.Wait(busy); err != nil {
			t.Fatalf("round %d: a call within its own limit failed: %v", i, err)
		}
	}
	if _, err := s.Wait(quick); err != nil {
		t.Fatal(err)
	}
	time.Sleep(limit / 2)
	start := time.Now()
	if _, err := s.Wait(`function () { for (;;) {} }`); err == nil || !strings.Contains(err.Error(), "invalid wait injection") {
		t.Fatalf("endless call: %v, want a time-out", err)
	}
	// Stopped at the quick call's deadline, it would have run about limit/2.
	if el := time.Since(start); el < limit*9/10 {
		t.Errorf("endless call stopped after %v, before its own limit of %v", el, limit)
	}
	if ms, err := s.Wait(`function () { return 5; }`); err != nil || ms != 5 {
		t.Errorf("call after a time-out: %v, %v", ms, err)
	}
}
