package script

import (
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// jsonWriter writes configuration values as goja's JSON.stringify writes the JavaScript values a
// native call reads them as: keys in their order (the objects it writes keep it: array indexes
// are not keys of the objects a call makes, and goja's objects over requests and responses keep
// their keys' order), numbers as String(n) does, NaN and the infinities as null, strings quoted
// with only ", \ and the control characters escaped (U+2028 and DEL are not). It gives up
// (false) on text that is not valid UTF-8, which goja would read with replacement characters,
// and on any value a configuration does not hold.
//
// With a gap, it indents as goja does: an empty object or array leaves the indent one level
// deeper for the objects and arrays that follow it in the same parent (goja restores the indent
// only after a non-empty one), e.g. JSON.stringify({a: {}, b: {c: 1}}, null, 1) is
// "{\n \"a\": {},\n \"b\": {\n   \"c\": 1\n  }\n}".
type jsonWriter struct {
	buf   []byte
	gap   string // the indent of one level; "" writes no whitespace
	level int    // the current indent, in gaps
}

func (w *jsonWriter) reset() {
	w.gap, w.level = "", 0
	if cap(w.buf) > 64<<10 {
		w.buf = nil // do not keep a large buffer in the pool
	}
	w.buf = w.buf[:0]
}

func (w *jsonWriter) value(v config.Value) bool {
	if len(w.buf) > maxNativeString {
		return false
	}
	switch t := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case bool:
		if t {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
	case float64:
		if isFinite(t) {
			w.buf = jsvalue.AppendNumber(w.buf, t)
		} else {
			w.buf = append(w.buf, "null"...)
		}
	case string:
		return w.quote(t)
	case *config.Object:
		if t == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		stepback := w.level
		w.level++
		if len(t.Members) == 0 {
			w.buf = append(w.buf, "{}"...)
			return true // the indent stays deeper, as goja leaves it
		}
		inner := w.level
		w.buf = append(w.buf, '{')
		for i, m := range t.Members {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.newline(inner)
			if !w.quote(m.Key) {
				return false
			}
			w.buf = append(w.buf, ':')
			if w.gap != "" {
				w.buf = append(w.buf, ' ')
			}
			if !w.value(m.Value) {
				return false
			}
		}
		w.newline(stepback)
		w.buf = append(w.buf, '}')
		w.level = stepback
	case []any:
		stepback := w.level
		w.level++
		if len(t) == 0 {
			w.buf = append(w.buf, "[]"...)
			return true
		}
		inner := w.level
		w.buf = append(w.buf, '[')
		for i, e := range t {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.newline(inner)
			if !w.value(e) {
				return false
			}
		}
		w.newline(stepback)
		w.buf = append(w.buf, ']')
		w.level = stepback
	default:
		return false
	}
	return true
}

// primitive writes v, null, a boolean, a number or a string, as value writes it boxed.
func (w *jsonWriter) primitive(v nval) bool {
	switch v.k {
	case kBool:
		return w.value(v.b)
	case kNum:
		if isFinite(v.f) {
			w.buf = jsvalue.AppendNumber(w.buf, v.f)
		} else {
			w.buf = append(w.buf, "null"...)
		}
		return true
	case kStr:
		return w.quote(v.s)
	}
	w.buf = append(w.buf, "null"...)
	return true
}

// newline starts a line indented depth levels, when there is a gap.
func (w *jsonWriter) newline(depth int) {
	if w.gap == "" {
		return
	}
	w.buf = append(w.buf, '\n')
	for range depth {
		w.buf = append(w.buf, w.gap...)
	}
}

const hexDigits = "0123456789abcdef"

// quote writes s as a JSON string, or returns false when s is not valid UTF-8.
func (w *jsonWriter) quote(s string) bool {
	buf := append(w.buf, '"') // a local: appends to the field would store it back each time
	start, ascii := 0, true
	for i := 0; i < len(s); i++ {
		b := s[i]
		if jsonPlain[b] {
			continue
		}
		if b >= utf8.RuneSelf {
			ascii = false
			continue
		}
		buf = append(buf, s[start:i]...)
		switch b {
		case '"', '\\':
			buf = append(buf, '\\', b)
		case '\b':
			buf = append(buf, `\b`...)
		case '\t':
			buf = append(buf, `\t`...)
		case '\n':
			buf = append(buf, `\n`...)
		case '\f':
			buf = append(buf, `\f`...)
		case '\r':
			buf = append(buf, `\r`...)
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	w.buf = append(buf, '"')
	return ascii || utf8.ValidString(s)
}

// jsonPlain marks the bytes quote writes as they are and that are ASCII: printable, not '"'
// or '\\'.
var jsonPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// jsonValues answers how many values a JSON text holds at most: its commas, colons, '[' and '{'
// outside strings, and one (the prelude's JSON.parse asks it of a text long enough to pass the
// memory limit). A text that is not JSON is answered all the same; JSON.parse refuses it
// afterwards.
func jsonValues(text string) int {
	n, in := 1, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case in:
			if c == '\\' {
				i++
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == ',' || c == ':' || c == '[' || c == '{':
			n++
		}
	}
	return n
}
