package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runImport runs `mockd import ARGS... -o DIR/stubs.yaml --port PORT` and returns the file
// written and what mockd printed on standard error.
func runImport(t *testing.T, port int, args ...string) (file, notes string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "stubs.yaml")
	full := append(append([]string{"import"}, args...), "-o", file, "--port", strconv.Itoa(port))
	cmd := exec.Command(mockdBin, full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("mockd %s: %v\n%s%s", strings.Join(full, " "), err, out, stderr.String())
	}
	return file, stderr.String()
}

// TestImportOpenAPIPetstore imports the Swagger Petstore 3.0 document (testdata/openapi,
// Apache-2.0) with --validate, serves it and exercises it.
func TestImportOpenAPIPetstore(t *testing.T) {
	port := listenFree(t)
	file, notes := runImport(t, port, "openapi", "testdata/openapi/petstore.yaml", "--validate")
	// What cannot be carried over is listed with file and line.
	for _, want := range []string{
		"petstore.yaml:66: paths./pet.put.responses.200.content.application/xml: no example for application/xml",
		"petstore.yaml:333: paths./pet/{petId}/uploadImage.post.requestBody.content.application/octet-stream: application/octet-stream request bodies not validated",
		"mockd: import: 90 stubs;",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("import notes lack %q:\n%s", want, notes)
		}
	}
	s := start(t, "-c", file)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cases := []struct {
		method, path, body string
		headers            []string
		status             int
		contains           string
	}{
		// The documented example of the Pet schema, built property by property from the schema.
		{"GET", "/pet/10", "", nil, 200, `"name": "doggie"`},
		{"GET", "/pet/10", "", nil, 200, `"photoUrls": [`},
		// A literal path is not shadowed by the templated one.
		{"GET", "/pet/findByStatus?status=sold", "", nil, 200, `"status": "available"`},
		// Other documented responses are chosen with Prefer.
		{"GET", "/pet/10", "", []string{"Prefer", "code=404"}, 404, ""},
		{"GET", "/user/login?username=a&password=b", "", nil, 200, `"string"`},
		// Validation: a path parameter of the wrong type, an enum, a required body property.
		{"GET", "/pet/abc", "", nil, 400, `"message": "must be an integer"`},
		{"GET", "/pet/findByStatus?status=bogus", "", nil, 400, "must be one of: available, pending, sold"},
		{"POST", "/pet", `{"id": 1, "photoUrls": []}`, nil, 400, `"name": "name"`},
		{"POST", "/pet", `{"id": "x", "name": "rex", "photoUrls": []}`, nil, 400, `"message": "must be an integer"`},
		{"POST", "/pet", "", nil, 400, "request body is required"},
		{"POST", "/pet", `{"id": 1, "name": "rex", "photoUrls": []}`, nil, 200, `"id": 10`},
		{"DELETE", "/pet/10", "", nil, 200, ""},
		// What the document does not describe: 404, as Prism and WireMock answer (Mountebank's
		// default is 200).
		{"GET", "/no/such/path", "", nil, 404, ""},
		{"PATCH", "/pet/10", "", nil, 404, ""},
	}
	for _, c := range cases {
		status, hdr, body := do(t, c.method, base+c.path, c.body, c.headers...)
		if status != c.status || !strings.Contains(body, c.contains) {
			t.Errorf("%s %s %v: got %d %s\nwant %d containing %q", c.method, c.path, c.headers, status, body, c.status, c.contains)
		}
		if c.status == 200 && c.contains != "" && hdr.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", c.method, c.path, hdr.Get("Content-Type"))
		}
	}
	_ = s
}

// TestImportWireMockMappings imports a WireMock root directory (mappings/ and __files/) and
// serves it.
func TestImportWireMockMappings(t *testing.T) {
	port := listenFree(t)
	file, notes := runImport(t, port, "wiremock", "testdata/wiremock")
	for _, want := range []string{
		filepath.Join("mappings", "users.json") + `:25: mappings[5].request.cookies: request matching on "cookies" not carried over`,
		"mockd: import: 11 stubs; 1 thing not carried over",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("import notes lack %q:\n%s", want, notes)
		}
	}
	start(t, "-c", file)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cases := []struct {
		method, path, body string
		headers            []string
		status             int
		want               string
	}{
		{"GET", "/users/42", "", nil, 200, `"name": "Ada"`},
		// priority 1 goes first.
		{"GET", "/users/42", "", []string{"X-Fail", "yes"}, 503, "down"},
		{"GET", "/users/7", "", nil, 404, `{"error": "no such user"}`},
		{"GET", "/search?q=mock&page=2", "", nil, 200, "page two"},
		{"GET", "/search?page=2&q=mock&x=1", "", nil, 200, "results"},
		// No mapping matches: 404, as WireMock answers (Mountebank's default is 200).
		{"GET", "/search?q=mock&debug=1", "", nil, 404, ""},
		// The response-template transformer: the body is a template.
		{"POST", "/orders", `{"customer": "ada", "items": [1, 2]}`, nil, 201, `"customer": "ada",`},
		{"POST", "/orders", `{"customer": "ada", "items": [1, 2]}`, nil, 201, `"items": "2"`},
		{"POST", "/orders", `{"customer": "bob", "items": [1]}`, nil, 404, ""},
		{"POST", "/login", "user=ada&pw=x", nil, 200, "welcome"},
		// WireMock's documented to-do list scenario.
		{"GET", "/todo/items", "", nil, 200, "<items><item>Buy milk</item></items>"},
		{"POST", "/todo/items", "<item>Cancel newspaper subscription</item>", nil, 201, ""},
		{"GET", "/todo/items", "", nil, 200, "<item>Cancel newspaper subscription</item></items>"},
	}
	for _, c := range cases {
		status, _, body := do(t, c.method, base+c.path, c.body, c.headers...)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %v: got %d %q, want %d containing %q", c.method, c.path, c.headers, status, body, c.status, c.want)
		}
	}
	data, _ := os.ReadFile(file)
	for _, want := range []string{"bodyFile: ", "- wait: 50"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("imported YAML lacks %q:\n%s", want, data)
		}
	}
}
