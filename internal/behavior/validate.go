package behavior

import (
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// spec is one field of Mountebank's behavior validation schema (behaviors.js `validations`).
type spec struct {
	required bool
	types    []typeSpec // allowed JavaScript types, in the schema's order
	context  string     // _additionalContext
	children []child    // the non-metadata keys
}

// topLevel reports whether s only groups fields (copy, lookup), as isTopLevelSpec does.
func (s *spec) topLevel() bool { return !s.required && s.types == nil && s.context == "" }

type typeSpec struct {
	name               string // "string", "number", "object"
	singleKeyOnly      bool
	enum               []string
	nonNegativeInteger bool
}

type child struct {
	name string
	spec *spec
}

func validations() []child {
	from := &spec{required: true, types: []typeSpec{{name: "string"}, {name: "object", singleKeyOnly: true}},
		context: "the request field to select from"}
	into := &spec{required: true, types: []typeSpec{{name: "string"}}, context: "the token to replace in response fields"}
	using := &spec{required: true, types: []typeSpec{{name: "object"}}, children: []child{
		{"method", &spec{required: true, types: []typeSpec{{name: "string", enum: []string{"regex", "xpath", "jsonpath"}}}}},
		{"selector", &spec{required: true, types: []typeSpec{{name: "string"}}}},
	}}
	return []child{
		{"wait", &spec{required: true, types: []typeSpec{{name: "string"}, {name: "number", nonNegativeInteger: true}}}},
		{"copy", &spec{children: []child{{"from", from}, {"into", into}, {"using", using}}}},
		{"lookup", &spec{children: []child{
			{"key", &spec{required: true, types: []typeSpec{{name: "object"}}, children: []child{{"from", from}, {"using", using}}}},
			{"fromDataSource", &spec{required: true, types: []typeSpec{{name: "object", singleKeyOnly: true, enum: []string{"csv"}}},
				children: []child{{"csv", &spec{types: []typeSpec{{name: "object"}}, children: []child{
					{"path", &spec{required: true, types: []typeSpec{{name: "string"}}, context: "the path to the CSV file"}},
					{"delimiter", &spec{types: []typeSpec{{name: "string"}}, context: "the delimiter separator values"}},
					{"keyColumn", &spec{required: true, types: []typeSpec{{name: "string"}},
						context: `the column header to select against the "key" field`}},
				}}}}}},
			{"into", into},
		}}},
		{"shellTransform", &spec{required: true, types: []typeSpec{{name: "string"}}, context: "the path to a command line application"}},
		{"decorate", &spec{required: true, types: []typeSpec{{name: "string"}}, context: "a JavaScript function"}},
	}
}

var schema = validations()

// Validate checks a response's "behaviors" value as Mountebank's behaviorsValidator does and
// returns its errors (code "bad data", Mountebank's messages, the offending behavior object as
// Source), or nil. Values Mountebank crashes on (a behaviors value that is not an array, a null
// behavior, null where an object is expected) give a "bad data" error instead. A falsy value
// ("", 0, false) is no behaviors, as `behaviors || []` makes it there.
func Validate(behaviors config.Value) []*config.Error {
	var list []any
	if !jsvalue.Truthy(behaviors) {
		return nil
	}
	switch t := behaviors.(type) {
	case []any:
		list = t
	default:
		return []*config.Error{{Code: config.CodeBadData, Message: "behaviors must be an array", Source: behaviors}}
	}
	var errs []*config.Error
	for _, b := range list {
		if b == nil {
			errs = append(errs, &config.Error{Code: config.CodeBadData, Message: "each behavior must be an object", Source: b})
			continue
		}
		var valid int
		unrecognized := ""
		for _, key := range jsKeys(b) {
			var sp *spec
			for _, c := range schema {
				if c.name == key {
					sp = c.spec
				}
			}
			if sp == nil {
				if unrecognized == "" {
					unrecognized = key
				}
				continue
			}
			valid++
			v := &validator{root: b, add: func(field, msg string) {
				errs = append(errs, &config.Error{Code: config.CodeBadData,
					Message: key + ` behavior "` + field + `" field ` + msg, Source: b})
			}}
			v.fields(b, "", []child{{key, sp}})
			if v.crash != "" {
				errs = append(errs, &config.Error{Code: config.CodeBadData, Message: v.crash, Source: b})
			}
		}
		if valid == 0 && unrecognized != "" {
			errs = append(errs, &config.Error{Code: config.CodeBadData, Message: `Unrecognized behavior: "` + unrecognized + `"`, Source: b})
		}
		if valid > 1 {
			errs = append(errs, &config.Error{Code: config.CodeBadData, Message: "Each behavior object must have only one behavior type", Source: b})
		}
	}
	return errs
}

type validator struct {
	root  config.Value
	add   func(field, msg string)
	crash string // the TypeError Mountebank would throw
}

// fields is addErrorsFor: cfg is the object paths are navigated from.
func (v *validator) fields(cfg config.Value, prefix string, children []child) {
	for _, c := range children {
		if v.crash != "" {
			return
		}
		path := c.name
		if prefix != "" {
			path = prefix + "." + c.name
		}
		field, defined := v.navigate(cfg, path)
		switch {
		case v.crash != "":
			return
		case !defined:
			if c.spec.required {
				v.add(path, "required")
			}
		case c.spec.topLevel():
			v.fields(field, "", c.spec.children)
		default:
			v.types(c.spec, path, field, cfg)
		}
	}
}

// types is addTypeErrors.
func (v *validator) types(sp *spec, path string, field, cfg config.Value) {
	typ := jsTypeof(field)
	var ts *typeSpec
	names := make([]string, len(sp.types))
	for i := range sp.types {
		names[i] = sp.types[i].name
		if sp.types[i].name == typ {
			ts = &sp.types[i]
		}
	}
	if ts == nil {
		spell := map[string]string{"number": "a", "object": "an", "string": "a"}
		msg := "must be " + spell[names[0]] + " " + names[0]
		for _, n := range names[1:] {
			msg += " or " + spell[n] + " " + n
		}
		if sp.context != "" {
			msg += ", representing " + sp.context
		}
		v.add(path, msg)
		return
	}
	switch {
	case ts.singleKeyOnly && field == nil:
		v.crash = "Cannot convert undefined or null to object"
		return
	case ts.singleKeyOnly && len(jsKeys(field)) != 1:
		v.add(path, "must have exactly one key")
	case ts.enum != nil && !matchesEnum(field, ts.enum):
		v.add(path, "must be one of ["+strings.Join(ts.enum, ", ")+"]")
	case ts.nonNegativeInteger && field.(float64) < 0:
		v.add(path, "must be an integer greater than or equal to 0")
	}
	v.fields(cfg, path, sp.children)
}

// navigate is path.split('.').reduce((f, name) => f[name], cfg); the second result is false for
// undefined.
func (v *validator) navigate(cfg config.Value, path string) (config.Value, bool) {
	cur, defined := cfg, true
	for _, name := range strings.Split(path, ".") {
		if !defined || cur == nil {
			what := "undefined"
			if defined {
				what = "null"
			}
			v.crash = "Cannot read properties of " + what + " (reading '" + name + "')"
			return nil, false
		}
		cur, defined = jsMember(cur, name)
	}
	return cur, defined
}

// jsMember is value[name] for JSON values.
func jsMember(val config.Value, name string) (config.Value, bool) {
	switch t := val.(type) {
	case *config.Object:
		return t.Get(name)
	case []any:
		if name == "length" {
			return float64(len(t)), true
		}
		if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < len(t) && strconv.Itoa(i) == name {
			return t[i], true
		}
	case string:
		if name == "length" {
			return float64(len(t)), true
		}
		if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < len(t) && strconv.Itoa(i) == name {
			return t[i : i+1], true
		}
	}
	return nil, false
}

// jsKeys is Object.keys(v) for JSON values.
func jsKeys(v config.Value) []string {
	var n int
	switch t := v.(type) {
	case *config.Object:
		return t.Keys()
	case []any:
		n = len(t)
	case string:
		n = len(t)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	return keys
}

func jsTypeof(v config.Value) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	default:
		return "object" // objects, arrays and null
	}
}

func matchesEnum(field config.Value, enum []string) bool {
	val := field
	if o, ok := field.(*config.Object); ok && o.Len() > 0 {
		val = o.Members[0].Key
	} else if a, ok := field.([]any); ok && len(a) > 0 {
		val = "0"
	}
	s, ok := val.(string)
	if !ok {
		return false
	}
	for _, e := range enum {
		if e == s {
			return true
		}
	}
	return false
}
