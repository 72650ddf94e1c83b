package script

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// checkNativeInject runs the inject function src natively and on goja for every request and
// fails when the native result differs from goja's. It returns how many calls ran natively.
func checkNativeInject(t *testing.T, s *Scope, src string, reqs []*request.Request) int {
	t.Helper()
	if s.e.compile(src).err != nil {
		return 0
	}
	fn, pristine := s.native(src, kindResponse) // as Response finds it
	if fn == nil {
		return 0
	}
	ran := 0
	for ri, r := range reqs {
		// Every other request as the imposter calls it: its strings may be its slab's.
		done := withSlab(r, ri%2 == 0)
		got, ok := fn.runInject(r, pristine)
		g := ""
		if ok {
			g = jsonOf(got)
		}
		done()
		// A shaped function's answer is its fixed members with the body runBody gives.
		shaped, shapedOK := "", false
		if fn.shape != nil {
			done := withSlab(r, ri%2 == 1)
			var body config.Value
			if body, shapedOK = fn.runBody(r, pristine); shapedOK {
				shaped = shapeFields(fn.shape.fixed, body)
			}
			done()
			if ok && !shapedOK {
				t.Errorf("%s (request %d): runs natively, but not its body", src, ri)
			}
		}
		if !ok && !shapedOK {
			continue
		}
		ran++
		want, err := s.responseJS(context.Background(), src, r)
		if err != nil {
			t.Errorf("%s (request %d): native gives %s (body alone %s), goja fails: %v", src, ri, g, shaped, err)
			continue
		}
		if w := jsonOf(want); ok && g != w {
			t.Errorf("%s (request %d):\nnative %s\n  goja %s", src, ri, g, w)
		}
		if w := shapeFields(want, mustGet(want, "body")); shapedOK && shaped != w {
			t.Errorf("%s (request %d): shaped\nnative %s\n  goja %s", src, ri, shaped, w)
		}
	}
	return ran
}

// withSlab attaches a slab that may hold the call's strings to r when on is set, as the
// imposter does for a response whose one script call is native; the function it returns
// releases it (what the call returned must not be used afterwards).
func withSlab(r *request.Request, on bool) func() {
	if !on {
		return func() {}
	}
	slab := AttachSlab(r)
	slab.AllowText()
	return func() {
		slab.Release()
		r.SetMemo(slabKey, nil)
	}
}

// TestNativeInjectMatchesGoja runs inject functions of the native subset both ways. Each must
// run natively for at least one request.
func TestNativeInjectMatchesGoja(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, src := range []string{
		// bench/'s inject scenario
		`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`,
		`function (request, state, logger) { return { body: request.method + ' ' + request.path }; }`,
		`(config) => ({ statusCode: '201', headers: { 'X-Method': config.request.method, 'X-Id': config.request.headers['X-Id'] || 'none' }, body: config.request.body })`,
		`(config) => ({ body: { path: config.path, list: [1, 'two', null, true, undefined, 1e308 + 1e308, { deep: [[]] }], empty: {}, none: [] } })`,
		`(config) => ({ body: JSON.stringify({ a: 1, b: [1, { c: 'x' }], d: {}, e: [], f: null, g: true, h: 0, i: 1e21, j: 1.5e-7, k: 0.1 + 0.2 }, null, 2) })`,
		`(config) => ({ body: JSON.stringify([config.request.path, config.request.body, config.request.method], undefined, '\t-') })`,
		`(config) => ({ body: JSON.stringify({ a: [1, { b: 2 }] }, null, 20) + JSON.stringify({ a: 1 }, null, 3.7) + JSON.stringify({ a: 1 }, null, 0) + JSON.stringify({ a: 1 }, null, 'abcdefghijklmnop') })`,
		`(config) => ({ body: JSON.stringify(config.request.query) + JSON.stringify(config.request.headers) })`,
		`(config) => ({ body: JSON.stringify(config.request) })`,
		`(config) => ({ body: JSON.stringify(config.request.form) })`,
		`(config) => ({ body: JSON.stringify(config.request.body) + JSON.stringify(config.request.path) + JSON.stringify(undefined) + JSON.stringify(null) + JSON.stringify(1e308 + 1e308) })`,
		`(config) => ({ body: JSON.stringify({ a: 'x', b: 'y', a: 'z' }) })`,
		`(config) => { var r = { statusCode: 200, headers: {} }; r.headers['X-A'] = 'a'; r.body = 'x'; r.headers.b = r.headers['X-A'] + '!'; r.statusCode += 1; return r; }`,
		`(config) => { const r = { headers: { a: '1' } }; let h = r.headers; h.b = '2'; r.headers.c = h.b; return r; }`,
		`(config) => { const r = { headers: { a: '1' } }; let h = r.headers; r.headers = { z: '0' }; h.b = '2'; r.body = JSON.stringify(h); return r; }`,
		`(config) => { const r = {}; r.body = { n: 1 }; r.body.n += 1; r.body.m = [1, 2]; return r; }`,
		`(config) => { const r = { a: 1e308 + 1e308 }; r.b = r.a + 1; r.c = r.a; r.d = '' + r.a; r.e = 1e308 + 1e308 + 1; return r; }`,
		`(config) => { const r = { body: 'x' }; return r.body; }`,
		`(config) => 'text'`,
		`(config) => 42`,
		`(config) => { const r = { headers: { a: '1' } }; return r.headers; }`,
		`(config) => config.request.method === 'POST' ? { statusCode: 201, body: config.request.body } : { statusCode: 405 }`,
		`function (config) { if (config.request.path === '/users/42') { return { body: 'user 42' }; } return { statusCode: 404 }; }`,
		`function (config) { var name = config.request.query.b; return { body: ` + "`hello ${name}`" + ` }; }`,
		`function (config, state) { return { body: 'no state read' }; }`,
		`function (config, state, logger, callback) { if (callback) { return { body: 'has callback' }; } }`,
		`(config) => ({ 'Content-Type': 'x', 'x y': 1, 'é': 2, '01': 3, '4294967295': 4, '-1': 5, constructor: 6, toJSON: 7, valueOf: 8 })`,
		`(config) => ({ body: JSON.stringify({ toJSON: 7, s: '\u2028\u2029\x7f\x00\x1f\b\f\n\r\t"\\/' }) })`,
		`(config) => ({ statusCode: 200 + '', body: 0, headers: null, _mode: 'text' })`,
		`(config) => ({ body: config.request.data, statusCode: config.request.ip === '127.0.0.1' ? 200 : 500 })`,
		// Absent keys read undefined.
		`(config) => ({ body: 'hello ' + (config.request.query.name || 'anon') + ' ' + config.request.headers['X-None'] + ' ' + config.response })`,
		`function (config) { var id = config.request.query.b; if (id === undefined) { return { statusCode: 404 }; } return { body: JSON.stringify({ id: id }) }; }`,
		`(config) => ({ body: JSON.stringify([config.request.form, config.nothing]) })`,
		// JSON.stringify of an object literal writes it without making it: members that call
		// JSON.stringify themselves, indents, numbers that are not finite, nested literals.
		`(config) => ({ body: JSON.stringify({ a: JSON.stringify({ b: config.request.path, c: [JSON.stringify({ d: 1 })] }), e: config.request.method, f: 1e308 + 1e308, g: 1e21, h: { i: JSON.stringify({ j: 'k' }, null, 2) } }, null, '--') })`,
		`(config) => ({ body: JSON.stringify({ q: config.request.query.b, n: null, t: true, f: false, x: 0.1, o: {}, l: [] }) + JSON.stringify({ only: {}, after: { z: 1 } }, null, 4) })`,
		`(config) => ({ body: JSON.stringify({ s: config.request.body + config.request.path, m: config.request.headers['X-Id'] }, null, ' ') })`,
		// Keys and constant values written as prepared JSON (quotes, escapes, characters past
		// ASCII, numbers in JSON's forms), beside values of the request, with and without a gap.
		`(config) => ({ body: JSON.stringify({ 'k"\u00e9\\': 'v"\u00e9\\n\u2028', n: 5e-324, big: 1e21, t: true, nil: null, p: config.request.path, 'a b': '' }, null, 2) + JSON.stringify({ '': 'e', x: 'y', p: config.request.path }) })`,
		// config.request.<name> read straight from the request when the local holds the config
		// (also through another local), and as any member read when it holds something else.
		`(config) => { const c = config; let d = config; return { body: c.request.path + d.request.method + config['request'].body, headers: { h: c.request.headers['X-Id'] } }; }`,
		`(config) => { let c = config; c = { request: { path: 'mine' } }; return { body: c.request.path + config.request.path }; }`,
		`(config) => ({ body: JSON.stringify({ p: config.request.path, q: config.request.query.b, i: config.request.ip, f: config.request.requestFrom }) })`,
		// Written as evaluated (members only read): a later member the writer cannot write
		// (text that is not valid UTF-8 for some requests) gives up the whole call.
		`(config) => ({ body: JSON.stringify({ a: 'first', p: config.request.path, b: config.request.body, n: 1 }, null, 2) })`,
	} {
		if compileNative(src) == nil {
			t.Errorf("%s: not native", src)
			continue
		}
		if checkNativeInject(t, s, src, nativeRequests()) == 0 {
			t.Errorf("%s: never ran natively", src)
		}
	}
}

// TestNativeInjectGivesUp runs inject functions whose native form must give up for every request.
func TestNativeInjectGivesUp(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, src := range []string{
		`(config) => ({ body: config.state })`,
		`(config) => ({ body: config.response })`,
		`(config) => ({ body: config.callback })`,
		`(config) => ({ body: config.logger })`,
		`(config, state) => ({ body: state.x })`,
		`(config, state, logger) => { logger.info('x'); return {}; }`,
		`(config) => ({ body: JSON.stringify(config) })`,
		`(config) => ({ body: undefined })`,
		`(config) => ({ body: config.request.query })`,
		`(config) => { const h = { a: 1 }; return { headers: h }; }`,
		`(config) => { const r = {}; r[0] = 'x'; return r; }`,
		`(config) => { const r = {}; r.__proto__ = 'x'; return r; }`,
		`(config) => { const a = [1]; return { n: a.length }; }`,
		`(config) => { const r = {}; return r.missing; }`,
		`(config) => config.request`,
		`(config) => config.request.headers`,
		`(config) => ({ body: JSON.stringify({ a: 1 } + '') })`,
		`(config) => ({ body: JSON.stringify({ a: undefined, b: config.missing }) })`,       // undefined in an object
		`(config) => { const r = { body: 'x' }; r[1] = 'one'; return r; }`,                  // an array index
		`(config) => { const r = { body: 'x' }; r.body = config.request.query; return r; }`, // an object not made here
		`(config) => undefined`,
		`(config) => [1, 2]`,
		`function (config, state) { return { body: JSON.stringify(config.request.path) }; }`,            // JSON on the imposter's runtime
		`(config) => ({ body: JSON.stringify({ p: config.request.path, q: config.request.query }) })`,   // an object not made here, written as read
		`(config) => ({ body: JSON.stringify({ p: config.request.path, u: config.request.nothing }) })`, // undefined in an object, written as read
		`(config) => ({ body: config.request.__proto__ })`,
	} {
		fn, pristine := s.native(src, kindResponse)
		if fn == nil {
			continue
		}
		for ri, r := range nativeRequests() {
			if got, ok := fn.runInject(r, pristine); ok {
				t.Errorf("%s (request %d): ran natively, giving %s", src, ri, jsonOf(got))
			}
		}
	}
}

// TestNativeInjectDifferential compares native and goja results for random inject functions of
// (mostly) the subset.
func TestNativeInjectDifferential(t *testing.T) {
	runNativeDifferential(t, rand.New(rand.NewPCG(5, 6)), randomInject, func(t *testing.T, s *Scope, src string) int {
		return checkNativeInject(t, s, src, nativeRequests())
	})
}

// FuzzNativeInject compares native and goja results of an inject function, any the fuzzer
// writes or one from randomInject's grammar (by seed), for a request made of the fuzzed parts.
func FuzzNativeInject(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 20 {
		f.Add(randomInject(rng), uint64(0), "GET", "/p", "", "a", "1", "X-Id", "v")
		f.Add("", uint64(i+1), "POST", "/\u2028\"", "{\"a\":\"\x01\"}", "2", "é", "0", "\x7f")
	}
	f.Add(`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`,
		uint64(0), "GET", "/inject", "", "", "", "Host", "x")
	s := New(Options{Timeout: time.Minute}).NewScope(nil)
	f.Fuzz(func(t *testing.T, src string, seed uint64, method, path, body, qn, qv, hn, hv string) {
		if seed != 0 {
			src = randomInject(rand.New(rand.NewPCG(seed, seed)))
		}
		r := &request.Request{Method: method, Path: path, Body: body,
			Query: []request.KV{{Name: qn, Value: qv}}, Headers: []request.KV{{Name: hn, Value: hv}, {Name: "Host", Value: "x"}}}
		r.SetClient("127.0.0.1", "127.0.0.1:5555")
		checkNativeInject(t, s, src, []*request.Request{r})
	})
}

// randomInject writes a random inject function, mostly of the native subset.
func randomInject(rng *rand.Rand) string {
	g := &scriptGen{rng: rng, inject: true}
	var b strings.Builder
	params := []string{"(config)", "function (config)", "function (request, state, logger)", "(config, state)"}[rng.IntN(4)]
	switch {
	case strings.HasPrefix(params, "function"):
		b.WriteString(params + " {")
		g.params = strings.Split(strings.TrimSuffix(strings.TrimPrefix(params, "function ("), ")"), ", ")
	default:
		b.WriteString(params + " => {")
		g.params = strings.Split(strings.Trim(params, "()"), ", ")
	}
	for range rng.IntN(5) {
		b.WriteString(" " + g.injectStmt(true))
	}
	b.WriteString(" " + g.pick("return "+g.object(3)+";", "return "+g.object(2)+";", g.injectReturn()) + " }")
	return b.String()
}

func (g *scriptGen) injectReturn() string {
	if len(g.objs) > 0 && g.rng.IntN(3) > 0 {
		return "return " + g.objs[g.rng.IntN(len(g.objs))] + ";"
	}
	return g.pick("return "+g.expr(1)+";", "return;", "return null;", "return "+g.object(1)+";")
}

func (g *scriptGen) injectStmt(top bool) string {
	switch g.rng.IntN(8) {
	case 0, 1:
		if top {
			name := fmt.Sprintf("o%d", len(g.objs))
			decl := g.pick("var", "let", "const") + " " + name + " = " + g.object(2) + ";"
			g.objs = append(g.objs, name)
			return decl
		}
		return ";"
	case 2, 3:
		if len(g.objs) > 0 {
			o := g.objs[g.rng.IntN(len(g.objs))]
			t := g.pick(o+".body", o+".statusCode", o+".headers['X-A']", o+".headers.x", o+"['_mode']", o+".body.n", o+"[1]", o+".nested")
			return t + g.pick(" = ", " = ", " += ") + g.pick(g.expr(2), g.object(1), "[1, 2]", g.expr(1)) + ";"
		}
		return g.stmt(top)
	case 4:
		s := "if (" + g.expr(2) + ") { " + g.pick(g.injectStmt(false), g.injectReturn()) + " }"
		if g.rng.IntN(2) == 0 {
			s += " else " + g.injectStmt(false)
		}
		return s
	case 5:
		if top {
			name := fmt.Sprintf("v%d", len(g.locals))
			decl := g.pick("var", "let") + " " + name + " = " + g.expr(2) + ";"
			g.locals = append(g.locals, name)
			return decl
		}
		return ";"
	default:
		return g.expr(2) + ";"
	}
}

// object writes an object literal.
func (g *scriptGen) object(depth int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range g.rng.IntN(4) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.pick("statusCode", "headers", "body", "_mode", "'Content-Type'", "'x y'", "'é'", "a", "n", "a"))
		b.WriteString(": ")
		b.WriteString(g.member(depth - 1))
	}
	b.WriteString("}")
	return b.String()
}

// member writes a value stored in an object or array.
func (g *scriptGen) member(depth int) string {
	if depth > 0 {
		switch g.rng.IntN(5) {
		case 0:
			return g.object(depth)
		case 1:
			return "[" + g.member(depth-1) + ", " + g.member(depth-1) + "]"
		}
	}
	return g.expr(depth)
}

// jsonCall writes a JSON.stringify call.
func (g *scriptGen) jsonCall(depth int) string {
	c := g.params[0]
	arg := g.pick(g.member(depth), g.expr(depth), c+".request.query", c+".request.headers", c+".request", c+".request.form", c)
	if !g.inject && g.rng.IntN(3) == 0 {
		arg = g.resp() + g.pick("", ".headers", ".body")
	}
	if len(g.objs) > 0 && g.rng.IntN(3) == 0 {
		arg = g.objs[g.rng.IntN(len(g.objs))]
	}
	return "JSON.stringify(" + arg + g.pick("", "", ", null, 2", ", undefined, '\\t'", ", null, 11", ", null, -3", ", null, ' '") + ")"
}

// TestNativeAbsentKeyOnTheImposterRuntime: a function goja runs on the imposter's runtime, where
// another script may have changed Object.prototype, does not read an absent key natively.
func TestNativeAbsentKeyOnTheImposterRuntime(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	ctx := context.Background()
	// It uses the state: it runs on the imposter's runtime, and gives every object there a key.
	if _, err := s.Response(ctx, `function (config, state) { Object.prototype.missing = 'inherited'; return {}; }`, testRequest()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Response(ctx, `function (config, state) { return { body: '' + config.request.missing }; }`, testRequest())
	if err != nil || jsonOf(got) != `{"body":"inherited"}` {
		t.Errorf("inject on the imposter's runtime: %s %v", jsonOf(got), err)
	}
	got, err = s.Decorate(ctx, `(config) => { if (!config.request) { config.state.x = 1; } config.response.body = '' + config.response.missing; }`,
		testRequest(), mustObject(t, `{"body":"x"}`))
	if err != nil || jsonOf(got) != `{"body":"inherited"}` {
		t.Errorf("decorate on the imposter's runtime: %s %v", jsonOf(got), err)
	}
	// On a pooled runtime (which no script changes) the same reads are undefined, natively.
	got, err = s.Response(ctx, `function (config) { return { body: '' + config.request.missing }; }`, testRequest())
	if err != nil || jsonOf(got) != `{"body":"undefined"}` {
		t.Errorf("inject on a pooled runtime: %s %v", jsonOf(got), err)
	}
}

// shapeFields is the fields of an inject's answer an http response is compiled from, as one
// text: fixed's statusCode, headers and _mode, and body.
func shapeFields(fixed *config.Object, body config.Value) string {
	return jsonOf(config.NewObject("statusCode", mustGet(fixed, "statusCode"), "headers", mustGet(fixed, "headers"),
		"_mode", mustGet(fixed, "_mode"), "body", body))
}

func mustGet(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// TestInjectShape: which inject functions have their answer's members but the body fixed when
// compiled, and what those are.
func TestInjectShape(t *testing.T) {
	s := New(Options{}).NewScope(nil)
	for _, tc := range []struct{ src, fixed string }{
		{`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`,
			`{"statusCode":200,"headers":{"Content-Type":"application/json"}}`},
		{`(config) => ({ body: config.request.path })`, `{}`},
		{`() => ({ statusCode: '404', _mode: 'binary' })`, `{"statusCode":"404","_mode":"binary"}`},
		{`(config) => ({ headers: { 'X-N': 1, 'X-B': true, 'X-Null': null }, body: config.request.method + '!' })`, `{"headers":{"X-N":1,"X-B":true,"X-Null":null}}`},
		{`(config) => ({ statusCode: config.request.query.code, body: 'x' })`, ``},          // statusCode not constant
		{`(config) => ({ headers: { 'X-P': config.request.path }, body: 'x' })`, ``},        // a header not constant
		{`(config) => ({ headers: { 'X-L': ['a', 'b'] }, body: 'x' })`, ``},                 // an array is not a constant
		{`(config) => ({ body: 'x', other: config.request.path })`, ``},                     // another member: evaluated as usual
		{`(config) => ({ body: 'x', body: 'y' })`, ``},                                      // repeated
		{`(config) => { var p = config.request.path; return { body: p }; }`, ``},            // more than the return
		{`(config) => { return config.request.path ? { body: 'a' } : { body: 'b' }; }`, ``}, // not a literal
		{`(config) => ({ body: config.request.path, statusCode: Date.now() })`, ``},         // not native
	} {
		fixed, _, ok := s.InjectShape(tc.src)
		got := ""
		if ok {
			got = jsonOf(fixed)
		}
		if got != tc.fixed {
			t.Errorf("%s: InjectShape %q, want %q", tc.src, got, tc.fixed)
		}
	}
}

// TestShapedInjectDifferential compares, for random inject functions of one returned literal
// whose members but the body are constants (InjectShape), the fixed members with the body
// runBody evaluates against goja's answer (checkNativeInject).
func TestShapedInjectDifferential(t *testing.T) {
	shaped := 0
	runNativeDifferential(t, rand.New(rand.NewPCG(9, 10)), randomShapedInject, func(t *testing.T, s *Scope, src string) int {
		if _, _, ok := s.InjectShape(src); ok {
			shaped++
		}
		return checkNativeInject(t, s, src, nativeRequests())
	})
	if shaped < 1000 {
		t.Errorf("%d shaped functions: the generator no longer writes them", shaped)
	}
}

// randomShapedInject writes an inject function that returns one object literal of constant
// members (statusCode, headers, _mode) and a body of any expression, in any order.
func randomShapedInject(rng *rand.Rand) string {
	g := &scriptGen{rng: rng, inject: true, params: []string{"config"}}
	var members []string
	if rng.IntN(2) == 0 {
		members = append(members, "statusCode: "+g.pick("200", "201", "'404'", "99", "200.5", "null", "true"))
	}
	if rng.IntN(3) > 0 {
		var hs []string
		for range rng.IntN(3) {
			hs = append(hs, g.pick("'Content-Type'", "'X-A'", "'x-a'", "'Content-Length'", "'Connection'", "'X-\u00e9'", "X_B")+": "+
				g.pick("'application/json'", "'v'", "''", "1", "true", "null", "'close'", "'caf\u00e9'", "'a\\u0001'"))
		}
		members = append(members, "headers: { "+strings.Join(hs, ", ")+" }")
	}
	if rng.IntN(4) == 0 {
		members = append(members, "_mode: "+g.pick("'binary'", "'text'", "''"))
	}
	if rng.IntN(8) > 0 {
		members = append(members, "body: "+g.pick(g.expr(2), g.object(1), "JSON.stringify("+g.object(2)+")"))
	}
	rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	if rng.IntN(2) == 0 {
		return "function (config) { return { " + strings.Join(members, ", ") + " }; }"
	}
	return "(config) => ({ " + strings.Join(members, ", ") + " })"
}
