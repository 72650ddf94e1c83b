package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestCheckCases loads each file of testdata/check as `mockd validate` does and compares with
// its header comments: "# want: problem" (a config error, at the offending key's line),
// "# warning: text", "# ok" (loads), "# allowInjection". lenient.json is Mountebank JSON with a
// key Mountebank ignores: it loads, with a warning.
func TestCheckCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/check/*")
	if len(files) < 12 {
		t.Fatalf("found %d cases", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var wants, warnings []string
			allow := false
			for _, line := range strings.Split(string(data), "\n") {
				switch {
				case strings.HasPrefix(line, "# want: "):
					wants = append(wants, strings.TrimPrefix(line, "# want: "))
				case strings.HasPrefix(line, "# warning: "):
					warnings = append(warnings, strings.TrimPrefix(line, "# warning: "))
				case line == "# allowInjection":
					allow = true
				}
			}
			if strings.HasSuffix(file, ".json") {
				warnings = append(warnings, `lenient.json: imposters[0].stubs[0].responses[0].is.status: unknown field "status" (did you mean "statusCode"?)`)
			}
			_, gotWarnings, err := Check([]string{file}, allow, nil)
			var problems []string
			var le *config.LoadError
			if errors.As(err, &le) {
				problems = le.Problems
			} else if err != nil {
				t.Fatal(err)
			}
			if len(wants) == 0 && len(problems) > 0 {
				t.Errorf("want no error, got %q", problems)
			}
			for _, w := range wants {
				if !containsOne(problems, w) {
					t.Errorf("no problem contains %q; got %q", w, problems)
				}
			}
			if len(wants) > 0 && len(problems) != len(wants) {
				t.Errorf("got %d problems, want %d: %q", len(problems), len(wants), problems)
			}
			for _, w := range warnings {
				if !containsOne(gotWarnings, w) {
					t.Errorf("no warning contains %q; got %q", w, gotWarnings)
				}
			}
		})
	}
}

func containsOne(list []string, s string) bool {
	for _, e := range list {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}
