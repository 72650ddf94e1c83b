package metrics

import (
	"slices"
	"strings"
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

// TestSeriesShownOnceUsed checks that an imposter's series appear only once they have counted
// something, as Mountebank's do, and leave with the imposter.
func TestSeriesShownOnceUsed(t *testing.T) {
	r := New()
	m := r.ForImposter("[http:4545] ")
	shown := func() map[string]bool {
		fams, err := r.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, f := range fams {
			if strings.HasPrefix(f.GetName(), "mb_") {
				out[f.GetName()] = len(f.GetMetric()) > 0
			}
		}
		return out
	}
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, nil},
		{func() {
			m.Requests.Inc()
			m.MatchDuration.Observe(0)
			m.RespDuration.Observe(0)
		}, []string{"mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{func() { m.NoMatch.Inc() }, []string{"mb_no_match_total", "mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{func() { m.Blocked.Inc() }, []string{"mb_blocked_ip_total", "mb_no_match_total", "mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{m.Remove, nil},
	}
	for i, st := range steps {
		st.do()
		got := shown()
		var names []string
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, st.want) {
			t.Errorf("step %d: series shown %v, want %v", i, names, st.want)
		}
	}
}
