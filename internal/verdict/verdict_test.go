package verdict

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

func sample() *Verdict {
	return &Verdict{Imposters: []Imposter{{
		Port: 4545, Protocol: "http", Name: "users",
		Stubs: []Stub{
			{Index: 0, Predicates: json.RawMessage(`[{"equals":{"path":"/users/42"}}]`), Hits: 2, Expect: json.RawMessage(`{"times":1}`),
				Status: Failed, Message: "expected exactly 1 request, got 2"},
			{Index: 1, Predicates: json.RawMessage(`[{"equals":{"path":"/orders"}}]`), Status: Unused, Message: "answered no request"},
			{Index: 2, Predicates: json.RawMessage(`[]`), Hits: 3, Expect: json.RawMessage(`{"atLeast":1}`), Status: Passed},
		},
		UnmatchedRequests: 2,
		Unmatched: []Unmatched{{Request: json.RawMessage(`{"method":"POST","path":"/orderz"}`),
			Why: `nearest: stub 1 (0 of 1 checks passed): equals path: expected "/orders", got "/orderz"`}},
	}}}
}

func TestFinish(t *testing.T) {
	v := sample()
	v.Finish(false)
	want := Summary{Expectations: 2, ExpectationsFailed: 1, UnusedStubs: 1, UnmatchedRequests: 2}
	if v.Passed || v.Imposters[0].Passed || v.Summary != want {
		t.Errorf("got passed=%v summary %+v, want failed %+v", v.Passed, v.Summary, want)
	}
	ok := &Verdict{Imposters: []Imposter{{Port: 1, Protocol: "tcp", Stubs: []Stub{{Status: Unused}}}}}
	ok.Finish(true)
	if !ok.Passed {
		t.Error("an unused stub failed the verdict with allowUnused")
	}
	ok.Finish(false)
	if ok.Passed {
		t.Error("an unused stub passed the verdict")
	}
}

func TestText(t *testing.T) {
	v := sample()
	v.Finish(false)
	var b strings.Builder
	v.Text(&b, false)
	want := `FAIL http:4545 users: stub 0 [{"equals":{"path":"/users/42"}}]: expected exactly 1 request, got 2
FAIL http:4545 users: stub 1 [{"equals":{"path":"/orders"}}]: answered no request
FAIL http:4545 users: POST /orderz matched no stub; nearest: stub 1 (0 of 1 checks passed): equals path: expected "/orders", got "/orderz"
FAIL http:4545 users: 1 request(s) matched no stub (turn recordRequests on to see them and why)
FAIL: 1 imposter(s), 2 expectation(s) of which 1 failed, 1 unused stub(s), 2 unmatched request(s)
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestJUnit(t *testing.T) {
	v := sample()
	v.Finish(false)
	var b strings.Builder
	if err := v.JUnit(&b, false); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// One case per expectation (2), per unused stub (1), per unmatched request (1 recorded,
	// 1 not).
	if doc.Tests != 5 || doc.Failures != 4 || len(doc.Suites) != 1 || doc.Suites[0].Name != "http:4545 users" {
		t.Fatalf("junit: %+v\n%s", doc, b.String())
	}
	names := []string{}
	for _, c := range doc.Suites[0].Cases {
		names = append(names, c.Name)
	}
	want := []string{
		`stub 0 [{"equals":{"path":"/users/42"}}] expects {"times":1}`,
		`stub 1 [{"equals":{"path":"/orders"}}] is used`,
		`stub 2 (no predicates) expects {"atLeast":1}`,
		`POST /orderz matches a stub`,
		`every request matches a stub`,
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	b.Reset()
	_ = v.JUnit(&b, true)
	if !strings.Contains(b.String(), `<skipped message="answered no request">`) {
		t.Errorf("an allowed unused stub is not skipped:\n%s", b.String())
	}
}

func TestGitHub(t *testing.T) {
	v := sample()
	v.Imposters[0].Unmatched[0].Why = "line\nbreak 100%"
	v.Finish(false)
	var ann, sum strings.Builder
	v.GitHub(&ann, &sum, false)
	lines := strings.Split(strings.TrimSpace(ann.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "::error title=mockd verify::http:4545 users: stub 0") ||
		!strings.Contains(lines[2], "line%0Abreak 100%25") {
		t.Errorf("annotations:\n%s", ann.String())
	}
	for _, want := range []string{"### mockd verify: failed", "| http:4545 users | 2 | 1 | 1 | 2 |", "- http:4545 users: stub 0"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
}
