package imposter

import (
	"bytes"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
)

// TestProxyAlwaysAppends: proxyAlways appends each answer to the recorded stub in place (the
// same stub), and what a reader took before an append keeps the responses it had.
func TestProxyAlwaysAppends(t *testing.T) {
	n := 0
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		n++
		ctx.SetBodyString("answer " + strconv.Itoa(n))
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	h, ctx := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/orders/7", "", ""), false)
	responses := func(s *stub) int { return len(get(s.definition(), "responses").([]any)) }
	var first *stub
	var firstDef *config.Object
	var firstList []response
	for i := 1; i <= 3; i++ {
		serveOnce(t, h, ctx)
		if got := string(ctx.Response.Body()); got != "answer "+strconv.Itoa(i) {
			t.Fatalf("request %d: got %q", i, got)
		}
		stubs := h.im.tbl.Load().stubs
		compiled, _ := stubs[1].list()
		if len(stubs) != 2 || responses(stubs[1]) != i || len(compiled) != i {
			t.Fatalf("after %d requests: %d stubs, recorded %d responses (%d compiled)", i, len(stubs), responses(stubs[1]), len(compiled))
		}
		if first == nil {
			first, firstDef, firstList = stubs[1], stubs[1].definition(), compiled
		} else if stubs[1] != first || stubs[1].grow == nil {
			t.Fatalf("after %d requests the recorded stub was replaced, not appended to in place", i)
		}
	}
	// What a reader took before an append keeps the responses it had.
	if n := len(get(firstDef, "responses").([]any)); n != 1 || len(firstList) != 1 {
		t.Errorf("the definition taken after the first request now has %d responses (%d compiled)", n, len(firstList))
	}
	last := get(h.im.tbl.Load().stubs[1].definition(), "responses").([]any)[2]
	if body := get(config.AsObject(get(config.AsObject(last), "is")), "body"); body != "answer 3" {
		t.Errorf("third recorded body %v", body)
	}
	if defs := h.im.StubDefinitions(); len(defs) != 2 || responses(&stub{def: defs[1]}) != 3 {
		t.Errorf("the definition's stubs were not updated")
	}
	// The recorded stub keeps a tree (the others keep text): what Stubs gives of it is a copy,
	// which the admin API's printer edits (replayable drops _proxyResponseTime, and every
	// rendering adds _links).
	view := h.im.Stubs(false)
	before := view.JSON(1)
	if !strings.Contains(before, `"_proxyResponseTime"`) {
		t.Fatalf("recorded stub %s has no _proxyResponseTime", before)
	}
	d := view.Def(1)
	d.Set("_links", "x")
	config.AsObject(get(config.AsObject(get(d, "responses").([]any)[0]), "is")).Delete("_proxyResponseTime")
	if after := view.JSON(1); after != before {
		t.Errorf("changing what Def gave changed the stub:\n%s\nnow\n%s", before, after)
	}
}

// TestProxyAlwaysRecordedAnswers: the answers proxyAlways appended (kept uncompiled until the
// recorded stub first answers) are served in their order, cycling, once a request reaches
// the recorded stub rather than the proxy.
func TestProxyAlwaysRecordedAnswers(t *testing.T) {
	n := 0
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		n++
		ctx.SetBodyString("answer " + strconv.Itoa(n))
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"headers":{"X-Record":"yes"}}}],"responses":[{"proxy":{"to":"http://` +
		addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	h, rec := newBenchHandler(t, imp, "GET /orders/7 HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nX-Record: yes\r\n\r\n", false)
	for range 3 {
		serveOnce(t, h, rec)
	}
	stubs := h.im.tbl.Load().stubs
	compiled, _ := stubs[1].list()
	if len(stubs) != 2 || len(compiled) != 3 {
		t.Fatalf("%d stubs, want the proxy's and the recorded one with 3 responses", len(stubs))
	}
	for i, r := range compiled[1:] {
		if _, ok := r.(*pendingResponse); !ok {
			t.Errorf("appended response %d is a %T, want it compiled when first used", i+2, r)
		}
	}
	replay := impostertest.RequestCtx(t, impostertest.RawRequest("GET", "/orders/7", "", ""))
	for i, want := range []string{"answer 1", "answer 2", "answer 3", "answer 1", "answer 2"} {
		serveOnce(t, h, replay)
		if got := string(replay.Response.Body()); got != want {
			t.Errorf("replayed request %d: got %q, want %q", i+1, got, want)
		}
	}
	for i, r := range compiled[1:] { // compiled now, as they were when recorded
		p := r.(*pendingResponse)
		want := compileIs(config.AsObject(get(p.tree(), "is")), h.im.defaults, nil)
		got := &p.compiled().(*isResponse).http
		if len(want.headers) < 2 || fmt.Sprint(got.headers, got.status) != fmt.Sprint(want.headers, want.status) || string(got.body) != string(want.body) {
			t.Errorf("appended response %d compiled to %v %d %q, want %v %d %q", i+2, got.headers, got.status, got.body, want.headers, want.status, want.body)
		}
	}
	if n != 3 {
		t.Errorf("the origin was asked %d times, want 3", n)
	}
}

// TestProxyAlwaysAppendKeepsTable: a response appended to a recorded stub keeps the rest of the
// table, so with --debug a request no stub matches is still explained (the table lost its
// reference evaluator, and explaining panicked).
func TestProxyAlwaysAppendKeepsTable(t *testing.T) {
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("answer") })
	imp := `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"startsWith":{"path":"/orders"}}],"responses":[{"proxy":{"to":"http://` +
		addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	log := slog.New(slog.DiscardHandler)
	h, ctx := newBenchHandlerWith(t, imp, impostertest.RawRequest("GET", "/orders/7", "", ""), Options{Logger: log, Debug: true})
	serveOnce(t, h, ctx) // records a stub
	serveOnce(t, h, ctx) // appends a response to it
	if n := len(h.im.tbl.Load().stubs); n != 2 {
		t.Fatalf("%d stubs, want 2", n)
	}
	st, _, _, why, rerr := h.im.resolve(h.im.tbl.Load(), &request.Request{Method: "GET", Path: "/none"})
	if rerr != nil || st != nil || why == nil {
		t.Fatalf("a request no stub matches: stub %v, explanation %v, error %v", st, why, rerr)
	}
}

// TestServedInPlace: a proxyAlways response appended to a recorded stub shows what
// Mountebank's postProcess wrote into it while serving it.
func TestServedInPlace(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"is":{"headers":{"X-A":"1","content-length":"2"},"body":"hi","_mode":"text"}}`,
			`{"is":{"headers":{"X-A":"1","content-length":2,"Connection":"close"},"body":"hi","_mode":"text"}}`},
		{`{"is":{"headers":{"connection":"keep-alive","Content-Length":"7"},"body":{"a":1},"_mode":"text"}}`,
			`{"is":{"headers":{"connection":"keep-alive","Content-Length":14},"body":{"a":1},"_mode":"text"}}`},
		{`{"is":{"headers":{"Content-Length":"9"},"body":"aGk=","_mode":"binary"}}`,
			`{"is":{"headers":{"Content-Length":2,"Connection":"close"},"body":"aGk=","_mode":"binary"}}`},
		{`{"is":{"headers":{"Content-Length":"1"},"body":5,"_mode":"text"}}`,
			`{"is":{"headers":{"Content-Length":"1","Connection":"close"},"body":5,"_mode":"text"}}`},
		{`{"is":{"headers":{},"body":""}}`, `{"is":{"headers":{"Connection":"close"},"body":""}}`},
		// Names as a decorate may set them: a fold of either name is it, a longer or shorter
		// name is not.
		{`{"is":{"headers":{"CONNECTION":"x","CoNtEnT-lEnGtH":"0"},"body":"abc"}}`,
			`{"is":{"headers":{"CONNECTION":"x","CoNtEnT-lEnGtH":3},"body":"abc"}}`},
		{`{"is":{"headers":{"Connections":"x","Content-Length ":"0","Content-Lengt":"0"},"body":"abc"}}`,
			`{"is":{"headers":{"Connections":"x","Content-Length ":"0","Content-Lengt":"0","Connection":"close"},"body":"abc"}}`},
		{`{"is":{"body":""}}`, `{"is":{"body":""}}`},
	}
	for _, tt := range tests {
		r := mustJSON(t, tt.in)
		servedInPlace(r, defaultsOf(nil), nil)
		if got := string(config.MarshalJSON(r, 0)); got != tt.want {
			t.Errorf("servedInPlace(%s)\n got  %s\n want %s", tt.in, got, tt.want)
		}
	}
}

// stableReference is how the stable text was made before appendStableJSON: a copy with sorted
// keys, rendered.
func stableReference(v config.Value) string {
	var sorted func(config.Value) config.Value
	sorted = func(v config.Value) config.Value {
		switch t := v.(type) {
		case *config.Object:
			if t == nil {
				return t
			}
			out := &config.Object{Members: make([]config.Member, len(t.Members))}
			for i, m := range t.Members {
				out.Members[i] = config.Member{Key: m.Key, Value: sorted(m.Value)}
			}
			sort.SliceStable(out.Members, func(i, j int) bool { return out.Members[i].Key < out.Members[j].Key })
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = sorted(e)
			}
			return out
		}
		return v
	}
	return string(config.MarshalJSON(sorted(v), 0))
}

// TestAppendStableJSON: the stable text is the sorted copy's text, keys of equal name keep
// their order, and objects past the 16 members sorted on the stack sort as well.
func TestAppendStableJSON(t *testing.T) {
	big := &config.Object{}
	for i := 40; i > 0; i-- {
		big.Members = append(big.Members, config.Member{Key: "k" + strconv.Itoa(i%17), Value: float64(i)})
	}
	parse := func(s string) config.Value {
		v, err := config.ParseJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, v := range []config.Value{
		nil, true, 1.5, "text", []any{}, &config.Object{}, (*config.Object)(nil),
		parse(`[{"deepEquals":{"path":"/orders/7","method":"GET"}},{"equals":{"query":{"b":"2","a":["1","0"]}}}]`),
		parse(`{"z":{"y":[{"b":1,"a":null}],"x":"\u2028\"quoted\""},"a":[[],{}],"é":1,"e":2,"E":3}`),
		&config.Object{Members: []config.Member{{Key: "b", Value: 1.0}, {Key: "a", Value: "first"}, {Key: "a", Value: "second"}}},
		big, []any{big, nil, []any{big}},
	} {
		want := stableReference(v)
		if got := string(appendStableJSON([]byte("prefix"), v)); got != "prefix"+want {
			t.Errorf("appendStableJSON(%s)\n got %s\nwant prefix%s", config.MarshalJSON(v, 0), got, want)
		}
	}
}

// TestLazyRecord: only an http(s) imposter's plain `is`, which cannot fail to compile, is
// compiled when first used; anything with behaviors or a template is compiled as recorded.
func TestLazyRecord(t *testing.T) {
	tests := []struct {
		protocol, resp string
		want           bool
	}{
		{"http", `{"is":{"statusCode":200,"headers":{"A":"1"},"body":"x","_mode":"text","_proxyResponseTime":1}}`, true},
		{"https", `{"is":{}}`, true},
		{"http", `{"is":{"body":"x"},"behaviors":[{"wait":3}]}`, false},
		{"http", `{"is":{"body":"x","template":0}}`, false},
		{"http", `{"is":{"body":"x","template":true}}`, false},
		{"http", `{"is":"text"}`, false},
		{"tcp", `{"is":{"data":"x"}}`, false},
	}
	for _, tt := range tests {
		im := &Imposter{def: &config.Imposter{Protocol: tt.protocol}}
		if got := im.lazyRecord(mustJSON(t, tt.resp)); got != tt.want {
			t.Errorf("%s imposter, lazyRecord(%s) = %v, want %v", tt.protocol, tt.resp, got, tt.want)
		}
	}
}

// TestCloneKept: what a proxy keeps of an answer is a deep copy equal to config.Clone's, its
// headers with room for the header servedInPlace may add, whatever the number of members.
func TestCloneKept(t *testing.T) {
	many := `{"h0":"0","h1":"1","h2":"2","h3":"3","h4":"4","h5":"5","h6":"6","h7":"7","h8":"8","h9":"9"}`
	for _, in := range []string{
		`{}`,
		`{"statusCode":200,"headers":{},"body":"","_mode":"text"}`,
		`{"statusCode":200,"headers":{"A":"1","B":["x","y"]},"body":{"k":[{"a":1},{"b":{"c":null}}],"headers":{"n":1}},"_mode":"text","_proxyResponseTime":3}`,
		`{"headers":` + many + `,"body":` + many + `}`,
	} {
		is := mustJSON(t, in)
		c := cloneKept(is)
		if got, want := string(config.MarshalJSON(c, 0)), string(config.MarshalJSON(config.Clone(is), 0)); got != want {
			t.Errorf("cloneKept(%s) = %s", in, got)
		}
		if ho, ok := get(c, "headers").(*config.Object); ok && cap(ho.Members) <= len(ho.Members) {
			t.Errorf("cloneKept(%s): headers without room (%d of %d)", in, len(ho.Members), cap(ho.Members))
		}
		var walk func(a, b config.Value)
		walk = func(a, b config.Value) { // no object or list of the copy is the original's
			switch at := a.(type) {
			case *config.Object:
				bt := b.(*config.Object)
				if at == bt || len(at.Members) > 0 && &at.Members[0] == &bt.Members[0] {
					t.Errorf("cloneKept(%s) shares an object", in)
				}
				for i := range at.Members {
					walk(at.Members[i].Value, bt.Members[i].Value)
				}
			case []any:
				bt := b.([]any)
				if len(at) > 0 && &at[0] == &bt[0] {
					t.Errorf("cloneKept(%s) shares a list", in)
				}
				for i := range at {
					walk(at[i], bt[i])
				}
			}
		}
		walk(is, c)
	}
}

// TestProxyAlwaysKnownPredicates: an answer whose generated predicates proxyAlways has made
// before (their stable text kept by the request fields they were made of: by the fields as
// received, or with ip or requestFrom by the record's) goes to the first stub after the proxy
// whose predicates are the same, as one made anew would: after other keys' answers, after that
// stub was deleted (a new stub is recorded at the end), and when a stub with the same
// predicates was inserted before it.
func TestProxyAlwaysKnownPredicates(t *testing.T) {
	for _, matches := range []string{`{"path":true,"query":true}`, `{"path":true,"ip":true,"query":true}`} {
		t.Run(matches, func(t *testing.T) {
			n := 0
			addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
				n++
				ctx.SetBodyString("answer " + strconv.Itoa(n))
			})
			imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
				`","mode":"proxyAlways","predicateGenerators":[{"matches":` + matches + `}]}}]}]}`
			h, _ := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/", "", ""), false)
			send := func(target string) {
				t.Helper()
				serveOnce(t, h, impostertest.RequestCtx(t, impostertest.RawRequest("GET", target, "", "")))
			}
			// recorded lists each stub after the proxy's: the path and query its predicates
			// name, and the bodies it recorded.
			recorded := func() string {
				var out []string
				for _, d := range h.im.StubDefinitions()[1:] {
					s := ""
					for _, p := range get(d, "predicates").([]any) {
						de := config.AsObject(get(config.AsObject(p), "deepEquals"))
						for _, k := range []string{"path", "query"} {
							if v, ok := de.Get(k); ok {
								s += string(config.MarshalJSON(v, 0))
							}
						}
					}
					s += ":"
					for _, r := range get(d, "responses").([]any) {
						s += " " + fmt.Sprint(get(config.AsObject(get(config.AsObject(r), "is")), "body"))
					}
					out = append(out, s)
				}
				return strings.Join(out, "\n")
			}
			const a, b, ax = `"/a"{}`, `"/b"{}`, `"/a"{"x":"1"}`
			for _, target := range []string{"/a", "/b", "/a", "/a?x=1", "/b", "/a?x=1"} {
				send(target)
			}
			want := a + ": answer 1 answer 3\n" + b + ": answer 2 answer 5\n" + ax + ": answer 4 answer 6"
			if got := recorded(); got != want {
				t.Fatalf("recorded:\n%s\nwant\n%s", got, want)
			}
			bPredicates := config.Clone(get(h.im.StubDefinitions()[2], "predicates"))
			if err := h.im.DeleteStub(1); err != nil { // the stub of /a
				t.Fatal(err)
			}
			send("/a")
			send("/b")
			want = b + ": answer 2 answer 5 answer 8\n" + ax + ": answer 4 answer 6\n" + a + ": answer 7"
			if got := recorded(); got != want {
				t.Fatalf("after the stub of /a was deleted:\n%s\nwant\n%s", got, want)
			}
			user := config.NewObject("predicates", bPredicates, "responses", []any{config.NewObject("is", config.NewObject("body", "user"))})
			if err := h.im.InsertStub(user, 1); err != nil {
				t.Fatal(err)
			}
			send("/b")
			want = b + ": user answer 9\n" + b + ": answer 2 answer 5 answer 8\n" + ax + ": answer 4 answer 6\n" + a + ": answer 7"
			if got := recorded(); got != want {
				t.Fatalf("after a stub of the same predicates was inserted before the recorded one:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestAppendGenKey: the keys of different values differ (strings that are not UTF-8, values
// whose JSON texts would run together), and equal values have the same.
func TestAppendGenKey(t *testing.T) {
	values := []string{`"\ufffd"`, `""`, `"a"`, `"ab"`, `{}`, `[]`, `null`, `true`, `false`, `0`, `1`, `"1"`,
		`{"a":"b"}`, `{"ab":""}`, `{"a":"","b":""}`, `{"b":"","a":""}`, `["a","b"]`, `["ab"]`, `[["a"],"b"]`,
		`{"a":["b"]}`, `{"a":{"b":""}}`, `[{}]`, `[[]]`}
	keys := map[string]string{}
	check := func(name string, v config.Value) {
		t.Helper()
		k := string(appendGenKey(nil, v))
		if other, ok := keys[k]; ok {
			t.Errorf("%s and %s have the same key %q", name, other, k)
		}
		keys[k] = name
		if again := string(appendGenKey([]byte("x"), config.Clone(v))); again != "x"+k {
			t.Errorf("%s: key %q, then %q", name, k, again[1:])
		}
	}
	for _, text := range values {
		check(text, mustParse(t, text))
	}
	check(`"\xff"`, "\xff") // invalid UTF-8: JSON text writes both as "\ufffd"
	check(`"\xfe"`, "\xfe")
}

// mustParse is config.ParseJSON of text, which must parse.
func mustParse(t *testing.T, text string) config.Value {
	t.Helper()
	v, err := config.ParseJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAppendRecordKey: requests whose records differ in a field the key is of have different
// keys (texts that would run together, a missing body or form and an empty one); a field it is
// not of changes nothing; requestFrom and ip are left to the record's key.
func TestAppendRecordKey(t *testing.T) {
	all := []string{"method", "path", "query", "headers", "body", "form"}
	reqs := []*request.Request{
		{Method: "GET", Path: "/a"},
		{Method: "GE", Path: "T/a"},
		{Method: "GET", Path: "/a", Query: []request.KV{{Name: "a", Value: "b"}}},
		{Method: "GET", Path: "/a", Query: []request.KV{{Name: "ab", Value: ""}}},
		{Method: "GET", Path: "/a", Query: []request.KV{{Name: "a", Value: ""}, {Name: "b", Value: ""}}},
		{Method: "GET", Path: "/a", Query: []request.KV{{Name: "b", Value: ""}, {Name: "a", Value: ""}}},
		{Method: "GET", Path: "/a", Headers: []request.KV{{Name: "a", Value: "b"}}},
		{Method: "GET", Path: "/a", BodyMissing: true},
		{Method: "GET", Path: "/a", Body: "x"},
		{Method: "GET", Path: "/a", HasForm: true},
		{Method: "GET", Path: "/a", HasForm: true, Form: []request.KV{{Name: "a", Value: "b"}}},
	}
	seen := map[string]int{}
	for i, r := range reqs {
		key, direct := appendRecordKey(nil, r, all, r.Headers)
		if !direct {
			t.Fatalf("request %d: not direct", i)
		}
		if j, ok := seen[string(key)]; ok {
			t.Errorf("requests %d and %d have the same key %q", j, i, key)
		}
		seen[string(key)] = i
		if other, _ := appendRecordKey(nil, r, []string{"method", "path", "somethingElse"}, nil); string(other) != string(appendKeyOf(r)) {
			t.Errorf("request %d: a field not in the record changed the key", i)
		}
	}
	for _, k := range []string{"ip", "requestFrom"} {
		if _, direct := appendRecordKey(nil, reqs[0], []string{"path", k}, nil); direct {
			t.Errorf("%s: direct", k)
		}
	}
}

// appendKeyOf is appendRecordKey of r's method and path.
func appendKeyOf(r *request.Request) []byte {
	key, _ := appendRecordKey(nil, r, []string{"method", "path"}, nil)
	return key
}

// TestPredCacheBounds: the kept predicates' texts are bounded in number and in size, so that
// a proxy recording large distinct bodies keeps no copy of them beside its recorded stubs.
func TestPredCacheBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		key, text int
		kept      bool
	}{
		{"small", 40, 200, true},
		{"at the bound", maxGenEntry / 2, maxGenEntry / 2, true},
		{"a large body", 1 << 20, 1 << 20, false},
		{"one past", maxGenEntry/2 + 1, maxGenEntry / 2, false},
	} {
		var c predCache
		key, text := bytes.Repeat([]byte("k"), tc.key), bytes.Repeat([]byte("t"), tc.text)
		c.put(key, text)
		if got := c.get(key) != nil; got != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.name, got, tc.kept)
		}
	}
	var c predCache
	for i := range maxGenTexts + 1 {
		c.put([]byte(strconv.Itoa(i)), []byte("t"))
	}
	if n := len(c.m); n > maxGenTexts {
		t.Errorf("%d texts kept, want at most %d", n, maxGenTexts)
	}
}

// roomForOne gives a list room for one more element without changing what it holds, in place
// when it has room, else in a copy with twice its length as capacity (the copy shares nothing
// with the list: the old stub's readers keep theirs).
func TestRoomForOne(t *testing.T) {
	tests := []struct {
		name            string
		s               []int
		wantCap         int
		wantSameBacking bool
	}{
		{"nil", nil, 4, false},
		{"empty with room", make([]int, 0, 3), 3, true},
		{"full", []int{1, 2, 3}, 10, false},
		{"room left", append(make([]int, 0, 8), 1, 2, 3), 8, true},
		{"long and full", make([]int, 5000), 10004, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]int(nil), tt.s...)
			got := roomForOne(tt.s)
			if !slices.Equal(got, before) || len(got) != len(tt.s) {
				t.Fatalf("roomForOne changed the list: %v, want %v", got, before)
			}
			if cap(got) != tt.wantCap || cap(got) <= len(got) {
				t.Errorf("cap %d, want %d (and room for one)", cap(got), tt.wantCap)
			}
			same := cap(tt.s) > 0 && cap(got) > 0 && &got[:cap(got)][0] == &tt.s[:cap(tt.s)][0]
			if same != tt.wantSameBacking {
				t.Errorf("same backing array %v, want %v", same, tt.wantSameBacking)
			}
		})
	}
}

// TestProxyAlwaysAppendsWhileRead: answers appended from several requests at once, while other
// requests are answered by the recorded stub and the imposter's definition is read (the admin
// API's GET), are each kept once, in a list every reader sees whole up to its own length (the
// lists grow in place: run with -race).
func TestProxyAlwaysAppendsWhileRead(t *testing.T) {
	var n atomic.Int64
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString("answer " + strconv.FormatInt(n.Add(1), 10))
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"headers":{"X-Record":"yes"}}}],"responses":[{"proxy":{"to":"http://` +
		addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	const recorders, each = 3, 150
	h, first := newBenchHandler(t, imp, "GET /orders/7 HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nX-Record: yes\r\n\r\n", false)
	serveOnce(t, h, first) // the recorded stub is made
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range recorders {
		wg.Go(func() {
			ctx := impostertest.RequestCtx(t, "GET /orders/7 HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nX-Record: yes\r\n\r\n")
			for range each {
				ctx.Response.Reset()
				h.handle(ctx)
				if ctx.Response.StatusCode() != 200 {
					t.Errorf("a recorded request answered %d", ctx.Response.StatusCode())
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	readers.Go(func() { // answered by the recorded stub, cycling through what it has
		ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", "/orders/7", "", ""))
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx.Response.Reset()
			h.handle(ctx)
			if body := string(ctx.Response.Body()); ctx.Response.StatusCode() != 200 || !strings.HasPrefix(body, "answer ") {
				t.Errorf("a replayed request answered %d %q", ctx.Response.StatusCode(), body)
				return
			}
		}
	})
	readers.Go(func() { // the definition, each response whole
		for {
			select {
			case <-stop:
				return
			default:
			}
			defs := h.im.StubDefinitions()
			list, _ := get(defs[len(defs)-1], "responses").([]any)
			for i, r := range list {
				if body := get(config.AsObject(get(config.AsObject(r), "is")), "body"); body == nil {
					t.Errorf("response %d of %d has no body", i, len(list))
					return
				}
			}
			_ = h.im.Stubs(false).JSON(1)
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	stubs := h.im.tbl.Load().stubs
	total := 1 + recorders*each
	compiled, _ := stubs[1].list()
	if len(stubs) != 2 || len(compiled) != total {
		t.Fatalf("%d stubs, the recorded one with %d responses; want 2 and %d", len(stubs), len(compiled), total)
	}
	seen := map[string]bool{}
	for _, r := range get(stubs[1].definition(), "responses").([]any) {
		seen[get(config.AsObject(get(config.AsObject(r), "is")), "body").(string)] = true
	}
	for i := 1; i <= total; i++ {
		if !seen["answer "+strconv.Itoa(i)] {
			t.Errorf("answer %d was not kept (%d distinct of %d)", i, len(seen), total)
			break
		}
	}
}

// TestStartGrowing: which stubs proxyAlways appends to in place, and what a growing stub
// shows of its definition and responses.
func TestStartGrowing(t *testing.T) {
	resp := func(repeat any) any {
		o := config.NewObject("is", config.NewObject("body", "x"))
		if repeat != nil {
			o.Set("repeat", repeat)
		}
		return o
	}
	tests := []struct {
		name string
		s    *stub
		want bool
	}{
		{"recorded", &stub{def: config.NewObject("predicates", []any{}, "responses", []any{resp(nil)}), responses: make([]response, 1)}, true},
		{"repeat 1", &stub{def: config.NewObject("responses", []any{resp(1.0), resp(nil)}), responses: make([]response, 2)}, true},
		{"kept as text", &stub{raw: `{}`, responses: make([]response, 1)}, false},
		{"no responses member", &stub{def: config.NewObject("predicates", []any{}), responses: make([]response, 1)}, false},
		{"repeat 2 expanded", &stub{def: config.NewObject("responses", []any{resp(2.0)}), responses: make([]response, 2)}, false},
		{"a false response", &stub{def: config.NewObject("responses", []any{resp(nil), false}), responses: make([]response, 2)}, false},
		{"repeat 2 counted", &stub{def: config.NewObject("responses", []any{resp(2.0)}), responses: make([]response, 1), rep: &repeats{ends: []uint64{2}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := string(config.AppendJSON(nil, tt.s.definition(), 0))
			if got := tt.s.startGrowing(); got != tt.want {
				t.Fatalf("startGrowing %v, want %v", got, tt.want)
			}
			if after := string(config.AppendJSON(nil, tt.s.definition(), 0)); after != before {
				t.Errorf("definition %s, was %s", after, before)
			}
			if !tt.want {
				return
			}
			// Past several doublings: each append shows in the definition, the text, the
			// field and the cycle; a definition taken before keeps what it had.
			old := tt.s.definition()
			for i := range 40 {
				n := len(get(tt.s.definition(), "responses").([]any))
				tt.s.grow.add(config.NewObject("is", config.NewObject("body", strconv.Itoa(i))), nil)
				list := get(tt.s.definition(), "responses").([]any)
				compiled, rep := tt.s.list()
				if len(list) != n+1 || len(compiled) != n+1 || rep != nil || tt.s.cycle() != uint64(n+1) ||
					len(tt.s.field("responses").([]any)) != n+1 || !strings.Contains(tt.s.text(), `{"body":"`+strconv.Itoa(i)+`"}`) {
					t.Fatalf("append %d: %d configured, %d compiled, cycle %d", i, len(list), len(compiled), tt.s.cycle())
				}
				if cap(list) != len(list) || cap(compiled) != len(compiled) {
					t.Fatalf("append %d: a reader's lists have room to append in place", i)
				}
			}
			if got := string(config.AppendJSON(nil, old, 0)); got != before {
				t.Errorf("a definition taken before the appends is now %s", got)
			}
		})
	}
}

// TestGrowingReadWhileAppended: readers of a growing stub (its definition, text and cycle)
// each see a whole list while another goroutine appends (run with -race).
func TestGrowingReadWhileAppended(t *testing.T) {
	s := &stub{def: config.NewObject("predicates", []any{}, "responses", []any{config.NewObject("is", config.NewObject("body", "0"))}),
		responses: []response{&isResponse{}}}
	if !s.startGrowing() {
		t.Fatal("not growing")
	}
	const appends = 2000
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				list := get(s.definition(), "responses").([]any)
				for i, r := range list {
					if b := get(config.AsObject(get(config.AsObject(r), "is")), "body"); b != strconv.Itoa(i) {
						t.Errorf("response %d of %d has body %v", i, len(list), b)
						return
					}
				}
				compiled, _ := s.list()
				for i, r := range compiled {
					if r == nil {
						t.Errorf("compiled response %d of %d is nil", i, len(compiled))
						return
					}
				}
				if c := s.cycle(); c == 0 || s.at(c-1) == nil {
					t.Errorf("cycle %d", c)
					return
				}
				_ = s.text()
			}
		})
	}
	for i := 1; i <= appends; i++ {
		s.grow.add(config.NewObject("is", config.NewObject("body", strconv.Itoa(i))), &isResponse{})
	}
	close(done)
	wg.Wait()
	if c := s.cycle(); c != appends+1 {
		t.Errorf("cycle %d, want %d", c, appends+1)
	}
}

// TestProxyAlwaysKeepsAnswersAsText: an answer appended to a recorded stub is kept as its JSON
// text alone (nothing of it in the definition's list, which decodes it when read); what the
// API renders of the stub (its text, written from the answers' texts) is what the decoded
// definition renders, the definition is a copy each time, and the answers are served as
// recorded: JSON, binary and text bodies, repeated and Latin-1 header values, an added
// Connection and a Content-Length set to the body's length.
func TestProxyAlwaysKeepsAnswersAsText(t *testing.T) {
	n := 0
	answers := []func(*fasthttp.RequestCtx){
		func(ctx *fasthttp.RequestCtx) {
			ctx.SetBodyString(`{"order":7,"items":[1.5,"two",null,true],"note":"a\"b\\c\n"}`)
		},
		func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("image/png")
			ctx.SetBody([]byte{0x89, 'P', 'N', 'G', 0, 0xff})
		},
		func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Add("Set-Cookie", "a=1")
			ctx.Response.Header.Add("Set-Cookie", "b=2")
			ctx.Response.Header.Set("X-Latin", "caf\xe9")
			ctx.Response.Header.Set("Connection", "keep-alive")
			ctx.SetBodyString("plain \u00e9t\u00e9 text\ttab")
		},
	}
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		answers[n%len(answers)](ctx)
		n++
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"headers":{"X-Record":"yes"}}}],"responses":[{"proxy":{"to":"http://` +
		addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	h, rec := newBenchHandler(t, imp, "GET /orders/7 HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nX-Record: yes\r\n\r\n", false)
	var served []string
	for range 2 * len(answers) {
		serveOnce(t, h, rec)
		served = append(served, string(rec.Response.Header.Header())+string(rec.Response.Body()))
	}
	st := h.im.tbl.Load().stubs[1]
	configured, compiled := st.grow.grown()
	for i, c := range configured[1:] {
		if _, ok := compiled[i+1].(*pendingResponse); c != nil || !ok {
			t.Errorf("appended answer %d is kept as %T and %T, want nil and a pendingResponse", i+2, c, compiled[i+1])
		}
	}
	view := h.im.Stubs(false)
	text := view.JSON(1)
	def := view.Def(1)
	if got := string(config.AppendJSON(nil, def, 0)); got != text {
		t.Errorf("the stub's text\n%s\nis not its definition's\n%s", text, got)
	}
	if got := grownTextAsTree(st); got != text {
		t.Errorf("the stub's text\n%s\nis not what its tree of answer texts renders\n%s", text, got)
	}
	checkReplayable(t, view)
	for _, want := range []string{`"body":{"order":7,`, `"_mode":"binary"`, `"Set-Cookie":["a=1","b=2"]`, `"X-Latin":"café"`, `"Connection":"close"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recorded stub has no %s: %s", want, text)
		}
	}
	config.AsObject(def.Members[1].Value.([]any)[3]).Set("is", "changed")
	if again := view.JSON(1); again != text {
		t.Errorf("changing the definition changed the stub:\n%s\nnow\n%s", text, again)
	}
	// Served again from the recorded stub, each answer as the origin's was served (but the
	// first, recorded when the stub was made: Connection and Content-Length as Mountebank's).
	replay := impostertest.RequestCtx(t, impostertest.RawRequest("GET", "/orders/7", "", ""))
	for i := range 2 * len(answers) {
		serveOnce(t, h, replay)
		if i == 0 {
			continue
		}
		got := string(replay.Response.Body())
		if want := served[i]; !strings.HasSuffix(want, got) || len(got) == 0 {
			t.Errorf("replayed answer %d: body %q, served %q", i+1, got, want)
		}
	}
}

// TestProxyAlwaysKeepsOriginBytes: an answer proxyAlways appends to a recorded stub is kept as
// the origin's bytes, and read back (its tree, its text, the stub's text) as the JSON text it
// was kept as before: Forward's answer with its _proxyResponseTime, and Connection and
// Content-Length as servedInPlace sets them (a number or true body leaves the length alone).
func TestProxyAlwaysKeepsOriginBytes(t *testing.T) {
	n := 0
	answers := []func(*fasthttp.RequestCtx){
		func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(`{"order":7,"a":-0,"a":[1e400,"\u00e9"]}`) },
		func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("image/png")
			ctx.SetBody([]byte{0x89, 'P', 'N', 'G', 0, 0xff})
		},
		func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Add("Set-Cookie", "a=1")
			ctx.Response.Header.Add("Set-Cookie", "b=2")
			ctx.Response.Header.Set("X-Latin", "caf\xe9")
			ctx.Response.Header.Set("Connection", "keep-alive")
			ctx.SetBodyString("plain \u00e9t\u00e9 text\ttab \xff")
		},
		func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("5") },
		func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("true") },
		func(ctx *fasthttp.RequestCtx) { ctx.Response.Header.Set("X-Empty", "") },
		func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Set("Content-Encoding", "gzip")
			ctx.SetBodyString("zz")
		},
	}
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		answers[n%len(answers)](ctx)
		n++
	})
	imp := `{"protocol":"http","port":4545,"defaultResponse":{"statusCode":202,"headers":{"X-D":"d"},"body":"default"},` +
		`"stubs":[{"responses":[{"proxy":{"to":"http://` + addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	h, rec := newBenchHandler(t, imp, "GET /orders/7 HTTP/1.1\r\nHost: 127.0.0.1:4545\r\n\r\n", false)
	for range 2*len(answers) + 1 {
		serveOnce(t, h, rec)
	}
	st := h.im.tbl.Load().stubs[1]
	_, compiled := st.grow.grown()
	if len(compiled) != 2*len(answers)+1 {
		t.Fatalf("%d answers recorded, want %d", len(compiled), 2*len(answers)+1)
	}
	for i, c := range compiled[1:] {
		p, ok := c.(*pendingResponse)
		if !ok || !p.kept.Ok() || p.text != "" {
			t.Fatalf("appended answer %d is kept as %T (its bytes: %v), want the origin's bytes", i+2, c, ok && p.kept.Ok())
		}
		// What it was kept as before: the tree served, then servedInPlace, as JSON text.
		is := p.kept.Answer()
		is.Set("_proxyResponseTime", p.elapsed)
		resp := config.NewObject("is", is)
		served := compileIs(is, h.im.defaults, nil)
		if len(served.body) != p.served {
			t.Errorf("answer %d: served %d bytes, kept %d", i+2, len(served.body), p.served)
		}
		servedInPlace(resp, h.im.defaults, served)
		old := newPendingResponse(h.im, resp)
		if got := p.jsonText(); got != old.text {
			t.Errorf("answer %d: kept as\n%s\nwas\n%s", i+2, got, old.text)
		}
		if got, want := p.tree(), old.tree(); !reflect.DeepEqual(got, want) {
			t.Errorf("answer %d: tree %#v, was %#v", i+2, got, want)
		}
		if !reflect.DeepEqual(p.compiled(), old.compiled()) {
			t.Errorf("answer %d: compiled %#v, was %#v", i+2, p.compiled(), old.compiled())
		}
	}
	view := h.im.Stubs(false)
	text := view.JSON(1)
	if got := string(config.AppendJSON(nil, view.Def(1), 0)); got != text {
		t.Errorf("the stub's text\n%s\nis not its definition's\n%s", text, got)
	}
	if got := grownTextAsTree(st); got != text {
		t.Errorf("the stub's text\n%s\nis not what its tree of answer texts renders\n%s", text, got)
	}
	checkReplayable(t, view)
	for _, want := range []string{`"body":{"order":7,"a":[null,"é"]}`, `"_mode":"binary"`, `"Set-Cookie":["a=1","b=2"]`, `"X-Latin":"café"`,
		`"Connection":"close"`, `"body":5,`, `"body":true,`, `"X-Empty":""`, `"Content-Length":"1"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recorded stub has no %s: %s", want, text)
		}
	}
}

// grownTextAsTree is a grown stub's text as appendText wrote it before it wrote each answer's
// text straight into its buffer: through a tree whose recorded answers are RawObjects of their
// texts, then config.AppendJSON.
func grownTextAsTree(s *stub) string {
	configured, compiled := s.grow.grown()
	list := make([]any, len(configured))
	for i, c := range configured {
		if c != nil {
			list[i] = c
			continue
		}
		list[i] = &config.RawObject{Text: compiled[i].(*pendingResponse).jsonText()}
	}
	o := &config.Object{Members: append([]config.Member(nil), s.def.Members...)}
	o.Members[s.grow.at].Value = list
	return string(config.AppendJSON(nil, o, 0))
}

// checkReplayable: what AppendReplayableJSON writes of the recorded stub (1) is what the admin
// API printed of its definition, decoded, each is's _proxyResponseTime removed and, with
// removeProxies, proxy responses dropped; another stub (0) it leaves alone.
func checkReplayable(t *testing.T, view Stubs) {
	t.Helper()
	for _, removeProxies := range []bool{false, true} {
		so := view.Def(1)
		list, _ := get(so, "responses").([]any)
		kept := make([]any, 0, len(list))
		for _, r := range list {
			if is := config.AsObject(get(config.AsObject(r), "is")); is != nil {
				is.Delete("_proxyResponseTime")
			}
			if !removeProxies || !config.AsObject(r).Has("proxy") {
				kept = append(kept, r)
			}
		}
		so.Set("responses", kept)
		got, shown, ok := view.AppendReplayableJSON([]byte("x"), 1, removeProxies)
		if want := "x" + string(config.AppendJSON(nil, so, 0)); !ok || !shown || string(got) != want {
			t.Errorf("replayable (removeProxies %v): %v %v\n%s\nwant\n%s", removeProxies, ok, shown, got, want)
		}
		if strings.Contains(string(got), "_proxyResponseTime") {
			t.Errorf("replayable shows a _proxyResponseTime: %s", got)
		}
		if got, shown, ok := view.AppendReplayableJSON([]byte("x"), 0, removeProxies); ok || shown || string(got) != "x" {
			t.Errorf("the proxy's stub: %v %v %s", ok, shown, got)
		}
	}
}

// TestPendingTextWithoutTime: an answer kept as its text is written for replayable without
// its is's _proxyResponseTime, the rest as it is.
func TestPendingTextWithoutTime(t *testing.T) {
	for _, tt := range []struct{ resp, want string }{
		{`{"is":{"body":"a","_proxyResponseTime":5,"headers":{"X":["1","2"]}}}`, `{"is":{"body":"a","headers":{"X":["1","2"]}}}`},
		{`{"is":{"body":"_proxyResponseTime"}}`, `{"is":{"body":"_proxyResponseTime"}}`},
		{`{"is":{"_proxyResponseTime":1},"behaviors":[{"wait":1}]}`, `{"is":{},"behaviors":[{"wait":1}]}`},
	} {
		v, err := config.ParseJSON([]byte(tt.resp))
		if err != nil {
			t.Fatal(err)
		}
		p := newPendingResponse(nil, v.(*config.Object))
		if got := string(p.appendText([]byte("x"), true)); got != "x"+tt.resp {
			t.Errorf("with its time: %s, want %s", got, tt.resp)
		}
		if got := string(p.appendText([]byte("x"), false)); got != "x"+tt.want {
			t.Errorf("without: %s, want %s", got, tt.want)
		}
	}
}

// TestProxyAlwaysManyKeys: proxyAlways recording hundreds of keys (past the stubs the index
// files again in full: match.Extend files the new ones apart) appends each answer to the stub
// of its key, in Mountebank's order, while stubs are inserted and deleted through the API
// between the answers; once the proxy is removed, each key's stub answers its requests.
func TestProxyAlwaysManyKeys(t *testing.T) {
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString("answer " + string(ctx.Path()))
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
	h, ctx := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/k/0", "", ""), false)
	send := func(path string) string {
		t.Helper()
		ctx.Request.SetRequestURI(path)
		serveOnce(t, h, ctx)
		return string(ctx.Response.Body())
	}
	// want is the path of each stub after the proxy's ("" for one the API added) and the
	// number of its responses.
	type want struct {
		path      string
		responses int
	}
	var stubs []want
	record := func(path string) {
		t.Helper()
		if got := send(path); got != "answer "+path {
			t.Fatalf("%s answered %q", path, got)
		}
		for i := range stubs {
			if stubs[i].path == path {
				stubs[i].responses++
				return
			}
		}
		stubs = append(stubs, want{path, 1})
	}
	for i := range 700 {
		record("/k/" + strconv.Itoa(i))
		if i%97 == 0 {
			record("/k/" + strconv.Itoa(i/2)) // an answer of a key recorded before
		}
		switch i {
		case 300: // a stub inserted after the proxy's: the recorded stubs move one place
			def := mustParse(t, `{"predicates":[{"equals":{"path":"/api"}}],"responses":[{"is":{"body":"api"}}]}`).(*config.Object)
			if err := h.im.InsertStub(def, 1); err != nil {
				t.Fatal(err)
			}
			stubs = append([]want{{"", 1}}, stubs...)
		case 500: // the stub of /k/7 deleted: its key is recorded again at the end
			if err := h.im.DeleteStub(1 + 1 + 7); err != nil {
				t.Fatal(err)
			}
			stubs = slices.Delete(stubs, 1+7, 1+7+1)
			record("/k/7")
		}
	}
	defs := h.im.StubDefinitions()
	if len(defs) != 1+len(stubs) {
		t.Fatalf("%d stubs, want %d", len(defs), 1+len(stubs))
	}
	for i, w := range stubs {
		def := defs[1+i]
		if w.path != "" {
			preds := string(config.MarshalJSON(get(def, "predicates"), 0))
			if wantPreds := `[{"deepEquals":{"method":"GET"}},{"deepEquals":{"path":"` + w.path + `"}}]`; preds != wantPreds {
				t.Fatalf("stub %d has predicates %s, want %s", 1+i, preds, wantPreds)
			}
		}
		if n := len(get(def, "responses").([]any)); n != w.responses {
			t.Fatalf("stub %d (%s) has %d responses, want %d", 1+i, w.path, n, w.responses)
		}
	}
	// Replaying: each key's stub answers it (its first response), the index finding it.
	if err := h.im.DeleteStub(0); err != nil {
		t.Fatal(err)
	}
	for _, w := range stubs {
		if w.path == "" {
			continue
		}
		if got := send(w.path); got != "answer "+w.path {
			t.Fatalf("replayed %s answered %q", w.path, got)
		}
	}
	if got := send("/api"); got != "api" {
		t.Fatalf("/api answered %q", got)
	}
}

// TestProxyAlwaysNewKeyCost: what proxyAlways allocates recording a new key does not grow with
// the keys recorded before it. Recording one compiled and filed every stub again, and compared
// the predicates of every one: a new key allocated ~500 KB at 1,000 stubs, 7.4 MB at 15,000.
func TestProxyAlwaysNewKeyCost(t *testing.T) {
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("answer") })
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true,"query":true}}]}}]}]}`
	h, ctx := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/k/0", "", ""), false)
	n := 0
	record := func(keys int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range keys {
			ctx.Request.SetRequestURI("/k/" + strconv.Itoa(n) + "?q=1")
			n++
			serveOnce(t, h, ctx)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	record(300)
	few := record(200) // from 300 stubs on
	record(2500)
	many := record(200) // from 3,000 stubs on
	if h.im.StubCount() != 1+n {
		t.Fatalf("%d stubs after %d keys", h.im.StubCount(), n)
	}
	t.Logf("200 new keys allocated %d B from 300 stubs, %d B from 3,000", few, many)
	if many > 3*few {
		t.Errorf("200 new keys allocated %d B from 3,000 stubs, %d B from 300: the cost of a key grows with the stubs", many, few)
	}
}

// TestProxyAlwaysNewKeysWhileRead: proxyAlways records new keys from several clients while
// others are answered by the stubs recorded already (the proxy's stub asks for a header they
// do not send, so the recorded stubs' indexes find them) and the definitions are read: each
// key gets one stub, and every answer is its key's.
func TestProxyAlwaysNewKeysWhileRead(t *testing.T) {
	addr := impostertest.Origin(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString("answer " + string(ctx.Path()))
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"headers":{"X-Record":"yes"}}}],"responses":[{"proxy":{"to":"http://` +
		addr + `","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
	const recorders, each = 3, 150
	h, _ := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/", "", ""), false)
	var done [recorders]atomic.Int64 // keys recorded by each recorder
	path := func(g, i int) string { return "/r/" + strconv.Itoa(g) + "/" + strconv.Itoa(i) }
	var wg sync.WaitGroup
	for g := range recorders {
		wg.Go(func() {
			for i := range each {
				ctx := impostertest.RequestCtx(t, "GET "+path(g, i)+" HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nX-Record: yes\r\n\r\n")
				h.handle(ctx)
				if body := string(ctx.Response.Body()); body != "answer "+path(g, i) {
					t.Errorf("recording %s answered %d %q", path(g, i), ctx.Response.StatusCode(), body)
					return
				}
				done[g].Store(int64(i + 1))
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() { // answered by the stubs recorded
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			g := k % recorders
			n := done[g].Load()
			if n == 0 {
				continue
			}
			p := path(g, k%int(n))
			ctx := impostertest.RequestCtx(t, impostertest.RawRequest("GET", p, "", ""))
			h.handle(ctx)
			if body := string(ctx.Response.Body()); body != "answer "+p {
				t.Errorf("replayed %s answered %d %q", p, ctx.Response.StatusCode(), body)
				return
			}
		}
	})
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = h.im.StubDefinitions()
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	defs := h.im.StubDefinitions()
	if len(defs) != 1+recorders*each {
		t.Fatalf("%d stubs, want %d", len(defs), 1+recorders*each)
	}
	seen := map[string]bool{}
	for _, d := range defs[1:] {
		preds := string(config.MarshalJSON(get(d, "predicates"), 0))
		if seen[preds] {
			t.Fatalf("two stubs have the predicates %s", preds)
		}
		seen[preds] = true
	}
}
