package imposter

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// newCore compiles an imposter from JSON without starting it, with scripts allowed.
func newCore(t *testing.T, imposterJSON string, opts Options) *Imposter {
	t.Helper()
	def := impostertest.Def(t, imposterJSON)
	log := slog.New(slog.DiscardHandler)
	opts.Logger = log
	opts.Script = script.New(script.Options{Logger: log})
	im, err := New(def, opts)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// shown is an http answer in one line: "status body", "default status body" when no stub
// matched, "error code" when the request failed.
func shown(t *testing.T, im *Imposter, req *request.Request) string {
	t.Helper()
	a := im.Resolve(req)
	if a.Err != nil {
		return "error " + a.Err.Code
	}
	err := im.Build(context.Background(), req, nil, nil, &a)
	built := &a
	if err != nil {
		return "error " + err.Error()
	}
	status, err := built.Status()
	if err != nil {
		return "error " + err.Error()
	}
	out := strconv.Itoa(status) + " " + string(built.Body())
	if !a.Matched() {
		out = "default " + out
	}
	return out
}

// TestResolve calls the core's entry point directly, without a socket or a protocol server:
// which stub answers, response cycling and repeat, the default response, errors, and what is
// counted and recorded.
func TestResolve(t *testing.T) {
	get := func(path string) *request.Request { return &request.Request{Method: "GET", Path: path} }
	tests := []struct {
		name     string
		imposter string
		opts     Options
		requests []*request.Request
		want     []string
		// requests, no-match count and recorded stub indexes after the requests
		count, noMatch int64
		recorded       []int
	}{
		{
			name: "first matching stub answers",
			imposter: `{"protocol":"http","stubs":[
				{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"first"}}]},
				{"predicates":[{"startsWith":{"path":"/a"}}],"responses":[{"is":{"body":"second"}}]}]}`,
			requests: []*request.Request{get("/a"), get("/ab")},
			want:     []string{"200 first", "200 second"},
			count:    2,
		},
		{
			name:     "no stub matches: the default response (which also fills a stub's missing fields)",
			imposter: `{"protocol":"http","defaultResponse":{"statusCode":404,"body":"none"},"stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]}]}`,
			requests: []*request.Request{get("/b"), get("/a")},
			want:     []string{"default 404 none", "404 a"},
			count:    2, noMatch: 1,
		},
		{
			name:     "responses cycle",
			imposter: `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"1"}},{"is":{"body":"2"}},{"is":{"body":"3"}}]}]}`,
			requests: []*request.Request{get("/"), get("/"), get("/"), get("/")},
			want:     []string{"200 1", "200 2", "200 3", "200 1"},
			count:    4,
		},
		{
			name:     "repeat",
			imposter: `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"a"},"repeat":2},{"is":{"body":"b"}}]}]}`,
			requests: []*request.Request{get("/"), get("/"), get("/"), get("/")},
			want:     []string{"200 a", "200 a", "200 b", "200 a"},
			count:    4,
		},
		{
			name:     "defaultResponse fills what a response leaves out",
			imposter: `{"protocol":"http","defaultResponse":{"statusCode":201,"body":"dflt"},"stubs":[{"responses":[{"is":{}}]}]}`,
			requests: []*request.Request{get("/")},
			want:     []string{"201 dflt"},
			count:    1,
		},
		{
			name:     "recorded with the stub that answered",
			imposter: `{"protocol":"http","recordRequests":true,"stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]}]}`,
			requests: []*request.Request{get("/a"), get("/z")},
			want:     []string{"200 a", "default 200 "},
			count:    2, noMatch: 1, recorded: []int{0, NoStub},
		},
		{
			name:     "--mock records every imposter",
			imposter: `{"protocol":"http","stubs":[]}`,
			opts:     Options{Mock: true},
			requests: []*request.Request{get("/a")},
			want:     []string{"default 200 "},
			count:    1, noMatch: 1, recorded: []int{NoStub},
		},
		{
			name:     "a throwing inject predicate is the answer's error",
			imposter: `{"protocol":"http","recordRequests":true,"stubs":[{"predicates":[{"inject":"() => { throw new Error('boom'); }"}],"responses":[{"is":{"body":"a"}}]}]}`,
			requests: []*request.Request{get("/")},
			want:     []string{"error " + config.CodeInvalidInjection},
			count:    1, noMatch: 1, recorded: []int{StubError},
		},
		{
			name:     "inject response",
			imposter: `{"protocol":"http","stubs":[{"responses":[{"inject":"(config) => ({ statusCode: 202, body: config.request.path })"}]}]}`,
			requests: []*request.Request{get("/p")},
			want:     []string{"202 /p"},
			count:    1,
		},
		{
			name:     "invalid status code",
			imposter: `{"protocol":"http","stubs":[{"responses":[{"is":{"statusCode":"abc"}}]}]}`,
			requests: []*request.Request{get("/")},
			want:     []string{"error Invalid status code: abc"},
			count:    1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := newCore(t, tt.imposter, tt.opts)
			for i, req := range tt.requests {
				if got := shown(t, im, req); got != tt.want[i] {
					t.Errorf("request %d (%s): %q, want %q", i, req.Path, got, tt.want[i])
				}
			}
			if n, nm := im.NumberOfRequests(), im.NoMatchCount(); n != tt.count || nm != tt.noMatch {
				t.Errorf("requests %d, no match %d; want %d, %d", n, nm, tt.count, tt.noMatch)
			}
			var stubs []int
			for _, r := range im.RecordedRequests() {
				stubs = append(stubs, r.Stub)
			}
			if fmt.Sprint(stubs) != fmt.Sprint(tt.recorded) {
				t.Errorf("recorded stubs %v, want %v", stubs, tt.recorded)
			}
		})
	}
}

// TestResolveDebug: with --debug, a no-match is explained and a match is kept for the JSON.
func TestResolveDebug(t *testing.T) {
	im := newCore(t, `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]}]}`, Options{Debug: true})
	miss := im.Resolve(&request.Request{Method: "GET", Path: "/b"})
	if miss.Matched() || miss.Why == nil || miss.Recorded == nil {
		t.Fatalf("no match: matched %v, why %v, recorded %v; want an explanation and the request", miss.Matched(), miss.Why, miss.Recorded)
	}
	hit := im.Resolve(&request.Request{Method: "GET", Path: "/a"})
	if !hit.Matched() || hit.Why != nil {
		t.Fatalf("match: matched %v, why %v", hit.Matched(), hit.Why)
	}
	im.RecordMatch(&hit)
	if m := im.Stubs(false).Matches(0); len(m) != 1 || !strings.Contains(string(config.MarshalJSON(m, 0)), `"request":{`) {
		t.Errorf("the match was not kept: %s", config.MarshalJSON(m, 0))
	}
}

// TestBuildTCP builds tcp answers without a socket; a proxy's origin is a function.
func TestBuildTCP(t *testing.T) {
	origin := func(answer string) TCPOrigin {
		return func(_ *request.Request, addr, to string) (*config.Object, *config.Object) {
			if answer == "" {
				return nil, nil // closed without answering
			}
			return config.NewObject("data", answer+" from "+addr, "_proxyResponseTime", 1.0), nil
		}
	}
	tests := []struct {
		name, imposter, origin, data, want string
		keep                               bool
		stubs                              int // after the request
	}{
		{"is", `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"pong"}}]}]}`, "", "ping", "pong", true, 1},
		{"default data", `{"protocol":"tcp","defaultResponse":{"data":"dflt"}}`, "", "x", "dflt", true, 0},
		{"no default", `{"protocol":"tcp"}`, "", "x", "", true, 0},
		{"default without data", `{"protocol":"tcp","defaultResponse":{}}`, "", "x", `{"errors":[{"code":"ERR_INVALID_ARG_TYPE"}]}`, true, 0},
		{"bad data", `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":7}}]}]}`, "", "x", `{"errors":[{"code":"ERR_INVALID_ARG_TYPE"}]}`, true, 1},
		{"binary", `{"protocol":"tcp","mode":"binary","stubs":[{"responses":[{"is":{"data":"/+4="}}]}]}`, "", "AA==", "\xff\xee", true, 1},
		{"reset fault", `{"protocol":"tcp","stubs":[{"responses":[{"fault":"CONNECTION_RESET_BY_PEER"}]}]}`, "", "x", "", false, 1},
		{"random data fault", `{"protocol":"tcp","stubs":[{"responses":[{"fault":"RANDOM_DATA_THEN_CLOSE"}]}]}`, "", "x", RandomFaultData, false, 1},
		{"inject", `{"protocol":"tcp","stubs":[{"responses":[{"inject":"(config) => ({ data: config.request.data + '!' })"}]}]}`, "", "hey", "hey!", true, 1},
		{"proxy records a stub", `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":"tcp://origin:9"}}]}]}`, "answer", "q", "answer from origin:9", true, 2},
		{"proxyTransparent records nothing", `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":"tcp://origin:9","mode":"proxyTransparent"}}]}]}`, "answer", "q", "answer from origin:9", true, 1},
		{"origin closed", `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":"tcp://origin:9"}}]}]}`, "", "q", "", true, 1},
		{"proxy to another protocol", `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":"http://x"}}]}]}`, "", "q",
			`{"errors":[{"code":"invalid proxy","message":"Unable to proxy to any protocol other than tcp","source":"http://x"}]}`, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := newCore(t, tt.imposter, Options{})
			req := (&request.Request{TCP: true}).SetDataText(tt.data)
			req.SetClient("127.0.0.1", "127.0.0.1:5000")
			a := im.Resolve(req)
			if a.Err != nil {
				t.Fatal(a.Err)
			}
			out, keep := im.BuildTCP(context.Background(), req, &a, origin(tt.origin))
			if string(out) != tt.want || keep != tt.keep {
				t.Errorf("got %q, keep %v; want %q, keep %v", out, keep, tt.want, tt.keep)
			}
			if n := im.StubCount(); n != tt.stubs {
				t.Errorf("%d stubs after the request, want %d", n, tt.stubs)
			}
		})
	}
}
