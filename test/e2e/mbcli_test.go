package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountebankCommandLine runs mockd as Mountebank's own CLI tests run mb: options without
// a command start the server, one-letter aliases, --rcfile (the command line wins; a missing
// or unreadable file is reported and ignored), --log as JSON, and the options mockd refuses.
func TestMountebankCommandLine(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "mbrc.json")
	notJSON := filepath.Join(dir, "bad.json")
	logfile := filepath.Join(dir, "custom.log")
	if err := os.WriteFile(rc, []byte(`{"mock": true, "debug": false, "origin": "http://rc.test"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notJSON, []byte("debug: true"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--port", "0", "--pidfile", filepath.Join(dir, "mb.pid")}
	for _, tc := range []struct {
		name   string
		args   []string
		config map[string]any // options of GET /config
		output string         // in the process's output
	}{
		{"no command, aliases", []string{"-h", "127.0.0.1", "-m", "-d", "-i", "-o", "http://x.test"},
			map[string]any{"host": "127.0.0.1", "mock": true, "debug": true, "allowInjection": true, "origin": "http://x.test"}, ""},
		{"rcfile under the command line", []string{"start", "--host", "127.0.0.1", "--rcfile", rc, "-d"},
			map[string]any{"mock": true, "debug": true, "origin": "http://rc.test"}, ""},
		{"missing rcfile", []string{"start", "--host", "127.0.0.1", "--rcfile", filepath.Join(dir, "none.json")},
			map[string]any{"mock": nil, "debug": false}, "Cannot find rcfile " + filepath.Join(dir, "none.json")},
		{"rcfile not JSON", []string{"start", "--host", "127.0.0.1", "--rcfile", notJSON},
			map[string]any{"debug": false}, "Cannot parse rcfile " + notJSON},
		{"--log JSON", []string{"start", "--host", "127.0.0.1", "--loglevel", "error", "--log",
			`{"level":"debug","transports":{"console":{"colorize":true,"format":"json"},"file":{"path":"` + logfile + `","format":"json"}}}`},
			nil, `{"level":"info","message":"[mb:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string(nil), tc.args...), base...)
			s, err := startCmd(t, exec.Command(mockdBin, args...), strings.Join(args, " "))
			if err != nil {
				t.Fatal(err)
			}
			_, _, body := do(t, "GET", s.Admin+"/config", "")
			options, _ := jsonBody(t, body)["options"].(map[string]any)
			for k, want := range tc.config {
				if got := options[k]; got != want {
					t.Errorf("GET /config options.%s = %v, want %v", k, got, want)
				}
			}
			s.stop()
			if !strings.Contains(s.Output(), tc.output) {
				t.Errorf("output lacks %q:\n%s", tc.output, s.Output())
			}
		})
	}
	if data, err := os.ReadFile(logfile); err != nil || !strings.Contains(string(data), `now taking orders`) {
		t.Errorf("--log's file transport %s: %v\n%s", logfile, err, data)
	}

	for _, tc := range []struct{ args, want string }{
		{"--impostersRepository ./repo.js", "custom imposters repositories are not supported"},
		{"--formatter ./fmt.js", "only Mountebank's default formatter is supported"},
	} {
		args := append(strings.Fields("start --host 127.0.0.1 "+tc.args), base...)
		out, err := exec.Command(mockdBin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("mockd %s: %v\n%s\nwant an error saying %q", strings.Join(args, " "), err, out, tc.want)
		}
	}
}
