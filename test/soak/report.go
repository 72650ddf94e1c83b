package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxGrowth is the most the resident memory may grow after the warm-up, in percent.
const maxGrowth = 5.0

// sample is one report of the run.
type sample struct {
	at         time.Duration // since the soak rate started
	rate       float64       // requests a second since the previous sample
	failed     int64         // failed requests so far
	rss        int64         // mockd's resident memory, bytes
	goroutines int           // mockd's goroutines (-1: unknown)
}

// summary is what a run's samples say once the warm-up is over.
type summary struct {
	base           sample  // the last sample of the warm-up: what growth is measured from
	end            int64   // the median resident memory of the last three samples
	growth         float64 // end against base.rss, in percent
	medianRate     float64
	medianRSS      int64
	peakRSS        int64
	minGoroutines  int
	maxGoroutines  int
	afterWarmup    int // samples after the warm-up
	lastGoroutines int
}

// summarize judges samples (in order) against a warm-up: the growth is that of the median of
// the last three samples (fewer when there are fewer) over the last sample of the warm-up, so
// that one sample taken just before the GC returns memory does not decide the run.
func summarize(samples []sample, warmup time.Duration) (summary, error) {
	var s summary
	i := 0
	for i < len(samples) && samples[i].at <= warmup {
		i++
	}
	if i == 0 {
		return s, fmt.Errorf("no sample within the warm-up (%s): nothing to measure growth from", warmup)
	}
	after := samples[i:]
	if len(after) == 0 {
		return s, fmt.Errorf("no sample after the warm-up (%s): the run is too short to judge", warmup)
	}
	s.base = samples[i-1]
	if s.base.rss <= 0 {
		return s, errors.New("mockd's resident memory is unknown (no /proc?)")
	}
	rates := make([]float64, len(after))
	rss := make([]int64, len(after))
	s.minGoroutines, s.maxGoroutines = after[0].goroutines, after[0].goroutines
	for j, a := range after {
		rates[j], rss[j] = a.rate, a.rss
		s.peakRSS = max(s.peakRSS, a.rss)
		s.minGoroutines = min(s.minGoroutines, a.goroutines)
		s.maxGoroutines = max(s.maxGoroutines, a.goroutines)
	}
	s.afterWarmup = len(after)
	s.lastGoroutines = after[len(after)-1].goroutines
	s.medianRate = median(rates)
	s.medianRSS = median(rss)
	s.end = median(rss[max(0, len(rss)-3):])
	s.growth = float64(s.end-s.base.rss) / float64(s.base.rss) * 100
	return s, nil
}

// verdict is the run's result: an error when requests failed or memory grew too much.
func (s summary) verdict(done, failed int64, firstErr error) error {
	if failed > 0 {
		return fmt.Errorf("%d of %d requests failed; the first: %v", failed, done, firstErr)
	}
	if s.growth >= maxGrowth {
		return fmt.Errorf("resident memory grew by %.1f%% after the warm-up (limit %.0f%%)", s.growth, maxGrowth)
	}
	return nil
}

func (s summary) String() string {
	return fmt.Sprintf("after the warm-up (%d samples): median %.0f requests/s; RSS %s at the end of the warm-up (%s), "+
		"%s at the end (median of the last 3 samples, %+.1f%%), median %s, peak %s; goroutines %d at the end of the warm-up, %d to %d after, %d at the end",
		s.afterWarmup, s.medianRate, mib(s.base.rss), s.base.at, mib(s.end), s.growth, mib(s.medianRSS), mib(s.peakRSS),
		s.base.goroutines, s.minGoroutines, s.maxGoroutines, s.lastGoroutines)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// median returns the middle of xs (the mean of the two middle ones for an even count); 0 for none.
func median[T int64 | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// vmRSS reads VmRSS (in bytes) from the text of /proc/PID/status; 0 when it is not there.
func vmRSS(status string) int64 {
	for line := range strings.Lines(status) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// goroutinesIn reads go_goroutines from a Prometheus text exposition; -1 when it is not there.
func goroutinesIn(metrics io.Reader) int {
	sc := bufio.NewScanner(metrics)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// defaultWarmup is the warm-up of a run of duration d when none is given: the first 5 minutes,
// or the first half of a run shorter than 10 minutes (a quick check).
func defaultWarmup(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return 5 * time.Minute
	}
	return d / 2
}
