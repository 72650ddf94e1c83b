package config

import (
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
