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
	// 2 s: long enough that the script that throws at once answers its own error, not the time
	// limit's, on a loaded machine.
	s := start(t, "--allowInjection", "--script-timeout", "2s")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/loop"}}],"responses":[{"inject":"function (config) { while (true) {} }"}]},
		{"predicates":[{"equals":{"path":"/throw"}}],"responses":[{"inject":"function (config) { throw new Error('boom'); }"}]},
		{"predicates":[{"equals":{"path":"/decorate-loop"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"decorate":"function (config) { for (;;) {} }"}]}]},
		{"predicates":[{"equals":{"path":"/shell"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"shellTransform":"sleep 30"}]}]},
		{"predicates":[{"inject":"function (config) { return config.request.path === '/pred-loop' && (function () { while (true) {} })(); }"}],"responses":[{"is":{"body":"never"}}]},
		{"predicates":[{"equals":{"path":"/tojson-loop"}}],"responses":[{"inject":"function (config) { return { body: { toJSON: function () { while (true) {} } } }; }"}]},
		{"predicates":[{"equals":{"path":"/getter-loop"}}],"responses":[{"inject":"function (config) { return { get body() { while (true) {} } }; }"}]},
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
		{"/tojson-loop", "invalid injection"}, // was 200 with an empty body
		{"/getter-loop", "invalid injection"}, // was an internal error, logged as a panic
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

// TestScriptLoggerAsMountebank checks what scripts log: under the imposter's scope, formatted
// as Mountebank's scoped logger formats (String of the first argument, then util.format with
// node's util.inspect layout), console output at its level.
func TestScriptLoggerAsMountebank(t *testing.T) {
	s := start(t, "--allowInjection")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"name":"lg","stubs":[{"responses":[{"inject":
		"function (config) { config.logger.info('logger obj', {a: 1, b: [1, 2]}, [3]); config.logger.warn('warn %%d', 42); config.logger.error(new Error('boom')); config.logger.info({x: 1}); console.log('console says %%s', 'hi', {a: 1}); console.error('oops'); return {body: 'ok'}; }"}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	if _, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); body != "ok" {
		t.Fatalf("imposter answered %q", body)
	}
	_, _, body := do(t, "GET", s.Admin+"/logs", "")
	logs, _ := jsonBody(t, body)["logs"].([]any)
	seen := map[string]bool{}
	for _, l := range logs {
		e, _ := l.(map[string]any)
		seen[fmt.Sprint(e["level"], " ", e["message"])] = true
	}
	scope := fmt.Sprintf("[http:%d lg] ", port)
	for _, want := range []string{
		"info " + scope + "logger obj { a: 1, b: [ 1, 2 ] } [ 3 ]",
		"warn " + scope + "warn 42",
		"error " + scope + "Error: boom",
		"info " + scope + "[object Object]",
		"info " + scope + "console says hi { a: 1 }",
		"error " + scope + "oops",
	} {
		if !seen[want] {
			t.Errorf("GET /logs lacks %q\n%s", want, body)
		}
	}
}

// TestHugeAllocationsInScriptsFailOneRequest: a script asking goja for a 100 GB ArrayBuffer or
// typed array, or a built-in loop over a billion elements, ended mockd (fatal error: runtime: out
// of memory) or ran past --script-timeout, which cannot interrupt goja's built-ins. Each now
// fails its request with a 500 naming node's RangeError, and mockd keeps answering.
func TestHugeAllocationsInScriptsFailOneRequest(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "3s")
	port := listenFree(t)
	scripts := []struct{ path, fn, want string }{
		{"/ab", "new ArrayBuffer(1e11).byteLength", "Array buffer allocation failed"},
		{"/u8", "new Uint8Array(1e11).length", "Array buffer allocation failed"},
		{"/f64", "new Float64Array({ length: 2e10 }).length", "Invalid array length"},
		{"/buf", "new Buffer(1e11).length", "Array buffer allocation failed"},
		{"/fill", "new Array(1e10).fill(1).length", "Invalid array length"},
		{"/concat", "[].concat(new Array(1e9)).length", "Invalid array length"},
		{"/from", "Array.from({ length: 1e9 }).length", "Invalid array length"},
		{"/sort", "new Array(1e9).sort().length", "Invalid array length"},
	}
	var stubs []string
	for _, sc := range scripts {
		stubs = append(stubs, fmt.Sprintf(`{"predicates":[{"equals":{"path":%q}}],"responses":[{"inject":"function (config) { return { body: String(%s) }; }"}]}`, sc.path, sc.fn))
	}
	stubs = append(stubs, `{"responses":[{"is":{"body":"still here"}}]}`)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, strings.Join(stubs, ","))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, sc := range scripts {
		status, _, body := do(t, "GET", base+sc.path, "")
		if status != 500 || !strings.Contains(body, sc.want) {
			t.Errorf("GET %s (%s) → %d %.300s, want a 500 containing %q", sc.path, sc.fn, status, body, sc.want)
		}
		if _, _, body := do(t, "GET", base+"/other", ""); body != "still here" {
			t.Fatalf("after GET %s the imposter answers %q, want %q", sc.path, body, "still here")
		}
	}
	if status, _, _ := do(t, "GET", s.Admin+"/imposters", ""); status != 200 {
		t.Errorf("the admin API answers %d", status)
	}
}
