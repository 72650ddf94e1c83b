package hbs

import (
	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonpath"
)

// The selections of a jsonPath with wildcards, filters or recursive descent come in the
// document's order, as WireMock's (Jayway JsonPath over ordered objects) do: the document is
// walked as ordered objects (ojg reads an object through jsonpath.Object's Keys, in the object's
// order, where a Go map has none), and recursive descent is evaluated as Jayway does, the rest of
// the path applied to a value and then to each object and array in it in turn (`$..name` on
// {"name":"a","child":{"name":"b"}} is ["a","b"]; ojg gives the deepest first).

// orderedSelect is what expr selects from doc, in the document's order; nothing where ojg
// cannot evaluate it (it panics on some filters of values that are not objects).
func orderedSelect(expr jp.Expr, doc config.Value) (out []config.Value) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	d := jsonpath.NewDoc(false) // the keys in the document's order
	got := orderedGet(expr, d.Wrap(doc))
	out = make([]config.Value, len(got))
	for i, g := range got {
		out[i] = d.Unwrap(g)
	}
	return out
}

// orderedGet is expr.Get(v) with recursive descent evaluated in document order: the rest of
// the path applied to each value reached, then to the objects and arrays in it, in order. A
// path ending in `..` is ojg's.
func orderedGet(expr jp.Expr, v any) []any {
	at := -1
	for i, f := range expr {
		if _, ok := f.(jp.Descent); ok {
			at = i
			break
		}
	}
	if at < 0 || at == len(expr)-1 {
		return expr.Get(v)
	}
	nodes := []any{v}
	if at > 0 {
		if _, isRoot := expr[0].(jp.Root); !isRoot || at > 1 {
			nodes = expr[:at].Get(v)
		}
	}
	rest := append(jp.Expr{jp.Root('$')}, expr[at+1:]...)
	var out []any
	var descend func(n any)
	descend = func(n any) {
		switch n.(type) {
		case *jsonpath.Object, []any:
			out = append(out, orderedGet(rest, n)...) // (nothing is selected from anything else)
		}
		switch t := n.(type) {
		case *jsonpath.Object:
			for _, m := range t.Members() {
				if c := wrapOf(t, m.Key, m.Value); c != nil {
					descend(c)
				}
			}
		case []any:
			for _, c := range t {
				switch c.(type) {
				case *jsonpath.Object, []any:
					descend(c)
				}
			}
		}
	}
	for _, n := range nodes {
		descend(n)
	}
	return out
}

// wrapOf is the wrapped value of o's member key when it is an object or an array to descend
// into (the value ValueForKey gives: the first of repeated keys, which JSON.parse has made one).
func wrapOf(o *jsonpath.Object, key string, v config.Value) any {
	switch v.(type) {
	case *config.Object, []any:
		w, _ := o.ValueForKey(key)
		return w
	}
	return nil
}
