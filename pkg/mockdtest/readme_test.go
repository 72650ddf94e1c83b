package mockdtest_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mockd/mockd/pkg/mockdtest"
)

// TestUserPage is the README's Go test example, word for word (TestREADMEExample checks that).
func TestUserPage(t *testing.T) {
	srv := mockdtest.New(t, mockdtest.YAML(`
imposters:
  - name: users
    protocol: http
    stubs:
      - predicates: [{equals: {method: GET, path: /users/42}}]
        responses: [{is: {statusCode: 200, body: '{"id": 42}'}}]
`))
	resp, err := http.Get(srv.URL("users") + "/users/42") // the code under test calls this URL
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(resp, err)
	}
	srv.AssertCalled(t, srv.Port("users"), "GET", "/users/42", 1)
}

// TestREADMEExample keeps the README's Go snippets (Quick start, Go tests) the same as
// TestUserPage, which runs them: every line of each snippet, but imports, is a line of
// TestUserPage, in the same order.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	const start = "func TestUserPage(t *testing.T) {\n"
	i := strings.Index(string(self), start)
	j := strings.Index(string(self)[i:], "\n}\n")
	fn := strings.Split(string(self)[i:i+j+3], "\n")
	blocks := strings.Split(string(readme), "```go\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("README.md has %d Go snippets, want the Quick start's and the Go tests section's", len(blocks))
	}
	for n, block := range blocks {
		block = block[:strings.Index(block, "```")]
		k := 0
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "import ") {
				continue
			}
			for k < len(fn) && strings.TrimSpace(fn[k]) != line {
				k++
			}
			if k == len(fn) {
				t.Errorf("README.md Go snippet %d: line %q is not in TestUserPage (in this order)", n+1, line)
				break
			}
		}
	}
}
