//go:build !race

package httpserver

import (
	"testing"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestPlainIsPathAllocatesNothing guards the hot path: a request answered by a static `is`
// response of stubs without scripts, not recorded, allocates nothing once warm, with or
// without metrics. (Off under -race, which allocates on its own.)
func TestPlainIsPathAllocatesNothing(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		h, ctx := newBenchHandler(t, impostertest.SimpleStub, impostertest.SimpleRequest, withMetrics)
		serveOnce(t, h, ctx)
		if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n != 0 {
			t.Errorf("metrics %v: %v allocations per request, want 0", withMetrics, n)
		}
	}
}
