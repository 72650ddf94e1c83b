package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

func writeFile(t *testing.T, dir, name, body string) string {
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

// stubsOf returns the imported stubs as compact JSON lines.
func stubsOf(t *testing.T, res *Result) []string {
	t.Helper()
	imp := config.AsObject(get(res.Config, "imposters").([]any)[0])
	var out []string
	for _, s := range get(imp, "stubs").([]any) {
		out = append(out, string(config.MarshalJSON(s, 0)))
	}
	return out
}

func notesOf(res *Result) string {
	var b strings.Builder
	for _, n := range res.Notes {
		b.WriteString(n.String() + "\n")
	}
	return b.String()
}

func TestOpenAPI31GeneratesFromSchema(t *testing.T) {
	spec := `openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "https://example.com/api/v1"}]
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Item"}
        "404": {description: missing}
  /items/mine:
    get:
      responses:
        default:
          description: any
          content:
            text/plain:
              example: mine
components:
  schemas:
    Item:
      type: object
      properties:
        id: {type: [integer, "null"], minimum: 3}
        when: {type: string, format: date-time}
        tags: {type: array, items: {type: string, enum: [a, b]}}
        secret: {type: string, writeOnly: true}
`
	file := writeFile(t, t.TempDir(), "spec.yaml", spec)
	res, err := OpenAPI(file, OpenAPIOptions{Port: 4545, ServerPath: true})
	if err != nil {
		t.Fatal(err)
	}
	got := stubsOf(t, res)
	want := []string{
		`{"predicates":[{"equals":{"method":"GET"}},{"equals":{"path":"/api/v1/items/mine"},"caseSensitive":true}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"mine"}}]}`,
		`{"predicates":[{"equals":{"method":"GET"}},{"matches":{"path":"^/api/v1/items/[^/]+$"},"caseSensitive":true},{"contains":{"headers":{"Prefer":"code=404"}}}],"responses":[{"is":{"statusCode":404}}]}`,
		`{"predicates":[{"equals":{"method":"GET"}},{"matches":{"path":"^/api/v1/items/[^/]+$"},"caseSensitive":true}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":{"id":3,"when":"2026-01-01T00:00:00Z","tags":["a"]}}}]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stubs\n got: %s\nwant: %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A request the document does not describe: 404, as Prism answers it.
	if imp := string(config.MarshalJSON(res.Config, 0)); !strings.Contains(imp, `"defaultResponse":{"statusCode":404}`) {
		t.Errorf("imposter without a 404 defaultResponse: %s", imp)
	}
}

func TestOpenAPIRejectsOtherDocuments(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"swagger.yaml": "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n",
		"junk.yaml":    "just: text\n",
	} {
		if _, err := OpenAPI(writeFile(t, dir, name, body), OpenAPIOptions{}); err == nil {
			t.Errorf("%s: imported without an error", name)
		}
	}
}

// TestOpenAPIReferences follows $refs within the document and into a file beside it (a
// parameter, a response, a schema that refers on within that file), and notes, with file and
// line, one that names nothing and a circular one; the document's other stubs are imported.
func TestOpenAPIReferences(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sub/common.yaml", `components:
  parameters:
    Limit: {name: limit, in: query, required: true, schema: {type: integer}}
  responses:
    NotFound:
      description: nf
      headers: {X-Why: {schema: {$ref: '#/components/schemas/Why'}}}
      content: {application/json: {schema: {$ref: '#/components/schemas/Err'}}}
  schemas:
    Err: {type: object, properties: {code: {type: integer, minimum: 404}, why: {$ref: '#/components/schemas/Why'}}}
    Why: {type: string, enum: [gone]}
`)
	file := writeFile(t, dir, "api.yaml", `openapi: 3.0.3
info: {title: refs, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: 'sub/common.yaml#/components/parameters/Limit'}]
      responses:
        '200': {$ref: '#/components/responses/Ok'}
        '404': {$ref: 'sub/common.yaml#/components/responses/NotFound'}
  /b:
    get:
      responses:
        '200': {description: b, content: {application/json: {schema: {$ref: '#/components/schemas/Missing'}}}}
  /c:
    get:
      responses:
        '200': {description: c, content: {application/json: {schema: {$ref: '#/components/schemas/Loop'}}}}
components:
  responses:
    Ok: {description: ok, content: {application/json: {example: {ok: true}}}}
  schemas:
    Loop: {$ref: '#/components/schemas/Pool'}
    Pool: {$ref: '#/components/schemas/Loop'}
`)
	res, err := OpenAPI(file, OpenAPIOptions{Port: 1, Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(stubsOf(t, res), "\n")
	for _, want := range []string{
		`{"exists":{"query":{"limit":false}}}],"responses":[{"is":{"statusCode":400,`,
		`"responses":[{"is":{"statusCode":404,"headers":{"Content-Type":"application/json","X-Why":"gone"},"body":{"code":404,"why":"gone"}}}]}`,
		`"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":{"ok":true}}}]}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stubs lack %s:\n%s", want, got)
		}
	}
	if res.Stubs != 6 {
		t.Errorf("%d stubs, want 6 (validation, 404, 200 of /a; /b; /c):\n%s", res.Stubs, got)
	}
	notes := notesOf(res)
	for _, want := range []string{
		file + `:13: $ref "#/components/schemas/Missing": no such place in api.yaml`,
		file + `:17: $ref "#/components/schemas/Loop": circular reference`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestOpenAPIVersions(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n": "OpenAPI 2.0 is not supported (3.0 and 3.1 are)",
		"openapi: 3.2.0\npaths: {}\n":                                 "OpenAPI 3.2.0 is not supported (3.0 and 3.1 are)",
		"just: text\n":                                                "not an OpenAPI document",
		"- a\n":                                                       "not an OpenAPI document",
		"":                                                            "not an OpenAPI document",
		"{\"openapi\": \"3.0.0\", \"paths\": {\"/a\\/b\": {}}}": "",
	} {
		_, err := OpenAPI(writeFile(t, dir, "api.yaml", body), OpenAPIOptions{})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
}

func TestWireMockMappings(t *testing.T) {
	cases := []struct {
		name, mapping string
		want          string // the stub as compact JSON
		note          string // a note that must be printed ("" = none)
	}{
		{"url and query", `{"request":{"method":"ANY","url":"/a?x=1&x=2"},"response":{"status":204}}`,
			`{"predicates":[{"equals":{"path":"/a"},"caseSensitive":true},{"deepEquals":{"query":{"x":["1","2"]}},"caseSensitive":true}],"responses":[{"is":{"statusCode":204}}]}`, ""},
		{"header patterns", `{"request":{"urlPathTemplate":"/u/{id}","headers":{"A":{"contains":"x","caseInsensitive":true},"B":{"doesNotMatch":"y.*"}}},"response":{}}`,
			`{"predicates":[{"matches":{"path":"^/u/[^/]+$"},"caseSensitive":true},{"contains":{"headers":{"A":"x"}}},{"not":{"matches":{"headers":{"B":"^(?:y.*)$"}},"caseSensitive":true}}],"responses":[{"is":{"statusCode":200}}]}`, ""},
		{"basic auth and xpath", `{"request":{"basicAuthCredentials":{"username":"u","password":"p"},"bodyPatterns":[{"matchesXPath":{"expression":"//a","contains":"z"}}]},"response":{"base64Body":"AAE="}}`,
			`{"predicates":[{"equals":{"headers":{"Authorization":"Basic dTpw"}},"caseSensitive":true},{"contains":{"body":"z"},"xpath":{"selector":"//a"},"caseSensitive":true}],"responses":[{"is":{"statusCode":200,"body":"AAE=","_mode":"binary"}}]}`, ""},
		{"fault and unknown keys", `{"request":{"multipartPatterns":[]},"response":{"fault":"MALFORMED_RESPONSE_CHUNK","delayDistribution":{}},"postServeActions":[]}`,
			`{"responses":[{"is":{"statusCode":200}}]}`, `request.multipartPatterns: request matching on "multipartPatterns" not carried over`},
		{"proxy", `{"request":{"urlPattern":"/p/.*"},"response":{"proxyBaseUrl":"http://127.0.0.1:9"}}`,
			`{"predicates":[{"matches":{"path":"^(?:/p/.*)$"},"caseSensitive":true}],"responses":[{"proxy":{"to":"http://127.0.0.1:9","mode":"proxyTransparent"}}]}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "m.json", c.mapping)
			res, err := WireMock(file, WireMockOptions{Port: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := stubsOf(t, res); len(got) != 1 || got[0] != c.want {
				t.Errorf("stub\n got: %v\nwant: %s", got, c.want)
			}
			// WireMock's 404 for a request no mapping matches.
			if imp := string(config.MarshalJSON(res.Config, 0)); !strings.Contains(imp, `"defaultResponse":{"statusCode":404}`) {
				t.Errorf("imposter without a 404 defaultResponse: %s", imp)
			}
			notes := notesOf(res)
			if c.note == "" && notes != "" || !strings.Contains(notes, c.note) {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
		})
	}
}

func TestWireMockNotesEveryUnknownKey(t *testing.T) {
	file := writeFile(t, t.TempDir(), "m.json",
		`{"request":{"cookies":{}},"response":{"fault":"MALFORMED_RESPONSE_CHUNK","delayDistribution":{}},"postServeActions":[]}`)
	res, err := WireMock(file, WireMockOptions{Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	notes := notesOf(res)
	for _, want := range []string{"m.json:1: postServeActions:", "request.cookies:", `fault "MALFORMED_RESPONSE_CHUNK"`, "response.delayDistribution:"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// FuzzWireMock feeds arbitrary mapping files to the WireMock import: it must never panic, and
// what it writes must be YAML mockd reads back.
func FuzzWireMock(f *testing.F) {
	f.Add(`{"request":{"method":"GET","url":"/a?b=c"},"response":{"status":200,"jsonBody":{"a":[1]}}}`)
	f.Add(`{"mappings":[{"request":{"bodyPatterns":[{"equalToJson":"{\"a\":1}"},{"matchesJsonPath":{"expression":"$.a","matches":"x"}}]},"response":{"fixedDelayMilliseconds":5}}]}`)
	f.Add(`{"request":{"queryParameters":{"q":{"absent":true}}},"response":{"bodyFileName":"x"}}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, mapping string) {
		file := filepath.Join(dir, "m.json")
		if err := os.WriteFile(file, []byte(mapping), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := WireMock(file, WireMockOptions{Port: 1})
		checkImported(t, res, err)
	})
}

// checkImported fails t when an import that succeeded wrote YAML mockd cannot read back.
func checkImported(t *testing.T, res *Result, err error) {
	t.Helper()
	if err != nil {
		return
	}
	data, err := res.YAML("fuzz")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.ParseYAML(data); err != nil {
		t.Fatalf("imported YAML does not parse: %v\n%s", err, data)
	}
}

// FuzzOpenAPI feeds arbitrary documents to the OpenAPI import (oas.go reads them; the
// import walks the model, builds values from schemas and predicates from parameters): it must
// never panic, and what it writes must be YAML mockd reads back.
func FuzzOpenAPI(f *testing.F) {
	f.Add("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /p/{id}:\n    get:\n      parameters: [{name: id, in: path, required: true, schema: {type: integer}}, {name: q, in: query, required: true, schema: {type: string, enum: [a, b], pattern: '^[ab]$'}}]\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {type: object, required: [a], properties: {a: {type: string, format: date-time}, b: {type: array, items: {$ref: '#/components/schemas/B'}}}}}}}\n        '404': {description: no}\ncomponents:\n  schemas:\n    B: {allOf: [{type: object, properties: {x: {type: number}}}, {oneOf: [{type: boolean}, {$ref: '#/components/schemas/B'}]}]}\n")
	f.Add(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"post":{"requestBody":{"required":true,"content":{"application/json":{"schema":{"type":["object","null"],"required":["n"],"properties":{"n":{"type":"integer"}}}}}},"responses":{"201":{"description":"c","headers":{"X-A":{"schema":{"type":"string"},"example":"v"}},"content":{"application/json":{"examples":{"e":{"value":{"n":1}}}}}}}}}}}`)
	f.Add("openapi: 3.0.0\npaths: {/x: {get: {responses: {default: {description: d}}}}}\n")
	if petstore, err := os.ReadFile("../../test/e2e/testdata/openapi/petstore.yaml"); err == nil {
		f.Add(string(petstore))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc string) {
		file := filepath.Join(dir, "api.yaml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := OpenAPI(file, OpenAPIOptions{Port: 1, Validate: true, ServerPath: true})
		checkImported(t, res, err)
	})
}
