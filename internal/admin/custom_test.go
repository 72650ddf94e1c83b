package admin

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/servers"
)

// program stands for a custom protocol's program: Accept blocks until Close.
type program struct {
	once   sync.Once
	closed chan struct{}
}

func (p *program) Accept() (net.Conn, error) { <-p.closed; return nil, net.ErrClosed }
func (p *program) Close() error              { p.once.Do(func() { close(p.closed) }); return nil }
func (p *program) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4zero, Port: 4321} }

type noServer struct{}

func (noServer) Serve(ln net.Listener) error {
	for {
		if _, err := ln.Accept(); err != nil {
			return nil
		}
	}
}
func (noServer) CloseIdle() int                 { return 0 }
func (noServer) Shutdown(context.Context) error { return nil }

// TestCustomCallbacks: the routes a custom protocol's program calls (POST
// /imposters/:id/_requests and …/_requests/:key), their errors, the program's metadata in the
// imposter's JSON, and that a callback is not a change: it is answered while a change runs
// (a program resolving a request while POST /imposters waits for it to start must not wait).
func TestCustomCallbacks(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	protocols := servers.Protocols()
	protocols["line"] = func(*config.Imposter) (imposter.Prepared, error) {
		return imposter.Prepared{
			New: func(*imposter.Imposter) imposter.Server { return noServer{} },
			Start: func(*imposter.Imposter) (*imposter.External, error) {
				return &imposter.External{Listener: &program{closed: make(chan struct{})}, Metadata: config.NewObject("greeting", "hi"),
					CallbackURL: "http://localhost:2525/imposters/4321/_requests"}, nil
			},
		}, nil
	}
	custom := map[string]bool{"line": true}
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Protocols: protocols, Custom: custom})
	t.Cleanup(func() { reg.DeleteAll() })
	a := New(reg, Options{Logger: quiet, Custom: custom})
	c := inmemClient(t, a, nil)

	ans, err := do(t, c, "POST", "/imposters", `{"protocol":"line","stubs":[{"predicates":[{"equals":{"data":"hello"}}],"responses":[{"is":{"data":"world"}}]},
		{"responses":[{"proxy":{"to":"line://origin"}}]}]}`)
	if err != nil || ans.status != 201 || !strings.Contains(ans.body, `"port": 4321`) || !strings.Contains(ans.body, `"greeting": "hi"`) {
		t.Fatalf("create: %v %d %s", err, ans.status, ans.body)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/imposters/4321/_requests", `{"request":{"data":"hello"}}`, 200, `{
  "response": {
    "data": "world"
  }
}`},
		{"/imposters/4321/_requests", `{"request":{"data":"x"}}`, 200, `"callbackURL": "http://localhost:2525/imposters/4321/_requests/0"`},
		{"/imposters/4321/_requests/0", `{"proxyResponse":{"data":"origin"}}`, 200, `"data": "origin"`},
		{"/imposters/4321/_requests/0", `{"proxyResponse":{"data":"origin"}}`, 404, `"message": "invalid proxy resolution key"`},
		{"/imposters/4321/_requests", `{"request":[1]}`, 400, `'request' must be an object`},
		{"/imposters/4321/_requests", ``, 400, `'request' must be an object`},
		{"/imposters/4322/_requests", `{"request":{}}`, 404, `Try POSTing to /imposters first?`},
	} {
		ans, err := do(t, c, "POST", tc.path, tc.body)
		if err != nil || ans.status != tc.status || !strings.Contains(ans.body, tc.want) {
			t.Errorf("POST %s %s: %v %d %s, want %d with %s", tc.path, tc.body, err, ans.status, ans.body, tc.status, tc.want)
		}
	}

	// Not a change: answered while one holds the change lock.
	a.changeMu.Lock()
	done := make(chan answer, 1)
	go func() {
		ans, _ := do(t, c, "POST", "/imposters/4321/_requests", `{"request":{"data":"hello"}}`)
		done <- ans
	}()
	select {
	case ans := <-done:
		if ans.status != 200 {
			t.Errorf("during a change: %d %s", ans.status, ans.body)
		}
	case <-time.After(10 * time.Second):
		t.Error("a callback waited for a change to end")
	}
	a.changeMu.Unlock()

	// An imposter mockd serves itself resolves a posted request as Mountebank's getResponseFor
	// does for every imposter: counted, recorded, matched, answered unwrapped; it hands out no
	// proxy keys, and its proxies answer only what reaches its port.
	ans, err = do(t, c, "POST", "/imposters", `{"protocol":"http","recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/x"}}],"responses":[{"is":{"statusCode":201,"body":"hi"}}]},
		{"predicates":[{"equals":{"path":"/p"}}],"responses":[{"proxy":{"to":"http://127.0.0.1:1"}}]}]}`)
	if err != nil || ans.status != 201 {
		t.Fatalf("create http: %v %d %s", err, ans.status, ans.body)
	}
	port := strings.TrimPrefix(ans.headers["Location"], "http://localhost:2525/imposters/")
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/_requests", `{"request":{"method":"GET","path":"/x"}}`, 200, "{\n  \"statusCode\": 201,\n  \"body\": \"hi\"\n}"},
		{"/_requests", `{"request":{"path":"/none"}}`, 200, "{}"},
		{"/_requests", `{"request":{"path":"/p"}}`, 400, "answers only requests it receives on its port"},
		{"/_requests/0", `{"proxyResponse":{}}`, 404, "invalid proxy resolution key"},
	} {
		ans, err = do(t, c, "POST", "/imposters/"+port+tc.path, tc.body)
		if err != nil || ans.status != tc.status || !strings.Contains(ans.body, tc.want) {
			t.Errorf("http imposter %s %s: %v %d %s", tc.path, tc.body, err, ans.status, ans.body)
		}
	}
	ans, err = do(t, c, "GET", "/imposters/"+port, "")
	if err != nil || !strings.Contains(ans.body, `"numberOfRequests": 3`) || !strings.Contains(ans.body, `"path": "/none"`) {
		t.Errorf("http imposter's record: %v %s", err, ans.body)
	}
}
