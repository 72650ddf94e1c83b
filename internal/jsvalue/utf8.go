package jsvalue

import (
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

// DecodeUTF8 turns bytes into text as Node's buffer.toString('utf8') (and TextDecoder) does:
// valid UTF-8 is kept as it is, and each maximal subpart of an invalid sequence (the longest
// start of a sequence that could still have become valid, or else one byte) becomes one U+FFFD,
// the WHATWG rule. So "\xe2\x82A" is "\uFFFDA" and "\xed\xa0\x80" three U+FFFD. Everything mockd
// reads as text (http bodies, query strings, tcp data, smtp messages, JSON strings) goes
// through it, so the same bytes give the same text everywhere.
func DecodeUTF8[T ~string | ~[]byte](b T) string {
	// The standard library's check reads eight ASCII bytes at a time; a byte at a time, this
	// was most of the time a 1 MiB request body took.
	if validUTF8(b) {
		return string(b)
	}
	i := 0
	for b[i] < utf8.RuneSelf { // b is invalid, so it holds a byte past ASCII
		i++
	}
	out := make([]byte, 0, len(b)+8)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		var need int
		lo, hi := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lo = 0xA0
			} else if c == 0xED {
				hi = 0x9F // no surrogates
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F // nothing past U+10FFFF
			}
		default: // a continuation byte, an overlong lead (C0, C1) or F5..FF
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lo || b[j] > hi {
				ok = false
				break
			}
			lo, hi = 0x80, 0xBF
			j++
		}
		if ok {
			out = append(out, b[i:j]...)
		} else {
			out = append(out, "\uFFFD"...)
		}
		i = j
	}
	return string(out)
}

func validUTF8[T ~string | ~[]byte](b T) bool {
	switch t := any(b).(type) {
	case string:
		return ValidString(t)
	case []byte:
		return Valid(t)
	}
	return ValidString(string(b))
}

// ASCII reports whether s has no byte past ASCII, eight bytes at a time (the last eight
// overlapping the words before them): header names and values are checked on every request and
// every proxied answer, and a byte at a time cost hundreds of instructions there.
func ASCII(s string) bool {
	const hi = 0x8080808080808080
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false
			}
		}
		return true
	}
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8)) }
	for i := 0; i+8 < len(s); i += 8 {
		if word(i)&hi != 0 {
			return false
		}
	}
	return word(len(s)-8)&hi == 0
}

// ValidString is utf8.ValidString, deciding ASCII text (the usual path, header value, JSON
// body) with a plain loop first, eight bytes at a time: ValidString's own setup costs more than
// the few bytes a request's values hold. Long text (a large body) is read 32 bytes at a time,
// four words to one test: eight at a time, a 1 MiB body took 120-140 µs, four times the
// standard library's check.
func ValidString(s string) bool {
	const hi = 0x8080808080808080
	i := 0
	if len(s) >= 8 {
		p := unsafe.Pointer(unsafe.StringData(s))
		for ; i+32 <= len(s); i += 32 {
			q := unsafe.Add(p, i) // (the words are read as the loop below reads them: little-endian)
			if (*(*uint64)(q)|*(*uint64)(unsafe.Add(q, 8))|*(*uint64)(unsafe.Add(q, 16))|*(*uint64)(unsafe.Add(q, 24)))&hi != 0 {
				break
			}
		}
		for ; i+8 <= len(s); i += 8 {
			if binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))&hi != 0 {
				break
			}
		}
		if i+8 > len(s) && binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[len(s)-8:]), 8))&hi == 0 {
			return true // the last eight bytes, overlapping the words read, are ASCII too
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:]) // what precedes is ASCII
		}
	}
	return true
}

// Valid is ValidString for bytes (utf8.Valid).
func Valid(b []byte) bool {
	return ValidString(unsafe.String(unsafe.SliceData(b), len(b))) // only read
}
