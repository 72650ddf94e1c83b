package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitOutput waits (bounded) until mockd has printed a line matching re, and returns it.
func waitOutput(t *testing.T, s *server, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := rx.FindString(s.Output()); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("mockd printed no line matching %q:\n%s", re, s.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const usersYAML = `imposters:
  - port: %d
    protocol: http
    name: users
    recordRequests: true
    stubs:
      - predicates: [{equals: {method: GET, path: /users/42}}]
        expect: {times: 1}
        responses: [{is: {statusCode: 200, body: {id: 42}}}]
      - predicates: [{equals: {method: POST, path: /orders}}, {exists: {headers: {X-Api-Key: true}}}]
        responses: [{is: {statusCode: 201}}]
`

// TestRequestLogs checks each imposter request is logged at info as Mountebank logs it, with
// the no-match line, on the console, in --logfile and in GET /logs; --log-format json prints
// JSON lines; the debug level adds the request, the match and why nothing matched.
func TestRequestLogs(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	cfg := write(t, dir, "users.yaml", fmt.Sprintf(usersYAML, port))
	logfile := filepath.Join(dir, "mockd.log")
	s := start(t, "-c", cfg, "--logfile", logfile)
	imp := "http://127.0.0.1:" + strconv.Itoa(port)
	do(t, "GET", imp+"/users/42?x=1", "")
	do(t, "POST", imp+"/orders", "{}")
	scope := fmt.Sprintf(`\[http:%d users\] `, port)
	waitOutput(t, s, `info: `+scope+`127\.0\.0\.1:\d+ => GET /users/42\?x=1\n`)
	waitOutput(t, s, `info: `+scope+`127\.0\.0\.1:\d+ => POST /orders\ninfo: `+scope+`no predicate match, using default response\n`)
	if strings.Contains(s.Output(), "debug:") {
		t.Errorf("debug lines at the info level:\n%s", s.Output())
	}
	_, _, body := do(t, "GET", s.Admin+"/logs", "")
	if !strings.Contains(body, "no predicate match, using default response") || !strings.Contains(body, "=> GET /users/42?x=1") {
		t.Errorf("GET /logs lacks the request lines:\n%s", body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(logfile)
		if strings.Contains(string(data), `no predicate match, using default response","timestamp"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log file lacks the request lines:\n%s", data)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// JSON lines and the debug detail.
	port2 := listenFree(t)
	cfg2 := write(t, dir, "users2.yaml", fmt.Sprintf(usersYAML, port2))
	s2 := start(t, "-c", cfg2, "--log-format", "json", "--loglevel", "debug")
	do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port2)+"/users/7", "")
	line := waitOutput(t, s2, `\{"level":"debug","message":"\[http:\d+ users\] no stub matched; [^\n]*\n`)
	var entry map[string]string
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		t.Fatalf("not a JSON line: %q: %v", line, err)
	}
	want := `no stub matched; nearest: stub 0 (1 of 2 checks passed): equals path: expected "/users/42", got "/users/7"`
	if !strings.Contains(entry["message"], want) {
		t.Errorf("debug line %q does not contain %q", entry["message"], want)
	}
	for _, re := range []string{
		`"level":"info","message":"\[http:\d+ users\] 127\.0\.0\.1:\d+ => GET /users/7"`,
		`"level":"debug","message":"\[http:\d+ users\] 127\.0\.0\.1:\d+ => \{\\"requestFrom\\"`,
		`"level":"debug","message":"\[http:\d+ users\] generating response from \{\\"is\\":\{\}\}"`,
		`"level":"debug","message":"\[http:\d+ users\] 127\.0\.0\.1:\d+ <= \{\\"statusCode\\":200`,
	} {
		waitOutput(t, s2, re)
	}
	for _, l := range strings.Split(strings.TrimSpace(s2.Output()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("--log-format json printed a line that is not JSON: %q", l)
		}
	}
}

// TestWhyNoMatch checks the explanation of a request that matched no stub: in recorded requests
// only with ?explain=true (Mountebank's shape is unchanged otherwise), from the explain endpoint
// for any request, and in a response header under --debug.
func TestWhyNoMatch(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	s := start(t, "-c", write(t, dir, "users.yaml", fmt.Sprintf(usersYAML, port)), "--debug")
	imp := "http://127.0.0.1:" + strconv.Itoa(port)
	do(t, "GET", imp+"/users/42", "")
	_, hdr, _ := do(t, "POST", imp+"/orders", "{}")
	wantHeader := `nearest: stub 1 (2 of 3 checks passed): exists headers.x-api-key: expected true, but the request has none; ` +
		`stub 0 (0 of 2 checks passed): equals method: expected "get", got "post"`
	if got := hdr.Get("X-Mockd-No-Match"); got != wantHeader {
		t.Errorf("X-Mockd-No-Match = %q\nwant %q", got, wantHeader)
	}
	_, hdr, _ = do(t, "GET", imp+"/users/42", "")
	if got := hdr.Get("X-Mockd-No-Match"); got != "" {
		t.Errorf("a matched request got X-Mockd-No-Match %q", got)
	}

	url := s.Admin + "/imposters/" + strconv.Itoa(port)
	_, _, plain := do(t, "GET", url, "")
	if strings.Contains(plain, `"explanation"`) || strings.Contains(plain, `"hits"`) || strings.Contains(plain, `"stub":`) {
		t.Errorf("GET /imposters/:port shows mockd fields without ?explain=true:\n%s", plain)
	}
	_, _, body := do(t, "GET", url+"?explain=true", "")
	var got struct {
		Requests []struct {
			Path        string
			Stub        *int
			Explanation struct {
				Nearest []struct {
					Stub, Satisfied, Total int
					Failure                map[string]any
				}
			}
		}
		Stubs []struct{ Hits int }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 3 || got.Requests[0].Stub == nil || *got.Requests[0].Stub != 0 || got.Requests[1].Stub != nil {
		t.Fatalf("recorded requests with explain=true:\n%s", body)
	}
	near := got.Requests[1].Explanation.Nearest
	if len(near) != 2 || near[0].Stub != 1 || near[0].Satisfied != 2 || near[0].Total != 3 ||
		near[0].Failure["field"] != "headers.x-api-key" || near[0].Failure["missing"] != true {
		t.Errorf("explanation of POST /orders:\n%s", body)
	}
	if len(got.Stubs) != 2 || got.Stubs[0].Hits != 2 || got.Stubs[1].Hits != 0 {
		t.Errorf("hits with explain=true: %+v", got.Stubs)
	}

	code, _, body := do(t, "POST", url+"/explain", `{"method":"POST","path":"/orders","headers":{"x-api-key":"k"}}`)
	var ex struct {
		Match *int
		Stubs []struct {
			Index      int
			Matched    bool
			Predicates []struct {
				Operator string
				Matched  bool
				Failure  map[string]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &ex); err != nil || code != 200 {
		t.Fatalf("explain: %d %v\n%s", code, err, body)
	}
	if ex.Match == nil || *ex.Match != 1 || len(ex.Stubs) != 2 || ex.Stubs[0].Matched || !ex.Stubs[1].Matched ||
		ex.Stubs[0].Predicates[0].Failure["field"] != "method" {
		t.Errorf("explain answered:\n%s", body)
	}
	code, _, body = do(t, "POST", url+"/explain", `[1]`)
	if code != 400 || !strings.Contains(body, `"code": "bad data"`) {
		t.Errorf("explain of a non-object: %d %s", code, body)
	}
}

// TestVerifyEndpoint checks GET /verify and GET /imposters/:port/verify: an unmet expectation,
// an unused stub and an unmatched request each fail the verdict.
func TestVerifyEndpoint(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	s := start(t, "-c", write(t, dir, "users.yaml", fmt.Sprintf(usersYAML, port)))
	imp := "http://127.0.0.1:" + strconv.Itoa(port)
	verdict := func(path string) (v struct {
		Passed  bool
		Summary map[string]int
	}) {
		t.Helper()
		_, _, body := do(t, "GET", s.Admin+path, "")
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, body)
		}
		return v
	}
	if v := verdict("/verify"); v.Passed || v.Summary["expectationsFailed"] != 1 || v.Summary["unusedStubs"] != 1 {
		t.Errorf("before any request: %+v", v)
	}
	do(t, "GET", imp+"/users/42", "")
	do(t, "POST", imp+"/orders", "{}", "X-Api-Key", "k")
	if v := verdict("/verify"); !v.Passed || v.Summary["expectations"] != 1 {
		t.Errorf("with every stub used once: %+v", v)
	}
	do(t, "GET", imp+"/nothing", "")
	if v := verdict(fmt.Sprintf("/imposters/%d/verify", port)); v.Passed || v.Summary["unmatchedRequests"] != 1 {
		t.Errorf("after an unmatched request: %+v", v)
	}
	// Deleting the recorded requests starts verification over.
	do(t, "DELETE", fmt.Sprintf("%s/imposters/%d/savedRequests", s.Admin, port), "")
	if v := verdict("/verify?allowUnused=true"); v.Passed || v.Summary["expectationsFailed"] != 1 || v.Summary["unmatchedRequests"] != 0 {
		t.Errorf("after DELETE savedRequests: %+v", v)
	}
}

// TestVerifyCommand runs `mockd verify` against a running mockd: it prints the verdict, writes
// JUnit XML, GitHub annotations and a job summary, and exits 1 until every expectation is met,
// every stub used and every request matched; `serve --verdict` writes the verdict at shutdown.
func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	verdictFile := filepath.Join(dir, "verdict.xml")
	s := start(t, "-c", write(t, dir, "users.yaml", fmt.Sprintf(usersYAML, port)), "--verdict", verdictFile)
	adminPort := strings.TrimPrefix(s.Admin, "http://127.0.0.1:")
	imp := "http://127.0.0.1:" + strconv.Itoa(port)
	do(t, "GET", imp+"/users/42", "")
	do(t, "GET", imp+"/users/42", "")
	do(t, "DELETE", imp+"/orders", "")

	junit := filepath.Join(dir, "junit.xml")
	summary := filepath.Join(dir, "summary.md")
	cmd := exec.Command(mockdBin, "verify", "--port", adminPort, "--host", "127.0.0.1", "--junit", junit, "--github")
	cmd.Env = append(os.Environ(), "GITHUB_STEP_SUMMARY="+summary)
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("verify exited %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		fmt.Sprintf(`::error title=mockd verify::http:%d users: stub 0 [{"equals":{"method":"GET","path":"/users/42"}}]: expected exactly 1 request, got 2`, port),
		fmt.Sprintf(`FAIL http:%d users: stub 1 `, port),
		fmt.Sprintf(`FAIL http:%d users: DELETE /orders matched no stub; nearest: stub 1 (1 of 3 checks passed): equals method: expected "post", got "delete"`, port),
		"FAIL: 1 imposter(s), 1 expectation(s) of which 1 failed, 1 unused stub(s), 1 unmatched request(s)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verify output lacks %q:\n%s", want, out)
		}
	}
	xmlOut, _ := os.ReadFile(junit)
	if !strings.Contains(string(xmlOut), `<testsuites name="mockd verify" tests="3" failures="3">`) ||
		!strings.Contains(string(xmlOut), `name="DELETE /orders matches a stub"`) {
		t.Errorf("junit:\n%s", xmlOut)
	}
	md, _ := os.ReadFile(summary)
	if !strings.Contains(string(md), "### mockd verify: failed") || !strings.Contains(string(md), fmt.Sprintf("| http:%d users | 1 | 1 | 1 | 1 |", port)) {
		t.Errorf("job summary:\n%s", md)
	}

	// Start over: every stub used as expected, nothing unmatched.
	do(t, "DELETE", fmt.Sprintf("%s/imposters/%d/savedRequests", s.Admin, port), "")
	do(t, "GET", imp+"/users/42", "")
	do(t, "POST", imp+"/orders", "", "X-Api-Key", "k")
	out, err = exec.Command(mockdBin, "verify", "--port", adminPort, "--host", "127.0.0.1").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "PASS: 1 imposter(s), 1 expectation(s) of which 0 failed") {
		t.Fatalf("verify after every call: %v\n%s", err, out)
	}
	s.stop()
	saved, err := os.ReadFile(verdictFile)
	if err != nil || !strings.Contains(string(saved), `<testsuites name="mockd verify" tests="1" failures="0">`) {
		t.Errorf("--verdict file: %v\n%s", err, saved)
	}

	out, err = exec.Command(mockdBin, "verify", "--port", strconv.Itoa(listenFree(t)), "--host", "127.0.0.1").CombinedOutput()
	if exitCode(err) != 2 {
		t.Errorf("verify without a server exited %v, want 2:\n%s", err, out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
