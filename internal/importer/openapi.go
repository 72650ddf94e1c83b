package importer

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	lowv3 "github.com/pb33f/libopenapi/datamodel/low/v3"
	"github.com/pb33f/libopenapi/orderedmap"

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
	cfg := datamodel.NewDocumentConfiguration()
	cfg.BasePath = filepath.Dir(file)
	cfg.SpecFilePath = filepath.Base(file)
	cfg.AllowFileReferences = true
	info, err := datamodel.ExtractSpecInfoWithDocumentCheck(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: not an OpenAPI document: %w", file, err)
	}
	if info.SpecFormat != datamodel.OAS3 && info.SpecFormat != datamodel.OAS31 {
		v := info.Version
		if v == "" {
			v = "with no version"
		}
		return nil, fmt.Errorf("%s: OpenAPI %s is not supported (3.0 and 3.1 are)", file, v)
	}
	low, err := lowv3.CreateDocumentFromConfig(info, cfg)
	if low == nil {
		return nil, fmt.Errorf("%s: cannot read the OpenAPI document: %w", file, err)
	}
	model := v3.NewDocument(low)
	res := &Result{}
	o := &openapiImport{source: newSource(file, data, res), opts: opts}
	if err != nil {
		// libopenapi builds what it can (e.g. with an unresolvable $ref): say what it skipped.
		for _, e := range flattenErrors(err) {
			o.note("", "%v", e)
		}
	}
	m := model
	if opts.ServerPath && len(m.Servers) > 0 {
		if u, err := url.Parse(m.Servers[0].URL); err == nil {
			o.opts.BasePath = strings.TrimSuffix(o.opts.BasePath, "/") + strings.TrimSuffix(u.Path, "/")
		} else {
			o.note("servers[0].url", "not a URL: its path is not used")
		}
	}
	name := ""
	if m.Info != nil {
		name = m.Info.Title
	}
	var ops []*operation
	if m.Paths != nil && m.Paths.PathItems != nil {
		for path, item := range m.Paths.PathItems.FromOldest() {
			for method, op := range item.GetOperations().FromOldest() {
				ops = append(ops, &operation{path: path, method: strings.ToUpper(method), op: op,
					params: mergeParams(item.Parameters, op.Parameters),
					where:  config.JoinPath(config.JoinPath("paths", path), strings.ToLower(method))})
			}
		}
	}
	// A literal path goes before a templated one it could shadow (/pets/mine before /pets/{id}),
	// as OpenAPI requires.
	sort.SliceStable(ops, func(i, j int) bool { return templateCount(ops[i].path) < templateCount(ops[j].path) })
	var stubs []any
	for _, op := range ops {
		stubs = append(stubs, o.operationStubs(op)...)
	}
	res.Config = imposterConfig(opts.Port, name, stubs)
	res.Stubs = len(stubs)
	res.sortNotes()
	return res, nil
}

func flattenErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

type openapiImport struct {
	*source
	opts OpenAPIOptions
}

type operation struct {
	path, method, where string
	op                  *v3.Operation
	params              []*v3.Parameter
}

// mergeParams is the operation's parameters with the path item's that it does not override.
func mergeParams(item, op []*v3.Parameter) []*v3.Parameter {
	out := append([]*v3.Parameter(nil), op...)
	for _, p := range item {
		overridden := false
		for _, q := range op {
			if q.Name == p.Name && q.In == p.In {
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
	if op.op.Responses == nil {
		o.note(op.where, "operation has no responses: it answers 200 with an empty body")
		return append(stubs, config.NewObject("predicates", o.routePredicates(op),
			"responses", []any{config.NewObject("is", config.NewObject("statusCode", 200.0))}))
	}
	type coded struct {
		code string
		resp *v3.Response
	}
	var list []coded
	if op.op.Responses.Codes != nil {
		for code, r := range op.op.Responses.Codes.FromOldest() {
			list = append(list, coded{code, r})
		}
	}
	if op.op.Responses.Default != nil {
		list = append(list, coded{"default", op.op.Responses.Default})
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
func (o *openapiImport) responseStubs(op *operation, code string, r *v3.Response, status float64, preds []any) []any {
	where := config.JoinPath(config.JoinPath(op.where, "responses"), code)
	headers := o.responseHeaders(r, where)
	if r.Content == nil || r.Content.Len() == 0 {
		is := config.NewObject("statusCode", status)
		if headers.Len() > 0 {
			is.Set("headers", headers)
		}
		return []any{stub(preds, is)}
	}
	types := make([]string, 0, r.Content.Len())
	for mt := range r.Content.KeysFromOldest() {
		types = append(types, mt)
	}
	first := 0
	for i, mt := range types {
		if isJSONType(mt) {
			first = i
			break
		}
	}
	var stubs []any
	for i, mt := range types {
		if i == first {
			continue
		}
		body, ok := o.mediaBody(r.Content.GetOrZero(mt), mt, config.JoinPath(config.JoinPath(where, "content"), mt), false)
		if !ok {
			o.note(config.JoinPath(config.JoinPath(where, "content"), mt),
				"no example for %s and none can be built from the schema: requests get %s", mt, types[first])
			continue
		}
		accept := append(append([]any(nil), preds...), config.NewObject("contains",
			config.NewObject("headers", config.NewObject("Accept", mt))))
		stubs = append(stubs, stub(accept, isObject(status, headers, mt, body)))
	}
	mt := types[first]
	body, _ := o.mediaBody(r.Content.GetOrZero(mt), mt, config.JoinPath(config.JoinPath(where, "content"), mt), true)
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
func (o *openapiImport) responseHeaders(r *v3.Response, where string) *config.Object {
	out := &config.Object{}
	if r.Headers == nil {
		return out
	}
	for name, h := range r.Headers.FromOldest() {
		var v config.Value
		switch {
		case h.Example != nil:
			v = nodeValue(h.Example)
		case h.Examples != nil && h.Examples.Len() > 0:
			v = exampleValue(h.Examples)
		case h.Schema != nil:
			v = o.generate(h.Schema, 0)
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
func (o *openapiImport) mediaBody(m *v3.MediaType, mt, where string, generate bool) (config.Value, bool) {
	if m == nil {
		return nil, false
	}
	var v config.Value
	found := true
	switch {
	case m.Example != nil:
		v = nodeValue(m.Example)
	case m.Examples != nil && m.Examples.Len() > 0:
		v = exampleValue(m.Examples)
		if v == nil {
			o.note(config.JoinPath(where, "examples"), "only external examples (externalValue): not fetched")
			found = false
		}
	default:
		found = false
	}
	if !found && m.Schema != nil {
		s := m.Schema.Schema()
		if s != nil && (s.Example != nil || len(s.Examples) > 0) {
			v, found = schemaExample(s), true
		} else if isJSONType(mt) {
			v, found = o.generate(m.Schema, 0), true
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

func exampleValue(ex *orderedmap.Map[string, *base.Example]) config.Value {
	for _, e := range ex.FromOldest() {
		if e != nil && e.Value != nil {
			return nodeValue(e.Value)
		}
	}
	return nil
}

func schemaExample(s *base.Schema) config.Value {
	if s.Example != nil {
		return nodeValue(s.Example)
	}
	if len(s.Examples) > 0 {
		return nodeValue(s.Examples[0])
	}
	return nil
}

// maxDepth bounds schema generation (recursive schemas).
const maxDepth = 8

// generate builds a value from a schema, deterministically: examples, defaults, constants and
// enums first, then one value of the schema's type (every property of an object, one item of an
// array).
func (o *openapiImport) generate(p *base.SchemaProxy, depth int) config.Value {
	if p == nil || depth > maxDepth {
		return nil
	}
	s := p.Schema()
	if s == nil {
		return nil
	}
	if v := schemaExample(s); v != nil {
		return v
	}
	switch {
	case s.Default != nil:
		return nodeValue(s.Default)
	case s.Const != nil:
		return nodeValue(s.Const)
	case len(s.Enum) > 0:
		return nodeValue(s.Enum[0])
	case len(s.AllOf) > 0:
		merged := &config.Object{}
		for _, part := range s.AllOf {
			if obj, ok := o.generate(part, depth+1).(*config.Object); ok {
				for _, m := range obj.Members {
					merged.Set(m.Key, m.Value)
				}
			}
		}
		o.addProperties(merged, s, depth)
		return merged
	case len(s.OneOf) > 0:
		return o.generate(s.OneOf[0], depth+1)
	case len(s.AnyOf) > 0:
		return o.generate(s.AnyOf[0], depth+1)
	}
	switch schemaType(s) {
	case "object":
		obj := &config.Object{}
		o.addProperties(obj, s, depth)
		return obj
	case "array":
		if s.Items != nil && s.Items.IsA() {
			if item := o.generate(s.Items.A, depth+1); item != nil {
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

func (o *openapiImport) addProperties(obj *config.Object, s *base.Schema, depth int) {
	if s.Properties == nil {
		return
	}
	for name, prop := range s.Properties.FromOldest() {
		if ps := prop.Schema(); ps != nil && ps.WriteOnly != nil && *ps.WriteOnly {
			continue
		}
		obj.Set(name, o.generate(prop, depth+1))
	}
}

// schemaType is the schema's first non-null type, or the type its keywords imply.
func schemaType(s *base.Schema) string {
	for _, t := range s.Type {
		if t != "null" {
			return t
		}
	}
	switch {
	case s.Properties != nil && s.Properties.Len() > 0:
		return "object"
	case s.Items != nil:
		return "array"
	}
	return "string"
}

func numberFor(s *base.Schema, integer bool) float64 {
	n := 0.0
	if s.Minimum != nil && *s.Minimum > n {
		n = *s.Minimum
	}
	if s.Maximum != nil && *s.Maximum < n {
		n = *s.Maximum
	}
	if integer {
		return float64(int64(n))
	}
	return n
}

func stringFor(s *base.Schema) string {
	switch s.Format {
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
	if s.MinLength != nil && int(*s.MinLength) > len(str) {
		str += strings.Repeat("x", int(*s.MinLength)-len(str))
	}
	if s.MaxLength != nil && int(*s.MaxLength) < len(str) {
		str = str[:*s.MaxLength]
	}
	return str
}

// nodeValue converts a YAML node of the document into a config value, keeping key order.
func nodeValue(n *yaml.Node) config.Value {
	return nodeValueDepth(n, 0)
}

func nodeValueDepth(n *yaml.Node, depth int) config.Value {
	if n == nil || depth > 1000 {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return nodeValueDepth(n.Content[0], depth+1)
		}
		return nil
	case yaml.AliasNode:
		return nodeValueDepth(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, nodeValueDepth(c, depth+1))
		}
		return out
	case yaml.MappingNode:
		obj := &config.Object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			obj.Set(n.Content[i].Value, nodeValueDepth(n.Content[i+1], depth+1))
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
