package script

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func TestCompileNative(t *testing.T) {
	tests := []struct {
		src    string
		native bool
	}{
		{`(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`, true},
		{`function (request, response) { response.headers['X-Path'] = request.path; response.body += '!'; }`, true},
		{`function (config, response, logger) { var id = config.request.headers['X-Id']; let s = id ? 'x' + id : 'none'; const t = ` + "`${s}/${response.statusCode}`" + `; if (t !== '') { response.body = t; } else response.body = null; return response; }`, true},
		{`config => config.response.body = 'x'`, true},
		{`(c) => { 'use strict'; ; }`, true},
		{`function () {}`, true},
		{`(config) => { if (!config.request.body || config.request.body == null) { return; } config.response.statusCode = 201; }`, true},
		// Outside the subset.
		{`(config) => { config.response.body = JSON.stringify({a: 1}); }`, true},
		{`(config) => { config.response.body = JSON.parse('1'); }`, false},                   // a call other than JSON.stringify
		{`(config) => { config.response.body = JSON.stringify(1, (k, v) => v); }`, false},    // a replacer
		{`(config) => { config.response.body = JSON.stringify(1, null, config.x); }`, false}, // a space not literal
		{`(config) => { config.response.body = JSON.stringify(1); var JSON = 2; }`, false},   // a local JSON, hoisted
		{`function JSON(config) { return { body: JSON.stringify(1) }; }`, false},             // the function's own name
		{`(config, JSON) => { config.response.body = JSON.stringify(1); }`, false},
		{`(config) => { config.response.body = config.response.body.length; }`, true}, // .length gives up at run time
		{`(config) => ({ body: 'x', headers: { a: [1, 'b', null, { c: true }] } })`, true},
		{`(config) => ({ 1: 'x' })`, false}, // an array index: goja puts it first
		{`(config) => ({ '42': 'x' })`, false},
		{`(config) => ({ __proto__: null })`, false}, // sets the prototype
		{`(config) => ({ [config.path]: 1 })`, false},
		{`(config) => ({ ...config })`, false},
		{`(config) => ({ get a() { return 1; } })`, false},
		{`(config) => ({ a() {} })`, false},
		{`(config) => [1, , 2]`, false},
		{`(config) => { let a = 1; return { a }; }`, true},
		{`(config) => ({ b })`, false},                // a global
		{`(config) => { x = 1; }`, false},             // a global
		{`(config) => { config.state.n = 1; }`, true}, // compiles: state gives up at run time
		{`(config) => { for (;;) {} }`, false},
		{`(config) => { if (1) { var x = 1; } }`, false}, // a declaration in a block
		{`(config) => { y; var y = 1; }`, false},         // used before its declaration
		{`(config) => { const c = 1; c = 2; }`, false},
		{`(config) => { const c; }`, false},
		{`async (config) => {}`, false},
		{`function* (config) {}`, false},
		{`(config) => { delete config.response.body; }`, false},
		{`(config) => { config.response.body -= 1; }`, false},
		{`(config) => { this.x = 1; }`, false},
		{`(config, ...rest) => {}`, false},
		{`({request}) => {}`, false},
		{`(config = 1) => {}`, false},
		{`(config) => { config.response.body = 'a' - 1; }`, false},
		{`(config) => { config.response.body = config?.response; }`, false},
		{"(config) => { config.response.body = tag`x`; }", false},
		{`(config) => { config.response.body = '\uD800'; }`, false}, // a lone surrogate
		{`function f(config) { f; }`, false},
		{`(config) => { let undefined = 1; }`, false},
		{`1`, false},
		{`(config) => {}; (config) => {}`, false},
	}
	for _, tc := range tests {
		if fn := compileNative(tc.src); (fn != nil) != tc.native {
			t.Errorf("compileNative(%s) = %v, want native %v", tc.src, fn != nil, tc.native)
		}
	}
}

// nativeResponses are the responses the native tests decorate.
var nativeResponses = []string{
	`{"statusCode":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":"hello"}`,
	`{"statusCode":200,"headers":{"Set-Cookie":["a=1","b=2"]},"body":{"inner":{"k":"v"},"list":[1,2],"n":1.5}}`,
	`{"body":"","_mode":"text"}`,
	`{}`,
}

// nativeRequests are the requests the native tests decorate for.
func nativeRequests() []*request.Request {
	form := &request.Request{Method: "POST", Path: "/f", Body: "a=1&b=%C3%A9", HasForm: true,
		Form:    []request.KV{{Name: "a", Value: "1"}, {Name: "b", Value: "é"}},
		Headers: []request.KV{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}, {Name: "X-Id", Value: ""}, {Name: "X-Id", Value: "9"}}}
	form.SetClient("127.0.0.1", "127.0.0.1:5555")
	bad := &request.Request{Method: "GET", Path: "/bad", Body: "\xff\xfe", Headers: []request.KV{{Name: "X-Id", Value: "\xff"}}}
	bad.SetClient("::1", "[::1]:5555")
	empty := &request.Request{Method: "GET", Path: "/", BodyMissing: true}
	empty.SetClient("127.0.0.1", "127.0.0.1:5555")
	tcp := (&request.Request{TCP: true}).SetDataText("hello\n")
	tcp.SetClient("127.0.0.1", "127.0.0.1:5555")
	odd := &request.Request{Method: "PUT", Path: "/\u2028\x7f\t\"q\"\\", Body: "\x00\x01\x1f\u2029 é ✓ 😀 </script>",
		Query:   []request.KV{{Name: "2", Value: "two"}, {Name: "1", Value: "one"}, {Name: "__proto__", Value: "p"}, {Name: "toJSON", Value: "t"}},
		Headers: []request.KV{{Name: "X-Id", Value: "a\"b"}, {Name: "0", Value: "zero"}}}
	odd.SetClient("10.0.0.1", "10.0.0.1:1")
	return []*request.Request{testRequest(), form, bad, empty, tcp, odd}
}

// checkNative runs src natively and on goja for every request and response and fails when the
// native result differs from goja's or changes its input. It returns how many calls ran
// natively.
func checkNative(t *testing.T, s *Scope, src string) int {
	t.Helper()
	if s.e.compile(src).err != nil {
		return 0 // Decorate finds only what goja compiles
	}
	fn, pristine := s.native(src, kindDecorate)
	if fn == nil {
		return 0
	}
	ran := 0
	// A function DecorateConstant calls constant gives, on goja, one response for every
	// request (for each response in).
	constant := map[string]string{}
	for ri, r := range nativeRequests() {
		for _, in := range nativeResponses {
			nIn, gIn := mustObject(t, in), mustObject(t, in)
			done := withSlab(r, ri%2 == 0)
			got, ok := fn.run(r, nIn, pristine)
			g := ""
			if ok {
				g = jsonOf(got)
			}
			done()
			if !ok {
				continue
			}
			ran++
			if jsonOf(nIn) != in {
				t.Errorf("%s (request %d, %s): native call changed its input to %s", src, ri, in, jsonOf(nIn))
			}
			want, err := s.decorateJS(context.Background(), src, r, gIn)
			if err != nil {
				t.Errorf("%s (request %d, %s): native gives %s, goja fails: %v", src, ri, in, g, err)
				continue
			}
			w := jsonOf(want)
			if g != w {
				t.Errorf("%s (request %d, %s):\nnative %s\n  goja %s", src, ri, in, g, w)
			}
			if fn.responseOnly {
				if prev, seen := constant[in]; seen && prev != w {
					t.Errorf("%s is constant, but goja answers %s with %s for request %d, %s for an earlier one", src, in, w, ri, prev)
				}
				constant[in] = w
			}
		}
	}
	return ran
}

// TestNativeMatchesGoja runs scripts of the native subset both ways. Each must run natively
// for at least one request and response.
func TestNativeMatchesGoja(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, src := range []string{
		`(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`,
		`function (request, response) { response.headers['X-Path'] = request.path; response.body += '!'; }`,
		`function (config, response) { response.headers['X-A'] = response.headers['X-A']; }`,
		`function (config, response) { response.statusCode = response.statusCode + 1; response.body = response.statusCode + ' ' + config.request.method; }`,
		`function (config, response) { response.statusCode += '1'; }`,
		`(config) => { config.response.body = config.request.headers['X-Id'] || 'none'; }`,
		`(config) => { config.response.body = config.headers['X-Id'] === config.request.headers['X-Id']; }`,
		`(config) => { config.response.body = ` + "`${config.method} ${config.path} ${config.request.body} ${config.request.ip} ${config.request.requestFrom}`" + `; }`,
		`(config) => { config.response.body = config.request.query.b + config.request.method; }`,
		`(config) => { config.response.body = config.request.form.b + config.form.a; }`,
		`(config) => { config.response.body = config.request.data; }`,
		`(config) => { config.response.body = 1e21 + 0.1 + ''; }`,
		`(config) => { config.response.body = 0.000001 + ' ' + 1e-7 + ' ' + 123456789012345680000 + ' ' + (1e308 + 1e308) + ' ' + 0.0; }`,
		`(config) => { config.response.body = 1e308 + 1e308; config.response.statusCode = null; config.response.headers.b = true; }`,
		`(config) => { config.response.body = null + 'x' + undefined + true + false; }`,
		`(config) => { config.response.headers = 'none'; }`,
		`(config) => { var h = config.response.headers; config.response.headers = 'gone'; h['X-B'] = 'kept apart'; config.response.body = h['X-B']; }`,
		`(config, response) => { var h = response.headers; h['X-B'] = '2'; config.response.headers['X-C'] = h['X-B'] + '3'; }`,
		`(config, response) => { response.body.inner.k = 'w'; response.body.n += 1; response.body.inner.n = response.body.n; }`,
		`(config, response) => { response.body.inner.k = 'w'; response.body = 'flat'; }`,
		`(config, response) => { response['statusCode'] = 404; response[1] = 'one'; response[1.5] = 'x'; }`,
		`(config, response) => { if (response.statusCode === 200) { response.statusCode = 201; } else if (response.statusCode == null) response.body = 'no'; else { return; } response.body = 'after'; }`,
		`(config, response) => { return response; }`,
		`(config, response) => { return config.response; }`,
		`(config, response) => { response.body = 'x'; return ''; }`,
		`(config, response) => { response.body = 'x'; return 0; }`,
		`(config, response) => { response.body = 'x'; return null; }`,
		`(config, response) => response.body = ''`,
		`(config, response) => { let a = 'a', b; const c = a + b; response.body = c === 'aundefined' ? !b : !!b; }`,
		`(config, response) => { response.body = (undefined == null) + ' ' + (null != undefined) + ' ' + ('1' !== 1 ? 'y' : 'n') + (true && 'and') + (0 || 'or') + ('' && 'no'); }`,
		`(config, response) => { response.body = 'é\u00e9 ✓' + ` + "`line\\n${response.statusCode}`" + `; }`,
		`function (config, response, logger) { if (logger) { response.body = 'has logger'; } }`,
		`function (config) { config.response.body = config.request.method === 'POST' ? config.request.body : config.request.path; }`,
		// Absent keys read undefined (Object.prototype's names give up).
		`(config) => { config.response.body = config.response.missing + 'x' + config.request.missing + config.missing + config.request.query.none; }`,
		`(config) => { config.response.body = config.request.headers['x-id'] || config.request.query.c || 'none'; }`,
		`(config) => { config.response.body = config.request.form === undefined ? 'no form' : 'form'; config.response.x = config.request.body == null; }`,
		`(config) => { if (config.response.headers.Missing === undefined && !config.response.nothing) { config.response.body = 'absent'; } }`,
		`(config) => { config.response.body = config.response.headers + ''; }`, // an object gives up; absent, undefined
	} {
		if compileNative(src) == nil {
			t.Errorf("%s: not native", src)
			continue
		}
		if checkNative(t, s, src) == 0 {
			t.Errorf("%s: never ran natively", src)
		}
	}
}

// TestNativeGivesUp runs scripts whose native form must give up (goja throws, or does what the
// subset does not model) for every request and response.
func TestNativeGivesUp(t *testing.T) {
	for _, src := range []string{
		`(config) => { config.response.body = config.request.query.a; }`, // an array
		`(config) => { config.response.body = config.state; }`,
		`(config) => { config.response.body = config.logger; }`,
		`(config) => { config.response.body = config.response.body.length; }`,
		`(config) => { config.request.path = '/x'; }`,
		`(config) => { config.response.body = config.response; }`,
		`(config) => { config.response.body = undefined; }`,
		`(config) => { config.response.body = '' + config.response.toString; }`, // Object.prototype has it
		`(config) => { config.response.body = config.response.body.constructor; }`,
		`(config) => { config.response.body = config.response.constructor; }`,
		`(config) => { config.response.__proto__ = null; }`,
		`(config) => { config.response.body = config.request == config; }`,
		`(config) => { config.response.body = 1 == '1'; }`,
		`(config) => { config.response.body = true + 1; }`,
		`(config) => { return 'x'; }`,
		`(config) => { return config.request; }`,
		`(config, response, logger) => { logger.info('x'); }`,
		`(config, response, logger, fourth) => { response.body = fourth.x; }`,
	} {
		fn := compileNative(src)
		if fn == nil {
			continue
		}
		for ri, r := range nativeRequests() {
			for _, in := range nativeResponses {
				if got, ok := fn.run(r, mustObject(t, in), true); ok {
					t.Errorf("%s (request %d, %s): ran natively, giving %s", src, ri, in, jsonOf(got))
				}
			}
		}
	}
}

// TestNativeDifferential compares native and goja results for random scripts of (mostly) the
// subset.
func TestNativeDifferential(t *testing.T) {
	runNativeDifferential(t, rand.New(rand.NewPCG(1, 2)), randomDecorate, checkNative)
}

// runNativeDifferential runs 3000 (300 with -short) random functions from gen through check,
// which compares native and goja results and returns how many calls ran natively.
func runNativeDifferential(t *testing.T, rng *rand.Rand, gen func(*rand.Rand) string, check func(*testing.T, *Scope, string) int) {
	t.Helper()
	n := 3000
	if testing.Short() {
		n = 300
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	compiled, ran := 0, 0
	for range n {
		src := gen(rng)
		if compileNative(src) != nil {
			compiled++
		}
		ran += check(t, s, src)
		if t.Failed() {
			return
		}
	}
	// The generator aims at the subset: most scripts must compile and many calls run natively.
	t.Logf("%d of %d scripts native, %d native calls", compiled, n, ran)
	if compiled < n/2 || ran < n {
		t.Errorf("%d of %d scripts native, %d native calls: the generator no longer exercises the subset", compiled, n, ran)
	}
}

// FuzzNativeDecorate compares native and goja results for any script the subset accepts.
func FuzzNativeDecorate(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomDecorate(rng))
	}
	f.Add(`(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`)
	s := New(Options{Timeout: time.Minute}).NewScope(nil) // far above any call's time: a time-out here is no verdict
	f.Fuzz(func(t *testing.T, src string) {
		checkNative(t, s, src)
	})
}

// randomDecorate writes a random decorate function, mostly of the native subset.
func randomDecorate(rng *rand.Rand) string {
	g := &scriptGen{rng: rng}
	var b strings.Builder
	params := []string{"(config)", "(config, response)", "function (config, response, logger)", "function (request, response)"}[rng.IntN(4)]
	switch {
	case strings.HasPrefix(params, "function"):
		b.WriteString(params + " {")
		g.params = strings.Split(strings.TrimSuffix(strings.TrimPrefix(params, "function ("), ")"), ", ")
	default:
		b.WriteString(params + " => {")
		g.params = strings.Split(strings.Trim(params, "()"), ", ")
	}
	for range 1 + rng.IntN(5) {
		b.WriteString(" " + g.stmt(true))
	}
	b.WriteString(" }")
	return b.String()
}

type scriptGen struct {
	rng    *rand.Rand
	params []string
	locals []string
	inject bool     // an inject function: no response argument
	objs   []string // locals holding objects
}

func (g *scriptGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

// resp is an expression for the response.
func (g *scriptGen) resp() string {
	if len(g.params) > 1 && g.params[1] == "response" && g.rng.IntN(2) == 0 {
		return "response"
	}
	return g.params[0] + ".response"
}

func (g *scriptGen) target() string {
	r := g.resp()
	switch g.rng.IntN(8) {
	case 0:
		return r + ".statusCode"
	case 1:
		return r + ".headers['" + g.pick("X-A", "X-New", "Content-Type", "Set-Cookie") + "']"
	case 2:
		return r + ".headers." + g.pick("X_B", "x")
	case 3:
		return r + ".body.inner.k"
	case 4:
		return r + "[" + g.pick("'body'", "'headers'", "0", "'_mode'") + "]"
	case 5:
		if len(g.locals) > 0 {
			return g.locals[g.rng.IntN(len(g.locals))]
		}
		return r + ".body"
	case 6:
		return g.params[0] + ".request.path" // gives up
	default:
		return r + ".body"
	}
}

func (g *scriptGen) stmt(top bool) string {
	switch g.rng.IntN(10) {
	case 0, 1, 2, 3:
		op := g.pick(" = ", " = ", " += ")
		return g.target() + op + g.expr(2) + ";"
	case 4:
		if top {
			name := fmt.Sprintf("v%d", len(g.locals))
			decl := g.pick("var", "let", "const") + " " + name + " = " + g.expr(2) + ";"
			g.locals = append(g.locals, name) // const locals may be picked as targets: then not native
			return decl
		}
		return ";"
	case 5:
		s := "if (" + g.expr(2) + ") { " + g.stmt(false) + " }"
		if g.rng.IntN(2) == 0 {
			s += " else " + g.stmt(false)
		}
		return s
	case 6:
		return g.pick("return;", "return "+g.resp()+";", "return "+g.expr(1)+";", "return null;")
	case 7:
		return g.expr(2) + ";"
	case 8:
		return g.pick("JSON.stringify(1);", "delete "+g.resp()+".body;", "var w = Math.random();", ";")
	default:
		return g.target() + " = " + g.member(3) + ";"
	}
}

func (g *scriptGen) expr(depth int) string {
	if depth <= 0 || g.rng.IntN(3) == 0 {
		return g.leaf()
	}
	switch g.rng.IntN(8) {
	case 7:
		return g.jsonCall(depth - 1)
	case 0, 1:
		return "(" + g.expr(depth-1) + " + " + g.expr(depth-1) + ")"
	case 2:
		return "(" + g.expr(depth-1) + g.pick(" === ", " !== ", " == ", " != ") + g.expr(depth-1) + ")"
	case 3:
		return "(" + g.expr(depth-1) + g.pick(" && ", " || ") + g.expr(depth-1) + ")"
	case 4:
		return "!" + g.expr(depth-1)
	case 5:
		return "(" + g.expr(depth-1) + " ? " + g.expr(depth-1) + " : " + g.expr(depth-1) + ")"
	default:
		return "`t${" + g.expr(depth-1) + "}-${" + g.expr(depth-1) + "}`"
	}
}

func (g *scriptGen) leaf() string {
	c, r := g.params[0], g.resp()
	if len(g.locals) > 0 && g.rng.IntN(6) == 0 {
		return g.locals[g.rng.IntN(len(g.locals))]
	}
	if g.inject {
		if len(g.objs) > 0 && g.rng.IntN(4) == 0 {
			return g.objs[g.rng.IntN(len(g.objs))] + g.pick(".body", ".statusCode", ".headers['X-A']", ".n", ".a")
		}
		return g.pick("'x'", "''", `"é"`, "0", "1", "2.5", "1e21", "true", "false", "null", "undefined",
			c+".request.path", c+".request.method", c+".request.body", c+".request.headers['X-Id']", c+".headers['X-Id']",
			c+".request.headers.Host", c+".request.query.b", c+".request.ip", c+".path", c+".method", c+".missing")
	}
	return g.pick(
		"'x'", "''", `"é"`, "0", "1", "2.5", "1e21", "0.1", "true", "false", "null", "undefined",
		r+".body", r+".statusCode", r+".headers['X-A']", r+".headers['Set-Cookie']", r+".body.inner.k", r+".body.n", r+"._mode",
		c+".request.path", c+".request.method", c+".request.body", c+".request.headers['X-Id']", c+".headers['X-Id']",
		c+".request.query.b", c+".request.query.a", c+".request.form.b", c+".request.data", c+".request.ip", c+".path",
		c+".request.requestFrom", c+".missing", r+".missing",
	)
}

// BenchmarkNativeDecorate is BenchmarkDecorateScripts' scenario script run natively.
func BenchmarkNativeDecorate(b *testing.B) {
	s := New(Options{Timeout: time.Second}).NewScope(nil)
	const src = `(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`
	resp := config.NewObject("statusCode", 200.0, "headers", config.NewObject("Content-Type", "text/plain"), "body", "hello")
	r := testRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := s.Decorate(ctx, src, r, resp)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}

// TestValidText: validText is utf8.ValidString.
func TestValidText(t *testing.T) {
	for _, s := range []string{"", "a", "/inject", "decorate-19", "0123456789abcdefg", "caf\u00e9", "caf\xe9", "abc\xff", "\xff", "\u2028", "ab\xed\xa0\x80", "abcdefgh\xc3", "abcdefgh\xc3\xa9",
		"abcdefghijklmnopq\xff", "abcdefghi\xe9klmnopqrstuvwxyz", "abcdefghijklmno\u00e9pqrstuvw", "0123456789abcdef", "\xed\xa0\x80abcdefgh"} {
		if got, want := validText(s), utf8.ValidString(s); got != want {
			t.Errorf("validText(%q) = %v, want %v", s, got, want)
		}
	}
}
