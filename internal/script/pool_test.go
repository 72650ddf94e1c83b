package script

import (
	"context"
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
