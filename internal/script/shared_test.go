package script

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/store"
)

// countingState is a SharedState (a store.MemoryState) that counts the locks taken, and fails
// while down is set.
type countingState struct {
	*store.MemoryState
	locks atomic.Int64
	down  atomic.Bool
}

func (c *countingState) LockState(wait, hold time.Duration) ([]byte, string, error) {
	c.locks.Add(1)
	if c.down.Load() {
		return nil, "", errors.New("store down")
	}
	return c.MemoryState.LockState(wait, hold)
}

const counter = `function (config, state) {
	config.state.n = (config.state.n || 0) + 1;
	state.calls = (state.calls || 0) + 1;
	return { body: config.state.n + ' ' + state.calls };
}`

func body(t *testing.T, s *Scope, src string) string {
	t.Helper()
	resp, err := s.Response(context.Background(), src, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := resp.Get("body")
	str, _ := b.(string)
	return str
}

// TestSharedState runs two Scopes (two nodes' imposters) on one shared state: a counter kept
// in config.state and in the positional state advances once per call whichever scope runs it,
// also with calls on both at once; functions that cannot reach the state take no lock; and a
// lost store leaves each scope on its own copy.
func TestSharedState(t *testing.T) {
	e := newEngine(t, time.Minute)
	shared := &countingState{MemoryState: store.NewMemoryState()}
	a, b := e.NewScope(nil), e.NewScope(nil)
	a.ShareState(shared)
	b.ShareState(shared)
	for i := 1; i <= 6; i++ {
		s := a
		if i%2 == 0 {
			s = b
		}
		if got, want := body(t, s, counter), strconv.Itoa(i)+" "+strconv.Itoa(i); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
	}

	const workers, each = 8, 25
	seen := sync.Map{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if w%2 == 1 {
				s = b
			}
			for i := 0; i < each; i++ {
				resp, err := s.Response(context.Background(), counter, testRequest())
				if err != nil {
					t.Error(err)
					return
				}
				v, _ := resp.Get("body")
				if _, dup := seen.LoadOrStore(v, true); dup {
					t.Errorf("two calls got %v", v)
				}
			}
		}()
	}
	wg.Wait()
	total := 6 + workers*each
	if got, want := body(t, a, counter), strconv.Itoa(total+1)+" "+strconv.Itoa(total+1); got != want {
		t.Fatalf("after %d calls over two scopes: %q, want %q", total, got, want)
	}

	// A function that cannot reach the state runs beside the others and takes no lock.
	locks := shared.locks.Load()
	if got := body(t, b, `function (config) { return { body: config.request.path }; }`); got != "/users/42" {
		t.Errorf("stateless call: %q", got)
	}
	if shared.locks.Load() != locks {
		t.Error("a function that cannot reach the state took the shared state's lock")
	}

	// The store is lost: each scope goes on from its own copy, the last state it loaded or wrote.
	num := func(n int) string { return strconv.Itoa(n) + " " + strconv.Itoa(n) }
	if body(t, b, counter) != num(total+2) || body(t, a, counter) != num(total+3) {
		t.Fatal("the counter went wrong before the store was lost")
	}
	shared.down.Store(true)
	if got := body(t, a, counter); got != num(total+4) {
		t.Errorf("a without the store: %q, want %q (from its copy)", got, num(total+4))
	}
	if got := body(t, b, counter); got != num(total+3) {
		t.Errorf("b without the store: %q, want %q (from its copy, one call behind a's)", got, num(total+3))
	}
	// Back: from the store's state, which the calls made without it did not change.
	shared.down.Store(false)
	if got := body(t, b, counter); got != num(total+4) {
		t.Errorf("b with the store back: %q, want %q", got, num(total+4))
	}
}

// TestSharedStateUnchangedOrUnstorable: a call that does not change the state writes nothing
// back; a state JSON cannot hold is not stored, and the call still answers.
func TestSharedStateUnchangedOrUnstorable(t *testing.T) {
	e := newEngine(t, time.Minute)
	m := store.NewMemoryState()
	s := e.NewScope(nil)
	s.ShareState(m)
	if got := body(t, s, `function (config) { config.state.when = new Date(0); config.state.f = function () {}; return { body: 'set' }; }`); got != "set" {
		t.Fatal(got)
	}
	if got := body(t, s, `function (config) { return { body: typeof config.state.when + ' ' + typeof config.state.f }; }`); got != "string undefined" {
		t.Errorf("a Date and a function after a round trip through JSON: %q, want \"string undefined\"", got)
	}
	data, token, _ := m.LockState(time.Second, time.Minute)
	_, _ = m.UnlockState(token, nil)
	if got := body(t, s, `function (config) { config.state.self = config.state; return { body: 'cycle' }; }`); got != "cycle" {
		t.Errorf("a state with a cycle: %q", got)
	}
	after, token, _ := m.LockState(time.Second, time.Minute)
	_, _ = m.UnlockState(token, nil)
	if string(after) != string(data) {
		t.Errorf("a state JSON cannot hold was stored: %s", after)
	}
	var st map[string]any
	if v, err := config.ParseJSON(after); err != nil || config.Plain(v) == nil {
		t.Errorf("stored state %s: %v", after, err)
	} else {
		st = config.Plain(v).(map[string]any)
	}
	if imp, _ := st["imposter"].(map[string]any); imp["when"] != "1970-01-01T00:00:00.000Z" {
		t.Errorf("stored state %s", after)
	}
}

// expiringState is a SharedState (a store.MemoryState) whose locks expire, while expire is
// set, before the call releases them: UnlockState stores nothing and reports false.
type expiringState struct {
	*store.MemoryState
	expire atomic.Bool
}

func (e *expiringState) UnlockState(token string, state []byte) (bool, error) {
	if e.expire.Load() {
		_, _ = e.MemoryState.UnlockState(token, nil) // (frees it, as its expiry would)
		return false, nil
	}
	return e.MemoryState.UnlockState(token, state)
}

// TestSharedStateLockExpiredFailsTheCall: a call that changed the state but held the lock past
// its hold (the store refused its changes: another node may have changed the state since)
// fails, as a predicate, a response and a decorate, instead of answering from a state the
// store never had; a call that changed nothing answers; the next call goes on from the store.
func TestSharedStateLockExpiredFailsTheCall(t *testing.T) {
	e := newEngine(t, time.Minute)
	shared := &expiringState{MemoryState: store.NewMemoryState()}
	s := e.NewScope(nil)
	s.ShareState(shared)
	if got := body(t, s, counter); got != "1 1" {
		t.Fatalf("first call: %q", got)
	}
	shared.expire.Store(true)
	var ce *config.Error
	if resp, err := s.Response(context.Background(), counter, testRequest()); !errors.As(err, &ce) || ce.Code != config.CodeInvalidInjection {
		t.Errorf("response whose lock expired: %v %v, want an invalid injection error", resp, err)
	} else if src, _ := ce.Source.(*config.Object); src == nil || !strings.Contains(fmt.Sprint(src.Get("data")), "lock longer than") {
		t.Errorf("its error's source: %v, want the lock's expiry as its data", ce.Source)
	}
	if ok, err := s.Predicate(`function (config) { config.state.n = 100; return true; }`, testRequest()); ok || !errors.As(err, &ce) {
		t.Errorf("predicate whose lock expired: %v %v, want an invalid injection error", ok, err)
	}
	resp := config.NewObject("statusCode", 200)
	if got, err := s.Decorate(context.Background(), `function (config) { config.state.n = 100; }`, testRequest(), resp); !errors.As(err, &ce) {
		t.Errorf("decorate whose lock expired: %v %v, want an invalid injection error", got, err)
	}
	if got := body(t, s, `function (config) { return { body: 'read ' + config.state.n }; }`); got != "read 1" {
		t.Errorf("a call that changes nothing, its lock expired: %q, want \"read 1\" (the stored state)", got)
	}
	shared.expire.Store(false)
	if got := body(t, s, counter); got != "2 2" {
		t.Errorf("the next call: %q, want \"2 2\" (from the stored state)", got)
	}
}

// TestSharedStateTooLargeFailsTheCall: a call that makes the state larger than maxSharedState
// as JSON fails, storing nothing and releasing the lock; the next call goes on from the state
// stored before it.
func TestSharedStateTooLargeFailsTheCall(t *testing.T) {
	e := newEngine(t, time.Minute)
	m := store.NewMemoryState()
	s := e.NewScope(nil)
	s.ShareState(m)
	if got := body(t, s, counter); got != "1 1" {
		t.Fatalf("first call: %q", got)
	}
	big := `function (config) { config.state.n += 1; config.state.big = 'x'.repeat(` + strconv.Itoa(maxSharedState) + `); return { body: 'big' }; }`
	var ce *config.Error
	if resp, err := s.Response(context.Background(), big, testRequest()); !errors.As(err, &ce) {
		t.Fatalf("a call making the state %d MiB: %v %v, want an invalid injection error", maxSharedState>>20, resp, err)
	} else if src, _ := ce.Source.(*config.Object); src == nil || !strings.Contains(fmt.Sprint(src.Get("data")), "MiB a shared state may hold") {
		t.Errorf("its error's source: %v, want the size limit as its data", ce.Source)
	}
	small := `function (config) { config.state.big = 'x'.repeat(` + strconv.Itoa(maxSharedState/2) + `); return { body: 'half' }; }`
	if got := body(t, s, small); got != "half" {
		t.Errorf("a state of half the limit: %q", got)
	}
	if got := body(t, s, counter); got != "2 2" {
		t.Errorf("the next call: %q, want \"2 2\" (from the stored state: the failed call's changes not stored)", got)
	}
	state, token, err := m.LockState(0, time.Minute)
	if err != nil {
		t.Fatalf("the lock after the calls: %v (not released?)", err)
	}
	_, _ = m.UnlockState(token, nil)
	if len(state) < maxSharedState/2 || len(state) > maxSharedState {
		t.Errorf("stored state of %d bytes, want the half-limit one", len(state))
	}
}
