package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// rawTransport exchanges a request with an origin over a connection of fasthttp's HostClient
// (fasthttp.RoundTripper; no streamed bodies) and also keeps the origin's header block as it
// arrived. Node hands Mountebank a response's headers in their order and case (rawHeaders),
// and Mountebank records them so; fasthttp parses Content-Length, Content-Type,
// Content-Encoding, Server, Set-Cookie, Connection and Transfer-Encoding into fields of their
// own, losing both. The block is peeked from the connection's reader before fasthttp parses the
// same bytes, so nothing is read twice.
type rawTransport struct {
	// exs holds each request's exchange while Forward runs. A plain map under a lock: its
	// slots are reused once deleted, where sync.Map allocates an entry for every store.
	mu  sync.Mutex
	exs map[*fasthttp.Request]*exchange
}

// exchange is what Forward and RoundTrip share about one request: its context, and the
// header block of the answer read last. Exchanges are pooled (with their Forward's call): the
// block's buffer is reused by the next request (the answer is built from a copy of its bytes).
type exchange struct {
	ctx context.Context // nil: none
	raw []byte          // the header block as it arrived, when has
	// lines are where raw's header lines are (checkHeadLines), when has.
	lines []headerLine
	has   bool
	// direct says the request goes out as its header says, without a URI (see
	// Proxy.exchange): its request target is set, and the URI fasthttp would parse is not.
	direct bool
	// plain says the answer read last had a plain head (see plainHead), which fasthttp did
	// not parse: its Content-Type and Content-Encoding are these (in raw), not the response
	// header's.
	plain       bool
	ctype, cenc []byte
	// conn is the connection of the round trip that ctx's notice ends (see doneNotifier),
	// set while the exchange is registered with it. told says a notice may still come after
	// the round trip: the exchange is then not pooled, lest it end another's connection.
	conn net.Conn
	told bool
	// deadline bounds the exchange, its every attempt, in Unix nanoseconds (0: Timeout from
	// each attempt's start).
	deadline int64
	// last is the length of the head block at the start of raw that the exchange read last
	// and found plain (lines are its lines, lastHead its plainHead), 0 when there is none:
	// an origin mostly sends the same head again (but for a Date, once a second), and a head
	// equal to it is read as it was (peekHeader), without checkHeadLines and plainHead again
	// (about 1.9k instructions an answer). Kept while the exchange is pooled: raw's bytes stay.
	last     int
	lastHead head
	// hop is how many of this process's proxies the request has gone through, this one
	// included (see Enter); 0: not known.
	hop int
	// head is the head of a direct request written as it is, when hasHead (see rawHead): the
	// request's header then holds its method alone. Kept while the exchange is pooled.
	head    []byte
	hasHead bool
	// headOf, headRaw, headMethod, headTarget and headBody say what head was written for,
	// when headOf is not 0: the id of the proxy, the client's header block, the lengths of the
	// method and target (in head) and of the body. A client mostly sends the same block
	// again, and the head written for it is the head again (see sameHead).
	headOf                           uint64
	headRaw                          []byte
	headMethod, headTarget, headBody int
}

// sameHead reports whether ex.head is what proxy id's rawHead writes for method, target, the
// client's header block raw and a body of bodyLen bytes, which it wrote last (keepHead):
// hasHead is then set. Writing it again was ~0.65k instructions a proxied request; comparing
// is one look at the block's bytes and the request line's.
func (ex *exchange) sameHead(id uint64, method string, target, raw []byte, bodyLen int) bool {
	m, t := len(method), len(target)
	if ex.headOf != id || ex.headBody != bodyLen || ex.headMethod != m || ex.headTarget != t || noRepeats.Load() ||
		string(ex.head[:m]) != method || string(ex.head[m+1:m+1+t]) != string(target) || string(ex.headRaw) != string(raw) {
		return false
	}
	ex.hasHead = true
	return true
}

// sameTarget reports whether uri is the target of the head ex wrote last for proxy id (see
// sameHead): requestTarget then takes it as it is (a target requestTarget gave has no '?' at
// its end, nor a byte it refuses), without looking at each of its bytes again.
func (ex *exchange) sameTarget(id uint64, uri []byte) bool {
	m, t := ex.headMethod, ex.headTarget
	return ex.headOf == id && t == len(uri) && !noRepeats.Load() && string(ex.head[m+1:m+1+t]) == string(uri)
}

// keepHead notes what ex.head was written for (see sameHead), when rawHead wrote it (hasHead).
func (ex *exchange) keepHead(id uint64, method string, target, raw []byte, bodyLen int) {
	if !ex.hasHead {
		ex.headOf = 0
		return
	}
	ex.headOf, ex.headRaw = id, append(ex.headRaw[:0], raw...)
	ex.headMethod, ex.headTarget, ex.headBody = len(method), len(target), bodyLen
}

// doneNotifier is a context that tells a receiver when it ends, without an allocation, a lock
// of its own or a goroutine per call (netconn's connection context: see netconn.NotifyDone).
// context.AfterFunc on it took about seven allocations and four locks a proxied request.
type doneNotifier interface {
	NotifyDone(r interface{ ContextDone(context.Context) }) bool
	StopNotifyDone(r interface{ ContextDone(context.Context) }) bool
}

// ContextDone ends the round trip in progress when its context ends: the connection's
// deadline is set in the past, so the read or write waiting on the origin returns at once.
// conn was set before the exchange was registered and is cleared only once it is not.
func (ex *exchange) ContextDone(context.Context) {
	if c := ex.conn; c != nil {
		_ = c.SetDeadline(longAgo)
	}
}

// begin starts req's exchange ex, with ctx (or nil) its context for the round trips of Forward.
// A direct exchange is given to roundTrip by its caller; any other is registered for
// RoundTrip, which HostClient.Do calls with the request alone.
func (t *rawTransport) begin(req *fasthttp.Request, ex *exchange, ctx context.Context, direct bool) {
	ex.ctx, ex.direct = ctx, direct
	if !direct {
		t.mu.Lock()
		if t.exs == nil {
			t.exs = map[*fasthttp.Request]*exchange{}
		}
		t.exs[req] = ex
		t.mu.Unlock()
	}
}

// end forgets req's exchange ex, which must not be used afterwards but by a next begin, and
// only when it is reusable.
func (t *rawTransport) end(req *fasthttp.Request, ex *exchange) {
	if !ex.direct {
		t.mu.Lock()
		delete(t.exs, req)
		t.mu.Unlock()
	}
	ex.ctx, ex.has, ex.direct, ex.plain, ex.ctype, ex.cenc, ex.hop, ex.deadline, ex.hasHead = nil, false, false, false, nil, nil, 0, 0, false
	ex.raw = ex.raw[:0]
}

// reusable reports whether an exchange that ended may serve another request: no notice of its
// context may come any more (see told), and its buffers are small.
func (ex *exchange) reusable() bool {
	return !ex.told && cap(ex.raw) <= 64<<10 && cap(ex.head) <= 64<<10 && cap(ex.headRaw) <= 64<<10
}

// exchangeOf returns req's exchange, nil when it has none.
func (t *rawTransport) exchangeOf(req *fasthttp.Request) *exchange {
	t.mu.Lock()
	ex := t.exs[req]
	t.mu.Unlock()
	return ex
}

// block returns the header block of the answer read last (nil when none was kept); it is
// valid until end.
func (ex *exchange) block() []byte {
	if !ex.has {
		return nil
	}
	return ex.raw
}

// noRepeats turns off taking a head for the one read before it (see exchange.last) and a
// plain answer for the one made before it (see Proxy.plain): tests set it to compare what
// Forward makes of answers with what it made of each read alone.
var noRepeats atomic.Bool

// maxStale bounds the closed kept-alive connections one request sets aside (peerClosed) before
// it takes the next one as it is.
const maxStale = 64

// longAgo is a deadline already past: setting it ends a blocked read or write at once.
var longAgo = time.Unix(1, 0)

// RoundTrip sends req on a connection of hc and reads the answer into resp, both within
// Timeout. retry tells hc whether another connection may be tried: after any failure once the
// connection was had, but a body past the limit or a cancelled request. The connection goes back
// to hc's pool when neither side asked to close it, and is closed otherwise. The context Forward
// gave req ends the exchange when it is done (the client went away, or the imposter was deleted
// and its drain time ran out): the connection's deadline is set in the past, so the read or write
// waiting on the origin returns at once instead of after Timeout.
func (t *rawTransport) RoundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) (retry bool, err error) {
	ex := t.exchangeOf(req)
	if ex == nil {
		ex = &exchange{} // not Forward's request: nothing reads what is kept
	}
	return t.roundTrip(hc, req, resp, ex)
}

// roundTrip is RoundTrip of req's exchange ex. Its one deferred call does what the round
// trip must undo, in this order: the reader given back, the hop forgotten (see Enter), the
// context's notice stopped, the connection released or closed. One, for the compiler to
// open-code it (a deferred call per step went through the runtime's defer records, as
// Forward's did: ~300 instructions a request for the two).
func (t *rawTransport) roundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response, ex *exchange) (retry bool, err error) {
	ex.has, ex.plain = false, false
	ctx := ex.ctx
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	cc, err := hc.AcquireConn(Timeout, req.ConnectionClose())
	if err != nil {
		return false, err
	}
	// A request that is not sent twice (a POST: see exchange) does not go on a kept-alive
	// connection the origin has closed since its last answer, where it would fail: it goes on
	// another, as Mountebank's goes on a new socket. (An idempotent one fails there and is sent
	// again: no look on its way.)
	for stale := 0; !cc.LastUseTime().IsZero() && !idempotent(&req.Header) && stale < maxStale && peerClosed(cc.Conn()); stale++ {
		hc.CloseConn(cc)
		if cc, err = hc.AcquireConn(Timeout, req.ConnectionClose()); err != nil {
			return false, err
		}
	}
	var (
		reuse    bool
		br       *bufio.Reader
		hop      Hop
		notifier doneNotifier // registered with (NotifyDone)
		stop     func() bool  // the AfterFunc's
	)
	defer func() {
		if br != nil {
			hc.ReleaseReader(br) // before the connection is released or closed
		}
		hop.Leave()
		switch {
		case notifier != nil:
			if notifier.StopNotifyDone(ex) {
				ex.conn = nil // no notice comes now
			} else {
				ex.told = true // the notice may come yet: see exchange
				reuse = false  // the deadline may be set: the connection is not used again
			}
		case stop != nil:
			if !stop() {
				reuse = false // the deadline may be set: the connection is not used again
			}
		}
		if (notifier != nil || stop != nil) && err != nil && ctx.Err() != nil {
			retry, err = false, ctx.Err()
		}
		if reuse {
			hc.ReleaseConn(cc)
		} else {
			hc.CloseConn(cc)
		}
	}()
	conn := cc.Conn()
	// The deadlines are set before the context may set them in the past, never after: a client
	// that went between the AfterFunc's deadline and a later one left the exchange waiting for
	// Timeout (TestProxyToASilentOriginIsCancelled failed so under load). One deadline bounds
	// the request's writing and the answer's reading (a read deadline set again after the
	// write was ~300 instructions of the poller's timers a request).
	var deadline time.Time
	if ex.deadline != 0 {
		deadline = time.Unix(0, ex.deadline) // the exchange's, for its every attempt (see Proxy.exchange)
	} else {
		deadline = time.Now().Add(Timeout)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return true, err
	}
	if n, ok := ctx.(doneNotifier); ok {
		ex.conn = conn
		if !n.NotifyDone(ex) { // it ended already
			ex.conn = nil
			if err := ctx.Err(); err != nil {
				return false, err
			}
			return false, context.Canceled
		}
		notifier = n
	} else if ctx != nil && ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = conn.SetDeadline(longAgo) })
	}
	if ex.hop > 0 {
		// An imposter of this process that the request reaches on conn counts it as
		// having gone through ex.hop proxies (see MaxHops).
		hop = Enter(conn, ex.hop)
	}
	resp.ParseNetConn(conn)
	if err := send(hc, conn, req, ex); err != nil {
		return true, err
	}
	if ctx != nil && ctx.Err() != nil {
		_ = conn.SetDeadline(longAgo) // it went while the request was sent: see above
	}
	if req.Header.IsHead() {
		resp.SkipBody = true
	}
	resp.Header.DisableNormalizing()
	br = hc.AcquireReader(conn)
	reuse, retry, err = readAnswer(hc, br, req, resp, ex)
	return retry, err
}

// readAnswer reads the answer to req from br, a reader of its connection, into resp (see
// RoundTrip), keeping its head in ex; reuse says the connection may take another request.
func readAnswer(hc *fasthttp.HostClient, br *bufio.Reader, req *fasthttp.Request, resp *fasthttp.Response, ex *exchange) (reuse, retry bool, err error) {
	last := ex.raw[:ex.last]
	if noRepeats.Load() {
		last = nil
	}
	ex.last = 0 // until this answer is read: raw and lines may change
	block, skip, lines, same, err := peekHeader(br, ex.lines[:0], last)
	if !same {
		ex.lines = lines
	}
	if err != nil {
		return false, false, err // node's parser refused the answer, or it ended in its head
	}
	rd := br
	if block != nil {
		if same {
			ex.raw, ex.has = last, true // its bytes, and its lines (ex.lines)
		} else {
			ex.raw, ex.has = append(ex.raw[:0], block...), true
		}
		if block[0] != 'H' { // RTSP/ or ICE/, which node reads as HTTP's and fasthttp refuses
			if rd, err = asHTTP(br, block, skip); err != nil {
				return false, false, err
			}
		} else if h, ok := plainOf(ex, same); ok && !resp.SkipBody {
			// The head was read (checkHead) and is plain: its body is read as fasthttp reads
			// it after parsing the same head, without the parse (about 4.5k instructions).
			if _, err := br.Discard(skip + len(block)); err != nil {
				return false, false, err // it is buffered: not reached
			}
			resp.Header.SetStatusCode(h.status)
			resp.Header.SetContentLength(h.length)
			if err := resp.ReadBody(br, hc.MaxResponseBodySize); err != nil {
				ex.has = false
				return false, !errors.Is(err, fasthttp.ErrBodyTooLarge), err
			}
			ex.plain, ex.ctype, ex.cenc = true, h.ctype, h.cenc
			ex.last, ex.lastHead = len(block), h
			return !req.ConnectionClose() && !h.close, false, nil
		}
	}
	if err := resp.ReadLimitBody(rd, hc.MaxResponseBodySize); err != nil {
		ex.has = false
		return false, !errors.Is(err, fasthttp.ErrBodyTooLarge), err
	}
	return rd == br && !req.ConnectionClose() && !resp.ConnectionClose(), false, nil
}

// plainOf is plainHead of ex's head block (raw, at lines): the one kept of the head before it
// when the block is that head again (same: see exchange.last).
func plainOf(ex *exchange, same bool) (head, bool) {
	if same {
		return ex.lastHead, true
	}
	return plainHead(ex.raw, ex.lines)
}

// head is what fasthttp's parse of a plain head (plainHead) makes of it that an exchange uses.
type head struct {
	status, length int
	ctype, cenc    []byte // the values of the last Content-Type and Content-Encoding, or nil
	close          bool   // the connection is not used again
}

// plainHead reads block, a response head that checkHeadLines read as node does (status line
// and header lines, CRLF each, up to the blank line; lines are where its header lines are), as
// fasthttp's ResponseHeader parse reads it,
// when it is plain: HTTP/1.1, a status from 200 on but 204 and 304 (whose answers have a
// body), one Content-Length of at most 15 digits, and no Transfer-Encoding or Trailer header.
// Then its status, its length, the last Content-Type and Content-Encoding values and whether
// the connection closes (the last Connection value, trimmed, is "close", compared as fasthttp
// compares it) are fasthttp's; any other head is not plain, and fasthttp parses it. checkHead
// refuses what fasthttp would read otherwise: a folded line, a byte fasthttp refuses in a
// value, a name that is not a token, a second Content-Length.
func plainHead(block []byte, lines []headerLine) (h head, ok bool) {
	const version = "HTTP/1.1 "
	if len(block) < len(version)+3 || string(block[:len(version)]) != version {
		return h, false
	}
	c := block[len(version):]
	h.status = int(c[0]-'0')*100 + int(c[1]-'0')*10 + int(c[2]-'0') // digits: checkHead
	if h.status < 200 || h.status == 204 || h.status == 304 {
		return h, false
	}
	haveLength := false
	for _, l := range lines {
		// Each name of interest has a length of its own: a name is compared with the one of
		// its length only (most are none of them).
		name := block[l.name:l.colon]
		value := func() []byte { return block[l.value:l.valueEnd] }
		switch len(name) {
		case len("content-type"):
			if tokenFold(name, "content-type") {
				h.ctype = value()
			}
		case len("content-encoding"):
			if tokenFold(name, "content-encoding") {
				h.cenc = value()
			}
		case len("connection"):
			if tokenFold(name, "connection") {
				h.close = string(value()) == "close"
			}
		case len("content-length"):
			if !tokenFold(name, "content-length") {
				continue
			}
			v := value()
			if haveLength || len(v) == 0 || len(v) > 15 {
				return h, false
			}
			haveLength = true
			for _, d := range v {
				if d < '0' || d > '9' {
					return h, false
				}
				h.length = h.length*10 + int(d-'0')
			}
		case len("transfer-encoding"):
			if tokenFold(name, "transfer-encoding") {
				return h, false
			}
		case len("trailer"):
			if tokenFold(name, "trailer") {
				return h, false
			}
		}
	}
	return h, haveLength
}

// tokenFold reports whether name, a token (checkHead), is lower (lower-case letters and '-', of
// its length) in any case. Setting the 0x20 bit folds a letter to lower case and leaves '-';
// no other token character becomes a lower-case letter or '-' by it.
func tokenFold(name []byte, lower string) bool {
	n := len(lower)
	if n < 8 {
		for i := range n {
			if name[i]|0x20 != lower[i] {
				return false
			}
		}
		return true
	}
	// Eight bytes at a time, the last eight overlapping the words before them: the bit is set
	// in each byte of the word as in each byte alone (all the names compared are 8 bytes or
	// longer but "trailer"; a byte-by-byte fold was ~400 instructions a plain answer's head).
	const fold = 0x2020202020202020
	word := func(s string) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8)) }
	for i := 0; i+8 < n; i += 8 {
		if binary.LittleEndian.Uint64(name[i:])|fold != word(lower[i:]) {
			return false
		}
	}
	return binary.LittleEndian.Uint64(name[n-8:])|fold == word(lower[n-8:])
}

// asHTTP is a reader of the answer whose head block (peekHeader's, skip bytes into br) begins
// with an RTSP/ or ICE/ version, as node (so Mountebank) reads it: an HTTP answer of that
// version (HTTP/1.0 for one fasthttp does not know). The version is read off br, the rest
// follows it; the connection is not used again.
func asHTTP(br *bufio.Reader, block []byte, skip int) (*bufio.Reader, error) {
	sp := bytes.IndexByte(block, ' ')
	version := "HTTP/1.0"
	if sp >= 3 && string(block[sp-3:sp]) == "1.1" {
		version = "HTTP/1.1"
	}
	if _, err := br.Discard(skip + sp); err != nil {
		return nil, err
	}
	return bufio.NewReader(io.MultiReader(strings.NewReader(version), br)), nil
}

// send writes req, the request of exchange ex, to conn within its write deadline (RoundTrip
// sets it); running out of it is fasthttp.ErrTimeout, as the client reports it. A direct
// request is written as its head (ex.head, or its header's) and body are: req.Write would parse
// its URI (the request has no Host header fasthttp knows: node's is "host"), to write the
// target that header holds already.
func send(hc *fasthttp.HostClient, conn net.Conn, req *fasthttp.Request, ex *exchange) error {
	w := hc.AcquireWriter(conn)
	defer hc.ReleaseWriter(w)
	var err error
	if ex.direct {
		if ex.hasHead {
			_, err = w.Write(ex.head)
		} else {
			err = req.Header.Write(w)
		}
		if err == nil && len(req.Body()) > 0 {
			_, err = w.Write(req.Body())
		}
	} else {
		err = req.Write(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fasthttp.ErrTimeout
	}
	return err
}

// peekHeader returns the response's status line and header block (up to the blank line),
// valid until br is read, with where its header lines are (appended to lines), and skip, the bytes before it (empty lines node skips); nil when it
// is not a final response that fits the reader's buffer: fasthttp then parses (or refuses) it alone, and the headers are taken from what it
// parsed. What arrives is read as node's parser reads it (checkHead): a head node refuses is
// its *ParseError as soon as the offending byte is in, and a connection that ends in the middle
// of the head is errHangUp (one that ends before any byte is left to fasthttp, which may try
// again on another connection).
//
// last, when not empty, is a final answer's head block (from its status line to its blank line) that
// checkHeadLines read before: when what arrived begins with its bytes, it is the block (same,
// skip 0), and the lines are not read again (lines is returned as given; the caller has
// last's). checkHeadLines reads no byte past a head's blank line and none before the first
// line is skipped, so it would find that block and those lines again.
func peekHeader(br *bufio.Reader, lines []headerLine, last []byte) (block []byte, skip int, _ []headerLine, same bool, err error) {
	n := 1 // wait for the first bytes; then look at all that is buffered before waiting for more
	for {
		_, rerr := br.Peek(n)
		b, _ := br.Peek(br.Buffered())
		if len(last) > 0 && len(b) >= len(last) && last[0] != '\r' && last[0] != '\n' && string(b[:len(last)]) == string(last) {
			return b[:len(last)], 0, lines, true, nil
		}
		start, end, found, perr := checkHeadLines(b, lines[:0])
		lines = found
		switch {
		case perr != nil:
			return nil, 0, lines, false, perr
		case end > 0:
			if bytes.HasPrefix(b[start:], []byte("HTTP/1.1 1")) || bytes.HasPrefix(b[start:], []byte("HTTP/1.0 1")) {
				return nil, 0, lines, false, nil // an interim answer (100 Continue): fasthttp skips it
			}
			return b[start:end], start, lines, false, nil
		case rerr != nil:
			if len(b) > 0 && (errors.Is(rerr, io.EOF) || errors.Is(rerr, syscall.ECONNRESET)) {
				return nil, 0, lines, false, errHangUp
			}
			return nil, 0, lines, false, nil
		}
		n = len(b) + 1
		if n > br.Size() {
			return nil, 0, lines, false, nil
		}
	}
}

// rawHeaders gives the header lines of a head block, at lines (peekHeader's), as node's
// rawHeaders: names as sent (decoded), values without the spaces and tabs around them (as
// bytes, valid during the call), in order, each with its index.
func rawHeaders(block []byte, lines []headerLine, add func(i int, name string, value []byte)) {
	for i, l := range lines {
		add(i, headerName(block[l.name:l.colon]), block[l.value:l.valueEnd])
	}
}

// headerName is decodeLatin1 of a header name, without a new string for the names answers
// commonly have, spelled as they commonly are: every recorded answer keeps its names.
func headerName(b []byte) string {
	switch string(b) { // compared without a conversion
	case "Content-Type":
		return "Content-Type"
	case "Content-Length":
		return "Content-Length"
	case "Date":
		return "Date"
	case "Server":
		return "Server"
	case "Connection":
		return "Connection"
	case "Keep-Alive":
		return "Keep-Alive"
	case "Transfer-Encoding":
		return "Transfer-Encoding"
	case "Cache-Control":
		return "Cache-Control"
	case "content-type":
		return "content-type"
	case "content-length":
		return "content-length"
	case "date":
		return "date"
	case "connection":
		return "connection"
	}
	return decodeLatin1(b)
}
