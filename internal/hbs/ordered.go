package hbs

import (
	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
)

// The selections of a jsonPath with wildcards, filters or recursive descent come in the
// document's order, as WireMock's (Jayway JsonPath over ordered objects) do: the document is
// walked as ordered objects (ojg reads an object through keyedObject's Keys, in the object's
// order, where a Go map has none), and recursive descent is evaluated as Jayway does, the rest of
// the path applied to a value and then to each object and array in it in turn (`$..name` on
// {"name":"a","child":{"name":"b"}} is ["a","b"]; ojg gives the deepest first).

// orderedDoc is a document for orderedGet: objects wrapped, arrays copied with their elements
// wrapped; unwrap gives back the values selected.
type orderedDoc struct {
	orig map[*any][]any // the array each wrapped array was made from, by its first element
}

// keyedObject is an object for ojg, its keys in the object's order.
type keyedObject struct {
	b config.Builder // finds keys with a map past a few ($.* reads every key)
	d *orderedDoc
}

func (k *keyedObject) ValueForKey(key string) (any, bool) {
	v, ok := k.b.Get(key)
	return k.d.wrap(v), ok
}
func (k *keyedObject) SetValueForKey(string, any) {}
func (k *keyedObject) RemoveValueForKey(string)   {}
func (k *keyedObject) Keys() []string             { return k.b.O.Keys() }

func (d *orderedDoc) wrap(v config.Value) any {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return nil
		}
		return &keyedObject{config.Builder{O: t}, d}
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = d.wrap(e)
		}
		if len(out) > 0 {
			d.orig[&out[0]] = t
		}
		return out
	}
	return v
}

// unwrap is the value selected as it is in the document (an array selected is the one it was
// made from: rebuilding each of the arrays `$..*` selects, each nested in the one before, is
// quadratic).
func (d *orderedDoc) unwrap(v any) config.Value {
	switch t := v.(type) {
	case *keyedObject:
		return t.b.O
	case []any:
		if len(t) > 0 {
			if o, ok := d.orig[&t[0]]; ok {
				return o
			}
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = d.unwrap(e)
		}
		return out
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return v
}

// orderedSelect is what expr selects from doc, in the document's order; nothing where ojg
// cannot evaluate it (it panics on some filters of values that are not objects).
func orderedSelect(expr jp.Expr, doc config.Value) (out []config.Value) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	d := &orderedDoc{orig: map[*any][]any{}}
	got := orderedGet(expr, d.wrap(doc))
	out = make([]config.Value, len(got))
	for i, g := range got {
		out[i] = d.unwrap(g)
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
		case *keyedObject, []any:
			out = append(out, orderedGet(rest, n)...) // (nothing is selected from anything else)
		}
		switch t := n.(type) {
		case *keyedObject:
			for _, m := range t.b.O.Members {
				if c := t.d.wrapOf(t, m.Key, m.Value); c != nil {
					descend(c)
				}
			}
		case []any:
			for _, c := range t {
				switch c.(type) {
				case *keyedObject, []any:
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
func (d *orderedDoc) wrapOf(o *keyedObject, key string, v config.Value) any {
	switch v.(type) {
	case *config.Object, []any:
		w, _ := o.ValueForKey(key)
		return w
	}
	return nil
}
