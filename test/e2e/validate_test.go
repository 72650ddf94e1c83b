package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateNewUserMistakes runs `mockd validate` on each case of internal/app/testdata/check:
// the mistakes new users make (status in is, methd and header in a predicate, status in
// defaultResponse, a duplicate key, statusCode abc, repeat two, a bad copy regex, a JavaScript
// syntax error, an unknown behavior) each fail with the file, the line of the offending key and
// the key; warnings (a stub that can never match, Mountebank JSON's ignored keys) do not fail.
func TestValidateNewUserMistakes(t *testing.T) {
	files, _ := filepath.Glob("../../internal/app/testdata/check/*")
	if len(files) < 12 {
		t.Fatalf("found %d cases", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, _ := os.ReadFile(file)
			args := []string{"validate", "-c", file}
			var wants, warnings []string
			for _, line := range strings.Split(string(data), "\n") {
				switch {
				case strings.HasPrefix(line, "# want: "):
					wants = append(wants, "mockd: config error: "+filepath.Dir(file)+"/"+strings.TrimPrefix(line, "# want: "))
				case strings.HasPrefix(line, "# warning: "):
					warnings = append(warnings, "mockd: config warning: "+filepath.Dir(file)+"/"+strings.TrimPrefix(line, "# warning: "))
				case line == "# allowInjection":
					args = append(args, "--allowInjection")
				}
			}
			out, err := exec.Command(mockdBin, args...).CombinedOutput()
			if code := exitCode(err); (len(wants) > 0) != (code == 1) || code > 1 {
				t.Fatalf("mockd %s exited %d:\n%s", strings.Join(args, " "), code, out)
			}
			for _, w := range append(wants, warnings...) {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestStrictYAMLLeniantJSON: the same mistake fails a YAML file at start (nothing starts), while
// Mountebank JSON keeps Mountebank's leniency: the admin API and a JSON config accept it, and
// mockd validate warns.
func TestStrictYAMLLenientJSON(t *testing.T) {
	_, err := tryStart(t, "-c", "../../internal/app/testdata/check/is-status.yaml")
	if err == nil || !strings.Contains(err.Error(), `is-status.yaml:6:42: imposters[0].stubs[0].responses[0].is.status: unknown field "status" (did you mean "statusCode"?)`) {
		t.Fatalf("mockd started with status in is, or said: %v", err)
	}
	s := start(t, "-c", "../../internal/app/testdata/check/lenient.json")
	if code, _, body := do(t, "POST", s.Admin+"/imposters", `{"protocol":"http","stubs":[{"responses":[{"is":{"status":201}}]}]}`); code != 201 {
		t.Errorf("the admin API refused what Mountebank accepts: %d %s", code, body)
	}
}
