package imposter

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
)

// StartedState is the state every scenario starts in, as in WireMock.
const StartedState = "Started"

// scenario is one named state machine of an imposter. Its state changes atomically.
type scenario struct {
	name  string
	state atomic.Pointer[string]
}

var started = StartedState

func newScenario(name string) *scenario {
	sc := &scenario{name: name}
	sc.state.Store(&started)
	return sc
}

// State returns the current state.
func (sc *scenario) State() string { return *sc.state.Load() }

// transition moves the scenario from required to next; it reports false, changing nothing,
// when the scenario is not in required. Of several concurrent transitions from the same
// state, exactly one succeeds.
func (sc *scenario) transition(required string, next *string) bool {
	for {
		cur := sc.state.Load()
		if *cur != required {
			return false
		}
		if sc.state.CompareAndSwap(cur, next) {
			return true
		}
	}
}

// stubScenario is what a stub says about a scenario: the state it requires (when required is
// set) and the state it moves it to (when next is set).
type stubScenario struct {
	sc       *scenario
	required string
	hasReq   bool
	next     *string
}

// take reports whether the stub may answer in the scenario's current state and, when it may,
// moves the scenario to the stub's new state, atomically.
func (ss *stubScenario) take() bool {
	switch {
	case ss.hasReq && ss.next != nil:
		if *ss.next == ss.required {
			return ss.sc.State() == ss.required
		}
		return ss.sc.transition(ss.required, ss.next)
	case ss.hasReq:
		return ss.sc.State() == ss.required
	case ss.next != nil:
		ss.sc.state.Store(ss.next)
	}
	return true
}

// scenarios are an imposter's scenarios by name. They outlive stub changes: a stub replaced
// by one naming the same scenario finds it in the state it was.
type scenarios struct {
	mu     sync.Mutex
	byName map[string]*scenario
}

func (s *scenarios) get(name string) *scenario {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byName == nil {
		s.byName = map[string]*scenario{}
	}
	sc := s.byName[name]
	if sc == nil {
		sc = newScenario(name)
		s.byName[name] = sc
	}
	return sc
}

// stubScenarioOf reads a stub's scenarioName, requiredScenarioState and newScenarioState
// (validated by config.ParseStub); nil when the stub names no scenario.
func (im *Imposter) stubScenarioOf(def *config.Object) *stubScenario {
	name, ok := get(def, "scenarioName").(string)
	if !ok {
		return nil
	}
	ss := &stubScenario{sc: im.scen.get(name)}
	if req, ok := get(def, "requiredScenarioState").(string); ok {
		ss.required, ss.hasReq = req, true
	}
	if next, ok := get(def, "newScenarioState").(string); ok {
		ss.next = &next
	}
	if !ss.hasReq && ss.next == nil {
		return nil
	}
	return ss
}

// ScenarioInfo is one scenario as GET /imposters/:port/scenarios shows it.
type ScenarioInfo struct {
	Name           string
	State          string
	PossibleStates []string
}

// Scenarios returns the scenarios the imposter's stubs name, by name, with their state and
// the states the stubs mention.
func (im *Imposter) Scenarios() []ScenarioInfo {
	byName := map[string]*ScenarioInfo{}
	for _, s := range im.tbl.Load().stubs {
		name, ok := get(s.def, "scenarioName").(string)
		if !ok {
			continue
		}
		info := byName[name]
		if info == nil {
			info = &ScenarioInfo{Name: name, State: im.scen.get(name).State(), PossibleStates: []string{StartedState}}
			byName[name] = info
		}
		for _, k := range []string{"requiredScenarioState", "newScenarioState"} {
			if st, ok := get(s.def, k).(string); ok && !contains(info.PossibleStates, st) {
				info.PossibleStates = append(info.PossibleStates, st)
			}
		}
	}
	out := make([]ScenarioInfo, 0, len(byName))
	for _, info := range byName {
		out = append(out, *info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// SetScenarioState sets a scenario's state; it reports false when no stub names the scenario.
func (im *Imposter) SetScenarioState(name, state string) bool {
	if !im.namesScenario(name) {
		return false
	}
	im.scen.get(name).state.Store(&state)
	return true
}

// ResetScenarios puts every scenario (or the one named, when name is not empty) back in its
// Started state; it reports false when name is not empty and no stub names it.
func (im *Imposter) ResetScenarios(name string) bool {
	if name != "" {
		return im.SetScenarioState(name, StartedState)
	}
	im.scen.mu.Lock()
	defer im.scen.mu.Unlock()
	for _, sc := range im.scen.byName {
		sc.state.Store(&started)
	}
	return true
}

func (im *Imposter) namesScenario(name string) bool {
	for _, s := range im.tbl.Load().stubs {
		if n, ok := get(s.def, "scenarioName").(string); ok && n == name {
			return true
		}
	}
	return false
}

// scenarioMatch returns the first stub from idx on (idx matched req's predicates) whose
// scenario condition holds, taking its transition; -1 when none does. Stubs after idx are
// matched one by one: only imposters whose matched stub names a scenario come here.
func (t *table) scenarioMatch(idx int, match func(int) (bool, error)) (int, error) {
	for i := idx; i < len(t.stubs); i++ {
		if i > idx {
			ok, err := match(i)
			if err != nil {
				return -1, err
			}
			if !ok {
				continue
			}
		}
		if ss := t.stubs[i].scen; ss == nil || ss.take() {
			return i, nil
		}
	}
	return -1, nil
}
