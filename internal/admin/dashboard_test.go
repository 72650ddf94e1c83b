package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/imposter/servers"
)

// serveAPI serves a over a loopback listener until the test ends and returns its base URL.
func serveAPI(t *testing.T, a *API) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: a.Handler, NoDefaultContentType: true, Logger: quietLogger{}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

func newTestAPI(t testing.TB, opts Options) (*API, *imposter.Imposter) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Protocols: servers.Protocols()})
	t.Cleanup(func() { reg.DeleteAll() })
	im := createImposter(t, reg, `{"protocol":"http","name":"a","recordRequests":true}`)
	return New(reg, opts), im
}

// createImposter creates and starts an imposter from JSON in reg.
func createImposter(tb testing.TB, reg *imposter.Registry, imposterJSON string) *imposter.Imposter {
	tb.Helper()
	im, err := reg.Create(impostertest.Def(tb, imposterJSON))
	if err != nil {
		tb.Fatal(err)
	}
	return im
}

func httpGet(t *testing.T, url string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func TestDashboardRoutes(t *testing.T) {
	a, im := newTestAPI(t, Options{APIKey: "k"})
	base := serveAPI(t, a)
	port := strconv.Itoa(im.Port())
	tests := []struct {
		path, accept string
		key          bool
		status       int
		contentType  string
		body         string
	}{
		// Pages: for a browser, with or without the key (they hold no data).
		{"/", browserAccept, false, 200, "text/html", `<meta name="mockd-apikey" content="required">`},
		{"/imposters", browserAccept, false, 200, "text/html", "<!DOCTYPE html>"},
		{"/imposters?replayable=true", browserAccept, false, 200, "text/html", "<!DOCTYPE html>"},
		{"/imposters/" + port, browserAccept, false, 200, "text/html", "<!DOCTYPE html>"},
		{"/logs", "text/html", false, 200, "text/html", "<!DOCTYPE html>"},
		{"/config", "text/html", false, 200, "text/html", "<!DOCTYPE html>"},
		// Not pages: the API answers as before.
		{"/imposters/1", browserAccept, true, 404, "application/json", "no such resource"},
		{"/imposters/" + port + "/stubs", browserAccept, true, 404, "text/html", "Cannot GET"},
		{"/", "", true, 200, "application/json", `"_links"`},
		{"/", "*/*", true, 200, "application/json", `"_links"`},
		{"/", "application/json, text/html", true, 200, "application/json", `"_links"`},
		{"/", "", false, 401, "application/json", "unauthorized"},
		{"/imposters", browserAccept + ", application/json", true, 200, "text/html", "<!DOCTYPE html>"},
		// Assets, without the key.
		{"/dashboard/app.js", "", false, 200, "text/javascript", "use strict"},
		{"/dashboard/style.css", "", false, 200, "text/css", ":root"},
		{"/dashboard/favicon.svg", "", false, 200, "image/svg+xml", "<svg"},
		{"/dashboard/index.html", "", false, 404, "text/plain", "not found"},
		// The dashboard's reads are the API's: they want the key.
		{"/dashboard/api/imposters", "", false, 401, "application/json", "unauthorized"},
		{"/dashboard/api/imposters", "", true, 200, "application/json", `"noMatch":0`},
		{"/dashboard/api/imposters/" + port, "", true, 200, "application/json", `"requests":[]`},
		{"/dashboard/api/imposters/1", "", true, 404, "application/json", "no such resource"},
		{"/dashboard/api/other", "", true, 404, "text/html", "Cannot GET"},
	}
	for _, tt := range tests {
		headers := []string{"Accept", tt.accept}
		if tt.key {
			headers = append(headers, "x-api-key", "k")
		}
		status, h, body := httpGet(t, base+tt.path, headers...)
		if status != tt.status || !strings.HasPrefix(h.Get("Content-Type"), tt.contentType) || !strings.Contains(body, tt.body) {
			t.Errorf("GET %s (Accept %q, key %v) = %d %s %.80q, want %d %s containing %q",
				tt.path, tt.accept, tt.key, status, h.Get("Content-Type"), body, tt.status, tt.contentType, tt.body)
		}
		if tt.contentType == "text/html" && status == 200 && !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: page without its Content-Security-Policy", tt.path)
		}
	}
}

func TestDashboardAssetsRevalidate(t *testing.T) {
	a, _ := newTestAPI(t, Options{})
	base := serveAPI(t, a)
	status, h, _ := httpGet(t, base+"/dashboard/app.js")
	etag := h.Get("ETag")
	if status != 200 || etag == "" {
		t.Fatalf("GET /dashboard/app.js = %d with ETag %q", status, etag)
	}
	if status, _, body := httpGet(t, base+"/dashboard/app.js", "If-None-Match", etag); status != 304 || body != "" {
		t.Errorf("GET with If-None-Match: %d %q, want 304 and no body", status, body)
	}
	// The page links the asset with its version, so a new mockd is never served an old script.
	_, _, page := httpGet(t, base+"/", "Accept", "text/html")
	if !strings.Contains(page, `/dashboard/app.js?v=`+strings.Trim(etag, `"`)) {
		t.Errorf("the page does not link app.js at its version %s", etag)
	}
}

// TestDashboardRefusedClients: --localOnly and --ipWhitelist refuse the pages and assets as they
// refuse the API, by closing the connection.
func TestDashboardRefusedClients(t *testing.T) {
	a, _ := newTestAPI(t, Options{AllowIP: func(net.IP) bool { return false }})
	base := serveAPI(t, a)
	for _, path := range []string{"/", "/dashboard/app.js", "/dashboard/api/imposters"} {
		if status, _, body := httpGet(t, base+path, "Accept", "text/html"); status != 0 {
			t.Errorf("GET %s from a refused client: %d %.60q, want the connection closed", path, status, body)
		}
	}
}

// TestDashboardReadsLoggedAtDebug: the page's refreshes (marked with the dashboard header) are
// logged at debug, everything else at info.
func TestDashboardReadsLoggedAtDebug(t *testing.T) {
	var lines []string
	a, _ := newTestAPI(t, Options{})
	a.log = newLineLogger(&lines)
	base := serveAPI(t, a)
	httpGet(t, base+"/imposters")
	httpGet(t, base+"/logs", "X-Mockd-Dashboard", "refresh")
	httpGet(t, base+"/", "Accept", "text/html")
	a.log.Handler().(lineHandler).mu.Lock()
	defer a.log.Handler().(lineHandler).mu.Unlock()
	want := []string{"INFO GET /imposters", "DEBUG GET /logs", "INFO GET /"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("logged %q, want %q", lines, want)
	}
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// lineHandler keeps "LEVEL message" of every record, at every level.
type lineHandler struct {
	mu    *sync.Mutex
	lines *[]string
}

func newLineLogger(lines *[]string) *slog.Logger {
	return slog.New(lineHandler{mu: &sync.Mutex{}, lines: lines})
}

func (lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	*h.lines = append(*h.lines, r.Level.String()+" "+r.Message)
	h.mu.Unlock()
	return nil
}
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lineHandler) WithGroup(string) slog.Handler      { return h }

// TestDashboardImposterReadIsBounded: an imposter's page gets at most pageStubs stubs and
// recentRequests requests, however many the imposter has, with the true counts beside them.
func TestDashboardImposterReadIsBounded(t *testing.T) {
	a, _ := newTestAPI(t, Options{})
	var stubs []string
	for i := range pageStubs + 50 {
		stubs = append(stubs, `{"predicates":[{"equals":{"path":"/`+strconv.Itoa(i)+`"}}],"responses":[{"is":{"statusCode":200}}]}`)
	}
	im := createImposter(t, a.reg, `{"protocol":"http","recordRequests":true,"stubs":[`+strings.Join(stubs, ",")+`]}`)
	base := serveAPI(t, a)
	port := strconv.Itoa(im.Port())
	for i := range recentRequests + 10 {
		httpGet(t, "http://127.0.0.1:"+port+"/"+strconv.Itoa(i))
	}
	status, _, body := httpGet(t, base+"/dashboard/api/imposters/"+port)
	var got struct {
		NumberOfRequests, StubCount int
		Stubs, Requests             []map[string]any
	}
	if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil {
		t.Fatalf("GET /dashboard/api/imposters/%s: %d %v %.200s", port, status, err, body)
	}
	if got.StubCount != pageStubs+50 || len(got.Stubs) != pageStubs {
		t.Errorf("stubCount %d with %d stubs, want %d with %d", got.StubCount, len(got.Stubs), pageStubs+50, pageStubs)
	}
	if got.NumberOfRequests != recentRequests+10 || len(got.Requests) != recentRequests {
		t.Errorf("numberOfRequests %d with %d requests, want %d with %d", got.NumberOfRequests, len(got.Requests), recentRequests+10, recentRequests)
	}
	if newest := got.Requests[0]["request"].(map[string]any)["path"]; newest != "/"+strconv.Itoa(recentRequests+9) {
		t.Errorf("the first request is %v, want the newest", newest)
	}
	if stub := got.Requests[0]["stub"]; stub != float64(recentRequests+9) {
		t.Errorf("the newest request was answered by %v, want stub %d", stub, recentRequests+9)
	}
}

// TestDashboardVerdictAndExplanations: the dashboard's reads carry GET /verify's verdict, each
// stub's hits and status, and why a recorded request matched no stub, explained once.
func TestDashboardVerdictAndExplanations(t *testing.T) {
	a, _ := newTestAPI(t, Options{})
	im := createImposter(t, a.reg, `{"protocol":"http","recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/a"}}],"expect":{"times":2},"responses":[{"is":{"statusCode":200}}]},
		{"predicates":[{"equals":{"path":"/b"}}],"responses":[{"is":{"statusCode":200}}]}]}`)
	port := "http://127.0.0.1:" + strconv.Itoa(im.Port())
	httpGet(t, port+"/a")
	httpGet(t, port+"/c")

	list := string(config.MarshalJSON(a.dashboardList(), 0))
	for _, want := range []string{`"expectationsFailed":1,"unusedStubs":1`, `"verdict":{"passed":false,"expectations":1,"expectationsFailed":1,"unusedStubs":1,"unmatchedRequests":1}`} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %s:\n%s", want, list)
		}
	}
	first := a.dashboardImposter(im)
	page := string(config.MarshalJSON(first, 0))
	for _, want := range []string{
		`"hits":1,"status":"failed","message":"expected exactly 2 requests, got 1"`,
		`"hits":0,"status":"unused"`,
		`"noMatch":true,"explanation":{"nearest":[{"stub":0`,
		`"text":"nearest: stub 0`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the imposter's read lacks %s:\n%s", want, page)
		}
	}
	explanation := func(o *config.Object) config.Value {
		reqs, _ := o.Get("requests")
		ex, _ := reqs.([]any)[0].(*config.Object).Get("explanation")
		return ex
	}
	if explanation(a.dashboardImposter(im)) != explanation(first) {
		t.Error("a no-match was explained again at the next read")
	}
}

// TestDashboardBusyPageSharesRenderings: a page read by many clients at once is rendered at
// most once every shareFor, its readers sharing the latest rendering (1,000 readers of one
// imposter's page took that imposter from 13,000 requests a second to under 100); a page read
// less often is rendered for every read, so a read after a change shows it. The clock is the
// test's: the reads below all happen "at once" however slow the machine.
func TestDashboardBusyPageSharesRenderings(t *testing.T) {
	a, im := newTestAPI(t, Options{})
	port := strconv.Itoa(im.Port())
	now := time.Unix(1_800_000_000, 0)
	a.dashReads.now = func() time.Time { return now }
	hit := func() {
		t.Helper()
		if status, _, _ := httpGet(t, "http://127.0.0.1:"+port+"/x"); status != 200 {
			t.Fatalf("request to the imposter: %d", status)
		}
	}
	read := func(uri string) (count int, body string) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.SetRequestURI(uri)
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
		a.Handler(&ctx)
		var got struct{ NumberOfRequests int }
		if err := json.Unmarshal(ctx.Response.Body(), &got); ctx.Response.StatusCode() != 200 || err != nil {
			t.Fatalf("GET %s: %d %v %.200s", uri, ctx.Response.StatusCode(), err, ctx.Response.Body())
		}
		return got.NumberOfRequests, string(ctx.Response.Body())
	}
	page := "/dashboard/api/imposters/" + port
	renders := func() int64 { return a.dashReads.renders.Load() }

	// Up to busyReads reads in a second: each rendered, each showing the request before it.
	for i := range busyReads {
		hit()
		if n, _ := read(page); n != i+1 {
			t.Fatalf("read %d shows %d requests, want %d", i+1, n, i+1)
		}
	}
	if renders() != busyReads {
		t.Fatalf("%d renderings for %d reads, want one each", renders(), busyReads)
	}
	// Then, in the same instant, 200 more reads: one rendering, shared by all.
	_, first := read(page)
	for range 199 {
		if _, body := read(page); body != first {
			t.Fatalf("a shared read differs from the rendering it shares:\n%.300s\n%.300s", body, first)
		}
	}
	if renders() != busyReads+1 {
		t.Fatalf("%d renderings for %d reads of a busy page, want %d", renders(), busyReads+200, busyReads+1)
	}
	// A rendering is shared for shareFor at most.
	hit()
	now = now.Add(shareFor - time.Millisecond)
	if n, _ := read(page); n != busyReads {
		t.Errorf("a read within shareFor shows %d requests, want the shared rendering's %d", n, busyReads)
	}
	now = now.Add(time.Millisecond)
	if n, _ := read(page); n != busyReads+1 || renders() != busyReads+2 {
		t.Errorf("a read shareFor later shows %d requests (%d renderings), want %d (%d)", n, renders(), busyReads+1, busyReads+2)
	}
	// A second later the page is no longer busy: rendered for each read again.
	now = now.Add(time.Second)
	hit()
	if n, _ := read(page); n != busyReads+2 || renders() != busyReads+3 {
		t.Errorf("a read a second later shows %d requests (%d renderings), want %d (%d)", n, renders(), busyReads+2, busyReads+3)
	}
	// The list is a page of its own, and a new imposter on the port another.
	for range 3 * busyReads {
		read("/dashboard/api/imposters")
	}
	if renders() != busyReads+3+busyReads+1 {
		t.Errorf("%d renderings after %d reads of the list, want %d", renders(), 3*busyReads, busyReads+3+busyReads+1)
	}
	a.reg.Delete(im.Port())
	im2 := createImposter(t, a.reg, `{"protocol":"http","port":`+port+`,"recordRequests":true}`)
	defer a.reg.Delete(im2.Port())
	if n, _ := read(page); n != 0 {
		t.Errorf("the new imposter's page shows %d requests, want 0 (the old imposter's rendering)", n)
	}
}

// TestDashboardPageCutsLargeBodies: an imposter's page shows the first pageText bytes of a
// recorded body (cut at a character's start) and its length; GET /imposters/:port has it
// whole. With 1 MiB bodies recorded each read of the page was 50 MB of JSON.
func TestDashboardPageCutsLargeBodies(t *testing.T) {
	a, im := newTestAPI(t, Options{})
	base := serveAPI(t, a)
	port := strconv.Itoa(im.Port())
	large := strings.Repeat("a", pageText-1) + strings.Repeat("é", 1000) // é is 2 bytes: the cut falls inside one
	for _, body := range []string{large, "small"} {
		resp, err := http.Post("http://127.0.0.1:"+port+"/x", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	status, _, text := httpGet(t, base+"/dashboard/api/imposters/"+port)
	var got struct {
		Requests []struct {
			Request   struct{ Body string }
			Truncated map[string]int
		}
	}
	if err := json.Unmarshal([]byte(text), &got); status != 200 || err != nil || len(got.Requests) != 2 {
		t.Fatalf("GET /dashboard/api/imposters/%s: %d %v %.200s", port, status, err, text)
	}
	small, cut := got.Requests[0], got.Requests[1] // newest first
	if small.Request.Body != "small" || small.Truncated != nil {
		t.Errorf("a small body is shown as %q, truncated %v; want it whole", small.Request.Body, small.Truncated)
	}
	if want := large[:pageText-1]; cut.Request.Body != want || cut.Truncated["body"] != len(large) {
		t.Errorf("a %d-byte body is shown as %d bytes, truncated %v; want its first %d bytes and {body: %d}",
			len(large), len(cut.Request.Body), cut.Truncated, len(want), len(large))
	}
	if len(text) > 2*pageText {
		t.Errorf("the page's read is %d bytes", len(text))
	}
	if _, _, whole := httpGet(t, base+"/imposters/"+port); !strings.Contains(whole, large) {
		t.Error("GET /imposters/:port does not have the whole body")
	}
}
