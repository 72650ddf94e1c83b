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
	sc := scanner{keys: keys, keyLower: keyLower}
	if !sc.run(s) {
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
	sc := scanner{fields: names, spans: spans, keyLower: keyLower}
	for i := range spans {
		spans[i] = [2]int{-1, -1}
	}
	return sc.run(s)
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

// maxScanDepth bounds the nesting Path follows: a value deeper than maxScanDepth keys and
// array elements leaves the text to the parse. (The open containers' kinds are the bits of
// one uint64, so the bound is at most 64.)
const maxScanDepth = 64

type scanner struct {
	keys     []string
	keyLower bool

	found      bool
	start, end int

	// fields mode (Fields): the top-level names wanted and where their values are; field is
	// the one whose value is being read.
	fields []string
	spans  [][2]int
	field  int
}

// run checks that s is one JSON object Path reads plainly (see Path), and notes the span of
// the value keys selects (found, start, end) or of each of fields (spans).
//
// It is one loop over the text, without recursion: a value is read at value, what follows
// a value at ended, an object's member name at member. The open containers are a stack of
// bits (arrays: bit L is set when the container at level L is an array), and the path is
// followed by one number: the values at hand at levels 0 to on are on the path (the path's
// value when its level is len(keys)). Fields reads its names as paths of one key.
func (sc *scanner) run(s string) bool {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	nkeys := len(sc.keys)
	if sc.fields != nil {
		nkeys = 1
	} else if nkeys == 0 {
		sc.start = i // the path of no keys selects the object
	}
	var (
		arrays uint64 // bit L: the open container at level L is an array
		seen   uint64 // bit L: the path's object at level L had its key
		level  int    // the level of the value at hand: how many keys and indexes lead to it
		on     int    // the values at hand at levels 0 to on are on the path
	)

value: // a value at s[i] (i < len(s), no white space) at level
	// (No case below calls a function, nor does member for Path: around a call the loop would
	// keep its state in memory. A shift by level is masked: levels stay below 64, and the
	// mask spares the checks of a shift by a signed or large count.)
	switch c := s[i]; {
	case c == '"':
		j, ok := scanString(s, i)
		if !ok {
			return false
		}
		i = j
	case '0' <= c && c <= '9' || c == '-':
		// -?(0|[1-9][0-9]*)(\.[0-9]+)? of at most 15 digits (no exponent): every number
		// read converts exactly (see Path).
		j := i
		if c == '-' {
			j++
		}
		int0 := j
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		digits := j - int0
		if digits == 0 || digits > 1 && s[int0] == '0' {
			return false
		}
		if j < len(s) && s[j] == '.' {
			j++
			frac0 := j
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			if j == frac0 {
				return false
			}
			digits += j - frac0
		}
		if digits > 15 || j < len(s) && s[j]|0x20 == 'e' {
			return false
		}
		i = j
	case c == '{' || c == '[':
		j := skipWS(s, i+1)
		if j >= len(s) {
			return false
		}
		if s[j] == c+2 { // '{'+2 is '}', '['+2 is ']': an empty container
			i = j
			goto closed
		}
		if level >= maxScanDepth {
			return false // its members would be deeper than the bound
		}
		i = j
		if c == '[' {
			arrays |= 1 << (level & 63)
			level++
			goto value // (an element is never on the path: names only)
		}
		arrays &^= 1 << (level & 63)
		seen &^= 1 << (level & 63)
		level++
		goto member
	case c == 't':
		if len(s)-i < 4 || s[i+1] != 'r' || s[i+2] != 'u' || s[i+3] != 'e' {
			return false
		}
		i += 4
	case c == 'f':
		if len(s)-i < 5 || s[i+1] != 'a' || s[i+2] != 'l' || s[i+3] != 's' || s[i+4] != 'e' {
			return false
		}
		i += 5
	case c == 'n':
		if len(s)-i < 4 || s[i+1] != 'u' || s[i+2] != 'l' || s[i+3] != 'l' {
			return false
		}
		i += 4
	default:
		return false
	}
	// a scalar: it started at the previous i
	goto ended

closed: // the container at level ends at s[i]
	i++

ended: // the value at level ends at i
	if on == level {
		if level == nkeys {
			sc.foundAt(i)
		}
		on--
	}
	if level == 0 {
		return skipWS(s, i) == len(s)
	}
	if i = skipWS(s, i); i >= len(s) {
		return false
	}
	level--
	if arrays&(1<<(level&63)) != 0 {
		switch s[i] {
		case ',':
			if i = skipWS(s, i+1); i >= len(s) {
				return false
			}
			level++
			goto value
		case ']':
			goto closed
		}
		return false
	}
	switch s[i] {
	case ',':
		i = skipWS(s, i+1)
		level++
		goto member
	case '}':
		goto closed
	}
	return false

member: // an object's member name at s[i] (the object is at level-1; i may be len(s))
	if i >= len(s) || s[i] != '"' {
		return false
	}
	{
		end, ok := scanString(s, i)
		if !ok {
			return false
		}
		k := s[i+1 : end-1]
		if i = skipWS(s, end); i >= len(s) || s[i] != ':' {
			return false
		}
		if i = skipWS(s, i+1); i >= len(s) {
			return false
		}
		if obj := level - 1; on == obj && obj < nkeys {
			if sc.fields == nil && !sc.keyLower {
				// Path's exact names, compared here (see value); keyLower's and Fields'
				// below.
				name := sc.keys[obj]
				if len(k) != len(name) {
					goto value
				}
				for j := 0; j < len(k); j++ {
					if k[j] != name[j] {
						goto value
					}
				}
				if seen&(1<<(obj&63)) != 0 {
					return false // a repeated key: the full parse decides which one counts
				}
				seen |= 1 << (obj & 63)
			} else if sc.fields != nil {
				j := sc.fieldIndex(k)
				if j < 0 {
					goto value
				}
				if sc.spans[j][0] >= 0 {
					return false // repeated
				}
				sc.field = j
			} else if !sc.keyIs(k, sc.keys[obj]) {
				goto value
			} else if seen&(1<<(obj&63)) != 0 {
				return false // a repeated key: the full parse decides which one counts
			} else {
				seen |= 1 << (obj & 63)
			}
			on = level
			if level == nkeys {
				sc.start = i
			}
		}
	}
	goto value
}

// foundAt notes that the path's value, which started at sc.start, ends at end.
func (sc *scanner) foundAt(end int) {
	if sc.fields != nil {
		sc.spans[sc.field] = [2]int{sc.start, end}
		return
	}
	sc.found, sc.end = true, end
}

// fieldIndex returns the index of the top-level key k in sc.fields, or -1.
func (sc *scanner) fieldIndex(k string) int {
	for j, name := range sc.fields {
		if sc.keyIs(k, name) {
			return j
		}
	}
	return -1
}

// skipWS returns the index of the first byte of s at or after i that is no JSON white space.
func skipWS(s string, i int) int {
	// (Most text is compact: one comparison tells a byte that is no white space.)
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// keyIs reports whether the object key k is name, lowercased first with keyLower.
func (sc *scanner) keyIs(k, name string) bool {
	if !sc.keyLower {
		return k == name
	}
	return jsvalue.EqualLower(k, name)
}

// inString is true for the bytes a string without escapes continues with: none of '"', '\\'
// and the control characters.
var inString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString scans the string at s[i] (a '"') without escapes or control characters, and
// returns the index after its closing quote.
func scanString(s string, i int) (int, bool) {
	j := i + 1
	for j < len(s) && inString[s[j]] {
		j++
	}
	if j < len(s) && s[j] == '"' {
		return j + 1, true
	}
	return 0, false
}
