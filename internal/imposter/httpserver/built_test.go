package httpserver

import (
	"strconv"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
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
