package main

import (
	"bytes"
	"errors"
	"strconv"
)

// errFrame is a response the generator cannot parse.
var errFrame = errors.New("malformed HTTP response")

// maxHeader bounds a response's status line and headers.
const maxHeader = 64 << 10

// frame is one HTTP/1.x response found at the start of a buffer.
type frame struct {
	n      int    // its length on the wire; 0 while it is incomplete
	status int    // status code
	body   []byte // the body, de-chunked (in the buffer, or in the scratch buffer for chunked)
	close  bool   // the server closes the connection after it
}

// parseFrame looks for a whole response at the start of buf. eof reports that the server closed
// the connection after buf, which ends a response that has neither a length nor chunks. A
// chunked body is copied into scratch (grown as needed and returned). The frame's n is 0 when
// more bytes are needed.
func parseFrame(buf []byte, eof bool, scratch []byte) (frame, []byte, error) {
	var f frame
	end := bytes.Index(buf, crlf2)
	if end < 0 {
		if len(buf) > maxHeader {
			return f, scratch, errFrame
		}
		return f, scratch, nil
	}
	head := buf[:end]
	if lines := bytes.Count(head, crlf); bytes.Count(head, []byte("\n")) != lines || bytes.Count(head, []byte("\r")) != lines {
		return f, scratch, errFrame // a bare CR or LF: lines end with CRLF
	}
	hdrEnd := end + 4
	line, rest, _ := bytes.Cut(head, crlf)
	// "HTTP/1.1 200 OK": the version, a space, three digits.
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') || line[8] != ' ' {
		return f, scratch, errFrame
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return f, scratch, errFrame
		}
		f.status = f.status*10 + int(c-'0')
	}
	if f.status < 100 {
		return f, scratch, errFrame
	}
	f.close = line[7] == '0' // HTTP/1.0 closes unless it says keep-alive
	contentLength, chunked := -1, false
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, crlf)
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return f, scratch, errFrame
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.Atoi(string(value))
			if err != nil || n < 0 {
				return f, scratch, errFrame
			}
			contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = hasToken(value, "chunked")
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				f.close = true
			} else if hasToken(value, "keep-alive") {
				f.close = false
			}
		}
	}
	if chunked && line[7] == '0' {
		return f, scratch, errFrame // HTTP/1.0 has no chunked encoding
	}
	switch {
	case f.status < 200 || f.status == 204 || f.status == 304:
		f.n = hdrEnd
	case chunked:
		p := hdrEnd
		scratch = scratch[:0]
		for {
			i := bytes.Index(buf[p:], crlf)
			if i < 0 {
				return frame{}, scratch, nil
			}
			sizeField, _, _ := bytes.Cut(buf[p:p+i], []byte(";"))
			size, err := strconv.ParseUint(string(bytes.TrimSpace(sizeField)), 16, 31)
			if err != nil {
				return f, scratch, errFrame
			}
			p += i + 2
			if size == 0 {
				// Trailers, if any, end with an empty line.
				if bytes.HasPrefix(buf[p:], crlf) {
					f.n = p + 2
				} else if j := bytes.Index(buf[p:], crlf2); j >= 0 {
					f.n = p + j + 4
				} else {
					return frame{}, scratch, nil
				}
				break
			}
			if len(buf)-p < int(size)+2 {
				return frame{}, scratch, nil
			}
			if !bytes.Equal(buf[p+int(size):p+int(size)+2], crlf) {
				return f, scratch, errFrame
			}
			scratch = append(scratch, buf[p:p+int(size)]...)
			p += int(size) + 2
		}
		f.body = scratch
	case contentLength >= 0:
		if len(buf)-hdrEnd < contentLength {
			return frame{}, scratch, nil
		}
		f.n = hdrEnd + contentLength
		f.body = buf[hdrEnd:f.n]
	default: // the body ends where the connection does
		if !eof {
			return frame{}, scratch, nil
		}
		f.n, f.body, f.close = len(buf), buf[hdrEnd:], true
	}
	return f, scratch, nil
}

var (
	crlf  = []byte("\r\n")
	crlf2 = []byte("\r\n\r\n")
)

// hasToken reports whether the comma-separated list s holds token, in any case.
func hasToken(s []byte, token string) bool {
	for len(s) > 0 {
		var t []byte
		t, s, _ = bytes.Cut(s, []byte(","))
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}

// rawFrame is a tcp scenario's answer: complete once as many bytes as the expected answer
// have arrived (the generator sends the next request only then).
func rawFrame(buf []byte, want expect) frame {
	n := len(want.Body)
	if len(buf) < n || n == 0 {
		return frame{}
	}
	return frame{n: n, status: want.Status, body: buf[:n]}
}
