package request

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/jsvalue"
)

// FromHTTP fills r from ctx as Mountebank's httpRequest.js builds its request
// object, copying every byte it keeps: nothing from ctx outlives the handler.
// IPv4 clients are reported as "::ffff:a.b.c.d", as node does for a server
// listening on all interfaces (Mountebank's default).
func FromHTTP(ctx *fasthttp.RequestCtx, r *Request) {
	FromHTTPListen(ctx, r, false)
}

// FromHTTPListen is FromHTTP for a server bound to one address: with
// plainIPv4 set, IPv4 clients are reported as "a.b.c.d", as node does for a
// server bound to an IPv4 host (mb --host 127.0.0.1).
func FromHTTPListen(ctx *fasthttp.RequestCtx, r *Request, plainIPv4 bool) {
	FromHTTPLimit(ctx, r, plainIPv4, DefaultMaxBody)
}

// DefaultMaxBody is the limit of a decoded body FromHTTPListen applies.
const DefaultMaxBody = 64 << 20

// FromHTTPLimit is FromHTTPListen with a limit on the body once decoded (gzip
// or br): a body that inflates past maxBody bytes is not kept, and
// r.BodyTooLarge says so. Decoding stops at the limit, so a small compressed
// body that would inflate to gigabytes never takes more than maxBody bytes.
func FromHTTPLimit(ctx *fasthttp.RequestCtx, r *Request, plainIPv4 bool, maxBody int) {
	FromHTTPLines(ctx, r, plainIPv4, maxBody, HeaderLines{})
}

// HeaderLines is what a scan of the header block as it arrived found in the lines that decide
// whether FromHTTPLines parses the block to read the body (netconn.HeaderLines, made as the
// connection read them): Known when every header line was looked at; then Encoding when a
// line's name begins with content-encoding, Form when one's begins with content-type and the
// line holds application/x-www-form-urlencoded, in any ASCII case. Lines beginning with white
// space are not looked for: a server that scans refuses them. BodyUnread says that the server
// read the body past without keeping it, as nothing that answers the request reads it: the
// request then has none (what ctx holds is not the body).
type HeaderLines struct{ Known, Encoding, Form, BodyUnread bool }

// FromHTTPLines is FromHTTPLimit told what the header lines hold: when lines is Known, the block
// is not searched for them again (headersNeeded, hasHeaderFold: a few hundred instructions
// over a client's usual half dozen lines).
func FromHTTPLines(ctx *fasthttp.RequestCtx, r *Request, plainIPv4 bool, maxBody int, lines HeaderLines) {
	fromHTTP(ctx, r, plainIPv4, maxBody, lines, false)
}

// FromHTTPView is FromHTTPLines without the copy of a large body: a body of more than
// maxArena bytes that needs no decoding (no gzip or br, valid UTF-8) is Body as it lies in
// ctx's body buffer, which fasthttp reads the connection's next request into once the handler
// returns (the server's ctx keeps its buffer). A 1 MiB upload was a 1 MiB allocation and copy
// a request (and the page faults of fresh memory) that a stub on method and path never reads.
//
// So the caller, before the handler returns, either recycles r (Recycle or Reuse with recycle
// set: nothing holds r's strings, and the buffer may serve the next request as the arena does)
// or calls KeepBody, which takes the buffer from ctx for whatever holds the body.
func FromHTTPView(ctx *fasthttp.RequestCtx, r *Request, plainIPv4 bool, maxBody int, lines HeaderLines) {
	fromHTTP(ctx, r, plainIPv4, maxBody, lines, true)
}

// KeepBody leaves the body FromHTTPView made r view (if it did) to whatever holds r's strings
// past the handler (the journal, a script's state, a proxy's recording, an answer echoing it):
// the buffer is taken from ctx, so that fasthttp reads the next request into another one and
// never writes over it. It is then the garbage collector's, as any body before FromHTTPView.
func KeepBody(ctx *fasthttp.RequestCtx, r *Request) {
	if r.bodyView == nil {
		return
	}
	ctx.Request.SwapBody(nil)
	r.bodyView = nil
}

func fromHTTP(ctx *fasthttp.RequestCtx, r *Request, plainIPv4 bool, maxBody int, lines HeaderLines, viewBody bool) {
	req := &ctx.Request
	method, uri, raw := req.Header.Method(), req.Header.RequestURI(), req.Header.RawHeaders()
	var body []byte
	if !lines.BodyUnread {
		body = req.Body()
	}
	// One arena holds every string below; a large body gets its own.
	n := len(method) + 2*len(uri) + 2*len(raw) // the raw headers, kept and parsed
	if len(body) <= maxArena {
		n += len(body)
	}
	r.reserve(n)
	r.Method = methodString(r, method)
	path, search := nodeURL(r.own(uri), true)
	r.Path = path
	r.Query = ParseQuery(r.Query[:0], search)

	switch {
	case len(raw) == 0:
		// No header line came (or the request was built in-process): fasthttp's own view then
		// holds only what it adds itself, such as an HTTP/1.0 request's Connection: close,
		// which the client never sent and Mountebank does not record.
		synthetic := !req.Header.IsHTTP11() && req.Header.ConnectionClose()
		for k, v := range req.Header.All() {
			if synthetic && bytes.EqualFold(k, []byte("Connection")) {
				continue
			}
			if !protoKey(k) {
				r.Headers = append(r.Headers, KV{r.latin1(k), r.latin1(TrimOWS(v))})
			}
		}
	case lines.Known && !lines.Encoding && (len(body) == 0 || !lines.Form),
		!lines.Known && (len(body) == 0 && !hasHeaderFold(raw, "content-encoding") || len(body) > 0 && !headersNeeded(raw, true)):
		// Nothing below needs a header (no encoding to undo, and with a body no Content-Type
		// naming a form): parse them when something asks (HeaderList). Unless lines tell,
		// without a body only an encoding matters, looked for around the block's few hyphens
		// (a GET's lines have fewer hyphens than lines); with one, each line is looked at once
		// (headersNeeded).
		r.rawHeaders = r.own(raw)
	default:
		r.Headers = r.parseRawHeaders(r.Headers[:0], raw)
	}

	var enc string
	var encArray bool
	if r.rawHeaders == nil { // parsed: they may name an encoding
		enc, encArray, _ = mbHeader(r.Headers, "Content-Encoding")
	}
	r.Body, r.BodyMissing, r.BodyTooLarge, r.bodyView = "", false, false, nil
	switch {
	case !encArray && (enc == "gzip" || enc == "br"):
		w := &limitWriter{max: maxBody}
		var err error
		if enc == "gzip" {
			_, err = fasthttp.WriteGunzip(w, body)
		} else {
			_, err = fasthttp.WriteUnbrotli(w, body)
		}
		switch {
		case w.over:
			r.BodyTooLarge = true
		case err != nil:
			r.BodyMissing = true
		case jsvalue.Valid(w.b):
			r.Body = view(w.b, true) // decoded into memory of its own, which nothing writes again
		default:
			r.Body = jsvalue.DecodeUTF8(w.b)
		}
	case len(body) <= maxArena && jsvalue.Valid(body):
		r.Body = r.str(body)
	case viewBody && jsvalue.Valid(body):
		r.Body, r.bodyView = view(body, true), body
	default:
		r.Body = jsvalue.DecodeUTF8(body)
	}

	r.Form, r.HasForm = r.Form[:0], false
	if r.Body != "" {
		if ct, ctArray, ok := mbHeader(r.Headers, "Content-Type"); ok && !ctArray && IsURLEncodedForm(ct) {
			r.Form = ParseQuery(r.Form, r.Body)
			r.HasForm = true
		}
	}

	// The address is formatted only if a predicate, the journal or a script asks for it.
	r.addr, r.plainIPv4, r.addrDone = ctx.RemoteAddr(), plainIPv4, false
}

// limitWriter collects what is written to it up to max bytes; past that it
// fails, and over says so.
type limitWriter struct {
	b    []byte
	max  int
	over bool
}

var errTooLarge = errors.New("the decoded body is larger than the limit")

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.max > 0 && len(w.b)+len(p) > w.max {
		w.over = true
		return 0, errTooLarge
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// formType is the media type IsURLEncodedForm accepts, spelled as it must appear.
var formType = []byte("application/x-www-form-urlencoded")

// IsURLEncodedForm reports whether a Content-Type value names
// application/x-www-form-urlencoded as httpRequest.js decides it (exact case).
func IsURLEncodedForm(contentType string) bool {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return jsvalue.TrimSpace(contentType) == "application/x-www-form-urlencoded"
}

// mbHeader looks a header up as headersMap.get does: the first distinct name
// matching case-insensitively, whose values (same exact name) combine as
// ofRaw combines them. isArray is true when that gives an array.
func mbHeader(headers []KV, name string) (value string, isArray, found bool) {
	exact := ""
	for _, kv := range headers {
		if EqualFoldASCII(kv.Name, name) {
			exact, found = kv.Name, true
			break
		}
	}
	if !found {
		return "", false, false
	}
	n := 0
	for _, kv := range headers {
		if kv.Name != exact {
			continue
		}
		// arrayifyIfExists: an empty current value is replaced, not extended.
		if n == 0 || (n == 1 && value == "") {
			value, n = kv.Value, 1
			continue
		}
		n++
	}
	return value, n > 1, true
}

func nodeAddr(a net.Addr, plainIPv4 bool) (ip, from string) {
	if a == nil {
		return "", ""
	}
	var port int
	var nip net.IP
	switch t := a.(type) {
	case *net.TCPAddr:
		nip, port = t.IP, t.Port
	case *net.UDPAddr:
		nip, port = t.IP, t.Port
	default:
		host, p, err := net.SplitHostPort(a.String())
		if err != nil {
			return a.String(), a.String()
		}
		nip = net.ParseIP(host)
		port, _ = strconv.Atoi(p)
		if nip == nil {
			ip = host
		}
	}
	if nip != nil {
		if v4 := nip.To4(); v4 != nil {
			// Most clients: both strings from one allocation (ip is the head of from).
			var buf [32]byte
			b := buf[:0]
			if !plainIPv4 {
				b = append(b, "::ffff:"...)
			}
			for i, x := range v4 {
				if i > 0 {
					b = append(b, '.')
				}
				b = append(b, octets[x]...)
			}
			n := len(b)
			if port != 0 {
				b = strconv.AppendInt(append(b, ':'), int64(port), 10)
			}
			from = string(b)
			return from[:n], from
		}
		ip = nip.String()
	}
	if port != 0 {
		from = ip + ":" + strconv.Itoa(port)
	} else {
		from = ip
	}
	return ip, from
}

// octets holds the decimal form of every byte value, for formatting IPv4 addresses.
var octets = func() (t [256]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// parseRawHeaders splits raw header bytes ("Name: value\r\n"...) into KVs in
// arrival order, values trimmed and decoded as latin1, like node rawHeaders. A header named
// __proto__ is left out, as Mountebank loses it (see protoKey).
func (r *Request) parseRawHeaders(dst []KV, raw []byte) []KV {
	// The line ends and the colons are found by bytes.IndexByte (a word or more at a time):
	// a byte at a time was ~400 instructions of a request of two header lines.
	for len(raw) > 0 {
		var line []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			line, raw = raw, nil
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		c := bytes.IndexByte(line, ':')
		if c < 0 {
			continue
		}
		name := TrimOWS(line[:c])
		if protoKey(name) {
			continue
		}
		dst = append(dst, KV{r.latin1(name), r.latin1(TrimOWS(line[c+1:]))})
	}
	return dst
}

// protoKey reports whether a header name is __proto__ (exactly: the name is case-sensitive
// there). Mountebank's headersMap.ofRaw collects the raw headers into a plain object, where
// assigning result['__proto__'] sets the object's prototype instead of adding a key, so the
// header is in none of its requests' headers (recorded, matched, scripted or proxied).
func protoKey(name []byte) bool {
	return len(name) == 9 && string(name) == "__proto__"
}

// hasHeaderFold reports whether a line of the raw header block starts (after white space)
// with name, a lowercase ASCII header name holding a '-', in any case. It looks only around
// the block's hyphens, which few header lines have.
func hasHeaderFold(raw []byte, name string) bool {
	d := strings.IndexByte(name, '-')
	for off := 0; ; {
		k := bytes.IndexByte(raw[off:], '-')
		if k < 0 {
			return false
		}
		k += off
		off = k + 1
		start := k - d
		if start < 0 || start+len(name) > len(raw) {
			continue
		}
		j := 0
		for j < len(name) && raw[start+j]|0x20 == name[j] {
			j++
		}
		if j < len(name) {
			continue
		}
		for start > 0 && (raw[start-1] == ' ' || raw[start-1] == '\t') {
			start--
		}
		if start == 0 || raw[start-1] == '\n' {
			return true
		}
	}
}

// methodString is the request's method: one of the common ones is the constant, not copied
// into r's arena (a copy and two slice checks for every request).
func methodString(r *Request, method []byte) string {
	switch string(method) { // (a switch on the bytes as a string does not copy them)
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "HEAD":
		return "HEAD"
	case "OPTIONS":
		return "OPTIONS"
	}
	return r.str(method)
}

// headersNeeded reports whether the raw header block must be parsed for the body: a line
// starts (after white space) with content-encoding in any ASCII case, or, withBody, with
// content-type and holds the form's type as IsURLEncodedForm must find it. The name of a parsed
// line is its text before ':' with white space trimmed, so no other line can name the encoding
// or a form's Content-Type. One look at each line's first byte rules out most of them.
func headersNeeded(raw []byte, withBody bool) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		// Eight bytes at a time, in any case (OR 0x20 lowers ASCII letters; it maps some
		// other bytes onto letters or '-' too, which only makes the block parsed).
		if len(line) < len("content-type") || binary.LittleEndian.Uint64(line)|lower8 != content8 {
			continue
		}
		rest := line[8:]
		if len(rest) >= 8 && binary.LittleEndian.Uint64(rest)|lower8 == encoding8 ||
			withBody && binary.LittleEndian.Uint32(rest)|lower4 == type4 && bytes.Contains(line, formType) {
			return true
		}
	}
	return false
}

// The words headersNeeded compares header names with: "content-", "encoding" and "type" as
// little-endian integers, and the bits that lower ASCII letters.
var (
	content8  = binary.LittleEndian.Uint64([]byte("content-"))
	encoding8 = binary.LittleEndian.Uint64([]byte("encoding"))
	type4     = binary.LittleEndian.Uint32([]byte("type"))
)

const (
	lower8 = 0x2020202020202020
	lower4 = 0x20202020
)

// TrimOWS is b without the spaces and tabs at its ends (a header value's optional white space).
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// asciiBytes reports whether b has no byte past ASCII (jsvalue.ASCII): every header name and
// value of a request is checked.
func asciiBytes(b []byte) bool { return jsvalue.ASCII(unsafe.String(unsafe.SliceData(b), len(b))) }

// latin1 copies b into the arena as a string, reading each byte as one latin1 character
// as node does for header values.
func (r *Request) latin1(b []byte) string {
	if asciiBytes(b) {
		return r.str(b)
	}
	r.reserve(2 * len(b))
	start := len(r.arena)
	for _, c := range b {
		r.arena = utf8.AppendRune(r.arena, rune(c))
	}
	return view(r.arena[start:len(r.arena):len(r.arena)], true)
}
