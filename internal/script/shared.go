package script

import (
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// SharedState keeps the state of a Scope's scripts (imposterState, config.state, and the
// deprecated positional state of inject responses) in a store that several nodes share
// (--store-script-state); store.RedisImposter implements it.
type SharedState interface {
	// LockState takes the state's lock for up to hold, waiting up to wait while another node
	// holds it, and returns the state stored (nil when none) and the lock's token.
	LockState(wait, hold time.Duration) (state []byte, token string, err error)
	// UnlockState releases the lock, storing state first unless it is nil; it reports false,
	// storing nothing, when token no longer held the lock (it was held longer than hold).
	UnlockState(token string, state []byte) (bool, error)
}

// maxSharedState bounds the scripts' state as JSON in a shared store: every call that may use
// it loads it, parses it, writes it as JSON and stores it (about 0.2 s a call for each MiB on a
// 2-core machine: 3 s at 15 MiB, near the lock's hold under load), and a store command that
// takes more than a second is taken for the store lost (a 100 MiB state took the store for lost
// on every write, and the call failed only once the lock had expired, 19 s later).
const maxSharedState = 8 << 20

// lockMargin is how much longer than a call's time limit a Scope holds the shared state's
// lock: the round trips that load and store the state.
const lockMargin = 2 * time.Second

// ShareState makes the scripts' state live in st from the next call on: every call that may
// reach the state (see stateless.go) takes st's lock, loads the state into the runtime, runs,
// and writes the state back as JSON if it changed, then releases the lock. Calls on every node
// sharing st thus see each other's changes, one call at a time across the nodes. The state
// keeps what JSON keeps: functions, undefined and the prototypes of objects are lost between
// calls, and a Date becomes its ISO string. A call that runs out of memory stores nothing; a
// state that cannot be written as JSON (a cycle, a BigInt) is not stored, with a warning.
// While st fails (the store is lost, or another node held the lock for all of a call's time
// limit) calls use this node's copy of the state, the last one it loaded or wrote.
func (s *Scope) ShareState(st SharedState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = st
}

// hasState reports whether a call of kind is passed the state.
func hasState(kind callKind) bool {
	return kind == kindPredicate || kind == kindResponse || kind == kindDecorate
}

// leaveStateless is leave for a call of a kind that sees no script state (hasState is false):
// it takes no lock of a shared state, so leave has no error to give it.
func (s *Scope) leaveStateless(rt *runtime) { _ = s.leave(rt) }

// loadShared takes the shared state's lock and loads the state into rt; s.mu is held. On
// failure rt keeps this node's state.
func (s *Scope) loadShared(rt *runtime) {
	hold := s.e.timeout + lockMargin
	data, token, err := s.shared.LockState(hold+time.Second, hold)
	if err != nil {
		s.sharedFailed("cannot load the script state from the store, so this call uses this node's copy", err)
		return
	}
	s.token = token
	if err := rt.setState(data); err != nil {
		rt.log.Warn(fmt.Sprintf("the script state in the store cannot be read (%v): this call starts from an empty state", err))
		_ = rt.setState(nil)
		data = nil
	}
	s.loaded = string(data)
}

// storeShared writes the state back when it changed and releases the lock loadShared took;
// s.mu is held. A spoiled runtime (a call that ran out of memory) stores nothing. It fails
// when the call changed the state and the lock was no longer the call's (it held it past its
// hold, and another node may have changed the state since): the store refused the call's
// changes, and the call, whose answer came from a state the cluster never had, must fail
// rather than answer (a counter would give a value twice). It fails too, storing nothing, when
// the state it made is larger than maxSharedState as JSON.
func (s *Scope) storeShared(rt *runtime, spoiled bool) error {
	token := s.token
	s.token = ""
	var data []byte
	var tooBig error
	if !spoiled {
		text, err := rt.stateJSON()
		switch {
		case err != nil:
			rt.log.Warn(fmt.Sprintf("the script state cannot be stored as JSON (%v): this call's changes stay on this node", err))
		case text == s.loaded:
		case len(text) > maxSharedState:
			tooBig = fmt.Errorf("the script state is %.1f MiB as JSON, over the %d MiB a shared state may hold: this call's changes are not stored",
				float64(len(text))/(1<<20), maxSharedState>>20)
		default:
			data = []byte(text)
		}
	}
	ok, err := s.shared.UnlockState(token, data)
	if tooBig != nil {
		// The lock is released, and the state stays as it was, for every node.
		rt.log.Warn("a script call failed: " + tooBig.Error())
		return tooBig
	}
	switch {
	case err != nil:
		s.sharedFailed("cannot store the script state", err)
	case !ok && data == nil:
		rt.log.Warn(fmt.Sprintf("a script call held the script state's lock longer than %s (it changed nothing)", s.e.timeout+lockMargin))
	case !ok:
		lost := fmt.Errorf("the call held the script state's lock longer than %s, and another node may have changed the state since: its changes are not stored", s.e.timeout+lockMargin)
		rt.log.Warn("a script call failed: " + lost.Error())
		return lost
	default:
		s.sharedDown = false
	}
	return nil
}

// sharedFailed logs a failure of the shared state: the first of a run of failures, and every
// time another node held the lock too long.
func (s *Scope) sharedFailed(what string, err error) {
	var busy interface{ LockBusy() bool }
	if s.sharedDown && !(errors.As(err, &busy) && busy.LockBusy()) {
		return
	}
	s.sharedDown = true
	s.log.Warn(fmt.Sprintf("%s: %v", what, err))
}

// setState makes data (stateJSON's text; nil or empty: an empty state) the runtime's state,
// keeping the state objects themselves, which scripts may hold on to.
func (rt *runtime) setState(data []byte) error {
	var imposter, inject goja.Value
	if len(data) > 0 {
		parse, _, err := rt.jsonFuncs()
		if err != nil {
			return err
		}
		v, err := parse(goja.Undefined(), rt.vm.ToValue(string(data)))
		if err != nil {
			return err
		}
		o, ok := v.(*goja.Object)
		if !ok {
			return errors.New("not a JSON object")
		}
		imposter, inject = o.Get("imposter"), o.Get("inject")
	}
	refill(rt.imposterState, imposter)
	refill(rt.injectState, inject)
	return nil
}

// refill replaces the own properties of dst with those of src (none when src is not an object).
func refill(dst *goja.Object, src goja.Value) {
	for _, k := range dst.Keys() {
		_ = dst.Delete(k)
	}
	if o, ok := src.(*goja.Object); ok {
		for _, k := range o.Keys() {
			_ = dst.Set(k, o.Get(k))
		}
	}
}

// stateJSON returns the runtime's state as JSON: {"imposter": imposterState, "inject":
// injectState}.
func (rt *runtime) stateJSON() (string, error) {
	_, stringify, err := rt.jsonFuncs()
	if err != nil {
		return "", err
	}
	both := rt.vm.NewObject()
	_ = both.Set("imposter", rt.imposterState)
	_ = both.Set("inject", rt.injectState)
	v, err := stringify(goja.Undefined(), both)
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(v) {
		return "", errors.New("JSON.stringify gave undefined")
	}
	return v.String(), nil
}

// jsonFuncs returns the runtime's JSON.parse and JSON.stringify as they were at its first
// shared call, before any script could replace them.
func (rt *runtime) jsonFuncs() (parse, stringify goja.Callable, err error) {
	if rt.jsonParse == nil {
		j := rt.vm.Get("JSON").ToObject(rt.vm)
		p, ok1 := goja.AssertFunction(j.Get("parse"))
		s, ok2 := goja.AssertFunction(j.Get("stringify"))
		if !ok1 || !ok2 {
			return nil, nil, errors.New("JSON.parse or JSON.stringify is not a function")
		}
		rt.jsonParse, rt.jsonStringify = p, s
	}
	return rt.jsonParse, rt.jsonStringify, nil
}
