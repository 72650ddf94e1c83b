// Package jsonpath selects with JSONPath (ohler55/ojg) from configuration values as
// jsonpath-plus, Mountebank's library, does: objects walked in JavaScript's key order, recursive
// descent in its order, and the values selected given back as they are in the document.
package jsonpath

import (
	"cmp"
	"slices"

	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Select returns what x selects from v, in jsonpath-plus's order; nothing when ojg cannot
// evaluate it.
func Select(x jp.Expr, v config.Value) (out []config.Value) {
	w := &walker{orig: map[*any][]any{}}
	var res []any
	func() {
		defer func() { _ = recover() }()
		res = w.get(x, w.wrap(v))
	}()
	out = make([]config.Value, 0, len(res))
	for _, r := range res {
		out = append(out, w.unwrap(r))
	}
	return out
}

// get is expr.Get in the order jsonpath-plus (Mountebank's) gives: recursive descent (`..`)
// applies the rest of the path to a value, then descends into each of its objects and arrays
// in turn (`$..name` on {"name":"a","child":{"name":"b"}} is ["a","b"]; ojg gives the deepest
// first), and an object's members come in JavaScript's order (keyed.Keys).
func (w *walker) get(expr jp.Expr, v any) []any {
	d := slices.IndexFunc(expr, func(f jp.Frag) bool { _, ok := f.(jp.Descent); return ok })
	if d < 0 {
		return expr.Get(v)
	}
	nodes := []any{v}
	if d > 1 {
		nodes = expr[:d].Get(v)
	}
	rest := append(jp.Expr{jp.Root('$')}, expr[d+1:]...)
	var out []any
	var descend func(n any)
	descend = func(n any) {
		out = append(out, w.get(rest, n)...)
		switch t := n.(type) {
		case *keyed:
			for _, k := range t.Keys() {
				c, _ := t.ValueForKey(k)
				descend(c)
			}
		case []any:
			for _, c := range t {
				descend(c)
			}
		}
	}
	for _, n := range nodes {
		switch n.(type) {
		case *keyed, []any:
			descend(n)
		}
	}
	return out
}

// walker lets ojg walk configuration values: objects in their key order (keyed), arrays with
// their elements wrapped; unwrap gives back the values ojg selects.
type walker struct {
	orig map[*any][]any // the array each wrapped array was made from, by its first element
}

// keyed is an object for ojg. `$.*` reads every key: past a few keys they are found with a map
// (config.Builder), not by scanning (a body of 200,000 keys took 25 s).
type keyed struct {
	b config.Builder
	w *walker
}

func (k *keyed) ValueForKey(key string) (any, bool) {
	v, ok := k.b.Get(key)
	return k.w.wrap(v), ok
}
func (k *keyed) SetValueForKey(string, any) {}
func (k *keyed) RemoveValueForKey(string)   {}

// Keys are the object's keys in JavaScript's order: those that are array indexes first,
// ascending, then the others in the order the object has them.
func (k *keyed) Keys() []string {
	keys := k.b.O.Keys()
	slices.SortStableFunc(keys, func(a, b string) int {
		i, aIndex := jsvalue.ArrayIndex(a)
		j, bIndex := jsvalue.ArrayIndex(b)
		switch {
		case aIndex && bIndex:
			return cmp.Compare(i, j)
		case aIndex:
			return -1
		case bIndex:
			return 1
		}
		return 0
	})
	return keys
}

func (w *walker) wrap(v config.Value) any {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return nil
		}
		return &keyed{config.Builder{O: t}, w}
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = w.wrap(e)
		}
		if len(out) > 0 {
			w.orig[&out[0]] = t
		}
		return out
	}
	return v
}

// unwrap is the value ojg selected as it was before wrap: an array selected is the one it was
// made from (rebuilding each of the arrays `$..*` selects, each nested in the one before, took
// seconds).
func (w *walker) unwrap(v any) config.Value {
	switch t := v.(type) {
	case *keyed:
		return t.b.O
	case []any:
		if len(t) > 0 {
			if o, ok := w.orig[&t[0]]; ok {
				return o
			}
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = w.unwrap(e)
		}
		return out
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return v
}
