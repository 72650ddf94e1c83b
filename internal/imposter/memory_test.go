package imposter

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// maxPlainStubHeap bounds the live heap one plain stub keeps (bench/'s stubs-100k shape: equals
// on method and path, an `is` with a JSON Content-Type and a short body), echo text, compiled
// predicates, index entry and response included. It measured ~625 B at the time of writing
// (80 B of it the stub's packed text), where it was ~1,170 B before (the stub kept as an
// ordered tree, which its compiled predicate and response also held), and ~1,640 B before
// issue 26's second round: the bound fails those, and leaves room for small changes. Issue
// 26 wants < 1 KiB resident per plain stub.
const maxPlainStubHeap = 760

// TestPlainStubHeap builds 10,000 plain stubs as POST /imposters does (the body parsed and
// given away) and bounds the heap each keeps once built, read after full collections.
func TestPlainStubHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 stubs")
	}
	const n = 10000
	doc := plainStubsJSON(n)
	before := heapStats().HeapAlloc
	v, err := config.ParseJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{Owned: true})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	im, err := New(def, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	after := heapStats().HeapAlloc
	runtime.KeepAlive(doc)
	per := float64(int64(after)-int64(before)) / n
	t.Logf("%.0f B of heap per plain stub (bound %d)", per, maxPlainStubHeap)
	if per > maxPlainStubHeap {
		t.Errorf("a plain stub keeps %.0f B of heap, more than %d", per, maxPlainStubHeap)
	}
	runtime.KeepAlive(im)
}
