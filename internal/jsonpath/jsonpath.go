// Package jsonpath selects with JSONPath (ohler55/ojg) from configuration values as
// jsonpath-plus, Mountebank's library, does: objects walked in JavaScript's key order, recursive
// descent in its order, and the values selected given back as they are in the document.
package jsonpath

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

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

// get is expr.Get as jsonpath-plus (Mountebank's) evaluates it. Recursive descent (`..`)
// applies the rest of the path to a value, then descends into each of its objects and arrays
// in turn (`$..name` on {"name":"a","child":{"name":"b"}} is ["a","b"]; ojg gives the deepest
// first), and an object's members come in JavaScript's order (keyed.Keys). A name or an index
// is a JavaScript property access (see prop): `[1]` on an object selects its key "1", `[-1]`
// selects an object's key "-1" and nothing in an array, and `.length` and `[1]` read arrays and
// strings as JavaScript does; ojg reads `[i]` on arrays only (negative from the end) and names
// on objects only. Other steps (wildcards, slices, filters) are ojg's.
func (w *walker) get(expr jp.Expr, v any) []any {
	d := slices.IndexFunc(expr, own)
	if d < 0 {
		return expr.Get(v)
	}
	nodes := []any{v}
	if d > 1 {
		nodes = expr[:d].Get(v)
	}
	rest := append(jp.Expr{jp.Root('$')}, expr[d+1:]...)
	var out []any
	// next applies the rest of the path to n (or takes n, when the step is the last).
	next := func(n any) {
		if len(rest) == 1 {
			out = append(out, n)
		} else {
			out = append(out, w.get(rest, n)...)
		}
	}
	switch f := expr[d].(type) {
	case jp.Descent:
		// Only objects and arrays are descended into (jsonpath-plus: typeof val[m] === 'object').
		var descend func(n any)
		descend = func(n any) {
			out = append(out, w.get(rest, n)...)
			switch t := n.(type) {
			case *keyed:
				for _, k := range t.Keys() {
					if c, _ := t.ValueForKey(k); container(c) {
						descend(c)
					}
				}
			case []any:
				for _, c := range t {
					if container(c) {
						descend(c)
					}
				}
			}
		}
		for _, n := range nodes {
			if container(n) {
				descend(n)
			}
		}
	case jp.Child:
		for _, n := range nodes {
			if c, ok := prop(n, string(f)); ok {
				next(c)
			}
		}
	case jp.Nth:
		name := strconv.Itoa(int(f))
		for _, n := range nodes {
			if c, ok := prop(n, name); ok {
				next(c)
			}
		}
	case jp.Union:
		// jsonpath-plus splits the bracket at its commas and follows each term in turn.
		for _, n := range nodes {
			for _, u := range f {
				var name string
				switch t := u.(type) {
				case string:
					name = t
				case int64:
					name = strconv.FormatInt(t, 10)
				default:
					continue
				}
				if c, ok := prop(n, name); ok {
					next(c)
				}
			}
		}
	}
	return out
}

// container reports whether n is an object or an array.
func container(n any) bool {
	switch n.(type) {
	case *keyed, []any:
		return true
	}
	return false
}

// own reports whether get evaluates the step itself rather than ojg: recursive descent, an
// index, a union of names and indexes, and a name that reads arrays or strings in JavaScript
// (an array index or "length"); other names read objects only, which ojg does alike.
func own(f jp.Frag) bool {
	switch t := f.(type) {
	case jp.Descent, jp.Nth, jp.Union:
		return true
	case jp.Child:
		if string(t) == "length" {
			return true
		}
		_, isIndex := jsvalue.ArrayIndex(string(t))
		return isIndex
	}
	return false
}

// prop is JavaScript's n[name] where jsonpath-plus follows it: an object's own key, an array's
// element (a canonical index in range) or length, a string's UTF-16 code unit or length.
func prop(n any, name string) (any, bool) {
	switch t := n.(type) {
	case *keyed:
		return t.ValueForKey(name)
	case []any:
		if name == "length" {
			return float64(len(t)), true
		}
		if i, ok := jsvalue.ArrayIndex(name); ok && i < len(t) {
			return t[i], true
		}
	case string:
		if name == "length" {
			return float64(jsvalue.Len16(t)), true
		}
		if i, ok := jsvalue.ArrayIndex(name); ok {
			return jsvalue.CharAt16(t, i)
		}
	}
	return nil, false
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

// Parse parses a JSONPath selector for Select. Besides ojg's parse errors it refuses a
// selector whose filter jsonpath-plus (7.2, Mountebank's) cannot run: it turns a filter into
// JavaScript by replacing @parentProperty, @parent, @property, @root, @path, and an @ followed
// by '.', white space, ')' or '['; any other @ (`?(@==1)`, `?(@)`) stays, a syntax error, and
// the whole selection throws, so Mountebank selects nothing. An @ inside a string literal
// stays harmlessly.
func Parse(src string) (jp.Expr, error) {
	if unsubstituted(src) {
		return nil, errFilter
	}
	return jp.ParseString(src)
}

var errFilter = errors.New("a filter holds an @ jsonpath-plus does not replace")

// unsubstituted reports whether a filter (`?(…)`, up to `)]`) of src holds an @ outside string
// literals that jsonpath-plus leaves as it is (see Parse).
func unsubstituted(src string) bool {
	for i := 0; ; {
		k := strings.Index(src[i:], "?(")
		if k < 0 {
			return false
		}
		start := i + k + 2
		code := src[start:]
		if end := strings.Index(code, ")]"); end >= 0 {
			code = code[:end]
		}
		var quote byte
		for j := 0; j < len(code); j++ {
			c := code[j]
			switch {
			case quote != 0:
				if c == '\\' {
					j++
				} else if c == quote {
					quote = 0
				}
				continue
			case c == '\'' || c == '"' || c == '`':
				quote = c
				continue
			case c != '@':
				continue
			}
			rest := code[j+1:]
			if rest != "" && strings.IndexByte(".)[ \t\n\r\v\f", rest[0]) >= 0 {
				continue
			}
			substituted := false
			for _, name := range []string{"parentProperty", "parent", "property", "root", "path"} {
				if strings.HasPrefix(rest, name) {
					substituted = true
					break
				}
			}
			if !substituted {
				return true
			}
		}
		i = start
	}
}
