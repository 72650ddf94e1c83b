package proxy

import (
	"strconv"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Selector evaluates the jsonpath and xpath parameters of predicateGenerators. Each returns
// every value selected from field (nil when nothing is selected or the field does not parse),
// and for xpath expressions that give a number or boolean, that value alone.
type Selector interface {
	JSONPath(selector string, field config.Value) []config.Value
	XPath(selector string, ns *config.Object, field config.Value) []config.Value
}

// Injector runs an injected predicateGenerator (`inject`) and returns the predicates it builds.
type Injector interface {
	PredicateGenerator(source string, req *config.Object) ([]any, error)
}

// undefined stands for a JavaScript undefined while predicates are built; it is dropped when
// set in an object, as JSON.stringify drops it.
type undefined struct{}

// PredicatesFor builds the predicates of a recorded response from the predicateGenerators
// gens for req, the request object as Mountebank's predicates see it, as Mountebank's
// responseResolver.predicatesFor does. req may be changed (the `ignore` parameter removes
// fields from it, as in Mountebank); pass a copy. sel and inj may be nil: jsonpath and xpath
// then select nothing and injected generators fail.
func PredicatesFor(req *config.Object, gens []*config.Object, sel Selector, inj Injector) ([]any, error) {
	preds := []any{}
	for _, g := range gens {
		if src := get(g, "inject"); jsvalue.Truthy(src) {
			if inj == nil {
				return nil, &config.Error{Code: config.CodeInvalidInjection,
					Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag"}
			}
			list, err := inj.PredicateGenerator(jsText(src), req)
			if err != nil {
				return nil, err
			}
			preds = append(preds, list...)
			continue
		}
		base := &config.Object{}
		valueOf := func(v config.Value) config.Value { return v }
		op, hasOp := g.Get("predicateOperator")
		for _, m := range g.Members {
			if m.Key != "matches" && m.Key != "predicateOperator" && m.Key != "ignore" {
				base.Set(m.Key, config.Clone(m.Value))
			}
			switch m.Key {
			case "xpath":
				xp := config.AsObject(m.Value)
				valueOf = func(v config.Value) config.Value {
					if sel == nil || xp == nil {
						return ""
					}
					return selection(sel.XPath(jsText(get(xp, "selector")), config.AsObject(get(xp, "ns")), v))
				}
			case "jsonpath":
				jpc := config.AsObject(m.Value)
				valueOf = func(v config.Value) config.Value {
					if sel == nil || jpc == nil {
						return ""
					}
					return selection(sel.JSONPath(jsText(get(jpc, "selector")), v))
				}
			}
		}
		matches := config.AsObject(get(g, "matches"))
		if matches == nil {
			continue
		}
		for _, m := range matches.Members {
			pred := config.Clone(base).(*config.Object)
			switch {
			case m.Value == true && !hasOp:
				field := member(req, m.Key)
				if ignore := config.AsObject(get(g, "ignore")); ignore != nil {
					if f, ok := ignore.Get(m.Key); ok {
						objFilter(field, f)
					}
				}
				pred.Set("deepEquals", setDefined(&config.Object{}, m.Key, valueOf(field)))
			case hasOp && op == "exists":
				pred.Set("exists", existsFor(req, m.Key != ""))
			case hasOp:
				pred.Set(jsText(op), config.Clone(valueOf(req)))
			default:
				pred.Set("equals", setDefined(&config.Object{}, m.Key, buildEquals(member(req, m.Key), m.Value, valueOf)))
			}
			preds = append(preds, pred)
		}
	}
	return preds, nil
}

// selection is Mountebank's selectionValue: nothing is "", one value is that value.
func selection(vals []config.Value) config.Value {
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	}
	out := make([]any, len(vals))
	copy(out, vals)
	return out
}

// buildEquals keeps, from field, the keys the matcher names, recursing into objects and, as
// Mountebank's isObject is typeof 'object', into arrays: a repeated header or query name (an
// array) matched with `true` gives {} (Object.keys(true) is empty), one matched by index keeps
// the elements named, as an object.
func buildEquals(field, matcher config.Value, valueOf func(config.Value) config.Value) config.Value {
	out := &config.Object{}
	for _, key := range keysOf(matcher) {
		v := member(field, key)
		switch v.(type) {
		case *config.Object, []any:
			out.Set(key, buildEquals(v, member(matcher, key), valueOf))
			continue
		}
		setDefined(out, key, valueOf(v))
	}
	return out
}

// existsFor returns a copy of req with every leaf set to value.
func existsFor(v config.Value, value bool) config.Value {
	switch t := v.(type) {
	case *config.Object:
		out := &config.Object{}
		for _, m := range t.Members {
			out.Set(m.Key, existsFor(m.Value, value))
		}
		return out
	default:
		return value
	}
}

// objFilter removes what filter names from obj, as Mountebank's helpers.objFilter does.
func objFilter(obj, filter config.Value) {
	o, ok := obj.(*config.Object)
	if !ok {
		return
	}
	switch f := filter.(type) {
	case string:
		o.Delete(f)
	case []any:
		for _, k := range f {
			if ks, isStr := k.(string); isStr && jsvalue.Truthy(member(o, ks)) {
				o.Delete(ks)
			}
		}
	case *config.Object:
		for _, m := range f.Members {
			if jsvalue.Truthy(member(o, m.Key)) {
				objFilter(member(o, m.Key), m.Value)
			}
		}
	}
}

// keysOf is JavaScript's Object.keys.
func keysOf(v config.Value) []string {
	switch t := v.(type) {
	case *config.Object:
		return t.Keys()
	case []any:
		return indexKeys(len(t))
	case string:
		return indexKeys(len([]rune(t)))
	}
	return nil
}

func indexKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// member is JavaScript's v[key] (undefined when absent).
func member(v config.Value, key string) config.Value {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return undefined{}
		}
		if mv, ok := t.Get(key); ok {
			return mv
		}
	case []any:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(t) && strconv.Itoa(i) == key {
			return t[i]
		}
	case string:
		r := []rune(t)
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(r) && strconv.Itoa(i) == key {
			return string(r[i])
		}
	}
	return undefined{}
}

// setDefined sets key to a copy of v unless v is undefined, and returns o.
func setDefined(o *config.Object, key string, v config.Value) *config.Object {
	if _, isUndef := v.(undefined); !isUndef {
		o.Set(key, config.Clone(v))
	}
	return o
}

// Object returns a response's `proxy` value as Mountebank's response resolver reads it: an
// array is an object without a `to` ("Missing to"); a string, number or true throws a TypeError
// when the resolver sets its mode (strict mode), which the API shows as the stub alone.
func Object(v config.Value) (*config.Object, *config.Error) {
	switch t := v.(type) {
	case *config.Object:
		if t != nil {
			return t, nil
		}
	case []any:
		return &config.Object{}, nil
	}
	return nil, typeError("Cannot create property 'mode' on " + jsvalue.String(v))
}

// GeneratorList returns a proxy's predicateGenerators as Mountebank's predicatesFor walks them
// (`proxy.predicateGenerators || []`, then forEach): a value that is not an array, or an element
// that is not an object (`1`, `null`, `"s"`, an array: it reads their `matches`), throws a
// TypeError in its dry run, which the API shows as the stub alone.
func GeneratorList(v config.Value) ([]*config.Object, *config.Error) {
	if !jsvalue.Truthy(v) {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, typeError("predicateGenerators.forEach is not a function")
	}
	out := make([]*config.Object, 0, len(list))
	for _, g := range list {
		o, ok := g.(*config.Object)
		if !ok || o == nil {
			return nil, typeError("Cannot convert undefined or null to object")
		}
		out = append(out, o)
	}
	return out, nil
}

// DryRunGenerators finds the predicateGenerators Mountebank's dry run fails on: it builds the
// predicates of a proxied answer for its test request (test: baseHttpServer's testRequest, or
// tcpServer's {data: 'test'}), and predicatesFor throws a TypeError for a generator without
// matches, and for one whose `ignore` names nothing it can filter a matched field with
// (helpers.objFilter reads Object.keys of undefined). With existsFails, it throws for the
// predicateOperator exists too: buildExists keeps its path across the request's keys and calls,
// so it sets the http test request's second key on its first, no longer an object (a tcp
// request has one key: there it fails from the second call in the process on, which mockd does
// not follow). The error shows nothing but the stub, as a TypeError does in Mountebank's
// answer. Injected generators are left to the request.
func DryRunGenerators(gens []*config.Object, test *config.Object, existsFails bool) *config.Error {
	for _, g := range gens {
		if jsvalue.Truthy(get(g, "inject")) {
			continue
		}
		mv := get(g, "matches")
		if mv == nil {
			return typeError("Cannot convert undefined or null to object")
		}
		op, hasOp := g.Get("predicateOperator")
		ignore := get(g, "ignore")
		for _, key := range keysOf(mv) {
			v := member(mv, key)
			field := member(test, key)
			switch {
			case v == true && !hasOp:
				if jsvalue.Truthy(ignore) && objFilterThrows(field, member(ignore, key)) {
					return typeError("Cannot convert undefined or null to object")
				}
			case hasOp && op == "exists":
				if existsFails {
					return typeError("Cannot create property 'method' on boolean")
				}
			case hasOp:
			default:
				// buildEquals reads the matched keys of the field: of undefined, a TypeError.
				if _, undef := field.(undefined); (undef || field == nil) && len(keysOf(v)) > 0 {
					return typeError("Cannot read properties of undefined")
				}
			}
		}
	}
	return nil
}

// HTTPTestRequest is the request Mountebank's http dry run resolves a stub with.
func HTTPTestRequest() *config.Object {
	return config.NewObject("requestFrom", "", "method", "GET", "path", "/", "query", config.NewObject(),
		"headers", config.NewObject(), "form", config.NewObject(), "body", "")
}

// typeError is a TypeError as Mountebank's API shows one: no fields of its own.
func typeError(msg string) *config.Error {
	return &config.Error{Code: "TypeError", Message: msg, Raw: config.NewObject()}
}

// objFilterThrows reports whether helpers.objFilter(obj, filter) throws (strict mode).
func objFilterThrows(obj, filter config.Value) bool {
	_, objUndef := obj.(undefined)
	objNone := objUndef || obj == nil
	switch f := filter.(type) {
	case undefined, nil:
		return true // Object.keys(undefined)
	case string:
		if objNone {
			return true
		}
		if s, ok := obj.(string); ok { // delete of a string's own (non-configurable) property
			i, err := strconv.Atoi(f)
			return f == "length" || err == nil && i >= 0 && i < len([]rune(s)) && strconv.Itoa(i) == f
		}
	case []any:
		return objNone && len(f) > 0
	case *config.Object:
		return objNone && len(f.Members) > 0
	}
	return false
}
