package config

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	keys := []string{"statusCode", "headers", "body", "method", "path", "responses", "wait", "predicates"}
	for in, want := range map[string]string{
		"status": "statusCode", "StatusCode": "statusCode", "header": "headers", "methd": "method",
		"respones": "responses", "wiat": "wait", "predicate": "predicates", "bdy": "body", "zzz": "", "x": "",
	} {
		if got := Suggest(in, keys); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckImposter checks problems the checker finds without compilers: each case's problem
// (path: message), or none.
func TestCheckImposter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"protocol":"http","stubs":[{"responses":[{"is":{"statusCode":"201","headers":{"A":["1","2"]}}}]}]}`, ""},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{"statusCode":99}}]}]}`, "stubs[0].responses[0].is.statusCode: must be an HTTP status"},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{"headers":{"A":{}}}}]}]}`, "stubs[0].responses[0].is.headers.A: must be a header value"},
		{`{"protocol":"http","stubs":[{"responses":[{"fault":"RESET"}]}]}`, "stubs[0].responses[0].fault: must be one of CONNECTION_RESET_BY_PEER, RANDOM_DATA_THEN_CLOSE"},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{"_mode":"bin"}}]}]}`, `stubs[0].responses[0].is._mode: must be one of text, binary, not "bin"`},
		{`{"protocol":"http","recordRequests":"yes"}`, `recordRequests: must be true or false, not "yes"`},
		{`{"protocol":"http","stubs":[{"predicates":[{"caseSensitive":true}],"responses":[{"is":{}}]}]}`, "stubs[0].predicates[0]: names no operator"},
		{`{"protocol":"http","stubs":[{"predicates":[{"equal":{"path":"/"}}],"responses":[{"is":{}}]}]}`, `stubs[0].predicates[0].equal: unknown field "equal" (did you mean "equals"?)`},
		{`{"protocol":"http","stubs":[{"predicates":[{"or":{"equals":{}}}],"responses":[{"is":{}}]}]}`, "stubs[0].predicates[0].or: must be a list of predicates"},
		{`{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/"},"jsonpath":{"selector":1}}],"responses":[{"is":{}}]}]}`, "stubs[0].predicates[0].jsonpath.selector: must be a string"},
		{`{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"http://x","mode":"proxyonce"}}]}]}`, `stubs[0].responses[0].proxy.mode: must be one of proxyOnce, proxyAlways, proxyTransparent, not "proxyonce" (did you mean "proxyOnce"?)`},
		{`{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"http://x","predicateGenerators":[{"matches":{"pth":true}}]}}]}]}`, `predicateGenerators[0].matches.pth: unknown field "pth" (did you mean "path"?)`},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"behaviors":[{"wait":100,"copy":{}}]}]}]}`, "behaviors[0]: names 2 behaviors (wait, copy)"},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"behaviors":[{"copy":{"from":"path","into":"$X"}}]}]}]}`, "behaviors[0].copy: needs using"},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"_behaviors":{"wait":-1}}]}]}`, "_behaviors.wait: must be a whole number of milliseconds"},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"repeat":1.5}]}]}`, "stubs[0].responses[0].repeat: must be a positive integer"},
		{`{"protocol":"tcp","endOfRequestResolver":{}}`, "endOfRequestResolver: needs inject"},
		// A stub that requires a scenario state matches only in that state: it shadows nothing.
		{`{"protocol":"http","stubs":[{"scenarioName":"s","requiredScenarioState":"A","responses":[{"is":{}}]},{"responses":[{"is":{}}]}]}`, ""},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{}}]},{"scenarioName":"s","requiredScenarioState":"A","responses":[{"is":{}}]}]}`, "stubs[1]: stub 1 can never match: stub 0 has no predicates"},
	} {
		v, err := ParseJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range CheckImposter(v, "", Compilers{}) {
			got = append(got, p.Path+": "+p.Message)
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: got %q, want no problem", tc.in, got)
		case tc.want != "" && !containsPrefix(got, tc.want):
			t.Errorf("%s: got %q, want one with %q", tc.in, got, tc.want)
		}
	}
}

func containsPrefix(list []string, s string) bool {
	for _, e := range list {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

// TestShadowedAsEveryPair checks the shadowed-stub warnings against the plain rule, tried on
// every pair: stub j is reported with the first earlier stub i (comparable, not conditional)
// whose predicates are all among j's. Random stub lists draw from a few predicates, so stubs
// share some, all or none of them, and some have none, an inject or a scenario state.
// TestCheckFalsyResponses: a response of 0 or false, which Mountebank serves once as an empty
// is, is a warning (it loads from YAML, as its Mountebank JSON loads); other non-objects stay
// errors.
func TestCheckFalsyResponses(t *testing.T) {
	for _, tc := range []struct {
		resp    string
		warning bool
	}{
		{"false", true}, {"0", true}, {"0.0", true}, {"true", false}, {"1", false}, {`""`, false}, {`"x"`, false}, {"null", false}, {"[]", false},
	} {
		v, err := ParseJSON([]byte(`{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/"}}],"responses":[` + tc.resp + `,{"is":{}}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got []Problem
		for _, p := range CheckImposter(v, "", Compilers{}) {
			if p.Path == "stubs[0].responses[0]" {
				got = append(got, p)
			}
		}
		if len(got) != 1 || got[0].Warning != tc.warning {
			t.Errorf("response %s: got %+v, want one problem at stubs[0].responses[0] with Warning %v", tc.resp, got, tc.warning)
		}
	}
}

func TestShadowedAsEveryPair(t *testing.T) {
	pool := []string{`{"equals":{"method":"GET"}}`, `{"equals":{"path":"/a"}}`, `{"equals":{"path":"/b"}}`,
		`{"exists":{"query":{"q":true}}}`, `{"contains":{"body":"x"}}`, `{"equals":{"path":"/a","method":"GET"}}`}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := 1 + rng.IntN(12)
		var stubs []string
		var preds [][]int // indexes into pool; nil: no predicates
		var kind []int    // 0 plain, 1 inject, 2 conditional
		for range n {
			var ps []int
			var parts []string
			for range rng.IntN(4) {
				i := rng.IntN(len(pool))
				ps = append(ps, i)
				parts = append(parts, pool[i])
			}
			k := 0
			switch rng.IntN(10) {
			case 0:
				k = 1
				parts = append(parts, `{"inject":"function () { return true; }"}`)
			case 1:
				k = 2
			}
			stub := `{"predicates":[` + strings.Join(parts, ",") + `],"responses":[{"is":{}}]}`
			if k == 2 {
				stub = `{"scenarioName":"s","requiredScenarioState":"A","predicates":[` + strings.Join(parts, ",") + `],"responses":[{"is":{}}]}`
			}
			stubs, preds, kind = append(stubs, stub), append(preds, ps), append(kind, k)
		}
		var want []string
		for j := range n {
			if kind[j] == 1 {
				continue
			}
			for i := range j {
				if kind[i] != 0 || !allIn(preds[i], preds[j]) {
					continue
				}
				why := "has no predicates"
				if len(preds[i]) > 0 {
					why = "has a subset of its predicates"
				}
				want = append(want, fmt.Sprintf("stubs[%d]: stub %d can never match: stub %d %s and comes first", j, j, i, why))
				break
			}
		}
		v, err := ParseJSON([]byte(`{"protocol":"http","stubs":[` + strings.Join(stubs, ",") + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range CheckImposter(v, "", Compilers{}) {
			if strings.Contains(p.Message, "can never match") {
				got = append(got, p.Path+": "+p.Message)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d, stubs %s:\ngot  %q\nwant %q", round, strings.Join(stubs, ","), got, want)
		}
	}
}

func allIn(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
