package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestRunawayScriptsFailOneRequest checks mockd's time limit on scripts and shell commands: an
// endless loop, a throw or a hanging command fails that one request with a 500 naming the error,
// and every other stub keeps answering.
func TestRunawayScriptsFailOneRequest(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "500ms")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/loop"}}],"responses":[{"inject":"function (config) { while (true) {} }"}]},
		{"predicates":[{"equals":{"path":"/throw"}}],"responses":[{"inject":"function (config) { throw new Error('boom'); }"}]},
		{"predicates":[{"equals":{"path":"/decorate-loop"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"decorate":"function (config) { for (;;) {} }"}]}]},
		{"predicates":[{"equals":{"path":"/shell"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"shellTransform":"sleep 30"}]}]},
		{"predicates":[{"inject":"function (config) { return config.request.path === '/pred-loop' && (function () { while (true) {} })(); }"}],"responses":[{"is":{"body":"never"}}]},
		{"responses":[{"is":{"body":"still here"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, tt := range []struct{ path, want string }{
		{"/loop", "invalid injection"},
		{"/throw", "boom"},
		{"/decorate-loop", "invalid injection"},
		{"/shell", ""},
		{"/pred-loop", "invalid injection"},
	} {
		status, _, body := do(t, "GET", base+tt.path, "")
		if status != 500 || !strings.Contains(body, tt.want) {
			t.Errorf("GET %s → %d %s, want a 500 containing %q", tt.path, status, body, tt.want)
		}
		if _, _, body := do(t, "GET", base+"/other", ""); body != "still here" {
			t.Errorf("after GET %s the imposter answers %q, want %q", tt.path, body, "still here")
		}
		if status, _, _ := do(t, "GET", s.Admin+"/imposters", ""); status != 200 {
			t.Errorf("after GET %s the admin API answers %d", tt.path, status)
		}
	}
}
