package hbs

import (
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// renderBoth renders src for r with the fast paths (request fields written directly, jsonPath
// of the body scanned) and by the general route.
func renderBoth(tb testing.TB, src string, r *request.Request) (fast, general string, fastErr, generalErr error, ok bool) {
	tb.Helper()
	tpl, err := Parse(src)
	if err != nil {
		return "", "", nil, nil, false
	}
	out, fastErr := tpl.Render(nil, &Model{Request: r, Port: 4545, Scheme: "http"})
	fastPaths = false
	defer func() { fastPaths = true }()
	gen, generalErr := tpl.Render(nil, &Model{Request: r, Port: 4545, Scheme: "http"})
	return string(out), string(gen), fastErr, generalErr, true
}

// fastTemplates are templates of the request's fields and of jsonPath, where key is a path
// index, a query or header name or a JSON member name: top level (the fast paths) and in
// blocks that rename or hide request (the general route either way).
func fastTemplates(key string) []string {
	return []string{
		"{{request.method}}|{{request.path}}|{{{request.path}}}|{{request.body}}|{{{request.body}}}",
		"{{request.path.[" + key + "]}}|{{{request.path.[" + key + "]}}}",
		"{{request.query.[" + key + "]}}|{{{request.query.[" + key + "]}}}|{{request.headers.[" + key + "]}}|{{{request.headers.[" + key + "]}}}",
		"{{request.path." + key + "}}|{{request.query." + key + "}}|{{request.headers." + key + "}}",
		"{{jsonPath request.body '$." + key + "'}}|{{jsonPath request.body '$.a." + key + "' default='D'}}|{{jsonPath request.body \"$['" + key + "']\"}}",
		"{{jsonPath request.body '$.a." + key + "'}}|{{{jsonPath request.body '$.a." + key + "'}}}|{{{jsonPath request.body '$." + key + "'}}}",
		// A plan whose field the scan leaves to the parse goes on by runPlanGeneral: fields
		// and text after it, a last step of text alone.
		"<{{jsonPath request.body '$." + key + "'}}|{{request.method}}|{{jsonPath request.body '$.a." + key + "'}}|{{request.headers.X-Trace}}>",
		"{{jsonPath request.body '$.." + key + "'}}|{{jsonPath request.body '$'}}",
		"{{#if (jsonPath request.body '$." + key + "')}}T{{else}}F{{/if}}|{{size (jsonPath request.body '$." + key + "')}}|{{toJson (jsonPath request.body '$." + key + "')}}",
		"{{math (jsonPath request.body '$." + key + "') '+' 1}}|{{eq (jsonPath request.body '$." + key + "') 1}}|{{eq (jsonPath request.body '$." + key + "') '1'}}",
		"{{#each request.query.[" + key + "]}}{{request.path.[1]}}{{this}}{{/each}}|{{#with request}}{{request.method}}{{path.[1]}}{{/with}}",
		"{{#each (array 'x') as |request|}}{{request.method}}{{request.path.[0]}}{{/each}}|{{request.headers.X-Trace}}",
		"{{eq request.method 'POST'}}|{{size request.body}}|{{upper request.method}}|{{#each (array 'x') as |request|}}{{size request.body}}{{upper request.method}}{{/each}}|{{#with request}}{{size body}}{{/with}}",
		"{{assign 'request' 'v'}}{{request.method}}{{#each (array 1)}}{{request.method}}{{jsonPath ../request.body '$.name'}}{{/each}}",
	}
}

var fastRequests = []*request.Request{
	req("POST", "/users/42?q=x&q=y&Q=z&e=", `{"name":"Ada","tags":[1,2,3],"a":{"b":"<&>\"'=`+"`"+`","1":1.5,"n":null,"t":true,"f":false,"o":{}}}`,
		"X-Trace", "t-1", "x-trace", "t-2", "Content-Type", "application/json", "X-Esc", `<a href="x">'&'</a>`),
	req("GET", "/", "", "Host", "h"),
	req("get", "//a//b/", `{"name":"\u00e9","name2":1e3,"a":{"b":1,"b":2}}`),
	req("PUT", "/a/b/c/d/e?first=1&last=2&1=one", `{"a":[1,2],"b":{"c":"d"},"name":12345678901234567890}`, "first", "F"),
	req("POST", "/x", `not json {"name":"x"}`),
	req("POST", "/x", ` {"name" : "A d a" , "a" : { "b" : -0.5 } } `),
	req("POST", "/x", `{"name":"Ada"} trailing`),
	req("POST", "/x", `["name"]`),
	req("POST", "/x", `{"name":"a\nb","a":{"b":"\ud83d\ude00"}}`),
	req("POST", "/x", `{"Name":"upper","name":-0,"a":{"B":2}}`),
	{Method: "POST", Path: "/x", Body: "", BodyMissing: true},
}

var fastKeys = []string{"0", "1", "2", "-1", "-2", "-9", "9", "first", "last", "size", "length", "+1", "01", "q", "Q", "e", "x",
	"X-TRACE", "x-trace", "x-esc", "host", "missing", "name", "Name", "name2", "a", "b", "tags", "n", "t", "f", "o", "", "é"}

// TestFastPaths: what the fast paths write is what the general route writes, for every field
// and selection they handle and every template where they must step aside.
// One Renderer, kept from each render to the next, renders as Render does.
func TestFastPaths(t *testing.T) {
	n := 0
	var rd Renderer
	for _, r := range fastRequests {
		for _, key := range fastKeys {
			for _, src := range fastTemplates(key) {
				fast, general, fastErr, generalErr, ok := renderBoth(t, src, r)
				if !ok {
					continue
				}
				n++
				if fast != general || (fastErr == nil) != (generalErr == nil) {
					t.Errorf("%s on %s %s %q: fast %q (%v), general %q (%v)", src, r.Method, r.Path, r.Body, fast, fastErr, general, generalErr)
				}
				tpl, _ := Parse(src)
				if kept, err := rd.Render(tpl, nil, &Model{Request: r, Port: 4545, Scheme: "http"}); string(kept) != fast || (err == nil) != (fastErr == nil) {
					t.Errorf("%s on %s %s %q: kept Renderer %q (%v), Render %q (%v)", src, r.Method, r.Path, r.Body, kept, err, fast, fastErr)
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d templates compared", n)
	}
}

// FuzzFastPaths: the fast paths write what the general route writes, for any request and key.
func FuzzFastPaths(f *testing.F) {
	f.Add("/users/42?q=x&q=y", `{"name":"Ada","a":{"b":1}}`, "t-1", "name")
	f.Add("//a//b/", `{"a":{"b":"x","b":2}}`, "<&>", "b")
	f.Add("/", `{"name":1.5e3}`, "", "-1")
	f.Add("/a?q=%41", ` {"q" : [1] } `, "v", "q")
	f.Fuzz(func(t *testing.T, target, body, header, key string) {
		if strings.ContainsAny(key, "]'\"}{") {
			return
		}
		r := req("POST", target, body, "X-Trace", header, key, header+"2")
		for _, src := range fastTemplates(key) {
			fast, general, fastErr, generalErr, ok := renderBoth(t, src, r)
			if ok && (fast != general || (fastErr == nil) != (generalErr == nil)) {
				t.Errorf("%s on %q %q: fast %q (%v), general %q (%v)", src, target, body, fast, fastErr, general, generalErr)
			}
		}
	})
}

// FuzzAppendEscaped: appendEscaped replaces each character Handlebars escapes with its entity,
// one character at a time, and keeps every other byte as it is.
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "plain", `<a href="x">'&'</a>`, "`=`", "é=\x00&", "&&", "x<"} {
		f.Add("pre:", s, uint8(0))
		f.Add("pre:", s, uint8(40))
	}
	entities := map[byte]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&#x27;", '`': "&#x60;", '=': "&#x3D;"}
	f.Fuzz(func(t *testing.T, dst, s string, room uint8) {
		want := []byte(dst)
		for i := 0; i < len(s); i++ {
			if e, ok := entities[s[i]]; ok {
				want = append(want, e...)
			} else {
				want = append(want, s[i])
			}
		}
		// With room for s in dst or without (appendEscaped copies a short s itself).
		d := append(make([]byte, 0, len(dst)+int(room)), dst...)
		if got := appendEscaped(d, s); string(got) != string(want) {
			t.Fatalf("appendEscaped(%q (room %d), %q) = %q, want %q", dst, room, s, got, want)
		}
	})
}

// TestPlanOf: a template of text and request fields at its top level renders through its plan;
// any other node leaves it to the nodes.
func TestPlanOf(t *testing.T) {
	for _, tc := range []struct {
		src  string
		plan bool
	}{
		{`{"id":"{{request.path.[1]}}","q":"{{request.query.q}}","trace":"{{request.headers.X-Trace}}","name":"{{jsonPath request.body '$.name'}}","method":"{{request.method}}"}`, true},
		{"{{request.method}}", true},
		{"a{{{request.body}}}b{{request.path}}", true},
		{"{{jsonPath request.body '$.a.b'}}", true},
		{"{{jsonPath request.body '$..a'}}", false},
		{"{{request.method}}{{#if request.body}}x{{/if}}", false},
		{"{{request.method}}{{upper request.method}}", false},
		{"{{request}}", false},
		{"{{this.request.method}}", false},
		{"plain", false},
	} {
		tpl, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := tpl.plan != nil; got != tc.plan {
			t.Errorf("%s: plan %v, want %v", tc.src, got, tc.plan)
		}
	}
}
