package importer

import (
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// validationStubs returns stubs that answer 400, with the violated rule, requests for op that
// violate its parameters (required, and the type, enum or pattern of the value) or its JSON
// request body (required, required top-level properties and their types). Each stub checks one
// rule; the first violated one answers. Rules mockd cannot express as predicates are noted.
func (o *openapiImport) validationStubs(op *operation) []any {
	var stubs []any
	route := o.routePredicates(op)
	bad := func(extra []any, in, name, msg string) {
		preds := append(append([]any(nil), route...), extra...)
		stubs = append(stubs, stub(preds, validationError(in, name, msg)))
	}
	for i, p := range op.params {
		where := config.JoinPath(op.where, "parameters")
		where = where + "[" + itoa(i) + "]"
		s := p.get("schema")
		in, name := p.str("in"), p.str("name")
		switch in {
		case "path":
			pattern, desc, anchored := valuePattern(s)
			if pattern == "" {
				o.noteUnchecked(where, s, "")
				continue
			}
			if !anchored {
				o.note(where, "pattern of path parameter %q not validated", name)
				continue
			}
			preds := []any{config.NewObject("equals", config.NewObject("method", op.method)),
				config.NewObject("not", o.pathPredicate(op.path, map[string]string{name: "(?:" + pattern + ")"}))}
			stubs = append(stubs, stub(append(preds, o.pathPredicate(op.path, nil)), validationError("path", name, desc)))
			o.noteUnchecked(where, s, desc)
		case "query", "header":
			field := "query"
			if in == "header" {
				field = "headers"
			}
			if req := p.boolean("required"); req != nil && *req {
				bad([]any{config.NewObject("exists", config.NewObject(field, config.NewObject(name, false)))},
					in, name, "is required")
			}
			pattern, desc, anchored := valuePattern(s)
			if pattern != "" {
				if anchored {
					pattern = "^(?:" + pattern + ")$"
				}
				bad([]any{
					config.NewObject("exists", config.NewObject(field, config.NewObject(name, true))),
					config.NewObject("not", config.NewObject("matches", config.NewObject(field, config.NewObject(name, pattern)), "caseSensitive", true)),
				}, in, name, desc)
			}
			o.noteUnchecked(where, s, desc)
		default:
			o.note(where, "%s parameter %q not validated", in, name)
		}
	}
	rb := op.op.get("requestBody")
	if !rb.ok() {
		return stubs
	}
	where := config.JoinPath(op.where, "requestBody")
	if req := rb.boolean("required"); req != nil && *req {
		bad([]any{config.NewObject("equals", config.NewObject("body", ""))}, "body", "", "request body is required")
	}
	checked := false
	for _, c := range rb.get("content").pairs() {
		mt, m := c.key, c.val
		mwhere := config.JoinPath(config.JoinPath(where, "content"), mt)
		if !isJSONType(mt) || checked {
			o.note(mwhere, "%s request bodies not validated (mockd checks one JSON media type)", mt)
			continue
		}
		checked = true
		s := m.get("schema")
		if !s.ok() {
			continue
		}
		notEmpty := config.NewObject("not", config.NewObject("equals", config.NewObject("body", "")))
		for _, req := range s.rawItems("required") {
			if req.Kind != yaml.ScalarNode {
				continue
			}
			name := req.Value
			bad([]any{notEmpty, config.NewObject("exists", config.NewObject("body", false),
				"jsonpath", config.NewObject("selector", "$['"+name+"']"))}, "body", name, "is required")
		}
		for _, prop := range s.get("properties").pairs() {
			name, ps := prop.key, prop.val
			pwhere := config.JoinPath(config.JoinPath(mwhere, "schema.properties"), name)
			pattern, desc, anchored := valuePattern(ps)
			if pattern != "" {
				if anchored {
					pattern = "^(?:" + pattern + ")$"
				}
				sel := config.NewObject("selector", "$['"+name+"']")
				bad([]any{
					config.NewObject("exists", config.NewObject("body", true), "jsonpath", sel),
					config.NewObject("not", config.NewObject("matches", config.NewObject("body", pattern), "jsonpath", sel, "caseSensitive", true)),
				}, "body", name, desc)
			}
			o.noteUnchecked(pwhere, ps, desc)
		}
	}
	return stubs
}

func itoa(i int) string { return jsvalue.FormatNumber(float64(i)) }

// validationError is the 400 answer of a validation stub.
func validationError(in, name, msg string) *config.Object {
	e := config.NewObject("in", in)
	if name != "" {
		e.Set("name", name)
	}
	e.Set("message", msg)
	return config.NewObject("statusCode", 400.0, "headers", config.NewObject("Content-Type", "application/json"),
		"body", config.NewObject("errors", []any{e}))
}

// valuePattern returns a regular expression a valid value's text matches, the rule in words,
// and whether the pattern must match the whole value (a schema's own pattern need not). It
// returns "" for a schema mockd cannot check this way.
func valuePattern(s oasNode) (pattern, desc string, anchored bool) {
	if !s.ok() {
		return "", "", false
	}
	if enum := s.rawItems("enum"); len(enum) > 0 {
		alts := make([]string, 0, len(enum))
		words := make([]string, 0, len(enum))
		for _, n := range enum {
			v := jsvalue.String(nodeValue(n))
			alts = append(alts, regexp.QuoteMeta(v))
			words = append(words, v)
		}
		return strings.Join(alts, "|"), "must be one of: " + strings.Join(words, ", "), true
	}
	switch schemaType(s) {
	case "integer":
		return `-?[0-9]+`, "must be an integer", true
	case "number":
		return `-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`, "must be a number", true
	case "boolean":
		return `true|false`, "must be true or false", true
	case "string":
		if p := s.str("pattern"); p != "" {
			return p, "must match " + p, false
		}
	}
	return "", "", false
}

// noteUnchecked notes the constraints of s that validation stubs do not check.
func (o *openapiImport) noteUnchecked(where string, s oasNode, checked string) {
	if !s.ok() {
		return
	}
	var kw []string
	add := func(present bool, name string) {
		if present {
			kw = append(kw, name)
		}
	}
	add(s.number("minimum") != nil, "minimum")
	add(s.number("maximum") != nil, "maximum")
	add(s.has("exclusiveMinimum"), "exclusiveMinimum")
	add(s.has("exclusiveMaximum"), "exclusiveMaximum")
	add(s.number("multipleOf") != nil, "multipleOf")
	add(s.number("minLength") != nil, "minLength")
	add(s.number("maxLength") != nil, "maxLength")
	add(s.str("format") != "" && schemaType(s) == "string", "format")
	add(s.str("pattern") != "" && checked == "", "pattern")
	t := schemaType(s)
	add(t == "object" && s.get("properties").size() > 0, "properties")
	add(t == "array", "items")
	add(s.get("allOf").size()+s.get("oneOf").size()+s.get("anyOf").size() > 0, "allOf/oneOf/anyOf")
	if len(kw) > 0 {
		o.note(where, "not validated: %s", strings.Join(kw, ", "))
	}
}
