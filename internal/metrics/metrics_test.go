package metrics

import (
	"testing"
	"time"
)

// TestInstantSince checks that an Instant measures elapsed time: never less than what passed.
func TestInstantSince(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
		start := Now()
		time.Sleep(wait)
		if got := start.Since(); got < wait.Seconds() {
			t.Errorf("after sleeping %v: Since() = %v s, want at least %v s", wait, got, wait.Seconds())
		}
	}
	if a, b := Now(), Now(); b < a {
		t.Errorf("Now went backwards: %d then %d", a, b)
	}
}
