package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMergeFilesDirsAndGlobs loads a YAML file, a directory and a glob of Mountebank JSON files
// in one server, with a server block setting a flag.
func TestMergeFilesDirsAndGlobs(t *testing.T) {
	dir := t.TempDir()
	p1, p2, p3 := listenFree(t), listenFree(t), listenFree(t)
	yml := write(t, dir, "main.yaml", fmt.Sprintf("server:\n  mock: true\nimposters:\n  - port: %d\n    protocol: http\n    stubs: [{responses: [{is: {body: one}}]}]\n", p1))
	write(t, dir, "more/b.json", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"two"}}]}]}`, p2))
	write(t, dir, "json/c.json", fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"three"}}]}]}]}`, p3))
	s := start(t, "-c", yml, "-c", filepath.Join(dir, "more"), "-c", filepath.Join(dir, "json", "*.json"))
	for port, want := range map[int]string{p1: "one", p2: "two", p3: "three"} {
		if _, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); body != want {
			t.Errorf("imposter %d answered %q, want %q", port, body, want)
		}
	}
	// server: {mock: true} turned on recording everywhere.
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(p2), "")
	if !strings.Contains(body, `"method": "GET"`) {
		t.Errorf("server block's mock: true did not record requests:\n%s", body)
	}
}

// TestServerBlockTakesEveryServerFlag: a YAML server block sets any server flag (here the limit
// flags), and a flag on the command line wins over it.
func TestServerBlockTakesEveryServerFlag(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	yml := write(t, dir, "limits.yaml", fmt.Sprintf("server:\n  max-body: 8\n  journal-size: 1\n  drain-timeout: 5s\n  script-timeout: 2s\n  no-metrics: true\n  log-format: json\n"+
		"imposters:\n  - port: %d\n    protocol: http\n    recordRequests: true\n    stubs: [{responses: [{is: {body: ok}}]}]\n", port))
	s := start(t, "-c", yml, "--log-format", "text")
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	if status, _, _ := do(t, "POST", url, "more than eight bytes"); status != 413 {
		t.Errorf("server block max-body: 8: a 21-byte body got %d, want 413", status)
	}
	do(t, "GET", url+"a", "")
	do(t, "GET", url+"b", "")
	if _, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), ""); strings.Contains(body, `"path": "/a"`) || !strings.Contains(body, `"path": "/b"`) {
		t.Errorf("server block journal-size: 1: the journal should hold /b alone:\n%s", body)
	}
	if status, _, _ := do(t, "GET", s.Admin+"/metrics", ""); status != 404 {
		t.Errorf("server block no-metrics: true: GET /metrics answered %d, want 404", status)
	}
	_, _, body := do(t, "GET", s.Admin+"/config", "")
	if !strings.Contains(body, `"format": "%level: %message"`) {
		t.Errorf("--log-format text on the command line should win over the server block's json:\n%s", body)
	}
}

func TestDuplicatePortAcrossFilesIsAConfigError(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	a := write(t, dir, "a.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http}\n", port))
	b := write(t, dir, "b.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http}\n", port))
	_, err := tryStart(t, "-c", a, "-c", b)
	if err == nil || !strings.Contains(err.Error(), "is already used by the imposter at "+a) {
		t.Fatalf("want a config error naming both files, got: %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.yaml", "imposters:\n  - port: 0\n    protocol: http\n  - protocol: gopher\n    stubs: [{responses: []}]\n")
	out, err := exec.Command(mockdBin, "validate", "-c", bad).CombinedOutput()
	if err == nil {
		t.Fatalf("validate accepted a bad file:\n%s", out)
	}
	for _, want := range []string{bad + ":2:5: imposters[0].port: invalid value for 'port'", bad + ":4:5: imposters[1].protocol: the gopher protocol is not yet supported"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	good := write(t, dir, "good.yaml", "imposters:\n  - protocol: http\n    stubs: [{responses: [{is: {body: x}}]}]\n")
	if out, err := exec.Command(mockdBin, "validate", "-c", good).CombinedOutput(); err != nil {
		t.Errorf("validate rejected a good file: %v\n%s", err, out)
	}
}

// TestPredicateErrorNamesKeyLine: an invalid regex is reported at the line and column of the key
// that holds it.
func TestPredicateErrorNamesKeyLine(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.yaml", "imposters:\n  - protocol: http\n    stubs:\n      - responses: [{is: {body: a}}]\n      - predicates: [{matches: {path: \"(\"}}]\n        responses: [{is: {body: b}}]\n")
	out, err := exec.Command(mockdBin, "validate", "-c", bad).CombinedOutput()
	if err == nil {
		t.Fatalf("validate accepted an invalid regex:\n%s", out)
	}
	want := bad + ":5:33: imposters[0].stubs[1].predicates[0].matches.path: invalid regular expression /(/: missing closing )"
	if !strings.Contains(string(out), want) {
		t.Errorf("validate output %q does not name the key's line (%q) and the regex error", out, want)
	}
}

// TestInjectionRefusalNamesMockd: on the command line the refusal names mockd and its flag; the
// admin API keeps Mountebank's wording (clients compare it, see test/compat).
func TestInjectionRefusalNamesMockd(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "inject.yaml", "imposters:\n  - protocol: http\n    stubs:\n      - responses: [{inject: 'function () { return {}; }'}]\n")
	out, err := exec.Command(mockdBin, "validate", "-c", file).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "JavaScript injection is not allowed unless mockd is run with --allowInjection") ||
		strings.Contains(string(out), " mb ") {
		t.Errorf("mockd validate of an inject response without --allowInjection: err=%v\n%s", err, out)
	}
	s := start(t)
	_, _, body := do(t, "POST", s.Admin+"/imposters", `{"protocol":"http","stubs":[{"responses":[{"inject":"function () { return {}; }"}]}]}`)
	if !strings.Contains(body, "JavaScript injection is not allowed unless mb is run with the --allowInjection flag") {
		t.Errorf("admin API refusal changed wording:\n%s", body)
	}
}

// TestYAMLDefaultProtocol: PRODUCT.md's YAML example names no protocol: in mockd YAML an
// imposter without one is an http imposter (shown as such by the API, written out by mockd
// convert, so that the JSON loads in Mountebank), while Mountebank JSON keeps Mountebank's
// "'protocol' is a required field".
func TestYAMLDefaultProtocol(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	yml := write(t, dir, "users.yaml", fmt.Sprintf(`imposters:
  - port: %d
    name: users
    stubs:
      - predicates: [{equals: {method: GET, path: /users/42}}]
        responses:
          - is: {statusCode: 200, headers: {Content-Type: application/json}, body: {id: 42}}
`, port))
	if out, err := exec.Command(mockdBin, "validate", "-c", yml).CombinedOutput(); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
	out, err := exec.Command(mockdBin, "convert", yml).Output()
	if err != nil || !strings.Contains(string(out), `"protocol": "http"`) {
		t.Errorf("convert to JSON: %v\n%s", err, out)
	}
	s := start(t, "-c", yml)
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/users/42", ""); status != 200 || !strings.Contains(body, `"id": 42`) {
		t.Errorf("GET /users/42: %d %s", status, body)
	}
	if _, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), ""); !strings.Contains(body, `"protocol": "http"`) {
		t.Errorf("the imposter's protocol is not shown as http:\n%s", body)
	}
	js := write(t, dir, "users.json", fmt.Sprintf(`{"imposters": [{"port": %d}]}`, listenFree(t)))
	if _, err := tryStart(t, "-c", js); err == nil || !strings.Contains(err.Error(), "'protocol' is a required field") {
		t.Errorf("Mountebank JSON without a protocol: %v", err)
	}
}
