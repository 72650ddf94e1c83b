package main

import (
	"strings"
	"testing"
	"time"
)

const mb = 1 << 20

// minutes builds one sample a minute from RSS figures in MiB, with the goroutines given.
func minutes(rssMiB ...int64) []sample {
	s := make([]sample, len(rssMiB))
	for i, r := range rssMiB {
		s[i] = sample{at: time.Duration(i+1) * time.Minute, rate: float64(1000 + i), rss: r * mb, goroutines: 40 + i}
	}
	return s
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []sample
		warmup  time.Duration
		base    int64 // MiB
		end     int64 // MiB
		growth  float64
		peak    int64 // MiB
		fail    bool  // the verdict fails
		err     string
	}{
		{name: "flat", samples: minutes(50, 80, 100, 100, 100, 100, 100, 100), warmup: 5 * time.Minute,
			base: 100, end: 100, growth: 0, peak: 100},
		{name: "growth during the warm-up does not count", samples: minutes(10, 20, 40, 80, 100, 101, 102, 101),
			warmup: 5 * time.Minute, base: 100, end: 101, growth: 1, peak: 102},
		{name: "a leak", samples: minutes(100, 100, 100, 100, 100, 102, 104, 106, 108, 110), warmup: 5 * time.Minute,
			base: 100, end: 108, growth: 8, peak: 110, fail: true},
		{name: "just under the limit", samples: minutes(100, 104, 104, 104), warmup: time.Minute,
			base: 100, end: 104, growth: 4, peak: 104},
		{name: "at the limit", samples: minutes(100, 105, 105, 105), warmup: time.Minute,
			base: 100, end: 105, growth: 5, peak: 105, fail: true},
		{name: "one high last sample is outvoted", samples: minutes(100, 100, 100, 101, 100, 130), warmup: 2 * time.Minute,
			base: 100, end: 101, growth: 1, peak: 130},
		{name: "shrinking", samples: minutes(100, 90, 80), warmup: time.Minute, base: 100, end: 85, growth: -15, peak: 90},
		{name: "a quick run: one sample each side", samples: minutes(100, 103), warmup: time.Minute,
			base: 100, end: 103, growth: 3, peak: 103},
		{name: "no sample after the warm-up", samples: minutes(100, 100), warmup: 2 * time.Minute, err: "too short"},
		{name: "no sample in the warm-up", samples: minutes(100, 100), warmup: 30 * time.Second, err: "nothing to measure growth from"},
		{name: "no samples", warmup: time.Minute, err: "nothing to measure growth from"},
		{name: "no /proc", samples: minutes(0, 0, 0), warmup: time.Minute, err: "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := summarize(tc.samples, tc.warmup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("summarize: error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("summarize: %v", err)
			}
			if s.base.rss != tc.base*mb || s.end != tc.end*mb || s.peakRSS != tc.peak*mb {
				t.Errorf("base %d, end %d, peak %d MiB; want %d, %d, %d", s.base.rss/mb, s.end/mb, s.peakRSS/mb, tc.base, tc.end, tc.peak)
			}
			if d := s.growth - tc.growth; d > 1e-9 || d < -1e-9 {
				t.Errorf("growth %.3f%%, want %.3f%%", s.growth, tc.growth)
			}
			if err := s.verdict(100, 0, nil); (err != nil) != tc.fail {
				t.Errorf("verdict: %v, want failure %v", err, tc.fail)
			}
			if !strings.Contains(s.String(), "RSS") {
				t.Errorf("String: %q", s)
			}
		})
	}
}

func TestSummarizeFigures(t *testing.T) {
	s, err := summarize(minutes(100, 100, 120, 110, 130), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// after the warm-up: rates 1002, 1003, 1004; RSS 120, 110, 130; goroutines 42, 43, 44
	if s.afterWarmup != 3 || s.medianRate != 1003 || s.medianRSS != 120*mb {
		t.Errorf("samples %d, median rate %v, median RSS %d MiB; want 3, 1003, 120", s.afterWarmup, s.medianRate, s.medianRSS/mb)
	}
	if s.base.goroutines != 41 || s.minGoroutines != 42 || s.maxGoroutines != 44 || s.lastGoroutines != 44 {
		t.Errorf("goroutines %d, %d..%d, %d; want 41, 42..44, 44", s.base.goroutines, s.minGoroutines, s.maxGoroutines, s.lastGoroutines)
	}
}

func TestVerdictFailedRequests(t *testing.T) {
	s, err := summarize(minutes(100, 100), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	err = s.verdict(1000, 2, errTest("GET /plain: status 500, want 200"))
	if err == nil || !strings.Contains(err.Error(), "2 of 1000 requests failed") || !strings.Contains(err.Error(), "status 500") {
		t.Errorf("verdict: %v", err)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{
		{nil, 0}, {[]int64{7}, 7}, {[]int64{3, 1, 2}, 2}, {[]int64{4, 1, 3, 2}, 2}, {[]int64{10, 20}, 15},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := median([]float64{1, 2}); got != 1.5 {
		t.Errorf("median(1, 2) = %v, want 1.5", got)
	}
}

func TestVmRSS(t *testing.T) {
	status := "Name:\tmockd\nVmPeak:\t 1000 kB\nVmHWM:\t  900 kB\nVmRSS:\t   51200 kB\nThreads:\t9\n"
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{status, 50 * mb}, {"", 0}, {"VmRSS:\n", 0}, {"Name: x\n", 0},
	} {
		if got := vmRSS(tc.in); got != tc.want {
			t.Errorf("vmRSS(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestGoroutinesIn(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 37\ngo_threads 9\n", 37},
		{"go_goroutines_total 5\ngo_goroutines 1.2e+03\n", 1200},
		{"go_threads 9\n", -1},
		{"", -1},
	} {
		if got := goroutinesIn(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("goroutinesIn(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestDefaultWarmup(t *testing.T) {
	for _, tc := range []struct{ run, want time.Duration }{
		{30 * time.Minute, 5 * time.Minute}, {10 * time.Minute, 5 * time.Minute}, {2 * time.Minute, time.Minute}, {0, 0},
	} {
		if got := defaultWarmup(tc.run); got != tc.want {
			t.Errorf("defaultWarmup(%s) = %s, want %s", tc.run, got, tc.want)
		}
	}
}

func TestPacer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacer(1000, t0) // one every millisecond
	for i := range 3 {
		if got, want := p.reserve(t0), t0.Add(time.Duration(i)*time.Millisecond); !got.Equal(want) {
			t.Fatalf("reserve %d at the start: %s, want %s", i, got.Sub(t0), want.Sub(t0))
		}
	}
	// Half a second later (the process was not scheduled): what is owed is sent at once.
	if got, want := p.reserve(t0.Add(500*time.Millisecond)), t0.Add(3*time.Millisecond); !got.Equal(want) {
		t.Errorf("after a stall of 0.5 s: %s, want %s", got.Sub(t0), want.Sub(t0))
	}
	// Five seconds later: no more than a second's worth is owed.
	now := t0.Add(5 * time.Second)
	if got, want := p.reserve(now), now.Add(-maxOwed); !got.Equal(want) {
		t.Errorf("after a stall of 5 s: %s, want %s", got.Sub(t0), want.Sub(t0))
	}
	if got, want := p.reserve(now), now.Add(-maxOwed+time.Millisecond); !got.Equal(want) {
		t.Errorf("the next: %s, want %s", got.Sub(t0), want.Sub(t0))
	}
}
