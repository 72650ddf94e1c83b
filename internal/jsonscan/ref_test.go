package jsonscan

// The recursive scanner Path and Fields were before their one loop (session 26), kept as the
// reference FuzzAgainstReference holds them to: the same result and spans for every text.

import "github.com/mockd/mockd/internal/jsvalue"

func refPath(s string, keys []string, keyLower bool) (start, end int, res Result) {
	sc := refScanner{s: s, keys: keys, keyLower: keyLower}
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
func refFields(s string, names []string, keyLower bool, spans [][2]int) bool {
	sc := refScanner{s: s, fields: names, spans: spans, keyLower: keyLower}
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

type refScanner struct {
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

func (sc *refScanner) ws() { sc.i = refSkipWS(sc.s, sc.i) }

// The scanner keeps its place in locals and moves it with functions of the text and an index
// (scanString, refScanNumber, refScanLiteral), so that a scalar costs no call of a method that reads
// and writes sc.i: an array's scalars are read in its own loop, without value.

// value scans one value at sc.i. level is how many keys lead to it; onPath says whether they
// are keys[:level]. It reports false for anything Path is unsure of.
func (sc *refScanner) value(level int, onPath bool) bool {
	s, i := sc.s, sc.i
	if level > maxScanDepth || i >= len(s) {
		return false
	}
	var end int
	var ok bool
	switch c := s[i]; {
	case c == '{':
		ok, end = sc.object(level, onPath), sc.i
	case c == '[':
		ok, end = sc.array(level), sc.i
	case c == '"':
		end, ok = refScanString(s, i)
	case c == '-' || ('0' <= c && c <= '9'):
		end, ok = refScanNumber(s, i)
	default:
		end, ok = refScanLiteral(s, i)
	}
	if !ok {
		return false
	}
	sc.i = end
	if onPath && level == len(sc.keys) {
		sc.found, sc.start, sc.end = true, i, end
	}
	return true
}

func (sc *refScanner) object(level int, onPath bool) bool {
	s := sc.s
	i := refSkipWS(s, sc.i+1) // after {
	if i < len(s) && s[i] == '}' {
		sc.i = i + 1
		return true
	}
	seen := false // keys[level] was a key of this object
	for {
		i = refSkipWS(s, i)
		if i >= len(s) || s[i] != '"' {
			return false
		}
		end, ok := refScanString(s, i)
		if !ok {
			return false
		}
		k := s[i+1 : end-1]
		i = refSkipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = refSkipWS(s, i+1)
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
		sc.i = i
		if !sc.value(level+1, next) {
			return false
		}
		if field >= 0 {
			sc.spans[field] = [2]int{i, sc.i}
		}
		i = refSkipWS(s, sc.i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			sc.i = i + 1
			return true
		default:
			return false
		}
	}
}

func (sc *refScanner) array(level int) bool {
	s := sc.s
	i := refSkipWS(s, sc.i+1) // after [
	if i < len(s) && s[i] == ']' {
		sc.i = i + 1
		return true
	}
	if level+1 > maxScanDepth {
		return false // (value's bound on the elements)
	}
	for {
		i = refSkipWS(s, i)
		if i >= len(s) {
			return false
		}
		// Names only: nothing inside an array is selected (value(level+1, false)).
		var ok bool
		switch c := s[i]; {
		case c == '"':
			i, ok = refScanString(s, i)
		case c == '-' || ('0' <= c && c <= '9'):
			i, ok = refScanNumber(s, i)
		case c == '{' || c == '[':
			sc.i = i
			ok, i = sc.value(level+1, false), sc.i
		default:
			i, ok = refScanLiteral(s, i)
		}
		if !ok {
			return false
		}
		i = refSkipWS(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i++
		case ']':
			sc.i = i + 1
			return true
		default:
			return false
		}
	}
}

// keyIs reports whether the object key k is name, lowercased first with keyLower.
func (sc *refScanner) keyIs(k, name string) bool {
	if !sc.keyLower {
		return k == name
	}
	return jsvalue.EqualLower(k, name)
}

// scanString scans the string at s[i] (a '"') without escapes or control characters, and
// returns the index after its closing quote.
func refScanString(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		if c == '"' {
			return j + 1, true
		}
		if c == '\\' || c < 0x20 {
			return 0, false
		}
	}
	return 0, false
}

// The scanner's helpers as they were when it was compared with this reference (so a change
// to them is compared too).

func refSkipWS(s string, i int) int {
	// (Most text is compact: one comparison tells a byte that is no white space.)
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func refScanNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	digits := i - intStart
	if digits == 0 || (digits > 1 && s[intStart] == '0') {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return 0, false
		}
		digits += i - fracStart
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		return 0, false
	}
	return i, digits <= 15
}

func refScanLiteral(s string, i int) (int, bool) {
	var word string
	switch s[i] {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	case 'n':
		word = "null"
	default:
		return 0, false
	}
	if len(s)-i >= len(word) && s[i:i+len(word)] == word {
		return i + len(word), true
	}
	return 0, false
}
