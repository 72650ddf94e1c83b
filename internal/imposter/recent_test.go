package imposter

import (
	"context"
	"fmt"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
)

func TestJournalLatest(t *testing.T) {
	var j journal
	j.init(3, 1<<20)
	if got := j.latest(5); len(got) != 0 {
		t.Fatalf("latest of an empty journal = %d entries, want 0", len(got))
	}
	for i := 0; i < 5; i++ { // wraps: keeps 2, 3, 4
		j.addObject(config.NewObject("n", float64(i)), timeZero, NoStub, nil, nil)
	}
	for _, tt := range []struct {
		n    int
		want []float64
	}{{0, nil}, {1, []float64{4}}, {2, []float64{4, 3}}, {3, []float64{4, 3, 2}}, {10, []float64{4, 3, 2}}} {
		got := j.latest(tt.n)
		var ns []float64
		for _, e := range got {
			n, _ := e.req.Get("n")
			ns = append(ns, n.(float64))
		}
		if fmt.Sprint(ns) != fmt.Sprint(tt.want) {
			t.Errorf("latest(%d) = %v, want %v (newest first)", tt.n, ns, tt.want)
		}
	}
}

func TestNoMatchCountAndRecentRequests(t *testing.T) {
	h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/nothing"}}],"responses":[{"is":{"body":"x"}}]},
		{"predicates":[{"equals":{"path":"/hello"}}],"responses":[{"is":{"body":"hi"}}]}]}`, impostertest.SimpleRequest, false)
	im := h.im
	serveOnce(t, h, ctx)
	if n, nm := im.NumberOfRequests(), im.NoMatchCount(); n != 1 || nm != 0 {
		t.Fatalf("after a matched request: requests %d, no match %d; want 1, 0", n, nm)
	}
	if err := im.DeleteStub(1); err != nil {
		t.Fatal(err)
	}
	serveOnce(t, h, ctx)
	if n, nm := im.NumberOfRequests(), im.NoMatchCount(); n != 2 || nm != 1 {
		t.Fatalf("after an unmatched request: requests %d, no match %d; want 2, 1", n, nm)
	}
	if got := len(im.StubDefinitions()); got != 1 {
		t.Errorf("StubDefinitions has %d stubs, want 1", got)
	}
	recent := im.RecentRequests(10)
	if len(recent) != 2 {
		t.Fatalf("RecentRequests = %d, want 2", len(recent))
	}
	if p, _ := recent[0].Request.Get("path"); p != "/hello" || recent[0].At.IsZero() || recent[0].Stub != NoStub {
		t.Errorf("newest recorded request = %v at %v answered by %d, want /hello with a time and NoStub", p, recent[0].At, recent[0].Stub)
	}
	if recent[1].Stub != 1 {
		t.Errorf("the first request was answered by stub %d, want 1", recent[1].Stub)
	}
	_ = im.ClearRequests(context.Background())
	if n, nm, r := im.NumberOfRequests(), im.NoMatchCount(), len(im.RecentRequests(10)); n != 0 || nm != 0 || r != 0 {
		t.Errorf("after ClearRequests: requests %d, no match %d, recorded %d; want all 0", n, nm, r)
	}
	im.def.RecordRequests = false
	serveOnce(t, h, ctx)
	if r := im.RecentRequests(10); r != nil {
		t.Errorf("an imposter that does not record returned %d requests", len(r))
	}
}
