package match

import (
	"math"
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Sorting compares the stringifications of values nested in each other (orderIndependent sorts
// every array of a body, at every level): written out in full for each comparison, a body
// [1,[1,[1,…]]] 10,000 deep took minutes. These comparisons write only as much of each string as
// it takes to find where they differ.

// stringSource writes a prefix of a string: at least limit bytes of it, or all of it (complete).
type stringSource interface {
	prefix(dst []byte, limit int) (out []byte, complete bool)
}

// canonSource is the stable stringification of a value (appendCanon).
type canonSource struct{ v any }

func (c canonSource) prefix(dst []byte, limit int) ([]byte, bool) {
	w := canonWriter{dst: dst, limit: limit}
	ok := w.write(c.v)
	return w.dst, ok
}

// joinSource is String of an object: an array's elements joined with commas, "[object Object]"
// for any other object.
type joinSource struct{ v any }

func (j joinSource) prefix(dst []byte, limit int) ([]byte, bool) {
	w := joinWriter{dst: dst, limit: limit}
	ok := w.write(j.v)
	return w.dst, ok
}

// plainSource is a string already written.
type plainSource string

func (p plainSource) prefix(dst []byte, _ int) ([]byte, bool) { return append(dst, p...), true }

// joinWriter appends String(v) (jsvalue.String), stopping once dst holds limit bytes or more.
type joinWriter struct {
	dst   []byte
	limit int
}

func (w *joinWriter) write(v any) bool {
	if len(w.dst) >= w.limit {
		return false
	}
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			if vr, ok := e.(jsvalue.Valuer); ok {
				e = vr.JSValue()
			}
			if e == nil || jsvalue.IsUndefined(e) {
				continue
			}
			if !w.write(e) {
				return false
			}
		}
	case string:
		if n := w.limit - len(w.dst); n < len(t) {
			for n < len(t) && !utf8.RuneStart(t[n]) {
				n++ // stop between characters
			}
			w.dst = append(w.dst, t[:n]...)
			return n == len(t)
		}
		w.dst = append(w.dst, t...)
	case jsvalue.Valuer:
		return w.write(t.JSValue())
	default:
		w.dst = append(w.dst, jsvalue.String(v)...)
	}
	return true
}

// lazyCompare compares strings written by stringSources, reusing its buffers.
type lazyCompare struct{ a, b []byte }

// less is Less16 of the two strings.
func (c *lazyCompare) less(x, y stringSource) bool {
	for limit := 64; ; limit *= 8 {
		var cx, cy bool
		c.a, cx = x.prefix(c.a[:0], limit)
		c.b, cy = y.prefix(c.b[:0], limit)
		n := min(len(c.a), len(c.b))
		if i := firstDifference(c.a[:n], c.b[:n]); i < n {
			// Both prefixes end between characters, so the ones that differ are whole.
			return jsvalue.Less16(string(c.a), string(c.b))
		}
		switch {
		case len(c.a) < len(c.b) && cx:
			return true // x is a prefix of y
		case len(c.b) < len(c.a) && cy:
			return false
		case len(c.a) == len(c.b) && (cx || cy):
			return cx && !cy
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// mixedLess is jsLess(a, b) where one of a and b is an object (an array included) and the other
// is not: JavaScript compares the object's String with a string, or its Number with anything else.
func (c *lazyCompare) mixedLess(a, b any) bool {
	if isObject(a) {
		if s, ok := toPrimitive(b).(string); ok {
			return c.less(joinSource{a}, plainSource(s))
		}
		return objectNumber(a) < jsvalue.Number(toPrimitive(b))
	}
	if s, ok := toPrimitive(a).(string); ok {
		return c.less(plainSource(s), joinSource{b})
	}
	return jsvalue.Number(toPrimitive(a)) < objectNumber(b)
}

// objectNumber is Number(String(v)) for an object, without writing the string out: one of two
// elements or more joins with a comma, which no number holds.
func objectNumber(v any) float64 {
	a, isArray := v.([]any)
	switch {
	case !isArray || len(a) > 1:
		return math.NaN() // "[object Object]", or a comma
	case len(a) == 0:
		return 0 // ""
	}
	e := a[0]
	if vr, ok := e.(jsvalue.Valuer); ok {
		e = vr.JSValue()
	}
	switch e.(type) {
	case nil, jsvalue.Undefined:
		return 0 // ""
	case []any, map[string]any, *config.Object:
		return objectNumber(e)
	}
	return jsvalue.Number(jsvalue.String(e))
}
