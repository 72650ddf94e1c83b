package match

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"

	"github.com/mockd/mockd/internal/request"
)

// JavaScript \s: white space and line terminators.
const jsSpaceClass = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// translateRegex turns a JavaScript regular expression source (no u flag)
// into RE2 syntax with the same meaning, or fails for constructs RE2 cannot
// express (backreferences, lookaround).
func translateRegex(src string, ignoreCase bool) (string, error) {
	return translate(src, ignoreCase, false, false)
}

// TranslateRegex is translateRegex for the other places Mountebank runs a JavaScript regular
// expression (a copy or lookup behavior's regex, whose options may also set the m flag: ^ and $
// then match at line ends, \n only here).
func TranslateRegex(src string, ignoreCase, multiline bool) (string, error) {
	return translate(src, ignoreCase, multiline, true)
}

// translate writes src in RE2's syntax. With exactASCII, the ASCII letters k and s outside a
// class match their other ASCII case only, as in JavaScript; without it they keep RE2's
// folding, which also matches the Kelvin sign and the long s, so that a predicate's literal
// prefix stays a literal (its exact twin runs on input holding either, see jsRegexp.exact).
func translate(src string, ignoreCase, multiline, exactASCII bool) (string, error) {
	var b strings.Builder
	if ignoreCase {
		b.WriteString("(?i)")
	}
	// JavaScript's $ (no m flag) matches only at the end of input, like \z;
	// '.' excludes all four line terminators.
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 >= len(src) {
				return "", fmt.Errorf("\\ at end of pattern")
			}
			i++
			n, err := translateEscape(&b, src, i, inClass)
			if err != nil {
				return "", err
			}
			i = n
		case inClass:
			switch c {
			case ']':
				inClass = false
				b.WriteByte(']')
			case '[':
				b.WriteString(`\[`)
			default:
				b.WriteByte(c)
			}
		case c == '[':
			// [] matches nothing, [^] matches anything.
			if strings.HasPrefix(src[i:], "[]") {
				b.WriteString(`[^\x00-\x{10FFFF}]`)
				i++
				continue
			}
			if strings.HasPrefix(src[i:], "[^]") {
				b.WriteString(`[\x00-\x{10FFFF}]`)
				i += 2
				continue
			}
			inClass = true
			b.WriteByte('[')
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			// A leading ']' is not special in RE2 but closes the class in JavaScript: [] handled above.
		case c == '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case c == '$' && multiline:
			b.WriteString(`(?m:$)`)
		case c == '$':
			b.WriteString(`\z`)
		case c == '^' && multiline:
			b.WriteString(`(?m:^)`)
		case c == '(':
			if strings.HasPrefix(src[i:], "(?=") || strings.HasPrefix(src[i:], "(?!") ||
				strings.HasPrefix(src[i:], "(?<=") || strings.HasPrefix(src[i:], "(?<!") {
				return "", errUnsupported("lookaround assertions")
			}
			if strings.HasPrefix(src[i:], "(?<") {
				b.WriteString("(?P<")
				i += 2
				if j := strings.IndexByte(src[i:], '>'); j > 0 {
					b.WriteString(src[i+1 : i+j]) // the name, as written
					i += j - 1
				}
				continue
			}
			b.WriteByte('(')
		case c == '{':
			// A '{' that does not start a valid quantifier is a literal in JavaScript.
			if j := quantifierEnd(src, i); j > 0 {
				b.WriteString(src[i : j+1])
				i = j
			} else {
				b.WriteString(`\{`)
			}
		case c == '}':
			b.WriteString(`\}`)
		case c == ']':
			b.WriteString(`\]`)
		case ignoreCase && exactASCII && (c|0x20 == 'k' || c|0x20 == 's'):
			b.WriteString("(?-i:[" + string(c&^0x20) + string(c|0x20) + "])")
		case ignoreCase && c >= utf8.RuneSelf:
			// A character whose case-insensitive matches differ from RE2's folding (jsFold;
			// characters past the BMP never match another case in JavaScript without u).
			r, size := utf8.DecodeRuneInString(src[i:])
			if set, ok := jsFold[r]; ok {
				b.WriteString("(?-i:[" + set + "])")
			} else if r > 0xFFFF && unicode.SimpleFold(r) != r {
				b.WriteString("(?-i:" + string(r) + ")")
			} else {
				b.WriteString(src[i : i+size])
			}
			i += size - 1
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("missing terminating ] for character class")
	}
	return b.String(), nil
}

// quantifierEnd returns the index of the '}' closing a {n}, {n,} or {n,m}
// quantifier starting at src[i], or -1.
func quantifierEnd(src string, i int) int {
	j := i + 1
	d := 0
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
		d++
	}
	if d == 0 || j >= len(src) {
		return -1
	}
	if src[j] == '}' {
		return j
	}
	if src[j] != ',' {
		return -1
	}
	j++
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	if j < len(src) && src[j] == '}' {
		return j
	}
	return -1
}

func translateEscape(b *strings.Builder, src string, i int, inClass bool) (int, error) {
	e := src[i]
	switch e {
	case 'd', 'D', 'w', 'W':
		b.WriteByte('\\')
		b.WriteByte(e)
	case 's':
		if inClass {
			b.WriteString(jsSpaceClass)
		} else {
			b.WriteString("[" + jsSpaceClass + "]")
		}
	case 'S':
		if inClass {
			// RE2 cannot negate a set inside a class; this approximates [^\s] members.
			b.WriteString(`\S`)
		} else {
			b.WriteString("[^" + jsSpaceClass + "]")
		}
	case 'b':
		if inClass {
			b.WriteString(`\x08`)
		} else {
			b.WriteString(`\b`)
		}
	case 'B':
		if inClass {
			b.WriteByte('B')
		} else {
			b.WriteString(`\B`)
		}
	case 'n', 'r', 't', 'f':
		b.WriteByte('\\')
		b.WriteByte(e)
	case 'v':
		b.WriteString(`\x0B`)
	case '0':
		if i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9' {
			// Legacy octal escape.
			j := i
			v := 0
			for j < len(src) && j < i+3 && src[j] >= '0' && src[j] <= '7' && v*8+int(src[j]-'0') <= 0377 {
				v = v*8 + int(src[j]-'0')
				j++
			}
			fmt.Fprintf(b, `\x{%x}`, v)
			return j - 1, nil
		}
		b.WriteString(`\x00`)
	case 'c':
		if i+1 < len(src) && isAlpha(src[i+1]) {
			fmt.Fprintf(b, `\x{%x}`, src[i+1]&31)
			return i + 1, nil
		}
		b.WriteString(`\\c`)
	case 'x':
		if i+2 < len(src) && isHex(src[i+1]) && isHex(src[i+2]) {
			b.WriteString(`\x{` + src[i+1:i+3] + `}`)
			return i + 2, nil
		}
		b.WriteByte('x')
	case 'u':
		if i+4 < len(src) && isHex(src[i+1]) && isHex(src[i+2]) && isHex(src[i+3]) && isHex(src[i+4]) {
			b.WriteString(`\x{` + src[i+1:i+5] + `}`)
			return i + 4, nil
		}
		b.WriteByte('u')
	case 'k':
		if strings.Contains(src, "(?<") {
			return 0, errUnsupported("backreferences")
		}
		b.WriteByte('k')
	default:
		switch {
		case e >= '1' && e <= '9':
			// A backreference when it names an existing group; otherwise a
			// legacy octal escape or the digit itself.
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(src[i:j])
			if !inClass && n <= countGroups(src) {
				return 0, errUnsupported("backreferences")
			}
			if e <= '7' {
				v := 0
				k := i
				for k < len(src) && k < i+3 && src[k] >= '0' && src[k] <= '7' && v*8+int(src[k]-'0') <= 0377 {
					v = v*8 + int(src[k]-'0')
					k++
				}
				fmt.Fprintf(b, `\x{%x}`, v)
				return k - 1, nil
			}
			b.WriteByte(e)
		case e < 0x80 && !isAlnum(e):
			// Identity escape of punctuation.
			b.WriteByte('\\')
			b.WriteByte(e)
		case e < 0x80:
			// Identity escape of a letter without special meaning: the letter.
			b.WriteByte(e)
		default:
			// Non-ASCII: copy the whole UTF-8 sequence.
			b.WriteByte(e)
		}
	}
	return i, nil
}

func countGroups(src string) int {
	n := 0
	inClass := false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '(':
			if !strings.HasPrefix(src[i:], "(?") || strings.HasPrefix(src[i:], "(?<") && !strings.HasPrefix(src[i:], "(?<=") && !strings.HasPrefix(src[i:], "(?<!") {
				n++
			}
		}
	}
	return n
}

func isAlnum(c byte) bool { return isAlpha(c) || (c >= '0' && c <= '9') }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'f')
}

// unsupportedError is a valid JavaScript construct RE2 cannot run.
type unsupportedError string

func (e unsupportedError) Error() string {
	return string(e) + " are not supported (mockd runs regular expressions with RE2)"
}

func errUnsupported(what string) error { return unsupportedError(what) }

// regexError is the *Error for a pattern that does not compile: Mountebank
// surfaces JavaScript's SyntaxError without a code; a construct only RE2
// refuses is a "bad data" error of ours.
func regexError(src string, err error) *Error {
	if _, ok := err.(unsupportedError); ok {
		return validationError(fmt.Sprintf("invalid regular expression /%s/: %v", src, err), src)
	}
	var se *syntax.Error
	if errors.As(err, &se) {
		return typeError(fmt.Sprintf("Invalid regular expression: /%s/: %s", src, se.Code))
	}
	return typeError(fmt.Sprintf("Invalid regular expression: /%s/: %v", src, err))
}

type reKey struct {
	src string
	ic  bool
}

var reCache sync.Map // reKey -> *jsRegexp

// reCacheLimit bounds reCache: past it the cache starts over, so the patterns of imposters long
// deleted do not accumulate in a long-running process.
const reCacheLimit = 4096

var reCacheLen atomic.Int64

// MaxRegexLen bounds a pattern's length (predicates', copy's and templates'): RE2 takes about 230 MB to compile a 1 MiB literal (47 MB
// kept), and a 10 MB one posted as a predicate took 7 s and 1.4 GB; '[a-z]' two million times, 34 s
// and 2.1 GB.
const MaxRegexLen = 1 << 20

// reCacheByteLimit bounds the sources the cache holds (see reCacheLimit): 4,096 patterns of the
// longest length would keep hundreds of gigabytes alive, stub patterns of a few dozen
// characters fill a hundredth of it.
const reCacheByteLimit = 4 << 20

var reCacheBytes atomic.Int64

// tooLongError is a pattern past MaxRegexLen.
type tooLongError int

func (e tooLongError) Error() string {
	return fmt.Sprintf("the pattern is %d characters long, more than mockd compiles (%d)", int(e), MaxRegexLen)
}

// jsRegexp is a compiled JavaScript regular expression: RE2 when the pattern translates to it,
// which runs in linear time, and otherwise (lookaround, backreferences, what RE2 refuses) the
// ECMAScript engine goja uses, under a time limit. Anchored at the start, it keeps the literal
// its matches must start with: most stub patterns are (^/api/v2/items/\d+$), and comparing that
// literal first rejects most candidates without running the regexp machine.
type jsRegexp struct {
	re     *regexp.Regexp  // RE2; nil when ecma runs the pattern
	ecma   *regexp2.Regexp // the ECMAScript engine
	key    string          // identifies the pattern and its flags
	ic     bool            // ignores case
	prefix string          // ASCII; "" when the pattern has no anchored literal start
	fold   bool            // prefix compares case-insensitively
	// exact, when not nil, is re with k and s matching only their ASCII cases (re also
	// matches the Kelvin sign and the long s with them, keeping its literal prefix): it runs
	// on input that holds either of those.
	exact *regexp.Regexp
	// src is the JavaScript pattern; unitWise says it can match a character past the BMP
	// otherwise than as a whole (., a negated class or escape, a quantified astral literal,
	// a surrogate escape): on input holding one, units (compiled on first use) runs instead,
	// on the input's UTF-16 code units (see toUnits).
	src      string
	unitWise bool
	// unitsAlways says the pattern names a character past the BMP or a surrogate, which
	// JavaScript reads as code units whatever the input: units runs on every input.
	unitsAlways bool
	units       atomic.Pointer[unitsRegexp]
}

// unitsRegexp is a pattern's RE2 form over UTF-16 code units; re is nil when the pattern cannot
// be read so (it names the private characters the units are written as).
type unitsRegexp struct{ re *regexp.Regexp }

// Surrogate code units are written as private-use characters, which RE2 can match one at a
// time: a high surrogate D800+n as unitHigh+n, a low one DC00+n as unitLow+n.
const (
	unitHigh = 0xE000
	unitLow  = 0xE400
	unitEnd  = 0xE800 // past the last character units are written as
)

// unitsAlways reports whether src names a character past the BMP or a surrogate (\uD800 to
// \uDFFF), which JavaScript (without the u flag) reads as code units.
func unitsAlways(src string) bool {
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c >= 0xF0:
			return true
		case c == '\\' && i+1 < len(src):
			if src[i+1] == 'u' && i+2 < len(src) && src[i+2]|0x20 == 'd' && i+3 < len(src) && src[i+3] >= '8' {
				return true
			}
			i++
		}
	}
	return false
}

// unitWise reports whether JavaScript (without the u flag) can match a character past the BMP
// in src otherwise than as a whole, which RE2, reading characters, does not.
func unitWise(src string) bool {
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '.', c >= 0xF0:
			return true
		case c == '[' && i+1 < len(src) && src[i+1] == '^':
			return true
		case c == '\\' && i+1 < len(src):
			switch d := src[i+1]; d {
			case 'S', 'W', 'D':
				return true
			case 'u':
				if i+2 < len(src) && (src[i+2]|0x20 == 'd') {
					return true
				}
			}
			i++
		}
	}
	return false
}

// unitsSource rewrites a JavaScript pattern for matching on code units: a character past the
// BMP becomes its two surrogates, a surrogate escape its unit, each written as its private
// character's \u escape (a quantifier after an astral character then applies to its low
// surrogate alone, as in JavaScript). ok is false when the pattern names the private
// characters themselves.
func unitsSource(src string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			if src[i+1] == 'u' && i+6 <= len(src) {
				if v, err := strconv.ParseUint(src[i+2:i+6], 16, 32); err == nil {
					switch {
					case v >= 0xD800 && v < 0xDC00:
						fmt.Fprintf(&b, `\u%04X`, unitHigh+v-0xD800)
						i += 6
						continue
					case v >= 0xDC00 && v < 0xE000:
						fmt.Fprintf(&b, `\u%04X`, unitLow+v-0xDC00)
						i += 6
						continue
					case v >= unitHigh && v < unitEnd:
						return "", false
					}
				}
			}
			if src[i+1] < utf8.RuneSelf {
				b.WriteString(src[i : i+2])
				i += 2
				continue
			}
			i++ // an identity escape of a non-ASCII character: the character
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r > 0xFFFF:
			u := r - 0x10000
			fmt.Fprintf(&b, `\u%04X\u%04X`, unitHigh+(u>>10), unitLow+(u&0x3FF))
		case r >= unitHigh && r < unitEnd:
			return "", false
		default:
			b.WriteString(src[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

// toUnits writes s's characters past the BMP as their two surrogates' private characters, and
// a lone surrogate (see appendUnit) as its own; ok is false when s holds those characters itself
// (the units could not be told from them).
func toUnits(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i := 0; i < len(s); {
		if u, ok := loneSurrogate(s, i); ok {
			if u < 0xDC00 {
				b.WriteRune(unitHigh + (u - 0xD800))
			} else {
				b.WriteRune(unitLow + (u - 0xDC00))
			}
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r > 0xFFFF:
			u := r - 0x10000
			b.WriteRune(unitHigh + (u >> 10))
			b.WriteRune(unitLow + (u & 0x3FF))
		case r >= unitHigh && r < unitEnd:
			return "", false
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

// fromUnits undoes toUnits: a high and a low surrogate's private characters in a row become their
// character, and one alone (an except that removed its other half, as JavaScript's replace can)
// the lone surrogate, written as in WTF-8 (ED A0 80 to ED BF BF), which no valid text holds: it
// equals only the same lone surrogate, as in JavaScript.
func fromUnits(s string) string {
	if !hasUnitChars(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	var hi rune = -1 // a high surrogate waiting for its low one
	for _, r := range s {
		switch {
		case r >= unitHigh && r < unitLow:
			if hi >= 0 {
				b = appendUnit(b, hi)
			}
			hi = 0xD800 + (r - unitHigh)
			continue
		case r >= unitLow && r < unitEnd && hi >= 0:
			b = utf8.AppendRune(b, 0x10000+(hi-0xD800)<<10+(r-unitLow))
		case r >= unitLow && r < unitEnd:
			b = appendUnit(b, 0xDC00+(r-unitLow))
		default:
			if hi >= 0 {
				b = appendUnit(b, hi)
			}
			b = utf8.AppendRune(b, r)
		}
		hi = -1
	}
	if hi >= 0 {
		b = appendUnit(b, hi)
	}
	return string(b)
}

// appendUnit appends a lone surrogate u (D800 to DFFF) as WTF-8 writes it: three bytes as UTF-8
// would encode the code point, which Go's and RE2's decoding read as three U+FFFD.
func appendUnit(b []byte, u rune) []byte {
	return append(b, 0xED, byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
}

// loneSurrogate reports whether s holds a lone surrogate written as appendUnit writes it at i.
func loneSurrogate(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// hasAstral reports whether s holds a character past the BMP (a 4-byte UTF-8 sequence) or a
// lone surrogate (see appendUnit): text JavaScript reads otherwise than RE2 does.
func hasAstral(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 || s[i] == 0xED && i+1 < len(s) && s[i+1] >= 0xA0 {
			return true
		}
	}
	return false
}

// utf16Runes is s as JavaScript reads it, one rune per UTF-16 code unit (a character past the
// BMP as its two surrogates, a lone surrogate as itself), for the ECMAScript engine.
func utf16Runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		if u, ok := loneSurrogate(s, i); ok {
			out = append(out, u)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			u := r - 0x10000
			out = append(out, 0xD800+(u>>10), 0xDC00+(u&0x3FF))
		} else {
			out = append(out, r)
		}
		i += size
	}
	return out
}

// fromUTF16Runes undoes utf16Runes: surrogate pairs become their character, a lone surrogate is
// written as appendUnit writes it.
func fromUTF16Runes(rs []rune) string {
	b := make([]byte, 0, len(rs)+8)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r >= 0xD800 && r < 0xDC00 && i+1 < len(rs) && rs[i+1] >= 0xDC00 && rs[i+1] < 0xE000:
			b = utf8.AppendRune(b, 0x10000+(r-0xD800)<<10+(rs[i+1]-0xDC00))
			i++
		case r >= 0xD800 && r < 0xE000:
			b = appendUnit(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// ecmaUnitsSource rewrites a pattern for the ECMAScript engine, which reads characters, to read
// code units as JavaScript does: a character past the BMP (alone or after a backslash, an
// identity escape of its high surrogate) becomes its two surrogates' \u escapes.
func ecmaUnitsSource(src string) string {
	if !unitsAlways(src) {
		return src
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		if src[i] == '\\' && i+1 < len(src) && src[i+1] < utf8.RuneSelf {
			b.WriteString(src[i : i+2])
			i += 2
			continue
		}
		j := i
		if src[i] == '\\' && i+1 < len(src) {
			j++
		}
		r, size := utf8.DecodeRuneInString(src[j:])
		if r > 0xFFFF {
			u := r - 0x10000
			fmt.Fprintf(&b, `\u%04X\u%04X`, 0xD800+(u>>10), 0xDC00+(u&0x3FF))
		} else {
			b.WriteString(src[i : j+size])
		}
		i = j + size
	}
	return b.String()
}

// unitsRE returns the pattern's RE2 form over code units, compiled on first use; nil when the
// pattern names the private characters.
func (r *jsRegexp) unitsRE() *regexp.Regexp {
	u := r.units.Load()
	if u == nil {
		u = &unitsRegexp{}
		if src, ok := unitsSource(r.src); ok {
			if t, err := translateRegex(src, r.ic); err == nil {
				u.re, _ = regexp.Compile(t)
			}
		}
		r.units.Store(u)
	}
	return u.re
}

// unitsMatch runs the pattern on s's code units, for s holding a character past the BMP;
// handled is false when it cannot (the pattern or s names the private characters).
func (r *jsRegexp) unitsMatch(s string) (matched, handled bool) {
	re := r.unitsRE()
	if re == nil {
		return false, false
	}
	if !hasAstral(s) && !hasUnitChars(s) {
		return re.MatchString(s), true // s reads the same as code units
	}
	us, ok := toUnits(s)
	if !ok {
		return false, false
	}
	return re.MatchString(us), true
}

// unitsReplace is ReplaceAllString on s's code units; handled is false when it cannot (the
// pattern or s names the private characters).
func (r *jsRegexp) unitsReplace(s, repl string) (out string, handled bool) {
	re := r.unitsRE()
	if re == nil || hasUnitChars(repl) {
		return "", false
	}
	if !hasAstral(s) && !hasUnitChars(s) {
		return re.ReplaceAllLiteralString(s, repl), true
	}
	us, ok := toUnits(s)
	if !ok {
		return "", false
	}
	return fromUnits(re.ReplaceAllLiteralString(us, repl)), true
}

// hasUnitChars reports whether s holds one of the private characters units are written as
// (U+E000 to U+E7FF: EE 80 80 to EE 9F BF in UTF-8).
func hasUnitChars(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0xEE && s[i+1] < 0xA0 {
			return true
		}
	}
	return false
}

// MatchTimeout bounds one match of a pattern the ECMAScript engine runs: a match that takes
// longer (catastrophic backtracking) counts as no match.
var MatchTimeout = time.Second

// String identifies the pattern and its flags.
func (r *jsRegexp) String() string { return r.key }

// MatchString reports whether s contains a match, checking the anchored literal first.
func (r *jsRegexp) MatchString(s string) bool {
	if p := r.prefix; p != "" {
		if len(s) < len(p) {
			return false
		}
		head := s[:len(p)]
		switch {
		case !r.fold:
			if head != p {
				return false
			}
		case !request.EqualFoldASCII(head, p):
			if isASCII(head) {
				return false
			}
			// Non-ASCII input may fold onto the prefix (K, ſ): let the regexp decide.
		}
	}
	if r.re != nil {
		if r.exact != nil && kelvinOrLongS(s) {
			return r.exact.MatchString(s)
		}
		if r.unitsAlways || r.unitWise && hasAstral(s) {
			if matched, handled := r.unitsMatch(s); handled {
				return matched
			}
		}
		return r.re.MatchString(s)
	}
	if hasAstral(s) {
		ok, err := r.ecma.MatchRunes(utf16Runes(s))
		return ok && err == nil
	}
	ok, err := r.ecma.MatchString(s)
	return ok && err == nil
}

// ReplaceAllString is s.replace(regexp with the g flag, repl) for a repl without $ patterns, on
// s's UTF-16 code units as JavaScript reads them (an except can remove half of a character past
// the BMP). A replacement that runs past MatchTimeout leaves s as it is.
func (r *jsRegexp) ReplaceAllString(s, repl string) string {
	if r.re != nil {
		if r.exact != nil && kelvinOrLongS(s) {
			return r.exact.ReplaceAllLiteralString(s, repl)
		}
		if r.unitsAlways || r.unitWise && hasAstral(s) {
			if out, handled := r.unitsReplace(s, repl); handled {
				return out
			}
		}
		return r.re.ReplaceAllLiteralString(s, repl)
	}
	if hasAstral(s) {
		return r.ecmaReplaceUnits(s, repl)
	}
	out, err := r.ecma.Replace(s, repl, -1, -1)
	if err != nil {
		return s
	}
	return out
}

// ecmaReplaceUnits is ReplaceAllString by the ECMAScript engine on s's code units.
func (r *jsRegexp) ecmaReplaceUnits(s, repl string) string {
	in := utf16Runes(s)
	out := make([]rune, 0, len(in))
	last := 0
	m, err := r.ecma.FindRunesMatch(in)
	for ; m != nil && err == nil; m, err = r.ecma.FindNextMatch(m) {
		out = append(out, in[last:m.RuneIndex]...)
		out = append(out, []rune(repl)...)
		last = m.RuneIndex + m.RuneLength
	}
	if err != nil {
		return s
	}
	return fromUTF16Runes(append(out, in[last:]...))
}

// anchoredPrefix returns the ASCII literal every match of the RE2 pattern t starts with, when t
// begins with ^ (start of text) followed by a literal.
func anchoredPrefix(t string) (prefix string, fold bool) {
	re, err := syntax.Parse(t, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[1].Op != syntax.OpLiteral {
		return "", false
	}
	lit := re.Sub[1]
	p := string(lit.Rune)
	if !isASCII(p) {
		return "", false
	}
	return p, lit.Flags&syntax.FoldCase != 0
}

// kelvinOrLongS reports whether s holds the Kelvin sign (U+212A) or the long s (U+017F), which
// RE2's case folding matches with k and s and JavaScript's does not.
func kelvinOrLongS(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// compileJSRegex compiles a JavaScript regular expression, sharing identical patterns between
// stubs: for RE2 when it translates, else for the ECMAScript engine.
func compileJSRegex(src string, ignoreCase bool) (*jsRegexp, error) {
	if len(src) > MaxRegexLen {
		return nil, tooLongError(len(src))
	}
	k := reKey{src, ignoreCase}
	if v, ok := reCache.Load(k); ok {
		return v.(*jsRegexp), nil
	}
	jr, err := compileUncached(src, ignoreCase)
	if err != nil {
		return nil, err
	}
	if _, loaded := reCache.LoadOrStore(k, jr); !loaded &&
		(reCacheLen.Add(1) > reCacheLimit || reCacheBytes.Add(int64(len(src))) > reCacheByteLimit) {
		reCache.Clear()
		reCacheLen.Store(0)
		reCacheBytes.Store(0)
	}
	return jr, nil
}

func compileUncached(src string, ignoreCase bool) (*jsRegexp, error) {
	t, err := translateRegex(src, ignoreCase)
	if err == nil {
		var re *regexp.Regexp
		if re, err = regexp.Compile(t); err == nil {
			jr := &jsRegexp{re: re, key: t, ic: ignoreCase, src: src, unitWise: unitWise(src), unitsAlways: unitsAlways(src)}
			jr.prefix, jr.fold = anchoredPrefix(t)
			if ignoreCase {
				if x, xerr := translate(src, true, false, true); xerr == nil && x != t {
					jr.exact, _ = regexp.Compile(x)
				}
			}
			return jr, nil
		}
	}
	ecma, ecmaErr := compileECMAScript(ecmaUnitsSource(src), ignoreCase)
	if ecmaErr != nil {
		// Not a valid JavaScript pattern: say what RE2 or the translation found.
		if _, unsupported := err.(unsupportedError); unsupported {
			return nil, ecmaErr
		}
		return nil, err
	}
	flags := ""
	if ignoreCase {
		flags = "i"
	}
	return &jsRegexp{ecma: ecma, key: "ecmascript:/" + src + "/" + flags, ic: ignoreCase}, nil
}

// compileECMAScript compiles src with the ECMAScript engine, whose matches stop at MatchTimeout.
func compileECMAScript(src string, ignoreCase bool) (*regexp2.Regexp, error) {
	opts := regexp2.ECMAScript
	if ignoreCase {
		opts |= regexp2.IgnoreCase
	}
	re, err := regexp2.Compile(ecmaDots(src), opts)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
}

// ecmaDots writes each '.' of an ECMAScript pattern outside a character class as [^\n\r], the
// set regexp2 (ECMAScript mode, no s flag) gives it: the same characters, with or without
// IgnoreCase (checked over every code point), but regexp2 builds a case-insensitive '.' by
// folding every character it matches, ~35 ms a '.' (`^(?!x).$`, `(.)\1`: a stub set with a
// hundred such predicates took seconds to compile), and a negated class in microseconds. A
// pattern with inline options (`(?s)`) or a control escape (`\c`, whose operand a rewrite
// would change) is left as it is.
func ecmaDots(src string) string {
	if !strings.Contains(src, ".") || strings.Contains(src, `\c`) {
		return src
	}
	for rest := src; ; {
		i := strings.Index(rest, "(?")
		if i < 0 {
			break
		}
		if rest = rest[i+2:]; rest == "" || !strings.ContainsRune("=!<:", rune(rest[0])) {
			return src // inline options, or a pattern regexp2 refuses anyway
		}
	}
	var b strings.Builder
	class := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			b.WriteByte(c)
			i++
			c = src[i]
		case class && c == ']':
			class = false
		case !class && c == '[':
			class = true
			b.WriteByte(c)
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' { // [] and [^]: the class ends there
				class = false
				b.WriteByte(']')
				i++
			}
			continue
		case !class && c == '.':
			b.WriteString(`[^\n\r]`)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
