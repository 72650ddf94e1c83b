package script

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// TestSlabSameResults: native calls whose objects come from a request's Slab answer as those
// that allocate them, also past the slab's room (objects and members), and a released slab
// serves the next request.
func TestSlabSameResults(t *testing.T) {
	many := `(config) => ({ body: { a: { b: { c: { d: { e: { f: { g: [1, { h: 'i' }] } } } } } }, x: config.request.path }, headers: { 'A': '1', 'B': '2', 'C': '3', 'D': '4', 'E': '5', 'F': '6', 'G': '7', 'H': '8', 'I': '9', 'J': '10', 'K': '11', 'L': '12', 'M': '13', 'N': '14', 'O': '15', 'P': '16', 'Q': '17', 'R': '18', 'S': '19', 'T': '20', 'U': '21', 'V': '22', 'W': '23', 'X': '24', 'Y': '25' } })`
	injects := []string{
		`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`,
		`(config) => { const r = { headers: { a: '1' } }; let h = r.headers; r.headers = { z: '0' }; h.b = '2'; r.body = JSON.stringify(h); return r; }`,
		many,
		// More strings stored than the slab has slots for.
		`(config) => ({ headers: { a: config.request.path, b: config.request.path + '1', c: config.request.method, d: config.request.method + '2', e: '' + config.request.path, f: config.request.path + config.request.method, g: config.request.path + '3', h: config.request.method + config.request.path }, body: config.request.path + '!' })`,
	}
	decorates := []string{
		`(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`,
		`(config) => { config.response.headers.a = { b: { c: config.request.method } }; config.response.body = JSON.stringify(config.response.headers); }`,
		// Strings past the slab's room for text (each doubling joins two of its strings).
		`(config) => { let s = config.request.path + '-'; s = s + s; s = s + s; s = s + s; s = s + s; s = s + s; s = s + s; s = s + s; s = s + s; config.response.headers.x = s + '|'; config.response.body = s + s + config.response.body; }`,
	}
	resp := config.NewObject("statusCode", 200.0, "headers", config.NewObject("Content-Type", "text/plain"), "body", "hello")
	for round := range 3 {
		for i := range nativeRequests() {
			for _, src := range injects {
				r := nativeRequests()[i] // fresh: Reset below empties it
				fn := compileNative(src)
				if fn == nil {
					t.Fatalf("%s: not native", src)
				}
				want, ok := fn.runInject(r, true)
				if !ok {
					continue
				}
				wantJSON := string(config.MarshalJSON(want, 0))
				for _, text := range []bool{false, true} {
					r := nativeRequests()[i]
					slab := AttachSlab(r)
					if text {
						slab.AllowText()
					}
					got, ok := fn.runInject(r, true)
					gotJSON := string(config.MarshalJSON(got, 0))
					r.Reset() // drops the memo
					slab.Release()
					if !ok || gotJSON != wantJSON {
						t.Errorf("round %d, %s: with a slab (text %v) %v %s, want %s", round, src, text, ok, gotJSON, wantJSON)
					}
				}
			}
			for _, src := range decorates {
				r := nativeRequests()[i]
				fn := compileNative(src)
				if fn == nil {
					t.Fatalf("%s: not native", src)
				}
				want, ok := fn.run(r, resp, true)
				if !ok {
					continue
				}
				wantJSON := string(config.MarshalJSON(want, 0))
				for _, text := range []bool{false, true} {
					r := nativeRequests()[i]
					slab := AttachSlab(r)
					if text {
						slab.AllowText()
					}
					got, ok := fn.run(r, resp, true)
					gotJSON := string(config.MarshalJSON(got, 0))
					r.Reset()
					slab.Release()
					if !ok || gotJSON != wantJSON {
						t.Errorf("round %d, %s: with a slab (text %v) %v %s, want %s", round, src, text, ok, gotJSON, wantJSON)
					}
				}
			}
		}
	}
	if got := string(config.MarshalJSON(resp, 0)); got != `{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"hello"}` {
		t.Errorf("the decorated response changed: %s", got)
	}
}

// TestSlabCountsNativeCalls: a request's slab counts the Response and Decorate calls the
// native evaluator answered, and not those goja ran (not of the subset, or given up on), which
// the imposter reads to know whether a runtime saw the request.
func TestSlabCountsNativeCalls(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	resp := config.NewObject("statusCode", 200.0, "body", "hello")
	r := testRequest()
	slab := AttachSlab(r)
	steps := []struct {
		inject bool
		src    string
		native bool
	}{
		{true, `function (config) { return { body: JSON.stringify({ p: config.request.path }) }; }`, true},
		{false, `(config) => { config.response.body = config.response.body + config.request.path; }`, true},
		{true, `function (config) { var s = ''; for (var i = 0; i < 2; i++) { s += config.request.path; } return { body: s }; }`, false},
		{false, `(config) => { config.state.kept = config.request.path; }`, false},
		{true, `function (config) { return config.request.missing.x; }`, false}, // native gives up: goja throws
	}
	want := 0
	for _, st := range steps {
		var err error
		if st.inject {
			_, err = s.Response(context.Background(), st.src, r)
		} else {
			_, err = s.Decorate(context.Background(), st.src, r, resp)
		}
		if err != nil && st.native {
			t.Fatalf("%s: %v", st.src, err)
		}
		if st.native {
			want++
		}
		if got := slab.Native(); got != want {
			t.Fatalf("after %s: Native() = %d, want %d", st.src, got, want)
		}
	}
	slab.Release()
	slab = AttachSlab(r)
	if n := slab.Native(); n != 0 {
		t.Errorf("a slab from the pool counts %d", n)
	}
	slab.Release()
}

// TestCallStateKeepsItsArguments: config, the logger and config.request of a call's state are
// made at its first call and left by release: no call changes them, also one that tries to
// (assigning to config or to config.request gives up to goja) on the state the next call takes.
func TestCallStateKeepsItsArguments(t *testing.T) {
	r := nativeRequests()[0]
	s := AttachSlab(r)
	defer s.Release()
	resp := config.NewObject("body", "b")
	for _, src := range []string{
		`(config) => { config.response.body = 'x'; config.y = 1; }`,
		`(config) => { config.request.y = config.response.body; }`,
		`(config, response, logger) => { logger.x = 1; }`,
		`(config) => { config.response.body = config.response.body + config.request.method; }`,
	} {
		fn := compileNative(src)
		if fn == nil {
			t.Fatalf("%s: not native", src)
		}
		fn.run(r, resp, true)
		if c := &s.call; !reflect.DeepEqual(c.cfg, nobj{kind: objConfig}) || !reflect.DeepEqual(c.logger, nobj{kind: objOpaque}) ||
			!reflect.DeepEqual(c.reqObj, nobj{kind: objRequest}) || !reflect.DeepEqual(c.root, nobj{}) {
			t.Fatalf("%s: call state after release: %+v %+v %+v %+v", src, c.cfg, c.logger, c.reqObj, c.root)
		}
	}
	if got, ok := compileNative(`(config) => { config.response.body = config.response.body + config.request.method; }`).run(r, resp, true); !ok || jsvalueString(got, "body") != "b"+r.Method {
		t.Errorf("after the others: %v %v", got, ok)
	}
}

func jsvalueString(o *config.Object, key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

// TestSlabKeptWithRequest: a request keeps its slab from one use to the next (Reset leaves it),
// attached again empty: what a call put in it before Release is gone.
func TestSlabKeptWithRequest(t *testing.T) {
	r := &request.Request{Method: "GET", Path: "/p"}
	s := AttachSlab(r)
	s.AllowText()
	if str, ok := s.join("a", "b"); !ok || str != "ab" {
		t.Fatalf("join: %q %v", str, ok)
	}
	s.object(2).Set("k", s.box("v"))
	countNative(r)
	s.Release()
	r.Reset()
	if slabOf(r) != nil {
		t.Fatal("a reset request still has its slab attached")
	}
	again := AttachSlab(r)
	if again != s {
		t.Fatal("the request's next use made another slab")
	}
	if again.no != 0 || again.nm != 0 || again.ns != 0 || len(again.text) != 0 || again.Native() != 0 || again.textOK {
		t.Fatalf("slab not empty: %d objects, %d members, %d strings, %d bytes, %d native calls, text %v",
			again.no, again.nm, again.ns, len(again.text), again.Native(), again.textOK)
	}
	if slabOf(r) != again {
		t.Fatal("the slab is not attached")
	}
	other := &request.Request{}
	if AttachSlab(other) == s {
		t.Fatal("two requests share a slab")
	}

	// A use that ends without Release (the answer failed before it was written) leaves the
	// slab as it was: the next use gets it empty all the same, its text closed, its aux gone.
	again.AllowText()
	again.object(1)
	*again.Aux() = "the caller's"
	countNative(r)
	r.Reset()
	third := AttachSlab(r)
	if third != s || third.no != 0 || len(third.text) != 0 || third.Native() != 0 || third.textOK || *third.Aux() != nil {
		t.Fatalf("slab after a use without Release: %d objects, %d bytes, %d native calls, text %v, aux %v",
			third.no, len(third.text), third.Native(), third.textOK, *third.Aux())
	}
	third.Release()
}
