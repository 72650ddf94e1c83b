package script

import "testing"

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
	})
}
