package proxy

import (
	"bytes"
	"strconv"

	"github.com/mockd/mockd/internal/request"
)

// rawHead appends to dst the head forward writes for a direct request (see requestTarget) of
// method and target with a body of bodyLen bytes, whose header block arrived as raw (see
// request.RawHeaderBlock): the request line, then the lines the request's parse of raw lists
// (split at '\n', a '\r' before it dropped, name and value trimmed of spaces and tabs, a line
// without ':' or named __proto__ left out), as the list's way writes them (Headers, headerList):
// the first Host line the origin's, the others, Content-Length and Transfer-Encoding left out,
// then host when there was none and Content-Length of the body. The block is neither parsed
// into a list nor given to fasthttp's header a line at a time (copied three times, searched for
// line breaks twice): about 1.5k instructions of a proxied request of two header lines.
//
// ok is false where the list's way writes otherwise, which then writes the head: injected
// headers, a method fasthttp would change (empty, or with a line break), a '\r' inside a line
// (fasthttp writes it as a space).
func (p *Proxy) rawHead(dst []byte, method string, target, raw []byte, bodyLen int) (out []byte, ok bool) {
	if len(p.inject) > 0 || method == "" {
		return dst, false
	}
	for i := 0; i < len(method); i++ {
		if method[i] == '\r' || method[i] == '\n' {
			return dst, false
		}
	}
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	hostDone := false
	var lengthName []byte
	ends := 0 // the '\r's dropped at the ends of lines: any other is inside one
	block := raw
	// Lines that go out as they came ("name: value\r\n", nothing to trim: most lines) are
	// copied a run of them at a time, block[run:at].
	run, at := 0, 0
	for at < len(block) {
		var line []byte
		next := len(block)
		if i := bytes.IndexByte(block[at:], '\n'); i >= 0 {
			line, next = block[at:at+i], at+i+1
		} else {
			line = block[at:]
		}
		crlf := len(line) > 0 && line[len(line)-1] == '\r'
		if crlf {
			line = line[:len(line)-1]
			ends++
		}
		c := bytes.IndexByte(line, ':')
		if c > 0 && crlf && next-at == len(line)+2 && !special(line[:c]) && asIs(line, c) {
			at = next // goes out in the run
			continue
		}
		dst = append(dst, block[run:at]...)
		run, at = next, next
		if c < 0 {
			continue // an empty line too
		}
		name := request.TrimOWS(line[:c])
		switch n := len(name); {
		case n == len("__proto__") && string(name) == "__proto__":
			continue
		case n == len("host") && asciiFold(name, "host"):
			if !hostDone {
				dst = append(append(append(dst, "host: "...), p.host...), "\r\n"...)
				hostDone = true
			}
			continue
		case n == len("content-length") && asciiFold(name, "content-length"):
			lengthName = name
			continue
		case n == len("transfer-encoding") && asciiFold(name, "transfer-encoding"):
			continue
		}
		dst = append(append(dst, name...), ": "...)
		dst = append(append(dst, request.TrimOWS(line[c+1:])...), "\r\n"...)
	}
	dst = append(dst, block[run:at]...)
	if bytes.Count(block, []byte{'\r'}) != ends {
		return dst, false
	}
	if !hostDone {
		dst = append(append(append(dst, "host: "...), p.host...), "\r\n"...)
	}
	if bodyLen > 0 || lengthName != nil {
		if lengthName == nil {
			lengthName = []byte("Content-Length")
		}
		dst = append(append(dst, lengthName...), ": "...)
		dst = append(strconv.AppendInt(dst, int64(bodyLen), 10), "\r\n"...)
	}
	return append(dst, "\r\n"...), true
}

// asIs reports whether line, a header line with its first ':' at c > 0, is as the list's way
// writes it: "name: value" with no space or tab at the name's ends nor the value's (or an
// empty value after the space).
func asIs(line []byte, c int) bool {
	if len(line) < c+2 || line[c+1] != ' ' || isOWS(line[0]) || isOWS(line[c-1]) {
		return false
	}
	return len(line) == c+2 || !isOWS(line[c+2]) && !isOWS(line[len(line)-1])
}

// isOWS reports whether b is a space or a tab.
func isOWS(b byte) bool { return b == ' ' || b == '\t' }

// special reports whether a name (as it arrived) may be one rawHead does not write as it is:
// __proto__, or Host, Content-Length or Transfer-Encoding in any case. The lengths alone are
// compared: a name of one of theirs is looked at again.
func special(name []byte) bool {
	switch len(name) {
	case len("host"), len("__proto__"), len("content-length"), len("transfer-encoding"):
		return true
	}
	return false
}

// asciiFold reports whether b is lower (lower-case ASCII letters and '-') with its letters in
// any case. Header names are decoded one character a byte (Latin-1), and no Latin-1 character
// past ASCII folds to an ASCII letter (strings.EqualFold's U+017F and U+212A are not Latin-1):
// it is strings.EqualFold of the decoded name.
func asciiFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(lower) {
		if c := b[i]; c != lower[i] && (c < 'A' || c > 'Z' || c+('a'-'A') != lower[i]) {
			return false
		}
	}
	return true
}
