package httpserver

import (
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestPreflightLeavesCORSInDefaultHeaders: Mountebank's http server writes a preflight's
// Access-Control-Allow-* headers into the headers object of its answer, which for an answer
// without headers of its own is the defaultResponse's, the same object every time: from then
// on every answer without headers of its own carries the latest such preflight's values (a
// configured one of those names keeps its place and spelling). Answers with headers of their
// own never do, nor any answer of an imposter without allowCORS or without default headers.
func TestPreflightLeavesCORSInDefaultHeaders(t *testing.T) {
	const stubs = `"stubs":[{"predicates":[{"equals":{"path":"/own"}}],"responses":[{"is":{"headers":{"X-O":"1"},"body":"own"}}]},` +
		`{"predicates":[{"equals":{"path":"/bare"}}],"responses":[{"is":{"body":"bare"}}]},` +
		`{"predicates":[{"equals":{"path":"/inject"}}],"responses":[{"inject":"function () { return { body: 'i' }; }"}]}]`
	type step struct {
		method, path, origin string // a preflight when origin is set
		want                 string // the answer's header lines (past Date and Content-*), in any order and case
	}
	pre := func(path, origin string) step { return step{method: "OPTIONS", path: path, origin: origin} }
	tests := []struct {
		name, def string
		steps     []step
	}{
		{"leaks", `{"protocol":"http","allowCORS":true,"defaultResponse":{"headers":{"X-D":"1","access-control-allow-origin":"*"}},` + stubs + `}`, []step{
			{method: "GET", path: "/none", want: "X-D: 1|access-control-allow-origin: *"},
			{method: "OPTIONS", path: "/own", origin: "http://o", want: "Access-Control-Allow-Headers: X-H|Access-Control-Allow-Methods: PUT|Access-Control-Allow-Origin: http://o|X-O: 1"},
			{method: "GET", path: "/none", want: "X-D: 1|access-control-allow-origin: *"},
			pre("/bare", "http://a"),
			{method: "GET", path: "/none", want: "Access-Control-Allow-Headers: X-H|Access-Control-Allow-Methods: PUT|X-D: 1|access-control-allow-origin: http://a"},
			{method: "POST", path: "/bare", want: "Access-Control-Allow-Headers: X-H|Access-Control-Allow-Methods: PUT|X-D: 1|access-control-allow-origin: http://a"},
			{method: "GET", path: "/inject", want: "Access-Control-Allow-Headers: X-H|Access-Control-Allow-Methods: PUT|X-D: 1|access-control-allow-origin: http://a"},
			{method: "GET", path: "/own", want: "X-O: 1"},
			pre("/none", "http://b"),
			{method: "GET", path: "/bare", want: "Access-Control-Allow-Headers: X-H|Access-Control-Allow-Methods: PUT|X-D: 1|access-control-allow-origin: http://b"},
		}},
		{"no default headers", `{"protocol":"http","allowCORS":true,"defaultResponse":{"statusCode":201},` + stubs + `}`, []step{
			pre("/bare", "http://a"),
			{method: "GET", path: "/bare", want: ""},
		}},
		{"no allowCORS", `{"protocol":"http","defaultResponse":{"headers":{"X-D":"1"}},` + stubs + `}`, []step{
			{method: "OPTIONS", path: "/bare", origin: "http://a", want: "X-D: 1"},
			{method: "GET", path: "/bare", want: "X-D: 1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := startBench(t, tt.def)
			c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port())}
			for i, st := range tt.steps {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.Header.SetMethod(st.method)
				req.SetRequestURI("http://" + c.Addr + st.path)
				if st.origin != "" {
					req.Header.Set("Origin", st.origin)
					req.Header.Set("Access-Control-Request-Method", "PUT")
					req.Header.Set("Access-Control-Request-Headers", "X-H")
				}
				if err := c.Do(req, resp); err != nil {
					t.Fatal(err)
				}
				var lines []string
				for _, l := range strings.Split(strings.TrimSpace(resp.Header.String()), "\r\n")[1:] {
					// fasthttp's client spells names its way and shows a Content-Type of its own
					l = strings.ToLower(l)
					if !strings.HasPrefix(l, "date:") && !strings.HasPrefix(l, "content-length:") && !strings.HasPrefix(l, "content-type:") {
						lines = append(lines, l)
					}
				}
				got := strings.Join(lines, "|")
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
				if st.origin != "" && st.want == "" {
					continue // a preflight whose answer another case shows
				}
				if want := sortedLines(strings.ToLower(st.want)); sortedLines(got) != want {
					t.Errorf("step %d (%s %s): headers %q, want %q", i+1, st.method, st.path, sortedLines(got), want)
				}
			}
		})
	}
}

func sortedLines(s string) string {
	if s == "" {
		return ""
	}
	l := strings.Split(s, "|")
	for i := range l {
		for j := i + 1; j < len(l); j++ {
			if l[j] < l[i] {
				l[i], l[j] = l[j], l[i]
			}
		}
	}
	return strings.Join(l, "|")
}
