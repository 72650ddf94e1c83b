package config

import (
	"sync"
	"unsafe"
)

// RawObject is an object kept as its compact JSON text, exactly as AppendJSON(o, 0) writes it,
// with members rendered after its own: a large imposter's stubs are kept as text (a quarter of
// the memory of the ordered tree) and echoed from it without being decoded. AppendJSON and
// WriteJSON render it as the object it stands for, indented alike; nothing else reads into it.
// The keys of More must not be keys of Text's object.
type RawObject struct {
	Text string
	More []Member
	// Packed says Text is packed (see PackJSON): it is unpacked as it is rendered.
	Packed bool
}

// unpacked are the buffers packed RawObjects are unpacked into while they are rendered.
var unpacked = sync.Pool{New: func() any { return new([]byte) }}

// ParseJSONText is ParseJSON of a string, which is not copied (the values decoded from it do
// not refer to it).
func ParseJSONText(s string) (Value, error) {
	return ParseJSON(unsafe.Slice(unsafe.StringData(s), len(s))) // read, never written
}

// appendRawObject appends r as appendJSON renders the object it stands for at level.
// With c, the text goes to c as it grows (see Chunker).
func appendRawObject(dst []byte, r *RawObject, indent, level int, c *Chunker) []byte {
	text := r.Text
	if r.Packed {
		buf := unpacked.Get().(*[]byte)
		*buf = AppendUnpackedJSON((*buf)[:0], text)
		text = unsafe.String(unsafe.SliceData(*buf), len(*buf)) // read below, before buf is reused
		defer func() {
			if cap(*buf) <= 64<<10 {
				unpacked.Put(buf)
			}
		}()
	}
	if len(r.More) == 0 {
		return appendIndented(dst, text, indent, level, c)
	}
	if len(text) < 2 || text == "{}" {
		return appendJSON(dst, &Object{Members: r.More}, indent, level)
	}
	dst = appendIndented(dst, text[:len(text)-1], indent, level, c) // all but its closing brace
	for _, m := range r.More {
		dst = appendKey(appendSep(dst, 1, indent, level), m.Key, indent)
		dst = appendJSON(dst, m.Value, indent, level+1)
	}
	return closeList(dst, indent, level, '}')
}

// appendIndented appends text, compact JSON as AppendJSON(v, 0) writes it, as AppendJSON(v,
// indent) would write v at level: the same tokens, with the line breaks and spaces of the
// indentation. Strings, numbers and literals are copied as they are. With c, the text goes to
// c as it grows, at line breaks (see Chunker); it stops at c's first error.
func appendIndented(dst []byte, text string, indent, level int, ch *Chunker) []byte {
	if indent == 0 {
		for ch != nil && len(text) > writeChunk && ch.Err == nil {
			dst = ch.Flush(append(dst, text[:writeChunk]...))
			text = text[writeChunk:]
		}
		return append(dst, text...)
	}
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch c {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			continue
		case '{', '[', '}', ']', ',', ':':
		default:
			continue
		}
		dst = append(dst, text[start:i]...)
		start = i + 1
		switch c {
		case '{', '[':
			if i+1 < len(text) && (text[i+1] == '}' || text[i+1] == ']') {
				dst = append(dst, c, text[i+1]) // empty: {} and [] stay on their line
				i++
				start = i + 1
				continue
			}
			level++
			dst = appendNewline(append(dst, c), indent, level)
		case '}', ']':
			level--
			dst = append(appendNewline(dst, indent, level), c)
		case ',':
			dst = appendNewline(append(dst, ','), indent, level)
		case ':':
			dst = append(dst, ':', ' ')
			continue
		}
		if ch != nil && len(dst) >= writeChunk { // after a line break
			if dst = ch.Flush(dst); ch.Err != nil {
				return dst
			}
		}
	}
	return append(dst, text[start:]...)
}
