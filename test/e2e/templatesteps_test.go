package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestTemplateStepsAreBounded: a template whose eachs nest over 100,000 items each (range, or
// the request body's list) fails its request with a 500 once it passes 4M steps, whether it
// writes anything or not, and the imposter answers the next request. Such a template writing
// nothing rendered 10^10 empty bodies: the request went unanswered and a core stayed busy
// after the client had gone and the imposter was deleted.
func TestTemplateStepsAreBounded(t *testing.T) {
	s := start(t)
	body := `{"protocol":"http","stubs":[` +
		`{"predicates":[{"equals":{"path":"/ranges"}}],"responses":[{"is":{"template":true,"body":"{{#each (range 0 100000)}}{{#each (range 0 100000)}}{{/each}}{{/each}}done"}}]},` +
		`{"predicates":[{"equals":{"path":"/body"}}],"responses":[{"is":{"template":true,"body":"{{#each (parseJson request.body)}}{{#each (parseJson ../request.body)}}{{/each}}{{/each}}done"}}]},` +
		`{"responses":[{"is":{"template":true,"body":"{{#each (range 1 3)}}{{this}}{{/each}}"}}]}]}`
	status, _, out := do(t, "POST", s.Admin+"/imposters", body)
	if status != 201 {
		t.Fatalf("POST /imposters = %d %s", status, out)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", int(jsonBody(t, out)["port"].(float64)))
	list := "[" + strings.Repeat("1,", 99_999) + "1]"
	for _, tt := range []struct{ path, body string }{{"/ranges", ""}, {"/body", list}} {
		status, _, out := do(t, "POST", url+tt.path, tt.body, "Content-Type", "application/json")
		if status != 500 || !strings.Contains(out, "template takes more than 4194304 steps") {
			t.Errorf("%s: %d %s, want 500 naming the steps", tt.path, status, out)
		}
	}
	if status, _, out := do(t, "GET", url+"/", ""); status != 200 || out != "123" {
		t.Errorf("then GET / = %d %q, want 200 123", status, out)
	}
}
