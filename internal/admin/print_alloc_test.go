//go:build !race

package admin

import (
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestCreatedEchoAllocs guards what printing the answer to a POST /imposters of a small http
// imposter (bench/'s admin-pairs one) allocates: the imposter's object with its members sized
// once, its _links and each stub's in one allocation each. Every pair prints one; its garbage
// is what the pairs' p99 tail follows.
func TestCreatedEchoAllocs(t *testing.T) {
	src := `{"protocol":"http","port":4545,"host":"127.0.0.1","stubs":[` +
		`{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`
	im, err := imposter.New(impostertest.Def(t, src), imposter.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	opts := PrintOptions{BaseURL: "http://localhost:2525"}
	out := appendPrinted(nil, im, opts)
	if want := config.AppendJSON(nil, printImposter(im, opts), 2); string(out) != string(want) {
		t.Fatalf("got %s\nwant %s", out, want)
	}
	var size int
	n := testing.AllocsPerRun(100, func() {
		out = appendPrinted(out[:0], im, opts)
		size = len(out)
	})
	// 30 when the members grew one Set at a time and each _links was four objects and lists;
	// 18 while the answer was the ordered tree printed by config.AppendJSON.
	if n > 6 {
		t.Errorf("printing a small imposter's echo allocates %v times, want <= 6 (%d bytes)", n, size)
	}
	if testing.Verbose() {
		t.Logf("%v allocations, %d bytes", n, size)
	}
}
