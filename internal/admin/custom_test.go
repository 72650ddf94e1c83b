package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// portProgram is a program serving port.
type portProgram struct {
	program
	port int
}

func (p *portProgram) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: p.port} }

// TestCustomStartHoldsNoChange: while a custom protocol's program starts, other changes go on
// (an imposter of another port is created and saved), the starting imposter is not listed nor
// saved, its port is refused to a second imposter, and a DELETE of its port, DELETE /imposters
// or PUT /imposters stops its start: its creation fails, nothing of it stays. Once its program
// has started, it is listed and saved.
func TestCustomStartHoldsNoChange(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	protocols := servers.Protocols()
	started := make(chan struct{}, 1)
	var gate chan struct{} // the program's first line; set before each creation
	var mu sync.Mutex
	var stops int // programs stopped
	protocols["slow"] = func(*config.Imposter) (imposter.Prepared, error) {
		return imposter.Prepared{
			New: func(*imposter.Imposter) imposter.Server { return noServer{} },
			Start: func(im *imposter.Imposter) (*imposter.External, error) {
				mu.Lock()
				g := gate
				mu.Unlock()
				started <- struct{}{}
				select {
				case <-g:
				case <-im.StartAborted():
					mu.Lock()
					stops++
					mu.Unlock()
					return nil, imposter.ErrDeletedWhileStarting
				}
				return &imposter.External{Listener: &portProgram{program{closed: make(chan struct{})}, im.Definition().Port},
					CallbackURL: "http://localhost:2525/imposters/4400/_requests"}, nil
			},
		}, nil
	}
	custom := map[string]bool{"slow": true}
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Protocols: protocols, Custom: custom})
	t.Cleanup(func() { reg.DeleteAll() })
	st := &recordingStore{}
	a := New(reg, Options{Logger: quiet, Custom: custom, Store: st})
	c := inmemClient(t, a, nil)
	stored := func() (puts []int, n int) {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, ch := range st.changes {
			for _, p := range ch.Put {
				puts = append(puts, p.Port)
			}
		}
		return puts, len(st.changes)
	}
	create := func() <-chan answer {
		done := make(chan answer, 1)
		go func() {
			ans, err := do(t, c, "POST", "/imposters", `{"protocol":"slow","port":4400}`)
			if err != nil {
				t.Error(err)
			}
			done <- ans
		}()
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the program did not start")
		}
		return done
	}

	for _, deletion := range []struct{ method, path, body string }{
		{"DELETE", "/imposters/4400", ""},
		{"DELETE", "/imposters", ""},
		{"PUT", "/imposters", `{"imposters":[]}`},
	} {
		mu.Lock()
		gate = make(chan struct{})
		mu.Unlock()
		_, before := stored()
		done := create()
		// Other changes go on.
		ans, err := do(t, c, "POST", "/imposters", `{"protocol":"http"}`)
		if err != nil || ans.status != 201 {
			t.Fatalf("an http imposter while the program starts: %v %d %s", err, ans.status, ans.body)
		}
		if _, n := stored(); n != before+1 {
			t.Errorf("%d changes saved, want the http imposter's", n-before)
		}
		ans, _ = do(t, c, "POST", "/imposters", `{"protocol":"http","port":4400}`)
		if ans.status != 400 || !strings.Contains(ans.body, `"EADDRINUSE"`) {
			t.Errorf("a second imposter on the starting port: %d %s", ans.status, ans.body)
		}
		ans, _ = do(t, c, "GET", "/imposters", "")
		if strings.Contains(ans.body, "4400") || !strings.Contains(ans.body, `"protocol": "http"`) {
			t.Errorf("listed while its program starts: %s", ans.body)
		}
		ans, _ = do(t, c, deletion.method, deletion.path, deletion.body)
		if ans.status != 200 || strings.Contains(ans.body, "4400") {
			t.Errorf("%s %s: %d %s", deletion.method, deletion.path, ans.status, ans.body)
		}
		select {
		case ans := <-done:
			if ans.status != 400 || !strings.Contains(ans.body, "deleted while its program was starting") {
				t.Errorf("%s %s: the creation answered %d %s", deletion.method, deletion.path, ans.status, ans.body)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %s: the creation did not end", deletion.method, deletion.path)
		}
		mu.Lock()
		if stops != 1 {
			t.Errorf("%s %s: %d starts stopped, want 1", deletion.method, deletion.path, stops)
		}
		stops = 0
		mu.Unlock()
		if reg.Get(4400) != nil {
			t.Errorf("%s %s: an imposter runs on 4400", deletion.method, deletion.path)
		}
		if puts, _ := stored(); slices.Contains(puts, 4400) {
			t.Errorf("%s %s: the deleted imposter was saved", deletion.method, deletion.path)
		}
		reg.DeleteAll()
	}

	// Started: listed and saved then, and its port refused as before.
	mu.Lock()
	gate = make(chan struct{})
	mu.Unlock()
	done := create()
	if puts, _ := stored(); slices.Contains(puts, 4400) {
		t.Error("saved before its program started")
	}
	close(gate)
	if ans := <-done; ans.status != 201 || !strings.Contains(ans.body, `"port": 4400`) {
		t.Fatalf("started: %d %s", ans.status, ans.body)
	}
	if puts, _ := stored(); !slices.Contains(puts, 4400) {
		t.Error("not saved once started")
	}
	ans, _ := do(t, c, "GET", "/imposters", "")
	if !strings.Contains(ans.body, `"port": 4400`) {
		t.Errorf("not listed once started: %s", ans.body)
	}
	ans, _ = do(t, c, "POST", "/imposters", `{"protocol":"slow","port":4400}`)
	if ans.status != 400 || !strings.Contains(ans.body, `"EADDRINUSE"`) {
		t.Errorf("a second imposter on the port: %d %s", ans.status, ans.body)
	}
}

// TestCustomAbortedStartFreesItsPort: a DELETE of a starting imposter's port, and a PUT
// /imposters, answer once the aborted program has exited, so its port is free for what
// follows: a PUT naming the port, or a POST after the DELETE, got EADDRINUSE while the program
// took its time to exit (up to customproto's 5 s stop timeout).
func TestCustomAbortedStartFreesItsPort(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	port := fixedFreePort(t)
	protocols := servers.Protocols()
	started := make(chan struct{}, 1)
	aborted := make(chan struct{}, 1)
	var exit chan struct{} // the program exits once it is closed; set before each creation
	var returned atomic.Bool
	var mu sync.Mutex
	protocols["binding"] = func(*config.Imposter) (imposter.Prepared, error) {
		return imposter.Prepared{
			New: func(*imposter.Imposter) imposter.Server { return noServer{} },
			Start: func(im *imposter.Imposter) (*imposter.External, error) {
				mu.Lock()
				e := exit
				mu.Unlock()
				// The program binds its port, and prints nothing until it is stopped.
				ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
				if err != nil {
					t.Error(err)
					return nil, err
				}
				started <- struct{}{}
				<-im.StartAborted()
				aborted <- struct{}{}
				<-e
				ln.Close()
				returned.Store(true)
				return nil, imposter.ErrDeletedWhileStarting
			},
		}, nil
	}
	custom := map[string]bool{"binding": true}
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Protocols: protocols, Custom: custom})
	t.Cleanup(func() { reg.DeleteAll() })
	a := New(reg, Options{Logger: quiet, Custom: custom})
	c := inmemClient(t, a, nil)
	for _, tc := range []struct {
		name   string
		delete func() (answer, error)
	}{
		{"DELETE then POST", func() (answer, error) {
			if ans, err := do(t, c, "DELETE", "/imposters/"+strconv.Itoa(port), ""); err != nil || ans.status != 200 {
				return ans, err
			}
			return do(t, c, "POST", "/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port))
		}},
		{"PUT", func() (answer, error) {
			return do(t, c, "PUT", "/imposters", fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d}]}`, port))
		}},
	} {
		mu.Lock()
		exit = make(chan struct{})
		mu.Unlock()
		returned.Store(false)
		creation := make(chan answer, 1)
		go func() {
			ans, _ := do(t, c, "POST", "/imposters", fmt.Sprintf(`{"protocol":"binding","port":%d}`, port))
			creation <- ans
		}()
		<-started
		done := make(chan answer, 1)
		go func() {
			ans, err := tc.delete()
			if err != nil {
				t.Error(err)
			}
			done <- ans
		}()
		<-aborted
		close(exit)
		ans := <-done
		if !returned.Load() {
			t.Errorf("%s: answered before the aborted program had exited", tc.name)
		}
		if ans.status != 200 && ans.status != 201 {
			t.Errorf("%s on the aborted program's port: %d %s", tc.name, ans.status, ans.body)
		}
		if ans := <-creation; ans.status != 400 || !strings.Contains(ans.body, "deleted while its program was starting") {
			t.Errorf("%s: the creation answered %d %s", tc.name, ans.status, ans.body)
		}
		if reg.Get(port) == nil {
			t.Errorf("%s: no imposter on the port", tc.name)
		}
		reg.DeleteAll()
	}
}

// TestCustomStartThatPanics: a program's start that panics answers 500 and leaves nothing held:
// its port is free for another imposter, and DELETE /imposters, which waits for the starts it
// aborts, answers.
func TestCustomStartThatPanics(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	protocols := servers.Protocols()
	protocols["panics"] = func(*config.Imposter) (imposter.Prepared, error) {
		return imposter.Prepared{
			New:   func(*imposter.Imposter) imposter.Server { return noServer{} },
			Start: func(*imposter.Imposter) (*imposter.External, error) { panic("a broken start") },
		}, nil
	}
	custom := map[string]bool{"panics": true}
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Protocols: protocols, Custom: custom})
	t.Cleanup(func() { reg.DeleteAll() })
	a := New(reg, Options{Logger: quiet, Custom: custom})
	c := inmemClient(t, a, nil)
	// The port is freed and then bound by the http imposter: an ephemeral one (127.0.0.1:0)
	// could be taken meanwhile by another process's outgoing connection, and the imposter was
	// refused EADDRINUSE (the likely cause of an unexplained TestCustom* failure in session 23).
	port := fixedFreePort(t)
	if ans, _ := do(t, c, "POST", "/imposters", fmt.Sprintf(`{"protocol":"panics","port":%d}`, port)); ans.status != 500 {
		t.Errorf("a start that panics: %d %s", ans.status, ans.body)
	}
	done := make(chan answer, 1)
	go func() {
		ans, _ := do(t, c, "DELETE", "/imposters", "")
		done <- ans
	}()
	select {
	case ans := <-done:
		if ans.status != 200 {
			t.Errorf("DELETE /imposters: %d %s", ans.status, ans.body)
		}
	case <-time.After(30 * time.Second): // a bound for a hang, not a measure
		t.Fatal("DELETE /imposters waits for a start that panicked")
	}
	if ans, _ := do(t, c, "POST", "/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port)); ans.status != 201 {
		t.Errorf("an http imposter on the port of the start that panicked: %d %s", ans.status, ans.body)
	}
}

// fixedFreePort returns a port free now below the ephemeral range (32768-60999 on Linux), for a
// test that binds it, frees it and binds it again: an ephemeral port could be taken meanwhile
// by another process's outgoing connection (a busy machine runs other suites).
func fixedFreePort(t *testing.T) int {
	t.Helper()
	for p := 25470; p < 25500; p++ {
		if free, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			free.Close()
			return p
		}
	}
	t.Fatal("no free port in 25470-25499")
	return 0
}
