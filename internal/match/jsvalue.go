package match

import (
	"math"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Values are JavaScript values as jsvalue has them: undefined (jsvalue.Undef), null (nil), bool,
// float64, string, []any, and objects as *config.Object (the reference) or map[string]any
// (JSON parsed for a selector or a fast node); a compiled constant (*eleaf) is a jsvalue.Valuer.

func isArray(v any) bool { _, ok := v.([]any); return ok }

// isObject is helpers.isObject: typeof 'object' and not null (arrays too).
func isObject(v any) bool {
	switch t := v.(type) {
	case []any, map[string]any:
		return true
	case *config.Object:
		return t != nil
	}
	return false
}

// jsString is String(v); a compiled constant has its String already.
func jsString(v any) string {
	if l, ok := v.(*eleaf); ok {
		return l.s
	}
	return jsvalue.String(v)
}

// elementOf is v[k] for an array or a string: its length, or the element (a string's UTF-16 unit)
// at an index; undefined otherwise.
func elementOf(v any, k string) any {
	switch t := v.(type) {
	case []any:
		if k == "length" {
			return float64(len(t))
		}
		if i, ok := jsvalue.ArrayIndex(k); ok && i < len(t) {
			return t[i]
		}
	case string:
		if k == "length" {
			return float64(jsvalue.Len16(t))
		}
		if i, ok := jsvalue.ArrayIndex(k); ok {
			if ch, ok := jsvalue.CharAt16(t, i); ok {
				return ch
			}
		}
	}
	return jsvalue.Undef
}

// jsKeyOrder sorts object keys as Object.keys orders them when insertion order
// is unknown: array-index keys ascending first, then the others (sorted).
func jsKeyOrder(keys []string) {
	sort.Slice(keys, func(i, j int) bool {
		a, aok := jsvalue.ArrayIndex(keys[i])
		b, bok := jsvalue.ArrayIndex(keys[j])
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return keys[i] < keys[j]
	})
}

// jsLess is the abstract relational comparison a < b for the values
// predicates.js sorts.
func jsLess(a, b any) bool {
	pa, pb := toPrimitive(a), toPrimitive(b)
	sa, aok := pa.(string)
	sb, bok := pb.(string)
	if aok && bok {
		return jsvalue.Less16(sa, sb)
	}
	na, nb := jsvalue.Number(pa), jsvalue.Number(pb)
	return na < nb
}

func toPrimitive(v any) any {
	switch v.(type) {
	case nil, jsvalue.Undefined, bool, float64, string:
		return v
	}
	return jsString(v)
}

// sortJS sorts a copy of a as V8's Array#sort(sortObjects) does (undefined last): predicates.js
// sortObjects compares objects (arrays included) by their stable stringification, anything else
// with JavaScript's <, answering -1 when less and 1 otherwise (never 0).
func sortJS(a []any) []any {
	out, _ := sortWithin(a, -1)
	return out
}

// selectionBudget bounds the stable stringifications of what one jsonpath selection picks from
// a text of textLen bytes: 4 MiB more than twice the text. Values that are not nested in each
// other add up to about the text's length at most; recursive descent ($..a) also picks every
// level of a nested value, each holding the levels below, so a 60 KB body nested 10,000 deep
// selects 300 MB of text (sorting and comparing it took minutes). Past the bound the selector
// selects nothing.
func selectionBudget(textLen int) int { return 4<<20 + 2*textLen }

// sortWithin is sortJS computing each object's stringification once; false when the
// stringifications add up to more than budget bytes (no bound when budget < 0).
func sortWithin(a []any, budget int) ([]any, bool) {
	if len(a) < 2 {
		return append([]any(nil), a...), true // nothing to compare
	}
	items := make([]sortItem, 0, len(a))
	var buf []byte
	total, undefined := 0, 0
	for _, v := range a {
		if jsvalue.IsUndefined(v) {
			undefined++ // V8 moves them to the end without comparing them
			continue
		}
		it := sortItem{v: v}
		if isObject(v) {
			it.obj = true
			if budget >= 0 {
				buf = appendCanon(buf[:0], v)
				if total += len(buf); total > budget {
					return nil, false
				}
				it.key = string(buf)
			}
		}
		items = append(items, it)
	}
	var cmp lazyCompare
	less := func(x, y *sortItem) bool {
		switch {
		case x.obj && y.obj && budget >= 0:
			return jsvalue.Less16(x.key, y.key)
		case x.obj && y.obj:
			// Stringified only as far as they differ: an array nested in each of its
			// elements' siblings is stringified again at every level it is sorted.
			return cmp.less(canonSource{x.v}, canonSource{y.v})
		case x.obj || y.obj:
			return cmp.mixedLess(x.v, y.v)
		}
		return jsLess(x.v, y.v)
	}
	v8TimSort(items, less)
	out := make([]any, len(items), len(items)+undefined)
	for i := range items {
		out[i] = items[i].v
	}
	for ; undefined > 0; undefined-- {
		out = append(out, jsvalue.Undef)
	}
	return out, true
}

// sortItem is a value being sorted; an object's stable stringification is key when the sort
// made it in advance.
type sortItem struct {
	v   any
	obj bool
	key string
}

// v8SortShort sorts fewer than 64 items as V8's TimSort does (third_party/v8/builtins/
// array-sort.tq) with a comparator that is negative when less says so and positive otherwise:
// one run, the ascending or (reversed) strictly descending run the items begin with, extended
// by a binary insertion sort. For values the comparator does not order consistently (null
// against a string, a number against an array) the order follows from exactly these
// comparisons, so it is the one Mountebank gives.
func v8SortShort(items []sortItem, less func(x, y *sortItem) bool) {
	n := len(items)
	if n < 2 {
		return
	}
	run := 2
	descending := less(&items[1], &items[0])
	for i := 2; i < n; i++ {
		if less(&items[i], &items[i-1]) != descending {
			break
		}
		run++
	}
	if descending {
		slices.Reverse(items[:run])
	}
	for start := run; start < n; start++ {
		pivot := items[start]
		left, right := 0, start
		for left < right {
			mid := left + (right-left)>>1
			if less(&pivot, &items[mid]) {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(items[left+1:start+1], items[left:start])
		items[left] = pivot
	}
}

// strictEquals is ===.
func strictEquals(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case jsvalue.Undefined:
		return jsvalue.IsUndefined(b)
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false // distinct objects are never ===
}

// appendCanon appends the stable stringification of v (safe-stable-stringify
// with sorted keys). It is only used for equality and for ordering objects, so
// any injective encoding with the same key order would do; this one follows
// JSON.stringify.
func appendCanon(dst []byte, v any) []byte {
	w := canonWriter{dst: dst, limit: -1}
	w.write(v)
	return w.dst
}

// canonWriter appends stable stringifications (appendCanon); with a limit >= 0 it stops, between
// characters, once dst holds limit bytes or more.
type canonWriter struct {
	dst   []byte
	limit int
}

// write appends v; false when it stopped at the limit.
func (w *canonWriter) write(v any) bool {
	if w.limit >= 0 && len(w.dst) >= w.limit {
		return false
	}
	switch t := v.(type) {
	case nil:
		w.dst = append(w.dst, "null"...)
	case jsvalue.Undefined:
		w.dst = append(w.dst, "undefined"...)
	case bool:
		if t {
			w.dst = append(w.dst, "true"...)
		} else {
			w.dst = append(w.dst, "false"...)
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			w.dst = append(w.dst, "null"...)
		} else {
			w.dst = jsvalue.AppendNumber(w.dst, t)
		}
	case string:
		return w.quoted(t)
	case *eleaf:
		return w.write(t.v)
	case []any:
		w.dst = append(w.dst, '[')
		for i, e := range t {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			if jsvalue.IsUndefined(e) {
				e = nil
			}
			if !w.write(e) {
				return false
			}
		}
		w.dst = append(w.dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k, e := range t {
			if !jsvalue.IsUndefined(e) {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return jsvalue.Less16(keys[i], keys[j]) })
		w.dst = append(w.dst, '{')
		for i, k := range keys {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			if !w.quoted(k) {
				return false
			}
			w.dst = append(w.dst, ':')
			if !w.write(t[k]) {
				return false
			}
		}
		w.dst = append(w.dst, '}')
	case *config.Object:
		if t == nil {
			w.dst = append(w.dst, "null"...)
			return true
		}
		// As for a map: keys sorted, undefined members left out (an object's keys are unique).
		var fixed [8]int
		order := fixed[:0]
		for i, mem := range t.Members {
			if !jsvalue.IsUndefined(mem.Value) {
				order = append(order, i)
			}
		}
		slices.SortFunc(order, func(i, j int) int {
			a, b := t.Members[i].Key, t.Members[j].Key
			switch {
			case jsvalue.Less16(a, b):
				return -1
			case jsvalue.Less16(b, a):
				return 1
			}
			return 0
		})
		w.dst = append(w.dst, '{')
		for n, i := range order {
			if n > 0 {
				w.dst = append(w.dst, ',')
			}
			if !w.quoted(t.Members[i].Key) {
				return false
			}
			w.dst = append(w.dst, ':')
			if !w.write(t.Members[i].Value) {
				return false
			}
		}
		w.dst = append(w.dst, '}')
	default:
		w.dst = append(w.dst, "null"...)
	}
	return true
}

// quoted appends s as a JSON string; false when it stopped at the limit.
func (w *canonWriter) quoted(s string) bool {
	if w.limit < 0 {
		w.dst = appendQuoted(w.dst, s)
		return true
	}
	w.dst = append(w.dst, '"')
	for i := 0; i < len(s); {
		if len(w.dst) >= w.limit && utf8.RuneStart(s[i]) {
			return false
		}
		j := i + 1
		for j < len(s) && !utf8.RuneStart(s[j]) {
			j++
		}
		w.dst = appendQuotedBody(w.dst, s[i:j])
		i = j
	}
	w.dst = append(w.dst, '"')
	return true
}

func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendQuotedBody(dst, s)
	return append(dst, '"')
}

// appendQuotedBody appends s escaped as inside a JSON string.
func appendQuotedBody(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// decodeBase64 is Buffer.from(s, 'base64').toString(): lenient about the
// alphabet (standard and URL-safe), skipping other characters, stopping at '='.
func decodeBase64(s string) string {
	out := make([]byte, 0, len(s)*3/4)
	var acc uint32
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c >= 'A' && c <= 'Z':
			v = c - 'A'
		case c >= 'a' && c <= 'z':
			v = c - 'a' + 26
		case c >= '0' && c <= '9':
			v = c - '0' + 52
		case c == '+' || c == '-':
			v = 62
		case c == '/' || c == '_':
			v = 63
		case c == '=':
			i = len(s)
			continue
		default:
			continue
		}
		acc = acc<<6 | uint32(v)
		n++
		if n == 4 {
			out = append(out, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	switch n {
	case 2:
		out = append(out, byte(acc>>4))
	case 3:
		out = append(out, byte(acc>>10), byte(acc>>2))
	}
	return jsvalue.DecodeUTF8(out)
}
