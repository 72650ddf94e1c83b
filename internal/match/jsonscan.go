package match

// scanJSONPath finds the value a names-only JSONPath ($.a.b, see selector.jpKeys) selects in
// the JSON text s without building the document: it checks that s is one JSON object and
// returns the span of the selected value. Parsing a whole body into maps costs most of a
// JSONPath predicate, while the selection reads one value.
//
// The result is scanFound (the value is s[start:end]), scanMissing (s is a JSON object
// without the path) or scanUnsure, which leaves s to the full parse: s is not plainly an
// object of standard JSON, a string has an escape, a number has an exponent or more than 15
// digits (so every number converts exactly, never overflows), the nesting is deep, or an
// object on the path names the key twice (JSON.parse keeps the last, and lowercased keys
// that collide keep the last in JavaScript's key order). Everything scanFound and
// scanMissing accept, the full parse accepts and selects alike (FuzzScanJSONPath).
//
// With keyLower, object keys are compared as their lowercase (keys holds lowercase names).
func scanJSONPath(s string, keys []string, keyLower bool) (start, end int, res scanResult) {
	sc := jsonScanner{s: s, keys: keys, keyLower: keyLower}
	sc.ws()
	if sc.i >= len(s) || s[sc.i] != '{' {
		return 0, 0, scanUnsure
	}
	if !sc.value(0, true) {
		return 0, 0, scanUnsure
	}
	sc.ws()
	if sc.i != len(s) {
		return 0, 0, scanUnsure
	}
	if !sc.found {
		return 0, 0, scanMissing
	}
	return sc.start, sc.end, scanFound
}

type scanResult uint8

const (
	scanUnsure scanResult = iota
	scanMissing
	scanFound
)

// maxScanDepth bounds the nesting scanJSONPath follows (the recursion of value).
const maxScanDepth = 64

type jsonScanner struct {
	s        string
	i        int
	keys     []string
	keyLower bool

	found      bool
	start, end int
}

func (sc *jsonScanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value scans one value at sc.i. level is how many keys lead to it; onPath says whether they
// are keys[:level]. It reports false for anything scanJSONPath is unsure of.
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
		if !sc.value(level+1, next) {
			return false
		}
		sc.ws()
		if sc.i >= len(sc.s) {
			return false
		}
		switch sc.s[sc.i] {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return true
		default:
			return false
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
		sc.ws()
		if sc.i >= len(sc.s) {
			return false
		}
		switch sc.s[sc.i] {
		case ',':
			sc.i++
		case ']':
			sc.i++
			return true
		default:
			return false
		}
	}
}

// keyIs reports whether the object key k is name, lowercased first with keyLower.
func (sc *jsonScanner) keyIs(k, name string) bool {
	if !sc.keyLower {
		return k == name
	}
	if len(k) != len(name) {
		for i := 0; i < len(k); i++ {
			if k[i] >= 0x80 {
				return jsLower(k) == name // non-ASCII lowercasing may change the length
			}
		}
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 0x80 {
			return jsLower(k) == name
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// str scans a string without escapes and returns its content.
func (sc *jsonScanner) str() (string, bool) {
	sc.i++ // "
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return sc.s[start : sc.i-1], true
		case c == '\\' || c < 0x20:
			return "", false
		}
		sc.i++
	}
	return "", false
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)? with at most 15 digits.
func (sc *jsonScanner) number() bool {
	if sc.s[sc.i] == '-' {
		sc.i++
	}
	digits := 0
	intStart := sc.i
	for sc.i < len(sc.s) && '0' <= sc.s[sc.i] && sc.s[sc.i] <= '9' {
		sc.i++
	}
	n := sc.i - intStart
	if n == 0 || (n > 1 && sc.s[intStart] == '0') {
		return false
	}
	digits += n
	if sc.i < len(sc.s) && sc.s[sc.i] == '.' {
		sc.i++
		fracStart := sc.i
		for sc.i < len(sc.s) && '0' <= sc.s[sc.i] && sc.s[sc.i] <= '9' {
			sc.i++
		}
		if sc.i == fracStart {
			return false
		}
		digits += sc.i - fracStart
	}
	if sc.i < len(sc.s) && (sc.s[sc.i] == 'e' || sc.s[sc.i] == 'E') {
		return false
	}
	return digits <= 15
}

func (sc *jsonScanner) literal(word string) bool {
	if len(sc.s)-sc.i >= len(word) && sc.s[sc.i:sc.i+len(word)] == word {
		sc.i += len(word)
		return true
	}
	return false
}
