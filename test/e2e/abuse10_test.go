package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestReturnedStringPastScriptMemory: an inject that doubles a string past --script-memory in
// its last instructions returned before the memory watch's next look, and the string was copied
// into the answer: 'x' doubled to 512 MiB under the default 256 MiB answered 200 with 512 MiB,
// and mockd reached 1 GB. What a script returns (or a decorate sets) is now counted against the
// limit before it is copied: the request fails with the limit's error, the next one is served.
func TestReturnedStringPastScriptMemory(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "20s", "--script-memory", "32MiB")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/double"}}],"responses":[{"inject":"function () { var s = 'x'; while (s.length <= 32 * 1024 * 1024) { s = s + s; } return { body: s }; }"}]},
		{"predicates":[{"equals":{"path":"/decorate"}}],"responses":[{"is":{"body":"a"},"behaviors":[{"decorate":"function (config) { var s = 'x'.repeat(20 * 1024 * 1024); config.response.headers = { a: s, b: s }; }"}]}]},
		{"responses":[{"inject":"function (config) { return { body: 'good ' + config.request.path }; }"}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, path := range []string{"/double", "/decorate"} {
		status, _, body := do(t, "GET", base+path, "")
		if status != 500 || !strings.Contains(body, "invalid injection") || !strings.Contains(body, "more than 32 MiB of memory") {
			t.Errorf("%s: %d %.300s, want 500 invalid injection, out of memory", path, status, body)
		}
		if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != "good /good" {
			t.Errorf("a good request after %s: %d %.300q", path, status, body)
		}
	}
}
