package importer

import (
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// OpenAPIOptions tune OpenAPI.
type OpenAPIOptions struct {
	// Port is the imposter's port.
	Port int
	// BasePath prefixes every path of the document.
	BasePath string
	// ServerPath prefixes every path with the path of the document's first server URL
	// ("/api/v3" for "https://example.com/api/v3"), after BasePath.
	ServerPath bool
	// Validate adds, before each operation's stubs, stubs that answer 400 for requests that
	// violate the document's parameters or request body.
	Validate bool
}

// OpenAPI turns an OpenAPI 3.0 or 3.1 document (YAML or JSON) into one imposter with a stub per
// operation and response: the operation's first 2xx response (or its first) answers requests
// with the operation's method and path; the others answer when the request names their status
// in a `Prefer: code=NNN` header, as Prism does. Bodies are the documented examples or, when
// there are none, values built from the schema.
func OpenAPI(file string, opts OpenAPIOptions) (*Result, error) {
	data, err := readFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := openOAS(file, data)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	o := &openapiImport{source: newSource(file, data, res), opts: opts}
	if servers := doc.get("servers").items(); opts.ServerPath && len(servers) > 0 {
		if u, err := url.Parse(servers[0].str("url")); err == nil {
			o.opts.BasePath = strings.TrimSuffix(o.opts.BasePath, "/") + strings.TrimSuffix(u.Path, "/")
		} else {
			o.note("servers[0].url", "not a URL: its path is not used")
		}
	}
	name := doc.get("info").str("title")
	var ops []*operation
	for _, p := range doc.get("paths").pairs() {
		if strings.HasPrefix(p.key, "x-") {
			continue
		}
		item := p.val
		for _, m := range item.pairs() {
			if !httpMethods[m.key] {
				continue
			}
			ops = append(ops, &operation{path: p.key, method: strings.ToUpper(m.key), op: m.val,
				params: mergeParams(item.get("parameters").items(), m.val.get("parameters").items()),
				where:  config.JoinPath(config.JoinPath("paths", p.key), m.key)})
		}
	}
	// A literal path goes before a templated one it could shadow (/pets/mine before /pets/{id}),
	// as OpenAPI requires.
	sort.SliceStable(ops, func(i, j int) bool { return templateCount(ops[i].path) < templateCount(ops[j].path) })
	var stubs []any
	for _, op := range ops {
		stubs = append(stubs, o.operationStubs(op)...)
	}
	// References that could not be followed are noted where they stand.
	main := filepath.Clean(file)
	for _, n := range doc.r.refNotes() {
		f := n.file
		if f == main {
			f = file
		}
		res.Notes = append(res.Notes, Note{File: f, Line: n.line, Message: n.msg})
	}
	// A request the document does not describe (another path, or a method its path lacks) is
	// answered 404, as Prism and WireMock answer one: Mountebank's default, 200 with no body,
	// would let a client's call to an endpoint the API does not have pass its test. Every stub's
	// is names its status, which the default would otherwise fill in.
	res.Config = imposterConfig(opts.Port, name, config.NewObject("statusCode", 404.0), stubs)
	res.Stubs = len(stubs)
	res.sortNotes()
	return res, nil
}

// httpMethods are the keys of a path item that are operations.
var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true}

type openapiImport struct {
	*source
	opts OpenAPIOptions
}

type operation struct {
	path, method, where string
	op                  oasNode
	params              []oasNode
}

// mergeParams is the operation's parameters with the path item's that it does not override.
func mergeParams(item, op []oasNode) []oasNode {
	out := append([]oasNode(nil), op...)
	for _, p := range item {
		overridden := false
		for _, q := range op {
			if q.str("name") == p.str("name") && q.str("in") == p.str("in") {
				overridden = true
			}
		}
		if !overridden {
			out = append(out, p)
		}
	}
	return out
}

var pathTemplate = regexp.MustCompile(`\{[^}/]+\}`)

func templateCount(path string) int { return len(pathTemplate.FindAllStringIndex(path, -1)) }

// pathPredicate matches the operation's path: equals for a literal path, a regular expression
// with one segment per path parameter otherwise. typed, when set, gives the pattern of one
// parameter's segment (for validation stubs).
func (o *openapiImport) pathPredicate(path string, typed map[string]string) config.Value {
	full := strings.TrimSuffix(o.opts.BasePath, "/") + path
	if templateCount(path) == 0 {
		return config.NewObject("equals", config.NewObject("path", full), "caseSensitive", true)
	}
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, m := range pathTemplate.FindAllStringIndex(full, -1) {
		re.WriteString(regexp.QuoteMeta(full[last:m[0]]))
		name := full[m[0]+1 : m[1]-1]
		if p, ok := typed[name]; ok {
			re.WriteString(p)
		} else {
			re.WriteString("[^/]+")
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(full[last:]))
	re.WriteString("$")
	return config.NewObject("matches", config.NewObject("path", re.String()), "caseSensitive", true)
}

func (o *openapiImport) routePredicates(op *operation) []any {
	return []any{config.NewObject("equals", config.NewObject("method", op.method)), o.pathPredicate(op.path, nil)}
}

// operationStubs returns the stubs of one operation: validation stubs (with Validate), one stub
// per non-primary response selected by a Prefer header, then the primary response's stub.
func (o *openapiImport) operationStubs(op *operation) []any {
	var stubs []any
	if o.opts.Validate {
		stubs = append(stubs, o.validationStubs(op)...)
	}
	responses := op.op.get("responses")
	if !responses.ok() {
		o.note(op.where, "operation has no responses: it answers 200 with an empty body")
		return append(stubs, config.NewObject("predicates", o.routePredicates(op),
			"responses", []any{config.NewObject("is", config.NewObject("statusCode", 200.0))}))
	}
	type coded struct {
		code string
		resp oasNode
	}
	var list []coded
	var def *coded
	for _, p := range responses.pairs() {
		switch {
		case strings.HasPrefix(p.key, "x-"):
		case p.key == "default":
			def = &coded{p.key, p.val}
		default:
			list = append(list, coded{p.key, p.val})
		}
	}
	if def != nil {
		list = append(list, *def)
	}
	if len(list) == 0 {
		o.note(config.JoinPath(op.where, "responses"), "operation has no responses: it answers 200 with an empty body")
		return append(stubs, config.NewObject("predicates", o.routePredicates(op),
			"responses", []any{config.NewObject("is", config.NewObject("statusCode", 200.0))}))
	}
	primary := 0
	for i, c := range list {
		if strings.HasPrefix(c.code, "2") {
			primary = i
			break
		}
	}
	for i, c := range list {
		if i == primary {
			continue
		}
		status := statusOf(c.code, len(list) == 1)
		preds := append(o.routePredicates(op), config.NewObject("contains",
			config.NewObject("headers", config.NewObject("Prefer", "code="+c.code))))
		stubs = append(stubs, o.responseStubs(op, c.code, c.resp, status, preds)...)
	}
	c := list[primary]
	return append(stubs, o.responseStubs(op, c.code, c.resp, statusOf(c.code, true), o.routePredicates(op))...)
}

// statusOf turns a response key into a status code: a range (4XX) gives its first code,
// default gives 200 when it is the primary response and 500 otherwise.
func statusOf(code string, primary bool) float64 {
	if code == "default" {
		if primary {
			return 200
		}
		return 500
	}
	if len(code) == 3 && (code[1] == 'X' || code[1] == 'x') {
		return float64(code[0]-'0') * 100
	}
	n, _ := strconv.Atoi(code)
	return float64(n)
}

// responseStubs builds the stubs of one response: one for its preferred media type and one per
// other media type that has an example, selected by the request's Accept header.
func (o *openapiImport) responseStubs(op *operation, code string, r oasNode, status float64, preds []any) []any {
	where := config.JoinPath(config.JoinPath(op.where, "responses"), code)
	headers := o.responseHeaders(r, where)
	content := r.get("content").pairs()
	if len(content) == 0 {
		is := config.NewObject("statusCode", status)
		if headers.Len() > 0 {
			is.Set("headers", headers)
		}
		return []any{stub(preds, is)}
	}
	first := 0
	for i, c := range content {
		if isJSONType(c.key) {
			first = i
			break
		}
	}
	var stubs []any
	for i, c := range content {
		if i == first {
			continue
		}
		mt := c.key
		body, ok := o.mediaBody(c.val, mt, config.JoinPath(config.JoinPath(where, "content"), mt), false)
		if !ok {
			o.note(config.JoinPath(config.JoinPath(where, "content"), mt),
				"no example for %s and none can be built from the schema: requests get %s", mt, content[first].key)
			continue
		}
		accept := append(append([]any(nil), preds...), config.NewObject("contains",
			config.NewObject("headers", config.NewObject("Accept", mt))))
		stubs = append(stubs, stub(accept, isObject(status, headers, mt, body)))
	}
	mt := content[first].key
	body, _ := o.mediaBody(content[first].val, mt, config.JoinPath(config.JoinPath(where, "content"), mt), true)
	return append(stubs, stub(preds, isObject(status, headers, mt, body)))
}

func stub(preds []any, is *config.Object) *config.Object {
	return config.NewObject("predicates", preds, "responses", []any{config.NewObject("is", is)})
}

func isObject(status float64, headers *config.Object, mediaType string, body config.Value) *config.Object {
	h := config.NewObject("Content-Type", mediaType)
	for _, m := range headers.Members {
		if !strings.EqualFold(m.Key, "Content-Type") {
			h.Set(m.Key, m.Value)
		}
	}
	is := config.NewObject("statusCode", status, "headers", h)
	if body != nil {
		is.Set("body", body)
	}
	return is
}

func isJSONType(mt string) bool {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// responseHeaders gives each documented response header its example or a value built from its
// schema.
func (o *openapiImport) responseHeaders(r oasNode, where string) *config.Object {
	out := &config.Object{}
	for _, p := range r.get("headers").pairs() {
		name, h := p.key, p.val
		var v config.Value
		switch {
		case h.has("example"):
			v = nodeValue(h.raw("example"))
		case h.get("examples").size() > 0:
			v = exampleValue(h.get("examples"))
		case h.has("schema"):
			v = o.generate(h.get("schema"), 0)
		}
		if v == nil {
			o.note(config.JoinPath(config.JoinPath(where, "headers"), name), "header has no example or schema: not sent")
			continue
		}
		out.Set(name, jsvalue.String(v))
	}
	return out
}

// mediaBody returns the body for one media type: its example, its first named example, or a
// value built from its schema (JSON types only unless generate). JSON bodies are JSON values
// (objects and arrays stay structured); other types are text.
func (o *openapiImport) mediaBody(m oasNode, mt, where string, generate bool) (config.Value, bool) {
	if !m.ok() {
		return nil, false
	}
	var v config.Value
	found := true
	switch {
	case m.has("example"):
		v = nodeValue(m.raw("example"))
	case m.get("examples").size() > 0:
		v = exampleValue(m.get("examples"))
		if v == nil {
			o.note(config.JoinPath(where, "examples"), "only external examples (externalValue): not fetched")
			found = false
		}
	default:
		found = false
	}
	if !found && m.has("schema") {
		s := m.get("schema")
		if s.ok() && (s.has("example") || len(s.rawItems("examples")) > 0) {
			v, found = schemaExample(s), true
		} else if isJSONType(mt) {
			v, found = o.generate(s, 0), true
		} else if generate {
			o.note(where, "no example for %s and mockd builds examples only for JSON: body left empty", mt)
			return nil, false
		}
	}
	if !found {
		return nil, false
	}
	if isJSONType(mt) {
		switch v.(type) {
		case *config.Object, []any:
			return v, true
		default:
			return string(config.MarshalJSON(v, 0)), true
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	return string(config.MarshalJSON(v, 0)), true
}

// exampleValue is the value of the first of the examples (Example objects) that has one.
func exampleValue(ex oasNode) config.Value {
	for _, e := range ex.pairs() {
		if e.val.has("value") {
			return nodeValue(e.val.raw("value"))
		}
	}
	return nil
}

// schemaExample is the schema's example, or the first of its examples (3.1).
func schemaExample(s oasNode) config.Value {
	if s.has("example") {
		return nodeValue(s.raw("example"))
	}
	if ex := s.rawItems("examples"); len(ex) > 0 {
		return nodeValue(ex[0])
	}
	return nil
}

// maxDepth bounds schema generation (recursive schemas).
const maxDepth = 8

// generate builds a value from a schema, deterministically: examples, defaults, constants and
// enums first, then one value of the schema's type (every property of an object, one item of an
// array).
func (o *openapiImport) generate(s oasNode, depth int) config.Value {
	if !s.ok() || depth > maxDepth {
		return nil
	}
	if v := schemaExample(s); v != nil {
		return v
	}
	allOf, oneOf, anyOf := s.get("allOf").items(), s.get("oneOf").items(), s.get("anyOf").items()
	switch {
	case s.has("default"):
		return nodeValue(s.raw("default"))
	case s.has("const"):
		return nodeValue(s.raw("const"))
	case len(s.rawItems("enum")) > 0:
		return nodeValue(s.rawItems("enum")[0])
	case len(allOf) > 0:
		merged := &config.Object{}
		for _, part := range allOf {
			if obj, ok := o.generate(part, depth+1).(*config.Object); ok {
				for _, m := range obj.Members {
					merged.Set(m.Key, m.Value)
				}
			}
		}
		o.addProperties(merged, s, depth)
		return merged
	case len(oneOf) > 0:
		return o.generate(oneOf[0], depth+1)
	case len(anyOf) > 0:
		return o.generate(anyOf[0], depth+1)
	}
	switch schemaType(s) {
	case "object":
		obj := &config.Object{}
		o.addProperties(obj, s, depth)
		return obj
	case "array":
		// items is a schema (an object), or in 3.1 a boolean.
		if items := s.get("items"); items.ok() && items.n.Kind == yaml.MappingNode {
			if item := o.generate(items, depth+1); item != nil {
				return []any{item}
			}
		}
		return []any{}
	case "integer":
		return numberFor(s, true)
	case "number":
		return numberFor(s, false)
	case "boolean":
		return true
	case "null":
		return nil
	default:
		return stringFor(s)
	}
}

func (o *openapiImport) addProperties(obj *config.Object, s oasNode, depth int) {
	for _, p := range s.get("properties").pairs() {
		if wo := p.val.boolean("writeOnly"); wo != nil && *wo {
			continue
		}
		obj.Set(p.key, o.generate(p.val, depth+1))
	}
}

// schemaType is the schema's first non-null type, or the type its keywords imply.
func schemaType(s oasNode) string {
	for _, t := range s.stringList("type") {
		if t != "null" {
			return t
		}
	}
	switch {
	case s.get("properties").size() > 0:
		return "object"
	case s.has("items"):
		return "array"
	}
	return "string"
}

func numberFor(s oasNode, integer bool) float64 {
	n := 0.0
	if lo := s.number("minimum"); lo != nil && *lo > n {
		n = *lo
	}
	if hi := s.number("maximum"); hi != nil && *hi < n {
		n = *hi
	}
	if integer {
		return float64(int64(n))
	}
	return n
}

func stringFor(s oasNode) string {
	switch s.str("format") {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "time":
		return "00:00:00"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "email":
		return "user@example.com"
	case "uri", "url":
		return "https://example.com/"
	case "hostname":
		return "example.com"
	case "ipv4":
		return "192.0.2.1"
	case "ipv6":
		return "2001:db8::1"
	case "byte":
		return "c3RyaW5n"
	}
	str := "string"
	// A minLength beyond 1 MiB is taken for 1 MiB (a body, not a memory exhaustion).
	if lo := s.number("minLength"); lo != nil && int(min(*lo, 1<<20)) > len(str) {
		str += strings.Repeat("x", int(min(*lo, 1<<20))-len(str))
	}
	if hi := s.number("maxLength"); hi != nil && *hi >= 0 && int(*hi) < len(str) {
		str = str[:int(*hi)]
	}
	return str
}

// nodeValue converts a YAML node of the document into a config value, keeping key order. Aliases
// are expanded, up to maxNodeValues nodes in all (a few lines of anchors can stand for billions).
func nodeValue(n *yaml.Node) config.Value {
	budget := maxNodeValues
	return nodeValueDepth(n, 0, &budget)
}

const maxNodeValues = 1 << 20

func nodeValueDepth(n *yaml.Node, depth int, budget *int) config.Value {
	if n == nil || depth > 1000 || *budget <= 0 {
		return nil
	}
	*budget--
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return nodeValueDepth(n.Content[0], depth+1, budget)
		}
		return nil
	case yaml.AliasNode:
		return nodeValueDepth(n.Alias, depth+1, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, nodeValueDepth(c, depth+1, budget))
		}
		return out
	case yaml.MappingNode:
		obj := &config.Object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			obj.Set(n.Content[i].Value, nodeValueDepth(n.Content[i+1], depth+1, budget))
		}
		return obj
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		return b
	case "!!int", "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return float64(i)
		}
	}
	return n.Value
}
