package config

import "slices"

// Packed JSON text: the compact text AppendJSON writes, with the fragments Mountebank
// documents repeat in every stub (keys, common values, brackets) each replaced by one byte
// from 0x01 to 0x1f, which that text never holds (AppendString escapes them). A plain stub's
// ~190 B of text packs to ~80 B; 100,000 of them are kept.

// packTokens are the fragments, by the byte that stands for each.
var packTokens = [0x20]string{
	0x01: `{"predicates":[`,
	0x02: `"responses":[`,
	0x03: `{"equals":{`,
	0x04: `{"deepEquals":{`,
	0x05: `"method":`,
	0x06: `"path":`,
	0x07: `"query":{`,
	0x08: `"headers":{`,
	0x09: `"body":`,
	0x0a: `{"is":{`,
	0x0b: `"statusCode":`,
	0x0c: `"Content-Type":`,
	0x0d: `"application/json"`,
	0x0e: `"GET"`,
	0x0f: `"POST"`,
	0x10: `}}],`,
	0x11: `}}]}`,
	0x12: `"caseSensitive":`,
	0x13: `{"contains":{`,
	0x14: `{"startsWith":{`,
	0x15: `{"matches":{`,
	0x16: `"text/plain"`,
	0x17: `"behaviors":[`,
	0x18: `"proxy":{`,
	0x19: `"_mode":"text"`,
	0x1a: `"PUT"`,
	0x1b: `"DELETE"`,
	0x1c: `{"inject":`,
	0x1d: `"repeat":`,
	0x1e: `{"exists":{`,
	0x1f: `"mode":`,
}

// packQuote, packBrace and packClose list the tokens that start with '"' by their second byte,
// those that start with '{' by their third, and those that start with '}', longest first:
// the few a position may start.
var packQuote, packBrace, packClose = func() (q, o [256][]byte, c []byte) {
	for b := 0x1f; b > 0; b-- {
		t := packTokens[b]
		var l *[]byte
		switch t[0] {
		case '"':
			l = &q[t[1]]
		case '{':
			l = &o[t[2]]
		case '}':
			l = &c
		default:
			panic("BUG: a pack token starts with " + t[:1])
		}
		i := 0
		for i < len(*l) && len(packTokens[(*l)[i]]) >= len(t) {
			i++
		}
		*l = append((*l)[:i], append([]byte{byte(b)}, (*l)[i:]...)...)
	}
	return q, o, c
}()

// AppendPackedJSON appends text, compact JSON as AppendJSON(v, 0) writes it, packed. dst may be
// text[:0]: the packed text, never longer, is then written over text as it is read.
func AppendPackedJSON(dst, text []byte) []byte {
	for i := 0; i < len(text); {
		c := text[i]
		var cands []byte
		switch {
		case c == '"' && i+1 < len(text):
			cands = packQuote[text[i+1]]
		case c == '{' && i+2 < len(text):
			cands = packBrace[text[i+2]]
		case c == '}':
			cands = packClose
		}
		found := false
		for _, b := range cands {
			if t := packTokens[b]; len(text)-i >= len(t) && string(text[i:i+len(t)]) == t {
				dst = append(dst, b)
				i += len(t)
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// PackJSON returns text packed (see AppendPackedJSON).
func PackJSON(text []byte) string {
	return string(AppendPackedJSON(make([]byte, 0, len(text)), text))
}

// AppendUnpackedJSON appends the text packed is the packing of (see PackJSON).
func AppendUnpackedJSON(dst []byte, packed string) []byte {
	dst = slices.Grow(dst, len(packed)) // at least as long: a long stub is not grown by appends
	start := 0
	for i := 0; i < len(packed); i++ {
		if c := packed[i]; c < 0x20 {
			dst = append(append(dst, packed[start:i]...), packTokens[c]...)
			start = i + 1
		}
	}
	return append(dst, packed[start:]...)
}
