package match

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// orderedMBPredicates returns the predicate of each case of testdata/mb_cases.json with its
// keys in the file's order, as Mountebank read them.
func orderedMBPredicates(t testing.TB) []config.Value {
	t.Helper()
	b, err := os.ReadFile("testdata/mb_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := config.ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []config.Value
	for _, c := range v.([]any) {
		p, _ := c.(*config.Object).Get("predicate")
		out = append(out, p)
	}
	return out
}

// TestReferenceMountebankGroundTruth evaluates each case of Mountebank's own results with the
// reference evaluator: the same result, or the same error.
func TestReferenceMountebankGroundTruth(t *testing.T) {
	preds := orderedMBPredicates(t)
	for i, tc := range loadMBCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			ref := NewReference([]config.Value{[]any{preds[i]}}, Options{Binary: tc.Binary})
			idx, err := ref.Find(tc.request())
			got := idx == 0
			switch {
			case tc.Error != nil:
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.Error.Code || e.Message != tc.Error.Message {
					t.Fatalf("predicate %v: got (%v, %v), want error %q %q", tc.Predicate, got, err, tc.Error.Code, tc.Error.Message)
				}
			case err != nil:
				t.Fatalf("predicate %v: unexpected error %v, want %v", tc.Predicate, err, *tc.Want)
			case got != *tc.Want:
				t.Fatalf("predicate %v request %+v: got %v, want %v", tc.Predicate, tc.Request, got, *tc.Want)
			}
		})
	}
}

// agree fails t unless Find and the reference answer r the same: the same stub, or errors
// with the same code and message.
func agree(t *testing.T, set *Set, ref *Reference, r *request.Request, what string) {
	t.Helper()
	got, gerr := set.Find(r)
	want, werr := ref.Find(r)
	if gerr != nil || werr != nil {
		var ge, we *Error
		if !errors.As(gerr, &ge) || !errors.As(werr, &we) || ge.Code != we.Code || ge.Message != we.Message {
			t.Fatalf("%s: Find = %d, %v; reference = %d, %v", what, got, gerr, want, werr)
		}
		return
	}
	if got != want {
		t.Fatalf("%s: Find = %d; reference = %d", what, got, want)
	}
}

// TestReferenceAgreesWithFindOnMountebankCases runs every case's request against all cases'
// predicates at once (one stub each), through Find and through the reference.
func TestReferenceAgreesWithFindOnMountebankCases(t *testing.T) {
	cases := loadMBCases(t)
	ordered := orderedMBPredicates(t)
	for _, binary := range []bool{false, true} {
		var plain [][]any
		var refStubs []config.Value
		for i, tc := range cases {
			if tc.Binary != binary {
				continue
			}
			plain = append(plain, []any{tc.Predicate})
			refStubs = append(refStubs, []any{ordered[i]})
		}
		// Compile refuses a set with an invalid stub: leave those out of the shared set.
		var okPlain [][]any
		var okRef []config.Value
		for i := range plain {
			if _, err := Compile(plain[i:i+1], Options{Binary: binary, TCP: binary}); err == nil {
				okPlain = append(okPlain, plain[i])
				okRef = append(okRef, refStubs[i])
			}
		}
		set, err := Compile(okPlain, Options{Binary: binary, TCP: binary})
		if err != nil {
			t.Fatal(err)
		}
		ref := NewReference(okRef, Options{Binary: binary})
		for _, tc := range cases {
			if tc.Binary == binary {
				agree(t, set, ref, tc.request(), tc.Name)
			}
		}
	}
}

// FuzzReference holds Find to the reference: arbitrary requests against the predicates of
// FuzzFind, which parse bodies every way, match the same stub or raise the same error.
func FuzzReference(f *testing.F) {
	var stubs [][]any
	if err := json.Unmarshal([]byte(fuzzFindStubs), &stubs); err != nil {
		f.Fatal(err)
	}
	set, err := Compile(stubs, Options{})
	if err != nil {
		f.Fatal(err)
	}
	ordered, err := config.ParseJSON([]byte(fuzzFindStubs))
	if err != nil {
		f.Fatal(err)
	}
	ref := NewReference(ordered.([]any), Options{})
	addFuzzFindSeeds(f)
	f.Fuzz(func(t *testing.T, method, path, query, hname, hvalue, body string) {
		r := fuzzFindRequest(method, path, query, hname, hvalue, body)
		defer request.Release(r)
		agree(t, set, ref, r, "request "+method+" "+path+"?"+query+" "+hname+": "+hvalue+" body "+body)
	})
}

// FuzzReferencePredicates holds Find to the reference for arbitrary predicates against a
// fixed request.
func FuzzReferencePredicates(f *testing.F) {
	for _, tc := range loadMBCases(f) {
		b, _ := json.Marshal([]any{tc.Predicate})
		f.Add(string(b), tc.Binary)
	}
	f.Add(`[{"or":[{"and":[{"not":{"equals":{"path":"/"}}}]}]}]`, false)
	f.Add(`[{"contains":{"body":{"a":[1]}}},{"deepEquals":{"query":{"q":["2","1"]}}}]`, false)
	f.Fuzz(func(t *testing.T, s string, binary bool) {
		agreeOnPredicates(t, s, binary, "predicates "+s)
	})
}

func operatorCount(o *config.Object) int {
	n := 0
	for _, op := range operators {
		if o.Has(op) {
			n++
		}
	}
	return n
}

// TestExplainSaysWhy checks the explanation of a request that matched no stub: the nearest
// stubs first, each with the field, expected and actual value of its first failure.
func TestExplainSaysWhy(t *testing.T) {
	stubs, err := config.ParseJSON([]byte(`[
		[{"equals":{"method":"POST","path":"/orders"}}],
		[{"equals":{"method":"GET","path":"/users/42"}}, {"exists":{"headers":{"X-Api-Key":true}}}],
		[{"deepEquals":{"query":{"q":"x"}}}],
		[{"not":{"equals":{"method":"GET"}}}],
		[{"or":[{"startsWith":{"path":"/admin"}},{"endsWith":{"path":".json"}}]}],
		[{"equals":{"body":{"user":{"id":42}}}}],
		[{"matches":{"path":"^/users/\\d+$"},"caseSensitive":true},{"contains":{"body":"needle"}}]
	]`))
	if err != nil {
		t.Fatal(err)
	}
	ref := NewReference(stubs.([]any), Options{})
	r := &request.Request{Method: "GET", Path: "/users/43", Body: `{"user":{"id":7}}`,
		Headers: []request.KV{{Name: "Accept", Value: "*/*"}}}
	r.SetClient("127.0.0.1", "127.0.0.1:5000")
	e := ref.ExplainRequest(r)
	if e.Match != -1 {
		t.Fatalf("match = %d, want -1", e.Match)
	}
	type want struct {
		sat, total int
		failure    string
	}
	wants := []want{
		{0, 2, `equals method: expected "post", got "get"`},
		{1, 3, `equals path: expected "/users/42", got "/users/43"`},
		{0, 1, `deepEquals query: expected {"q":"x"}, got {}`},
		{0, 1, `not: the predicate under not matched`},
		{0, 1, `or: no alternative matched`},
		{0, 1, `equals body.user.id: expected 42, got 7`},
		{1, 2, `contains body: expected "needle", got "{\"user\":{\"id\":7}}"`},
	}
	for i, w := range wants {
		s := e.Stubs[i]
		f := s.Failure()
		if f == nil || s.Satisfied != w.sat || s.Total != w.total || f.Text() != w.failure {
			t.Errorf("stub %d: %d of %d, %v; want %d of %d, %s", i, s.Satisfied, s.Total, f, w.sat, w.total, w.failure)
		}
	}
	near := e.Nearest(3)
	if len(near) != 3 || near[0].Index != 6 || near[1].Index != 1 || near[2].Index != 2 {
		t.Fatalf("nearest = %d %d %d, want stubs 6, 1, 2", near[0].Index, near[1].Index, near[2].Index)
	}
	if f := e.Stubs[1].Predicates[1].Failure; f == nil || f.Field != "headers.x-api-key" || !f.Missing() {
		t.Fatalf("exists failure = %+v, want headers.x-api-key missing", f)
	}
	text := e.Text()
	wantText := `nearest: stub 6 (1 of 2 checks passed): contains body: expected "needle", got "{\"user\":{\"id\":7}}"; ` +
		`stub 1 (1 of 3 checks passed): equals path: expected "/users/42", got "/users/43"; ` +
		`stub 2 (0 of 1 checks passed): deepEquals query: expected {"q":"x"}, got {}`
	if text != wantText {
		t.Fatalf("text:\n%s\nwant\n%s", text, wantText)
	}
	sum := string(config.MarshalJSON(e.Summary(), 0))
	wantSum := `{"nearest":[{"stub":6,"satisfied":1,"total":2,"failure":{"operator":"contains","field":"body","expected":"needle","actual":"{\"user\":{\"id\":7}}"}},` +
		`{"stub":1,"satisfied":1,"total":3,"failure":{"operator":"equals","field":"path","expected":"/users/42","actual":"/users/43"}},` +
		`{"stub":2,"satisfied":0,"total":1,"failure":{"operator":"deepEquals","field":"query","expected":{"q":"x"},"actual":{}}}]}`
	if sum != wantSum {
		t.Fatalf("summary:\n%s\nwant\n%s", sum, wantSum)
	}
}

// TestExplainDoesNotRunScripts: an inject predicate is reported as not run, and a stub whose
// other predicates all match is neither a match nor a failure.
func TestExplainDoesNotRunScripts(t *testing.T) {
	stubs, _ := config.ParseJSON([]byte(`[[{"equals":{"path":"/a"}},{"inject":"function (r) { return true; }"}]]`))
	ref := NewReference(stubs.([]any), Options{})
	req, err := RequestFromJSON(config.NewObject("path", "/a"), false)
	if err != nil {
		t.Fatal(err)
	}
	e := ref.Explain(req)
	s := e.Stubs[0]
	if e.Match != -1 || s.Matched || !s.NotRun || s.Satisfied != 1 || s.Total != 2 {
		t.Fatalf("got match %d, stub %+v", e.Match, s)
	}
}

func TestRequestFromJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{"requestFrom":"","method":"GET","path":"/","query":{},"headers":{},"body":"","ip":""}`},
		{`{"method":"POST","path":"/a?x=1&x=2&y=","headers":{"Content-Type":"application/x-www-form-urlencoded"},"body":"a=1"}`,
			`{"requestFrom":"","method":"POST","path":"/a","query":{"x":["1","2"],"y":""},"headers":{"Content-Type":"application/x-www-form-urlencoded"},"body":"a=1","ip":"","form":{"a":"1"}}`},
		{`{"body":{"id":1}}`, `{"requestFrom":"","method":"GET","path":"/","query":{},"headers":{},"body":"{\"id\":1}","ip":""}`},
	} {
		v, _ := config.ParseJSON([]byte(tc.in))
		got, err := RequestFromJSON(v, false)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(config.MarshalJSON(got, 0)); s != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.in, s, tc.want)
		}
	}
	if _, err := RequestFromJSON("x", false); err == nil {
		t.Error("a string is not a request")
	}
}
