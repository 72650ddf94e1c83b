package mockdtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mockd/mockd/pkg/client"
	"github.com/mockd/mockd/pkg/mockdtest"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestEveryWayToLoadImposters(t *testing.T) {
	srv := mockdtest.New(t,
		mockdtest.YAML("imposters:\n  - {name: yaml, protocol: http, stubs: [{responses: [{is: {body: from yaml}}]}]}\n"),
		mockdtest.JSON(`{"imposters": [{"name": "json", "protocol": "http", "stubs": [{"responses": [{"is": {"body": "from json"}}]}]}]}`),
		mockdtest.Files("testdata/orders.yaml"),
		mockdtest.Imposters(client.Imposter{Name: "go", Protocol: "http", Stubs: []client.Stub{{
			Predicates: []client.Predicate{{Equals: client.Fields{"method": "POST"}}},
			Responses:  []client.Response{{Is: &client.Is{StatusCode: 201, Body: map[string]any{"made": true}}}},
		}}}),
	)
	if !strings.HasPrefix(srv.AdminURL(), "http://127.0.0.1:") {
		t.Errorf("AdminURL() = %q, want a loopback URL", srv.AdminURL())
	}
	for name, want := range map[string]string{"yaml": "from yaml", "json": "from json"} {
		if code, body := get(t, srv.URL(name)+"/"); code != 200 || body != want {
			t.Errorf("imposter %s answered %d %q, want 200 %q", name, code, body, want)
		}
	}
	if code, body := get(t, srv.URL("orders")+"/orders/7"); code != 200 || body != "{\"id\": 7, \"status\": \"shipped\"}\n" {
		t.Errorf("orders answered %d %q, want the bodyFile's text", code, body)
	}
	resp, err := http.Post(srv.URL("go")+"/things", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(body) != "{\n    \"made\": true\n}" {
		t.Errorf("go imposter answered %d %q", resp.StatusCode, body)
	}
	imps, err := srv.Imposters()
	if err != nil || len(imps) != 4 {
		t.Fatalf("Imposters() = %v, %v; want 4", imps, err)
	}
	for _, imp := range imps {
		if imp.Port == 0 || imp.URL != fmt.Sprintf("http://127.0.0.1:%d", imp.Port) {
			t.Errorf("imposter %+v: want a free port and its URL", imp)
		}
	}
	srv.AssertCalled(t, srv.Port("go"), "POST", "/things", 1)
	reqs := srv.Requests(srv.Port("go"))
	if len(reqs) != 1 || reqs[0].Body != "{}" {
		t.Errorf("journal of imposter go: %+v, want the one POST with body {}", reqs)
	}
	srv.ResetRequests()
	srv.AssertCalled(t, srv.Port("go"), "", "", 0)
}

// recorder is a testing.TB that keeps what AssertCalled reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestAssertCalledReportsWhatWasReceived(t *testing.T) {
	srv := mockdtest.New(t, mockdtest.YAML("protocol: http\nname: api\n"))
	get(t, srv.URL("api")+"/a")
	get(t, srv.URL("api")+"/b")
	if n := srv.CountRequests(srv.Port("api"), "get", "/a"); n != 1 {
		t.Errorf("CountRequests(GET /a) = %d, want 1", n)
	}
	rec := &recorder{TB: t}
	srv.AssertCalled(rec, srv.Port("api"), "GET", "/a", 2)
	want := fmt.Sprintf("imposter %d received 1 requests GET /a, want 2; it received: [GET /a, GET /b]", srv.Port("api"))
	if len(rec.errors) != 1 || rec.errors[0] != want {
		t.Errorf("AssertCalled reported %q, want %q", rec.errors, want)
	}
}

func TestConfigErrorsAreReturned(t *testing.T) {
	tests := []struct {
		opt  mockdtest.Option
		want string
	}{
		{mockdtest.YAML("imposters:\n  - protocol: http\n    stubz: []\n"), `mockdtest-config-1.yaml:3:5: imposters[0].stubz: unknown field "stubz"`},
		{mockdtest.JSON(`{"protocol": "gopher"}`), "the gopher protocol is not yet supported"},
		{mockdtest.Files("testdata/missing.yaml"), "testdata/missing.yaml: cannot read config"},
		{mockdtest.Imposters(client.Imposter{Protocol: "http", Stubs: []client.Stub{{Responses: []client.Response{{Inject: "function () {}"}}}}}),
			"JavaScript injection is not allowed unless mockd is run with --allowInjection"},
		{mockdtest.Imposters(client.Imposter{Protocol: "http", DefaultResponse: &client.Is{Body: make(chan int)}}), "cannot encode imposters"},
	}
	for _, tt := range tests {
		srv, err := mockdtest.Start(tt.opt)
		if err == nil {
			srv.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Start: %v, want an error containing %q", err, tt.want)
		}
	}
}

func TestClientAndInjection(t *testing.T) {
	srv := mockdtest.New(t, mockdtest.AllowInjection())
	ctx := context.Background()
	imp, err := srv.Client().CreateImposter(ctx, client.Imposter{Protocol: "http", Stubs: []client.Stub{{
		Responses: []client.Response{{Inject: "function (config) { return {body: config.request.path}; }"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, fmt.Sprintf("http://127.0.0.1:%d/echo", imp.Port)); code != 200 || body != "/echo" {
		t.Errorf("inject answered %d %q", code, body)
	}
	srv.Close()
	srv.Close() // a second Close (and the Cleanup's) does nothing
	if _, err := http.Get(srv.AdminURL() + "/imposters"); err == nil {
		t.Error("admin API still answers after Close")
	}
}

func TestVerify(t *testing.T) {
	srv := mockdtest.New(t, mockdtest.YAML(`
imposters:
  - name: api
    protocol: http
    stubs:
      - predicates: [{equals: {path: /once}}]
        responses: [{is: {body: once}}]
        expect: {times: 1}
      - predicates: [{equals: {path: /never}}]
        responses: [{is: {body: never}}]
`), mockdtest.Imposters(client.Imposter{Name: "go", Protocol: "http", Stubs: []client.Stub{{
		Responses: []client.Response{{Is: &client.Is{Body: "any"}}}, Expect: client.ExpectAtLeast(2),
	}}}))
	api := srv.URL("api")
	get(t, api+"/once")
	get(t, srv.URL("go")+"/a")
	get(t, srv.URL("go")+"/b")

	rec := &recorder{TB: t}
	srv.AssertExpectations(rec)
	if len(rec.errors) != 0 {
		t.Errorf("AssertExpectations with every expect met reported %q", rec.errors)
	}
	srv.AssertVerified(rec)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "stub 1") || !strings.Contains(rec.errors[0], "answered no request") {
		t.Errorf("AssertVerified with an unused stub reported %q", rec.errors)
	}

	get(t, api+"/once")
	get(t, api+"/nothing")
	rec = &recorder{TB: t}
	srv.AssertExpectations(rec)
	joined := strings.Join(rec.errors, "\n")
	if len(rec.errors) != 2 || !strings.Contains(joined, "stub 0") || !strings.Contains(joined, "/nothing") {
		t.Errorf("AssertExpectations after a second /once and an unmatched request reported %q", rec.errors)
	}
	v := srv.Verify(true)
	if v.Passed || v.Summary.Expectations != 2 || v.Summary.ExpectationsFailed != 1 || v.Summary.UnmatchedRequests != 1 {
		t.Errorf("Verify: %+v", v)
	}
}

// TestCustomProtocol: an embedded mockd runs Mountebank's custom protocols (given inline or by
// a protofile): creating an imposter starts its program, the program's callbacks resolve
// requests against the stubs, and Close stops the program.
func TestCustomProtocol(t *testing.T) {
	config := mockdtest.YAML(`
imposters:
  - name: lines
    port: 4545
    protocol: line
    stubs:
      - predicates: [{equals: {data: hello}}]
        responses: [{is: {data: world}}]
`)
	for name, opt := range map[string]mockdtest.Option{
		"inline":    mockdtest.CustomProtocol("line", "testdata/waitproto.sh"),
		"protofile": mockdtest.Protofile("testdata/protocols.json"),
	} {
		t.Run(name, func(t *testing.T) {
			srv, err := mockdtest.Start(opt, config)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if port := srv.Port("lines"); port != 4545 {
				t.Fatalf("port %d", port)
			}
			resp, err := http.Post(srv.AdminURL()+"/imposters/4545/_requests", "application/json", strings.NewReader(`{"request": {"data": "hello"}}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"data": "world"`) {
				t.Errorf("_requests: %d %s", resp.StatusCode, body)
			}
			if n := srv.CountRequests(4545, "", ""); n != 1 {
				t.Errorf("%d requests recorded, want 1", n)
			}
			status, shown := get(t, srv.AdminURL()+"/imposters/4545")
			var imp struct {
				Greeting string `json:"greeting"`
				PID      int    `json:"pid"`
			}
			if err := json.Unmarshal([]byte(shown), &imp); status != 200 || err != nil || imp.Greeting != "hi" || imp.PID == 0 {
				t.Fatalf("the program's metadata: %d %v %s", status, err, shown)
			}
			srv.Close()
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", imp.PID)); err == nil && !strings.Contains(string(stat), ") Z") {
				t.Errorf("the program (pid %d) runs after Close: %s", imp.PID, stat)
			}
		})
	}
	if _, err := mockdtest.Start(mockdtest.Protofile("testdata/missing.json"), config); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing protofile: %v", err)
	}
}
