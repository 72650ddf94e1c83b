package imposter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// fakeProgram stands for a custom protocol's program: a listener that Accept blocks on until
// Close, which counts its calls.
type fakeProgram struct {
	once   sync.Once
	closed chan struct{}
	closes int
}

func (f *fakeProgram) Accept() (net.Conn, error) { <-f.closed; return nil, net.ErrClosed }
func (f *fakeProgram) Close() error {
	f.once.Do(func() { f.closes++; close(f.closed) })
	return nil
}
func (f *fakeProgram) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 4321} }

type idleServer struct{}

func (idleServer) Serve(ln net.Listener) error {
	for {
		if _, err := ln.Accept(); err != nil {
			return nil
		}
	}
}
func (idleServer) CloseIdle() int                 { return 0 }
func (idleServer) Shutdown(context.Context) error { return nil }

// startCustom starts an imposter of the custom protocol "line" from js, its program faked.
func startCustom(t *testing.T, js string, opts Options) (*Imposter, *fakeProgram) {
	t.Helper()
	v, err := config.ParseJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	custom := map[string]bool{"line": true}
	def, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true, Custom: custom})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	prog := &fakeProgram{closed: make(chan struct{})}
	opts.Logger = slog.New(slog.DiscardHandler)
	opts.Custom = custom
	opts.Protocols = map[string]Protocol{"line": func(*config.Imposter) (Prepared, error) {
		return Prepared{
			New: func(*Imposter) Server { return idleServer{} },
			Start: func(*Imposter) (*External, error) {
				return &External{Listener: prog, Metadata: config.NewObject("greeting", "hi"),
					CallbackURL: "http://localhost:2525/imposters/4321/_requests"}, nil
			},
		}, nil
	}}
	im, err := New(def, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Stop(context.Background()) })
	return im, prog
}

func obj(t *testing.T, js string) *config.Object {
	t.Helper()
	v, err := config.ParseJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*config.Object)
}

func jsonOf(v config.Value) string { return string(config.MarshalJSON(v, 0)) }

// TestResolveCustom: a custom protocol's requests are matched as the program sent them, with
// the predicates of any field; the answer is {"response": …} (the is object after behaviors,
// a fault as configured, {} for no match); requests are counted and recorded as sent.
// (The compat scenario imp-custom-protocol holds decorate and inject, which read the
// request too, to Mountebank's answers.)
func TestResolveCustom(t *testing.T) {
	im, prog := startCustom(t, `{"protocol":"line","port":4321,"recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"data":"hello"}},{"exists":{"oid":true}}],"responses":[{"is":{"data":"world","n":1}}]},
		{"predicates":[{"deepEquals":{"nested":{"a":"1"}}}],"responses":[{"is":{"data":"deep ${x}"},"behaviors":[{"copy":{"from":"data","into":"${x}","using":{"method":"regex","selector":".*"}}}]}]},
		{"predicates":[{"matches":{"data":"^f"}}],"responses":[{"fault":"CONNECTION_RESET_BY_PEER"}]}
	]}`, Options{})
	if im.Port() != 4321 || !im.Custom() || jsonOf(im.Metadata()) != `{"greeting":"hi"}` {
		t.Fatalf("port %d custom %v metadata %v", im.Port(), im.Custom(), im.Metadata())
	}
	for _, tc := range []struct{ req, want string }{
		{`{"data":"hello","oid":"1.3"}`, `{"response":{"data":"world","n":1}}`},
		{`{"data":"hello"}`, `{"response":{}}`},
		{`{"data":"x","nested":{"a":1}}`, `{"response":{"data":"deep x"}}`},
		{`{"data":"fail"}`, `{"response":{"fault":"CONNECTION_RESET_BY_PEER"}}`},
	} {
		out, err := im.ResolveCustom(context.Background(), obj(t, tc.req))
		if err != nil {
			t.Fatalf("%s: %v", tc.req, err)
		}
		if got := jsonOf(out); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.req, got, tc.want)
		}
	}
	if n := im.NumberOfRequests(); n != 4 {
		t.Errorf("numberOfRequests %d", n)
	}
	list, _ := im.Recorded()
	if len(list) != 4 || jsonOf(list[2].Request) != `{"data":"x","nested":{"a":1}}` {
		t.Errorf("recorded %d: %v", len(list), list)
	}
	im.Stop(context.Background())
	if prog.closes != 1 {
		t.Errorf("the program was stopped %d times, want once", prog.closes)
	}
}

// TestResolveCustomProxy: a proxy is handed to the program with the request and the key to
// send the origin's answer to; that answer, after the proxy's behaviors, is recorded as the
// mode says (proxyOnce: a stub before the proxy, with the generated predicates) and returned
// as it is. A key used or unknown is Mountebank's 404.
func TestResolveCustomProxy(t *testing.T) {
	im, _ := startCustom(t, `{"protocol":"line","port":4321,"stubs":[
		{"responses":[{"proxy":{"to":"line://origin","predicateGenerators":[{"matches":{"data":true}}],"addWaitBehavior":true}}]}
	]}`, Options{})
	out, err := im.ResolveCustom(context.Background(), obj(t, `{"data":"a","other":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"proxy":{"to":"line://origin","predicateGenerators":[{"matches":{"data":true}}],"addWaitBehavior":true,"mode":"proxyOnce"},` +
		`"request":{"data":"a","other":"b"},"callbackURL":"http://localhost:2525/imposters/4321/_requests/0"}`
	if got := jsonOf(out); got != want {
		t.Fatalf("proxy:\n got %s\nwant %s", got, want)
	}
	resp, err := im.ResolveCustomProxy(context.Background(), "0", obj(t, `{"data":"from origin"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(resp); !strings.HasPrefix(got, `{"data":"from origin","_proxyResponseTime":`) {
		t.Errorf("proxy response %s", got)
	}
	defs := im.StubDefinitions()
	if len(defs) != 2 || !strings.HasPrefix(jsonOf(defs[0]), `{"predicates":[{"deepEquals":{"data":"a"}}],"responses":[{"is":{"data":"from origin","_proxyResponseTime":`) {
		t.Errorf("stubs after proxyOnce: %v", defs)
	}
	out, err = im.ResolveCustom(context.Background(), obj(t, `{"data":"a"}`))
	if err != nil || !strings.HasPrefix(jsonOf(out), `{"response":{"data":"from origin"`) {
		t.Errorf("replayed: %v %v", jsonOf(out), err)
	}
	for _, key := range []string{"0", "7", "x"} {
		_, err := im.ResolveCustomProxy(context.Background(), key, nil)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Code != config.CodeNoSuchResource || ce.Message != "invalid proxy resolution key" ||
			ce.Source != "http://localhost:2525/imposters/4321/_requests/"+key {
			t.Errorf("key %s: %#v", key, err)
		}
	}
}

// TestResolveCustomBlocked: a request whose ip --localOnly or --ipWhitelist refuses is
// answered {"blocked": true, …}, as Mountebank's getResponseFor answers it.
func TestResolveCustomBlocked(t *testing.T) {
	im, _ := startCustom(t, `{"protocol":"line","port":4321}`, Options{AllowIP: func(ip net.IP) bool { return ip.IsLoopback() }})
	out, err := im.ResolveCustom(context.Background(), obj(t, `{"ip":"10.1.2.3"}`))
	if err != nil || jsonOf(out) != `{"blocked":true,"code":"unauthorized ip address"}` {
		t.Errorf("blocked: %s %v", jsonOf(out), err)
	}
	out, err = im.ResolveCustom(context.Background(), obj(t, `{"ip":"127.0.0.1"}`))
	if err != nil || jsonOf(out) != `{"response":{}}` {
		t.Errorf("allowed: %s %v", jsonOf(out), err)
	}
}

// TestResolveNotCustom: an imposter mockd serves itself resolves a posted request too (as
// Mountebank's getResponseFor), answering the response unwrapped; it has no proxy keys.
func TestResolveNotCustom(t *testing.T) {
	v, _ := config.ParseJSON([]byte(`{"protocol":"tcp","stubs":[{"predicates":[{"equals":{"data":"a"}}],"responses":[{"is":{"data":"A"}}]}]}`))
	def, _ := config.ParseImposter(v, config.ParseOptions{})
	im, err := New(def, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for req, want := range map[string]string{`{"data":"a"}`: `{"data":"A"}`, `{"data":"b"}`: `{}`} {
		obj, _ := config.ParseJSON([]byte(req))
		out, err := im.ResolveCustom(context.Background(), obj.(*config.Object))
		if err != nil || jsonOf(out) != want {
			t.Errorf("ResolveCustom(%s) = %s %v, want %s", req, jsonOf(out), err, want)
		}
	}
	if _, err := im.ResolveCustomProxy(context.Background(), "0", nil); !errors.Is(err, ErrNotCustom) {
		t.Errorf("ResolveCustomProxy: %v", err)
	}

	// An http imposter's plain responses keep their `is` only in the stub's text (lean): the
	// answer is the configured object, found through the cycle, repeats included.
	v, _ = config.ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":[
		{"is":{"body":"a"},"repeat":2},{"is":{"statusCode":201,"body":{"b":1}}}]}]}`))
	def, _ = config.ParseImposter(v, config.ParseOptions{})
	if im, err = New(def, Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"body":"a"}`, `{"body":"a"}`, `{"statusCode":201,"body":{"b":1}}`, `{"body":"a"}`} {
		out, err := im.ResolveCustom(context.Background(), config.NewObject("path", "/"))
		if err != nil || jsonOf(out) != want {
			t.Errorf("http request %d: %s %v, want %s", i, jsonOf(out), err, want)
		}
	}
}

// TestCustomPortTaken: a program that announces the port of a running imposter is stopped and
// the creation fails; the running imposter stays.
func TestCustomPortTaken(t *testing.T) {
	var progs []*fakeProgram
	custom := map[string]bool{"line": true}
	reg := NewRegistry(Options{Logger: slog.New(slog.DiscardHandler), Custom: custom,
		Protocols: map[string]Protocol{"line": func(*config.Imposter) (Prepared, error) {
			return Prepared{
				New: func(*Imposter) Server { return idleServer{} },
				Start: func(*Imposter) (*External, error) {
					p := &fakeProgram{closed: make(chan struct{})}
					progs = append(progs, p)
					return &External{Listener: p, CallbackURL: "http://localhost:2525/imposters/4321/_requests"}, nil
				},
			}, nil
		}}})
	t.Cleanup(func() { reg.Shutdown(context.Background()) })
	v, _ := config.ParseJSON([]byte(`{"protocol":"line"}`))
	for i := 0; i < 2; i++ {
		def, _ := config.ParseImposter(v, config.ParseOptions{Custom: custom})
		im, err := reg.Create(def)
		if i == 0 && (err != nil || im.Port() != 4321) {
			t.Fatalf("first: %v", err)
		}
		if i == 1 && (err == nil || !strings.Contains(err.Error(), "4321 is already in use")) {
			t.Errorf("second: %v", err)
		}
	}
	if reg.Get(4321) == nil || len(reg.All()) != 1 || len(progs) != 2 || progs[0].closes != 0 || progs[1].closes != 1 {
		t.Errorf("imposters %v; programs %d, stopped %v", reg.All(), len(progs), progs)
	}
}

// TestCustomAnnouncedPortHeld: a program whose creation names no port holds the port it
// announces from its announcement until it is listed, as a named port is held from Reserve: a
// creation on that port meanwhile is refused (it won it, and the program was stopped), and a
// DELETE of it aborts the start (it answered nothing deleted, and the imposter was listed
// after it).
func TestCustomAnnouncedPortHeld(t *testing.T) {
	var progs []*fakeProgram
	custom := map[string]bool{"line": true}
	protocols := map[string]Protocol{"line": func(*config.Imposter) (Prepared, error) {
		return Prepared{
			New: func(*Imposter) Server { return idleServer{} },
			Start: func(*Imposter) (*External, error) {
				p := &fakeProgram{closed: make(chan struct{})}
				progs = append(progs, p)
				return &External{Listener: p, CallbackURL: "http://localhost:2525/imposters/4321/_requests"}, nil
			},
		}, nil
	}}
	build := func(t *testing.T, reg *Registry, js string) *Imposter {
		t.Helper()
		v, _ := config.ParseJSON([]byte(js))
		def, errs := config.ParseImposter(v, config.ParseOptions{Custom: custom})
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		im, err := reg.Build(def)
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	for _, tc := range []struct {
		name string
		// between runs while the program has announced 4321 and is not listed yet.
		between func(t *testing.T, reg *Registry)
		// listed is whether AddStarted lists the program's imposter then.
		listed bool
	}{
		{"nothing", func(*testing.T, *Registry) {}, true},
		{"a creation on the port", func(t *testing.T, reg *Registry) {
			if err := reg.Add(build(t, reg, `{"protocol":"line","port":4321}`)); err == nil || !strings.Contains(err.Error(), "4321 is already in use") {
				t.Errorf("a creation on the announced port: %v", err)
			}
		}, true},
		{"a DELETE of the port", func(t *testing.T, reg *Registry) { reg.Delete(4321) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			progs = nil
			reg := NewRegistry(Options{Logger: slog.New(slog.DiscardHandler), Custom: custom, Protocols: protocols})
			t.Cleanup(func() { reg.Shutdown(context.Background()) })
			im := build(t, reg, `{"protocol":"line"}`)
			if err := reg.Reserve(im); err != nil {
				t.Fatal(err)
			}
			if err := reg.StartReserved(im); err != nil || im.Port() != 4321 {
				t.Fatalf("start: %v, port %d", err, im.Port())
			}
			tc.between(t, reg)
			err := reg.AddStarted(im)
			if tc.listed && (err != nil || reg.Get(4321) != im) {
				t.Errorf("listed: %v, it is on 4321: %v", err, reg.Get(4321) == im)
			}
			if !tc.listed && (!errors.Is(err, ErrDeletedWhileStarting) || reg.Get(4321) != nil) {
				t.Errorf("deleted while starting: %v, an imposter on 4321: %v", err, reg.Get(4321) != nil)
			}
			if len(progs) != 1 || (progs[0].closes == 1) == tc.listed {
				t.Errorf("programs %d, the first stopped %v", len(progs), len(progs) > 0 && progs[0].closes == 1)
			}
		})
	}
}
