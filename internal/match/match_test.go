package match

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

func decode(t testing.TB, s string) [][]any {
	t.Helper()
	var stubs [][]any
	if err := json.Unmarshal([]byte(s), &stubs); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return stubs
}

// TestCompileErrors pins the validation errors of Mountebank's dry run
// (checked against mb 2.9.1 POST /imposters).
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, stubs string
		opts        Options
		want        []Error // in Mountebank's order; nil: compiles
	}{
		{"ok", `[[{"equals":{"path":"/"}}]]`, Options{}, nil},
		{"no predicates", `[[]]`, Options{}, nil},
		{"missing predicate", `[[{"foo":{"body":"x"}}]]`, Options{},
			[]Error{{Code: "bad data", Message: "missing predicate", Source: map[string]any{"foo": map[string]any{"body": "x"}}}}},
		{"missing predicate after false top-level", `[[{"equals":{"path":"/x"}},{"bogus":1}]]`, Options{},
			[]Error{{Code: "bad data", Message: "missing predicate", Source: map[string]any{"bogus": 1.0}}}},
		{"or short-circuits in dry run", `[[{"or":[{"equals":{"path":"/"}},{"bogus":1}]}]]`, Options{}, nil},
		{"or not an array", `[[{"or":{"a":1}}]]`, Options{}, []Error{{Message: "predicate.or.some is not a function"}}},
		{"equals null", `[[{"equals":null}]]`, Options{}, []Error{{Message: "Cannot convert undefined or null to object"}}},
		{"not null", `[[{"not":null}]]`, Options{}, []Error{{Message: "Cannot convert undefined or null to object"}}},
		{"malformed xpath", `[[{"equals":{"body":"x"},"xpath":{"selector":"//a[["}}]]`, Options{},
			[]Error{{Code: "bad data", Message: "malformed xpath predicate selector", Source: "//a[["}}},
		{"xpath string result", `[[{"equals":{"body":"x"},"xpath":{"selector":"string(//a)"}}]]`, Options{},
			[]Error{{Message: "result.map is not a function"}}},
		{"xpath unbound prefix compiles", `[[{"equals":{"body":"x"},"xpath":{"selector":"//a:b"}}]]`, Options{}, nil},
		{"jsonpath malformed compiles", `[[{"equals":{"body":"x"},"jsonpath":{"selector":"$..[["}}]]`, Options{}, nil},
		{"jsonpath selector not a string", `[[{"equals":{"body":"x"},"jsonpath":{"selector":1}}]]`, Options{},
			[]Error{{Message: "cloned.jsonpath.selector.toLowerCase is not a function"}}}, // as predicates.js throws on (1).toLowerCase()
		{"binary matches", `[[{"matches":{"data":"x"}}]]`, Options{Binary: true, TCP: true},
			[]Error{{Code: "bad data", Message: "the matches predicate is not allowed in binary mode"}}},
		{"binary jsonpath", `[[{"equals":{"data":"x"},"jsonpath":{"selector":"$.a"}}]]`, Options{Binary: true, TCP: true},
			[]Error{{Code: "bad data", Message: "the jsonpath predicate parameter is not allowed in binary mode"}}},
		{"binary xpath", `[[{"equals":{"data":"x"},"xpath":{"selector":"//a"}}]]`, Options{Binary: true, TCP: true},
			[]Error{{Code: "bad data", Message: "the xpath predicate parameter is not allowed in binary mode"}}},
		{"lookahead compiles", `[[{"matches":{"path":"^(?!/admin)"}}]]`, Options{}, nil},
		{"backreference compiles", `[[{"matches":{"path":"(a)\\1"}}]]`, Options{}, nil},
		{"invalid lookbehind", `[[{"matches":{"path":"(?<=a"}}]]`, Options{},
			[]Error{{Message: "Invalid regular expression: /(?<=a/: error parsing regexp: missing closing ) in `(?<=a`"}}},
		{"invalid regex", `[[{"matches":{"path":"("}}]]`, Options{},
			[]Error{{Message: "Invalid regular expression: /(/: missing closing )"}}},
		{"invalid nested regex", `[[{"matches":{"body":{"a":"["}}}]]`, Options{},
			[]Error{{Message: "Invalid regular expression: /[/: missing terminating ] for character class"}}},
		{"invalid except", `[[{"equals":{"body":"x"},"except":"("}]]`, Options{},
			[]Error{{Message: "Invalid regular expression: /(/: missing closing )"}}},
		{"several stubs, last first", `[[{"equals":{"path":"/x"}}],[{"bogus":1}],[{"matches":{"body":"("}}]]`, Options{},
			[]Error{{Message: "Invalid regular expression: /(/: missing closing )", Stub: 2},
				{Code: "bad data", Message: "missing predicate", Source: map[string]any{"bogus": 1.0}, Stub: 1}}},
		{"inject compiles without injector", `[[{"inject":"function(){return false}"}]]`, Options{}, nil},
		{"tcp dry run request", `[[{"or":[{"equals":{"data":"test"}},{"bogus":1}]}]]`, Options{TCP: true}, nil},
		{"tcp dry run reaches bogus", `[[{"or":[{"equals":{"path":"/"}},{"bogus":1}]}]]`, Options{TCP: true},
			[]Error{{Code: "bad data", Message: "missing predicate", Source: map[string]any{"bogus": 1.0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(decode(t, tt.stubs), tt.opts)
			if tt.want == nil {
				if err != nil || s == nil {
					t.Fatalf("Compile(%s) = %v, want success", tt.stubs, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile(%s) succeeded, want %v", tt.stubs, tt.want)
			}
			var got []*Error
			var list Errors
			var one *Error
			switch {
			case errors.As(err, &list) && len(tt.want) > 1:
				got = list
			case errors.As(err, &one):
				got = []*Error{one}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Compile(%s) = %v, want %d errors", tt.stubs, err, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Code != w.Code || g.Message != w.Message || fmt.Sprint(config.Plain(g.Source)) != fmt.Sprint(w.Source) {
					t.Errorf("error %d = {%q %q %v}, want {%q %q %v}", i, g.Code, g.Message, g.Source, w.Code, w.Message, w.Source)
				}
				if len(tt.want) > 1 && g.Stub != w.Stub {
					t.Errorf("error %d stub = %d, want %d", i, g.Stub, w.Stub)
				}
			}
		})
	}
}

type fakeInjector struct {
	calls int
	ok    bool
	err   error
}

func (f *fakeInjector) Predicate(src string, r *request.Request) (bool, error) {
	f.calls++
	return f.ok, f.err
}

func TestInject(t *testing.T) {
	stubs := decode(t, `[[{"inject":"function (config) { return true; }"}]]`)
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Find(&request.Request{Method: "GET", Path: "/"})
	var e *Error
	if !errors.As(err, &e) || e.Code != "invalid injection" {
		t.Fatalf("Find with nil Injector = %v, want invalid injection error", err)
	}
	inj := &fakeInjector{ok: true}
	s, err = Compile(stubs, Options{Injector: inj})
	if err != nil {
		t.Fatal(err)
	}
	if inj.calls != 0 {
		t.Fatalf("dry run called the injector %d times", inj.calls)
	}
	if i, err := s.Find(&request.Request{Method: "GET", Path: "/"}); i != 0 || err != nil || inj.calls != 1 {
		t.Fatalf("Find = %d, %v (calls %d), want 0, nil, 1", i, err, inj.calls)
	}
}

func TestFind(t *testing.T) {
	stubs := decode(t, `[
		[{"equals":{"method":"POST","path":"/users"}}],
		[{"equals":{"path":"/users/42"}},{"equals":{"method":"GET"}}],
		[{"startsWith":{"path":"/users"}}],
		[{"deepEquals":{"path":"/Exact"}, "caseSensitive":true}],
		[{"equals":{"method":"delete"}}],
		[{"matches":{"path":"^/re/\\d+$"}}],
		[]
	]`)
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		want         int
	}{
		{"POST", "/users", 0},
		{"post", "/USERS", 0},
		{"GET", "/users/42", 1},
		{"PUT", "/users/42", 2},
		{"GET", "/users", 2},
		{"GET", "/Exact", 3},
		{"GET", "/exact", 6},
		{"DELETE", "/x", 4},
		{"GET", "/re/12", 5},
		{"GET", "/nothing", 6},
	}
	for _, tt := range tests {
		r := &request.Request{Method: tt.method, Path: tt.path}
		got, err := s.Find(r)
		if err != nil || got != tt.want {
			t.Errorf("Find(%s %s) = %d, %v; want %d", tt.method, tt.path, got, err, tt.want)
		}
		ok, err := s.Match(tt.want, r)
		if !ok || err != nil {
			t.Errorf("Match(%d, %s %s) = %v, %v; want true", tt.want, tt.method, tt.path, ok, err)
		}
	}
}

func TestFindNoStubMatches(t *testing.T) {
	s, err := Compile(decode(t, `[[{"equals":{"path":"/a"}}]]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i, err := s.Find(&request.Request{Method: "GET", Path: "/b"}); i != -1 || err != nil {
		t.Fatalf("Find = %d, %v; want -1", i, err)
	}
	empty, _ := Compile(nil, Options{})
	if i, _ := empty.Find(&request.Request{}); i != -1 {
		t.Fatalf("Find on no stubs = %d, want -1", i)
	}
}

// TestFindErrorOrder: an error raised by a stub before the winner surfaces,
// one after it does not (Mountebank stops at the first match).
func TestFindErrorOrder(t *testing.T) {
	s, err := Compile(decode(t, `[
		[{"equals":{"path":"/first"}}],
		[{"or":[{"equals":{"path":"/"}},{"bogus":1}]}],
		[{"equals":{"path":"/x"}}]
	]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i, err := s.Find(&request.Request{Method: "GET", Path: "/first"}); i != 0 || err != nil {
		t.Fatalf("Find(/first) = %d, %v; want 0", i, err)
	}
	if _, err := s.Find(&request.Request{Method: "GET", Path: "/x"}); err == nil {
		t.Fatalf("Find(/x) must raise stub 1's missing predicate")
	}
}

// TestFindBodyParsedOnce: many JSON body stubs share one parse per request.
func TestFindBodyParsedOnce(t *testing.T) {
	var stubs [][]any
	for i := 0; i < 50; i++ {
		stubs = append(stubs, []any{map[string]any{"equals": map[string]any{"body": map[string]any{"id": float64(i)}}}})
	}
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &request.Request{Method: "POST", Path: "/", Body: `{"id": 49, "name": "X"}`}
	if i, err := s.Find(r); i != 49 || err != nil {
		t.Fatalf("Find = %d, %v; want 49", i, err)
	}
	a, b := s.stubs[0][0].pp, s.stubs[49][0].pp
	if a.jsonID != b.jsonID || a.textID != b.textID {
		t.Fatalf("stubs with the same parameters must share memo keys: %d/%d vs %d/%d", a.jsonID, a.textID, b.jsonID, b.textID)
	}
	// The index and the one candidate read "id" with a scan of the text: no parse needed.
	if _, ok := r.Memo(a.jsonID); ok {
		t.Fatalf("body parsed though scanning it for id was enough")
	}

	// Stubs that each read another key: past maxBodyScans scans the body is parsed, once,
	// and the rest read the parsed body.
	stubs = nil
	for i := 0; i < 2*maxBodyScans; i++ {
		stubs = append(stubs, []any{map[string]any{"contains": map[string]any{"body": map[string]any{fmt.Sprintf("k%d", i): "v"}}}})
	}
	if s, err = Compile(stubs, Options{}); err != nil {
		t.Fatal(err)
	}
	last := 2*maxBodyScans - 1
	// (A capital letter makes the parse the reference's tryJSON, memoized under jsonID.)
	r = &request.Request{Method: "POST", Path: "/", Body: fmt.Sprintf(`{"k%d": "Value"}`, last)}
	if i, err := s.Find(r); i != last || err != nil {
		t.Fatalf("Find = %d, %v; want %d", i, err, last)
	}
	if _, ok := r.Memo(s.stubs[0][0].pp.jsonID); !ok {
		t.Fatalf("body not parsed and memoized after %d scans", maxBodyScans)
	}
}

// TestIndexScanServesCandidate checks that stubs comparing several keys of a JSON body are found
// with one read of the body's text: the index reads every key the candidate compares, the
// candidate reuses that read, and the body is neither parsed nor lowercased as a whole.
func TestIndexScanServesCandidate(t *testing.T) {
	var stubs [][]any
	for i := 0; i < 20; i++ {
		stubs = append(stubs, []any{map[string]any{"equals": map[string]any{"method": "POST",
			"body": map[string]any{"orderId": fmt.Sprintf("ord-%d", i), "sku": fmt.Sprintf("SKU-%d", i), "qty": float64(i)}}}})
	}
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &request.Request{Method: "POST", Path: "/", Body: `{"orderId":"ORD-7","qty":7,"sku":"sku-7","note":"x"}`}
	c := acquireCtx(s, r)
	defer releaseCtx(c)
	if i, err := s.idx.find(s, &c, r); i != 7 || err != nil {
		t.Fatalf("find = %d, %v; want 7", i, err)
	}
	if c.scans != 1 {
		t.Errorf("body scanned %d times, want once", c.scans)
	}
	pp := s.stubs[7][0].pp
	if _, ok := r.Memo(pp.jsonID); ok {
		t.Error("body parsed though scanning it was enough")
	}
	if _, ok := r.Memo(pp.textID); ok {
		t.Error("whole body lowercased though only its keys were read")
	}
}

// withoutScans returns a copy of s that parses every JSON body instead of scanning it.
func (s *Set) withoutScans() *Set {
	c := *s
	c.noScan = true
	return &c
}

// withoutSpeedLayer returns a copy of s without its speed layer: no index, and the reference
// evaluates every predicate.
func (s *Set) withoutSpeedLayer() *Set {
	c := *s
	c.referenceOnly = true
	return &c
}

// scanParsed is Find without the index and without reading bodies by scanning their text: every
// stub in order, every JSON body parsed.
func scanParsed(s *Set, r *request.Request) (int, error) {
	c := acquireCtx(s.withoutScans(), r)
	defer releaseCtx(c)
	return s.scan(c, 0)
}

// plainFind is Find with the reference evaluating every predicate.
func plainFind(s *Set, r *request.Request) (int, error) {
	return s.withoutSpeedLayer().Find(r)
}

// TestIndexNeverChangesWinner compares the indexed Find with a plain scan
// over random stubs and requests.
func TestIndexNeverChangesWinner(t *testing.T) {
	plainOnly(t)
	rng := rand.New(rand.NewSource(1))
	indexed := map[fieldID]int{}
	regexIndexed, settled, selIndexed := 0, 0, 0
	defer func() {
		if selIndexed < 50 {
			t.Errorf("only %d random sets indexed a selected body", selIndexed)
		}
		if regexIndexed < 50 {
			t.Errorf("only %d random sets indexed regexps", regexIndexed)
		}
		if settled < 50 {
			t.Errorf("only %d random sets had settled stubs", settled)
		}
		for _, f := range []fieldID{fBody, fHeaders, fQuery} {
			if indexed[f] < 50 {
				t.Errorf("only %d random sets indexed %s", indexed[f], fieldNames[f])
			}
		}
	}()
	for round := 0; round < 800; round++ {
		stubs := randomStubs(rng, 1+rng.Intn(30))
		s, err := Compile(stubs, Options{})
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if len(s.idx.regexes) > 0 {
			regexIndexed++
		}
		if s.idx.settled != nil {
			settled++
		}
		seen := map[fieldID]bool{}
		for _, g := range s.idx.groups {
			if g.sel {
				selIndexed++
				continue
			}
			if !seen[g.field] {
				seen[g.field] = true
				indexed[g.field]++
			}
		}
		for k := 0; k < 20; k++ {
			r := randomRequest(rng)
			got, gerr := s.Find(r)
			want, werr := scanParsed(s, r)
			ref, rerr := plainFind(s, r)
			if got != want || (gerr == nil) != (werr == nil) || !sameAnswer(got, gerr, ref, rerr) {
				b, _ := json.Marshal(stubs)
				t.Fatalf("Find(%s %s) = %d, %v; scan = %d, %v; reference = %d, %v\nstubs %s", r.Method, r.Path, got, gerr, want, werr, ref, rerr, b)
			}
		}
	}
}

// randomMethods and randomPaths are the methods and paths randomStubs and randomRequest draw.
var (
	randomMethods = []string{"GET", "POST", "get", "Delete"}
	randomPaths   = []string{"/a", "/A", "/b", "/a/b", "/É", "/é", "", "/K", "/k", "/K/x"}
)

// randomStubs returns the predicates of n random stubs: of every shape the index files (paths,
// methods, body, header and query values, selected bodies, regexps) and of others.
func randomStubs(rng *rand.Rand, n int) [][]any {
	var stubs [][]any
	methods, paths := randomMethods, randomPaths
	for i := 0; i < n; i++ {
		var preds []any
		for j := rng.Intn(3); j >= 0; j-- {
			op := []string{"equals", "deepEquals", "contains", "startsWith", "matches", "exists"}[rng.Intn(6)]
			exp := map[string]any{}
			if rng.Intn(3) > 0 {
				exp["path"] = paths[rng.Intn(len(paths))]
			}
			if rng.Intn(2) == 0 {
				exp["method"] = methods[rng.Intn(len(methods))]
			}
			if op == "exists" {
				for k := range exp {
					exp[k] = rng.Intn(2) == 0
				}
			}
			if op == "matches" {
				for k, v := range exp {
					exp[k] = fmt.Sprintf("^%v", v)
				}
			}
			if rng.Intn(3) == 0 && op != "matches" && op != "exists" {
				body := map[string]any{}
				switch rng.Intn(6) {
				case 4:
					body["n"] = map[string]any{"a": "x"}
				case 5:
					body["n"] = []any{"x", float64(1)}
				case 0:
					body["id"] = float64(rng.Intn(3))
				case 1:
					body["id"] = fmt.Sprint(rng.Intn(3))
				case 2:
					body["ID"] = "X"
				default:
					body["id"] = true
					body["n"] = nil
				}
				if rng.Intn(2) == 0 {
					body["k"] = "same" // a field many stubs share: the index must pick another
				}
				exp["body"] = body
			}
			if rng.Intn(2) == 0 && op != "matches" && op != "exists" {
				vals := []any{"a", "A", "b", float64(1), "1", ""}
				kv := map[string]any{[]string{"X-T", "x-t", "q"}[rng.Intn(3)]: vals[rng.Intn(len(vals))]}
				if rng.Intn(2) == 0 {
					exp["headers"] = kv
				} else {
					exp["query"] = kv
				}
			}
			p := map[string]any{op: exp}
			switch rng.Intn(6) {
			case 0:
				p["caseSensitive"] = true
			case 1:
				p["except"] = "a"
			case 2:
				p["keyCaseSensitive"] = false
				p["caseSensitive"] = true
			}
			if rng.Intn(4) == 0 && (op == "equals" || op == "deepEquals") {
				// The body as a selector selects it.
				exp["body"] = []any{"1", "x", "X", float64(2), true, "a,1"}[rng.Intn(6)]
				if rng.Intn(2) == 0 {
					p["jsonpath"] = map[string]any{"selector": []string{"$.id", "$.ID", "$.id.a", "$..id"}[rng.Intn(4)]}
				} else {
					p["xpath"] = map[string]any{"selector": []string{"//id", "count(//id)", "//id/@a", "//b:id"}[rng.Intn(4)],
						"ns": map[string]any{"b": "urn:b"}}
				}
			}
			preds = append(preds, p)
		}
		stubs = append(stubs, preds)
	}
	return stubs
}

// randomRequest returns a random request for randomStubs' stubs.
func randomRequest(rng *rand.Rand) *request.Request {
	methods, paths := randomMethods, randomPaths
	bodies := []string{`{"id":"\u0031"}`, `{"Id":"2","iD":"X"}`, `{"id":1e0,"n":[1,{"a":"X"}]}`, `{"n":{"A":["X",1]},"id":"1"}`,
		`{"id":"1","id":"2"}`, `{"id":"x",}`, ` {"k":"SAME", "id": 2 } `, `<r><id>1</id><id a="x">X</id></r>`, `<r xmlns:b="urn:b"><b:id>2</b:id></r>`, `{"id":{"a":"X"}}`,
		`{"id":["a",1]}`, `{"ID":"1","id":"x"}`, "", `{"id":1}`, `{"id":"2","n":null}`, `{"ID":"x"}`, `{"id":[0,"1",true]}`, `[{"id":1},{"id":2}]`,
		`"str"`, `5`, `{"id":{"a":1}}`, `{"id":null}`, `{"id":true,"n":null}`, `not json`}
	r := &request.Request{Method: methods[rng.Intn(len(methods))], Path: paths[rng.Intn(len(paths))], Body: bodies[rng.Intn(len(bodies))]}
	kvs := []request.KV{{Name: "X-T", Value: "a"}, {Name: "x-t", Value: "b"}, {Name: "X-T", Value: "A"}, {Name: "X-T", Value: ""},
		{Name: "q", Value: "1"}, {Name: "Q", Value: "a"}, {Name: "q", Value: "b"}}
	for j := rng.Intn(4); j > 0; j-- {
		r.Headers = append(r.Headers, kvs[rng.Intn(len(kvs))])
	}
	for j := rng.Intn(4); j > 0; j-- {
		r.Query = append(r.Query, kvs[rng.Intn(len(kvs))])
	}
	return r
}

// TestSettledStubs checks the stubs the index decides without running their predicate.
func TestSettledStubs(t *testing.T) {
	eq := func(p map[string]any, opts ...any) []any {
		pred := map[string]any{"equals": p}
		for i := 0; i+1 < len(opts); i += 2 {
			pred[opts[i].(string)] = opts[i+1]
		}
		return []any{pred}
	}
	tests := []struct {
		name    string
		stub    []any
		settled bool
		req     request.Request
		match   bool
	}{
		{"path and method", eq(map[string]any{"method": "GET", "path": "/Hello"}), true, request.Request{Method: "get", Path: "/hello"}, true},
		{"other method", eq(map[string]any{"method": "GET", "path": "/hello"}), true, request.Request{Method: "POST", Path: "/hello"}, false},
		{"case sensitive", eq(map[string]any{"method": "GET", "path": "/hello"}, "caseSensitive", true), true, request.Request{Method: "get", Path: "/hello"}, false},
		{"case sensitive match", eq(map[string]any{"method": "GET", "path": "/hello"}, "caseSensitive", true), true, request.Request{Method: "GET", Path: "/hello"}, true},
		{"non-ASCII method", eq(map[string]any{"method": "k", "path": "/a"}), true, request.Request{Method: "K", Path: "/a"}, true},
		{"path only", eq(map[string]any{"path": "/a"}), true, request.Request{Method: "PUT", Path: "/A"}, true},
		{"tcp", eq(map[string]any{"path": "/a"}), true, request.Request{TCP: true}, false},
		{"empty path", eq(map[string]any{"path": ""}), false, request.Request{Method: "GET", Path: "/"}, false},
		{"with query", eq(map[string]any{"path": "/a", "query": map[string]any{"q": "1"}}), false, request.Request{Method: "GET", Path: "/a"}, false},
		{"except", eq(map[string]any{"path": "/a"}, "except", "x"), false, request.Request{Method: "GET", Path: "/a"}, true},
		{"two predicates", append(eq(map[string]any{"path": "/a"}), map[string]any{"equals": map[string]any{"method": "GET"}}), true, request.Request{Method: "GET", Path: "/a"}, true},
		// proxyOnce's recorded predicates (predicateGenerators matching method and path).
		{"method then path", []any{map[string]any{"deepEquals": map[string]any{"method": "GET"}}, map[string]any{"deepEquals": map[string]any{"path": "/orders/7"}}}, true, request.Request{Method: "GET", Path: "/orders/7"}, true},
		{"method then path, other method", []any{map[string]any{"deepEquals": map[string]any{"method": "GET"}}, map[string]any{"deepEquals": map[string]any{"path": "/orders/7"}}}, true, request.Request{Method: "PUT", Path: "/orders/7"}, false},
		{"case-sensitive path, method not", append(eq(map[string]any{"path": "/A"}, "caseSensitive", true), map[string]any{"equals": map[string]any{"method": "get"}}), true, request.Request{Method: "GET", Path: "/A"}, true},
		{"case-sensitive path, other case", append(eq(map[string]any{"path": "/A"}, "caseSensitive", true), map[string]any{"equals": map[string]any{"method": "get"}}), true, request.Request{Method: "GET", Path: "/a"}, false},
		{"method case-sensitive, path not", append(eq(map[string]any{"method": "get"}, "caseSensitive", true), map[string]any{"equals": map[string]any{"path": "/A"}}), true, request.Request{Method: "GET", Path: "/a"}, false},
		{"two paths", append(eq(map[string]any{"path": "/a"}), map[string]any{"equals": map[string]any{"path": "/a"}}), false, request.Request{Method: "GET", Path: "/a"}, true},
		{"two methods", append(eq(map[string]any{"path": "/a", "method": "GET"}), map[string]any{"equals": map[string]any{"method": "GET"}}), false, request.Request{Method: "GET", Path: "/a"}, true},
		{"and a query", append(eq(map[string]any{"method": "GET"}), map[string]any{"equals": map[string]any{"path": "/a"}}, map[string]any{"equals": map[string]any{"query": map[string]any{"q": "1"}}}), false, request.Request{Method: "GET", Path: "/a"}, false},
		{"after one that is not equals", append([]any{map[string]any{"startsWith": map[string]any{"method": "G"}}}, eq(map[string]any{"path": "/a"})...), false, request.Request{Method: "GET", Path: "/a"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([][]any{tt.stub}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.idx.settled != nil && s.idx.settled[0].ok; got != tt.settled {
				t.Errorf("settled = %v, want %v", got, tt.settled)
			}
			got, err := s.Find(&tt.req)
			c := acquireCtx(s, &tt.req)
			want, _ := s.scan(c, 0)
			releaseCtx(c)
			if err != nil || (got == 0) != tt.match || got != want {
				t.Errorf("Find = %d, %v; scan = %d; want match %v", got, err, want, tt.match)
			}
		})
	}
}

// TestIndexPicksSelectiveField files stubs that share a path and some body fields under the
// field that tells them apart, so a request evaluates one candidate, not all of them.
func TestIndexPicksSelectiveField(t *testing.T) {
	var stubs [][]any
	for i := 0; i < 100; i++ {
		stubs = append(stubs, []any{map[string]any{"equals": map[string]any{"method": "POST", "path": "/orders",
			"body": map[string]any{"customer": "acme", "orderId": fmt.Sprintf("ord-%03d", i), "qty": float64(i%7 + 1)}}}})
	}
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.idx.groups) != 1 || s.idx.groups[0].key != "orderid" || len(s.idx.pathCI) != 0 {
		t.Fatalf("index: %d body groups, path buckets %v; want one group on orderid (keys compare lowercased)", len(s.idx.groups), s.idx.pathCI)
	}
	r := &request.Request{Method: "POST", Path: "/orders", Body: `{"customer":"acme","orderId":"ord-049","qty":1}`}
	if got, err := s.Find(r); got != 49 || err != nil {
		t.Fatalf("Find = %d, %v; want 49", got, err)
	}
}

// TestIndexSelectedBody files stubs that require what a JSONPath or XPath selector selects from
// the body under that value, so a request evaluates one candidate, not all of them.
func TestIndexSelectedBody(t *testing.T) {
	for _, tc := range []struct {
		name, sel, body string
		want            int
	}{
		{"jsonpath", `"jsonpath":{"selector":"$.customer.id"}`, `{"customer":{"id":"CUST-099"}}`, 99},
		{"jsonpath array", `"jsonpath":{"selector":"$.ids"}`, `{"ids":["x","cust-042","cust-007"]}`, 7},
		{"jsonpath missing", `"jsonpath":{"selector":"$.customer.id"}`, `{"customer":{}}`, -1},
		{"xpath", `"xpath":{"selector":"//customer/id"}`, `<order><customer><id>cust-050</id></customer></order>`, 50},
		{"xpath two nodes", `"xpath":{"selector":"//id"}`, `<r><id>cust-003</id><id>cust-001</id></r>`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("[")
			for i := 0; i < 100; i++ {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `[{"equals":{"body":"cust-%03d"},%s}]`, i, tc.sel)
			}
			b.WriteString("]")
			var stubs [][]any
			if err := json.Unmarshal([]byte(b.String()), &stubs); err != nil {
				t.Fatal(err)
			}
			s, err := Compile(stubs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.idx.groups) != 1 || !s.idx.groups[0].sel || len(s.idx.always) != 0 {
				t.Fatalf("index: %d groups, %d stubs always candidates; want one selector group", len(s.idx.groups), len(s.idx.always))
			}
			r := &request.Request{Method: "POST", Path: "/", Body: tc.body}
			got, err := s.Find(r)
			c := acquireCtx(s, &request.Request{Method: "POST", Path: "/", Body: tc.body})
			want, _ := s.scan(c, 0)
			releaseCtx(c)
			if err != nil || got != tc.want || want != tc.want {
				t.Fatalf("Find = %d, %v; scan = %d; want %d", got, err, want, tc.want)
			}
		})
	}
}

func TestJSNumber(t *testing.T) {
	for f, want := range map[float64]string{
		42: "42", 1.5: "1.5", -3: "-3", 0: "0", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 0.000001: "0.000001", 1.5e-7: "1.5e-7", 123456789012: "123456789012", 0.1: "0.1",
		-1e-7: "-1e-7", 2.5e25: "2.5e+25",
	} {
		if got := jsvalue.FormatNumber(f); got != want {
			t.Errorf("jsvalue.FormatNumber(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestJSLower(t *testing.T) {
	for in, want := range map[string]string{
		"ABC": "abc", "abc": "abc", "ÉCOLE": "école", "İ": "i\u0307", "ΟΔΟΣ": "οδος", "ΣΑ": "σα", "": "",
	} {
		if got := jsvalue.ToLower(in); got != want {
			t.Errorf("jsvalue.ToLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTranslateRegex(t *testing.T) {
	tests := []struct {
		src, in string
		ic      bool
		want    bool
	}{
		{`^/users/\d+$`, "/users/12", false, true},
		{`^a.b$`, "a\rb", false, false},
		{`^a$`, "a\n", false, false},
		{`\s`, "\u00a0", false, true},
		{`\s`, "\v", false, true},
		{`[\s]`, "\u3000", false, true},
		{`\S`, "\u00a0", false, false},
		{`^\a\e$`, "ae", false, true},
		{`^a{$`, "a{", false, true},
		{`^a{2}$`, "aa", false, true},
		{`^a{2,}$`, "aaa", false, true},
		{`^[]$`, "", false, false},
		{`^[^]$`, "\n", false, true},
		{`\u0041`, "A", false, true},
		{`\x41`, "A", false, true},
		{`HELLO`, "hello", true, true},
		{`[\b]`, "\b", false, true},
		{`\cJ`, "\n", false, true},
		{`(?<year>\d{4})`, "2024", false, true},
		{`\/`, "/", false, true},
		{`a]`, "a]", false, true},
		{`\0`, "\x00", false, true},
		// Case-insensitive matches as V8 (no u flag) finds them, not RE2's folding.
		{`^ß$`, "ẞ", true, false},
		{`^ẞ$`, "ß", true, false},
		{`^ß$`, "ß", true, true},
		{`^K$`, "k", true, true},
		{"^\u212a$", "K", true, false},
		{`^s+$`, "SsS", true, true},
		{`^å$`, "Å", true, true},
		{`^å$`, "\u212b", true, false},
		{`^ω$`, "\u2126", true, false},
		{`^ω$`, "Ω", true, true},
		{`^θ$`, "ϑ", true, true},
		{`^ɤ$`, "\ua7cb", true, true},
		{`^𐐀$`, "𐐨", true, false},
		{`^ΟΔΟΣ$`, "οδος", true, true},
		{`^ΟΔΟΣ$`, "οδοσ", true, true},
		{`^straße$`, "STRASSE", true, false},
		{`^(ks){2}$`, "KSks", true, true},
		// k and s match neither the Kelvin sign nor the long s (their exact twin runs on
		// input holding them), a literal prefix included.
		{`^k$`, "\u212a", true, false},
		{`^s+$`, "Ss\u017f", true, false},
		{`^/k`, "/\u212a", true, false},
		{`^/k`, "/K\u212a", true, true},
		{`^/(?<ks>k)s`, "/kS\u017f", true, true},
		{`^/(?<ks>k)s$`, "/k\u017f", true, false},
		{`^[k]$`, "\u212a", true, true}, // a class keeps RE2's folding (README)
	}
	for _, tt := range tests {
		re, err := compileJSRegex(tt.src, tt.ic)
		if err != nil {
			t.Errorf("compileJSRegex(%q): %v", tt.src, err)
			continue
		}
		if got := re.MatchString(tt.in); got != tt.want {
			t.Errorf("/%s/ (RE2 %s) on %q = %v, want %v", tt.src, re, tt.in, got, tt.want)
		}
	}
}

// TestFindConcurrent runs selectors and regexes from many goroutines (run
// with -race): a Set is shared by all connections of an imposter.
func TestFindConcurrent(t *testing.T) {
	s, err := Compile(decode(t, `[
		[{"equals":{"body":2},"xpath":{"selector":"count(//item)"}}],
		[{"equals":{"body":"one"},"xpath":{"selector":"//item[@id='1']"}}],
		[{"equals":{"body":"nigel rees"},"jsonpath":{"selector":"$.store.book[?(@.price < 10)].author"}}],
		[{"matches":{"path":"^/x/\\d+$"}}]
	]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	bodies := []struct {
		body string
		want int
	}{
		{`<r><item/><item/></r>`, 0},
		{`<r><item id="1">One</item></r>`, 1},
		{`{"store":{"book":[{"author":"Nigel Rees","price":8.95},{"author":"E","price":12}]}}`, 2},
		{`<r><item/></r>`, -1},
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 200; i++ {
				b := bodies[(g+i)%len(bodies)]
				r := request.Acquire()
				r.Method, r.Path, r.Body = "POST", "/y", b.body
				got, err := s.Find(r)
				request.Release(r)
				if err != nil || got != b.want {
					done <- fmt.Errorf("Find(%s) = %d, %v; want %d", b.body, got, err, b.want)
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestKVRawOneAgreesWithReference checks the unboxed reading of a header, query or form key
// that fast nodes and the index use against the reference's object of the same values,
// normalized: a key given once is the reference's string, an absent key is undefined, and a
// repeated key, which fast nodes leave to the reference, is an array there.
func TestKVRawOneAgreesWithReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pool := []request.KV{{Name: "X-T", Value: "a"}, {Name: "x-t", Value: "B"}, {Name: "X-T", Value: ""},
		{Name: "X-T", Value: "Ä"}, {Name: "q", Value: "1"}, {Name: "Q", Value: ""}, {Name: "q", Value: "b"}}
	opts := []map[string]any{{}, {"caseSensitive": true}, {"keyCaseSensitive": false, "caseSensitive": true}}
	counts := [3]int{}
	for round := 0; round < 2000; round++ {
		cc := &compiler{ev: &evaluator{}}
		pred := map[string]any{"equals": map[string]any{"headers": map[string]any{"x": "a"}}}
		for k, v := range opts[rng.Intn(len(opts))] {
			pred[k] = v
		}
		p := cc.pred(fromPlain(pred))
		if cc.err != nil || !p.pp.simple || !p.fast {
			t.Fatalf("compile %v: %v", pred, cc.err)
		}
		var kvs []request.KV
		for j := rng.Intn(5); j > 0; j-- {
			kvs = append(kvs, pool[rng.Intn(len(pool))])
		}
		c := &evalCtx{cur: p}
		o := kvObj{c: c, kvs: kvs, header: rng.Intn(2) == 0}
		obj := request.GroupQuery(kvs)
		if o.header {
			obj = request.GroupHeaders(kvs)
		}
		norm, err := cc.ev.normalize(obj, paramsOf(asObject(p.source()), "equals"), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"X-T", "x-t", "q", "Q", "none"} {
			raw, n := o.rawOne(k)
			got := prop(norm, k)
			counts[n]++
			switch n {
			case 0:
				if !jsvalue.IsUndefined(got) {
					t.Fatalf("rawOne(%q) absent over %v (header %t), reference = %#v", k, kvs, o.header, got)
				}
			case 1:
				want := raw
				if p.pp.valLower {
					want = jsvalue.ToLower(raw)
				}
				if got != any(want) {
					t.Fatalf("rawOne(%q) = %q over %v (header %t), reference = %#v", k, raw, kvs, o.header, got)
				}
			case 2:
				if _, isArr := got.([]any); !isArr {
					t.Fatalf("rawOne(%q) repeated over %v (header %t), get = %#v", k, kvs, o.header, got)
				}
			}
		}
	}
	for n, c := range counts {
		if c < 500 {
			t.Errorf("only %d keys with n = %d", c, n)
		}
	}
}

// TestPlainExpectedIsNormalized: the expected object an equals predicate of strings compiles
// to without normalizing it (plainExpected) is what the reference's normalize and toE make of
// it: keys and values lowercased or not, a key lowercased onto an earlier one replacing its
// value in place, non-ASCII included.
func TestPlainExpectedIsNormalized(t *testing.T) {
	exps := []string{
		`{"method":"GET","path":"/Scale/1"}`,
		`{"Path":"/a","path":"/B","METHOD":"post"}`,
		`{"path":"/ÄÖ/ß","Method":"Get"}`,
		`{"data":"X","requestFrom":"1.2.3.4:5"}`,
		`{}`,
	}
	opts := []string{`{}`, `{"caseSensitive":true}`, `{"keyCaseSensitive":false,"caseSensitive":true}`, `{"caseSensitive":true,"keyCaseSensitive":true}`}
	show := func(e any) string {
		o, ok := e.(*eobj)
		if !ok {
			return fmt.Sprintf("%T", e)
		}
		var b strings.Builder
		for i, k := range o.keys {
			l := o.vals[i].(*eleaf)
			fmt.Fprintf(&b, "%q=%q/%v/%v;", k, l.s, l.v, l.num)
		}
		return b.String()
	}
	for _, e := range exps {
		for _, o := range opts {
			pv, err := config.ParseJSON([]byte(o))
			if err != nil {
				t.Fatal(err)
			}
			predObj := pv.(*config.Object)
			ev, _ := config.ParseJSON([]byte(e))
			predObj.Set("equals", ev)
			params := paramsOf(predObj, "equals")
			cc := &compiler{ev: &evaluator{}}
			got := cc.plainExpected(ev, params)
			if got == nil {
				t.Fatalf("%s %s: not plain", e, o)
			}
			norm, err := cc.ev.normalize(ev, params, false)
			if err != nil {
				t.Fatal(err)
			}
			want := (&compiler{ev: &evaluator{}}).toE(norm, nil)
			if show(got) != show(want) {
				t.Errorf("%s %s: plainExpected %s, normalize %s", e, o, show(got), show(want))
			}
		}
	}
}

// TestNestedJSONPathSelectionIsBounded: $..a picks every level of a nested body, each holding
// the levels below, so the selection grows with the square of the depth. Up to the bound it
// matches as Mountebank does (1,000 levels, 3 MB selected); past it the selector selects
// nothing, in both layers, instead of taking minutes (10,000 levels would select 300 MB).
func TestNestedJSONPathSelectionIsBounded(t *testing.T) {
	plainOnly(t)
	s, err := Compile(decode(t, `[
		[{"equals":{"body":"x"},"jsonpath":{"selector":"$..a"}}],
		[{"exists":{"body":false},"jsonpath":{"selector":"$..a"}}]
	]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		depth, want int
	}{
		{2, 0},
		{1000, 0},
		{10000, 1}, // selects nothing: the exists:false stub
	} {
		body := strings.Repeat(`{"a":`, tt.depth) + `"x"` + strings.Repeat("}", tt.depth)
		r := &request.Request{Method: "POST", Path: "/", Body: body}
		for name, find := range map[string]func(*Set, *request.Request) (int, error){"Find": (*Set).Find, "plainFind": plainFind} {
			if got, err := find(s, r); got != tt.want || err != nil {
				t.Errorf("%s(depth %d) = %d, %v; want %d", name, tt.depth, got, err, tt.want)
			}
		}
	}
}

// TestSortWithin: objects sort by their stable stringification, computed once each, within
// the budget.
func TestSortWithin(t *testing.T) {
	a := []any{map[string]any{"b": 1.0}, jsvalue.Undef, map[string]any{"a": 2.0}, []any{"ë"}, []any{"é"}}
	got, ok := sortWithin(a, -1)
	want := []any{[]any{"é"}, []any{"ë"}, map[string]any{"a": 2.0}, map[string]any{"b": 1.0}, jsvalue.Undef}
	if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sortWithin = %v, %v; want %v", got, ok, want)
	}
	if _, ok := sortWithin(a, 25); ok {
		t.Error("sortWithin(a, 25) = ok; the objects' text is 26 bytes")
	}
	if _, ok := sortWithin(a, 26); !ok {
		t.Error("sortWithin(a, 26) = not ok; the objects' text is 26 bytes")
	}
}

// TestDeeplyNestedBodies: predicates that normalize a body sort every array in it
// (orderIndependent), comparing elements by their stringification; a body [1,[1,[1,…]]] 10,000
// deep took minutes when each comparison wrote both strings out (and Array#join was quadratic).
func TestDeeplyNestedBodies(t *testing.T) {
	s, err := Compile(decode(t, `[
		[{"deepEquals":{"body":{"a":1}}}],
		[{"contains":{"body":{"a":{"a":"q"}}}}],
		[{"equals":{"body":[1,[1]]}}],
		[{"startsWith":{"body":"[\"1\""}}]
	]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		body string
		want int
	}{
		// What Mountebank 2.9.1 answers for the same bodies 50 and 500 deep (deeper, it
		// overflows its stack).
		{strings.Repeat(`[1,`, 10000) + `1` + strings.Repeat("]", 10000), 2},
		{strings.Repeat(`["1",`, 10000) + `"1"` + strings.Repeat("]", 10000), 2},
		{strings.Repeat(`[{"b":1},`, 5000) + `1` + strings.Repeat("]", 5000), -1},
		{strings.Repeat(`[[1],`, 5000) + `1` + strings.Repeat("]", 5000), 2},
	} {
		r := &request.Request{Method: "POST", Path: "/", Body: tt.body}
		for name, find := range map[string]func(*Set, *request.Request) (int, error){"Find": (*Set).Find, "plainFind": plainFind} {
			if got, err := find(s, r); got != tt.want || err != nil {
				t.Errorf("%s(%.12s…) = %d, %v; want %d", name, tt.body, got, err, tt.want)
			}
		}
	}
}

// TestTranslateRegexExact: the translation behaviors use (copy, lookup) has no literal prefix
// to keep, so k and s match only their ASCII cases there, as JavaScript's do.
func TestTranslateRegexExact(t *testing.T) {
	for _, tt := range []struct {
		src, in string
		want    bool
	}{
		{`^k$`, "\u212a", false}, {`^k$`, "K", true}, {`^S+$`, "sS\u017f", false}, {`^S+$`, "sS", true},
		{`^(?<ks>k)$`, "K", true}, {`^[k]$`, "\u212a", true},
	} {
		expr, err := TranslateRegex(tt.src, true, false)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("%s (%s): %v", tt.src, expr, err)
		}
		if got := re.MatchString(tt.in); got != tt.want {
			t.Errorf("/%s/i (RE2 %s) on %q = %v, want %v", tt.src, expr, tt.in, got, tt.want)
		}
	}
}

// plainOnly skips a test under the race detector. It is for the differential tests that run
// one goroutine through tens of thousands of evaluations (800 random stub sets, a body of
// 10,000 levels): the detector finds nothing in them and slows them about eightfold (16 s of
// internal/match's 30 s under -race, a minute and more on a loaded 2-core machine). make test
// runs the package again without the detector (PLAIN_PKGS), so they run in every make test as
// before; TestFindConcurrent is the one that races evaluations against each other.
func plainOnly(t *testing.T) {
	t.Helper()
	if underRace {
		t.Skip("a single-goroutine differential test: run without -race (make test's plain pass)")
	}
}
