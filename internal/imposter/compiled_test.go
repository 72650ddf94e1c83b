package imposter

import (
	"log/slog"
	"testing"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// Imposters created with the same stubs one after the other (a client suite's, around each
// test) share their compiled predicates, which then have no inject predicate (no injector is
// ever asked for); an imposter whose stubs, mode or protocol differ, or with an inject
// predicate (run in the imposter's own script scope), compiles its own.
func TestSameStubsCompileOnce(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	eng := script.New(script.Options{Logger: log})
	newIm := func(js string) *Imposter {
		t.Helper()
		im, err := New(impostertest.Def(t, js), Options{Logger: log, Script: eng})
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	const health = `{"protocol":"http","stubs":[{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"body":"ok"}}]}]}`
	a, b := newIm(health), newIm(health)
	if !sameStubs(a, b) {
		t.Error("two imposters of the same stubs compiled their predicates twice")
	}
	if b.tbl.Load().set.Scripted() {
		t.Error("a shared Set has an inject predicate (which would run without the imposter's scope)")
	}
	for _, im := range []*Imposter{a, b} {
		req := &request.Request{Method: "GET", Path: "/health"}
		if got := im.Resolve(req); string(got.Body()) != "ok" {
			t.Errorf("GET /health answered %q, want ok", got.Body())
		}
		req = &request.Request{Method: "GET", Path: "/other"}
		if got := im.Resolve(req); string(got.Body()) == "ok" {
			t.Error("GET /other matched the /health stub")
		}
	}
	for name, js := range map[string]string{
		"other path": `{"protocol":"http","stubs":[{"predicates":[{"equals":{"method":"GET","path":"/ready"}}],"responses":[{"is":{"body":"ok"}}]}]}`,
		"binary":     `{"protocol":"tcp","mode":"binary","stubs":[{"predicates":[{"equals":{"data":"AQI="}}],"responses":[{"is":{"data":"AQI="}}]}]}`,
		"inject":     `{"protocol":"http","stubs":[{"predicates":[{"inject":"function (r) { return r.path === '/health'; }"}],"responses":[{"is":{"body":"ok"}}]}]}`,
	} {
		c, d := newIm(health), newIm(js)
		if sameStubs(c, d) {
			t.Errorf("%s: shares the compiled predicates of another imposter", name)
		}
		if name == "inject" {
			if e := newIm(js); sameStubs(d, e) {
				t.Error("two imposters with an inject predicate share their compiled predicates")
			}
		}
	}
}

// sameStubs reports whether a's and b's compiled predicates are the same objects.
func sameStubs(a, b *Imposter) bool { return a.tbl.Load().set.Shares(b.tbl.Load().set) }

// TestSameStubsShareTheirText: an imposter of the last one's stubs keeps their packed texts
// as the last one does (one string, not a copy each); a stub of another text has its own.
func TestSameStubsShareTheirText(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	newIm := func(js string) *Imposter {
		t.Helper()
		im, err := New(impostertest.Def(t, js), Options{Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	const two = `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]},{"responses":[{"is":{"statusCode":201}}]}]}`
	a, b := newIm(two), newIm(two)
	sa, sb := a.tbl.Load().stubs, b.tbl.Load().stubs
	for i := range sa {
		if sa[i].raw != sb[i].raw || unsafe.StringData(sa[i].raw) != unsafe.StringData(sb[i].raw) {
			t.Errorf("stub %d: texts %q and %q, not one string", i, sa[i].raw, sb[i].raw)
		}
	}
	c := newIm(`{"protocol":"http","stubs":[{"responses":[{"is":{"statusCode":202}}]}]}`)
	if got := c.tbl.Load().stubs[0].raw; got == sb[1].raw {
		t.Errorf("a stub of another text kept %q", got)
	}
}

// TestStubTextKeptForTheSameDefinition checks that a stub the same as the one kept for its
// place is given the kept text (one string, not rendered again), and that a stub that differs
// in any way gets its own text, as rendered.
func TestStubTextKeptForTheSameDefinition(t *testing.T) {
	const first = `{"predicates":[{"equals":{"path":"/kept-text"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}`
	parse := func(js string) *config.Object {
		t.Helper()
		v, err := config.ParseJSON([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*config.Object)
	}
	kept := stubTextAt(parse(first), 3)
	if got := stubTextAt(parse(first), 3); got != kept || unsafe.StringData(got) != unsafe.StringData(kept) {
		t.Fatalf("the same stub: text %q, not the kept %q", got, kept)
	}
	for _, other := range []string{
		`{"predicates":[{"equals":{"path":"/kept-text"}}],"responses":[{"is":{"statusCode":201,"body":"ok"}}]}`,
		`{"predicates":[{"equals":{"path":"/kept-text"}}],"responses":[{"is":{"body":"ok","statusCode":200}}]}`,
		`{"predicates":[{"equals":{"path":"/kept-text"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}},{"is":{}}]}`,
		`{"responses":[{"is":{"statusCode":200,"body":"ok"}}],"predicates":[{"equals":{"path":"/kept-text"}}]}`,
	} {
		stubTextAt(parse(first), 3)
		def := parse(other)
		if got, want := stubTextAt(def, 3), stubText(def); got != want {
			t.Errorf("%s: text %q, want %q", other, got, want)
		}
	}
}

// TestSerialTellsImpostersApart checks that two imposters never share a serial, even when a
// store gives the second the first one's ID (Adopt): the admin API's kept answer to a POST is
// the imposter's of that serial only.
func TestSerialTellsImpostersApart(t *testing.T) {
	const src = `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"a"}}]}]}`
	a, err := New(impostertest.Def(t, src), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(impostertest.Def(t, src), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	b.Adopt(a.ID(), nil)
	if a.ID() != b.ID() || a.Serial() == b.Serial() || a.Serial() == 0 {
		t.Errorf("IDs %s %s, serials %d %d: want one ID and two serials", a.ID(), b.ID(), a.Serial(), b.Serial())
	}
}
