package imposter

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
)

// StartedState is the state every scenario starts in, as in WireMock.
const StartedState = "Started"

// scenario is one named state machine of an imposter. Its state changes atomically. With a
// shared store (Options.Shared) the state the store holds is the scenario's, for every node,
// and this one is the node's copy: it goes on from it while the store cannot be reached, as
// response cycles go on from the node's own count.
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
	im       *Imposter // its shared state, once it has one, holds the scenario's
	sc       *scenario
	required string
	hasReq   bool
	next     *string
}

// take reports whether the stub may answer in the scenario's current state and, when it may,
// moves the scenario to the stub's new state, atomically (across the nodes, with a shared
// store: one round trip to it).
func (ss *stubScenario) take() bool {
	if sh := ss.im.shared; sh != nil {
		if ok, err := ss.takeShared(sh); err == nil {
			return ok
		}
		// The store cannot be reached (the store has logged it): this node's state.
	}
	return ss.takeLocal()
}

// takeShared is take on the state the store holds, of which the scenario keeps a copy.
func (ss *stubScenario) takeShared(sh SharedImposter) (bool, error) {
	name := ss.sc.name
	switch {
	case ss.hasReq && ss.next != nil && *ss.next != ss.required:
		moved, err := sh.MoveScenario(name, ss.required, *ss.next)
		if moved {
			ss.sc.state.Store(ss.next)
		}
		return moved, err
	case ss.hasReq:
		state, err := sh.ScenarioState(name)
		if err != nil {
			return false, err
		}
		ss.sc.mirror(state)
		return state == ss.required, nil
	case ss.next != nil:
		if err := sh.SetScenario(context.Background(), name, *ss.next); err != nil {
			return false, err
		}
		ss.sc.state.Store(ss.next)
	}
	return true, nil
}

// mirror makes state, read from a shared store, the scenario's copy.
func (sc *scenario) mirror(state string) {
	if sc.State() != state {
		sc.state.Store(&state)
	}
}

// takeLocal is take on this node's state.
func (ss *stubScenario) takeLocal() bool {
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
	ss := &stubScenario{im: im, sc: im.scen.get(name)}
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
// the states the stubs mention. With a shared store, the states are the store's (this node's
// while it cannot be reached).
func (im *Imposter) Scenarios() []ScenarioInfo {
	shared := im.sharedScenarioStates()
	byName := map[string]*ScenarioInfo{}
	for _, s := range im.tbl.Load().stubs {
		name, ok := s.field("scenarioName").(string)
		if !ok {
			continue
		}
		info := byName[name]
		if info == nil {
			sc := im.scen.get(name)
			if shared != nil {
				state, ok := shared[name]
				if !ok {
					state = StartedState
				}
				sc.mirror(state)
			}
			info = &ScenarioInfo{Name: name, State: sc.State(), PossibleStates: []string{StartedState}}
			byName[name] = info
		}
		for _, k := range []string{"requiredScenarioState", "newScenarioState"} {
			if st, ok := s.field(k).(string); ok && !contains(info.PossibleStates, st) {
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

// sharedScenarioStates returns the scenario states a shared store holds, by name; nil without
// a shared store or when it cannot be read.
func (im *Imposter) sharedScenarioStates() map[string]string {
	if im.shared == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	states, err := im.shared.ScenarioStates(ctx)
	if err != nil {
		return nil
	}
	if states == nil {
		states = map[string]string{}
	}
	return states
}

// SetScenarioState sets a scenario's state (for every node, with a shared store); it reports
// false when no stub names the scenario. The error says the shared store did not take it.
func (im *Imposter) SetScenarioState(name, state string) (bool, error) {
	if !im.namesScenario(name) {
		return false, nil
	}
	if im.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if err := im.shared.SetScenario(ctx, name, state); err != nil {
			return true, err
		}
	}
	im.scen.get(name).state.Store(&state)
	return true, nil
}

// ResetScenarios puts every scenario (or the one named, when name is not empty) back in its
// Started state (for every node, with a shared store); it reports false when name is not empty
// and no stub names it. The error says the shared store did not take it.
func (im *Imposter) ResetScenarios(name string) (bool, error) {
	if name != "" {
		return im.SetScenarioState(name, StartedState)
	}
	if im.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if err := im.shared.ResetScenarios(ctx); err != nil {
			return true, err
		}
	}
	im.scen.mu.Lock()
	defer im.scen.mu.Unlock()
	for _, sc := range im.scen.byName {
		sc.state.Store(&started)
	}
	return true, nil
}

func (im *Imposter) namesScenario(name string) bool {
	for _, s := range im.tbl.Load().stubs {
		if n, ok := s.field("scenarioName").(string); ok && n == name {
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
