package app

import "testing"

// TestSettle feeds fingerprints poll by poll: a change is reported once the files look the same
// on two polls in a row, so a file caught half-written (an editor truncating it first) is never
// reloaded; a change that goes back to what was reported is none.
func TestSettle(t *testing.T) {
	steps := []struct {
		now  string
		want bool
	}{
		{"a", false},    // as at start
		{"", false},     // truncated: not yet stable
		{"b", false},    // written: not yet stable
		{"b", true},     // stable: the change is b
		{"b", false},    // nothing new
		{"", false},     // truncated again...
		{"b", false},    // ...and written back as it was: no change
		{"b", false},    // stable, but what was last reported
		{"c", false},    // changed
		{"c", true},     // stable
		{"gone", false}, // a file removed (an error fingerprint is one too)
		{"gone", true},  // stable: reported (the reload refuses a missing -c file)
	}
	s := settle{last: "a"}
	for i, st := range steps {
		if got := s.poll(st.now); got != st.want {
			t.Errorf("poll %d (%q): changed = %v, want %v", i, st.now, got, st.want)
		}
	}
}
