package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// sharedState is what MemoryState and RedisImposter both offer of an imposter's state.
type sharedState interface {
	MoveScenario(name, from, to string) (bool, error)
	ScenarioState(name string) (string, error)
	ScenarioStates(ctx context.Context) (map[string]string, error)
	SetScenario(ctx context.Context, name, state string) error
	ResetScenarios(ctx context.Context, names ...string) error
	LockState(wait, hold time.Duration) ([]byte, string, error)
	UnlockState(token string, state []byte) (bool, error)
}

var (
	_ sharedState = (*MemoryState)(nil)
	_ sharedState = (*RedisImposter)(nil)
)

// startRedis starts a redis-server on a free loopback port for the test and returns a Redis
// store on it. The test is skipped when redis-server is not installed, except in CI.
func startRedis(t *testing.T) *Redis {
	t.Helper()
	r, _ := startRedisProcess(t)
	return r
}

// startRedisProcess is startRedis that also returns the redis-server process (to stall it).
func startRedisProcess(t *testing.T) (*Redis, *os.Process) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (.ci/run installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", t.TempDir(),
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	r, err := OpenRedis(RedisOptions{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), Node: "test",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Connect(context.Background(), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	return r, cmd.Process
}

// stateStores runs test against a MemoryState and against a RedisImposter on a real Redis.
func stateStores(t *testing.T, test func(t *testing.T, s sharedState)) {
	t.Run("memory", func(t *testing.T) { test(t, NewMemoryState()) })
	t.Run("redis", func(t *testing.T) { test(t, startRedis(t).Imposter("imp1")) })
}

func TestScenarioStates(t *testing.T) {
	stateStores(t, func(t *testing.T, s sharedState) {
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		state := func(name string) string {
			t.Helper()
			st, err := s.ScenarioState(name)
			must(err)
			return st
		}
		if st := state("cart"); st != ScenarioStarted {
			t.Errorf("a new scenario is in %q, want %q", st, ScenarioStarted)
		}
		if moved, err := s.MoveScenario("cart", "Filled", "Paid"); moved || err != nil {
			t.Errorf("moved from a state the scenario is not in: %v %v", moved, err)
		}
		if moved, err := s.MoveScenario("cart", ScenarioStarted, "Filled"); !moved || err != nil {
			t.Errorf("did not move from Started: %v %v", moved, err)
		}
		if moved, _ := s.MoveScenario("cart", ScenarioStarted, "Filled"); moved {
			t.Error("moved twice from Started")
		}
		if st := state("cart"); st != "Filled" {
			t.Errorf("state %q after the move, want Filled", st)
		}
		must(s.SetScenario(ctx, "door", "Open"))
		states, err := s.ScenarioStates(ctx)
		must(err)
		if len(states) != 2 || states["cart"] != "Filled" || states["door"] != "Open" {
			t.Errorf("ScenarioStates = %v", states)
		}
		must(s.ResetScenarios(ctx, "cart"))
		if state("cart") != ScenarioStarted || state("door") != "Open" {
			t.Errorf("after resetting cart: cart %q, door %q", state("cart"), state("door"))
		}
		must(s.ResetScenarios(ctx))
		if states, _ := s.ScenarioStates(ctx); len(states) != 0 || state("door") != ScenarioStarted {
			t.Errorf("after resetting all: %v", states)
		}
	})
}

// TestScenarioMoveHasOneWinner moves one scenario from one state from many goroutines at
// once, round after round: exactly one moves it each round.
func TestScenarioMoveHasOneWinner(t *testing.T) {
	stateStores(t, func(t *testing.T, s sharedState) {
		for round := 0; round < 5; round++ {
			from, to := strconv.Itoa(round), strconv.Itoa(round+1)
			if round == 0 {
				from = ScenarioStarted
			}
			var wins sync.Map
			var wg sync.WaitGroup
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					moved, err := s.MoveScenario("ticket", from, to)
					if err != nil {
						t.Error(err)
					}
					if moved {
						wins.Store(i, true)
					}
				}()
			}
			wg.Wait()
			n := 0
			wins.Range(func(any, any) bool { n++; return true })
			if n != 1 {
				t.Fatalf("round %d: %d of 40 concurrent moves won, want 1", round, n)
			}
		}
	})
}

// TestScriptStateLock has many goroutines read, increment and write back a counter under the
// lock: none loses another's increment.
func TestScriptStateLock(t *testing.T) {
	stateStores(t, func(t *testing.T, s sharedState) {
		state, token, err := s.LockState(time.Second, time.Minute)
		if err != nil || state != nil {
			t.Fatalf("first LockState: %q %v, want no state", state, err)
		}
		if ok, err := s.UnlockState(token, nil); !ok || err != nil {
			t.Fatalf("UnlockState without a state: %v %v", ok, err)
		}
		const workers, each = 8, 25
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					state, token, err := s.LockState(time.Minute, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(state))
					if ok, err := s.UnlockState(token, []byte(strconv.Itoa(n+1))); !ok || err != nil {
						t.Errorf("UnlockState: %v %v", ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		state, token, err = s.LockState(time.Second, time.Minute)
		if err != nil || string(state) != strconv.Itoa(workers*each) {
			t.Fatalf("after %d increments under the lock: %q %v", workers*each, state, err)
		}
		// While it is held, another LockState waits, and gives up when its wait ends.
		if _, _, err := s.LockState(0, time.Minute); !errors.Is(err, ErrLockBusy) {
			t.Errorf("LockState on a held lock: %v, want ErrLockBusy", err)
		}
		if ok, _ := s.UnlockState("not the token", []byte("x")); ok {
			t.Error("UnlockState with another token released the lock")
		}
		if ok, _ := s.UnlockState(token, nil); !ok {
			t.Error("UnlockState with the token did not release the lock")
		}
	})
}

// TestScriptStateLockExpires takes the lock for a short hold and keeps it: another LockState
// gets it once it expires, and the first holder's late UnlockState stores nothing.
func TestScriptStateLockExpires(t *testing.T) {
	stateStores(t, func(t *testing.T, s sharedState) {
		_, stale, err := s.LockState(time.Second, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		_, token, err := s.LockState(time.Minute, time.Minute)
		if err != nil {
			t.Fatalf("LockState after the holder's hold ended: %v", err)
		}
		if ok, _ := s.UnlockState(stale, []byte("late")); ok {
			t.Error("a holder whose lock expired stored its state")
		}
		if ok, _ := s.UnlockState(token, []byte("mine")); !ok {
			t.Error("the new holder could not store its state")
		}
		if state, token, _ := s.LockState(time.Second, time.Minute); string(state) != "mine" {
			t.Errorf("state %q, want mine", state)
		} else {
			_, _ = s.UnlockState(token, nil)
		}
	})
}

// stall stops the redis-server process p (SIGSTOP) for d: it accepts connections but answers
// nothing, as a store on a machine too loaded to run it, until it goes on with what it was sent.
func stall(t *testing.T, p *os.Process, d time.Duration) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(d, func() { _ = p.Signal(syscall.SIGCONT) })
}

// TestScriptStateLockSurvivesAStall stalls Redis for longer than a command may take (so the
// store is taken for lost) and shorter than stateGrace, once while a node takes the script
// state's lock and once while it releases it: both go through once Redis answers again, the
// release storing the state, so that no call falls back to the node's own copy of the state.
// A try that timed out may have gone through when Redis went on: the lock it took is the
// token's, and a release it made is not taken for an expired lock.
func TestScriptStateLockSurvivesAStall(t *testing.T) {
	r, p := startRedisProcess(t)
	ri := r.Imposter("imp1")
	stall(t, p, redisTimeout+500*time.Millisecond)
	state, token, err := ri.LockState(time.Minute, time.Minute)
	if err != nil || state != nil {
		t.Fatalf("LockState over a stalled store: %q %v, want the lock and no state", state, err)
	}
	if r.lostAt.Load() == 0 {
		t.Error("the stall did not make the store lost: the test tests nothing")
	}
	r.up.Store(true) // (the heartbeat would: Run is not running)
	stall(t, p, redisTimeout+500*time.Millisecond)
	if ok, err := ri.UnlockState(token, []byte("1")); !ok || err != nil {
		t.Fatalf("UnlockState over a stalled store: %v %v, want the state stored", ok, err)
	}
	r.up.Store(true)
	state, token, err = ri.LockState(0, time.Minute) // free: no wait
	if err != nil || string(state) != "1" {
		t.Fatalf("LockState after the stalled release: %q %v, want the state stored by it", state, err)
	}
	if ok, err := ri.UnlockState(token, nil); !ok || err != nil {
		t.Fatalf("UnlockState: %v %v", ok, err)
	}
	if ok, err := ri.UnlockState(token, []byte("2")); !ok || err != nil {
		t.Errorf("UnlockState again, as a try after one whose answer was lost: %v %v, want true", ok, err)
	}
	if state, token, _ := ri.LockState(0, time.Minute); string(state) != "1" {
		t.Errorf("state %q after a second release with the same token, want 1 (stored once)", state)
	} else {
		_, _ = ri.UnlockState(token, nil)
	}
}

// TestScriptStateReleasedWhileTakenForLost: a node that took the lock (the store answered)
// releases it, and stores the state, even when it takes the store for lost by then (its
// heartbeat has not found it back yet), however long ago it lost it: the release was refused
// at once, leaving the lock held until its hold ended and the call's changes not stored.
func TestScriptStateReleasedWhileTakenForLost(t *testing.T) {
	r := startRedis(t)
	ri := r.Imposter("imp1")
	_, token, err := ri.LockState(time.Second, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.up.Store(false)
	r.lostAt.Store(time.Now().Add(-time.Minute).UnixNano())
	if ok, err := ri.UnlockState(token, []byte("v")); !ok || err != nil {
		t.Fatalf("UnlockState with the store taken for lost: %v %v, want the state stored", ok, err)
	}
	r.up.Store(true)
	state, token, err := ri.LockState(0, time.Minute)
	if err != nil || string(state) != "v" {
		t.Fatalf("LockState after: %q %v, want the lock free and the state stored", state, err)
	}
	_, _ = ri.UnlockState(token, nil)
}

// TestScriptStateLockGivesUpOnALostStore stalls Redis for longer than stateGrace: LockState
// fails (the call then uses the node's copy) rather than waiting for all of its wait, and, the
// store lost for longer than the grace, the next one fails at once.
func TestScriptStateLockGivesUpOnALostStore(t *testing.T) {
	r, p := startRedisProcess(t)
	ri := r.Imposter("imp1")
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Signal(syscall.SIGCONT) }()
	var lost *UnavailableError
	if _, _, err := ri.LockState(time.Hour, time.Hour); !errors.As(err, &lost) {
		t.Fatalf("LockState on a store stalled past the grace: %v, want the store unavailable", err)
	}
	if _, _, err := ri.LockState(time.Hour, time.Hour); !errors.As(err, &lost) {
		t.Fatalf("LockState again: %v, want the store unavailable", err)
	}
}

// TestDeletingAnImposterDropsItsState saves an imposter, gives it scenario and script state,
// and deletes it: its state goes with it.
func TestDeletingAnImposterDropsItsState(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	im := Imposter{Port: 4545, ID: "inc1", Render: func() (*config.Object, []string) { return config.NewObject("protocol", "http"), nil }}
	if _, err := r.Save(ctx, Change{Put: []Imposter{im}}); err != nil {
		t.Fatal(err)
	}
	ri := r.Imposter("inc1")
	if err := ri.SetScenario(ctx, "cart", "Filled"); err != nil {
		t.Fatal(err)
	}
	_, token, err := ri.LockState(time.Second, time.Minute)
	if err == nil {
		_, err = ri.UnlockState(token, []byte(`{"n":1}`))
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, Change{Deleted: []int{4545}}); err != nil {
		t.Fatal(err)
	}
	again := r.Imposter("inc1")
	if st, _ := again.ScenarioState("cart"); st != ScenarioStarted {
		t.Errorf("scenario state %q after the imposter was deleted", st)
	}
	if state, token, _ := again.LockState(time.Second, time.Minute); state != nil {
		t.Errorf("script state %q after the imposter was deleted", state)
	} else {
		_, _ = again.UnlockState(token, nil)
	}
}
