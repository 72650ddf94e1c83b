package store

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// TestGroupSharesRoundTrips runs many concurrent calls through one group: each gets a count of
// its own, the counts are 0..n-1 with none twice, and the calls that came while one ran shared
// a round trip.
func TestGroupSharesRoundTrips(t *testing.T) {
	var g group[int]
	var mu sync.Mutex
	total, trips := int64(0), 0
	run := func(batch []int) (int64, error) {
		time.Sleep(time.Millisecond) // a round trip
		mu.Lock()
		defer mu.Unlock()
		trips++
		base := total
		total += int64(len(batch))
		return base, nil
	}
	const n = 200
	got := make([]uint64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := g.do(i, run)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i, c := range got {
		if c != uint64(i) {
			t.Fatalf("counts %v: want each of 0..%d once", got, n-1)
		}
	}
	if trips >= n {
		t.Errorf("%d calls made %d round trips: none were shared", n, trips)
	}
	t.Logf("%d calls, %d round trips", n, trips)
}
