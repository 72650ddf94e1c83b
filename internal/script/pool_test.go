package script

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
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
	got, err := s.Response(context.Background(), `function (config) { return { body: config.request.path }; }`, testRequest())
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
		got, err := s.Response(context.Background(), `function (config) { return { body: 'after' }; }`, testRequest())
		if err != nil || jsonOf(got) != `{"body":"after"}` {
			t.Fatalf("the call after %s: %s %v", src, jsonOf(got), err)
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
	slow := `function (config) { setTimeout(function () { config.callback({ body: 'slow' }); }, 300); }`
	quick := `function (config) { return { body: 'quick' }; }`
	for _, tc := range []struct {
		wait time.Duration
		made int
	}{{time.Hour, 1}, {0, 2}} {
		poolWait = tc.wait
		e := newEngine(t, time.Minute)
		s := e.NewScope(nil)
		slowDone := make(chan error, 1)
		go func() {
			_, err := s.Response(context.Background(), slow, testRequest())
			slowDone <- err
		}()
		for busy := false; !busy; { // until the slow call holds the only runtime
			time.Sleep(time.Millisecond)
			s.poolMu.Lock()
			busy = s.made == 1 && !s.creating && len(s.idle) == 0
			s.poolMu.Unlock()
		}
		got, err := s.Response(context.Background(), quick, testRequest())
		if err != nil || jsonOf(got) != `{"body":"quick"}` {
			t.Fatalf("poolWait %s: %s %v", tc.wait, jsonOf(got), err)
		}
		if err := <-slowDone; err != nil {
			t.Fatal(err)
		}
		s.poolMu.Lock()
		made := s.made
		s.poolMu.Unlock()
		if made != tc.made {
			t.Errorf("poolWait %s: %d runtimes made, want %d", tc.wait, made, tc.made)
		}
	}
}
