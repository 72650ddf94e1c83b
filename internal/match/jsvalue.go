package match

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
)

// The actual side of a comparison is a JavaScript value: undefined
// (undefinedT), null (nil), bool, float64, string, []any, map[string]any (a
// parsed JSON object) or one of the request views (*reqObj, *kvObj). The
// reference evaluator (reference.go) uses *config.Object for objects.
type undefinedT struct{}

var undef any = undefinedT{}

func isUndef(v any) bool { _, ok := v.(undefinedT); return ok }

func isArray(v any) bool { _, ok := v.([]any); return ok }

// isObject is helpers.isObject: typeof 'object' and not null (arrays too).
func isObject(v any) bool {
	switch t := v.(type) {
	case []any, map[string]any, *reqObj, *kvObj, *eobj, *earr:
		return true
	case *config.Object:
		return t != nil
	}
	return false
}

// truthy is JavaScript's ToBoolean.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil, undefinedT:
		return false
	case bool:
		return t
	case float64:
		return t != 0 && !math.IsNaN(t)
	case string:
		return t != ""
	case *eleaf:
		return truthy(t.v)
	}
	return true
}

// appendJSNumber appends f as Number.prototype.toString formats it.
func appendJSNumber(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	a := math.Abs(f)
	if a >= 1e21 || a < 1e-6 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		// Go writes e+07 / e-07; JavaScript writes e+7 / e-7.
		e := strings.LastIndexByte(string(dst[start:]), 'e') + start
		if e+2 < len(dst) && dst[e+2] == '0' {
			dst = append(dst[:e+2], dst[e+3:]...)
		}
		return dst
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

func jsNumber(f float64) string {
	if f >= 0 && f < 1e9 && f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	var b [32]byte
	return string(appendJSNumber(b[:0], f))
}

// jsString is String(v).
func jsString(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case undefinedT:
		return "undefined"
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		return jsNumber(t)
	case string:
		return t
	case []any:
		return jsJoin(t)
	case *eleaf:
		return t.str()
	case *earr:
		return jsJoin(t.elems)
	}
	return "[object Object]"
}

// jsJoin is Array.prototype.join(",") (and so Array#toString).
func jsJoin(a []any) string {
	var sb strings.Builder
	for i, e := range a {
		if i > 0 {
			sb.WriteByte(',')
		}
		switch e.(type) {
		case nil, undefinedT:
		default:
			sb.WriteString(jsString(e))
		}
	}
	return sb.String()
}

// jsLower is String.prototype.toLowerCase.
func jsLower(s string) string {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			break
		}
	}
	if i == len(s) {
		return s
	}
	ascii := true
	for j := i; j < len(s); j++ {
		if s[j] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := make([]byte, len(s))
		copy(b, s[:i])
		for j := i; j < len(s); j++ {
			c := s[j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[j] = c
		}
		return unsafe.String(unsafe.SliceData(b), len(b)) // b is not changed again
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for j, r := range s {
		switch r {
		case 0x130: // İ lowercases to i followed by combining dot above
			sb.WriteString("i\u0307")
		case 0x3A3: // Σ: final sigma rule
			if finalSigma(s, j) {
				sb.WriteRune(0x3C2)
			} else {
				sb.WriteRune(0x3C3)
			}
		default:
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}

func finalSigma(s string, at int) bool {
	before := false
	for k := at; k > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:k])
		k -= n
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\'' || r == 0xAD {
			continue
		}
		before = unicode.IsLetter(r)
		break
	}
	if !before {
		return false
	}
	for _, r := range s[at+2:] {
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\'' || r == 0xAD {
			continue
		}
		return !unicode.IsLetter(r)
	}
	return true
}

// len16 is a string's length in UTF-16 code units (JavaScript length).
func len16(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// charAt16 returns the UTF-16 code unit at index i as a string (a lone
// surrogate half is returned as U+FFFD), or false when out of range.
func charAt16(s string, i int) (string, bool) {
	n := 0
	for k, r := range s {
		if r >= 0x10000 {
			if n == i || n+1 == i {
				return "\uFFFD", true
			}
			n += 2
			continue
		}
		if n == i {
			return s[k : k+utf8.RuneLen(r)], true
		}
		n++
	}
	return "", false
}

// elementOf is v[k] for an array or a string: its length, or the element (a string's UTF-16 unit)
// at an index; undefined otherwise.
func elementOf(v any, k string) any {
	switch t := v.(type) {
	case []any:
		if k == "length" {
			return float64(len(t))
		}
		if i, ok := arrayIndex(k); ok && i < len(t) {
			return t[i]
		}
	case string:
		if k == "length" {
			return float64(len16(t))
		}
		if i, ok := arrayIndex(k); ok {
			if ch, ok := charAt16(t, i); ok {
				return ch
			}
		}
	}
	return undef
}

// arrayIndex parses a canonical array index ("0", "17"; not "01", "-1").
func arrayIndex(k string) (int, bool) {
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

// jsKeyOrder sorts object keys as Object.keys orders them when insertion order
// is unknown: array-index keys ascending first, then the others (sorted).
func jsKeyOrder(keys []string) {
	sort.Slice(keys, func(i, j int) bool {
		a, aok := arrayIndex(keys[i])
		b, bok := arrayIndex(keys[j])
		switch {
		case aok && bok:
			return a < b
		case aok != bok:
			return aok
		}
		return keys[i] < keys[j]
	})
}

// less16 compares strings by UTF-16 code units, as JavaScript's < does.
func less16(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
				return a[i] < b[i]
			}
			ra, _ := utf8.DecodeRuneInString(a[i:])
			rb, _ := utf8.DecodeRuneInString(b[i:])
			return unit16(ra) < unit16(rb)
		}
	}
	return len(a) < len(b)
}

func unit16(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// jsLess is the abstract relational comparison a < b for the values
// predicates.js sorts.
func jsLess(a, b any) bool {
	pa, pb := toPrimitive(a), toPrimitive(b)
	sa, aok := pa.(string)
	sb, bok := pb.(string)
	if aok && bok {
		return less16(sa, sb)
	}
	na, nb := toNumber(pa), toNumber(pb)
	return na < nb
}

func toPrimitive(v any) any {
	switch v.(type) {
	case nil, undefinedT, bool, float64, string:
		return v
	}
	return jsString(v)
}

func toNumber(v any) float64 {
	switch t := v.(type) {
	case nil:
		return 0
	case bool:
		if t {
			return 1
		}
		return 0
	case float64:
		return t
	case string:
		s := strings.TrimFunc(t, isJSSpace)
		if s == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "_xXpP") {
			return f
		}
		if len(s) > 2 && s[0] == '0' && (s[1]|0x20) == 'x' {
			if n, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
				return float64(n)
			}
		}
		switch s {
		case "Infinity", "+Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
	}
	return math.NaN()
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// sortObjectsLess is predicates.js sortObjects as a strict less: objects
// (arrays included) compare by their stable stringification, anything else
// with JavaScript's <.
func sortObjectsLess(a, b any) bool {
	if isObject(a) && isObject(b) {
		return less16(string(appendCanon(nil, a)), string(appendCanon(nil, b)))
	}
	return jsLess(a, b)
}

// sortJS sorts a copy of a as Array#sort(sortObjects) does (stable, undefined last).
func sortJS(a []any) []any {
	out := make([]any, len(a))
	copy(out, a)
	sort.SliceStable(out, func(i, j int) bool {
		ui, uj := isUndef(out[i]), isUndef(out[j])
		if ui || uj {
			return !ui && uj
		}
		return sortObjectsLess(out[i], out[j])
	})
	return out
}

// strictEquals is ===.
func strictEquals(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case undefinedT:
		return isUndef(b)
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
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case undefinedT:
		return append(dst, "undefined"...)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return append(dst, "null"...)
		}
		return appendJSNumber(dst, t)
	case string:
		return appendQuoted(dst, t)
	case *eleaf:
		return appendCanon(dst, t.v)
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			if isUndef(e) {
				e = nil
			}
			dst = appendCanon(dst, e)
		}
		return append(dst, ']')
	case *earr:
		return appendCanon(dst, t.elems)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k, e := range t {
			if !isUndef(e) {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return less16(keys[i], keys[j]) })
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, k)
			dst = append(dst, ':')
			dst = appendCanon(dst, t[k])
		}
		return append(dst, '}')
	case *eobj:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			m[k] = t.vals[i]
		}
		return appendCanon(dst, m)
	case *config.Object:
		if t == nil {
			return append(dst, "null"...)
		}
		m := make(map[string]any, len(t.Members))
		for _, mem := range t.Members {
			m[mem.Key] = mem.Value
		}
		return appendCanon(dst, m)
	case *kvObj:
		return appendCanon(dst, t.materialize())
	case *reqObj:
		return appendCanon(dst, t.materialize())
	}
	return append(dst, "null"...)
}

func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
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
	return append(dst, '"')
}
