package imposter

import (
	"context"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func TestTemplatedResponses(t *testing.T) {
	im := scenarioImposter(t, `[
		{"predicates":[{"equals":{"path":"/obj"}}],"responses":[{"is":{"template":true,"headers":{"X-Q":"{{request.query.q}}"},"body":{"said":"{{{request.body}}}","n":[1,"{{request.method}}"]}}}]},
		{"responses":[{"is":{"template":true,"statusCode":201,"body":"{{request.path.[0]}}"}}]}
	]`)
	cases := []struct {
		path, body string
		status     int
		want       string
		header     string
	}{
		// An object body stays valid JSON whatever the request holds.
		{"/obj?q=x", `he said "hi"`, 200, "{\n    \"said\": \"he said \\\"hi\\\"\",\n    \"n\": [\n        1,\n        \"GET\"\n    ]\n}", "x"},
		{"/plain/text", "", 201, "plain", ""},
	}
	for _, c := range cases {
		out := templateAnswer(t, im, c.path, c.body)
		if int(out.status) != c.status || string(out.body) != c.want {
			t.Errorf("%s: got %d %q, want %d %q", c.path, out.status, out.body, c.status, c.want)
		}
		if c.header != "" && (len(out.headers) != 1 || out.headers[0].value != c.header) {
			t.Errorf("%s: headers %v, want X-Q: %s", c.path, out.headers, c.header)
		}
	}
}

// TestTemplateRenderedEmptyLatin1: a header value past ASCII in an answer with a Content-Length
// goes out as UTF-8 when the template's body renders text and as Latin-1 when it renders empty,
// as node writes the header block of an answer with an empty body on its own (Mountebank sends
// `grün` as gr\xfcn then); the stub's compiled lines stay as they were.
func TestTemplateRenderedEmptyLatin1(t *testing.T) {
	im := scenarioImposter(t, `[
		{"predicates":[{"equals":{"path":"/len"}}],"responses":[{"is":{"template":true,"headers":{"Content-Length":"3","X-A":"grün"},"body":"{{request.query.q}}"}}]},
		{"responses":[{"is":{"template":true,"headers":{"X-A":"grün"},"body":"{{request.query.q}}"}}]}
	]`)
	for _, c := range []struct {
		path  string
		latin bool
	}{
		{"/len?q=abc", false}, {"/len?q=", true}, {"/len?q=x", false}, {"/nolen?q=abc", true}, {"/nolen?q=", true},
	} {
		out := templateAnswer(t, im, c.path, "")
		var got []string
		latin := false
		for _, h := range out.headers {
			if h.name == "X-A" {
				latin = h.wide
			}
			got = append(got, h.name+": "+Latin1(h.value))
		}
		if latin != c.latin {
			t.Errorf("%s (body %q): X-A as Latin-1 %v, want %v (%q)", c.path, out.body, latin, c.latin, got)
		}
	}
}

func TestTemplateOnTCPIsRefused(t *testing.T) {
	def, errs := config.ParseImposter(mustJSON(t, `{"protocol":"tcp","port":4545,"stubs":[{"responses":[{"is":{"template":true,"data":"{{request.body}}"}}]}]}`), config.ParseOptions{})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if _, err := New(def, Options{}); err == nil || !strings.Contains(err.Error(), "templates apply to http and https imposters") {
		t.Errorf("a template on a tcp imposter: %v", err)
	}
}

// templateAnswer is im's answer to a GET of target (a path and query) with body.
func templateAnswer(t *testing.T, im *Imposter, target, body string) *wire {
	t.Helper()
	path, query, _ := strings.Cut(target, "?")
	req := &request.Request{Method: "GET", Path: path, Body: body, Query: request.ParseQuery(nil, query)}
	_, resp, _, _, err := im.resolve(im.tbl.Load(), req)
	if err != nil {
		t.Fatal(err)
	}
	out, _, perr := im.produce(context.Background(), req, resp, nil)
	if perr != nil {
		t.Fatal(perr)
	}
	return out
}
