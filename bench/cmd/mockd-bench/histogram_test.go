package main

import "testing"

// A percentile never lies above the largest sample, even when the sample sits low in a wide
// bucket whose midpoint is higher.
func TestPercentileAtMostMax(t *testing.T) {
	for _, samples := range [][]int64{
		{1000},
		{5, 1000, 1000},
		{128, 129},
		{100000, 100001, 100002},
	} {
		var h histogram
		for _, us := range samples {
			h.record(us)
		}
		for _, p := range []float64{50, 99, 100} {
			if got := h.percentile(p); got > float64(h.max) {
				t.Errorf("samples %v: p%v = %v, above max %d", samples, p, got, h.max)
			}
		}
	}
}
