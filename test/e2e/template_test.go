package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTemplatesAsWireMockDocuments serves templates from WireMock's response templating page
// and checks what each renders; the expected outputs are written by hand from that page.
func TestTemplatesAsWireMockDocuments(t *testing.T) {
	cases := []struct {
		tpl                string
		method, path, body string
		headers            []string
		want               string // exact, or a regular expression when re is set
		re                 bool
	}{
		{"{{request.path.[0]}}", "GET", "/templated", "", nil, "templated", false},
		{"{{request.pathSegments.[1]}}", "GET", "/static/file.json", "", nil, "file.json", false},
		{"{{request.query.things}} {{request.query.things.1}} {{request.query.things.last}}", "GET", "/multi-query?things=1&things=2&things=3", "", nil, "1 2 3", false},
		{"{{lookup request.query 'ids[].1'}}", "GET", "/stuff?ids[]=111&ids[]=222&ids[]=333", "", nil, "222", false},
		{"{{request.method}} {{request.headers.X-Request-Id}}", "POST", "/h", "", []string{"X-Request-Id", "abc-1"}, "POST abc-1", false},
		{"{{xPath request.body '/outer/inner/text()'}}", "POST", "/x", "<outer>\n    <inner>Stuff</inner>\n</outer>", nil, "Stuff", false},
		{"{{soapXPath request.body '/a/test/text()'}}", "POST", "/soap", `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope/"><soap:Body><m:a xmlns:m="urn:m"><m:test>success</m:test></m:a></soap:Body></soap:Envelope>`, nil, "success", false},
		{"{{jsonPath request.body '$.outer.inner'}}", "POST", "/j", `{"outer": {"inner": "Stuff"}}`, nil, "Stuff", false},
		{"{{jsonPath request.body '$.size' default='M'}}", "POST", "/j", `{"outer": {}}`, nil, "M", false},
		{"{{toJson (array 1 2 3)}}", "GET", "/", "", nil, "[ 1, 2, 3 ]", false},
		{`{{#formatJson}}{"foo":true,"bar":{"baz":false}}{{/formatJson}}`, "GET", "/", "", nil, "{\n  \"foo\" : true,\n  \"bar\" : {\n    \"baz\" : false\n  }\n}", false},
		{"{{now offset='10 years' format='yyyy-MM-dd'}}", "GET", "/", "", nil, `^20[3-9][0-9]-[01][0-9]-[0-3][0-9]$`, true},
		{"{{now format='epoch'}}", "GET", "/", "", nil, `^[0-9]{13}$`, true},
		{"{{randomValue length=33 type='ALPHANUMERIC'}}", "GET", "/", "", nil, `^[a-z0-9]{33}$`, true},
		{"{{randomValue type='UUID'}}", "GET", "/", "", nil, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, true},
		{"{{randomInt lower=5 upper=9}}", "GET", "/", "", nil, `^[5-8]$`, true},
		{"{{math 1 '+' 2}} {{math 8 '/' 2}} {{math 10 '%' 3}}", "GET", "/", "", nil, "3 4 1", false},
		{"{{range 3 8}}", "GET", "/", "", nil, "[3, 4, 5, 6, 7, 8]", false},
		{"{{arrayJoin ',' (array 'One' 'Two' 'Three') prefix='[' suffix=']'}}", "GET", "/", "", nil, "[One,Two,Three]", false},
		{"{{#if (contains 'abcde' 'abc')}}YES{{/if}} {{#matches '123' '[0-9]+'}}YES{{/matches}}", "GET", "/", "", nil, "YES YES", false},
		{"{{regexExtract request.body '([a-z]+)-([A-Z]+)-([0-9]+)' 'parts'}}{{parts.0}},{{parts.1}},{{parts.2}}", "POST", "/", "abc-DEF-123", nil, "abc,DEF,123", false},
		{"{{size 'abcde'}} {{size request.query.things}}", "GET", "/?things=1&things=2", "", nil, "5 2", false},
		{"{{val request.query.search or='default'}}", "GET", "/", "", nil, "default", false},
		{"{{val 10 assign='myVar'}}{{#lt myVar 20}}Less Than{{else}}More Than{{/lt}}", "GET", "/", "", nil, "Less Than", false},
		{"{{#assign 'q'}}{{capitalize request.query.search}}{{/assign}}{{q}}", "GET", "/?search=mock+server", "", nil, "Mock Server", false},
		{"{{isOdd 3}} {{isEven 4 'leftBox'}}", "GET", "/", "", nil, "odd leftBox", false},
		{"{{formData request.body 'form' urlDecode=true}}{{form.formField3}}", "POST", "/", "formField1=a&formField3=x%20y", nil, "x y", false},
		{"{{trim request.headers.X-Padded-Header}}", "GET", "/", "", []string{"X-Padded-Header", "  padded  "}, "padded", false},
		{"{{#each (range 0 2) as |index|}}id: {{index}} {{/each}}", "GET", "/", "", nil, "id: 0 id: 1 id: 2 ", false},
		{"{{request.port}}", "GET", "/", "", nil, "PORT", false},
	}
	port := listenFree(t)
	var stubs []string
	for i, c := range cases {
		body, _ := json.Marshal(c.tpl)
		stubs = append(stubs, fmt.Sprintf(`{"predicates":[{"equals":{"headers":{"X-Case":"%d"}}}],"responses":[{"is":{"template":true,"body":%s}}]}`, i, body))
	}
	file := filepath.Join(t.TempDir(), "templates.json")
	cfg := fmt.Sprintf(`{"imposters":[{"port":%d,"protocol":"http","stubs":[%s]}]}`, port, strings.Join(stubs, ","))
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, "-c", file)
	for i, c := range cases {
		headers := append([]string{"X-Case", strconv.Itoa(i)}, c.headers...)
		status, _, got := do(t, c.method, fmt.Sprintf("http://127.0.0.1:%d%s", port, c.path), c.body, headers...)
		want := strings.ReplaceAll(c.want, "PORT", strconv.Itoa(port))
		ok := got == want
		if c.re {
			ok = regexp.MustCompile(want).MatchString(got)
		}
		if status != 200 || !ok {
			t.Errorf("%s on %s %s: got %d %q, want %q", c.tpl, c.method, c.path, status, got, want)
		}
	}
}

// TestTemplateErrors: a template that does not compile is refused with Mountebank's error shape,
// in a config file (with its line) and through the API; one that fails for a request fails that
// request only.
func TestTemplateErrors(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	bad := filepath.Join(dir, "bad.yaml")
	yaml := fmt.Sprintf("imposters:\n  - port: %d\n    protocol: http\n    stubs:\n      - responses:\n          - is: {template: true, body: \"{{#if x}}open\"}\n", port)
	if err := os.WriteFile(bad, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tryStart(t, "-c", bad); err == nil || !strings.Contains(err.Error(), bad+":6:13: imposters[0].stubs[0].responses[0].is: template body: line 1, column 1: {{#if}} is not closed") {
		t.Errorf("config error does not name the template's place: %v", err)
	}
	s := start(t)
	status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"port":%d,"protocol":"http","stubs":[{"responses":[{"is":{"template":true,"body":"{{nosuch 1}}"}}]}]}`, port))
	if status != 400 || !strings.Contains(body, `"code": "bad data"`) || !strings.Contains(body, `unknown helper \"nosuch\"`) {
		t.Errorf("bad template through the API: %d %s", status, body)
	}
	status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"port":%d,"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/fail"}}],"responses":[{"is":{"template":true,"body":"{{regexExtract request.body '[0-9]+'}}"}}]},{"responses":[{"is":{"body":"fine"}}]}]}`, port))
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if status, _, body := do(t, "POST", base+"/fail", "no digits"); status != 500 || !strings.Contains(body, "cannot render the response template") {
		t.Errorf("failing render: %d %s", status, body)
	}
	if status, _, body := do(t, "GET", base+"/", ""); status != 200 || body != "fine" {
		t.Errorf("after a failing render: %d %s", status, body)
	}
}
