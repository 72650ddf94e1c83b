package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/netconn"
)

// ParseError is node's HTTP parser error for an origin's answer it cannot read (a status line
// or header that is not HTTP), as Mountebank 2.9.1 passes it through to its 500 answer: llhttp's
// code and reason, the offset of the offending byte (bytesParsed) and the bytes of the answer
// read so far (rawPacket). Node counts bytesParsed from the start of the packet it was given;
// here the packet is everything of the answer received, which is the same when the origin
// wrote its head at once.
type ParseError struct {
	Code   string // HPE_INVALID_CONSTANT, ...
	Reason string
	At     int // bytesParsed
	Packet []byte
}

func (e *ParseError) Error() string { return "Parse Error: " + e.Reason }

// configError renders e as Mountebank's 500 answer shows it: node's error fields (its stack,
// node's own lines, is left out as for the other errors node raises).
func (e *ParseError) configError() *config.Error {
	data := make([]any, len(e.Packet))
	for i, c := range e.Packet {
		data[i] = float64(c)
	}
	msg := e.Error()
	return &config.Error{Code: e.Code, Message: msg, Raw: config.NewObject(
		"bytesParsed", float64(e.At), "code", e.Code, "reason", e.Reason,
		"rawPacket", config.NewObject("type", "Buffer", "data", data),
		"message", msg, "name", "Error")}
}

// errHangUp is an origin that closed the connection in the middle of its answer's head: node's
// "socket hang up" (ECONNRESET), which Mountebank reports as "Unable to connect".
var errHangUp = errors.New("the origin closed the connection before its answer's headers ended")

// checkHead reads b, the bytes of an answer received so far, as node 20's parser (llhttp, strict)
// reads a response up to the end of its header block. It returns where the head starts (after
// the empty lines node skips) and ends (after its blank line), end 0 when more bytes are needed,
// or the error node raises. Only what node refuses and fasthttp would read differently is
// checked; the body is left to fasthttp.
func checkHead(b []byte) (start, end int, perr *ParseError) {
	start, end, _, perr = checkHeadLines(b, nil)
	return start, end, perr
}

// headerLine is where a header line of a head block (b[start:end]) is, counted from the
// block's start: its name, block[name:colon], and its value without the spaces and tabs
// around it, block[value:valueEnd].
type headerLine struct{ name, colon, value, valueEnd int32 }

// checkHeadLines is checkHead, appending to lines where each header line is in b (when end
// is not 0): what plainHead and rawHeaders read, without finding the lines again.
func checkHeadLines(b []byte, lines []headerLine) (start, end int, _ []headerLine, perr *ParseError) {
	fail := func(at int, code, reason string) (int, int, []headerLine, *ParseError) {
		return 0, 0, lines, &ParseError{Code: code, Reason: reason, At: at, Packet: bytes.Clone(b)}
	}
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	start = i
	proto := "HTTP/"
	if i < len(b) {
		switch b[i] {
		case 'R':
			proto = "RTSP/"
		case 'I':
			proto = "ICE/"
		}
	}
	for k := 0; k < len(proto); k, i = k+1, i+1 {
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if b[i] != proto[k] {
			return fail(i, "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/")
		}
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	// Version: one digit, a dot, one digit, one of the versions node knows, a space.
	var version [2]byte
	for k, what := range []string{"Invalid major version", "Expected dot", "Invalid minor version"} {
		if i == len(b) {
			return 0, 0, lines, nil
		}
		switch {
		case k == 1 && b[i] != '.':
			return fail(i, "HPE_INVALID_VERSION", what)
		case k != 1 && !digit(b[i]):
			return fail(i, "HPE_INVALID_VERSION", what)
		case k != 1:
			version[k/2] = b[i] - '0'
		}
		i++
	}
	if i == len(b) {
		return 0, 0, lines, nil
	}
	switch version {
	case [2]byte{0, 9}, [2]byte{1, 0}, [2]byte{1, 1}, [2]byte{2, 0}:
	default:
		return fail(i, "HPE_INVALID_VERSION", "Invalid HTTP version")
	}
	if b[i] != ' ' {
		return fail(i, "HPE_INVALID_VERSION", "Expected space after version")
	}
	i++
	// Status: three digits, then a space and a reason, or the end of the line.
	for k := 0; k < 3; k, i = k+1, i+1 {
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if !digit(b[i]) {
			return fail(i, "HPE_INVALID_STATUS", "Invalid status code")
		}
	}
	if i == len(b) {
		return 0, 0, lines, nil
	}
	switch b[i] {
	case ' ':
		i++
		for i < len(b) && b[i] != '\r' && b[i] != '\n' {
			i++
		}
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if b[i] == '\n' {
			return fail(i+1, "HPE_CR_EXPECTED", "Missing expected CR after response line")
		}
	case '\r':
	case '\n':
		return fail(i+1, "HPE_INVALID_STATUS", "Invalid response status")
	default:
		return fail(i, "HPE_INVALID_STATUS", "Invalid response status")
	}
	i++ // '\r'
	if i == len(b) {
		return 0, 0, lines, nil
	}
	if b[i] != '\n' {
		return fail(i, "HPE_STRICT", "Expected LF after CR")
	}
	i++
	// Header lines, up to the blank line.
	first := true
	var haveLength, haveEncoding bool
	for {
		if i == len(b) {
			return 0, 0, lines, nil
		}
		switch b[i] {
		case '\r':
			i++
			if i == len(b) {
				return 0, 0, lines, nil
			}
			if b[i] != '\n' {
				return fail(i, "HPE_STRICT", "Expected LF after headers")
			}
			return start, i + 1, lines, nil
		case '\n':
			return fail(i+1, "HPE_INVALID_HEADER_TOKEN", "Invalid header field char")
		case ' ', '\t':
			if first {
				return fail(i+1, "HPE_UNEXPECTED_SPACE", "Unexpected space after start line")
			}
			return fail(i, "HPE_INVALID_HEADER_TOKEN", "Unexpected whitespace after header value")
		}
		first = false
		nameAt := i
		for i < len(b) && netconn.TokenByte(b[i]) {
			i++
		}
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if b[i] != ':' || i == nameAt {
			return fail(i, "HPE_INVALID_HEADER_TOKEN", "Invalid header token")
		}
		name := b[nameAt:i]
		i++
		// A name is tokens (ASCII), so the lengths are compared first: most names are neither;
		// and then by tokenFold, not bytes.EqualFold's general fold.
		length := len(name) == len("content-length") && tokenFold(name, "content-length")
		encoding := len(name) == len("transfer-encoding") && tokenFold(name, "transfer-encoding")
		switch {
		case length && haveEncoding:
			return fail(i, "HPE_INVALID_CONTENT_LENGTH", "Content-Length can't be present with Transfer-Encoding")
		case encoding && haveLength:
			return fail(i, "HPE_INVALID_TRANSFER_ENCODING", "Transfer-Encoding can't be present with Content-Length")
		}
		haveEncoding = haveEncoding || encoding
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) {
			return 0, 0, lines, nil
		}
		valueAt := i
		if length {
			if haveLength {
				return fail(i, "HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length")
			}
			haveLength = true
			var n uint64
			digits := 0
			for ; i < len(b) && digit(b[i]); i, digits = i+1, digits+1 {
				d := uint64(b[i] - '0')
				if n > (^uint64(0)-d)/10 {
					return fail(i+1, "HPE_INVALID_CONTENT_LENGTH", "Content-Length overflow")
				}
				n = n*10 + d
			}
			for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
				i++
			}
			if i == len(b) {
				return 0, 0, lines, nil
			}
			if b[i] != '\r' && b[i] != '\n' {
				return fail(i, "HPE_INVALID_CONTENT_LENGTH", "Invalid character in Content-Length")
			}
			if digits == 0 {
				if b[i] == '\r' {
					if i+1 == len(b) {
						return 0, 0, lines, nil
					}
					i++
				}
				return fail(i+1, "HPE_INVALID_CONTENT_LENGTH", "Empty Content-Length")
			}
		}
		// The value runs to CR or LF; any other byte that stops it (a control character, DEL)
		// is one node refuses. Values are most of a head: see valueRun.
		i = valueRun(b, i)
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if c := b[i]; c != '\r' && c != '\n' {
			return fail(i, "HPE_INVALID_HEADER_TOKEN", "Invalid header value char")
		}
		if b[i] == '\n' {
			return fail(i, "HPE_CR_EXPECTED", "Missing expected CR after header value")
		}
		valueEnd := i
		for valueEnd > valueAt && (b[valueEnd-1] == ' ' || b[valueEnd-1] == '\t') {
			valueEnd--
		}
		lines = append(lines, headerLine{int32(nameAt - start), int32(nameAt + len(name) - start), int32(valueAt - start), int32(valueEnd - start)})
		i++
		if i == len(b) {
			return 0, 0, lines, nil
		}
		if b[i] != '\n' {
			return fail(i, "HPE_LF_EXPECTED", "Missing expected LF after header value")
		}
		i++
	}
}

// valueRun returns the index of the first byte of b from i on that a header value may not
// hold (netconn.ValueByte), len(b) when there is none. Eight bytes are looked at at once
// while none of them is below 0x20 or DEL (each test is exact as a whole: a borrow only ever
// follows a byte it finds); then one table lookup a byte (a tab, which a value may hold, is
// looked at so).
func valueRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		d := w ^ 0x7f*ones // a zero byte where w has DEL
		if ((w-0x20*ones)&^w|(d-ones)&^d)&highs != 0 {
			break
		}
	}
	for i < len(b) && netconn.ValueByte(b[i]) {
		i++
	}
	return i
}
