package imposter

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func scenarioImposter(t *testing.T, stubs string) *Imposter {
	t.Helper()
	def, errs := config.ParseImposter(mustJSON(t, `{"protocol":"http","port":4545,"stubs":`+stubs+`}`), config.ParseOptions{})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	im, err := New(def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func answer(t *testing.T, im *Imposter, path string) string {
	t.Helper()
	st, resp, _, _, err := im.resolve(im.tbl.Load(), &request.Request{Method: "GET", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		return "(default)"
	}
	return string(static(resp).body)
}

func TestScenarioStates(t *testing.T) {
	im := scenarioImposter(t, `[
		{"scenarioName":"cart","requiredScenarioState":"Started","newScenarioState":"Filled","predicates":[{"equals":{"path":"/add"}}],"responses":[{"is":{"body":"added"}}]},
		{"scenarioName":"cart","requiredScenarioState":"Filled","predicates":[{"equals":{"path":"/cart"}}],"responses":[{"is":{"body":"one item"}}]},
		{"predicates":[{"equals":{"path":"/cart"}}],"responses":[{"is":{"body":"empty"}}]},
		{"scenarioName":"cart","newScenarioState":"Started","predicates":[{"equals":{"path":"/clear"}}],"responses":[{"is":{"body":"cleared"}}]},
		{"scenarioName":"cart","predicates":[{"equals":{"path":"/peek"}}],"responses":[{"is":{"body":"peek"}}]}
	]`)
	steps := []struct{ path, want, state string }{
		{"/cart", "empty", "Started"}, // the stub requiring Filled does not match: the next one does
		{"/add", "added", "Filled"},
		{"/add", "(default)", "Filled"}, // requires Started
		{"/cart", "one item", "Filled"},
		{"/peek", "peek", "Filled"}, // a name without states matches in any state
		{"/clear", "cleared", "Started"},
		{"/cart", "empty", "Started"},
	}
	for i, s := range steps {
		if got := answer(t, im, s.path); got != s.want {
			t.Errorf("step %d: %s answered %q, want %q", i, s.path, got, s.want)
		}
		if got := im.Scenarios()[0].State; got != s.state {
			t.Errorf("step %d: state %q after %s, want %q", i, got, s.path, s.state)
		}
	}
	info := im.Scenarios()
	if len(info) != 1 || info[0].Name != "cart" || len(info[0].PossibleStates) != 2 {
		t.Errorf("Scenarios() = %+v", info)
	}
	if ok, _ := im.SetScenarioState("cart", "Filled"); !ok || answer(t, im, "/cart") != "one item" {
		t.Error("SetScenarioState did not take")
	}
	if ok1, _ := im.SetScenarioState("nope", "x"); ok1 {
		t.Error("SetScenarioState took a scenario no stub names")
	}
	if ok2, _ := im.ResetScenarios("nope"); ok2 {
		t.Error("a scenario no stub names was set")
	}
	_, _ = im.ResetScenarios("")
	if answer(t, im, "/cart") != "empty" {
		t.Error("ResetScenarios did not go back to Started")
	}
	// A scenario keeps its state when the stubs are replaced.
	_, _ = im.SetScenarioState("cart", "Filled")
	if err := im.ReplaceStubs(im.StubDefinitions()); err != nil {
		t.Fatal(err)
	}
	if answer(t, im, "/cart") != "one item" {
		t.Error("replacing the stubs reset the scenario")
	}
}

// TestScenarioTransitionIsAtomic sends concurrent requests at a stub that moves its scenario
// from Started: exactly one of them takes the transition, the others get the next stub.
func TestScenarioTransitionIsAtomic(t *testing.T) {
	for round := 0; round < 20; round++ {
		im := scenarioImposter(t, `[
			{"scenarioName":"once","requiredScenarioState":"Started","newScenarioState":"Taken","responses":[{"is":{"body":"winner"}}]},
			{"responses":[{"is":{"body":"loser"}}]}
		]`)
		const n = 32
		var winners atomic.Int32
		var wg sync.WaitGroup
		startGate := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startGate
				_, resp, _, _, err := im.resolve(im.tbl.Load(), &request.Request{Method: "GET", Path: "/"})
				if err != nil {
					t.Error(err)
					return
				}
				if string(static(resp).body) == "winner" {
					winners.Add(1)
				}
			}()
		}
		close(startGate)
		wg.Wait()
		if got := winners.Load(); got != 1 {
			t.Fatalf("round %d: %d of %d concurrent requests took the transition, want exactly 1", round, got, n)
		}
	}
}

func TestScenarioKeysAreValidated(t *testing.T) {
	for _, stub := range []string{
		`{"requiredScenarioState":"x","responses":[{"is":{}}]}`,
		`{"scenarioName":3,"responses":[{"is":{}}]}`,
		`{"scenarioName":"s","newScenarioState":"","responses":[{"is":{}}]}`,
	} {
		if _, errs := config.ParseStub(mustJSON(t, stub), config.ParseOptions{}, "stubs[0]"); len(errs) == 0 {
			t.Errorf("%s: accepted", stub)
		}
	}
}
