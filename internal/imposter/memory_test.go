package imposter

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
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

// TestStubChangesReuseCompiledStubs: adding, replacing or deleting a stub compiles that stub
// alone; the others keep their compiled predicates, their text not decoded (a stub's text
// that does not decode panics when read).
func TestStubChangesReuseCompiledStubs(t *testing.T) {
	im, err := New(impostertest.Def(t, `{"protocol":"http","port":4545,"stubs":[
		{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]},
		{"predicates":[{"equals":{"path":"/b"}}],"responses":[{"is":{"body":"b"}}]},
		{"predicates":[{"equals":{"path":"/c"}}],"responses":[{"is":{"body":"c"}}]}]}`),
		Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range im.tbl.Load().stubs {
		s.raw = "{" // read, it panics
	}
	stub := func(path string) *config.Object {
		v, _ := config.ParseJSON([]byte(`{"predicates":[{"equals":{"path":"/` + path + `"}}],"responses":[{"is":{"body":"` + path + `"}}]}`))
		return v.(*config.Object)
	}
	steps := []struct {
		name   string
		change func() error
		want   map[string]string
	}{
		{"delete", func() error { return im.DeleteStub(0) }, map[string]string{"/a": "(default)", "/b": "b", "/c": "c"}},
		{"insert", func() error { return im.InsertStub(stub("d"), 1) }, map[string]string{"/b": "b", "/d": "d", "/c": "c"}},
		{"replace", func() error { return im.ReplaceStub(stub("e"), 0) }, map[string]string{"/b": "(default)", "/e": "e", "/d": "d"}},
	}
	for _, step := range steps {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for path, want := range step.want {
			if got := answer(t, im, path); got != want {
				t.Errorf("after %s: %s answers %q, want %q", step.name, path, got, want)
			}
		}
	}
}
