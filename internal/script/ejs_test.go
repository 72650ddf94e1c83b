package script

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRenderEJSMatchesMountebank renders testdata/ejs/imposters.ejs (legacy and function
// includes with data, loops, <%= %> escaping, comments, -%> trimming, <%% literals, stringify and
// inject) and compares the result with what Mountebank 2.9.1's mountebank-formatters produced
// from the same files under node (testdata/ejs/expected.json).
func TestRenderEJSMatchesMountebank(t *testing.T) {
	out, err := RenderEJS("testdata/ejs/imposters.ejs")
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("rendered template is not JSON: %v\n%s", err, out)
	}
	data, err := os.ReadFile("testdata/ejs/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("rendered\n%s\nwant (Mountebank)\n%s", g, data)
	}
}

func TestRenderEJSErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, body, want string
	}{
		{"unclosed.ejs", "{\n\"a\": <%= 1 \n}", "unclosed.ejs:2: could not find matching close tag"},
		{"missing.ejs", "<% include nothere.ejs %>", "nothere.ejs"},
		{"self.ejs", "<%- include('self.ejs') %>", "nest deeper"},
		{"throws.ejs", "<% throw new Error('boom') %>", "boom"},
		// these ended mockd (fatal error: out of memory) before it started
		{"buffer.ejs", "<% new ArrayBuffer(1e11) %>", "Array buffer allocation failed"},
		{"fill.ejs", "<% new Array(1e10).fill(0) %>", "Invalid array length"},
		// these took 30 s and 2 GB, a GB string made in one Go step, and ran past the template's time limit
		{"repeat.ejs", "<%= 'x'.repeat(2e9).length %>", "Invalid string length"},
		// (with V8's string length made 1 MiB below: passing the real one makes 537 MB, which
		// took the race detector past the template's time limit on a loaded machine)
		{"replace.ejs", "<%= 'x'.repeat(1000).replace(/x/g, 'y'.repeat(2000)).length %>", "Invalid string length"},
		{"under.ejs", "<%= 'x'.repeat(1000).replace(/x/g, 'y'.repeat(1000)).length %>", ""},
		{"stringify.ejs", "<% let o = {}; for (let i = 0; i < 40; i++) { o = { a: o, b: o }; } %><%= JSON.stringify(o).length %>", "took longer than"},
	}
	templateMaxString = 1 << 20
	t.Cleanup(func() { templateMaxString = 0 })
	for _, tt := range tests {
		out, err := RenderEJS(write(tt.name, tt.body))
		if tt.want == "" {
			if err != nil || out != "1000000" {
				t.Errorf("%s: %q, %v; want 1000000", tt.name, out, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestRenderEJSWithoutTags checks the shortcut for a file without a tag: it renders to its own
// text, as the runtime renders it, and invalid UTF-8 still takes the runtime's way.
func TestRenderEJSWithoutTags(t *testing.T) {
	dir := t.TempDir()
	for i, body := range []string{"", `{"imposters": [{"port": 4545, "protocol": "http"}]}`, "a %> b < % c\r\n",
		"\u2028 \u00e9 \U0001F600 \\ \" ' ` ${x}", "\xff\xfe not UTF-8"} {
		p := filepath.Join(dir, "t"+string(rune('0'+i))+".json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := RenderEJS(p)
		want, werr := renderTemplate(p)
		if err != nil || werr != nil || got != want {
			t.Errorf("%q: RenderEJS %q (%v), the runtime renders %q (%v)", body, got, err, want, werr)
		}
	}
}

// TestRenderEJSProcessEnv: a template reads the environment through Node's process.env, as
// mb's templates can (Mountebank in Action's listing 6.4 takes a client id from it).
func TestRenderEJSProcessEnv(t *testing.T) {
	t.Setenv("MOCKD_EJS_TEST_ID", "79553235751bfcb87654")
	p := filepath.Join(t.TempDir(), "t.ejs")
	tmpl := `{"id": "<%= process.env.MOCKD_EJS_TEST_ID %>", "unset": "<%= process.env.MOCKD_EJS_UNSET %>", "type": "<%= typeof process.env.MOCKD_EJS_TEST_ID %>"}`
	if err := os.WriteFile(p, []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RenderEJS(p)
	want := `{"id": "79553235751bfcb87654", "unset": "", "type": "string"}`
	if err != nil || got != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}

// TestRenderEJSOutputSemicolon: an output tag may end with a semicolon, which EJS 2 drops.
func TestRenderEJSOutputSemicolon(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.ejs")
	if err := os.WriteFile(p, []byte(`<%- 'a' + 1; %>|<%= "<b>" ;  %>|<%- 2 %>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := RenderEJS(p); err != nil || got != "a1|&lt;b&gt;|2" {
		t.Errorf("got %q (%v)", got, err)
	}
}

func FuzzRenderEJS(f *testing.F) {
	for _, s := range []string{`{"a": "<%= 1 + 1 %>"}`, "<% for (var i=0;i<3;i++) { -%>x<% } %>", "<%% <%# c %> <%- 'raw' _%>  ", "<%", "%>", "<%= %>"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, tmpl string) {
		if strings.Contains(tmpl, "while") || strings.Contains(tmpl, "for") {
			return // loops can run until the time limit; not what this target looks for
		}
		p := filepath.Join(dir, "t.ejs")
		if err := os.WriteFile(p, []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := RenderEJS(p) // must not panic
		if !strings.Contains(tmpl, "<%") {
			// Without a tag, the shortcut and the runtime agree.
			if want, werr := renderTemplate(p); got != want || (err == nil) != (werr == nil) {
				t.Fatalf("%q: RenderEJS %q (%v), the runtime renders %q (%v)", tmpl, got, err, want, werr)
			}
		}
	})
}
