package imposter

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// plainStubsJSON is bench/'s scale-N imposter: n stubs with equals on method and path and a
// small JSON body, as POST /imposters receives it.
func plainStubsJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"protocol":"http","port":4545,"stubs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"predicates":[{"equals":{"method":"GET","path":"/scale/%d"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"stub\":\"scale\",\"index\":%d}"}}]}`, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// heapStats is the runtime's memory statistics after a full collection.
func heapStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// heapKept builds an imposter from doc as POST /imposters does (b.N times) and returns what it
// keeps of the heap once built, as read by measure from the statistics after a collection.
func heapKept(b *testing.B, doc []byte, measure func(runtime.MemStats) uint64) uint64 {
	log := slog.New(slog.DiscardHandler)
	b.ReportAllocs()
	var kept uint64
	for b.Loop() {
		before := measure(heapStats())
		v, err := config.ParseJSON(doc)
		if err != nil {
			b.Fatal(err)
		}
		def, errs := config.ParseImposter(v, config.ParseOptions{Owned: true}) // the admin API gives its body away
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		im, err := New(def, Options{Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		kept = measure(heapStats()) - before
		runtime.KeepAlive(im)
		b.StartTimer()
	}
	return kept
}

// BenchmarkCreatePlainStubs parses and compiles an imposter of plain stubs as POST /imposters
// does and reports the heap each stub keeps once the imposter is built (heap-B/stub).
func BenchmarkCreatePlainStubs(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			kept := heapKept(b, plainStubsJSON(n), func(ms runtime.MemStats) uint64 { return ms.HeapAlloc })
			b.ReportMetric(float64(kept)/float64(n), "heap-B/stub")
		})
	}
}

// BenchmarkPlainStubMemory reports the resident heap (HeapInuse after a full collection) that
// each of 100,000 plain stubs keeps once the imposter is built: an equals predicate on the path
// and an `is` response with a one-character body (issue 26's "< 1 KiB per plain stub").
func BenchmarkPlainStubMemory(b *testing.B) {
	const n = 100000
	var doc strings.Builder
	doc.WriteString(`{"protocol":"http","port":4545,"stubs":[`)
	for i := range n {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"predicates":[{"equals":{"path":"/p/%d"}}],"responses":[{"is":{"body":"x"}}]}`, i)
	}
	doc.WriteString(`]}`)
	kept := heapKept(b, []byte(doc.String()), func(ms runtime.MemStats) uint64 { return ms.HeapInuse })
	b.ReportMetric(float64(kept)/n, "inuse-B/stub")
}
