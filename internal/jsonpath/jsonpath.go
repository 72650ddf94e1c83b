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
	w := NewDoc(true)
	var res []any
	func() {
		defer func() { _ = recover() }()
		res = w.get(x, w.Wrap(v))
	}()
	out = make([]config.Value, 0, len(res))
	for _, r := range res {
		out = append(out, w.Unwrap(r))
	}
	return out
}

// get is expr.Get as jsonpath-plus (Mountebank's) evaluates it. Recursive descent (`..`)
// applies the rest of the path to a value, then descends into each of its objects and arrays
// in turn (`$..name` on {"name":"a","child":{"name":"b"}} is ["a","b"]; ojg gives the deepest
// first), and an object's members come in JavaScript's order (Object.Keys). A name or an index
// is a JavaScript property access (see prop): `[1]` on an object selects its key "1", `[-1]`
// selects an object's key "-1" and nothing in an array, and `.length` and `[1]` read arrays and
// strings as JavaScript does; ojg reads `[i]` on arrays only (negative from the end) and names
// on objects only. Other steps (wildcards, slices, filters) are ojg's.
func (w *Doc) get(expr jp.Expr, v any) []any {
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
		if len(rest) == 1 {
			// A path ending in `..` selects each value it reaches, whatever it is, and every
			// object, array and null under it (null's typeof is 'object' too).
			var all func(n any)
			all = func(n any) {
				out = append(out, n)
				for _, c := range children(n) {
					if c == nil || container(c) {
						all(c)
					}
				}
			}
			for _, n := range nodes {
				all(n)
			}
			break
		}
		// The rest of the path applies to each value reached, whatever it is (`$.s..length`
		// reads a string's length); only objects and arrays are descended into
		// (jsonpath-plus: typeof val[m] === 'object', where null leads nowhere).
		var descend func(n any)
		descend = func(n any) {
			out = append(out, w.get(rest, n)...)
			switch t := n.(type) {
			case *Object:
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
			descend(n)
		}
	case *jp.Filter:
		// ojg's filter, but a filter that reads a property of @ throws in JavaScript on a
		// null (TypeError), and the whole selection with it: Mountebank selects nothing.
		throws := readsProperty(f)
		one := jp.Expr{jp.Root('$'), f}
		for _, n := range nodes {
			if throws && slices.Contains(children(n), nil) {
				panic(errNullProperty)
			}
			for _, c := range one.Get(n) {
				next(c)
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

// children are the values of an object (in JavaScript's key order) or an array.
func children(n any) []any {
	switch t := n.(type) {
	case *Object:
		keys := t.Keys()
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i], _ = t.ValueForKey(k)
		}
		return out
	case []any:
		return t
	}
	return nil
}

var errNullProperty = errors.New("a filter reads a property of null")

// readsProperty reports whether a filter reads a property of @ (`@.a`, `@['a']`, JavaScript's
// `@.length`) for every value it tests: not when it starts with `@ &&`, which guards them.
func readsProperty(f *jp.Filter) bool {
	code := f.String()
	if !strings.Contains(code, "@.") && !strings.Contains(code, "@[") && !strings.Contains(code, "length(@)") {
		return false
	}
	inner := strings.TrimLeft(strings.TrimPrefix(code, "[?"), "( ")
	return !strings.HasPrefix(inner, "@ &&")
}

// container reports whether n is an object or an array.
func container(n any) bool {
	switch n.(type) {
	case *Object, []any:
		return true
	}
	return false
}

// own reports whether get evaluates the step itself rather than ojg: recursive descent, an
// index, a union of names and indexes, and a name that reads arrays or strings in JavaScript
// (an array index or "length"); other names read objects only, which ojg does alike.
func own(f jp.Frag) bool {
	switch t := f.(type) {
	case jp.Descent, jp.Nth, jp.Union, *jp.Filter:
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
// element (a canonical index in range) or length, a string's UTF-16 code unit or length (not
// the empty string's: jsonpath-plus follows a name only from a truthy value).
func prop(n any, name string) (any, bool) {
	switch t := n.(type) {
	case *Object:
		return t.ValueForKey(name)
	case []any:
		if name == "length" {
			return float64(len(t)), true
		}
		if i, ok := jsvalue.ArrayIndex(name); ok && i < len(t) {
			return t[i], true
		}
	case string:
		if t == "" {
			return nil, false // jsonpath-plus reads no property of a falsy value (val && …)
		}
		if name == "length" {
			return float64(jsvalue.Len16(t)), true
		}
		if i, ok := jsvalue.ArrayIndex(name); ok {
			return jsvalue.CharAt16(t, i)
		}
	}
	return nil, false
}

// Doc lets ojg walk configuration values: objects wrapped (Object), arrays copied with their
// elements wrapped; Unwrap gives back the values ojg selects. Select's Doc gives an object's keys
// in JavaScript's order (jsonpath-plus's); the templates' jsonPath (internal/hbs) in the order the
// object has them (WireMock's JsonPath reads ordered objects).
type Doc struct {
	orig    map[*any][]any // the array each wrapped array was made from, by its first element
	jsOrder bool
}

// NewDoc is a Doc whose objects give their keys in JavaScript's order (jsOrder) or in their own.
func NewDoc(jsOrder bool) *Doc {
	return &Doc{orig: map[*any][]any{}, jsOrder: jsOrder}
}

// Object is an object for ojg. `$.*` reads every key: past a few keys they are found with a map
// (config.Builder), not by scanning (a body of 200,000 keys took 25 s).
type Object struct {
	b config.Builder
	w *Doc
}

// Members are the object's members, as the document has them.
func (k *Object) Members() []config.Member { return k.b.O.Members }

// ValueForKey is the wrapped value of key; with Keys it makes Object ojg's jp.Keyed, which ojg
// reads but never changes (SetValueForKey and RemoveValueForKey do nothing).
func (k *Object) ValueForKey(key string) (any, bool) {
	v, ok := k.b.Get(key)
	return k.w.Wrap(v), ok
}

// SetValueForKey does nothing (see ValueForKey).
func (k *Object) SetValueForKey(string, any) {}

// RemoveValueForKey does nothing (see ValueForKey).
func (k *Object) RemoveValueForKey(string) {}

// Keys are the object's keys: in JavaScript's order, those that are array indexes first,
// ascending, then the others in the order the object has them; or all in the object's order.
func (k *Object) Keys() []string {
	keys := k.b.O.Keys()
	if !k.w.jsOrder {
		return keys
	}
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

// Wrap is v as ojg walks it: objects wrapped, arrays copied with their elements wrapped.
func (w *Doc) Wrap(v config.Value) any {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return nil
		}
		return &Object{config.Builder{O: t}, w}
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = w.Wrap(e)
		}
		if len(out) > 0 {
			w.orig[&out[0]] = t
		}
		return out
	}
	return v
}

// Unwrap is the value ojg selected as it was before Wrap: an array selected is the one it was
// made from (rebuilding each of the arrays `$..*` selects, each nested in the one before, took
// seconds).
func (w *Doc) Unwrap(v any) config.Value {
	switch t := v.(type) {
	case *Object:
		return t.b.O
	case []any:
		if len(t) > 0 {
			if o, ok := w.orig[&t[0]]; ok {
				return o
			}
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = w.Unwrap(e)
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
// stays harmlessly. Brackets and `@.length` in filters are first rewritten to what ojg reads
// as jsonpath-plus does (see jsBrackets and jsLength).
func Parse(src string) (jp.Expr, error) {
	if unsubstituted(src) {
		return nil, errFilter
	}
	return jp.ParseString(jsLength(jsBrackets(jsDots(src))))
}

// jsDots rewrites a run of three or more dots outside brackets and quotes, or dots followed by
// a bracket, as jsonpath-plus reads them. Its toPathArray makes each dot (and a bracket's '[')
// a ';' and then each ';;;' (or a remaining ';;') a descent, so the dots left over are empty
// property names: `$...a` is `$..a`, `$....a` is `$..[""].a` (the key "" of any value, then
// its a), `$.['a']` is `$..['a']`, and a run at the end loses one ';' more (`$...` is `$..`,
// `$....` is `$..[""]`).
func jsDots(src string) string {
	if !strings.Contains(src, "...") && !strings.Contains(src, ".[") {
		return src
	}
	var b strings.Builder
	depth := 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '(':
			depth++
		case (c == ']' || c == ')') && depth > 0:
			depth--
		case c == '.' && depth == 0:
			k := 0
			for i+k < len(src) && src[i+k] == '.' {
				k++
			}
			end := i + k
			bracket := end < len(src) && src[end] == '['
			n := k // the ';' the run makes, with the one a bracket after it makes
			if bracket {
				n++
			}
			if n < 3 && !bracket {
				b.WriteString(src[i:end])
				i = end - 1
				continue
			}
			var semis strings.Builder
			for r := n; r > 0; {
				if r >= 2 {
					semis.WriteString(";..;")
					r -= min(r, 3)
				} else {
					semis.WriteString(";")
					r--
				}
			}
			parts := strings.Split(semis.String(), ";")[1:]
			if end == len(src) {
				parts = strings.Split(strings.TrimSuffix(semis.String(), ";"), ";")[1:]
			} else {
				parts = parts[:len(parts)-1] // the name that follows
			}
			last := ""
			for _, t := range parts {
				if t == ".." {
					b.WriteString("..")
				} else {
					b.WriteString("['']")
				}
				last = t
			}
			if end < len(src) && !bracket && last != ".." {
				b.WriteByte('.')
			}
			i = end - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// jsBrackets rewrites the brackets of src that hold unquoted text other than an index, a
// wildcard or a slice into quoted names, as jsonpath-plus reads them: the text between the
// brackets, split at its commas, each part taken as it is as a property name. So `[x]` is the
// name "x", `[01]` the name "01" (an object's key; nothing in an array, where 01 is not an
// index), `[ 1 ]` the name " 1 ", `[-0]` the name "-0", and `[ 0 , 2 ]` the names " 0 " and " 2 ";
// ojg reads them as indexes or refuses them. Brackets holding quotes, filters and scripts, and
// the text of quoted names, are left as they are.
func jsBrackets(src string) string {
	var b []byte // the rewritten selector, once something is rewritten
	done := 0    // src[:done] is in b
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\'', '"':
			// A quoted name: skip to its closing quote.
			q := src[i]
			for i++; i < len(src) && src[i] != q; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			continue
		case '[':
		default:
			continue
		}
		if rest := src[i+1:]; strings.HasPrefix(rest, "?(") || strings.HasPrefix(rest, "(") {
			// A filter or a script: skip to its end.
			if e := strings.Index(rest, ")]"); e >= 0 {
				i += e + 2
			}
			continue
		}
		end := strings.IndexByte(src[i+1:], ']')
		if end < 0 {
			break
		}
		text := src[i+1 : i+1+end]
		if !bareName(text) {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(src)+8)
		}
		b = append(b, src[done:i+1]...)
		for k, part := range strings.Split(text, ",") {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '\'')
			for j := 0; j < len(part); j++ {
				if part[j] == '\\' {
					b = append(b, '\\')
				}
				b = append(b, part[j])
			}
			b = append(b, '\'')
		}
		i += end + 1 // the ']'
		done = i
	}
	if b == nil {
		return src
	}
	return string(append(b, src[done:]...))
}

// bareName reports whether the text between brackets is unquoted text jsonpath-plus takes as
// property names and ojg does not: not empty, holding no quote, bracket, parenthesis or
// wildcard, not a slice, and not only canonical indexes (`0`, `12`, `-1`: ojg reads those as
// jsonpath-plus does, see get).
func bareName(text string) bool {
	if text == "" || strings.ContainsAny(text, "'\"[]()*?@$") || sliceText(text) {
		return false
	}
	for _, part := range strings.Split(text, ",") {
		if !canonicalIndex(part) {
			return true
		}
	}
	return false
}

// canonicalIndex reports whether s is an integer as JavaScript writes it: 0, or digits not
// led by 0, with a minus sign or none (but not -0).
func canonicalIndex(s string) bool {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s == "0" {
		return !neg
	}
	return s != "" && s[0] != '0' && digits(s)
}

// sliceText reports whether text is a slice as jsonpath-plus tells one
// (/^(-?\d*):(-?\d*):?(\d*)$/).
func sliceText(text string) bool {
	i := strings.IndexByte(text, ':')
	if i < 0 || !signedDigits(text[:i]) {
		return false
	}
	rest := text[i+1:]
	if j := strings.IndexByte(rest, ':'); j >= 0 {
		return signedDigits(rest[:j]) && digits(rest[j+1:])
	}
	return signedDigits(rest)
}

func signedDigits(s string) bool { return digits(strings.TrimPrefix(s, "-")) }

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsLength rewrites `@.length` in the filters of src (outside string literals, and not followed
// by more of a name or path) into jslength(@), which reads it as JavaScript does: a string's
// length in UTF-16 code units, an array's length, an object's "length" key; ojg reads a
// "length" key only. A filter that is `@.length` alone, or `!@.length`, tests JavaScript's
// truthiness of it (a length of 0 is false), where ojg tests that the path exists. `===` and
// `!==` become ojg's `==` and `!=`, which do not coerce either.
func jsLength(src string) string {
	if !strings.Contains(src, "?(") || !strings.Contains(src, "@.length") && !strings.Contains(src, "==") {
		return src
	}
	var b strings.Builder
	for i := 0; ; {
		k := strings.Index(src[i:], "?(")
		if k < 0 {
			b.WriteString(src[i:])
			return b.String()
		}
		start := i + k + 2
		b.WriteString(src[i:start])
		end := strings.Index(src[start:], ")]")
		if end < 0 {
			end = len(src) - start
		}
		code := src[start : start+end]
		if strings.TrimSpace(code) == "@.length" {
			b.WriteString("jstruthylength(@)")
		} else {
			var quote byte
			for j := 0; j < len(code); j++ {
				c := code[j]
				switch {
				case quote != 0:
					if c == '\\' && j+1 < len(code) {
						b.WriteByte(c)
						j++
						c = code[j]
					} else if c == quote {
						quote = 0
					}
				case c == '\'' || c == '"':
					quote = c
				case (c == '=' || c == '!') && strings.HasPrefix(code[j+1:], "=="):
					// JavaScript's strict (in)equality: ojg's compares without coercion too.
					b.WriteString(code[j : j+2])
					j += 2
					continue
				case c == '!' && strings.HasPrefix(code[j:], "!@.length") && lengthEnds(code, j+9):
					b.WriteString("!jstruthylength(@)")
					j += 8
					continue
				case c == '@' && strings.HasPrefix(code[j:], "@.length") && lengthEnds(code, j+8):
					b.WriteString("jslength(@)")
					j += 7
					continue
				}
				b.WriteByte(c)
			}
		}
		i = start + end
	}
}

// lengthEnds reports whether `@.length` ending at code[i] is not followed by more of a name
// or a path.
func lengthEnds(code string, i int) bool {
	return i == len(code) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.[", rune(code[i]))
}

func init() {
	jp.RegisterUnaryFunction("jslength", false, jsLengthOf)
	jp.RegisterUnaryFunction("jstruthylength", false, func(v any) any { return truthy(jsLengthOf(v)) })
	jp.CompileScript = compileScript
}

// compileScript is ojg's hook for a script bracket, `[(code)]`. jsonpath-plus runs the code as
// JavaScript with @ the value it is applied to and takes the result as a property name; mockd
// reads the one form selectors use, Goessner's `(@.length-N)` (N >= 1): `$.a[(@.length-1)]` is
// an array's last element, and on an object or a string the property named @.length-N, as
// JavaScript computes it. Any other script selects nothing (jsonpath-plus would run it).
func compileScript(code []byte) jp.Procedure {
	src := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(string(code), "("), ")"))
	if rest, ok := strings.CutPrefix(src, "@.length"); ok {
		if n, ok := strings.CutPrefix(strings.TrimSpace(rest), "-"); ok {
			n = strings.TrimSpace(n)
			if k, err := strconv.Atoi(n); err == nil && k >= 1 && digits(n) {
				return fromEnd(k)
			}
		}
	}
	return fromEnd(0)
}

// fromEnd selects the property named @.length-k; 0 selects nothing.
type fromEnd int

func (k fromEnd) Get(data any) []any {
	if k < 1 || data == nil {
		return nil
	}
	var l int64
	switch t := jsLengthOf(data).(type) {
	case int64:
		l = t
	case float64:
		if t != float64(int64(t)) {
			return nil
		}
		l = int64(t)
	default:
		return nil // undefined - k is NaN, a name no value has
	}
	if c, ok := prop(data, strconv.FormatInt(l-int64(k), 10)); ok {
		return []any{c}
	}
	return nil
}

func (k fromEnd) First(data any) any {
	if got := k.Get(data); len(got) > 0 {
		return got[0]
	}
	return nil
}

// jsLengthOf is JavaScript's v.length for a value as the Doc gives it to ojg, or ojg's
// Nothing when it is undefined.
func jsLengthOf(v any) any {
	switch t := v.(type) {
	case string:
		return int64(jsvalue.Len16(t))
	case []any:
		return int64(len(t))
	case nil:
		panic(errNullProperty) // JavaScript's TypeError: the selection throws
	case *Object:
		if l, ok := t.ValueForKey("length"); ok {
			return l
		}
	case Object: // ojg hands a function the object itself
		if l, ok := t.ValueForKey("length"); ok {
			return l
		}
	}
	return jp.Nothing
}

// truthy is JavaScript's truthiness of a value as the Doc gives it to ojg.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case int64:
		return t != 0
	case float64:
		return t != 0 && t == t
	case int:
		return t != 0
	}
	return v != jp.Nothing
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
