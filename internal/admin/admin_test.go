package admin

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// inmemClient serves a over fasthttputil's in-memory listener until the test ends and returns a
// client whose every request reaches it from the address from (nil: the listener's default).
func inmemClient(t *testing.T, a *API, from net.Addr) *fasthttp.Client {
	t.Helper()
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: a.Handler, NoDefaultServerHeader: true, NoDefaultContentType: true, Logger: quietLogger{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return &fasthttp.Client{Dial: func(string) (net.Conn, error) {
		if from != nil {
			return ln.DialWithLocalAddr(from)
		}
		return ln.Dial()
	}}
}

// answer is what a test reads back of one admin request.
type answer struct {
	status  int
	headers map[string]string
	body    string
}

func do(t *testing.T, c *fasthttp.Client, method, uri, body string, headers ...string) (answer, error) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://localhost:2525" + uri)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != "" {
		req.SetBodyString(body)
	}
	if err := c.Do(req, resp); err != nil {
		return answer{}, err
	}
	got := answer{status: resp.StatusCode(), headers: map[string]string{}, body: string(resp.Body())}
	for _, k := range resp.Header.PeekKeys() {
		got.headers[string(k)] = string(resp.Header.PeekBytes(k))
	}
	return got, nil
}

// sameJSON reports whether a and b are the same JSON value (key order aside). a must be valid
// UTF-8 (encoding/json would read an invalid byte as U+FFFD).
func sameJSON(a, b string) bool {
	if !utf8.ValidString(a) {
		return false
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

const (
	jsonType = "application/json; charset=utf-8"
	noSuch   = `{"errors":[{"code":"no such resource","message":"Try POSTing to /imposters first?"}]}`
)

// notFoundPage is Express's answer to an unknown route (test/compat golden admin-unknown-route).
// badRequestPage is Express's 400 page (Mountebank 2.9.1's answer to GET /imposters/25%zz).
const badRequestPage = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Bad Request</pre>\n</body>\n</html>\n"

func notFoundPage(method, path string) string {
	return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot " +
		method + " " + path + "</pre>\n</body>\n</html>\n"
}

// TestRoutes plays admin requests in order against one API whose first imposter is :port, and
// checks each answer's status, content type and body as Mountebank 2.9.1 gives them (the bodies
// are those of test/compat's golden files).
// TestParamsNotDecodable: a parameter of one of Mountebank's routes (:id, :stubIndex) that
// decodeURIComponent refuses is Express's 400 page, whatever the method; a path that no route
// has is its 404 page, the '%' encoded (Mountebank 2.9.1's answers). The requests are read from
// their raw text: a client would encode the '%'.
func TestParamsNotDecodable(t *testing.T) {
	a, im := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	port := strconv.Itoa(im.Port())
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/imposters/25%zz", 400, badRequestPage},
		{"HEAD", "/imposters/%zz", 400, ""},
		{"GET", "/imposters/%FF", 400, badRequestPage}, // not UTF-8
		{"PATCH", "/imposters/%zz/stubs", 400, badRequestPage},
		{"DELETE", "/imposters/" + port + "/stubs/%zz", 400, badRequestPage},
		{"GET", "/imposters/%zz/foo", 404, notFoundPage("GET", "/imposters/%25zz/foo")},
		{"GET", "/imposters%zz", 404, notFoundPage("GET", "/imposters%25zz")},
		{"GET", "/imposters/%E2%82%AC", 404, ""}, // decodable: no such imposter
		// A route word written with escapes is no route's: Express compares the path as sent.
		{"GET", "/imp%6fsters", 404, notFoundPage("GET", "/imp%6fsters")},
		{"GET", "/IMP%6FSTERS", 404, notFoundPage("GET", "/IMP%6FSTERS")},
		{"GET", "/imposters/" + port + "/%73tubs", 404, notFoundPage("GET", "/imposters/"+port+"/%73tubs")},
		{"GET", "/imposters/%73tubs", 404, ""},                                      // an :id of "stubs": no such imposter
		{"GET", "/imposters/" + fmt.Sprintf("%%%02X", port[0]) + port[1:], 200, ""}, // an :id is decoded
	} {
		var ctx fasthttp.RequestCtx
		raw := tc.method + " " + tc.path + " HTTP/1.1\r\nHost: localhost:2525\r\n\r\n"
		if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		a.Handler(&ctx)
		if got := ctx.Response.StatusCode(); got != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.status)
		}
		if tc.body != "" && string(ctx.Response.Body()) != tc.body {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.path, ctx.Response.Body(), tc.body)
		}
	}
}

func TestRoutes(t *testing.T) {
	a, im := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	c := inmemClient(t, a, nil)
	port := strconv.Itoa(im.Port())
	tests := []struct {
		name, method, uri, body string
		status                  int
		contentType             string
		want                    string // JSON compared as values; HTML compared as text
	}{
		{"home", "GET", "/", "", 200, jsonType,
			`{"_links":{"imposters":{"href":"http://localhost:2525/imposters"},"config":{"href":"http://localhost:2525/config"},"logs":{"href":"http://localhost:2525/logs"}}}`},
		{"unknown route", "GET", "/nope", "", 404, "text/html; charset=utf-8", notFoundPage("GET", "/nope")},
		{"unknown method", "PATCH", "/imposters", "", 404, "text/html; charset=utf-8", notFoundPage("PATCH", "/imposters")},
		{"POST to an imposter", "POST", "/imposters/" + port, "", 404, "text/html; charset=utf-8", notFoundPage("POST", "/imposters/"+port)},
		{"path is encoded", "GET", "/a<b", "", 404, "text/html; charset=utf-8", notFoundPage("GET", "/a%3Cb")},
		{"missing imposter", "GET", "/imposters/1", "", 404, jsonType, noSuch},
		{"imposter id not a number", "GET", "/imposters/abc", "", 404, jsonType, noSuch},
		{"imposter id not canonical", "GET", "/imposters/0" + port, "", 404, jsonType, noSuch},
		{"stubs of a missing imposter", "POST", "/imposters/1/stubs", `{"stub":{}}`, 404, jsonType, noSuch},
		{"invalid JSON", "POST", "/imposters", "{not json", 400, jsonType,
			`{"errors":[{"code":"invalid JSON","message":"Unable to parse body as JSON","source":"{not json"}]}`},
		// Express reads the body as UTF-8 text first: an invalid byte is U+FFFD.
		{"invalid JSON, invalid UTF-8", "POST", "/imposters", "\xff\xfe{\xc3", 400, jsonType,
			`{"errors":[{"code":"invalid JSON","message":"Unable to parse body as JSON","source":"\ufffd\ufffd{\ufffd"}]}`},
		{"PUT without imposters", "PUT", "/imposters", `{}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'imposters' is a required field"}]}`},
		// Mountebank's process dies on these; the imposter stays (the rows below still find it).
		{"PUT imposters an object", "PUT", "/imposters", `{"imposters":{}}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'imposters' must be an array"}]}`},
		{"PUT imposters a string", "PUT", "/imposters", `{"imposters":"x"}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'imposters' must be an array"}]}`},
		{"PUT imposters true", "PUT", "/imposters", `{"imposters":true}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'imposters' must be an array"}]}`},
		{"stub index out of range", "POST", "/imposters/" + port + "/stubs", `{"index":5,"stub":{"responses":[{"is":{}}]}}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'index' must be between 0 and the length of the stubs array"}]}`},
		{"no stub", "POST", "/imposters/" + port + "/stubs", `{}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"must contain 'stub' field"}]}`},
		{"empty responses", "POST", "/imposters/" + port + "/stubs", `{"stub":{"responses":[]}}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'responses' must be a non-empty array","source":{"responses":[]}}]}`},
		{"PUT stubs without stubs", "PUT", "/imposters/" + port + "/stubs", `{}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'stubs' is a required field"}]}`},
		{"PUT stubs not an array", "PUT", "/imposters/" + port + "/stubs", `{"stubs":1}`, 400, jsonType,
			`{"errors":[{"code":"bad data","message":"'stubs' must be an array"}]}`},
		{"stub index not a number", "PUT", "/imposters/" + port + "/stubs/abc", `{"responses":[{"is":{}}]}`, 404, jsonType,
			`{"errors":[{"code":"bad data","message":"'stubIndex' must be a valid integer, representing the array index position of the stub to replace"}]}`},
		{"stub index past the end", "DELETE", "/imposters/" + port + "/stubs/0", "", 404, jsonType,
			`{"errors":[{"code":"bad data","message":"'stubIndex' must be a valid integer, representing the array index position of the stub to replace"}]}`},
		{"add a stub", "POST", "/imposters/" + port + "/stubs", `{"stub":{"responses":[{"is":{"body":"x"}}]}}`, 200, jsonType, ""},
		{"replayable imposter", "GET", "/imposters/" + port + "?replayable=true", "", 200, jsonType,
			`{"protocol":"http","port":` + port + `,"name":"a","recordRequests":true,"stubs":[{"responses":[{"is":{"body":"x"}}]}]}`},
		{"delete the stub", "DELETE", "/imposters/" + port + "/stubs/0", "", 200, jsonType, ""},
		{"delete a missing imposter", "DELETE", "/imposters/1", "", 200, jsonType, `{}`},
	}
	for _, tc := range tests {
		got, err := do(t, c, tc.method, tc.uri, tc.body)
		if err != nil {
			t.Fatalf("%s: %s %s: %v", tc.name, tc.method, tc.uri, err)
		}
		if got.status != tc.status || got.headers["Content-Type"] != tc.contentType {
			t.Errorf("%s: %s %s: got %d %q, want %d %q (body %s)", tc.name, tc.method, tc.uri,
				got.status, got.headers["Content-Type"], tc.status, tc.contentType, got.body)
			continue
		}
		switch {
		case tc.want == "":
		case strings.HasPrefix(tc.contentType, "text/html"):
			if got.body != tc.want {
				t.Errorf("%s: %s %s: body\n%s\nwant\n%s", tc.name, tc.method, tc.uri, got.body, tc.want)
			}
		case !sameJSON(got.body, tc.want):
			t.Errorf("%s: %s %s: body\n%s\nwant\n%s", tc.name, tc.method, tc.uri, got.body, tc.want)
		}
	}
}

func TestAPIKey(t *testing.T) {
	a, _ := newTestAPI(t, Options{APIKey: "secret"})
	c := inmemClient(t, a, nil)
	const refused = `{"errors":[{"code":"unauthorized","message":"If you set the apiKey option, make sure you are sending the correct apiKey in the x-api-key header."}]}`
	tests := []struct {
		name    string
		headers []string
		status  int
	}{
		{"no key", nil, 401},
		{"empty key", []string{"x-api-key", ""}, 401},
		{"wrong key", []string{"x-api-key", "secreT"}, 401},
		{"longer key", []string{"x-api-key", "secret2"}, 401},
		{"right key", []string{"x-api-key", "secret"}, 200},
		{"header name is case-insensitive", []string{"X-API-KEY", "secret"}, 200},
	}
	for _, tc := range tests {
		got, err := do(t, c, "GET", "/imposters", "", tc.headers...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.status != tc.status {
			t.Errorf("%s: got %d %s, want %d", tc.name, got.status, got.body, tc.status)
			continue
		}
		if tc.status == 401 && !sameJSON(got.body, refused) {
			t.Errorf("%s: body %s, want %s", tc.name, got.body, refused)
		}
	}
}

func TestCORS(t *testing.T) {
	tests := []struct {
		name        string
		origin      string
		method      string
		headers     []string
		status      int
		wantHeaders map[string]string // "" = absent
	}{
		// Without --origin, Mountebank's cors middleware passes OPTIONS on to Express, which
		// lists the route's methods.
		{"OPTIONS without --origin", "", "OPTIONS", []string{"Access-Control-Request-Headers", "content-type,x-api-key"}, 200, map[string]string{
			"Allow":                        "GET,HEAD,POST,DELETE,PUT",
			"Content-Type":                 "text/html; charset=utf-8",
			"Access-Control-Allow-Methods": "",
			"Access-Control-Allow-Headers": "",
			"Access-Control-Allow-Origin":  "",
		}},
		{"preflight with --origin", "http://app.test", "OPTIONS", []string{"Access-Control-Request-Headers", "content-type,x-api-key"}, 204, map[string]string{
			"Access-Control-Allow-Origin":  "http://app.test",
			"Access-Control-Allow-Methods": "GET,HEAD,PUT,PATCH,POST,DELETE",
			"Access-Control-Allow-Headers": "content-type,x-api-key",
			"Vary":                         "Origin, Access-Control-Request-Headers",
			"Allow":                        "",
			"Content-Length":               "0",
		}},
		{"preflight with --origin without requested headers", "http://app.test", "OPTIONS", nil, 204, map[string]string{
			"Access-Control-Allow-Methods": "GET,HEAD,PUT,PATCH,POST,DELETE",
			"Access-Control-Allow-Headers": "",
		}},
		{"GET with --origin", "http://app.test", "GET", nil, 200, map[string]string{
			"Access-Control-Allow-Origin": "http://app.test",
		}},
		{"GET without --origin", "", "GET", nil, 200, map[string]string{
			"Access-Control-Allow-Origin": "",
		}},
	}
	for _, tc := range tests {
		a, _ := newTestAPI(t, Options{Origin: tc.origin})
		c := inmemClient(t, a, nil)
		got, err := do(t, c, tc.method, "/imposters", "", tc.headers...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.status != tc.status {
			t.Errorf("%s: got %d, want %d", tc.name, got.status, tc.status)
		}
		for k, want := range tc.wantHeaders {
			if got.headers[k] != want {
				t.Errorf("%s: header %s = %q, want %q", tc.name, k, got.headers[k], want)
			}
		}
	}
}

// TestOptionsAllow: without --origin, OPTIONS lists the methods of Mountebank's routes for the
// path, as Express does (Allow header and body), and a path no route matches is Express's 404.
func TestOptionsAllow(t *testing.T) {
	tests := []struct {
		path   string
		status int
		allow  string
	}{
		{"/", 200, "GET,HEAD"},
		{"/imposters", 200, "GET,HEAD,POST,DELETE,PUT"},
		{"/imposters/", 200, "GET,HEAD,POST,DELETE,PUT"},
		{"/imposters/4545", 200, "GET,HEAD,DELETE"},
		{"/imposters/abc", 200, "GET,HEAD,DELETE"},
		{"/imposters/4545/stubs", 200, "PUT,POST"},
		{"/imposters/4545/stubs/0", 200, "PUT,DELETE"},
		{"/imposters/4545/savedRequests", 200, "DELETE"},
		{"/imposters/4545/savedProxyResponses", 200, "DELETE"},
		{"/imposters/4545/requests", 200, "DELETE"},
		{"/imposters/4545/_requests", 200, "POST"},
		{"/imposters/4545/_requests/7", 200, "POST"},
		{"/config", 200, "GET,HEAD"},
		{"/logs", 200, "GET,HEAD"},
		{"/metrics", 200, "GET,HEAD"},
		{"/docs/api/stubs", 200, "GET,HEAD"},
		{"/nope", 404, ""},
		{"/imposters/4545/stubs/0/x", 404, ""},
		{"/imposters/4545/verify", 404, ""},
	}
	a, _ := newTestAPI(t, Options{})
	c := inmemClient(t, a, nil)
	for _, tc := range tests {
		got, err := do(t, c, "OPTIONS", tc.path, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got.status != tc.status || got.headers["Allow"] != tc.allow {
			t.Errorf("OPTIONS %s: %d Allow %q, want %d %q", tc.path, got.status, got.headers["Allow"], tc.status, tc.allow)
		}
		want := tc.allow
		if tc.status == 404 {
			want = notFoundPage("OPTIONS", tc.path)
		}
		if got.body != want {
			t.Errorf("OPTIONS %s: body %q, want %q", tc.path, got.body, want)
		}
	}
}

// TestRefusedClient shows --localOnly: a client it does not allow gets no answer at all.
func TestRefusedClient(t *testing.T) {
	a, _ := newTestAPI(t, Options{AllowIP: func(ip net.IP) bool { return ip.IsLoopback() }})
	far := inmemClient(t, a, &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000})
	if got, err := do(t, far, "GET", "/imposters", ""); err == nil {
		t.Errorf("a client --localOnly refuses got an answer: %d %s", got.status, got.body)
	}
	near := inmemClient(t, a, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000})
	if got, err := do(t, near, "GET", "/imposters", ""); err != nil || got.status != 200 {
		t.Errorf("loopback client: got %d %v, want 200", got.status, err)
	}
}

// TestLargeBodiesLetGo: the admin API lets go of a large request's body and of a large answer
// once it is done with them, where fasthttp would keep both buffers, at their size, for the
// connection's next request (a 100,000-stub POST kept ~75 MB resident that way).
func TestLargeBodiesLetGo(t *testing.T) {
	a, _ := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	var doc strings.Builder
	doc.WriteString(`{"protocol":"http","stubs":[`)
	for i := 0; doc.Len() <= 2*largeBody; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(`{"predicates":[{"equals":{"path":"/p/` + strconv.Itoa(i) + `"}}],"responses":[{"is":{"body":"x"}}]}`)
	}
	doc.WriteString(`]}`)
	var ctx fasthttp.RequestCtx
	ctx.Init2(nil, nil, false) // a server's ctx, which keeps its body buffers between requests
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("http://localhost:2525/imposters")
	ctx.Request.SetBodyString(doc.String())
	a.Handler(&ctx)
	if ctx.Response.StatusCode() != 201 || ctx.Response.Header.ContentLength() <= largeBody {
		t.Fatalf("status %d, %d bytes of answer", ctx.Response.StatusCode(), ctx.Response.Header.ContentLength())
	}
	if n := cap(ctx.Request.Body()); n > largeBody {
		t.Errorf("the request keeps a %d-byte body buffer", n)
	}
	ctx.Request.Reset() // as the server does once the answer is written
	ctx.Response.Reset()
	if n := cap(ctx.Response.SwapBody(nil)); n > largeBody {
		t.Errorf("the response keeps a %d-byte body buffer", n)
	}
	a.reg.DeleteAll()
}

// TestLinksFollowTheHost: the links and Location of each answer are built from that request's
// Host, whichever Host the request before sent (baseURL keeps the last base URL it made).
func TestLinksFollowTheHost(t *testing.T) {
	a, im := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	port := strconv.Itoa(im.Port())
	var created string // the port of the imposter the last POST created
	for _, tc := range []struct {
		method, path, host string
	}{
		{"GET", "/imposters/" + port, "a.test:1"},
		{"GET", "/imposters/" + port, "a.test:1"},
		{"GET", "/imposters/" + port, "b.test:1"}, // the same length
		{"POST", "/imposters", "b.test:1"},
		{"DELETE", "/imposters/", "b.test:1"}, // the one just created (its port below)
		{"POST", "/imposters", "longer.test:2525"},
		{"DELETE", "/imposters/", "a.test:1"},
		{"GET", "/imposters/" + port, ""}, // no Host: localhost and the API's port
	} {
		path, body := tc.path, ""
		if tc.method == "POST" {
			body = `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"x"}}]}]}`
		}
		if tc.method == "DELETE" {
			path += created
		}
		version, host := "HTTP/1.1", "Host: "+tc.host+"\r\n"
		base := "http://" + tc.host
		if tc.host == "" {
			version, host, base = "HTTP/1.0", "", "http://localhost:2525"
		}
		var ctx fasthttp.RequestCtx
		raw := tc.method + " " + path + " " + version + "\r\n" + host + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%s %s: %v", tc.method, path, err)
		}
		a.Handler(&ctx)
		got := string(ctx.Response.Body())
		self := base + "/imposters/"
		if !strings.Contains(got, `"href": "`+self) || strings.Count(got, `"href": "`) != strings.Count(got, `"href": "`+self) {
			t.Errorf("%s %s Host %q: links not under %s: %s", tc.method, path, tc.host, self, got)
		}
		if loc := string(ctx.Response.Header.Peek("Location")); tc.method == "POST" {
			var ok bool
			if created, ok = strings.CutPrefix(loc, self); !ok {
				t.Fatalf("%s %s Host %q: Location %q, want it under %s", tc.method, path, tc.host, loc, self)
			}
		}
	}
}
