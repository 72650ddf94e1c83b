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

// TestREADMEExample keeps the README's Go snippets the same as the tests that run them.
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
	fn := string(self)[i : i+j+3]
	if n := strings.Count(string(readme), fn); n < 1 {
		t.Errorf("README.md does not show TestUserPage as readme_test.go has it:\n%s", fn)
	}
}
