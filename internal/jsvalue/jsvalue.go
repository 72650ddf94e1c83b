// Package jsvalue is JavaScript's value semantics as Mountebank (Node) applies them to the values
// mockd handles: undefined, ToBoolean, String(v), Number#toString, ToNumber, parseInt, strings as
// UTF-16 code units, and UTF-8 decoding as Node's Buffer#toString does. It is a leaf: config,
// request, match, behavior, script and imposter use it, and it imports nothing of mockd.
//
// A value is what a parsed JSON document holds: nil (null), bool, float64, string, []any, or
// anything else, which is an object. Undefined stands for undefined. A type that stands for a
// plain value (a compiled constant, a lazily built view) implements Valuer.
package jsvalue

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Undefined is JavaScript's undefined (a missing member, a regex group that did not take part).
type Undefined struct{}

// Undef is the undefined value.
var Undef any = Undefined{}

// IsUndefined reports whether v is undefined.
func IsUndefined(v any) bool { _, ok := v.(Undefined); return ok }

// A Valuer stands for the plain value JSValue returns, which Truthy, String and Number use.
type Valuer interface {
	JSValue() any
}

// Truthy is JavaScript's ToBoolean.
func Truthy(v any) bool {
	switch t := v.(type) {
	case nil, Undefined:
		return false
	case bool:
		return t
	case float64:
		return NumberTruthy(t)
	case string:
		return t != ""
	case Valuer:
		return Truthy(t.JSValue())
	}
	return true
}

// NumberTruthy is Boolean(f) for a number: false for 0, -0 and NaN.
func NumberTruthy(f float64) bool { return f != 0 && !math.IsNaN(f) }

// String is JavaScript's String(v). An array joins its elements with commas (null and undefined
// elements as empty strings); any other object is "[object Object]".
func String(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "null"
	case Undefined:
		return "undefined"
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		return FormatNumber(t)
	case []any:
		return Join(t)
	case Valuer:
		return String(t.JSValue())
	}
	return "[object Object]"
}

// Join is Array.prototype.join(",") (and so Array#toString).
func Join(a []any) string {
	var sb strings.Builder
	join(&sb, a)
	return sb.String()
}

// join writes a's elements into sb, nested arrays into the same builder (each level building
// its own string copied them once per level: quadratic for a deeply nested array).
func join(sb *strings.Builder, a []any) {
	for i, e := range a {
		if i > 0 {
			sb.WriteByte(',')
		}
		if vr, ok := e.(Valuer); ok {
			e = vr.JSValue()
		}
		switch t := e.(type) {
		case nil, Undefined:
		case []any:
			join(sb, t)
		default:
			sb.WriteString(String(e))
		}
	}
}

// FormatNumber is Number.prototype.toString (String of a number).
func FormatNumber(f float64) string {
	if f >= 0 && f < 1e9 && f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10) // the common case, without a float conversion
	}
	var b [32]byte
	return string(AppendNumber(b[:0], f))
}

// AppendNumber appends f as Number.prototype.toString formats it.
func AppendNumber(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0') // -0 too
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		if a < 1<<53 && f == math.Trunc(f) {
			// An integer (a status, a length, milliseconds): its digits, which is what the
			// shortest form is below 2^53, without AppendFloat's search for it.
			return strconv.AppendInt(dst, int64(f), 10)
		}
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes e+07 / e-07; JavaScript writes e+7 / e-7.
	e := strings.LastIndexByte(string(dst[start:]), 'e') + start
	if e+2 < len(dst) && dst[e+2] == '0' {
		dst = append(dst[:e+2], dst[e+3:]...)
	}
	return dst
}

// Number is JavaScript's ToNumber (Number(v)); an object converts through its String.
func Number(v any) float64 {
	switch t := v.(type) {
	case nil:
		return 0
	case Undefined:
		return math.NaN()
	case bool:
		if t {
			return 1
		}
		return 0
	case float64:
		return t
	case string:
		return stringToNumber(t)
	case Valuer:
		return Number(t.JSValue())
	}
	return stringToNumber(String(v))
}

func stringToNumber(s string) float64 {
	s = TrimSpace(s)
	if s == "" {
		return 0
	}
	// ParseFloat takes what JavaScript does not: "inf", "nan", hex floats, underscores.
	if f, err := strconv.ParseFloat(s, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && !strings.ContainsAny(s, "_xXpPnN") {
		return f // out of range: ±Infinity or 0, as JavaScript
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
		if base != 0 {
			if n, err := strconv.ParseUint(s[2:], base, 64); err == nil && !strings.Contains(s, "_") {
				return float64(n)
			}
		}
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	return math.NaN()
}

// ParseInt is parseInt(s) (radix 10, or 16 after 0x) for the integers int64 holds; ok is false
// where parseInt gives NaN.
func ParseInt(s string) (n int64, ok bool) {
	s = TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base, digit := 10, isDigit
	if len(s) >= 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		base, digit, s = 16, isHexDigit, s[2:]
	}
	end := 0
	for end < len(s) && digit(s[end]) {
		end++
	}
	if end == 0 {
		return 0, false
	}
	u, err := strconv.ParseUint(s[:end], base, 63)
	if neg {
		return -int64(u), err == nil
	}
	return int64(u), err == nil
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// TrimSpace is String.prototype.trim: it removes JavaScript's white space and line terminators.
func TrimSpace(s string) string {
	if s == "" || (s[0] > ' ' && s[0] < 0x80 && s[len(s)-1] > ' ' && s[len(s)-1] < 0x80) {
		return s
	}
	return strings.TrimFunc(s, IsSpace)
}

// IsSpace reports whether r is JavaScript white space or a line terminator (what trim removes).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// ArrayIndex parses a canonical array index ("0", "17"; not "01", "-1", "4294967295").
func ArrayIndex(k string) (int, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n >= math.MaxUint32 {
		return 0, false
	}
	return n, true
}
