// Package jsonscan reads one value of a JSON object from its text without building the
// document, for a JSONPath of names ($.a.b): the jsonpath predicates (internal/match) and the
// templates' jsonPath helper (internal/hbs) read it before, or instead of, a full parse.
package jsonscan

import "github.com/mockd/mockd/internal/jsvalue"

// Path finds the value a names-only JSONPath ($.a.b, see match's selector.jpKeys) selects in
// the JSON text s without building the document: it checks that s is one JSON object and
// returns the span of the selected value. Parsing a whole body into maps costs most of a
// JSONPath predicate, while the selection reads one value.
//
// The result is Found (the value is s[start:end]), Missing (s is a JSON object
// without the path) or Unsure, which leaves s to the full parse: s is not plainly an
// object of standard JSON, a string has an escape, a number has an exponent or more than 15
// digits (so every number converts exactly, never overflows), the nesting is deep, or an
// object on the path names the key twice (JSON.parse keeps the last, and lowercased keys
// that collide keep the last in JavaScript's key order). Everything Found and
// Missing accept, the full parse accepts and selects alike (FuzzScanJSONPath).
//
// With keyLower, object keys are compared as their lowercase (keys holds lowercase names).
func Path(s string, keys []string, keyLower bool) (start, end int, res Result) {
	sc := jsonScanner{s: s, keys: keys, keyLower: keyLower}
	sc.ws()
	if sc.i >= len(s) || s[sc.i] != '{' {
		return 0, 0, Unsure
	}
	if !sc.value(0, true) {
		return 0, 0, Unsure
	}
	sc.ws()
	if sc.i != len(s) {
		return 0, 0, Unsure
	}
	if !sc.found {
		return 0, 0, Missing
	}
	return sc.start, sc.end, Found
}

// Fields is Path for several names of the top-level object at once: spans[i]
// receives the span of names[i]'s value, or {-1, -1} when the object has no such key. It
// reports false where Path would be unsure (a name repeated counts as unsure too).
func Fields(s string, names []string, keyLower bool, spans [][2]int) bool {
	sc := jsonScanner{s: s, fields: names, spans: spans, keyLower: keyLower}
	for i := range spans {
		spans[i] = [2]int{-1, -1}
	}
	sc.ws()
	if sc.i >= len(s) || s[sc.i] != '{' || !sc.value(0, false) {
		return false
	}
	sc.ws()
	return sc.i == len(s)
}

// Result is what a scan found out about a path.
type Result uint8

// The results of a scan: Unsure when the scanner cannot tell (the caller parses the document
// instead), Missing when the path names nothing, Found when it names a value.
const (
	Unsure Result = iota
	Missing
	Found
)

// maxScanDepth bounds the nesting Path follows (the recursion of value).
const maxScanDepth = 64

type jsonScanner struct {
	s        string
	i        int
	keys     []string
	keyLower bool

	found      bool
	start, end int

	// fields mode (Fields): the top-level names wanted and where their values are.
	fields []string
	spans  [][2]int
}

func (sc *jsonScanner) ws() {
	s, i := sc.s, sc.i
	// (Most text is compact: one comparison tells a byte that is no white space.)
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	sc.i = i
}

// value scans one value at sc.i. level is how many keys lead to it; onPath says whether they
// are keys[:level]. It reports false for anything Path is unsure of.
func (sc *jsonScanner) value(level int, onPath bool) bool {
	if level > maxScanDepth || sc.i >= len(sc.s) {
		return false
	}
	start := sc.i
	var ok bool
	switch c := sc.s[sc.i]; {
	case c == '{':
		ok = sc.object(level, onPath)
	case c == '[':
		ok = sc.array(level)
	case c == '"':
		_, ok = sc.str()
	case c == '-' || ('0' <= c && c <= '9'):
		ok = sc.number()
	default:
		ok = sc.literal("true") || sc.literal("false") || sc.literal("null")
	}
	if ok && onPath && level == len(sc.keys) {
		sc.found, sc.start, sc.end = true, start, sc.i
	}
	return ok
}

func (sc *jsonScanner) object(level int, onPath bool) bool {
	sc.i++ // {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
		sc.i++
		return true
	}
	seen := false // keys[level] was a key of this object
	for {
		sc.ws()
		if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
			return false
		}
		k, ok := sc.str()
		if !ok {
			return false
		}
		sc.ws()
		if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
			return false
		}
		sc.i++
		sc.ws()
		next := false
		if onPath && level < len(sc.keys) && sc.keyIs(k, sc.keys[level]) {
			if seen {
				return false // a repeated key: the full parse decides which one counts
			}
			seen, next = true, true
		}
		field := -1
		if level == 0 && sc.fields != nil {
			for j, name := range sc.fields {
				if sc.keyIs(k, name) {
					if sc.spans[j][0] >= 0 {
						return false // repeated
					}
					field = j
					break
				}
			}
		}
		valStart := sc.i
		if !sc.value(level+1, next) {
			return false
		}
		if field >= 0 {
			sc.spans[field] = [2]int{valStart, sc.i}
		}
		if more, ok := sc.next('}'); !more {
			return ok
		}
	}
}

func (sc *jsonScanner) array(level int) bool {
	sc.i++ // [
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == ']' {
		sc.i++
		return true
	}
	for {
		sc.ws()
		if !sc.value(level+1, false) { // names only: nothing inside an array is selected
			return false
		}
		if more, ok := sc.next(']'); !more {
			return ok
		}
	}
}

// next reads what follows a member or element: a comma (more follow) or closing, which ends the
// object or array well (ok); anything else ends it badly.
func (sc *jsonScanner) next(closing byte) (more, ok bool) {
	sc.ws()
	if sc.i >= len(sc.s) {
		return false, false
	}
	switch sc.s[sc.i] {
	case ',':
		sc.i++
		return true, true
	case closing:
		sc.i++
		return false, true
	}
	return false, false
}

// keyIs reports whether the object key k is name, lowercased first with keyLower.
func (sc *jsonScanner) keyIs(k, name string) bool {
	if !sc.keyLower {
		return k == name
	}
	return jsvalue.EqualLower(k, name)
}

// str scans a string without escapes and returns its content.
func (sc *jsonScanner) str() (string, bool) {
	s := sc.s
	start := sc.i + 1 // after "
	for i := start; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			sc.i = i + 1
			return s[start:i], true
		}
		if c == '\\' || c < 0x20 {
			return "", false
		}
	}
	return "", false
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)? with at most 15 digits.
func (sc *jsonScanner) number() bool {
	s, i := sc.s, sc.i
	if s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	digits := i - intStart
	if digits == 0 || (digits > 1 && s[intStart] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return false
		}
		digits += i - fracStart
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		return false
	}
	sc.i = i
	return digits <= 15
}

func (sc *jsonScanner) literal(word string) bool {
	if len(sc.s)-sc.i >= len(word) && sc.s[sc.i:sc.i+len(word)] == word {
		sc.i += len(word)
		return true
	}
	return false
}
