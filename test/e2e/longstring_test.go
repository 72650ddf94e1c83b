package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestLongStringReplacePastScriptMemory: a global RegExp's replace (or replaceAll) on a long
// string found every match and built its whole answer in one goja operation, which neither
// script limit could interrupt ('a'.repeat(1 << 24).replace(/a/g, 'bb') in an inject: 10 s and
// 2 GB under the 5 s / 256 MiB defaults), and an answer just past --script-memory made with a
// few matches was answered. Now such a call goes from match to match, and an answer past the
// limit is refused as it grows: the request fails with the limit's error, in an inject, a
// decorate or an inject predicate, and the imposter answers the next one.
func TestLongStringReplacePastScriptMemory(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "20s", "--script-memory", "8MiB")
	port := listenFree(t)
	const past = `('X' + 'a'.repeat(40000) + 'X').replace(/X/g, 'y'.repeat(4300000)).length`
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/inject"}}],"responses":[{"inject":"function () { return { body: String(%[2]s) }; }"}]},
		{"predicates":[{"equals":{"path":"/decorate"}}],"responses":[{"is":{"body":"a"},"behaviors":[{"decorate":"function (config) { config.response.body = String(('X' + 'a'.repeat(40000) + 'X').replaceAll('X', 'y'.repeat(4300000)).length); }"}]}]},
		{"predicates":[{"inject":"function (config) { return config.request.path === '/predicate' && %[2]s > 0; }"}],"responses":[{"is":{"body":"never"}}]},
		{"predicates":[{"equals":{"path":"/under"}}],"responses":[{"inject":"function () { var s = 'ab,'.repeat(20000); return { body: [s.replace(/a/g, 'xx').length, s.replaceAll(',', '$&$&').length, s.match(/b/g).length, s.split(/,/).length].join(' ') }; }"}]},
		{"responses":[{"inject":"function (config) { return { body: 'good ' + config.request.path }; }"}]}]}`, port, past)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, path := range []string{"/inject", "/decorate", "/predicate"} {
		status, _, body := do(t, "GET", base+path, "")
		if status != 500 || !strings.Contains(body, "invalid injection") || !strings.Contains(body, "more than 8 MiB of memory") {
			t.Errorf("%s: %d %.300s, want 500 invalid injection, out of memory", path, status, body)
		}
		if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != "good /good" {
			t.Errorf("a good request after %s: %d %.300q", path, status, body)
		}
	}
	if status, _, body := do(t, "GET", base+"/under", ""); status != 200 || body != "80000 80000 20000 20001" {
		t.Errorf("/under: %d %.300q, want 200 80000 80000 20000 20001", status, body)
	}
}
