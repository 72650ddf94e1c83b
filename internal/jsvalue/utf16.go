package jsvalue

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Go strings are UTF-8; JavaScript's are UTF-16. These functions give the answers JavaScript
// gives for the same text: lengths and indexes count UTF-16 code units, and comparison orders
// by them.

// Len16 is s.length: its length in UTF-16 code units.
func Len16(s string) int {
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

// CharAt16 is s[i]: the UTF-16 code unit at index i as a string (a lone surrogate half is
// U+FFFD), or false when i is out of range.
func CharAt16(s string, i int) (string, bool) {
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

// Less16 is a < b for strings: it compares UTF-16 code units.
func Less16(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
				return a[i] < b[i]
			}
			// The characters that differ start where the rune holding byte i starts (the bytes
			// before i are the same in both).
			for i > 0 && !utf8.RuneStart(a[i]) {
				i--
			}
			x, y := units16{s: a[i:]}, units16{s: b[i:]}
			for {
				ux, okx := x.next()
				uy, oky := y.next()
				switch {
				case !okx || !oky:
					return !okx && oky
				case ux != uy:
					return ux < uy
				}
			}
		}
	}
	return len(a) < len(b)
}

// units16 reads a string's UTF-16 code units.
type units16 struct {
	s  string
	lo rune // the low surrogate still to read, or 0
}

func (u *units16) next() (rune, bool) {
	if u.lo != 0 {
		lo := u.lo
		u.lo = 0
		return lo, true
	}
	if u.s == "" {
		return 0, false
	}
	r, n := utf8.DecodeRuneInString(u.s)
	u.s = u.s[n:]
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		u.lo = lo
		return hi, true
	}
	return r, true
}

// ToLower is String.prototype.toLowerCase. ASCII text without capitals is returned as it is.
func ToLower(s string) string {
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
		if caseIgnorable(r) {
			continue
		}
		before = unicode.IsLetter(r)
		break
	}
	if !before {
		return false
	}
	for _, r := range s[at+2:] {
		if caseIgnorable(r) {
			continue
		}
		return !unicode.IsLetter(r)
	}
	return true
}

func caseIgnorable(r rune) bool {
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\'' || r == 0xAD
}

// EqualLower reports ToLower(s) == lower without allocating for ASCII s.
func EqualLower(s, lower string) bool {
	if len(s) != len(lower) {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return ToLower(s) == lower
			}
		}
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return ToLower(s) == lower
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
