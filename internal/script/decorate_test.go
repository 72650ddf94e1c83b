package script

import (
	"context"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// TestDecorateResults covers what Decorate returns for the ways a script can treat the response:
// the result's JSON, whether it is the input itself (nothing changed), whether it shares the
// input's headers and body (left as they were), and that the input is never changed.
func TestDecorateResults(t *testing.T) {
	const in = `{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"list":[1,2],"inner":{"k":"v"}}}`
	const (
		fresh    = iota // a new object
		same            // the input itself
		shareHdr        // a new object with the input's headers object
	)
	tests := []struct {
		name, src, want string
		sharing         int
	}{
		{"reads only", `function (config, response) { var s = response.body.inner.k + response.headers['X-A'] + JSON.stringify(response.headers) + Object.keys(response); }`,
			in, same},
		{"reads an array (which it could have changed)", `function (config, response) { var s = JSON.stringify(response); s.trim(); }`,
			in, shareHdr},
		{"stringifies the response (native: nothing can change it)", `function (config, response) { var s = JSON.stringify(response); }`,
			in, same},
		{"returns the response unchanged", `(config) => config.response`, in, same},
		{"returns a promise of the response unchanged", `(config) => Promise.resolve(config.response)`, in, same},
		{"sets the body", `function (config, response) { response.body = 'new'; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":"new"}`, shareHdr},
		{"sets a number body", `function (config, response) { response.body = 42; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":42}`, shareHdr},
		{"sets an object body", `function (config, response) { response.body = { a: [1, 'x'] }; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"a":[1,"x"]}}`, shareHdr},
		{"sets the body undefined", `function (config, response) { response.body = undefined; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"}}`, shareHdr},
		{"sets the body null", `function (config, response) { response.body = null; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":null}`, shareHdr},
		{"changes a nested object", `function (config, response) { response.body.inner.k = 'w'; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"list":[1,2],"inner":{"k":"w"}}}`, shareHdr},
		{"adds to a nested object", `function (config, response) { response.body.inner.n = 1; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"list":[1,2],"inner":{"k":"v","n":1}}}`, shareHdr},
		{"pushes to an array", `function (config, response) { response.body.list.push(3); }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"list":[1,2,3],"inner":{"k":"v"}}}`, shareHdr},
		{"reads an array only", `function (config, response) { var n = response.body.list.length; }`,
			in, shareHdr},
		{"adds a header", `(config) => { config.response.headers['X-Decorated'] = 'yes'; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1","X-Decorated":"yes"},"body":{"list":[1,2],"inner":{"k":"v"}}}`, fresh},
		{"adds a repeated header", `(config) => { config.response.headers['Set-Cookie'] = ['a=1', 'b=2']; }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1","Set-Cookie":["a=1","b=2"]},"body":{"list":[1,2],"inner":{"k":"v"}}}`, fresh},
		{"deletes a header", `(config) => { delete config.response.headers['Content-Type']; }`,
			`{"statusCode":200,"headers":{"X-A":"1"},"body":{"list":[1,2],"inner":{"k":"v"}}}`, fresh},
		{"deletes the headers", `(config) => { delete config.response.headers; }`,
			`{"statusCode":200,"body":{"list":[1,2],"inner":{"k":"v"}}}`, fresh},
		{"replaces the headers", `(config) => { config.response.headers = { 'X-B': 2 }; }`,
			`{"statusCode":200,"headers":{"X-B":2},"body":{"list":[1,2],"inner":{"k":"v"}}}`, fresh},
		{"sets a header to what it was", `(config) => { config.response.headers['X-A'] = config.response.headers['X-A']; }`,
			in, fresh},
		{"sets the headers to themselves", `(config) => { config.response.headers = config.response.headers; }`,
			in, shareHdr},
		{"replaces the response", `function (config, response) { return { statusCode: 201, headers: response.headers, body: 'r' }; }`,
			`{"statusCode":201,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":"r"}`, shareHdr},
		{"replaces the response with a new one", `function () { return { statusCode: 404 }; }`,
			`{"statusCode":404}`, fresh},
		{"returns the changed response", `function (config, response) { response.statusCode = 500; return response; }`,
			`{"statusCode":500,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":{"list":[1,2],"inner":{"k":"v"}}}`, shareHdr},
		{"returns a promise", `function (config, response) { return new Promise(r => setTimeout(() => { response.body = 'late'; r(response); }, 1)); }`,
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":"late"}`, shareHdr},
		{"returns a string", `function () { return 'text'; }`, `{}`, fresh},
		{"keeps the response's header object elsewhere", `function (config, response) { return { h: response.headers }; }`,
			`{"h":{"Content-Type":"text/plain","X-A":"1"}}`, fresh},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := mustObject(t, in)
			got, err := s.Decorate(context.Background(), tc.src, testRequest(), input)
			if err != nil {
				t.Fatalf("Decorate: %v", err)
			}
			if g := jsonOf(got); g != tc.want {
				t.Errorf("Decorate\n got %s\nwant %s", g, tc.want)
			}
			if g := jsonOf(input); g != in {
				t.Errorf("input changed to %s", g)
			}
			inHdr, _ := input.Get("headers")
			gotHdr, _ := got.Get("headers")
			switch {
			case tc.sharing == same && got != input:
				t.Errorf("result is a copy, want the input itself")
			case tc.sharing != same && got == input:
				t.Errorf("result is the input itself, want a new object")
			case tc.sharing == shareHdr && gotHdr != inHdr:
				t.Errorf("result's headers are a copy, want the input's")
			case tc.sharing == fresh && gotHdr != nil && gotHdr == inHdr:
				t.Errorf("result shares the input's headers, which the script changed")
			}
		})
	}
}

// TestDecorateKeptResponse returns, in later calls, a response a script kept in the imposter's
// state: the result must be a copy, never the object an earlier call was given (the caller may
// change the result, and the object may be a stub's own response).
func TestDecorateKeptResponse(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	ctx := context.Background()
	first := mustObject(t, `{"headers":{"X-A":"1"},"body":"first"}`)
	if _, err := s.Decorate(ctx, `(config) => { config.state.kept = config.response; }`, testRequest(), first); err != nil {
		t.Fatal(err)
	}
	for i, src := range []string{
		`(config) => config.state.kept`, // untouched
		`(config) => { config.state.kept.headers['X-B'] = '2'; return config.state.kept; }`, // changed
	} {
		got, err := s.Decorate(ctx, src, testRequest(), mustObject(t, `{"body":"second"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got == first {
			t.Fatalf("%d: result is the first call's response itself", i)
		}
		if h, _ := got.Get("headers"); h == nil {
			t.Fatalf("%d: result %s has no headers", i, jsonOf(got))
		} else if h, _ := first.Get("headers"); h == nil {
			t.Fatal("first response lost its headers")
		}
		gotHdr, _ := got.Get("headers")
		firstHdr, _ := first.Get("headers")
		if gotHdr == firstHdr {
			t.Errorf("%d: result shares the first call's headers object", i)
		}
		config.AsObject(gotHdr).Set("X-Changed", "by the caller")
		if jsonOf(first) != `{"headers":{"X-A":"1"},"body":"first"}` {
			t.Fatalf("%d: first call's response changed to %s", i, jsonOf(first))
		}
	}
	got, _ := s.Decorate(ctx, `(config) => config.state.kept`, testRequest(), mustObject(t, `{}`))
	if want := `{"headers":{"X-A":"1","X-B":"2"},"body":"first"}`; jsonOf(got) != want {
		t.Errorf("kept response = %s, want %s", jsonOf(got), want)
	}
}

// TestDecorateErrorsAfterFastPath checks Mountebank's failures of a decorate's result.
func TestDecorateErrorsAfterFastPath(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range []struct{ src, message string }{
		{`function () { return null; }`, ""}, // falsy: the response is used
		{`function () { return Promise.resolve(); }`, "Cannot read properties of undefined (reading 'statusCode')"},
		{`function () { return Promise.resolve(null); }`, "Cannot read properties of null (reading 'statusCode')"},
		{`function () { return Promise.reject(new Error('no')); }`, MsgDecorate},
	} {
		got, err := s.Decorate(context.Background(), tc.src, testRequest(), mustObject(t, `{"body":"b"}`))
		if tc.message == "" {
			if err != nil || jsonOf(got) != `{"body":"b"}` {
				t.Errorf("%s: %s, %v; want the response", tc.src, jsonOf(got), err)
			}
			continue
		}
		ce, ok := err.(*config.Error)
		if !ok || ce.Message != tc.message {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.message)
		}
	}
}

func mustObject(t *testing.T, s string) *config.Object {
	t.Helper()
	v, err := config.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*config.Object)
}

// TestDecorateConstant: a decorate function is constant (the same response in, the same out,
// whatever the request) only when it runs natively and reads nothing of its arguments but
// config.response; any read of the request, the state, the logger, config itself or another
// argument, and anything goja runs, is not.
func TestDecorateConstant(t *testing.T) {
	s := New(Options{}).NewScope(nil)
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{`(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`, true},
		{`function (config) { config.response.body = JSON.stringify({ code: config.response.statusCode }); }`, true},
		{`(config) => ({ statusCode: 201, body: 'fixed' })`, true},
		{`() => {}`, true},
		{`(config) => { var r = config.response; r.body = r.body + '!'; }`, true},
		{`(config) => { config.response.body = config.request.path; }`, false},
		{`(config) => { config.response.body = config['request'].path; }`, false},
		{`(config) => { config.response.body = config.state.n; }`, false},
		{`(config) => { var c = config; c.response.body = 'x'; }`, false},
		{`(config) => { config.response = { body: 'x' }; }`, false},
		{`(config) => { config.response.body = JSON.stringify(config); }`, false},
		{`(config, response) => { config.response.body = response.body; }`, false},
		{`(config, response, logger) => { logger.info('x'); }`, false},
		{`(config) => { config.response.body = String(Date.now()); }`, false},
		{`(config) => { config.response.body = '' + Math.random(); }`, false},
		{`(c) => { c.response.body = c.request.method; }`, false},
		{`(c) => { c.response.body = 'only ' + c.response.body; }`, true},
	} {
		if got := s.DecorateConstant(tc.src); got != tc.want {
			t.Errorf("%s: DecorateConstant %v, want %v", tc.src, got, tc.want)
		}
	}
}
