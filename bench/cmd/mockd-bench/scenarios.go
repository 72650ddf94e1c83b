package main

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// request is one HTTP request a scenario sends, identical for every engine.
type request struct {
	Method  string
	Path    string // path and query, as sent on the request line
	Headers [][2]string
	Body    string
}

// expect is the answer a scenario must get: the status and either the exact body or, when
// Contains is set, a body that contains it.
type expect struct {
	Status   int
	Body     string
	Contains string
}

// scenario is one measured case: the imposter's stubs (Mountebank JSON), the request and the
// answer it must get. Stubs is nil for a scenario that needs no imposter of its own.
type scenario struct {
	Name        string
	Desc        string
	Quick       bool // part of the --quick subset
	Admin       bool // the request goes to the admin port, not the imposter
	Connections int  // 0 means the --connections default
	Injection   bool // needs --allowInjection; an engine that refuses the imposter is "unavailable"
	Stubs       func() []any
	Req         request
	Want        expect

	// Proto is what the imposter serves and the generator speaks: "" (http), "https" (TLS 1.3,
	// keep-alive) or "tcp" (the request and answer are raw bytes).
	Proto string
	// Imposter holds extra imposter fields (recordRequests, mode, endOfRequestResolver).
	Imposter map[string]any
	// Record says the scenario records requests: mockd's and Mountebank's recordRequests, and
	// the peers' request journal (WireMock) and event log (MockServer), which are off otherwise.
	Record bool
	// Proxy is "proxyAlways", "proxyOnce" or "replay": the stub proxies to a loopback origin in
	// record mode, or (replay) the engine answers from what it recorded from one proxied request.
	Proxy string
	// Setup, when set, makes a setup scenario: Setup plain stubs created through the API and,
	// on another process, from a config file; it measures the time and resident memory.
	Setup int
	// Pairs makes an admin scenario of create-then-delete pairs (POST /imposters and
	// DELETE /imposters/:port, or the peer's equivalent), one after the other.
	Pairs bool
	// Template says the stubs' responses are Handlebars templates (mockd's is.template,
	// WireMock's response-template transformer), which Mountebank and Rift do not have.
	Template bool
}

// loads says whether s is measured under load (requests/s), not a setup scenario.
func (s *scenario) loads() bool { return s.Setup == 0 }

// protocol is the imposter's protocol.
func (s *scenario) protocol() string {
	if s.Proto == "" {
		return "http"
	}
	return s.Proto
}

// stubCount is the number of stubs the scenario loads.
func (s *scenario) stubCount() int {
	if s.Setup > 0 {
		return s.Setup
	}
	if s.Stubs == nil {
		return 0
	}
	return len(s.Stubs())
}

func isResp(status int, body string, headers map[string]any) map[string]any {
	is := map[string]any{"statusCode": status, "body": body}
	if headers != nil {
		is["headers"] = headers
	}
	return map[string]any{"is": is}
}

func stub(predicates []any, responses ...any) map[string]any {
	st := map[string]any{"responses": responses}
	if predicates != nil {
		st["predicates"] = predicates
	}
	return st
}

func equals(fields map[string]any) map[string]any { return map[string]any{"equals": fields} }

var jsonCT = map[string]any{"Content-Type": "application/json"}

// Bodies of the responses; kept short and distinct so a wrong match is visible.
func okBody(kind string, i int) string { return fmt.Sprintf(`{"stub":"%s","index":%d}`, kind, i) }

func simpleStubs() []any {
	return []any{stub([]any{equals(map[string]any{"method": "GET", "path": "/health"})},
		isResp(200, `{"status":"ok"}`, jsonCT))}
}

var apiMethods = []string{"GET", "POST", "PUT", "DELETE"}

func apiPath(i int) string { return fmt.Sprintf("/api/v1/resource%d/items", i) }

// apiStubs is the 500-stub API imposter: stubs on method and path.
func apiStubs() []any {
	out := make([]any, 500)
	for i := range out {
		out[i] = stub([]any{equals(map[string]any{"method": apiMethods[i%4], "path": apiPath(i)})},
			isResp(200, okBody("api", i), jsonCT))
	}
	return out
}

func apiReq(i int) request { return request{Method: apiMethods[i%4], Path: apiPath(i)} }

func orderBody(i int) string {
	return fmt.Sprintf(`{"orderId":"ord-%03d","customer":"acme","qty":%d,"sku":"SKU-%03d"}`, i, i%7+1, i)
}

// jsonEqualsStubs matches a whole JSON object body per stub.
func jsonEqualsStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{equals(map[string]any{"method": "POST", "path": "/orders", "body": map[string]any{
			"orderId": fmt.Sprintf("ord-%03d", i), "customer": "acme", "qty": i%7 + 1, "sku": fmt.Sprintf("SKU-%03d", i),
		}})}, isResp(200, okBody("json", i), jsonCT))
	}
	return out
}

// jsonContainsStubs matches one field of a JSON body with "contains".
func jsonContainsStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{map[string]any{"contains": map[string]any{"body": map[string]any{"sku": fmt.Sprintf("SKU-%03d", i)}}}},
			isResp(200, okBody("contains", i), jsonCT))
	}
	return out
}

func jsonReq(i int) request {
	return request{Method: "POST", Path: "/orders", Headers: [][2]string{{"Content-Type", "application/json"}}, Body: orderBody(i)}
}

func jsonPathStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{map[string]any{
			"equals":   map[string]any{"body": fmt.Sprintf("cust-%03d", i)},
			"jsonpath": map[string]any{"selector": "$.customer.id"},
		}}, isResp(200, okBody("jsonpath", i), jsonCT))
	}
	return out
}

func jsonPathReq(i int) request {
	return request{Method: "POST", Path: "/customers", Headers: [][2]string{{"Content-Type", "application/json"}},
		Body: fmt.Sprintf(`{"customer":{"id":"cust-%03d","tier":"gold","tags":["a","b"]},"items":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`, i)}
}

func xpathStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{map[string]any{
			"equals": map[string]any{"body": fmt.Sprintf("cust-%03d", i)},
			"xpath":  map[string]any{"selector": "//customer/id"},
		}}, isResp(200, okBody("xpath", i), jsonCT))
	}
	return out
}

func xpathReq(i int) request {
	return request{Method: "POST", Path: "/customers", Headers: [][2]string{{"Content-Type", "application/xml"}},
		Body: fmt.Sprintf(`<order><customer><id>cust-%03d</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`, i)}
}

func regexStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{map[string]any{"matches": map[string]any{"path": fmt.Sprintf(`^/api/v2/items%d/[0-9]+/details$`, i)}}},
			isResp(200, okBody("regex", i), jsonCT))
	}
	return out
}

func regexReq(i int) request {
	return request{Method: "GET", Path: fmt.Sprintf("/api/v2/items%d/%d/details", i, 100000+i)}
}

// templateBody is a ~3 KB JSON document, the size of a typical recorded API response.
func templateBody(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"template":%d,"generatedAt":"2024-01-01T00:00:00Z","items":[`, i)
	for j := range 30 {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d-%d","price":%d.99,"currency":"EUR","inStock":true,"tags":["new","sale"]}`, j, i, j, j+10)
	}
	b.WriteString(`],"page":{"number":1,"size":30,"total":300}}`)
	return b.String()
}

func templateStubs() []any {
	out := make([]any, 10)
	for i := range out {
		out[i] = stub([]any{equals(map[string]any{"method": "GET", "path": fmt.Sprintf("/catalog/%d", i)})},
			isResp(200, templateBody(i), map[string]any{"Content-Type": "application/json", "Cache-Control": "no-cache", "X-Template": strconv.Itoa(i)}))
	}
	return out
}

func headerStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{equals(map[string]any{"headers": map[string]any{"X-Tenant": fmt.Sprintf("tenant-%03d", i)}})},
			isResp(200, okBody("header", i), jsonCT))
	}
	return out
}

func headerReq(i int) request {
	return request{Method: "GET", Path: "/profile", Headers: [][2]string{{"Accept", "application/json"}, {"X-Tenant", fmt.Sprintf("tenant-%03d", i)}}}
}

func queryStubs() []any {
	out := make([]any, 100)
	for i := range out {
		out[i] = stub([]any{equals(map[string]any{"query": map[string]any{"tenant": fmt.Sprintf("t%03d", i)}})},
			isResp(200, okBody("query", i), jsonCT))
	}
	return out
}

func queryReq(i int) request {
	return request{Method: "GET", Path: fmt.Sprintf("/search?q=shoes&tenant=t%03d&page=2", i)}
}

const decorateJS = `(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`

func decorateStubs() []any {
	out := make([]any, 20)
	for i := range out {
		r := isResp(200, fmt.Sprintf("decorate-%d", i), map[string]any{"Content-Type": "text/plain"})
		r["_behaviors"] = map[string]any{"decorate": decorateJS}
		out[i] = stub([]any{equals(map[string]any{"method": "GET", "path": fmt.Sprintf("/decorate/%d", i)})}, r)
	}
	return out
}

// logicStubs nests and/or/not over method, path and body.
func logicStubs() []any {
	out := make([]any, 50)
	for i := range out {
		out[i] = stub([]any{map[string]any{"and": []any{
			equals(map[string]any{"method": "POST"}),
			map[string]any{"or": []any{
				equals(map[string]any{"path": fmt.Sprintf("/logic/%d", i)}),
				map[string]any{"startsWith": map[string]any{"path": fmt.Sprintf("/logic-alt/%d/", i)}},
			}},
			map[string]any{"not": map[string]any{"contains": map[string]any{"body": "forbidden"}}},
		}}}, isResp(200, okBody("logic", i), jsonCT))
	}
	return out
}

func scaleStubs(n int) func() []any {
	return func() []any {
		out := make([]any, n)
		for i := range out {
			out[i] = stub([]any{equals(map[string]any{"method": "GET", "path": fmt.Sprintf("/scale/%d", i)})},
				isResp(200, okBody("scale", i), jsonCT))
		}
		return out
	}
}

// handlebarsStubs is one stub whose body is a template of the request's parts, as WireMock's
// users write them.
func handlebarsStubs() []any {
	r := isResp(200, `{"id":"{{request.path.[1]}}","q":"{{request.query.q}}","trace":"{{request.headers.X-Trace}}",`+
		`"name":"{{jsonPath request.body '$.name'}}","method":"{{request.method}}"}`, jsonCT)
	r["is"].(map[string]any)["template"] = true
	return []any{stub([]any{equals(map[string]any{"method": "POST", "path": "/users/42"})}, r)}
}

var handlebarsReq = request{Method: "POST", Path: "/users/42?q=x",
	Headers: [][2]string{{"X-Trace", "t-1"}, {"Content-Type", "application/json"}}, Body: `{"name":"Ada","tags":[1,2,3]}`}

func matched(kind string, i int) expect { return expect{Status: 200, Body: okBody(kind, i)} }

// noMatch is Mountebank's default response when no stub matches.
var noMatch = expect{Status: 200, Body: ""}

// allScenarios is the public Mountebank-vs-Rift benchmark's set plus the scaling series.
func allScenarios() []*scenario {
	get := func(p string) request { return request{Method: "GET", Path: p} }
	s := []*scenario{
		{Name: "simple", Desc: "one stub, method+path", Quick: true, Stubs: simpleStubs, Req: get("/health"), Want: expect{200, `{"status":"ok"}`, ""}},
		{Name: "ping", Desc: "one stub, no predicates", Stubs: func() []any { return []any{stub(nil, isResp(200, "pong", nil))} }, Req: get("/ping"), Want: expect{200, "pong", ""}},
		{Name: "admin-list", Desc: "GET /imposters (500-stub imposter loaded)", Admin: true, Stubs: apiStubs, Req: get("/imposters"), Want: expect{Status: 200, Contains: "imposters"}},
		{Name: "admin-get", Desc: "GET /imposters/:port (500 stubs)", Admin: true, Stubs: apiStubs, Req: get("/imposters/{port}"), Want: expect{Status: 200, Contains: "resource499"}},
		{Name: "api500-first", Desc: "500 stubs on method+path, 1st matches", Stubs: apiStubs, Req: apiReq(0), Want: matched("api", 0)},
		{Name: "api500-middle", Desc: "500 stubs, 250th matches", Stubs: apiStubs, Req: apiReq(249), Want: matched("api", 249)},
		{Name: "api500-last", Desc: "500 stubs, 500th matches", Quick: true, Stubs: apiStubs, Req: apiReq(499), Want: matched("api", 499)},
		{Name: "api500-nomatch", Desc: "500 stubs, none matches", Stubs: apiStubs, Req: get("/api/v1/unknown"), Want: noMatch},
		{Name: "json-equals-first", Desc: "100 stubs, JSON body equals, 1st", Stubs: jsonEqualsStubs, Req: jsonReq(0), Want: matched("json", 0)},
		{Name: "json-equals-middle", Desc: "100 stubs, JSON body equals, 50th", Stubs: jsonEqualsStubs, Req: jsonReq(49), Want: matched("json", 49)},
		{Name: "json-contains", Desc: "100 stubs, JSON body contains a field, 50th", Stubs: jsonContainsStubs, Req: jsonReq(49), Want: matched("contains", 49)},
		{Name: "jsonpath-first", Desc: "100 stubs, JSONPath selector, 1st", Stubs: jsonPathStubs, Req: jsonPathReq(0), Want: matched("jsonpath", 0)},
		{Name: "jsonpath-middle", Desc: "100 stubs, JSONPath, 50th", Stubs: jsonPathStubs, Req: jsonPathReq(49), Want: matched("jsonpath", 49)},
		{Name: "jsonpath-last", Desc: "100 stubs, JSONPath, 100th", Stubs: jsonPathStubs, Req: jsonPathReq(99), Want: matched("jsonpath", 99)},
		{Name: "xpath-first", Desc: "100 stubs, XPath selector, 1st", Stubs: xpathStubs, Req: xpathReq(0), Want: matched("xpath", 0)},
		{Name: "xpath-middle", Desc: "100 stubs, XPath, 50th", Stubs: xpathStubs, Req: xpathReq(49), Want: matched("xpath", 49)},
		{Name: "xpath-last", Desc: "100 stubs, XPath, 100th", Stubs: xpathStubs, Req: xpathReq(99), Want: matched("xpath", 99)},
		{Name: "regex-first", Desc: "100 regex path patterns, 1st", Stubs: regexStubs, Req: regexReq(0), Want: matched("regex", 0)},
		{Name: "regex-middle", Desc: "100 regex path patterns, 50th", Stubs: regexStubs, Req: regexReq(49), Want: matched("regex", 49)},
		{Name: "regex-last", Desc: "100 regex path patterns, 100th", Quick: true, Stubs: regexStubs, Req: regexReq(99), Want: matched("regex", 99)},
		{Name: "template-body", Desc: "10 stubs with ~3 KB JSON bodies and headers", Stubs: templateStubs, Req: get("/catalog/5"), Want: expect{200, templateBody(5), ""}},
		{Name: "handlebars", Desc: "a Handlebars response template: path segment, query, header, JSONPath of the body", Template: true,
			Stubs: handlebarsStubs, Req: handlebarsReq, Want: expect{200, `{"id":"42","q":"x","trace":"t-1","name":"Ada","method":"POST"}`, ""}},
		{Name: "header-first", Desc: "100 stubs routed by header, 1st", Stubs: headerStubs, Req: headerReq(0), Want: matched("header", 0)},
		{Name: "header-middle", Desc: "100 stubs routed by header, 50th", Stubs: headerStubs, Req: headerReq(49), Want: matched("header", 49)},
		{Name: "header-last", Desc: "100 stubs routed by header, 100th", Stubs: headerStubs, Req: headerReq(99), Want: matched("header", 99)},
		{Name: "query-first", Desc: "100 stubs routed by query, 1st", Stubs: queryStubs, Req: queryReq(0), Want: matched("query", 0)},
		{Name: "query-middle", Desc: "100 stubs routed by query, 50th", Stubs: queryStubs, Req: queryReq(49), Want: matched("query", 49)},
		{Name: "query-last", Desc: "100 stubs routed by query, 100th", Stubs: queryStubs, Req: queryReq(99), Want: matched("query", 99)},
		{Name: "decorate", Desc: "20 stubs with a JS decorate behavior, 20th", Injection: true, Stubs: decorateStubs, Req: get("/decorate/19"), Want: expect{200, "decorate-19-decorated", ""}},
		{Name: "and-or-not", Desc: "50 stubs of and/or/not predicates, 50th", Stubs: logicStubs, Req: request{Method: "POST", Path: "/logic/49", Body: "ok"}, Want: matched("logic", 49)},
		{Name: "simple-200conn", Desc: "simple stub with 200 connections", Connections: 200, Stubs: simpleStubs, Req: get("/health"), Want: expect{200, `{"status":"ok"}`, ""}},
	}
	s = append(s, roundTwo()...)
	for _, n := range []int{10, 100, 1000, 10000} {
		quick := n == 10 || n == 10000
		s = append(s,
			&scenario{Name: fmt.Sprintf("scale-%d-last", n), Desc: fmt.Sprintf("%d stubs on method+path, last matches", n), Quick: quick,
				Stubs: scaleStubs(n), Req: get(fmt.Sprintf("/scale/%d", n-1)), Want: matched("scale", n-1)},
			&scenario{Name: fmt.Sprintf("scale-%d-nomatch", n), Desc: fmt.Sprintf("%d stubs, none matches", n),
				Stubs: scaleStubs(n), Req: get("/scale/none"), Want: noMatch})
	}
	return s
}

// imposterDoc is the Mountebank JSON every engine receives for s on port.
func imposterDoc(s *scenario, port int) map[string]any {
	doc := map[string]any{
		"protocol": s.protocol(),
		"port":     port,
		"host":     "127.0.0.1",
		"name":     "bench-" + s.Name,
		"stubs":    s.Stubs(),
	}
	for k, v := range s.Imposter {
		doc[k] = v
	}
	return doc
}

// originBody is what the proxy scenarios' loopback origin (the ceiling server) answers: not
// JSON, which Mountebank (and so mockd) would record parsed and answer indented.
const originBody = "order 7, from the origin"

// proxyStubs is one stub that proxies every request to the origin, recording the answer.
func proxyStubs(mode, origin string) []any {
	return []any{stub(nil, map[string]any{"proxy": map[string]any{
		"to": origin, "mode": mode,
		"predicateGenerators": []any{map[string]any{"matches": map[string]any{"method": true, "path": true}}},
	}})}
}

// injectJS answers from a JavaScript function, as Mountebank's inject response does.
const injectJS = `function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }`

// Length-prefixed binary tcp: a 4-byte big-endian length, then the payload, both ways.
var (
	lpRequest  = lengthPrefixed("GET user 42")
	lpResponse = lengthPrefixed(`{"id":42,"name":"Ada"}`)
)

func lengthPrefixed(payload string) string {
	n := len(payload)
	return string([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}) + payload
}

// lpResolver ends a request when its length prefix says it is whole (Mountebank's
// endOfRequestResolver receives the bytes so far as a Buffer in binary mode). It reads the
// prefix by index: mockd's Buffer has no readUInt32BE yet.
const lpResolver = `function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }`

const oneMiB = 1 << 20

// bigBody is n bytes of printable JSON-safe text.
func bigBody(n int) string {
	return strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_", n/64+1)[:n]
}

// roundTwo is issue 26's scenarios: the paths users run every day besides plain matching.
func roundTwo() []*scenario {
	get := func(p string) request { return request{Method: "GET", Path: p} }
	ok := expect{200, `{"status":"ok"}`, ""}
	simpleWith := func(behaviors map[string]any) func() []any {
		return func() []any {
			r := isResp(200, `{"status":"ok"}`, jsonCT)
			r["_behaviors"] = behaviors
			return []any{stub([]any{equals(map[string]any{"method": "GET", "path": "/health"})}, r)}
		}
	}
	big := bigBody(oneMiB)
	return []*scenario{
		{Name: "record-on", Desc: "simple stub, recordRequests on (journal)", Quick: true, Record: true, Imposter: map[string]any{"recordRequests": true},
			Stubs: simpleStubs, Req: get("/health"), Want: ok},
		{Name: "cycle", Desc: "one stub cycling through three responses (the same answer each time)",
			Stubs: func() []any {
				r := isResp(200, `{"status":"ok"}`, jsonCT)
				return []any{stub([]any{equals(map[string]any{"method": "GET", "path": "/health"})}, r, r, r)}
			},
			Req: get("/health"), Want: ok},
		{Name: "https-simple", Desc: "simple stub over https (TLS 1.3, keep-alive)", Quick: true, Proto: "https", Stubs: simpleStubs, Req: get("/health"), Want: ok},
		{Name: "proxy-always", Desc: "proxyAlways to a loopback origin, recording every answer", Proxy: "proxyAlways", Record: true,
			Req: get("/orders/7"), Want: expect{200, originBody, ""}},
		{Name: "proxy-once", Desc: "proxyOnce to a loopback origin (first request proxied, then replayed)", Proxy: "proxyOnce", Record: true,
			Req: get("/orders/7"), Want: expect{200, originBody, ""}},
		{Name: "proxy-replay", Desc: "replay of what one proxied request recorded (mb replay, WireMock's recorder, MockServer's recorded expectations)", Proxy: "replay", Record: true,
			Req: get("/orders/7"), Want: expect{200, originBody, ""}},
		{Name: "tcp-simple", Desc: "tcp text: one stub on data", Quick: true, Proto: "tcp",
			Stubs: func() []any {
				return []any{stub([]any{equals(map[string]any{"data": "PING\n"})}, map[string]any{"is": map[string]any{"data": "PONG\n"}})}
			},
			Req: request{Body: "PING\n"}, Want: expect{Body: "PONG\n"}},
		{Name: "tcp-binary-lp", Desc: "tcp binary, 4-byte length-prefixed frames, endOfRequestResolver", Proto: "tcp", Injection: true,
			Imposter: map[string]any{"mode": "binary", "endOfRequestResolver": map[string]any{"inject": lpResolver}},
			Stubs: func() []any {
				return []any{stub([]any{equals(map[string]any{"data": base64.StdEncoding.EncodeToString([]byte(lpRequest))})},
					map[string]any{"is": map[string]any{"data": base64.StdEncoding.EncodeToString([]byte(lpResponse))}})}
			},
			Req: request{Body: lpRequest}, Want: expect{Body: lpResponse}},
		{Name: "inject", Desc: "an inject response (JavaScript)", Injection: true,
			Stubs: func() []any {
				return []any{stub([]any{equals(map[string]any{"method": "GET", "path": "/inject"})}, map[string]any{"inject": injectJS})}
			},
			Req: get("/inject"), Want: expect{200, `{"injected":"/inject"}`, ""}},
		{Name: "wait-0", Desc: "simple stub with a wait behavior of 0 ms", Stubs: simpleWith(map[string]any{"wait": 0}), Req: get("/health"), Want: ok},
		{Name: "body-1mib-response", Desc: "a 1 MiB response body", Connections: 10,
			Stubs: func() []any {
				return []any{stub([]any{equals(map[string]any{"method": "GET", "path": "/big"})}, isResp(200, big, map[string]any{"Content-Type": "text/plain"}))}
			},
			Req: get("/big"), Want: expect{200, big, ""}},
		{Name: "body-1mib-request", Desc: "a 1 MiB request body, small answer", Connections: 10,
			Stubs: func() []any {
				return []any{stub([]any{equals(map[string]any{"method": "POST", "path": "/upload"})}, isResp(200, `{"stored":true}`, jsonCT))}
			},
			Req: request{Method: "POST", Path: "/upload", Headers: [][2]string{{"Content-Type", "text/plain"}}, Body: big}, Want: expect{200, `{"stored":true}`, ""}},
		{Name: "stubs-10k", Desc: "10,000 plain stubs: created through the API, and started from a config file", Setup: 10000,
			Stubs: scaleStubs(10000), Req: get("/scale/9999"), Want: matched("scale", 9999)},
		{Name: "stubs-100k", Desc: "100,000 plain stubs: created through the API, and started from a config file", Setup: 100000,
			Stubs: scaleStubs(100000), Req: get("/scale/99999"), Want: matched("scale", 99999)},
		{Name: "admin-pairs", Desc: "POST /imposters + DELETE /imposters/:port pairs, one after the other", Admin: true, Pairs: true, Connections: 1,
			Stubs: simpleStubs, Req: get("/health"), Want: ok},
	}
}
