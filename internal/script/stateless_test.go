package script

import (
	"context"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func TestStateless(t *testing.T) {
	for _, tc := range []struct {
		kind callKind
		src  string
		want bool
	}{
		{kindResponse, `function (config) { return { body: config.request.path }; }`, true},
		{kindResponse, "(config) => ({ body: `${config.request.path} ${config.request.headers['X-Id']}` })", true},
		{kindResponse, `function (config) { var n = JSON.parse(config.request.body); return { body: String(n.a + 1) }; }`, true},
		{kindResponse, `function (config) { setTimeout(function () { config.callback({ body: 'later' }); }, 5); }`, true},
		{kindResponse, `function (request, state, logger) { return { body: 'x' }; }`, false},
		{kindResponse, `function (config) { config.state.count = (config.state.count || 0) + 1; }`, false},
		{kindResponse, `function (config) { var s = config['state']; }`, false},
		{kindResponse, `function (config) { var k = 'st' + 'ate'; return config[k]; }`, false},
		{kindResponse, `function (config) { return { body: JSON.stringify(config) }; }`, false},
		{kindResponse, `function (config) { return Object.keys(config); }`, false},
		{kindResponse, `function (config) { for (var k in config) {} }`, false},
		{kindResponse, `function ({ request, state }) { return {}; }`, false},
		{kindResponse, `function ({ request }) { return { body: request.path }; }`, true},
		{kindResponse, `function (...args) { return {}; }`, false},
		{kindResponse, `function (config) { return { body: arguments[0].state }; }`, false},
		{kindResponse, `function (config) { globalThis.x = 1; }`, false},
		{kindResponse, `function (config) { return this; }`, false},
		{kindResponse, `function (config) { return { body: config.request.constructor.name }; }`, false},
		{kindResponse, `function (config) { var c = config; return c.state; }`, false},
		{kindResponse, `not a function`, false},
		{kindResponse, `function (config) { while (true) {} }`, true},
		{kindPredicate, `function (config, logger) { return config.request.path === '/x'; }`, true},
		{kindPredicate, `function (config, logger, imposterState) { return true; }`, false},
		{kindPredicate, `function (config) { return imposterState.x; }`, false},
		{kindDecorate, `function (config, response, logger) { response.body = 'x'; }`, true},
		{kindDecorate, `function (config, response) { response.body = config.state.x; }`, false},
		{kindWait, `function () { return 100; }`, true},
		{kindEndOfRequest, `function (requestData, logger) { return requestData.length > 4; }`, true},
		// A computed key that is always a number names no state.
		{kindEndOfRequest, `function (d) { return d.length >= 4 && d.length >= 4 + d[0] * 16777216 + d[1] * 65536 + d[2] * 256 + d[3]; }`, true},
		{kindEndOfRequest, `function (d) { return d[d.length - 1] === 10 && d[-(d[0] % 4) | 1] > d[~2 >>> 1]; }`, true},
		{kindResponse, `function (config) { return { body: config[0] }; }`, true},
		{kindEndOfRequest, `function (d) { return d[d[0] + d[1]]; }`, false}, // + joins strings (text mode)
		{kindEndOfRequest, `function (d) { return d[d.x - 1]; }`, false},
		{kindEndOfRequest, `function (d) { return d[d[0]--]; }`, false},
		{kindResponse, `function (config) { return config[config.length - 1].x; }`, true},
		{kindResponse, `function (config) { return config[1 - x]; }`, false},
		// A builtin changed in one runtime of the pool would not be in the others.
		{kindResponse, `function (config) { JSON.counter = (JSON.counter || 0) + 1; return { body: String(JSON.counter) }; }`, false},
		{kindResponse, `function (config) { Math.x++; }`, false},
		{kindResponse, `function (config) { delete JSON.parse; }`, false},
		{kindResponse, `function (config) { Date.now.x = 1; }`, false},
		{kindResponse, `function (config) { JSON['x'] = 1; }`, false},
		{kindResponse, `function (config) { [JSON.x] = [1]; }`, false},
		{kindResponse, `function (config) { Object.assign(Math, { x: 1 }); }`, false},
		{kindResponse, `function (config) { const j = JSON; j.x = 1; }`, false},
		{kindResponse, `function (config) { return { j: { JSON } }; }`, false},
		{kindResponse, `function (config) { return [...Math]; }`, false},
		// Reading, calling and testing builtins, and writing to what the function declares, do not.
		{kindResponse, `function (config) { return { body: JSON.stringify({ a: Math.max(1, 2), d: new Date(0).getTime(), s: String(1), t: typeof Buffer, u: undefined, n: NaN }) }; }`, true},
		{kindResponse, `function (config) { var o = {}; o.x = 1; o.y++; delete o.x; let [a, b] = [1, 2]; const { c, d: [e] } = { c: 1, d: [2] }; return { body: o.y + a + b + c + e }; }`, true},
		{kindResponse, `function (config) { function f(JSON) { JSON.x = 1; } var r = {}; f(r); return r instanceof Object ? {} : { body: 'x' }; }`, true},
		{kindResponse, `function (config) { try { x(); } catch (err) { err.x = 1; } for (const k of [1]) {} for (var i in {}) {} outer: for (;;) { break outer; } }`, true},
		{kindResponse, "(config) => ({ body: `${config.request.path}`, n: config.request.headers['X-Id'] | 0 })", true},
	} {
		if got := analyse(tc.src).stateless(tc.kind); got != tc.want {
			t.Errorf("kind %d %s: stateless %v, want %v", tc.kind, tc.src, got, tc.want)
		}
	}
}

// FuzzStateless reads arbitrary sources; nothing may panic, and a source that does not parse
// as a function is never stateless.
func FuzzStateless(f *testing.F) {
	for _, s := range []string{
		`function (config) { return { body: config.request.path }; }`,
		`(config) => ({ body: config['request'].body })`,
		`function ({ request, state }) { return state; }`,
		"function (c) { return `${c.request.path}`; }",
		`async function (config, injectState) { for (var k in config) {} }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		info := analyse(src)
		if !info.analysed && info.stateless(kindWait) {
			t.Fatalf("%q: stateless without being read", src)
		}
		if !info.analysed && !info.needsNode(kindWait) {
			t.Fatalf("%q: needs no node without being read", src)
		}
	})
}

// A function gets node's additions (installNode) in its runtime unless it cannot use them.
func TestNeedsNode(t *testing.T) {
	for _, tc := range []struct {
		kind callKind
		src  string
		want bool
	}{
		// bench/'s inject scenario
		{kindResponse, `function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`, false},
		{kindResponse, `function (config) { return { body: config.request.headers['X-Id'] + config.request.query.q[0] }; }`, false},
		{kindResponse, `function (config, state) { state.n = (state.n || 0) + 1; return { body: String(state.n) }; }`, false},
		{kindResponse, `function (config, state, logger) { return {}; }`, true},
		{kindResponse, `function (config) { config.logger.info('x'); }`, true},
		{kindResponse, `function (config) { var l = config['logger']; }`, true},
		{kindResponse, `function (config) { return { body: Buffer.from('x').toString('base64') }; }`, true},
		{kindResponse, `function (config) { var b = require('buffer'); }`, true},
		{kindResponse, `function (config) { setTimeout(function () { config.callback({}); }, 1); }`, true},
		{kindResponse, `function (config) { console.log({ a: 1 }); }`, true},
		{kindResponse, `function (config) { return { body: process.env.HOME }; }`, true},
		{kindResponse, `function (config) { return config.request[config.request.path]; }`, true},
		{kindResponse, `function (config) { return this; }`, true},
		{kindResponse, `function (config) { return globalThis.x; }`, true},
		{kindResponse, `function (config) { return x.readUInt8(0); }`, true},
		{kindResponse, `function (...args) { return {}; }`, true},
		{kindResponse, `not a function`, true},
		{kindPredicate, `function (config) { return config.request.path === '/x'; }`, false},
		{kindPredicate, `function (config, logger) { return true; }`, true},
		{kindDecorate, `function (config, response) { response.body = 'x'; }`, false},
		{kindDecorate, `function (config, response, logger) { response.body = 'x'; }`, true},
		{kindWait, `function () { return 100; }`, false},
		{kindEndOfRequest, `function (requestData) { return requestData.length > 4; }`, true},
	} {
		if got := analyse(tc.src).needsNode(tc.kind); got != tc.want {
			t.Errorf("kind %d %s: needsNode %v, want %v", tc.kind, tc.src, got, tc.want)
		}
	}
}

// A runtime that ran only functions that need no node gets it for the first one that does, and
// keeps the state the others left.
func TestNodeInstalledWhenNeeded(t *testing.T) {
	e := newEngine(t, 10*time.Second)
	s := e.NewScope(nil)
	count := `function (config, state) { state.n = (state.n || 0) + 1; return { body: String(state.n) }; }`
	if got, err := s.Response(context.Background(), count, testRequest()); err != nil || jsonOf(got) != `{"body":"1"}` {
		t.Fatalf("%s %v", jsonOf(got), err)
	}
	if s.rt == nil || s.rt.nodeArgs == nil {
		t.Fatal("a function that needs no node had it installed")
	}
	withNode := `function (config, state) { state.n += 1; return { body: Buffer.from(String(state.n)).readUInt8(0) + ' ' + require('util').inspect({ a: [1] }) }; }`
	if got, err := s.Response(context.Background(), withNode, testRequest()); err != nil || jsonOf(got) != `{"body":"50 { a: [ 1 ] }"}` {
		t.Fatalf("%s %v", jsonOf(got), err)
	}
	if s.rt.nodeArgs != nil {
		t.Error("node is not marked installed")
	}
}

// nodeNames (with isNodeName) holds every name of a property installNode adds or changes on
// the global object or on an object it held before.
func TestNodeNames(t *testing.T) {
	for n := range addedByNode() {
		if !isNodeName(n) {
			t.Errorf("installNode adds or changes %q: add it to nodeNames", n)
		}
	}
}

// addedByNode returns the names of the properties installNode adds or changes on the global
// object and on the objects the global object held before (constructors, their prototypes,
// console, process). What it adds elsewhere (the module table) only require reaches.
func addedByNode() map[string]bool {
	e := New(Options{})
	rt := e.newRuntime(e.logger)
	g := rt.nodeArgs.g
	objects := map[string]*goja.Object{"": g}
	for _, k := range g.GetOwnPropertyNames() {
		if o, ok := g.Get(k).(*goja.Object); ok {
			objects[k] = o
			if p, ok := o.Get("prototype").(*goja.Object); ok {
				objects[k+".prototype"] = p
			}
		}
	}
	props := func() map[string]map[string]goja.Value {
		out := map[string]map[string]goja.Value{}
		for name, o := range objects {
			vals := map[string]goja.Value{}
			for _, k := range o.GetOwnPropertyNames() {
				vals[k] = ownValue(o, k)
			}
			out[name] = vals
		}
		return out
	}
	before := props()
	rt.needNode()
	after := props()
	names := map[string]bool{}
	for obj, vals := range after {
		for k, v := range vals {
			if old, ok := before[obj][k]; !ok || !sameValue(old, v) {
				names[k] = true
			}
		}
	}
	rt.discard()
	return names
}

// ownValue is o[k], or nil when reading it throws (a prototype's accessor).
func ownValue(o *goja.Object, k string) (v goja.Value) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return o.Get(k)
}

// sameValue reports whether a and b are the same value (objects: the same object).
func sameValue(a, b goja.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SameAs(b)
}
