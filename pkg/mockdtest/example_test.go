package mockdtest_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/mockd/mockd/pkg/mockdtest"
)

// A test starts mockd with mockdtest.New(t, …) and it stops with the test; outside a test
// (here, an Example) Start and Close do the same.
func Example() {
	srv, err := mockdtest.Start(mockdtest.YAML(`
imposters:
  - name: users
    protocol: http
    stubs:
      - predicates: [{equals: {method: GET, path: /users/42}}]
        responses:
          - is: {statusCode: 200, body: '{"id": 42, "name": "Ada"}'}
`))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	resp, err := http.Get(srv.URL("users") + "/users/42")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	fmt.Println("calls:", srv.CountRequests(srv.Port("users"), "GET", "/users/42"))
	// Output:
	// 200 {"id": 42, "name": "Ada"}
	// calls: 1
}
