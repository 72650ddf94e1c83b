package netconn

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/valyala/fasthttp"
)

// Requests whose framing is ambiguous are refused as node (so Mountebank) refuses them: 400 and
// the connection closed. fasthttp accepts some of them:
//   - a header line or the blank line ending the header block with a bare LF: fasthttp reads
//     header lines ending in a bare LF but waits for a CRLF CRLF to end the block, so a request
//     that ends it with bare LFs held its connection, unanswered, until the client gave up;
//   - Content-Length together with Transfer-Encoding (RFC 9112 6.3: request smuggling):
//     fasthttp reads the body as chunked and keeps the connection, so a request hidden after
//     the chunks was answered too;
//   - a header line folded onto the one before (obs-fold: a line beginning with a space or a
//     tab), and a header or trailer name with a space in it: fasthttp dropped the folded
//     part and kept the name, where a proxy in front may read them otherwise;
//   - white space, or a character that is not a token's, in a chunk-size line (`5 `, `5; a`,
//     `5;a =b`, `5;a=b/c`), and trailer lines that fold, or end with a bare LF: llhttp refuses
//     them (node's strict chunk parsing; lenient chunk sizes are a known smuggling vector).
//
// Header blocks are scanned as they are read, from a read that begins a request. A request
// pipelined behind another in the same read begins a read of its own: once a header block
// ends, its body is counted (Content-Length, or none) and the bytes read past it are handed
// to fasthttp by the next Read, after the request before them was answered (see carry). A
// chunked body is followed through its chunks and trailers to its end the same way. After a
// header block the scan could not follow (a line split between reads, two Content-Lengths, a
// chunk it cannot read), the bytes behind it are not scanned, and a request there that ends
// its header block with bare LFs is answered 408 after --header-timeout.

// badRequest is what node writes for a request it cannot parse.
const badRequest = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"

// errUnreadable fails a read that brought a line node refuses (headScan.feed's bad): a bare LF,
// a folded header line, a space in a header name, a malformed chunk-size or trailer line.
var errUnreadable = errors.New("a request line node refuses (bare LF, folded header, space in a name, malformed chunk line)")

// errChunkExt fails a read that passed maxChunkExt bytes of one chunk's extensions.
var errChunkExt = errors.New("a chunk's extensions are longer than 16 KiB")

// maxHeadScan bounds the bytes a headScan looks at; fasthttp refuses larger header blocks.
const maxHeadScan = 64 << 10

// headScan follows the header block of one request as its bytes arrive, to tell whether any of
// its lines (request line, header lines, the blank line) ends with a bare LF, and to rewrite the
// Host lines fasthttp refuses and node reads (see tidyHost).
type headScan struct {
	active bool
	lines  int  // lines seen, the request line included
	open   int  // bytes of the line in progress
	lastCR bool // the last byte seen is a CR
	// inName is set while the header line in progress is in its name (no ':' seen yet).
	inName bool
	at     int // bytes of the request before the current read's unscanned part
	head   int // where the header block begins (after the request line)
	hosts  int // Host lines seen
	// framing says how the request's body ends, from its header lines (framed*); length is
	// its Content-Length, and then, in the body (inBody), the bytes of it still to come.
	framing int8
	inBody  bool
	length  int64
	// chunk is where a chunked body's scan stands (chunk*); length is then the size of the
	// chunk being read, and, in its data, the bytes of it still to come.
	chunk int8
	// ext counts the bytes of the chunk-size line's extension (names and values) read so
	// far; extOverflow is set once they pass maxChunkExt, which ends the scan. extAt is where
	// the extension's scan stands (ext*). malformed is set when a chunk-size or trailer line
	// is one llhttp refuses, which ends the scan (feed's bad).
	ext         int
	extOverflow bool
	// sizeBegun is set once a digit of the chunk-size line in progress was read.
	sizeBegun bool
	extAt     int8
	malformed bool
	// fixes are the Host lines rewritten for fasthttp, put back by restore; saved holds
	// their original bytes, and host (when hostSet) the first Host's value as sent.
	fixes   []hostFix
	saved   []byte
	host    [2]int
	hostSet bool
	// plain is the last first-Host line (name, colon and value) found plain on this
	// connection: clients send the same one with every request, and a line equal to it needs
	// no look at its value (begin keeps it).
	plain    [64]byte
	plainLen int
	// hdr says what the header lines looked at hold for the request view (hdr*, see
	// HeaderLines).
	hdr uint8
	// oddHost is set once a Host line was found not plain (tidyHost), rewritten or not.
	oddHost bool
	// last is the header block (the lines after the request line, through the blank line)
	// of the connection's last request when its scan read it whole in one read, rewrote
	// nothing, and found a body of a Content-Length or none; lastHdr, lastFraming,
	// lastLength and lastHosts are what it found. Clients send the same block with every
	// request: a block equal to it, byte for byte, is found the same without a look at its
	// lines (begin keeps them; see remember).
	last        [maxLast]byte
	lastLen     int
	lastLength  int64
	lastHosts   int
	lastFraming int8
	lastHdr     uint8
	// misses counts the requests since the last block was found again (from the fourth
	// request that did not send it on; see remember).
	misses uint32
	// method is where the space after the request's method is in its first read (methodEnd),
	// for tidyRequestLineAt.
	method int
}

// maxLast bounds the header block a headScan keeps to compare the next request's with: what
// a client library or a load generator sends (a browser's larger blocks are scanned).
const maxLast = 512

// What a headScan found in the header lines (see HeaderLines).
const (
	hdrKnown    = 1 << iota // the block ended with every header line looked at whole
	hdrEncoding             // a line's name begins with content-encoding
	hdrForm                 // a line's name begins with content-type and it holds the form's type
	hdrSplit                // a line came split between reads: not looked at
	hdrTE                   // a Transfer-Encoding line (as nodeReads's searches find one)
	hdrUnread               // the body was read past without being kept (see ListenOptions.UnreadBody)
)

// HeaderLines is what the scan of a request's header block, as it arrived on a connection an
// IdleListener accepted, found in the lines that decide whether the request view must parse
// the block to read the body (request.HeaderLines has the same fields, for
// request.FromHTTPLines): Known when every header line was looked at whole (no line split
// between reads, the scan not given up); then Encoding when a line's name begins with
// content-encoding and Form when one's begins with content-type and the line holds
// application/x-www-form-urlencoded, in any ASCII case. (A line beginning with white space, a
// folded one, is refused before any handler runs.)
//
// BodyUnread says that the request's body was read past without being kept (see
// ListenOptions.UnreadBody): what the server holds of it is not the body.
type HeaderLines struct{ Known, Encoding, Form, BodyUnread bool }

// formType is the media type a Content-Type line must hold for hdrForm.
var formType = []byte("application/x-www-form-urlencoded")

// How a request's body ends, as the header lines a headScan saw say.
const (
	framedNone    = iota // no Content-Length or Transfer-Encoding: no body
	framedLength         // one Content-Length
	framedChunked        // Transfer-Encoding ending in chunked, once: the chunks are followed
	framedUnknown        // lines the scan could not read: it stops at the body
)

// Where the scan of a chunked body stands.
const (
	chunkSize        = iota // in a chunk-size line, before any extension
	chunkExt                // in a chunk-size line's extension
	chunkData               // in a chunk's data (length bytes to come)
	chunkDataEnd            // in the line break after a chunk's data
	chunkTrailer            // at the start of a trailer line, or of the blank line that ends the body
	chunkTrailerLine        // in a trailer line
)

// Where the scan of a chunk-size line's extensions stands (llhttp's grammar: `;name`,
// `;name=token` or `;name="quoted"`, names may be empty but for the last).
const (
	extStart      = iota // after a ';'
	extName              // in a name
	extValue             // after a '='
	extToken             // in a token value
	extQuoted            // in a quoted value
	extQuotedPair        // after a '\\' in a quoted value
	extQuotedDone        // after a quoted value
	extCR                // after the CR ending the line
)

// TokenByte reports whether c may stand in an HTTP token (RFC 9110 5.6.2's tchar), as llhttp
// reads header names: the one table of it for the request framing here and the proxy's reading
// of an origin's answer.
func TokenByte(c byte) bool { return tokenChar[c] }

// tokenChar tells the characters of an HTTP token (RFC 9110 5.6.2's tchar).
var tokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// ValueByte reports whether c may stand in a header value as llhttp reads it: a tab, a visible
// ASCII character or a space, or a byte past ASCII (obs-text); not CR, LF, another control
// character or DEL. One table lookup a byte, for the proxy's reading of an origin's answer.
func ValueByte(c byte) bool { return valueChar[c] }

// valueChar tells the characters ValueByte accepts.
var valueChar = func() (t [256]bool) {
	for c := 0x20; c < 0x100; c++ {
		t[c] = c != 0x7f
	}
	t['\t'] = true
	return t
}()

// quotedChar tells the characters of a quoted string's text (qdtext, obs-text included).
var quotedChar = func() (t [256]bool) {
	for c := 0x20; c < 0x100; c++ {
		t[c] = c != '"' && c != '\\' && c != 0x7f
	}
	t['\t'] = true
	return t
}()

// hostFix is a Host line rewritten in place: its offset in the header block and its original
// bytes, saved[from:to] (as long as the rewritten line).
type hostFix struct{ off, from, to int }

// startsRequest reports whether b begins as a request line does: an upper-case method (or
// M-SEARCH) and a space. A read that does not (one that begins in the middle of a request pipelined behind
// another) is not scanned.
//
// One pass over the method's few bytes, which ends at the first that is not an upper-case letter
// or '-' (M-SEARCH) and costs less than an IndexByte call for the space, then a pass again.
func startsRequest(b []byte) bool { return methodEnd(b) > 0 }

// methodEnd is where the space after the method of a read that startsRequest accepts is (the
// read's first space), or 0 when it does not accept it.
func methodEnd(b []byte) int {
	for i, c := range b {
		if c == ' ' {
			return i
		}
		if i == 20 || (c < 'A' || c > 'Z') && c != '-' {
			return 0
		}
	}
	return 0
}

// begin starts scanning a request whose first bytes are b.
func (h *headScan) begin(b []byte) {
	h.method = methodEnd(b)
	h.active = h.method > 0
	h.lines, h.open, h.lastCR, h.at, h.head, h.hosts = 0, 0, false, 0, 0, 0
	h.framing, h.inBody, h.length, h.chunk = framedNone, false, 0, chunkSize
	h.ext, h.extOverflow, h.malformed, h.inName, h.sizeBegun = 0, false, false, false, false
	h.fixes, h.saved, h.host, h.hostSet = h.fixes[:0], h.saved[:0], [2]int{}, false
	h.hdr, h.oddHost = 0, false
}

// feed scans the next bytes of the request, buf[:n], rewriting its Host and
// Transfer-Encoding lines in place as tidyHost and tidyTE say (an insertion uses room in buf
// past n). It returns the new length, where the request ends in buf (end < m when bytes of
// the next request follow it: they are the caller's to keep), done once the header block
// ended (or scanning gave up), and bad when a line of it ended with a bare LF.
func (h *headScan) feed(buf []byte, n int) (m, end int, done, bad bool) {
	if !h.active {
		return n, n, true, false
	}
	if h.inBody {
		if h.framing == framedChunked {
			end := h.chunks(buf, 0, n)
			return n, end, true, h.malformed
		}
		if int64(n) < h.length {
			h.length -= int64(n)
			return n, n, true, false
		}
		h.active, h.inBody = false, false
		return n, int(h.length), true, false
	}
	// The state lives in locals while the lines go by; h.at counts the bytes before this
	// read until it ends.
	p, open, lastCR, lines := 0, h.open, h.lastCR, h.lines
	for {
		if lines > 0 && open == 0 && p < n {
			// A header line begins: one that begins with white space folds onto the line
			// before it (obs-fold), which llhttp refuses.
			if c := buf[p]; c == ' ' || c == '\t' {
				h.active = false
				return n, n, true, true
			}
			h.inName = true
		}
		i := bytes.IndexByte(buf[p:n], '\n')
		// (A Host or Content-Length or Content-Type line's name is read as the scan reads it
		// below, inlined: a few comparisons for the other lines, not a call.)
		if h.inName && lines > 0 && (i < 0 || open > 0 ||
			!plainHostName(buf[p:p+i]) && (buf[p]|0x20 != 'c' || !plainContentName(buf[p:p+i]))) {
			// A space before the line's colon: a name llhttp refuses (fasthttp kept it).
			seg := buf[p:n]
			if i >= 0 {
				seg = buf[p : p+i]
			}
			k := nameEnd(seg)
			if k < len(seg) && seg[k] == ' ' {
				h.active = false
				return n, n, true, true
			}
			h.inName = k == len(seg)
		}
		if i < 0 {
			if p < n {
				open += n - p
				lastCR = buf[n-1] == '\r'
			}
			h.open, h.lastCR, h.lines = open, lastCR, lines
			h.at += n
			if h.at > maxHeadScan {
				h.active = false
				return n, n, true, false
			}
			return n, n, false, false
		}
		cr := (i > 0 && buf[p+i-1] == '\r') || (i == 0 && lastCR)
		if !cr {
			h.active = false
			return n, n, true, true
		}
		length := open + i - 1
		lines++
		if lines == 1 {
			h.head = h.at + p + i + 1
			if h.lastLen > 0 && h.sameBlock(buf[p+i+1:n]) {
				// The block of the connection's last request again: its lines are what they
				// were, and so is what the scan finds in them (from the same state: the
				// request line changes none of it).
				end := h.bodyFrom(buf, n, p+i+1+h.lastLen)
				return n, end, true, h.malformed
			}
		} else if length == 0 {
			// (The block began in this read when h.head-h.at, its start in buf, is not
			// negative: h.at counts the bytes before this read.)
			h.remember(buf, h.head-h.at, p+i+1)
			end := h.bodyFrom(buf, n, p+i+1)
			return n, end, true, h.malformed
		} else if open > 0 {
			h.framing = framedUnknown // a line split between reads: not read
			h.hdr |= hdrSplit
		} else if length >= 5 && buf[p+4] == ':' &&
			binary.LittleEndian.Uint32(buf[p:])|0x20202020 == 'h'|'o'<<8|'s'<<16|'t'<<24 {
			if h.hosts == 0 && h.plainLen == length && string(buf[p:p+length]) == string(h.plain[:length]) {
				h.hosts = 1 // the plain Host line of the connection's last request
			} else {
				var grown int
				n, grown = h.tidyHost(buf, n, p, length)
				i += grown
			}
		} else if c := buf[p] | 0x20; c == 'c' && length >= 12 && binary.LittleEndian.Uint64(buf[p:])|lower8 == content8 {
			h.contentLine(buf[p : p+length])
		} else if c == 't' && length >= 18 && buf[p+17] == ':' &&
			bytes.EqualFold(buf[p:p+17], []byte("transfer-encoding")) {
			h.hdr |= hdrTE
			if h.tidyTE(buf, p, length) && h.framing == framedNone {
				h.framing = framedChunked
			} else {
				h.framing = framedUnknown
			}
		}
		open, lastCR, h.inName = 0, false, false
		p += i + 1
	}
}

// remember keeps the header block that ended at buf[end] (its blank line included) as the
// connection's last (see headScan.last), with what the scan found in it, when it began in this
// read (at from >= 0) and the scan's findings are the block's alone: nothing rewritten (fixes
// hold offsets and bytes of this read), no Host found odd (what tidyHost does with one depends
// on the room in buf), no Transfer-Encoding (tidyTE rewrites). Any other block forgets the last.
//
// A connection whose blocks differ from one request to the next (a request id, a changing
// Content-Length) would pay the comparison and the copy for nothing: after four requests that
// did not send the last block again, it is kept for one request in 16 only.
//
//go:noinline
func (h *headScan) remember(buf []byte, from, end int) {
	h.lastLen = 0
	if h.misses >= 4 {
		if h.misses++; h.misses%16 != 0 {
			return
		}
	}
	if from < 0 || end-from > len(h.last) || len(h.fixes) > 0 || h.oddHost || h.hdr&(hdrSplit|hdrTE) != 0 ||
		h.framing != framedNone && h.framing != framedLength {
		return
	}
	h.lastLen = copy(h.last[:], buf[from:end])
	h.lastHdr, h.lastFraming, h.lastLength, h.lastHosts = h.hdr, h.framing, h.length, h.hosts
}

// sameBlock reports whether b, the bytes of this read from where the header block begins,
// begins with the connection's last block (h.lastLen > 0), and then takes what the scan found
// in it.
//
//go:noinline
func (h *headScan) sameBlock(b []byte) bool {
	if k := h.lastLen; len(b) < k || string(b[:k]) != string(h.last[:k]) {
		h.misses++
		return false
	}
	h.hdr |= h.lastHdr
	h.misses = 0
	h.framing, h.length, h.hosts = h.lastFraming, h.lastLength, h.lastHosts
	return true
}

// plainHostName reports whether line, a whole header line, begins with "host:" in any case:
// a name without a space, which need not be searched for one (the comparison is the scan's:
// OR 0x20 maps no byte onto a space, nor a space onto a letter).
func plainHostName(line []byte) bool {
	return len(line) >= 5 && line[4] == ':' && binary.LittleEndian.Uint32(line)|lower4 == host4
}

// plainContentName is plainHostName for Content-Type and Content-Length, in any case.
func plainContentName(line []byte) bool {
	if len(line) < 13 || binary.LittleEndian.Uint64(line)|lower8 != content8 {
		return false
	}
	rest := line[8:]
	return line[12] == ':' && binary.LittleEndian.Uint32(rest)|lower4 == type4 ||
		len(line) >= 15 && line[14] == ':' && binary.LittleEndian.Uint32(rest)|lower4 == leng4 &&
			binary.LittleEndian.Uint16(rest[4:])|0x2020 == th2
}

// nameEnd returns where the first ':' or ' ' of seg is, or len(seg): what ends a header
// line's name, or makes it one llhttp refuses. A name is a few bytes: one loop over them costs
// less than two searches (IndexByte's calls).
func nameEnd(seg []byte) int {
	k := 0
	for k < len(seg) && seg[k] != ':' && seg[k] != ' ' {
		k++
	}
	return k
}

// contentLine reads a header line whose name begins with content- (any case): a
// Content-Length, or one HeaderLines tells of.
func (h *headScan) contentLine(line []byte) {
	rest := line[8:]
	switch {
	case len(line) >= 15 && line[14] == ':' && line[7] == '-' && binary.LittleEndian.Uint32(rest)|lower4 == leng4 &&
		binary.LittleEndian.Uint16(rest[4:])|0x2020 == th2:
		// content-length in any ASCII case (the bytes ORed with 0x20 are its letters' only
		// when they are letters, and the hyphen is checked as it is).
		h.contentLength(line[15:])
	case len(rest) >= 8 && binary.LittleEndian.Uint64(rest)|lower8 == encoding8:
		h.hdr |= hdrEncoding
	case binary.LittleEndian.Uint32(rest)|lower4 == type4 && bytes.Contains(line, formType):
		h.hdr |= hdrForm
	}
}

// The words contentLine compares header names with: "content-", "encoding" and "type" as
// little-endian integers, and the bits that lower ASCII letters (OR 0x20 maps some other
// bytes onto letters or '-' too, which only makes a line looked at more closely, or the
// request view parse the block).
var (
	content8  = binary.LittleEndian.Uint64([]byte("content-"))
	encoding8 = binary.LittleEndian.Uint64([]byte("encoding"))
	type4     = binary.LittleEndian.Uint32([]byte("type"))
	host4     = binary.LittleEndian.Uint32([]byte("host"))
	leng4     = binary.LittleEndian.Uint32([]byte("leng"))
	th2       = binary.LittleEndian.Uint16([]byte("th"))
)

const (
	lower8 = 0x2020202020202020
	lower4 = 0x20202020
)

// linesOf is HeaderLines of what a scan found (its hdr, once its header block has ended).
func linesOf(hdr uint8) HeaderLines {
	return HeaderLines{Known: hdr&hdrKnown != 0, Encoding: hdr&hdrEncoding != 0, Form: hdr&hdrForm != 0, BodyUnread: hdr&hdrUnread != 0}
}

// bodyFrom ends the scan of a header block that ended at buf[start] and counts the request's
// body: it returns where the request ends in buf[:n] (n when it goes on past this read, the
// scan then counting it in the next ones).
func (h *headScan) bodyFrom(buf []byte, n, start int) int {
	h.active = false
	if h.hdr&hdrSplit == 0 {
		h.hdr |= hdrKnown
	}
	switch h.framing {
	case framedNone:
		return start
	case framedLength:
		if rest := int64(n - start); rest < h.length {
			h.active, h.inBody, h.length = true, true, h.length-rest
			return n
		}
		return start + int(h.length)
	case framedChunked:
		h.active, h.inBody, h.chunk, h.length = true, true, chunkSize, 0
		return h.chunks(buf, start, n)
	}
	return n
}

// maxChunkSize bounds a chunk size the scan follows; past it (fasthttp refuses such a body
// anyway) the scan stops.
const maxChunkSize = 1 << 40

// maxChunkExt bounds the bytes of one chunk's extensions (the names and values after the
// size, the ';' and '=' between them not counted), as node bounds them (kMaxChunkExtensionsSize):
// past it node answers 413 and closes the connection. fasthttp skips any number of them, so a
// client could send a chunk-size line of gigabytes, read a byte at a time.
const maxChunkExt = 16 << 10

// chunkTooLarge is what node writes for a chunk whose extensions pass maxChunkExt.
const chunkTooLarge = "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n"

// chunks follows a chunked body through buf[i:n]: it returns where the body ends (its trailers'
// blank line included), or n when it goes on past this read. A line it cannot read (a size
// that is not hexadecimal, a chunk's data not followed by a line break) stops the scan, which
// leaves the bytes after it to fasthttp as they are.
func (h *headScan) chunks(buf []byte, i, n int) int {
	// sizeAt is where the chunk-size line in progress begins in buf, -1 when it began in an
	// earlier read (see shortenSize).
	sizeAt := -1
	if h.chunk == chunkSize && !h.sizeBegun {
		sizeAt = i
	}
	for i < n {
		c := buf[i]
		switch h.chunk {
		case chunkSize:
			switch {
			case c >= '0' && c <= '9', c|0x20 >= 'a' && c|0x20 <= 'f':
				h.sizeBegun = true
				d := int64(c - '0')
				if c > '9' {
					d = int64(c|0x20-'a') + 10
				}
				if h.length = h.length<<4 | d; h.length > maxChunkSize {
					return h.stopChunks(n)
				}
			case c == ';':
				shortenSize(buf, sizeAt, i)
				h.chunk, h.extAt = chunkExt, extStart
			case c == '\r':
				shortenSize(buf, sizeAt, i)
				h.chunk, h.extAt = chunkExt, extCR
			case c == '\n':
				shortenSize(buf, sizeAt, i)
				h.endSizeLine()
			case c == ' ' || c == '\t':
				return h.refuseChunks(n) // `5 `: fasthttp read it, llhttp refuses it
			default:
				return h.stopChunks(n)
			}
			i++
		case chunkExt:
			if !h.extByte(c) {
				return h.refuseChunks(n)
			}
			if h.chunk == chunkExt && c != '\r' && c != ';' && c != '=' {
				if h.ext++; h.ext > maxChunkExt {
					h.extOverflow = true
					return h.stopChunks(n)
				}
			}
			i++
		case chunkData:
			k := int64(n - i)
			if k > h.length {
				k = h.length
			}
			i += int(k)
			if h.length -= k; h.length == 0 {
				h.chunk = chunkDataEnd
			}
		case chunkDataEnd:
			switch c {
			case '\r':
			case '\n':
				h.chunk, sizeAt = chunkSize, i+1
			default:
				return h.stopChunks(n)
			}
			i++
		case chunkTrailer:
			i++
			switch c {
			case '\r':
				h.lastCR = true
			case '\n':
				h.active, h.inBody = false, false
				return i
			case ' ', '\t', ':':
				return h.refuseChunks(n) // a folded trailer line, or one without a name
			default:
				h.chunk, h.inName, h.lastCR = chunkTrailerLine, true, false
			}
		case chunkTrailerLine:
			switch {
			case c == '\n':
				if !h.lastCR {
					return h.refuseChunks(n) // a trailer line ending with a bare LF
				}
				h.chunk, h.lastCR = chunkTrailer, false
			case c == ':':
				h.inName = false
			case h.inName && (c == ' ' || c == '\t'):
				return h.refuseChunks(n) // `X-T : a`
			}
			h.lastCR = c == '\r'
			i++
		}
	}
	return n
}

// maxSizeDigits is the most digits fasthttp reads in a chunk size (maxHexIntChars on 64-bit
// machines): past them it refuses the request, leading zeros counted.
const maxSizeDigits = 15

// shortenSize rewrites the digits of a chunk size, buf[from:to], that fasthttp would refuse
// for their number alone: node reads any number of leading zeros (`0000000000000000005` is
// 5; only a size past 64 bits is its HPE_INVALID_CHUNK_SIZE), fasthttp no more than
// maxSizeDigits digits. The size's significant digits move to the front (one zero stays for a
// size of 0) and the line keeps its length: a ';' and zeros follow them, an extension fasthttp
// skips as it skips every extension. from is -1 when the line began in an earlier read, whose
// bytes have gone on: such a line is left as it is.
func shortenSize(buf []byte, from, to int) {
	if from < 0 || to-from <= maxSizeDigits {
		return
	}
	b := buf[from:to]
	z := 0
	for z < len(b)-1 && b[z] == '0' {
		z++
	}
	sig := len(b) - z
	if sig > maxSizeDigits-1 { // more than the scan follows (maxChunkSize): never here
		return
	}
	copy(b, b[z:])
	b[sig] = ';'
	for k := sig + 1; k < len(b); k++ {
		b[k] = '0'
	}
}

// endSizeLine ends a chunk-size line: the data of its chunk follows, or, for a chunk of size 0,
// the trailers.
func (h *headScan) endSizeLine() {
	h.ext, h.sizeBegun = 0, false
	if h.length == 0 {
		h.chunk = chunkTrailer
	} else {
		h.chunk = chunkData
	}
}

// stopChunks gives up following a chunked body.
func (h *headScan) stopChunks(n int) int {
	h.active, h.inBody = false, false
	return n
}

// refuseChunks gives up following a chunked body whose line llhttp refuses (feed's bad).
func (h *headScan) refuseChunks(n int) int {
	h.malformed = true
	return h.stopChunks(n)
}

// extByte follows byte c of a chunk-size line's extensions, as llhttp does; false when llhttp
// refuses it. The line's LF ends it (endSizeLine).
func (h *headScan) extByte(c byte) bool {
	switch h.extAt {
	case extCR:
		if c != '\n' {
			return false
		}
		h.endSizeLine()
		return true
	case extStart:
		switch {
		case c == ';':
		case tokenChar[c]:
			h.extAt = extName
		default:
			return false // `5;` then the line's end, `5; a`, `5;"q"`
		}
		return true
	case extName, extToken:
		switch {
		case tokenChar[c]:
		case c == '=' && h.extAt == extName:
			h.extAt = extValue
		case c == ';':
			h.extAt = extStart
		case c == '\r':
			h.extAt = extCR
		default:
			return false
		}
		return true
	case extValue:
		switch {
		case tokenChar[c]:
			h.extAt = extToken
		case c == '"':
			h.extAt = extQuoted
		case c == ';':
			h.extAt = extStart
		case c == '\r':
			h.extAt = extCR
		default:
			return false
		}
		return true
	case extQuoted:
		switch {
		case c == '"':
			h.extAt = extQuotedDone
		case c == '\\':
			h.extAt = extQuotedPair
		case !quotedChar[c]:
			return false
		}
		return true
	case extQuotedPair:
		if c != '\t' && (c < 0x20 || c == 0x7f) {
			return false
		}
		h.extAt = extQuoted
		return true
	case extQuotedDone:
		switch c {
		case ';':
			h.extAt = extStart
		case '\r':
			h.extAt = extCR
		default:
			return false
		}
		return true
	}
	return false
}

// contentLength reads a Content-Length value; one that is not digits alone, or a second one,
// leaves the body's end unknown (fasthttp or node refuses the request, or reads it otherwise).
func (h *headScan) contentLength(v []byte) {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	if h.framing != framedNone || len(v) == 0 || len(v) > 15 {
		h.framing = framedUnknown
		return
	}
	var l int64
	for _, c := range v {
		if c < '0' || c > '9' {
			h.framing = framedUnknown
			return
		}
		l = l*10 + int64(c-'0')
	}
	h.framing, h.length = framedLength, l
}

// tidyTE rewrites, in place, a Transfer-Encoding line (buf[p:p+length]) that node reads and
// fasthttp refuses, keeping what it replaced for restore: a value that ends in chunked after
// other codings (`gzip, chunked`: node reads the chunks and passes the body on still encoded)
// keeps only its chunked, the rest made spaces; any other value but chunked alone renames the
// line Xransfer-Encoding, which fasthttp ignores (node reads `gzip` followed by a line
// `chunked`). Whether node reads the request at all is nodeReads's to say, from the lines as
// they were sent. It reports whether the line, as fasthttp reads it now, is chunked alone.
func (h *headScan) tidyTE(buf []byte, p, length int) bool {
	v0, v1 := p+18, p+length
	for v0 < v1 && (buf[v0] == ' ' || buf[v0] == '\t') {
		v0++
	}
	for v1 > v0 && (buf[v1-1] == ' ' || buf[v1-1] == '\t') {
		v1--
	}
	const chunked = "chunked"
	if v1-v0 == len(chunked) && bytes.EqualFold(buf[v0:v1], []byte(chunked)) {
		return true
	}
	off := h.at + p - h.head
	last := v1 - len(chunked)
	if last > v0 && bytes.EqualFold(buf[last:v1], []byte(chunked)) {
		k := last
		for k > v0 && (buf[k-1] == ' ' || buf[k-1] == '\t') {
			k--
		}
		if k > v0 && buf[k-1] == ',' {
			h.save(buf[p:p+length], off, 0)
			for j := v0; j < last; j++ {
				buf[j] = ' '
			}
			return true
		}
	}
	h.save(buf[p:p+1], off, 0)
	buf[p] = 'X'
	return false
}

// tidyHost rewrites, in place, a Host line (buf[p:p+length], CRLF not included, all of it in
// this read) that node reads and fasthttp refuses, keeping what it replaced for restore:
//   - a value that is not a plain host name (`localhost: 2525`, `a b`, `a:b:c`, `a%zz`)
//     becomes as many x's (one holding a control character is left: node refuses it too);
//   - an empty value gets an x (in a space after the colon, or inserted when buf has room);
//   - a second Host line is renamed Xost (node keeps both; fasthttp refuses two).
//
// It returns the new length of buf's contents and how many bytes the line grew.
func (h *headScan) tidyHost(buf []byte, n, p, length int) (int, int) {
	h.hosts++
	off := h.at + p - h.head
	if h.hosts > 1 {
		h.save(buf[p:p+4], off, 0)
		buf[p] = 'X'
		return n, 0
	}
	v0 := p + 5
	for v0 < p+length && (buf[v0] == ' ' || buf[v0] == '\t') {
		v0++
	}
	v1 := p + length
	for v1 > v0 && (buf[v1-1] == ' ' || buf[v1-1] == '\t') {
		v1--
	}
	if plainHost(buf[v0:v1]) {
		if length <= len(h.plain) {
			h.plainLen = copy(h.plain[:], buf[p:p+length])
		}
		return n, 0
	}
	h.oddHost = true
	for _, c := range buf[v0:v1] {
		if c < ' ' && c != '\t' || c == 0x7f {
			return n, 0 // node refuses it too
		}
	}
	grown, from := 0, len(h.saved)
	switch {
	case v1 > v0:
		h.save(buf[p:p+length], off, 0)
		for i := v0; i < v1; i++ {
			buf[i] = 'x'
		}
	case length > 5: // white space only
		h.save(buf[p:p+length], off, 0)
		buf[p+5] = 'x'
	case n < len(buf): // "Host:"
		h.save(buf[p:p+length], off, 1)
		copy(buf[p+6:n+1], buf[p+5:n])
		buf[p+5] = 'x'
		n, grown = n+1, 1
	default:
		return n, 0 // no room: refused
	}
	h.host, h.hostSet = [2]int{from + v0 - p, from + v1 - p}, true
	return n, grown
}

// save keeps the original bytes b of a line at off in the header block, padded with spaces to
// the rewritten line's length.
func (h *headScan) save(b []byte, off, pad int) {
	from := len(h.saved)
	h.saved = append(h.saved, b...)
	for range pad {
		h.saved = append(h.saved, ' ')
	}
	h.fixes = append(h.fixes, hostFix{off, from, len(h.saved)})
}

// plainHost reports whether a Host value is a plain host name, with a port or none: letters,
// digits, dots, hyphens and underscores, then at most one colon and digits. Those are what
// clients send; anything else is rewritten (and put back) whether fasthttp would read it or not.
func plainHost(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for i, c := range v {
		if hostByte[c] {
			continue
		}
		if c != ':' {
			return false
		}
		for _, d := range v[i+1:] {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	return true
}

// hostByte marks the bytes of a plain host name.
var hostByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
	}
	return t
}()

// restore puts back the Host lines tidyHost rewrote in the request's raw header block (what
// mockd records and matches, as node's rawHeaders), and the first Host's value as fasthttp's
// Host (what the admin API builds its links from).
func (h *headScan) restore(hdr *fasthttp.RequestHeader) {
	if len(h.fixes) == 0 {
		return
	}
	raw := hdr.RawHeaders()
	for _, f := range h.fixes {
		if f.off >= 0 && f.off+f.to-f.from <= len(raw) {
			copy(raw[f.off:], h.saved[f.from:f.to])
		}
	}
	if h.hostSet {
		hdr.SetHostBytes(h.saved[h.host[0]:h.host[1]])
	}
	h.fixes, h.saved, h.hostSet = h.fixes[:0], h.saved[:0], false
}

// ambiguousLength reports whether a request names both Content-Length and Transfer-Encoding.
// fasthttp forgets the Transfer-Encoding of an empty chunked body, so the raw headers are read.
func ambiguousLength(ctx *fasthttp.RequestCtx) bool {
	raw := ctx.Request.Header.RawHeaders()
	return hasHeader(raw, "transfer-encoding") && hasHeader(raw, "content-length")
}

// badTransferEncoding reports whether a request names a Transfer-Encoding whose last coding
// (in the last Transfer-Encoding line) is not chunked, which llhttp refuses ("Request has
// invalid Transfer-Encoding": its body has no length), or names chunked before another
// coding, in that line or an earlier one ("Invalid Transfer-Encoding header value"); fasthttp
// reads `identity` as if the header were absent.
func badTransferEncoding(raw []byte) bool {
	seen, chunkedLast := false, false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		const name = "transfer-encoding"
		if len(line) <= len(name) || line[len(name)] != ':' || line[0]|0x20 != 't' ||
			!bytes.EqualFold(line[:len(name)], []byte(name)) {
			continue
		}
		for v := line[len(name)+1:]; ; {
			coding := v
			i := bytes.IndexByte(v, ',')
			if i >= 0 {
				coding, v = v[:i], v[i+1:]
			}
			if chunkedLast {
				return true // a coding after chunked
			}
			chunkedLast = bytes.EqualFold(bytes.Trim(coding, " \t\r"), []byte("chunked"))
			if i < 0 {
				break
			}
		}
		seen = true
	}
	return seen && !chunkedLast
}

// hasHeader reports whether the raw header block names the header (lower-case name).
func hasHeader(raw []byte, name string) bool {
	_, found := lastHeader(raw, name)
	return found
}

// lastHeader returns the value of the last line of the raw header block that names the header
// (lower-case name), as it stands after the colon.
func lastHeader(raw []byte, name string) (value []byte, found bool) {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if len(line) > len(name) && line[len(name)] == ':' && line[0]|0x20 == name[0] &&
			bytes.EqualFold(line[:len(name)], []byte(name)) {
			value, found = line[len(name)+1:], true
		}
	}
	return value, found
}

// nodeReads reports whether node's parser (llhttp, so Mountebank) reads a request that fasthttp
// read: one whose length is not ambiguous, whose method is one llhttp knows for HTTP (a method
// of its own, lower-case letters or RTSP's are refused), whose version is 0.9, 1.0, 1.1 or 2.0,
// whose request target is ASCII, and whose Transfer-Encoding, if any, ends in chunked. hdr is
// what the scan of its header block found (headScan.hdr): when it looked at every line and saw
// no Transfer-Encoding, the block is not searched for one again.
func nodeReads(ctx *fasthttp.RequestCtx, hdr uint8) bool {
	switch string(ctx.Method()) {
	case "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE",
		"COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "BIND",
		"REBIND", "UNBIND", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH",
		"NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "PURGE", "MKCALENDAR", "LINK", "UNLINK", "SOURCE",
		"QUERY":
	default:
		return false
	}
	switch string(ctx.Request.Header.Protocol()) {
	case "HTTP/1.1", "HTTP/1.0", "HTTP/0.9", "HTTP/2.0":
	default:
		return false
	}
	if !ascii(ctx.Request.Header.RequestURI()) {
		return false
	}
	if hdr&(hdrKnown|hdrTE) == hdrKnown {
		return true // no Transfer-Encoding: neither ambiguous nor a bad one
	}
	return !ambiguousLength(ctx) && !badTransferEncoding(ctx.Request.Header.RawHeaders())
}

// ascii reports whether b holds no byte past ASCII, eight bytes at a time.
func ascii(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// refuseUnreadable answers 400 and closes the connection of a request node would not read
// (nodeReads, with what the scan of its header block found).
func refuseUnreadable(ctx *fasthttp.RequestCtx, hdr uint8) bool {
	if nodeReads(ctx, hdr) {
		return false
	}
	ctx.Response.Reset()
	ctx.SetStatusCode(fasthttp.StatusBadRequest)
	ctx.SetConnectionClose()
	return true
}

// http09 is the version tidyRequestLine gives a request line that has none.
const http09 = " HTTP/0.9"

// tidyRequestLine rewrites, in place, a request line that llhttp (so Mountebank) reads and
// fasthttp refuses into one fasthttp reads the same way. b[:n] is the first read of a request
// (startsRequest); the new length is returned. Only a whole request line ending in CRLF is
// touched:
//   - spaces after the method and after the request target beyond the first are removed
//     (`GET  /x  HTTP/1.1`: llhttp skips them);
//   - a target `*?query` or `**` becomes `/*?query`, `/**` (node's URL parser reads `*` as the
//     path "/*", which fasthttp gives a lone `*` too, but it refuses `*` followed by anything);
//   - a line without a version (`GET /x`: llhttp reads HTTP/0.9, headers and all) gets
//     " HTTP/0.9", which fasthttp reads as a request without keep-alive, as node does.
//
// Insertions need room in b past n; without it the line is left as it is (and refused). A
// request pipelined behind another in the same read gets a read of its own (see carry in
// idle.go), unless the scan could not find where the one before it ends.
func tidyRequestLine(b []byte, n int) int {
	return tidyRequestLineAt(b, n, bytes.IndexByte(b[:n], ' '))
}

// tidyRequestLineAt is tidyRequestLine for a read whose first space is b[m] (as begin found it
// reading the method: no IndexByte call for it again).
func tidyRequestLineAt(b []byte, n, m int) int {
	// The usual line: one space, a target not starting with '*', one space and a version.
	if m > 0 && m+1 < n && b[m+1] != ' ' && b[m+1] != '*' {
		if t := bytes.IndexByte(b[m+1:n], ' '); t > 0 && m+t+2 < n && b[m+t+2] == 'H' {
			return n
		}
	}
	lf := bytes.IndexByte(b[:n], '\n')
	if lf < 1 || b[lf-1] != '\r' {
		return n
	}
	end := lf - 1 // the CR ending the line
	m = bytes.IndexByte(b[:end], ' ')
	if m <= 0 {
		return n
	}
	// Extra spaces after the method.
	if k := spacesAt(b[:end], m+1); k > 0 {
		if m+1+k == end {
			return n // nothing but spaces after the method
		}
		n, end = cut(b, n, m+1, k), end-k
	}
	target := m + 1
	if target == end {
		return n // no target
	}
	t := bytes.IndexByte(b[target:end], ' ')
	if t >= 0 {
		t += target // the space after the target
		if k := spacesAt(b[:end], t+1); k > 0 && t+1+k < end {
			n, end = cut(b, n, t+1, k), end-k
		}
	}
	targetEnd := end
	if t >= 0 {
		targetEnd = t
	}
	if targetEnd-target >= 2 && b[target] == '*' && n < len(b) {
		copy(b[target+1:n+1], b[target:n])
		b[target] = '/'
		n, end = n+1, end+1
		if t >= 0 {
			t++
		}
	}
	if t < 0 && n+len(http09) <= len(b) {
		copy(b[end+len(http09):n+len(http09)], b[end:n])
		copy(b[end:], http09)
		n += len(http09)
	}
	return n
}

// spacesAt counts the spaces in line from i.
func spacesAt(line []byte, i int) int {
	k := 0
	for i+k < len(line) && line[i+k] == ' ' {
		k++
	}
	return k
}

// cut removes k bytes of b[:n] at i and returns the new length.
func cut(b []byte, n, i, k int) int {
	copy(b[i:], b[i+k:n])
	return n - k
}
