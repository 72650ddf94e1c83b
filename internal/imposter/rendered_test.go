package imposter

import (
	"bytes"
	"context"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestFormattedJSONFollowsEveryChange renders the imposter after each kind of change and
// compares the cached body with a fresh rendering: a change that did not reach the cache key
// leaves a stale body and fails here.
func TestFormattedJSONFollowsEveryChange(t *testing.T) {
	h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/hello"}}],"responses":[{"is":{"body":"hi"}}]}]}`, impostertest.SimpleRequest, false)
	im := h.im
	im.opts.Debug = true
	opts := PrintOptions{BaseURL: "http://localhost:2525"}
	check := func(step string) {
		t.Helper()
		got := im.FormattedJSON(opts)
		want := config.AppendJSON(nil, im.JSON(opts), 2)
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
	if a, b := im.FormattedJSON(opts), im.FormattedJSON(opts); &a[0] != &b[0] {
		t.Error("an unchanged imposter was rendered again")
	}
	serveOnce(t, h, ctx) // counted, recorded and, with --debug, a match
	check("request")
	if !bytes.Contains(im.FormattedJSON(opts), []byte(`"numberOfRequests": 1`)) {
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
	serveOnce(t, h, ctx)
	check("request after clear")
	opts.Replayable = true
	check("other options")
	opts.BaseURL = "http://127.0.0.1:2525"
	check("other host")
}
