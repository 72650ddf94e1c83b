package main

import (
	"net"
	"strings"
	"testing"
)

// rounds makes a result from (requests/s, p99 ms) pairs, one per round of 1 s; its RPS and p99
// are the first pair's, as if that were the median round.
func rounds(pairs ...[2]float64) *result {
	r := &result{Status: "ok", RPS: pairs[0][0], P99MS: pairs[0][1], CPUPct: 99}
	for _, p := range pairs {
		r.Runs = append(r.Runs, &loadResult{Requests: int64(p[0]), DurationUS: 1e6, P99US: p[1] * 1000})
	}
	return r
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m, o     *result
		min      float64
		rps, p99 bool
		want     string
	}{
		{"p99 ranges overlap", rounds([2]float64{96000, 0.80}, [2]float64{97800, 0.75}), rounds([2]float64{96000, 0.76}, [2]float64{101700, 0.60}),
			1, false, true, " (within the rounds' spread: p99 0.75–0.80 vs 0.60–0.76 ms)"},
		{"p99 always worse", rounds([2]float64{96000, 0.90}, [2]float64{97800, 0.85}), rounds([2]float64{96000, 0.76}, [2]float64{101700, 0.60}),
			1, false, true, ""},
		{"some round faster", rounds([2]float64{95000, 0.5}, [2]float64{99000, 0.5}), rounds([2]float64{97000, 0.6}, [2]float64{98000, 0.6}),
			1, true, false, " (within the rounds' spread: req/s 95000–99000 vs 97000–98000)"},
		{"never 30x", rounds([2]float64{100000, 0.5}, [2]float64{110000, 0.5}), rounds([2]float64{5000, 9}, [2]float64{6000, 9}),
			30, true, false, ""},
		{"one round each", rounds([2]float64{95000, 0.8}), rounds([2]float64{97000, 0.6}), 1, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := spread(tc.m, tc.o, tc.min, tc.rps, tc.p99); got != tc.want {
				t.Errorf("spread = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTargetsSpread: a shortfall within the rounds' spread still counts as short, and says so.
func TestTargetsSpread(t *testing.T) {
	h := &harness{}
	s := &scenario{Name: "regex-first"}
	m := rounds([2]float64{96039, 0.80}, [2]float64{97812, 0.75}, [2]float64{95115, 1.00})
	m.Scenario, m.Engine = s.Name, "mockd"
	o := rounds([2]float64{96027, 0.76}, [2]float64{101730, 0.60}, [2]float64{93031, 0.84})
	o.Scenario, o.Engine = s.Name, "rift"
	h.results = []*result{m, o}
	var line string
	for _, l := range h.targets([]*scenario{s}) {
		if strings.Contains(l, "Rift") {
			line = l
		}
	}
	want := "0 of 1 scenarios; short: regex-first p99 0.80 vs 0.76 ms (within the rounds' spread: p99 0.75–1.00 vs 0.60–0.84 ms)"
	if !strings.Contains(line, want) {
		t.Errorf("Rift target line %q, want it to contain %q", line, want)
	}
}

// A full run starts more processes than a port range holds: port starts the range again once
// it is used up, and still skips a port some process has bound.
func TestPortStartsAgainWhenUsedUp(t *testing.T) {
	// Below Linux's ephemeral range (32768-60999), where no connection takes a port.
	lo, b, hi := 29101, 29102, 29103
	busy, err := net.Listen("tcp", "127.0.0.1:29102")
	if err != nil {
		t.Skipf("port %d is taken: %v", b, err)
	}
	defer busy.Close()
	h := &harness{ports: map[int]bool{}}
	var got []int
	for range 5 {
		p, err := h.port(lo, hi)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if p == b {
			t.Fatalf("port %d is bound, and was given out", b)
		}
		got = append(got, p)
	}
	if got[0] == got[1] {
		t.Errorf("ports %v: a port was given out again before the range was used up", got)
	}
}

// TestTargetsRatioOverBareServer: recordRequests on vs off compares two scenarios run minutes
// apart; when the machine slowed down in between (the bare server with it), the ratio over each
// scenario's bare server decides, not the raw one.
func TestTargetsRatioOverBareServer(t *testing.T) {
	h := &harness{}
	simple, rec := &scenario{Name: "simple"}, &scenario{Name: "record-on"}
	res := func(s *scenario, engine string, rps float64) *result {
		r := rounds([2]float64{rps, 0.5})
		r.Scenario, r.Engine = s.Name, engine
		return r
	}
	h.results = []*result{
		res(simple, "mockd", 148000), res(simple, "ceiling", 163000),
		res(rec, "mockd", 118000), res(rec, "ceiling", 130000),
	}
	var line string
	for _, l := range h.targets([]*scenario{simple, rec}) {
		if strings.HasPrefix(l, "recordRequests") {
			line = l
		}
	}
	want := "recordRequests on vs off (record-on / simple) ≥ 0.8×: 1.00× over each scenario's bare server (0.80× in requests/s; the bare server ran record-on at 0.80× its simple rate) — met"
	if line != want {
		t.Errorf("got  %q\nwant %q", line, want)
	}
}
