package admin

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/imposter/servers"
	"github.com/mockd/mockd/internal/request"
)

// TestFormattedJSONFollowsEveryChange renders the imposter after each kind of change and
// compares the kept body with a fresh rendering: a change that did not reach the key leaves
// a stale body and fails here.
func TestFormattedJSONFollowsEveryChange(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	reg := imposter.NewRegistry(imposter.Options{Host: "127.0.0.1", Logger: quiet, Debug: true, Protocols: servers.Protocols()})
	t.Cleanup(func() { reg.DeleteAll() })
	a := New(reg, Options{Logger: quiet})
	im := createImposter(t, reg, `{"protocol":"http","recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/hello"}}],"responses":[{"is":{"body":"hi"}}]}]}`)
	// Served in process, as the http server serves it: counted, recorded and, with --debug,
	// a match kept, all before the next step looks.
	serve := func() { a := im.Resolve(&request.Request{Method: "GET", Path: "/hello"}); im.RecordMatch(&a) }
	opts := PrintOptions{BaseURL: "http://localhost:2525"}
	check := func(step string) {
		t.Helper()
		got := a.formatted(im, opts)
		want := config.AppendJSON(nil, printImposter(im, opts), 2)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: cached JSON is stale\n got: %s\nwant: %s", step, got, want)
		}
	}
	stub := func(body string) *config.Object {
		v, err := config.ParseJSON([]byte(`{"responses":[{"is":{"body":"` + body + `"}}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*config.Object)
	}

	check("new")
	if x, y := a.formatted(im, opts), a.formatted(im, opts); &x[0] != &y[0] {
		t.Error("an unchanged imposter was rendered again")
	}
	serve()
	check("request")
	if !bytes.Contains(a.formatted(im, opts), []byte(`"numberOfRequests": 1`)) {
		t.Fatal("request count not shown")
	}
	if err := im.InsertStub(stub("second"), 1); err != nil {
		t.Fatal(err)
	}
	check("insert")
	if err := im.ReplaceStub(stub("third"), 1); err != nil {
		t.Fatal(err)
	}
	check("replace")
	if err := im.DeleteStub(1); err != nil {
		t.Fatal(err)
	}
	check("delete")
	if err := im.ReplaceStubs([]*config.Object{stub("all")}); err != nil {
		t.Fatal(err)
	}
	check("replace all")
	_ = im.ClearRequests(context.Background())
	check("clear")
	serve()
	check("request after clear")
	opts.Replayable = true
	check("other options")
	opts.BaseURL = "http://127.0.0.1:2525"
	check("other host")
}

// BenchmarkImposterJSON renders bench/'s admin-get imposter (500 stubs) as GET /imposters/:port
// does.
func BenchmarkImposterJSON(b *testing.B) {
	src := impostertest.StubsJSON(500, func(i int) string {
		return fmt.Sprintf(`{"equals":{"method":%q,"path":"/api/v1/resource%d/items"}}`, []string{"GET", "POST", "PUT", "DELETE"}[i%4], i)
	})
	im, err := imposter.New(impostertest.Def(b, src), imposter.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	var out []byte // reused, as the admin API reuses fasthttp's body buffer
	b.ReportAllocs()
	for b.Loop() {
		out = config.AppendJSON(out[:0], printImposter(im, PrintOptions{BaseURL: "http://127.0.0.1:2525"}), 2)
		if len(out) == 0 {
			b.Fatal("empty")
		}
	}
	b.ReportMetric(float64(len(out)), "bytes")
}
