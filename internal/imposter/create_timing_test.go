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

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkCreatePlainStubs parses and compiles an imposter of plain stubs as POST /imposters
// does and reports the heap each stub keeps once the imposter is built (heap-B/stub).
func BenchmarkCreatePlainStubs(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			doc := plainStubsJSON(n)
			log := slog.New(slog.DiscardHandler)
			b.ReportAllocs()
			var kept uint64
			for b.Loop() {
				before := heapInUse()
				v, err := config.ParseJSON(doc)
				if err != nil {
					b.Fatal(err)
				}
				def, errs := config.ParseImposter(v, config.ParseOptions{})
				if len(errs) > 0 {
					b.Fatal(errs)
				}
				im, err := New(def, Options{Logger: log})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				kept = heapInUse() - before
				runtime.KeepAlive(im)
				b.StartTimer()
			}
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
	data := []byte(doc.String())
	doc.Reset()
	log := slog.New(slog.DiscardHandler)
	inUse := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	var kept uint64
	for b.Loop() {
		before := inUse()
		v, err := config.ParseJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		def, errs := config.ParseImposter(v, config.ParseOptions{})
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		v = nil
		im, err := New(def, Options{Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		def = nil
		b.StopTimer()
		kept = inUse() - before
		runtime.KeepAlive(im)
		b.StartTimer()
	}
	b.ReportMetric(float64(kept)/n, "inuse-B/stub")
}
