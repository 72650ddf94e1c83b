package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// The random case generator: each seed gives one scenario (an imposter with a few stubs,
// requests drawn to hit and miss them, the imposter read back) or, for some seeds, an admin
// body with a field of the wrong type. The same seed always gives the same scenario, so a
// difference can be replayed and written down as a scenario file.

// randomPort is the imposter port every random case uses, and originPort the port of the
// origin its proxies reach, another imposter.
const (
	randomPort = 26850
	originPort = 26851
)

// randomCSV is the data source of the lookup behaviors, written into each engine's working
// directory by a file step.
const randomCSV = "name,age,city\nBob,42,Paris\na,1,Athens\nusers,7,Rome\nA,9,Oslo\n"

type gen struct {
	r      *rand.Rand
	debug  bool // --debug: the answers to no match carry mockd's X-Mockd-No-Match
	inject bool // --allowInjection: decorate behaviors and inject predicates
	csv    bool // a lookup behavior was generated: the case writes the CSV first
	proxy  bool // a proxy response was generated: the case starts the origin first
	// proxies: the case may have proxy responses (not in invalid cases: the origin is not there)
	proxies bool
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, 0x6d6f636b64))} //nolint:gosec // test data, not secrets
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func (g *gen) str(xs ...string) string {
	return xs[g.r.IntN(len(xs))]
}
func (g *gen) any(xs ...any) any { return xs[g.r.IntN(len(xs))] }

// The vocabulary requests and predicates share, so that predicates hit as often as they miss.
var (
	randMethods     = []string{"GET", "GET", "POST", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"}
	randPaths       = []string{"/", "/a", "/A", "/a/b", "/users/42", "/users/abc", "/x%20y", "/caf%C3%A9", "/a/", "/Items/7/Details", "/a.b", "/users/42/", "//a", "/a%2Fb", "/a/../b", "/a;b=c", "/ü", "/a+b"}
	randQueries     = []string{"", "", "?q=1", "?q=1&q=2", "?Q=abc", "?a=b&c=d", "?a=%20x", "?a=x+y", "?a", "?a=", "?id=42&name=Bob", "?q=1&Q=2", "?name=bob", "?arr[]=1&arr[]=2", "?q=%E2%9C%93", "?a=1&b=2&a=3", "?x=%zz", "?a[b]=1", "?a.b=c", "?%61=1", "?a=1;b=2", "?=x", "?&&", "?q=1#frag", "?Q=1&q=2&q=3", "?name=B%C3%B6b"}
	randHeaderNames = []string{"X-Test", "x-test", "X-TEST", "Accept", "X-Num", "X-Empty", "Origin"}
	randHeaderVals  = []string{"abc", "ABC", "a b", "42", "application/json", "", "Bob", "x,y"}
	randJSONBodies  = []string{
		`{"a":1,"b":"Text","c":[1,2,3],"d":{"e":"f"}}`,
		`{"name":"Bob","tags":["x","y"],"age":42}`,
		`[1,2,3]`,
		`[{"a":1},{"a":2}]`,
		`{"a":null}`,
		`{"A":"x","a":"y"}`,
		`{"a":"1","b":"text"}`,
		`"str"`,
		`42`,
		`{"d":{"e":["f","g"]},"c":[]}`,
		`{"a":1.0,"b":1e2,"c":12345678901234567890,"name":"B\u00f6b"}`,
		`{"a":true,"b":false,"tags":[]}`,
		`{"a":[{"b":1},{"b":"1"}],"d":{"e":null}}`,
		"\ufeff{\"a\":1}",
		`{"a":1,"a":2}`,
		`{"a":`,
	}
	randXMLBodies = []string{
		`<root><a>1</a><b>Text</b></root>`,
		`<r xmlns:n="urn:n"><n:a>x</n:a><n:a>y</n:a></r>`,
		`<r xmlns="urn:d"><a>z</a></r>`,
		`<?xml version="1.0"?><doc id="7"><item>A</item><item>b</item></doc>`,
		`<root><a>1</a><a>2</a></root>`,
		`<root><a id="x">1</a><!-- c --><b><![CDATA[Text]]></b></root>`,
		`<n:r xmlns:n="urn:n"><n:a>1</n:a><a>2</a></n:r>`,
	}
	randFormBodies = []string{"a=1&b=two", "a=1&a=2", "name=Bob+Smith&x=%26", "A=x&a=y", "q="}
	randTextBodies = []string{"hello world", "Hello", "42", "line1\nline2", "Text", " a ", "users"}
	randFragments  = []string{"a", "A", "1", "42", "b", "Text", "text", "x", "Bob", "bob", "/a", "users", "", "hello", "f", "2"}
	randRegexes    = []string{`^/users/\d+$`, `a`, `^/A`, `\d`, `^\{`, `text`, `^P`, `b$`, `.*`, `[A-Z]`, `^$`, `x|y`, `^\w+$`}
)

// valueFor is an expected value for one field of a predicate.
func (g *gen) valueFor(field, op string) any {
	switch field {
	case "method":
		return g.str("GET", "POST", "get", "Put", "DELETE", "PATCH", "OPTIONS", "G", "T")
	case "path":
		if op == "equals" || op == "deepEquals" {
			return g.str(randPaths...)
		}
		return g.str("/a", "b", "42", "users", "A", "/", "/users/", "x y", "%20", "Details", "/A")
	case "query", "headers", "form":
		return g.keyValues(field, op)
	case "requestFrom":
		return g.str("127.0.0.1", "127.0.0.1:", "127.", "::ffff:127.0.0.1", "1")
	case "ip":
		return g.str("127.0.0.1", "::ffff:127.0.0.1", "127.")
	case "body":
		switch g.intn(4) {
		case 0:
			var v any
			_ = json.Unmarshal([]byte(g.str(`{"a":1}`, `{"b":"text"}`, `{"c":[1]}`, `{"tags":["x"]}`, `{"d":{"e":"f"}}`,
				`{"name":"bob"}`, `{"a":"1"}`, `[1,2]`, `{"a":null}`, `{"c":[]}`, `{"age":42}`, `{"a":true}`, `{"d":{}}`,
				`{"a":[{"b":1}]}`, `{"b":100}`, `{"tags":["y","x"]}`, `{"c":[3,1]}`, `{"d":{"e":"F"}}`, `{"A":"x"}`)), &v)
			return v
		case 1:
			return g.str(randJSONBodies...)
		default:
			return g.str(randFragments...)
		}
	}
	return g.str(randFragments...)
}

// keyValues is a predicate's object for query, headers or form.
func (g *gen) keyValues(field, op string) map[string]any {
	names := []string{"q", "Q", "a", "id", "name", "arr", "b"}
	if field == "headers" {
		names = randHeaderNames
	}
	out := map[string]any{}
	for i := 0; i <= g.intn(2); i++ {
		k := g.str(names...)
		switch {
		case op == "exists":
			out[k] = g.chance(0.7)
		case op == "matches":
			out[k] = g.str(randRegexes...)
		case g.chance(0.15):
			out[k] = []any{g.str(randFragments...), g.str("1", "2", "3")}
		case field == "headers":
			out[k] = g.str(randHeaderVals...)
		default:
			out[k] = g.str("1", "2", "abc", "ABC", " x", "x y", "b", "42", "Bob", "bob", "", "✓", "Bob Smith")
		}
	}
	return out
}

var randFields = []string{"method", "path", "path", "query", "query", "headers", "headers", "body", "body", "body", "requestFrom", "form", "ip"}

// predicate is one predicate, nested up to depth.
func (g *gen) predicate(depth int) map[string]any {
	if depth < 2 && g.chance(0.15) {
		switch g.intn(3) {
		case 0:
			return map[string]any{"not": g.predicate(depth + 1)}
		case 1:
			return map[string]any{"and": []any{g.predicate(depth + 1), g.predicate(depth + 1)}}
		default:
			return map[string]any{"or": []any{g.predicate(depth + 1), g.predicate(depth + 1)}}
		}
	}
	if g.inject && g.chance(0.05) {
		return map[string]any{"inject": g.str(
			"function (config) { return config.request.method === 'POST'; }",
			"function (config) { return (config.request.path || '').indexOf('a') >= 0; }",
			"function (request) { return request.query.q === '1'; }")}
	}
	op := g.str("equals", "equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists")
	fields := map[string]any{}
	var selector string
	for i := 0; i <= g.intn(2) && i < 2; i++ {
		f := g.str(randFields...)
		var v any
		switch {
		case op == "exists" && f != "query" && f != "headers" && f != "form":
			if f == "body" && g.chance(0.4) {
				v = map[string]any{g.str("a", "name", "c", "zz"): g.chance(0.7)}
			} else {
				v = g.chance(0.7)
			}
		case op == "matches" && f != "query" && f != "headers" && f != "form":
			v = g.str(randRegexes...)
		default:
			v = g.valueFor(f, op)
		}
		fields[f] = v
		if f == "body" {
			selector = "body"
		}
	}
	p := map[string]any{op: fields}
	if g.chance(0.25) {
		p["caseSensitive"] = g.chance(0.7)
	}
	if g.chance(0.12) {
		p["except"] = g.str(`\d+`, `^/`, `[aeiou]`, `X`, `\s`)
	}
	if g.chance(0.12) {
		p["keyCaseSensitive"] = g.chance(0.7)
	}
	if selector != "" && g.chance(0.35) {
		if g.chance(0.5) {
			p["jsonpath"] = map[string]any{"selector": g.str("$.a", "$.b", "$.c[0]", "$..e", "$.tags[*]", "$.name", "$[0].a", "$.c", "$.d", "$.zz", "$[*]")}
		} else {
			xp := map[string]any{"selector": g.str("//a", "//b", "/root/a", "//n:a", "//item", "count(//item)", "//doc/@id", "//d:a", "//*", "/root/a[2]", "//a/text()")}
			if g.chance(0.5) {
				xp["ns"] = g.any(map[string]any{"n": "urn:n"}, map[string]any{"d": "urn:d"}, map[string]any{"n": "urn:n", "d": "urn:d"}, map[string]any{"n": "urn:other"})
			}
			p["xpath"] = xp
		}
		// a selection compares a value, not a document
		if _, isObj := fields["body"].(map[string]any); isObj || g.chance(0.5) {
			fields["body"] = g.str(randFragments...)
		}
	}
	return p
}

// copyBehavior is one copy; token is what it writes into.
func (g *gen) copyBehavior(token string) map[string]any {
	from := g.any("path", "body", "method", map[string]any{"query": g.str("q", "name", "a")}, map[string]any{"headers": g.str("X-Test", "x-test", "Accept")})
	var using map[string]any
	switch g.intn(4) {
	case 0, 1:
		using = map[string]any{"method": "regex", "selector": g.str(`\d+`, `\w+`, `[a-z]+`, `^.`, `(?:a)`, `$^`)}
	case 2:
		using = map[string]any{"method": "jsonpath", "selector": g.str("$.a", "$.name", "$.tags[*]", "$..e", "$.zz")}
	default:
		using = map[string]any{"method": "xpath", "selector": g.str("//a", "//n:a", "//item", "//doc/@id", "//zz")}
		// an unbound prefix fails in mockd's copy even where Mountebank's finds nothing (README,
		// Differences): the prefix is always bound
		if using["selector"] == "//n:a" || g.chance(0.5) {
			using["ns"] = map[string]any{"n": "urn:n"}
		}
	}
	return map[string]any{"from": from, "into": token, "using": using}
}

func (g *gen) lookupBehavior(token string) map[string]any {
	g.csv = true
	key := map[string]any{
		"from":  g.any("path", map[string]any{"query": "name"}, "body"),
		"using": g.any(map[string]any{"method": "regex", "selector": `[a-zA-Z]+`}, map[string]any{"method": "regex", "selector": `\w+$`}, map[string]any{"method": "jsonpath", "selector": "$.name"}),
	}
	return map[string]any{
		"key":            key,
		"fromDataSource": map[string]any{"csv": map[string]any{"path": "lookup.csv", "keyColumn": g.str("name", "age", "nope")}},
		"into":           token,
	}
}

// response is one entry of a stub's responses.
func (g *gen) response() map[string]any {
	is := map[string]any{}
	if g.chance(0.8) {
		is["statusCode"] = g.any(200, 200, 201, 202, 204, 400, 404, 500, "201", 299, 304, 101, "abc", 99, 600, 201.5)
	}
	if g.chance(0.5) {
		hs := map[string]any{}
		for i := 0; i <= g.intn(2); i++ {
			name := g.str("X-Resp", "x-resp", "Content-Type", "X-Num", "Set-Cookie", "X-List")
			v := g.any("v", "application/json", "text/plain", 5, []any{"a=1", "b=2"}, "")
			if _, list := v.([]any); (list || v == "") && name == "Content-Type" {
				// a list goes out once in mockd, an empty value not at all (README, Differences)
				v = "text/plain"
			}
			hs[name] = v
		}
		is["headers"] = hs
	}
	tokens := []string{}
	r := map[string]any{}
	var bs []any
	if g.chance(0.3) {
		tok := g.str("$X", "$TOKEN", "$ROW")
		tokens = append(tokens, tok)
		if tok == "$ROW" && g.chance(0.7) {
			bs = append(bs, map[string]any{"lookup": g.lookupBehavior(tok)})
		} else {
			bs = append(bs, map[string]any{"copy": g.copyBehavior(tok)})
		}
	}
	if g.chance(0.15) {
		bs = append(bs, map[string]any{"wait": 0})
	}
	if g.inject && g.chance(0.3) {
		bs = append(bs, map[string]any{"decorate": g.str(
			"function (request, response) { response.headers = response.headers || {}; response.headers['X-Decorated'] = request.method; }",
			"function (config) { config.response.body = 'decorated ' + config.request.path; }",
			"function (request, response) { response.statusCode = 203; }")})
	}
	switch g.intn(5) {
	case 0:
		is["body"] = g.any(map[string]any{"ok": true, "n": 1}, []any{1, "two"}, 42, 1.5, true, false, 0, map[string]any{}, []any{}, map[string]any{"a": map[string]any{"b": []any{nil}}})
	case 1:
	default:
		body := g.str("text", "", "hello $X", "{\"a\":1}", "<x>1</x>", "ünï")
		for _, tok := range tokens {
			if tok == "$ROW" {
				body += " age=$ROW[age] city=$ROW[\"city\"]"
			} else {
				body += " got " + tok
			}
		}
		is["body"] = body
	}
	if g.chance(0.05) {
		is["_mode"] = "binary"
		is["body"] = g.str("aGVsbG8=", "AAEC", "not base64!")
	}
	r["is"] = is
	if g.chance(0.2) {
		r["repeat"] = g.any(1, 2, 3, 0)
	}
	if len(bs) > 0 {
		if g.chance(0.5) {
			r["behaviors"] = bs
		} else {
			old := map[string]any{}
			for _, b := range bs {
				for k, v := range b.(map[string]any) {
					if k == "copy" || k == "lookup" {
						old[k] = append(asList(old[k]), v)
					} else {
						old[k] = v
					}
				}
			}
			r["_behaviors"] = old
		}
	}
	return r
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func (g *gen) stub() map[string]any {
	s := map[string]any{}
	if n := g.intn(4); n > 0 {
		ps := make([]any, 0, n)
		for i := 0; i < n; i++ {
			ps = append(ps, g.predicate(0))
		}
		s["predicates"] = ps
	}
	n := 1 + g.intn(3)
	rs := make([]any, 0, n)
	for i := 0; i < n; i++ {
		if g.proxies && g.chance(0.3) {
			rs = append(rs, g.proxyResponse())
			continue
		}
		rs = append(rs, g.response())
	}
	s["responses"] = rs
	return s
}

// proxyResponse is a proxy to the origin imposter.
func (g *gen) proxyResponse() map[string]any {
	g.proxy = true
	p := map[string]any{"to": g.str("http://127.0.0.1:26851", "http://localhost:26851", "http://127.0.0.1:26851/base")}
	if g.chance(0.8) {
		p["mode"] = g.str("proxyOnce", "proxyAlways", "proxyTransparent")
	}
	if g.chance(0.7) {
		var pgs []any
		for i := 0; i <= g.intn(2); i++ {
			matches := map[string]any{}
			for j := 0; j <= g.intn(2); j++ {
				switch f := g.str("method", "path", "query", "headers", "body"); f {
				case "query":
					matches[f] = g.any(true, map[string]any{"q": true})
				case "headers":
					matches[f] = g.any(true, map[string]any{"X-Test": true})
				default:
					matches[f] = true
				}
			}
			pg := map[string]any{"matches": matches}
			if g.chance(0.2) {
				pg["caseSensitive"] = true
			}
			if g.chance(0.15) {
				pg["except"] = `\d+`
			}
			if _, ok := matches["body"]; ok && g.chance(0.3) {
				pg["jsonpath"] = map[string]any{"selector": g.str("$.a", "$.name")}
			}
			if g.chance(0.15) {
				pg["predicateOperator"] = g.str("deepEquals", "contains", "exists")
			}
			pgs = append(pgs, pg)
		}
		p["predicateGenerators"] = pgs
	}
	if g.chance(0.2) {
		p["injectHeaders"] = map[string]any{"X-Injected": "yes"}
	}
	return map[string]any{"proxy": p}
}

// origin is the imposter the proxies reach: plain stubs, no behaviors.
func (g *gen) origin() map[string]any {
	stubs := []any{
		map[string]any{"predicates": []any{map[string]any{"startsWith": map[string]any{"path": "/a"}}},
			"responses": []any{map[string]any{"is": map[string]any{"statusCode": 201, "headers": map[string]any{"X-Origin": "a"}, "body": "origin a"}},
				map[string]any{"is": map[string]any{"body": map[string]any{"n": 2}}}}},
		map[string]any{"predicates": []any{map[string]any{"equals": map[string]any{"method": "POST"}}},
			"responses": []any{map[string]any{"is": map[string]any{"statusCode": 202, "body": "posted"}}}},
	}
	return map[string]any{"port": originPort, "protocol": "http", "stubs": stubs,
		"defaultResponse": map[string]any{"statusCode": 404, "body": "origin default"}}
}

func (g *gen) imposter() map[string]any {
	imp := map[string]any{"port": randomPort, "protocol": "http"}
	if g.chance(0.5) {
		imp["recordRequests"] = true
	}
	if g.chance(0.2) {
		imp["allowCORS"] = true
	}
	if g.chance(0.2) {
		imp["name"] = g.str("random", "ünï", "a b")
	}
	if g.chance(0.4) {
		dr := map[string]any{"statusCode": g.any(404, 400, 418, "404")}
		if g.chance(0.5) {
			dr["body"] = g.any("no match", map[string]any{"error": "none"})
		}
		if g.chance(0.4) {
			dr["headers"] = map[string]any{"X-Default": "yes"}
		}
		imp["defaultResponse"] = dr
	}
	n := g.intn(5)
	stubs := make([]any, 0, n)
	for i := 0; i < n; i++ {
		stubs = append(stubs, g.stub())
	}
	if n > 0 || g.chance(0.5) {
		imp["stubs"] = stubs
	}
	return imp
}

// request is one http step to the imposter.
func (g *gen) request() *httpStep {
	h := &httpStep{Port: json.RawMessage(fmt.Sprint(randomPort)), Method: g.str(randMethods...)}
	h.Path = g.str(randPaths...) + g.str(randQueries...)
	for i := 0; i < g.intn(3); i++ {
		h.Headers = append(h.Headers, header{g.str(randHeaderNames...), g.str(randHeaderVals...)})
	}
	if h.Method == "OPTIONS" && g.chance(0.6) {
		h.Headers = append(h.Headers, header{"Origin", "http://example.com"}, header{"Access-Control-Request-Method", "PUT"},
			header{"Access-Control-Request-Headers", "X-Test"})
	}
	var body, ctype string
	switch g.intn(6) {
	case 0:
	case 1, 2:
		body, ctype = g.str(randJSONBodies...), g.str("application/json", "application/json", "text/plain", "")
	case 3:
		body, ctype = g.str(randXMLBodies...), g.str("application/xml", "text/xml", "")
	case 4:
		body, ctype = g.str(randFormBodies...), g.str("application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8", "")
	default:
		body, ctype = g.str(randTextBodies...), g.str("text/plain", "")
	}
	if h.Method == "HEAD" || h.Method == "GET" && g.chance(0.7) {
		body, ctype = "", ""
	}
	if ctype != "" {
		h.Headers = append(h.Headers, header{g.str("Content-Type", "content-type"), ctype})
	}
	if body != "" {
		h.Body = mustJSON(body)
	}
	return h
}

// requestIgnores are the parts of an imposter's answer that differ by design: node's stack in a
// 500 body (mockd never sends it) and, under --debug, mockd's X-Mockd-No-Match (README).
func (g *gen) requestIgnores() []string {
	if g.debug {
		return []string{"body.errors[*].stack", "headers.x-mockd-no-match"}
	}
	return []string{"body.errors[*].stack"}
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

// randomScenario is the case of one seed.
func randomScenario(seed uint64) scenario {
	g := newGen(seed)
	sc := scenario{Name: fmt.Sprintf("random-%d", seed), mbMayCrash: true}
	if g.chance(0.2) {
		return g.invalidScenario(sc, seed)
	}
	switch {
	case g.chance(0.15):
		g.inject = true
		sc.Flags = []string{"--allowInjection"}
	case g.chance(0.1):
		g.debug = true
		sc.Flags = []string{"--debug"}
	}
	sc.Description = fmt.Sprintf("random case %d (TestRandomCompat): an imposter, requests to it, the imposter read back", seed)
	g.proxies = g.chance(0.2)
	imp := g.imposter()
	var steps []step
	steps = append(steps, step{Admin: &adminStep{Method: "POST", Path: "/imposters", Body: mustJSON(imp)}})
	n := 3 + g.intn(5)
	for i := 0; i < n; i++ {
		steps = append(steps, step{HTTP: g.request(), Ignore: g.requestIgnores()})
		if g.chance(0.08) {
			// change the stubs between requests
			switch g.intn(6) {
			case 0:
				steps = append(steps, step{Admin: &adminStep{Method: "POST", Path: fmt.Sprintf("/imposters/%d/stubs", randomPort),
					Body: mustJSON(map[string]any{"index": 0, "stub": g.stub()})}})
			case 1:
				steps = append(steps, step{Admin: &adminStep{Method: "DELETE", Path: fmt.Sprintf("/imposters/%d/stubs/0", randomPort)}})
			case 2:
				steps = append(steps, step{Admin: &adminStep{Method: "PUT", Path: fmt.Sprintf("/imposters/%d/stubs", randomPort),
					Body: mustJSON(map[string]any{"stubs": []any{g.stub(), g.stub()}})}})
			case 3:
				steps = append(steps, step{Admin: &adminStep{Method: "PUT", Path: fmt.Sprintf("/imposters/%d/stubs/0", randomPort),
					Body: mustJSON(g.stub())}})
			case 4:
				steps = append(steps, step{Admin: &adminStep{Method: "GET", Path: g.str("/imposters", "/imposters?replayable=true", "/imposters?removeProxies=true")},
					Ignore: proxyIgnores})
			default:
				steps = append(steps, step{Admin: &adminStep{Method: "DELETE", Path: fmt.Sprintf("/imposters/%d/savedRequests", randomPort)}})
			}
		}
	}
	if g.proxy {
		steps = append([]step{{Admin: &adminStep{Method: "POST", Path: "/imposters", Body: mustJSON(g.origin())}}}, steps...)
	}
	if g.csv {
		steps = append([]step{{File: &fileStep{Path: "lookup.csv", Content: randomCSV}}}, steps...)
	}
	steps = append(steps,
		step{Admin: &adminStep{Method: "GET", Path: fmt.Sprintf("/imposters/%d", randomPort)}, Ignore: proxyIgnores},
		step{Admin: &adminStep{Method: "GET", Path: fmt.Sprintf("/imposters/%d?%s", randomPort, g.str("replayable=true", "replayable=true", "removeProxies=true", "replayable=true&removeProxies=true"))}, Ignore: proxyIgnores})
	if g.chance(0.2) {
		steps = append(steps, step{Admin: &adminStep{Method: "DELETE", Path: fmt.Sprintf("/imposters/%d%s", randomPort, g.str("", "?replayable=true", "?removeProxies=true"))}})
	}
	for i := range steps {
		if steps[i].Admin != nil && steps[i].Ignore == nil {
			steps[i].Ignore = proxyIgnores
		}
	}
	sc.Steps = steps
	return sc
}

// proxyIgnores are the members of a stub a proxy saved that differ between any two runs (the
// origin's Date, the time it took) or by design (Connection, and the framing of a body).
// Under --debug the stubs' matches show the proxied answers too (response, and responseConfig
// of the stub a proxy recorded), and a saved answer of the origin under --debug has mockd's
// X-Mockd-No-Match.
var proxyIgnores = func() []string {
	var out []string
	for _, stubs := range []string{"body.stubs[*].", "body.imposters[*].stubs[*]."} {
		for _, root := range []string{"responses[*].is.", "matches[*].response.", "matches[*].responseConfig.is."} {
			for _, p := range []string{"headers.Date", "headers.Connection", "_proxyResponseTime", "headers.Content-Length",
				"headers.Transfer-Encoding", "headers.X-Mockd-No-Match"} {
				out = append(out, stubs+root+p)
			}
		}
		out = append(out, stubs+"responses[*].behaviors[*].wait")
	}
	return out
}()

// wrongTypes are values of every JSON type but null (a null where Mountebank wants an object
// ends its process: README, Differences).
var wrongTypes = []any{"x", "", 5, -1, 1.5, true, false, []any{}, []any{1}, map[string]any{}, map[string]any{"a": 1}}

// invalidScenario posts a valid-looking imposter with one field changed to another type and
// compares the answer and what is then running.
func (g *gen) invalidScenario(sc scenario, seed uint64) scenario {
	sc.Description = fmt.Sprintf("random case %d (TestRandomCompat): an admin body with a field of the wrong type", seed)
	var imp map[string]any
	for len(imp) < 3 {
		imp = g.imposter()
	}
	// pick a field (by path) and give it a value of another JSON type
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if len(path) > 0 {
			paths = append(paths, append([]any(nil), path...))
		}
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(t[k], append(path, k))
			}
		case []any:
			for i, x := range t {
				walk(x, append(path, i))
			}
		}
	}
	walk(imp, nil)
	var target []any
	for tries := 0; tries < 10; tries++ {
		target = paths[g.intn(len(paths))]
		if k, ok := target[len(target)-1].(string); !ok || k != "port" {
			break
		}
	}
	var parent any = imp
	for _, seg := range target[:len(target)-1] {
		switch s := seg.(type) {
		case string:
			parent = parent.(map[string]any)[s]
		case int:
			parent = parent.([]any)[s]
		}
	}
	old := getSeg(parent, target[len(target)-1])
	var nv any
	for tries := 0; tries < 20; tries++ {
		nv = wrongTypes[g.intn(len(wrongTypes))]
		if jsonType(nv) == jsonType(old) {
			continue
		}
		// {} for stubs or responses ends Mountebank's process (README, Differences)
		if k, ok := target[len(target)-1].(string); ok && (k == "stubs" || k == "responses") && jsonType(nv) == "object" {
			continue
		}
		break
	}
	setSeg(parent, target[len(target)-1], nv)
	method, path := "POST", "/imposters"
	body := any(imp)
	if g.chance(0.25) {
		method, body = "PUT", map[string]any{"imposters": []any{imp}}
	}
	sc.Steps = []step{
		{Admin: &adminStep{Method: method, Path: path, Body: mustJSON(body)}},
		{Admin: &adminStep{Method: "GET", Path: "/imposters?replayable=true"}},
		// what an imposter created with the odd field answers
		{HTTP: g.request(), Ignore: g.requestIgnores()},
		{HTTP: g.request(), Ignore: g.requestIgnores()},
	}
	return sc
}

func getSeg(parent, seg any) any {
	switch s := seg.(type) {
	case string:
		return parent.(map[string]any)[s]
	case int:
		return parent.([]any)[s]
	}
	return nil
}

func setSeg(parent, seg, v any) {
	switch s := seg.(type) {
	case string:
		parent.(map[string]any)[s] = v
	case int:
		parent.([]any)[s] = v
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int, float64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// MarshalJSON writes the headers as the object UnmarshalJSON reads, in order, a name given
// twice written twice.
func (o orderedHeaders) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, h := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(mustJSON(h.Name))
		buf.WriteByte(':')
		buf.Write(mustJSON(h.Value))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// scenarioJSON is the scenario as a file of scenarios/ (indented, one step a line for short steps).
func scenarioJSON(sc scenario) []byte {
	var buf bytes.Buffer
	buf.WriteString("{\n")
	fmt.Fprintf(&buf, "  \"description\": %s,\n", mustJSON(sc.Description))
	if len(sc.Flags) > 0 {
		fmt.Fprintf(&buf, "  \"flags\": %s,\n", mustJSON(sc.Flags))
	}
	buf.WriteString("  \"steps\": [\n")
	for i, st := range sc.Steps {
		buf.WriteString("    ")
		buf.Write(mustJSON(st))
		if i < len(sc.Steps)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ]\n}\n")
	return buf.Bytes()
}
