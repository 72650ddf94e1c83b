package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestBacktrackingRegexpInAnInject: a regular expression that goja runs on its ECMAScript
// engine (a lookahead and a backreference) and that backtracks catastrophically ran in Go, which
// --script-timeout cannot interrupt: the request stayed unanswered (for hours; the client here
// gives up after 30 s). Each match now stops after a second, the request fails with the time
// limit's error, and the imposter answers the next one.
func TestBacktrackingRegexpInAnInject(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "500ms")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/regexp"}}],"responses":[{"inject":"function () { return { body: String(/^(a+)+(?=b)\\1$/.test('a'.repeat(40) + 'c')) }; }"}]},
		{"responses":[{"inject":"function (config) { return { body: 'good ' + config.request.path }; }"}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	status, _, body := do(t, "GET", base+"/regexp", "")
	if status != 500 || !strings.Contains(body, "invalid injection") || !strings.Contains(body, "timed out") {
		t.Errorf("/regexp: %d %.300s, want 500 invalid injection, timed out", status, body)
	}
	if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != "good /good" {
		t.Errorf("a good request after /regexp: %d %.300q", status, body)
	}
}
