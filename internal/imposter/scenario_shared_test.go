package imposter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/store"
)

// sharedScenarios is a SharedImposter whose scenario states are a store.MemoryState (the other
// methods are not used by these tests and panic); while down is set they fail as a lost store.
type sharedScenarios struct {
	SharedImposter
	m    *store.MemoryState
	down atomic.Bool
	// calls counts the scenario operations asked of the store.
	calls atomic.Int64
}

var errDown = errors.New("store down")

func (s *sharedScenarios) op() error {
	s.calls.Add(1)
	if s.down.Load() {
		return errDown
	}
	return nil
}

func (s *sharedScenarios) MoveScenario(name, from, to string) (bool, error) {
	if err := s.op(); err != nil {
		return false, err
	}
	return s.m.MoveScenario(name, from, to)
}

func (s *sharedScenarios) ScenarioState(name string) (string, error) {
	if err := s.op(); err != nil {
		return "", err
	}
	return s.m.ScenarioState(name)
}

func (s *sharedScenarios) ScenarioStates(ctx context.Context) (map[string]string, error) {
	if err := s.op(); err != nil {
		return nil, err
	}
	return s.m.ScenarioStates(ctx)
}

func (s *sharedScenarios) SetScenario(ctx context.Context, name, state string) error {
	if err := s.op(); err != nil {
		return err
	}
	return s.m.SetScenario(ctx, name, state)
}

func (s *sharedScenarios) ResetScenarios(ctx context.Context, names ...string) error {
	if err := s.op(); err != nil {
		return err
	}
	return s.m.ResetScenarios(ctx, names...)
}

const ticketStubs = `[
	{"scenarioName":"ticket","requiredScenarioState":"Started","newScenarioState":"Sold","predicates":[{"equals":{"path":"/buy"}}],"responses":[{"is":{"body":"sold"}}]},
	{"predicates":[{"equals":{"path":"/buy"}}],"responses":[{"is":{"body":"sold out"}}]},
	{"scenarioName":"ticket","requiredScenarioState":"Sold","predicates":[{"equals":{"path":"/status"}}],"responses":[{"is":{"body":"gone"}}]},
	{"predicates":[{"equals":{"path":"/status"}}],"responses":[{"is":{"body":"available"}}]},
	{"predicates":[{"equals":{"path":"/plain"}}],"responses":[{"is":{"body":"plain"}}]}
]`

// TestScenariosShared runs two imposters (two nodes) on one shared scenario state: a sale on
// one shows on the other, concurrent sales over both have one winner, a state set through one
// is the other's, plain stubs ask the store nothing, and a lost store falls back to each
// node's own state.
func TestScenariosShared(t *testing.T) {
	m := store.NewMemoryState()
	a, b := scenarioImposter(t, ticketStubs), scenarioImposter(t, ticketStubs)
	sa, sb := &sharedScenarios{m: m}, &sharedScenarios{m: m}
	a.shared, b.shared = sa, sb

	if got := answer(t, b, "/plain"); got != "plain" || sa.calls.Load()+sb.calls.Load() != 0 {
		t.Errorf("a plain stub answered %q and asked the store %d times", got, sa.calls.Load()+sb.calls.Load())
	}
	if got := answer(t, a, "/buy"); got != "sold" {
		t.Fatalf("first sale on a: %q", got)
	}
	if got := answer(t, b, "/status"); got != "gone" {
		t.Errorf("b after the sale on a: /status = %q, want gone", got)
	}
	if got := answer(t, b, "/buy"); got != "sold out" {
		t.Errorf("b after the sale on a: /buy = %q, want sold out", got)
	}

	for round := 0; round < 3; round++ {
		if ok, err := b.ResetScenarios(""); !ok || err != nil {
			t.Fatalf("reset: %v %v", ok, err)
		}
		if got := a.Scenarios()[0].State; got != StartedState {
			t.Fatalf("a after b reset the scenarios: %q", got)
		}
		var sold atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				im := a
				if i%2 == 1 {
					im = b
				}
				st, resp, _, _, err := im.resolve(im.tbl.Load(), &request.Request{Method: "GET", Path: "/buy"})
				if err == nil && st != nil && string(static(resp).body) == "sold" {
					sold.Add(1)
				}
			}()
		}
		wg.Wait()
		if sold.Load() != 1 {
			t.Fatalf("round %d: %d of 40 concurrent sales over two nodes sold, want 1", round, sold.Load())
		}
	}

	if ok, err := a.SetScenarioState("ticket", StartedState); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if info := b.Scenarios(); len(info) != 1 || info[0].State != StartedState {
		t.Errorf("b after a set Started: %+v", info)
	}
	if got := answer(t, b, "/status"); got != "available" {
		t.Errorf("b after a set Started: /status = %q", got)
	}

	// The store is lost: each node goes on from its own copy; changes through the API fail.
	sa.down.Store(true)
	if got := answer(t, a, "/buy"); got != "sold" {
		t.Errorf("a without the store: /buy = %q, want sold (its copy is Started)", got)
	}
	if got := answer(t, a, "/status"); got != "gone" {
		t.Errorf("a without the store after its sale: /status = %q, want gone", got)
	}
	if info := a.Scenarios(); info[0].State != "Sold" {
		t.Errorf("a without the store lists %q, want its own Sold", info[0].State)
	}
	if ok, err := a.SetScenarioState("ticket", "Sold"); !ok || !errors.Is(err, errDown) {
		t.Errorf("SetScenarioState without the store: %v %v, want the store's error", ok, err)
	}
	if got := answer(t, b, "/status"); got != "available" {
		t.Errorf("b (its store up): /status = %q, want available", got)
	}
}
