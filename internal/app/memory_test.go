package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestConfigStubsHeap: an app started from a config file of 10,000 plain stubs (bench/'s
// stubs-100k shape) keeps about what the same stubs keep created through the API
// (imposter.TestPlainStubHeap): the loaded documents are neither copied into the stubs nor
// kept once built. It measured ~635 B a stub at the time of writing, ~1,195 B before (the
// stubs kept as ordered trees rather than packed text) and ~1,950 B before that (a copy of every
// stub, and the loaded documents and the stubs' JSON kept for the process).
func TestConfigStubsHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 stubs")
	}
	const n = 10000
	var b strings.Builder
	b.WriteString(`{"imposters":[{"protocol":"http","port":4545,"stubs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"predicates":[{"equals":{"method":"GET","path":"/scale/%d"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"stub\":\"scale\",\"index\":%d}"}}]}`, i, i)
	}
	b.WriteString(`]}]}`)
	file := filepath.Join(t.TempDir(), "imposters.json")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	a := func() *App { // the config is the app's alone, as mockd start's is
		cfg, err := config.Load([]string{file})
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(Options{Quiet: true, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}()
	per := float64(int64(heap())-int64(before)) / n
	runtime.KeepAlive(a)
	t.Logf("%.0f B of heap per plain stub loaded from a file", per)
	if per > 760 {
		t.Errorf("a plain stub loaded from a file keeps %.0f B of heap, more than 760", per)
	}
}
