package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestConfigfileEJS starts mockd with a Mountebank EJS config file (include and stringify), and
// checks --noParse reads the same file as plain JSON, which then fails.
func TestConfigfileEJS(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	root := write(t, dir, "imposters.ejs", `{"imposters": [<% include imposter.ejs %>]}`)
	write(t, dir, "imposter.ejs", fmt.Sprintf(`{"port": %d, "protocol": "http", "stubs": [
		<%% ["a", "b"].forEach(function (name, i) { -%%>
		{"predicates": [{"equals": {"path": "/<%%= name %%>"}}], "responses": [{"is": {"body": "<%%- stringify(filename, 'bodies/' + name + '.txt') %%>"}}]},
		<%% }) -%%>
		{"responses": [{"is": {"statusCode": 404}}]}]}`, port))
	write(t, dir, "bodies/a.txt", "line one\n\"a\"\n")
	write(t, dir, "bodies/b.txt", "b")
	start(t, "--configfile", root)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for path, want := range map[string]string{"/a": "line one\n\"a\"", "/b": "b"} {
		if _, _, body := do(t, "GET", base+path, ""); body != want {
			t.Errorf("GET %s = %q, want %q", path, body, want)
		}
	}
	if status, _, _ := do(t, "GET", base+"/c", ""); status != 404 {
		t.Errorf("GET /c = %d, want 404", status)
	}

	_, err := tryStart(t, "--configfile", filepath.Join(dir, "imposter.ejs"), "--noParse")
	if err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("--noParse with an EJS file: want an invalid JSON config error, got %v", err)
	}
}
