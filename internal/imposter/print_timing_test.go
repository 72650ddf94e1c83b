package imposter

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// BenchmarkImposterJSON renders bench/'s admin-get imposter (500 stubs) as GET /imposters/:port
// does.
func BenchmarkImposterJSON(b *testing.B) {
	src := impostertest.StubsJSON(500, func(i int) string {
		return fmt.Sprintf(`{"equals":{"method":%q,"path":"/api/v1/resource%d/items"}}`, []string{"GET", "POST", "PUT", "DELETE"}[i%4], i)
	})
	v, err := config.ParseJSON([]byte(src))
	if err != nil {
		b.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{})
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	im, err := New(def, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	var out []byte // reused, as the admin API reuses fasthttp's body buffer
	b.ReportAllocs()
	for b.Loop() {
		out = config.AppendJSON(out[:0], im.JSON(PrintOptions{BaseURL: "http://127.0.0.1:2525"}), 2)
		if len(out) == 0 {
			b.Fatal("empty")
		}
	}
	b.ReportMetric(float64(len(out)), "bytes")
}
