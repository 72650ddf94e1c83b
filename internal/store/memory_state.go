package store

import (
	"context"
	"sync"
	"time"
)

// MemoryState keeps, in the process, what RedisImposter keeps in Redis of an imposter's
// scenario states and scripts' state, with the same semantics: a fake of those operations
// for the tests of the code that uses them, and the reference the Redis store's tests hold
// it to. Its methods are safe for concurrent use.
type MemoryState struct {
	mu        sync.Mutex
	scenarios map[string]string
	script    []byte
	lock      string    // the token that holds the lock; "" = free
	lockUntil time.Time // when the lock expires
}

// NewMemoryState returns a MemoryState with every scenario in ScenarioStarted, no script
// state and the lock free.
func NewMemoryState() *MemoryState { return &MemoryState{scenarios: map[string]string{}} }

func (m *MemoryState) stateOf(name string) string {
	if s, ok := m.scenarios[name]; ok {
		return s
	}
	return ScenarioStarted
}

// MoveScenario is RedisImposter.MoveScenario.
func (m *MemoryState) MoveScenario(name, from, to string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stateOf(name) != from {
		return false, nil
	}
	m.scenarios[name] = to
	return true, nil
}

// ScenarioState is RedisImposter.ScenarioState.
func (m *MemoryState) ScenarioState(name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateOf(name), nil
}

// ScenarioStates is RedisImposter.ScenarioStates.
func (m *MemoryState) ScenarioStates(context.Context) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.scenarios))
	for k, v := range m.scenarios {
		out[k] = v
	}
	return out, nil
}

// SetScenario is RedisImposter.SetScenario.
func (m *MemoryState) SetScenario(_ context.Context, name, state string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scenarios[name] = state
	return nil
}

// ResetScenarios is RedisImposter.ResetScenarios.
func (m *MemoryState) ResetScenarios(_ context.Context, names ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(names) == 0 {
		clear(m.scenarios)
	}
	for _, n := range names {
		delete(m.scenarios, n)
	}
	return nil
}

// LockState is RedisImposter.LockState.
func (m *MemoryState) LockState(wait, hold time.Duration) ([]byte, string, error) {
	token := newToken()
	end := time.Now().Add(wait)
	for {
		m.mu.Lock()
		if now := time.Now(); m.lock == "" || now.After(m.lockUntil) {
			m.lock, m.lockUntil = token, now.Add(hold)
			state := m.script
			m.mu.Unlock()
			return state, token, nil
		}
		m.mu.Unlock()
		if time.Now().After(end) {
			return nil, "", ErrLockBusy
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// UnlockState is RedisImposter.UnlockState.
func (m *MemoryState) UnlockState(token string, state []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock != token || time.Now().After(m.lockUntil) {
		return false, nil
	}
	if state != nil {
		m.script = append([]byte(nil), state...)
	}
	m.lock = ""
	return true, nil
}
