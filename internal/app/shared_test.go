package app

import (
	"testing"

	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/store"
)

// TestScenarioStartAgrees: a scenario the Redis store holds no state for is in the state every
// scenario starts in.
func TestScenarioStartAgrees(t *testing.T) {
	if store.ScenarioStarted != imposter.StartedState {
		t.Errorf("store.ScenarioStarted %q, imposter.StartedState %q", store.ScenarioStarted, imposter.StartedState)
	}
}
