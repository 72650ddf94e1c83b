package script

import (
	"context"
	"errors"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// Calls that cannot reach the state run beside each other: one stuck in a loop does not hold
// up the next. Calls that use the state still share it.
func TestStatelessCallsRunConcurrently(t *testing.T) {
	e := newEngine(t, 3*time.Second)
	s := e.NewScope(nil)
	var loopDone atomic.Bool
	looping := make(chan error, 1)
	go func() {
		_, err := s.Response(context.Background(), `function (config) { while (true) {} }`, testRequest())
		loopDone.Store(true)
		looping <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the loop begin (if it has not, the check below is moot, not wrong)
	got, err := s.Response(context.Background(), `function (config) { return { body: [config.request.path].join('') }; }`, testRequest())
	if err != nil || jsonOf(got) != `{"body":"/users/42"}` {
		t.Fatalf("a stateless call beside a loop: %s %v", jsonOf(got), err)
	}
	if loopDone.Load() {
		t.Error("the stateless call waited for the loop to end")
	}
	if err := <-looping; err == nil {
		t.Error("the endless loop did not fail")
	}

	count := `function (config) { config.state.n = (config.state.n || 0) + 1; return { body: String(config.state.n) }; }`
	for i, want := range []string{"1", "2", "3"} {
		got, err := s.Response(context.Background(), count, testRequest())
		if err != nil || jsonOf(got) != `{"body":"`+want+`"}` {
			t.Fatalf("stateful call %d: %s %v, want body %s", i, jsonOf(got), err, want)
		}
	}
}

// A call that makes the heap grow past the memory limit fails with Mountebank's injection error,
// and the next call runs.
func TestMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	e := New(Options{Timeout: 30 * time.Second, MemoryLimit: 64 << 20})
	s := e.NewScope(nil)
	for _, src := range []string{
		`function () { var a = []; while (true) a.push(new Array(1e6)); }`,
		`function (config) { config.state.a = []; while (true) config.state.a.push(new Array(1e6)); }`,
	} {
		_, err := s.Response(context.Background(), src, testRequest())
		ce, ok := err.(*config.Error)
		if !ok || ce.Code != config.CodeInvalidInjection || !strings.Contains(jsonOf(ce.Source), "memory") {
			t.Fatalf("%s: %v, want an invalid injection error about memory", src, err)
		}
		got, err := s.Response(context.Background(), `function (config) { return { body: ['after'].join('') }; }`, testRequest())
		if err != nil || jsonOf(got) != `{"body":"after"}` {
			t.Fatalf("the call after %s: %s %v", src, jsonOf(got), err)
		}
	}
}

// A call that begins while the memory of a runtime dropped for running out of it is still to be
// given back waits for that: a string doubled past the limit leaves the heap far past it before
// the watch can look, and the same script requested again doubled its own beside that garbage
// (1.6-2.1 GB for a 512 MiB string under the 256 MiB limit, 1.1 GB once each call waits).
func TestCallsWaitForMemoryToBeGivenBack(t *testing.T) {
	e := New(Options{Timeout: time.Minute, MemoryLimit: 16 << 20})
	s := e.NewScope(nil)
	call := `function (config) { return { body: [1, 2].map(function (x) { return x * 2; }).join() }; }` // not native
	m := theMemWatch()
	// what dropped() leaves for giveBack, which a drop of an earlier test may be running
	ch := make(chan struct{})
	for !m.owed.CompareAndSwap(nil, &ch) {
		time.Sleep(time.Millisecond)
	}
	done := make(chan string, 1)
	go func() { done <- respond(t, s, context.Background(), call) }()
	select {
	case got := <-done:
		t.Fatalf("a call ran (%q) while memory was owed", got)
	case <-time.After(100 * time.Millisecond):
	}
	if c := m.owed.Swap(nil); c != nil {
		close(*c)
	}
	if got := <-done; got != "2,4" {
		t.Fatalf("the call once the memory was given back: %q", got)
	}
	// and a call that runs out of memory leaves the way open once its memory is given back
	if got := respond(t, s, context.Background(), `function () { let s = 'x'; while (s.length <= 16 << 20) { s += s; } return { body: s }; }`); !strings.Contains(got, "16 MiB of memory") {
		t.Fatalf("the doubling: %.200q", got)
	}
	if got := respond(t, s, context.Background(), call); got != "2,4" {
		t.Fatalf("the call after the doubling: %q", got)
	}
}

// A pooled runtime dropped for running out of memory is referenced from nowhere in the pool:
// taken from the idle ones, it stayed in the idle slice's array past its length, holding what
// its call made (a 512 MiB string) until another runtime came back to that place.
func TestDroppedRuntimeLeavesThePool(t *testing.T) {
	s := New(Options{Timeout: time.Minute, MemoryLimit: 16 << 20}).NewScope(nil)
	call := `function (config) { return { body: [1, 2].map(function (x) { return x * 2; }).join() }; }` // not native
	if got := respond(t, s, context.Background(), call); got != "2,4" {
		t.Fatalf("first call: %q", got)
	}
	if got := respond(t, s, context.Background(), `function () { let s = 'x'; while (s.length <= 16 << 20) { s += s; } return { body: s }; }`); !strings.Contains(got, "16 MiB of memory") {
		t.Fatalf("the doubling: %.200q", got)
	}
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	for _, list := range [][]*runtime{s.idle[:cap(s.idle)], s.busy[:cap(s.busy)]} {
		for _, rt := range list {
			if rt != nil && rt.spoiled.Load() {
				t.Fatal("the pool still references the dropped runtime")
			}
		}
	}
}

// A stateless call that finds every pooled runtime busy makes another only when the busy ones
// are as many as calls can run at once (GOMAXPROCS) and it has waited poolWait; before that it
// waits for one to come back. (Each call that found all busy used to make one: 16 runtimes
// where two were used, and every garbage collection marked them all.)
func TestPoolGrowsOnlyAfterAWait(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	defer func(w time.Duration) { poolWait = w }(poolWait)
	loop := `function (config) { while (true) {} }`
	quick := quickJS
	poolState := func(s *Scope) (made, idle, waiting int, creating bool) {
		s.poolMu.Lock()
		defer s.poolMu.Unlock()
		return s.made, len(s.idle), len(s.waiting), s.creating
	}
	for _, tc := range []struct {
		wait time.Duration
		made int
	}{{time.Hour, 1}, {0, 2}} {
		poolWait = tc.wait
		e := newEngine(t, time.Minute)
		s := e.NewScope(nil)
		ctx, cancel := context.WithCancel(context.Background())
		loopDone := make(chan error, 1)
		go func() {
			_, err := s.Response(ctx, loop, testRequest())
			loopDone <- err
		}()
		for { // until the loop holds the only runtime
			if made, idle, _, creating := poolState(s); made == 1 && idle == 0 && !creating {
				break
			}
			time.Sleep(time.Millisecond)
		}
		quickDone := make(chan error, 1)
		go func() {
			got, err := s.Response(context.Background(), quick, testRequest())
			if err == nil && jsonOf(got) != `{"body":"quick"}` {
				err = errors.New(jsonOf(got))
			}
			quickDone <- err
		}()
		if tc.wait > 0 { // the quick call waits for the loop's runtime: end the loop
			for {
				if _, _, waiting, _ := poolState(s); waiting == 1 {
					break
				}
				select {
				case err := <-quickDone:
					made, _, _, _ := poolState(s)
					t.Fatalf("poolWait %s: the quick call did not wait for the busy runtime (%v; %d made)", tc.wait, err, made)
				case <-time.After(time.Millisecond):
				}
			}
			cancel()
		}
		if err := <-quickDone; err != nil {
			t.Fatalf("poolWait %s: the quick call: %v", tc.wait, err)
		}
		cancel()
		<-loopDone
		if made, _, _, _ := poolState(s); made != tc.made {
			t.Errorf("poolWait %s: %d runtimes made, want %d", tc.wait, made, tc.made)
		}
	}
}

// A pooled runtime reuses its config argument from call to call: what a call changed in it is
// gone in the next, whatever the kind of call or the shape of the request.
func TestPooledConfigIsFreshEachCall(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	tcp := (&request.Request{TCP: true}).SetDataText("aGk=")
	tcp.SetClient("127.0.0.1", "127.0.0.1:5555")
	calls := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"change everything", func() (string, error) {
			out, err := s.Response(context.Background(), `function (config) {
				config.extra = 1; delete config.method; config.path = 'top';
				config.request.path = 'changed'; config.request.headers['X-New'] = 'y'; delete config.request.body;
				config.callback({ body: Object.keys(config).join(',') + ' ' + config.request.path + ' ' + Object.keys(config.request).join(',') });
			}`, testRequest())
			return jsonOf(out), err
		}, `{"body":"request,state,logger,callback,requestFrom,path,query,headers,body,ip,extra changed requestFrom,method,path,query,headers,ip"}`},
		{"read it all again", func() (string, error) {
			out, err := s.Response(context.Background(), `function (config) {
				return { body: [Object.keys(config).join(','), config.request.path, config.path, config.method, typeof config.extra,
					Object.keys(config.request.headers).join(','), config.request.body, config.request.query.a.join('|')].join(' ') };
			}`, testRequest())
			return jsonOf(out), err
		}, `{"body":"request,state,logger,callback,requestFrom,method,path,query,headers,body,ip /users/42 /users/42 POST undefined Host,X-Id,Content-Type {\"name\":\"ann\",\"n\":3} 1|2"}`},
		{"a tcp request", func() (string, error) {
			out, err := s.Response(context.Background(), `(config) => ({ data: Object.keys(config).join(',') + ' ' + Object.keys(config.request).join(',') + ' ' + config.request.data })`, tcp)
			return jsonOf(out), err
		}, `{"data":"request,state,logger,callback,requestFrom,ip,data requestFrom,ip,data aGk="}`},
		{"a decorate", func() (string, error) {
			out, err := s.Decorate(context.Background(), `(config) => { config.response.body = Object.keys(config).join(',') + ' ' + config.request.method + ' ' + typeof config.callback; }`,
				testRequest(), config.NewObject("body", "x"))
			return jsonOf(out), err
		}, `{"body":"request,response,logger,state,requestFrom,method,path,query,headers,body,ip POST undefined"}`},
		{"a predicate", func() (string, error) {
			ok, err := s.Predicate(`(config) => config.request.path === '/users/42' && config.method === 'POST' && !('extra' in config)`, testRequest())
			return strconv.FormatBool(ok), err
		}, `true`},
		{"the config of a call returned whole", func() (string, error) {
			out, err := s.Response(context.Background(), `(config) => ({ body: config.request.method, c: config.request.headers })`, testRequest())
			return jsonOf(out), err
		}, `{"body":"POST","c":{"Host":"localhost","X-Id":"7","Content-Type":"application/json"}}`},
	}
	for _, c := range calls {
		got, err := c.run()
		if err != nil || got != c.want {
			t.Errorf("%s: %s %v\nwant %s", c.name, got, err, c.want)
		}
	}
	s.poolMu.Lock()
	made := s.made
	s.poolMu.Unlock()
	if made != 1 {
		t.Errorf("the calls ran on %d pooled runtimes, want 1 (the test is about reusing one)", made)
	}
}

// A call that finds every pooled runtime busy with a call that has run for poolWait (a loop,
// a wait for I/O) makes another at once, rather than waiting poolWait itself.
// quickJS is a quick inject function that runs on goja (a method call is not of the native
// subset, which would not use the pool).
const quickJS = `function (config) { return { body: ['quick'].join('') }; }`

func TestPoolGrowsAtOnceBesideLongCalls(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	defer func(w time.Duration) { poolWait = w }(poolWait)
	poolWait = time.Hour // a quick call that waited would wait that long
	s := newEngine(t, time.Minute).NewScope(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loopDone := make(chan error, 1)
	go func() {
		_, err := s.Response(ctx, `function (config) { while (true) {} }`, testRequest())
		loopDone <- err
	}()
	for { // until the loop holds the only runtime
		s.poolMu.Lock()
		if len(s.busy) == 1 && !s.creating {
			// As if the loop had begun, and the runtime been made, more than poolWait ago.
			s.busy[0].started = time.Now().Add(-2 * poolWait)
			s.madeAt = s.busy[0].started
			s.poolMu.Unlock()
			break
		}
		s.poolMu.Unlock()
		time.Sleep(time.Millisecond)
	}
	got, err := s.Response(context.Background(), quickJS, testRequest())
	if err != nil || jsonOf(got) != `{"body":"quick"}` {
		t.Fatalf("the quick call: %s %v", jsonOf(got), err)
	}
	cancel()
	<-loopDone
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	if s.made != 2 {
		t.Errorf("%d runtimes made, want 2", s.made)
	}
}

// A runtime the pool has not used for poolIdle is let go when another call ends, down to one.
func TestPoolShrinksWhenIdle(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	defer func(w, i time.Duration) { poolWait, poolIdle = w, i }(poolWait, poolIdle)
	poolWait = 0 // every call beside a busy runtime makes one
	for _, tc := range []struct {
		idle       time.Duration
		made, kept int
	}{{time.Hour, 3, 3}, {0, 1, 1}} {
		poolIdle = tc.idle
		s := newEngine(t, time.Minute).NewScope(nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := s.Response(ctx, `function (config) { while (true) {} }`, testRequest())
				done <- err
			}()
		}
		for { // until three loops run, each on its runtime
			s.poolMu.Lock()
			n := len(s.busy)
			s.poolMu.Unlock()
			if n == 3 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		for range 3 {
			<-done
		}
		s.poolMu.Lock()
		made, kept := s.made, len(s.idle)
		s.poolMu.Unlock()
		if made != tc.made || kept != tc.kept {
			t.Errorf("poolIdle %s: %d made, %d idle; want %d, %d", tc.idle, made, kept, tc.made, tc.kept)
		}
		got, err := s.Response(context.Background(), `function (config) { return { body: ['after'].join('') }; }`, testRequest())
		if err != nil || jsonOf(got) != `{"body":"after"}` {
			t.Errorf("poolIdle %s: the call after: %s %v", tc.idle, jsonOf(got), err)
		}
	}
}
