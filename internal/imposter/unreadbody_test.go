package imposter

import (
	"context"
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// TestUnreadBody: an http imposter says that nothing reads a request's body (UnreadBody, which
// lets the server read a large body past without keeping it) only when no predicate reads it,
// every response, the default one's included, answers without reading the request, the
// journal is off and nothing shows requests; any of those reading it keeps the body.
func TestUnreadBody(t *testing.T) {
	const upload = `{"equals":{"method":"POST","path":"/upload"}}`
	stubs := func(preds, resp string) string {
		return `{"protocol":"http","stubs":[{"predicates":[` + preds + `],"responses":[` + resp + `]}]}`
	}
	plain := stubs(upload, `{"is":{"body":"stored"}}`)
	debugLog := slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, tt := range []struct {
		name, imposter string
		opts           func(*Options)
		want           bool
	}{
		{"method and path", plain, nil, true},
		{"no stubs", `{"protocol":"http"}`, nil, true},
		{"no predicates", stubs(``, `{"is":{"body":"stored"}}`), nil, true},
		{"default response", `{"protocol":"http","defaultResponse":{"statusCode":404,"body":"none"},"stubs":[]}`, nil, true},
		{"repeat and several responses", stubs(upload, `{"is":{"body":"a"},"repeat":2},{"is":{"body":"b"}}`), nil, true},
		{"decorate of the response alone", stubs(upload, `{"is":{"body":"a"},"_behaviors":{"decorate":"function (config) { config.response.body = 'b'; }"}}`), nil, true},
		{"body predicate", stubs(`{"contains":{"body":"x"}}`, `{"is":{"body":"found"}}`), nil, false},
		{"body predicate in a second stub", `{"protocol":"http","stubs":[{"predicates":[` + upload + `],"responses":[{"is":{}}]},{"predicates":[{"equals":{"body":"x"},"caseSensitive":true,"except":"y"}],"responses":[{"is":{}}]}]}`, nil, false},
		{"form predicate", stubs(`{"equals":{"form":{"a":"1"}}}`, `{"is":{}}`), nil, false},
		{"inject predicate", stubs(`{"inject":"function (r) { return true; }"}`, `{"is":{}}`), nil, false},
		{"template", stubs(upload, `{"is":{"template":true,"body":"{{request.method}}"}}`), nil, false},
		{"copy", stubs(upload, `{"is":{"body":"${x}"},"_behaviors":{"copy":{"from":"body","into":"${x}","using":{"method":"regex","selector":".*"}}}}`), nil, false},
		{"decorate of the request", stubs(upload, `{"is":{},"_behaviors":{"decorate":"function (config) { config.response.body = config.request.body; }"}}`), nil, false},
		{"inject response", stubs(upload, `{"inject":"function (config) { return {body: config.request.body}; }"}`), nil, false},
		{"proxy", stubs(upload, `{"proxy":{"to":"http://127.0.0.1:9"}}`), nil, false},
		{"fault", stubs(upload, `{"fault":"CONNECTION_RESET_BY_PEER"}`), nil, false},
		{"recordRequests", `{"protocol":"http","recordRequests":true,"stubs":[{"predicates":[` + upload + `],"responses":[{"is":{}}]}]}`, nil, false},
		{"--mock", plain, func(o *Options) { o.Mock = true }, false},
		{"--debug", plain, func(o *Options) { o.Debug = true }, false},
		{"debug log", plain, func(o *Options) { o.Logger = debugLog }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := slog.New(slog.DiscardHandler)
			opts := Options{Logger: log, Script: script.New(script.Options{Logger: log})}
			if tt.opts != nil {
				tt.opts(&opts)
			}
			im, err := New(impostertest.Def(t, tt.imposter), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := im.UnreadBody() != nil; got != tt.want {
				t.Fatalf("UnreadBody() != nil is %v, want %v", got, tt.want)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestResolveUnreadPinned: stubs that read bodies, installed while a body was being read past
// (after UnreadBody answered), do not see that request, which has no body: it is answered by
// the stubs UnreadBody answered for. The next request sees the new stubs, and UnreadBody is nil
// for it.
func TestResolveUnreadPinned(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	im, err := New(impostertest.Def(t, `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/upload"}}],"responses":[{"is":{"body":"stored"}}]}]}`),
		Options{Logger: log, Script: script.New(script.Options{Logger: log})})
	if err != nil {
		t.Fatal(err)
	}
	pin := im.UnreadBody()
	if pin == nil {
		t.Fatal("UnreadBody() = nil for a stub on the path")
	}
	v, err := config.ParseJSON([]byte(`[{"predicates":[{"endsWith":{"body":"NEEDLE"}}],"responses":[{"is":{"body":"found"}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	var defs []*config.Object
	for _, d := range v.([]any) {
		defs = append(defs, d.(*config.Object))
	}
	if err := im.ReplaceStubs(defs); err != nil {
		t.Fatal(err)
	}
	if im.UnreadBody() != nil {
		t.Fatal("UnreadBody() != nil once a stub reads bodies")
	}
	answer := func(a Answer) string {
		t.Helper()
		if a.Err != nil {
			t.Fatal(a.Err)
		}
		if a.Dynamic() {
			if err := im.Build(context.Background(), nil, nil, nil, &a); err != nil {
				t.Fatal(err)
			}
		}
		return string(a.Body())
	}
	ctx := impostertest.RequestCtx(t, impostertest.RawRequest("POST", "/upload", "text/plain", "xNEEDLE"))
	req := request.Acquire()
	defer request.Release(req)
	request.FromHTTPLines(ctx, req, false, im.MaxBody(), request.HeaderLines{BodyUnread: true})
	if req.Body != "" {
		t.Fatalf("the view of a body read past holds %q", req.Body)
	}
	if got := answer(im.ResolveUnread(req, pin)); got != "stored" {
		t.Fatalf("pinned to the stubs before the change: %q, want stored", got)
	}
	request.FromHTTP(ctx, req)
	if got := answer(im.Resolve(req)); got != "found" {
		t.Fatalf("after the change: %q, want found", got)
	}
}
