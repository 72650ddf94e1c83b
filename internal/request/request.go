// Package request holds the protocol-neutral view of one request to an
// imposter, as Mountebank's predicates, journal and scripts see it.
package request

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// KV is one name/value pair, in the order it arrived.
type KV struct{ Name, Value string }

// Request is the protocol-neutral view of one request, as Mountebank's
// predicates and journal see it (the object httpRequest.js or tcpRequest.js
// builds). A Request owns all its strings: nothing in it refers to memory of
// the connection it came from.
//
// A Request is not safe for concurrent mutation; once filled it may be read
// by several goroutines, but the lazily-filled parts (Memo, JSON, HeaderList)
// must then be used from one goroutine at a time.
type Request struct {
	Method string
	// Path is the URL path as node's new URL(req.url).pathname gives it:
	// dot segments resolved, percent-encoding kept as sent.
	Path string
	// Query is decoded as node's querystring.parse: '+' is a space, %xx is
	// decoded; order kept; repeated keys repeated.
	Query []KV
	// Headers has the names in their original case and order as sent (node
	// rawHeaders), values trimmed and decoded as latin1 like node does. Read it
	// through HeaderList: FromHTTP leaves it unparsed until something asks.
	Headers []KV
	// rawHeaders is the header block FromHTTP has not parsed into Headers yet (arena memory).
	rawHeaders []byte
	// bodyView is the fasthttp body buffer Body lies in, when FromHTTPView made it so: memory
	// the next request is read into unless KeepBody takes it (see Holds).
	bodyView []byte
	// Body is decoded per Content-Encoding gzip/br like httpRequest.js.
	Body string
	// BodyMissing is true when the body could not be decoded (bad gzip or br
	// data): Mountebank then has no body at all (undefined), not "".
	BodyMissing bool
	// BodyTooLarge is true when the body inflates past the limit FromHTTPLimit
	// was given; Body is then empty and the request must be refused (413).
	BodyTooLarge bool
	// Form is set only when Content-Type is application/x-www-form-urlencoded
	// and the body is non-empty; HasForm tells.
	Form    []KV
	HasForm bool
	// data is the payload of a tcp request (base64 in binary mode): see Data.
	data string
	// dataRaw is a binary tcp request's payload as received (in the arena), which Data shows
	// as base64: BinaryText makes the text predicates compare from it rather than decoding Data,
	// and the base64 is made only when something asks for Data (dataLazy until then).
	dataRaw  []byte
	dataLazy bool
	// binText and binLower are BinaryText's answers, made once a request (done says which).
	binText, binLower string
	binDone           uint8
	// TCP marks a tcp request: Mountebank's tcp request has only
	// requestFrom, ip and data.
	TCP bool
	// Object, when set, is the whole request as a custom protocol's program sent it
	// (POST /imposters/:id/_requests): predicates and the journal see it instead of the
	// fields above.
	Object *config.Object

	// ip and requestFrom are formatted from addr on first use (IP, RequestFrom):
	// most requests never need them.
	ip, requestFrom string
	addr            net.Addr
	plainIPv4       bool
	addrDone        bool
	// client is the text last worked out for a client address with this request view, which
	// Reset keeps: the http server keeps one view a connection, whose requests all come from
	// one address (the connection's, the same *net.TCPAddr each time).
	client clientText

	jsonDone bool
	jsonOK   bool
	jsonVal  any
	memo     []memoEntry

	// arena holds the bytes of the strings FromHTTPListen made: one buffer per request
	// rather than one allocation per string. Recycle keeps it for the next request; see
	// Recycle for who may keep its strings.
	arena []byte

	// kept is a value of the caller's that r keeps from one use to the next (see Kept): Reset
	// leaves it.
	kept any
}

type memoEntry struct {
	key uint64
	val any
}

// Reset clears r for reuse, keeping allocated capacity.
func (r *Request) Reset() {
	q, h, f, m, kept, client := r.Query[:0], r.Headers[:0], r.Form[:0], r.memo[:0], r.kept, r.client
	// Element by element, not clear: a request has a few query pairs and headers, fewer
	// than a runtime call's cost, and the calls spilled this function's registers. (Many
	// headers are parsed only for a predicate or script that reads them, which costs far
	// more. The memo holds one or two entries: a script's slab.)
	for i := range r.Query {
		r.Query[i] = KV{}
	}
	for i := range r.Headers {
		r.Headers[i] = KV{}
	}
	for i := range r.Form {
		r.Form[i] = KV{}
	}
	for i := range r.memo {
		r.memo[i] = memoEntry{}
	}
	// Cleared in place, then the kept parts set: a composite literal that reads r was built
	// on the stack and copied.
	*r = Request{}
	r.Query, r.Headers, r.Form, r.memo, r.kept, r.client = q, h, f, m, kept, client
}

// Kept is where a caller keeps a value of its own with r from one use to the next (a script's
// slab, with the pooled request rather than in a pool of its own): Reset and the pool leave it
// as it is. The caller empties what it keeps there before r is released.
func (r *Request) Kept() *any { return &r.kept }

var pool = sync.Pool{New: func() any { return &Request{} }}

// Acquire returns an empty Request from a pool. Release it when done.
func Acquire() *Request { return pool.Get().(*Request) }

// Release resets r and returns it to the pool; r must not be used afterwards.
// Strings taken from r stay valid: their memory is left to the garbage collector.
func Release(r *Request) {
	r.Reset()
	pool.Put(r)
}

// maxArena is the largest string buffer Recycle keeps for the next request.
const maxArena = 64 << 10

// Recycle is Release for a request none of whose strings is referenced any more (nothing
// recorded it, no script saw it): the memory of its strings is reused by the next request
// taken from the pool, which keeps the plain request path free of allocations. When in
// doubt, call Release.
//
// The ownership rule of this memory: the strings of a Request (Method, Path, Query, Headers,
// Body, Form and the values derived from them) may live in its arena, which belongs to the
// Request and, after Recycle, to the next request taken from the pool. So whoever takes a
// Request from Acquire owns it and decides, once the request is answered, between Recycle and
// Release: it may Recycle only when nothing that outlives the answer holds one of those
// strings. Whatever keeps a string past the answer (the journal of recorded requests, a
// script and its state, a proxy recording, a response built from the request: copy, lookup,
// decorate, templates) either copies it (strings.Clone) or makes its owner call Release. The
// http imposter's handler is that owner: it recycles only a request answered by a static
// response, or by one built by native script calls alone whose body is not in this memory
// (Holds), unrecorded, on an imposter without script predicates (imposter.Recyclable).
func Recycle(r *Request) {
	a := r.arena[:0]
	r.Reset()
	if cap(a) <= maxArena {
		r.arena = a
	}
	pool.Put(r)
}

// Kept-request bounds: what a request kept by its owner for the next one (Reuse) keeps of the
// memory the last one grew, so that each of 10,000 idle keep-alive connections holds a small
// request: maxConnArena bytes of strings, maxConnKVs name/value pairs in each list, and
// maxConnMemo memo entries.
const (
	maxConnArena = 8 << 10
	maxConnKVs   = 64
	maxConnMemo  = 8
)

// Reuse resets r for its owner's next request rather than returning it to the pool: an http
// connection keeps one request from one of its requests to the next (see
// netconn.Kept), which spares the pool's work and keeps the memory on the connection's own
// goroutine. recycle is the owner's choice between Recycle and Release (see Recycle): with it,
// the arena serves the next request, when it is no larger than maxConnArena; without it the
// arena is left to the strings made from it. Lists grown past the kept-request bounds by a
// large request are dropped too: the next request starts small. The owner gives r back with
// Recycle once it has no next request (its connection closed), or drops it.
func Reuse(r *Request, recycle bool) {
	a := r.arena[:0]
	r.Reset()
	if recycle && cap(a) <= maxConnArena {
		r.arena = a
	}
	if cap(r.Query) > maxConnKVs {
		r.Query = nil
	}
	if cap(r.Headers) > maxConnKVs {
		r.Headers = nil
	}
	if cap(r.Form) > maxConnKVs {
		r.Form = nil
	}
	if cap(r.memo) > maxConnMemo {
		r.memo = nil
	}
}

// Holds reports whether b lies in the memory Recycle would give the next request (the arena
// the request's strings were last made in, or the body buffer FromHTTPView left Body in, which
// the connection reads its next request into unless KeepBody took it): a caller that hands b on past the answer (an
// answer's body, written after the handler returns) must then Release the request instead.
// Memory of earlier arenas is never reused.
func (r *Request) Holds(b []byte) bool {
	return within(b, r.arena) || within(b, r.bodyView)
}

// within reports whether b starts in the memory of buf's capacity.
func within(b, buf []byte) bool {
	if len(b) == 0 || cap(buf) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p < lo+uintptr(cap(buf))
}

// reserve makes room for n more bytes in the arena. A new arena never reuses the old one's
// memory: strings already made from it stay valid. It is no larger than asked for (FromHTTPListen
// asks once for all it needs): a request a script sees keeps its arena to the end, so the arena
// is garbage with every such request; a recycled request's arena grows to the largest seen.
func (r *Request) reserve(n int) {
	if cap(r.arena)-len(r.arena) < n {
		r.arena = make([]byte, 0, max(n, 2*cap(r.arena), 64))
	}
}

// own copies b into the arena and returns the copy, which is never written again.
func (r *Request) own(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	r.reserve(len(b))
	start := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[start:len(r.arena):len(r.arena)]
}

// SetData sets Data to a tcp request's payload b as Mountebank shows it: base64 in binary
// mode, otherwise the text (invalid UTF-8 decoded as node decodes it), made in r's arena when it
// can be (see Recycle): b is not kept. In binary mode the payload is kept as received and its
// base64 made when Data is first asked for: a binary data predicate compares the payload
// itself, and most requests need nothing else (no journal, template or script reads it).
func (r *Request) SetData(b []byte, binary bool) {
	switch {
	case len(b) == 0:
		r.data = ""
	case binary:
		r.reserve(base64.StdEncoding.EncodedLen(len(b)) + len(b)) // the payload, then its base64
		r.dataRaw, r.dataLazy = r.own(b), true
	case utf8.Valid(b):
		r.data = r.str(b)
	default:
		r.data = jsvalue.DecodeUTF8(b)
	}
}

// SetDataText sets Data to s as it is (a tcp request made from text: a recorded or custom one,
// a test's) and returns r.
func (r *Request) SetDataText(s string) *Request {
	r.data, r.dataRaw, r.dataLazy = s, nil, false
	return r
}

// Data is the payload of a tcp request as Mountebank shows it (base64 in binary mode), made
// in r's arena on first use for a request SetData made in binary mode.
func (r *Request) Data() string {
	if r.dataLazy {
		n := base64.StdEncoding.EncodedLen(len(r.dataRaw))
		r.reserve(n)
		start := len(r.arena)
		r.arena = r.arena[:start+n]
		out := r.arena[start : start+n : start+n]
		base64.StdEncoding.Encode(out, r.dataRaw)
		r.data, r.dataLazy = view(out, true), false
	}
	return r.data
}

// DataLen is len(r.Data()), without making it.
func (r *Request) DataLen() int {
	if r.dataLazy {
		return base64.StdEncoding.EncodedLen(len(r.dataRaw))
	}
	return len(r.data)
}

// BinaryText is a binary tcp request's payload as the text a predicate compares (Mountebank's
// Buffer.from(data, 'base64').toString(): invalid UTF-8 replaced as node replaces it), lowercased
// as JavaScript's toLowerCase when lower is set, without decoding Data's base64 again. Made in the
// arena when the payload is ASCII (the common case: no allocation), and once per request. It is
// false for a request SetData did not make in binary mode (a recorded or custom one): decode Data.
func (r *Request) BinaryText(lower bool) (string, bool) {
	if r.dataRaw == nil {
		return "", false
	}
	if r.binDone&1 == 0 {
		if utf8.Valid(r.dataRaw) {
			r.binText = view(r.dataRaw, true)
		} else {
			r.binText = jsvalue.DecodeUTF8(r.dataRaw)
		}
		r.binDone |= 1
	}
	if !lower {
		return r.binText, true
	}
	if r.binDone&2 == 0 {
		r.binLower = r.lowerASCII(r.binText)
		r.binDone |= 2
	}
	return r.binLower, true
}

// BinaryData is a binary tcp request's payload as received, which Data shows as base64; false
// for a request SetData did not make in binary mode (see BinaryText). The caller must not
// modify it.
func (r *Request) BinaryData() ([]byte, bool) { return r.dataRaw, r.dataRaw != nil }

// lowerASCII is jsvalue.ToLower(s), made in the arena when s is ASCII (one pass: the copy
// is taken into the arena only when it differs from s).
func (r *Request) lowerASCII(s string) string {
	r.reserve(len(s))
	start := len(r.arena)
	out := r.arena[start : start+len(s) : start+len(s)]
	changed := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return jsvalue.ToLower(s)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
			changed = true
		}
		out[i] = c
	}
	if !changed {
		return s
	}
	r.arena = r.arena[:start+len(s)]
	return view(out, true)
}

// str copies b into the arena as a string.
func (r *Request) str(b []byte) string { return view(r.own(b), true) }

// Memo returns the value a consumer cached on r under key with SetMemo.
// Consumers (internal/match) use it to parse a body at most once per request
// however many stubs read it. Valid until Reset.
func (r *Request) Memo(key uint64) (any, bool) {
	for i := range r.memo {
		if r.memo[i].key == key {
			return r.memo[i].val, true
		}
	}
	return nil, false
}

// SetMemo caches v on r under key, replacing an earlier value.
func (r *Request) SetMemo(key uint64, v any) {
	for i := range r.memo {
		if r.memo[i].key == key {
			r.memo[i].val = v
			return
		}
	}
	r.memo = append(r.memo, memoEntry{key, v})
}

// JSON returns r.Body parsed as JSON.parse would parse it (objects as
// map[string]any, numbers as float64), parsing it at most once. ok is false
// when the body is not JSON.
func (r *Request) JSON() (v any, ok bool) {
	if !r.jsonDone {
		r.jsonDone = true
		r.jsonVal, r.jsonOK = ParseJSON(r.Body)
	}
	return r.jsonVal, r.jsonOK
}

// IP returns the client's address as node formats socket.remoteAddress.
func (r *Request) IP() string {
	r.resolveAddr()
	return r.ip
}

// RequestFrom returns "ip:port" of the client, as Mountebank records it.
func (r *Request) RequestFrom() string {
	r.resolveAddr()
	return r.requestFrom
}

// ClientAddrPort returns the client's address and port (IPv4 unmapped), the zero value when
// they are not known (not a TCP client).
func (r *Request) ClientAddrPort() netip.AddrPort {
	if !r.addrDone {
		if t, ok := r.addr.(*net.TCPAddr); ok && t != nil {
			ap := t.AddrPort()
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		return netip.AddrPort{}
	}
	// Formatted as node does (nodeAddr): requestFrom is ip, ':' and the port.
	i := strings.LastIndexByte(r.requestFrom, ':')
	if i < 0 || r.requestFrom[:i] != r.ip {
		return netip.AddrPort{}
	}
	ip, err := netip.ParseAddr(r.ip)
	port, perr := strconv.ParseUint(r.requestFrom[i+1:], 10, 16)
	if err != nil || perr != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(port))
}

// CopyClient gives r the client address of from, formatted on first use as from would.
func (r *Request) CopyClient(from *Request) {
	r.ip, r.requestFrom, r.addr, r.plainIPv4, r.addrDone = from.ip, from.requestFrom, from.addr, from.plainIPv4, from.addrDone
}

// SetClient sets the client's address as IP and RequestFrom return it.
func (r *Request) SetClient(ip, requestFrom string) {
	r.ip, r.requestFrom, r.addr, r.addrDone = ip, requestFrom, nil, true
}

func (r *Request) resolveAddr() {
	if !r.addrDone {
		r.addrDone = true
		a, ok := r.addr.(*net.TCPAddr)
		if ok && a != nil && a == r.client.addr && r.plainIPv4 == r.client.plain {
			r.ip, r.requestFrom = r.client.ip, r.client.from
		} else {
			r.ip, r.requestFrom = nodeAddr(r.addr, r.plainIPv4)
			if ok && a != nil {
				r.client = clientText{a, r.plainIPv4, r.ip, r.requestFrom}
			}
		}
		r.addr = nil
	}
}

// clientText is a client address (kept, so that no other address is made at its place while
// it is) and its text as IP and RequestFrom return it.
type clientText struct {
	addr     *net.TCPAddr
	plain    bool
	ip, from string
}

// ShareInto makes c a copy of what scripts see of r (method, path, body, data, query, headers,
// form and client) that shares r's strings and, while r has not parsed them, its raw header
// block, which c then parses on first use into memory of its own. The name/value lists are
// copied, in one allocation. r must not be recycled (Recycle) while c is in use.
func (r *Request) ShareInto(c *Request) {
	*c = Request{Method: r.Method, Path: r.Path, Body: r.Body, BodyMissing: r.BodyMissing,
		HasForm: r.HasForm, data: r.Data(), TCP: r.TCP, Object: r.Object, rawHeaders: r.rawHeaders}
	c.CopyClient(r)
	n := len(r.Query) + len(r.Form)
	if r.rawHeaders == nil {
		n += len(r.Headers)
	}
	if n == 0 {
		return
	}
	kvs := make([]KV, 0, n)
	kvs = append(kvs, r.Query...)
	if r.rawHeaders == nil {
		kvs = append(kvs, r.Headers...)
	}
	kvs = append(kvs, r.Form...)
	q := len(r.Query)
	h := len(kvs) - len(r.Form)
	c.Query, c.Headers, c.Form = kvs[:q:q], kvs[q:h:h], kvs[h:]
}

// Size is about how many bytes r's strings take: method, path, body, data, the name/value
// lists and the header block not parsed yet. The journal's byte budget counts with it.
func (r *Request) Size() int {
	n := len(r.Method) + len(r.Path) + len(r.Body) + r.DataLen() + len(r.rawHeaders) + len(r.ip) + len(r.requestFrom)
	for _, list := range [][]KV{r.Query, r.Headers, r.Form} {
		for _, kv := range list {
			n += len(kv.Name) + len(kv.Value) + 8
		}
	}
	return n
}

// HeaderList returns the headers in arrival order, parsing them on first use.
func (r *Request) HeaderList() []KV {
	if r.rawHeaders != nil {
		raw := r.rawHeaders
		r.rawHeaders = nil
		r.Headers = r.parseRawHeaders(r.Headers[:0], raw)
	}
	return r.Headers
}

// RawHeaderBlock returns the header block as it arrived ("Name: value" lines, each ending in
// "\r\n"), which HeaderList parses, while nothing has parsed it yet; nil once parsed, or for a
// request whose headers did not come as a block. It is r's memory: read only, valid until r is
// reset. A proxy writes a request's lines on from it without making the list (see
// proxy.Request.From).
func (r *Request) RawHeaderBlock() []byte { return r.rawHeaders }

// SetRawHeaders sets r's headers to the lines of block, a header block as it arrived, copied
// into r and parsed on first use, as FromHTTP leaves a block (HeaderList parses it).
func (r *Request) SetRawHeaders(block []byte) {
	r.Headers = r.Headers[:0]
	r.rawHeaders = r.own(block)
	if r.rawHeaders == nil {
		r.rawHeaders = []byte{} // an empty block, not parsed: none of its lines
	}
}

// Header returns the value of the first header named name, case-insensitively,
// and whether there is one.
func (r *Request) Header(name string) (string, bool) {
	if r.rawHeaders != nil {
		if v, found, sure := r.rawHeader(name); sure {
			return v, found
		}
	}
	return r.listedHeader(name)
}

// PlainHeaderName reports whether name is one Header can look for in the raw header block as
// it is: ASCII, without ':', without white space at its ends. A caller that reads one name
// for many requests (a template's request.headers.X) checks it once and reads with
// PlainHeader.
func PlainHeaderName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 0x80 || c == ':' {
			return false
		}
	}
	return name == "" || !isOWS(name[0]) && !isOWS(name[len(name)-1])
}

// PlainHeader is Header for a name PlainHeaderName accepts, without checking it again.
func (r *Request) PlainHeader(name string) (string, bool) {
	if r.rawHeaders != nil {
		if v, found, sure := r.rawHeaderLines(name); sure {
			return v, found
		}
	}
	return r.listedHeader(name)
}

// listedHeader is Header read from the parsed headers.
func (r *Request) listedHeader(name string) (string, bool) {
	for _, kv := range r.HeaderList() {
		if EqualFoldASCII(kv.Name, name) {
			return kv.Value, true
		}
	}
	return "", false
}

// rawHeader is Header read from the header block not parsed yet, without parsing the others
// (templates read one or two headers of many). sure is false where parseRawHeaders would make
// the names or the value differ from the bytes sent (a byte past ASCII, read as latin1): then
// HeaderList decides.
func (r *Request) rawHeader(name string) (value string, found, sure bool) {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 0x80:
			return "", false, false
		case c == ':':
			return "", false, true // a parsed name is the text before the line's first ':'
		}
	}
	if name != "" && (isOWS(name[0]) || isOWS(name[len(name)-1])) {
		return "", false, true // a parsed name has its white space trimmed
	}
	return r.rawHeaderLines(name)
}

// rawHeaderLines is rawHeader for a name PlainHeaderName accepts: the lines looked at.
func (r *Request) rawHeaderLines(name string) (value string, found, sure bool) {
	raw := r.rawHeaders
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		// The line's name is name when the line starts with it (after white space) and a ':'
		// follows (after white space): name holds no ':', so that is the line's first.
		// A name with a byte past ASCII cannot match name (all ASCII), as parsed or not.
		for len(line) > 0 && isOWS(line[0]) {
			line = line[1:]
		}
		// (Most lines differ from name in their first byte: two bytes EqualFoldASCII finds
		// alike are equal once ORed with 0x20.)
		// (equalFoldASCII is inlined here; a call to a helper checking the length again was not.)
		if len(line) <= len(name) || name != "" && line[0]|0x20 != name[0]|0x20 || !equalFoldASCII(line[:len(name)], name) {
			continue
		}
		key, rest := line[:len(name)], line[len(name):]
		for len(rest) > 0 && isOWS(rest[0]) {
			rest = rest[1:]
		}
		if len(rest) == 0 || rest[0] != ':' || protoKey(key) {
			continue
		}
		val := rest[1:]
		if len(val) > 0 && val[len(val)-1] == '\r' {
			val = val[:len(val)-1]
		}
		val = TrimOWS(val)
		for _, b := range val {
			if b >= 0x80 {
				return "", false, false
			}
		}
		return view(val, true), true, true // the block is arena memory, as parsed strings are
	}
	return "", false, true
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

// MBHeader returns the values of a header as Mountebank's headersMap.get gives them from the
// recorded headers: those of the first name matching case-insensitively, combined as ofRaw
// combines them (one value, or several, an empty first value replaced by the next). It returns
// nil when there is no such header.
func (r *Request) MBHeader(name string) []string {
	headers := r.HeaderList()
	value, isArray, found := mbHeader(headers, name)
	switch {
	case !found:
		return nil
	case !isArray:
		return []string{value}
	}
	var exact string
	for _, kv := range headers {
		if EqualFoldASCII(kv.Name, name) {
			exact = kv.Name
			break
		}
	}
	var values []string
	for _, kv := range headers {
		if kv.Name != exact {
			continue
		}
		if len(values) == 1 && values[0] == "" {
			values[0] = kv.Value
			continue
		}
		values = append(values, kv.Value)
	}
	return values
}

// EqualFoldASCII reports whether a and b are equal with ASCII letters compared case-insensitively
// (other bytes must be identical).
func EqualFoldASCII(a, b string) bool { return equalFoldASCII(a, b) }

// equalFoldASCII is EqualFoldASCII for a header block's bytes or a string.
func equalFoldASCII[T ~string | ~[]byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := a[i], b[i]
		if x != y {
			if 'A' <= x && x <= 'Z' {
				x += 'a' - 'A'
			}
			if 'A' <= y && y <= 'Z' {
				y += 'a' - 'A'
			}
			if x != y {
				return false
			}
		}
	}
	return true
}
