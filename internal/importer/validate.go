package importer

import (
	"regexp"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"

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
		var s *base.Schema
		if p.Schema != nil {
			s = p.Schema.Schema()
		}
		switch p.In {
		case "path":
			pattern, desc, anchored := valuePattern(s)
			if pattern == "" {
				o.noteUnchecked(where, s, "")
				continue
			}
			if !anchored {
				o.note(where, "pattern of path parameter %q not validated", p.Name)
				continue
			}
			preds := []any{config.NewObject("equals", config.NewObject("method", op.method)),
				config.NewObject("not", o.pathPredicate(op.path, map[string]string{p.Name: "(?:" + pattern + ")"}))}
			stubs = append(stubs, stub(append(preds, o.pathPredicate(op.path, nil)), validationError("path", p.Name, desc)))
			o.noteUnchecked(where, s, desc)
		case "query", "header":
			field := "query"
			if p.In == "header" {
				field = "headers"
			}
			if p.Required != nil && *p.Required {
				bad([]any{config.NewObject("exists", config.NewObject(field, config.NewObject(p.Name, false)))},
					p.In, p.Name, "is required")
			}
			pattern, desc, anchored := valuePattern(s)
			if pattern != "" {
				if anchored {
					pattern = "^(?:" + pattern + ")$"
				}
				bad([]any{
					config.NewObject("exists", config.NewObject(field, config.NewObject(p.Name, true))),
					config.NewObject("not", config.NewObject("matches", config.NewObject(field, config.NewObject(p.Name, pattern)), "caseSensitive", true)),
				}, p.In, p.Name, desc)
			}
			o.noteUnchecked(where, s, desc)
		default:
			o.note(where, "%s parameter %q not validated", p.In, p.Name)
		}
	}
	rb := op.op.RequestBody
	if rb == nil {
		return stubs
	}
	where := config.JoinPath(op.where, "requestBody")
	if rb.Required != nil && *rb.Required {
		bad([]any{config.NewObject("equals", config.NewObject("body", ""))}, "body", "", "request body is required")
	}
	if rb.Content == nil {
		return stubs
	}
	checked := false
	for mt, m := range rb.Content.FromOldest() {
		mwhere := config.JoinPath(config.JoinPath(where, "content"), mt)
		if !isJSONType(mt) || checked {
			o.note(mwhere, "%s request bodies not validated (mockd checks one JSON media type)", mt)
			continue
		}
		checked = true
		if m.Schema == nil || m.Schema.Schema() == nil {
			continue
		}
		s := m.Schema.Schema()
		notEmpty := config.NewObject("not", config.NewObject("equals", config.NewObject("body", "")))
		for _, name := range s.Required {
			bad([]any{notEmpty, config.NewObject("exists", config.NewObject("body", false),
				"jsonpath", config.NewObject("selector", "$['"+name+"']"))}, "body", name, "is required")
		}
		if s.Properties == nil {
			continue
		}
		for name, prop := range s.Properties.FromOldest() {
			ps := prop.Schema()
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
func valuePattern(s *base.Schema) (pattern, desc string, anchored bool) {
	if s == nil {
		return "", "", false
	}
	if len(s.Enum) > 0 {
		alts := make([]string, 0, len(s.Enum))
		words := make([]string, 0, len(s.Enum))
		for _, n := range s.Enum {
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
		if s.Pattern != "" {
			return s.Pattern, "must match " + s.Pattern, false
		}
	}
	return "", "", false
}

// noteUnchecked notes the constraints of s that validation stubs do not check.
func (o *openapiImport) noteUnchecked(where string, s *base.Schema, checked string) {
	if s == nil {
		return
	}
	var kw []string
	add := func(present bool, name string) {
		if present {
			kw = append(kw, name)
		}
	}
	add(s.Minimum != nil, "minimum")
	add(s.Maximum != nil, "maximum")
	add(s.ExclusiveMinimum != nil, "exclusiveMinimum")
	add(s.ExclusiveMaximum != nil, "exclusiveMaximum")
	add(s.MultipleOf != nil, "multipleOf")
	add(s.MinLength != nil, "minLength")
	add(s.MaxLength != nil, "maxLength")
	add(s.Format != "" && schemaType(s) == "string", "format")
	add(s.Pattern != "" && checked == "", "pattern")
	t := schemaType(s)
	add(t == "object" && s.Properties != nil && s.Properties.Len() > 0, "properties")
	add(t == "array", "items")
	add(len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) > 0, "allOf/oneOf/anyOf")
	if len(kw) > 0 {
		o.note(where, "not validated: %s", strings.Join(kw, ", "))
	}
}
