// Package proxy implements Mountebank's http(s) proxy responses: forwarding a request to an
// origin, turning the origin's answer into an `is` response, and building the predicates of
// the stubs that record it (predicateGenerators).
package proxy

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// Modes of a proxy response.
const (
	ModeOnce        = "proxyOnce"
	ModeAlways      = "proxyAlways"
	ModeTransparent = "proxyTransparent"
)

// Timeout bounds one exchange with an origin (Mountebank has none). A variable so tests can
// shorten it.
var Timeout = 5 * time.Minute

// Proxy is a compiled http(s) proxy response. It is safe for concurrent use.
type Proxy struct {
	// To is the origin as configured, e.g. "https://example.com:8443".
	To string
	// Mode is proxyOnce (the default for anything else), proxyAlways or proxyTransparent.
	Mode string
	// Generators are the predicateGenerators as configured.
	Generators []*config.Object
	// AddWait adds a wait behavior of the origin's response time to recorded responses.
	AddWait bool
	// AddDecorate is the decorate function added to recorded responses (nil for none).
	AddDecorate config.Value

	// fields are the request's fields the generators read (see RequestFields); allFields
	// says they may read any.
	fields    []string
	allFields bool

	inject     []request.KV // injectHeaders, in order
	injectHost bool         // injectHeaders names Host: the origin's name is not set
	host       string       // the Host header Mountebank sends: hostname[:port]
	baseURL    string       // scheme://host:port, prefixed to the raw request target
	client     *fasthttp.HostClient
	transport  *rawTransport
	texts      interner // the header values and short bodies of the origin's answers
	kept       keptArena
	last       lastPlain // under texts.mu
	// id numbers the proxy among this process's (never 0): what a pooled exchange knows its
	// last head by (see exchange.sameHead), without keeping the proxy.
	id uint64
	// CertErr is why the proxy's cert and key cannot be used: every request it forwards then
	// fails, as in Mountebank (nil when they can, or are not given, or the origin is http).
	CertErr error
}

// Compile validates a proxy object as Mountebank's dry run does and prepares its client, which
// reads origins' answers of at most maxBody bytes (0 = no limit): an origin announcing or
// streaming more fails the request instead of taking the memory. The error carries
// Mountebank's code and message and no source; the caller names the stub.
func Compile(p *config.Object, maxBody int) (*Proxy, *config.Error) {
	if p == nil {
		return nil, &config.Error{Code: config.CodeBadData, Message: "unrecognized response type"}
	}
	toV, ok := p.Get("to")
	u, cerr := ParseTo(toV, ok)
	if cerr != nil {
		return nil, cerr
	}
	scheme := u.Scheme
	out := &Proxy{To: jsvalue.String(toV), Mode: ModeOnce, id: proxyIDs.Add(1)}
	if m, _ := get(p, "mode").(string); m == ModeAlways || m == ModeTransparent {
		out.Mode = m
	}
	gens, gerr := GeneratorList(get(p, "predicateGenerators"))
	if gerr != nil {
		return nil, gerr
	}
	out.Generators = gens
	if err := DryRunGenerators(out.Generators, HTTPTestRequest(), true); err != nil {
		return nil, err
	}
	out.fields, out.allFields = requestFields(out.Generators)
	out.AddWait = jsvalue.Truthy(get(p, "addWaitBehavior"))
	if d := get(p, "addDecorateBehavior"); jsvalue.Truthy(d) {
		out.AddDecorate = d
	}
	if ih := config.AsObject(get(p, "injectHeaders")); ih != nil {
		for _, m := range ih.Members {
			out.inject = append(out.inject, request.KV{Name: m.Key, Value: jsText(m.Value)})
			if strings.EqualFold(m.Key, "host") {
				out.injectHost = true
			}
		}
	}

	// Mountebank sends https for https: and plain http for every other scheme.
	isTLS := scheme == "https"
	hostname, port := u.Hostname(), u.Port()
	if hostname == "" {
		// A URL without a host (file://x:, foo:///): node's http.request goes to localhost.
		hostname = "localhost"
	}
	defPort := "80"
	if isTLS {
		defPort = "443"
	}
	out.host = hostname
	if strings.Contains(hostname, ":") {
		out.host = "[" + hostname + "]"
	}
	if port != "" && port != defPort {
		out.host += ":" + port
	}
	if port == "" {
		port = defPort
	}
	addr := net.JoinHostPort(hostname, port)
	if isTLS {
		out.baseURL = "https://" + addr
	} else {
		out.baseURL = "http://" + addr
	}
	tlsConf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // Mountebank does not verify origins
	if cert, key := jsText(get(p, "cert")), jsText(get(p, "key")); isTLS && jsvalue.Truthy(get(p, "cert")) && jsvalue.Truthy(get(p, "key")) {
		// Only https origins get them (node's http.request ignores both). A pair node cannot
		// use (not PEM) does not stop the imposter: Mountebank's https.request throws for each
		// request it proxies, which fails as "Unable to connect".
		if pair, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
			out.CertErr = err
		} else {
			tlsConf.Certificates = []tls.Certificate{pair}
		}
	}
	out.transport = &rawTransport{}
	out.client = &fasthttp.HostClient{
		Transport:                     out.transport,
		Addr:                          addr,
		IsTLS:                         isTLS,
		TLSConfig:                     tlsConf,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		ReadTimeout:                   Timeout,
		WriteTimeout:                  Timeout,
		MaxIdleConnDuration:           5 * time.Second,
		MaxResponseBodySize:           maxBody,
		// As many connections as requests in flight, as node's agent opens (maxSockets
		// Infinity): fasthttp's default of 512 failed the 513th concurrent request to an
		// origin with "no free connections available to host". Loops are bounded by MaxHops.
		MaxConns: math.MaxInt32,
		// IPv6 origins too (http://[::1]:8080, a name that resolves to IPv6 addresses), as a
		// tcp proxy's net.Dialer reaches them: fasthttp dials IPv4 alone by default, which
		// failed them with "couldn't find dns entries for the given domain".
		DialDualStack: true,
		// Origin connections wait for answers on netconn's FIFO poller: an answer is one
		// read(2), not a read that finds nothing (the origin has not answered yet: the
		// request has just gone) and another once the runtime's poller woke the reader
		// (UseRuntimePoller undoes it).
		DialTimeout: dialFIFO,
	}
	return out, nil
}

// dialFIFO dials addr as fasthttp's HostClient does (IPv4 and IPv6, within timeout) and moves
// the connection to netconn's FIFO poller.
func dialFIFO(addr string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	var err error
	if timeout > 0 {
		c, err = fasthttp.DialDualStackTimeout(addr, timeout)
	} else {
		c, err = fasthttp.DialDualStack(addr)
	}
	if err != nil {
		return nil, err
	}
	return netconn.AdoptFIFO(c), nil
}

// UseRuntimePoller leaves the connections p opens to Go's runtime poller (--netpoller go).
func (p *Proxy) UseRuntimePoller() { p.client.DialTimeout = nil }

// Request is what a proxy forwards: the client's request as it arrived. The proxy copies what
// it needs; nothing is retained after Forward returns.
type Request struct {
	Method string
	// URI is the raw request target (path and query exactly as sent).
	URI []byte
	// Headers are the request's headers in their order and case; when nil, From's.
	Headers []request.KV
	// From, when Headers is nil, is the request view whose headers these are (HeaderList): a
	// direct request's lines are written from its header block as it arrived while it is not
	// parsed (see rawHead), and parsed only when they cannot be.
	From *request.Request
	Body []byte
	// Keep, when not nil, is set to the origin's answer as it arrived when it was plain
	// (see Kept), and left as it was otherwise.
	Keep *Kept
	// Plain, when not nil (with Keep), is filled when the kept answer is served as it
	// arrived (see Plain): Forward then makes no answer of it.
	Plain *Plain
	// Hops is how many of this process's proxies the request went through before it
	// arrived (HopsOf its client): past MaxHops it is not forwarded.
	Hops int
	// Start, when not 0, is when the caller began to forward the request, in Unix
	// nanoseconds (the clock read once, for its own timing too): the exchange must end by
	// Start + Timeout. (A time.Time here, with its Location pointer, made the compiler move
	// the caller's Kept and Plain to the heap: two allocations a request.)
	Start int64
}

// Plain is a kept answer (see Kept) whose `is`, the answer Forward makes of it, gives its own
// bytes back when compiled: no header name repeated as it is spelled (the answer would hold
// an array of the lines at the first one's place), and a body that is not empty (the
// imposter's default would be served) and is binary (base64 of the bytes) or UTF-8 text that
// cannot start JSON (a JSON body is written again, indented). The imposter serves it from
// these fields, without that answer: building it and compiling it again took about a tenth of
// a proxyAlways request's instructions and two of its allocations.
type Plain struct {
	Status int
	// Headers are the answer's header lines in their order, as its headers object holds them:
	// names as sent (decoded), values decoded as Latin-1 without the white space around them.
	// Forward appends to Headers[:0]; the texts are the proxy's (interned), never changed.
	Headers []request.KV
	Binary  bool   // the answer's _mode is binary
	Body    []byte // the body, in Keep's memory: read only
	// Gen numbers the plain answer: two of the same Gen (never 0) are of the same bytes, so
	// their fields are equal, and what is made of one holds for the other. A proxy gives the
	// Gen of the answer before to an answer of the same bytes (an origin mostly repeats itself,
	// but for a Date a second), whose fields are then copied, not made again.
	Gen uint64
}

// proxyIDs numbers proxies (see Proxy.id).
var proxyIDs atomic.Uint64

// plainGens numbers plain answers (see Plain.Gen), for all proxies.
var plainGens atomic.Uint64

// lastPlain is the plain answer a proxy made last (see Proxy.plain), of the kept answer kept.
type lastPlain struct {
	kept    Kept
	status  int
	headers []request.KV // its own list (Plain's are its caller's)
	binary  bool
	gen     uint64 // 0: none
}

// bytes is the kept answer's body, in its memory: read only.
func (k Kept) bytes() []byte {
	return unsafe.Slice(unsafe.StringData(k.text[k.head:]), len(k.text)-k.head)
}

// Kept is an origin's plain answer (see plainHead) as it arrived: its head block and its body,
// in one string of bytes without pointers, from which Answer makes the answer Forward made
// again. It is what proxyAlways keeps of an answer it records: writing the answer's JSON text
// for every request took about as long as the rest of its recording.
type Kept struct {
	text string // the head block, then the body
	head int    // the head block's length
}

// Ok reports whether k holds an answer.
func (k Kept) Ok() bool { return k.head > 0 }

// keep returns the answer of head block raw and body as a Kept.
func keep(raw, body []byte) Kept {
	var b strings.Builder
	b.Grow(len(raw) + len(body))
	b.Write(raw)
	b.Write(body)
	return Kept{text: b.String(), head: len(raw)}
}

// keptArena is where a proxy keeps its answers' bytes (see Kept): each is written after the
// one before in a block of keptBlock bytes, which a new block replaces when it is full, rather
// than in a string of its own: proxyAlways keeps every answer for as long as its imposter
// lives, and each had been an allocation (of about 150 B for a short answer) the garbage
// collector then marked on every cycle. It is safe for concurrent use.
type keptArena struct {
	mu    sync.Mutex
	block strings.Builder // its texts are never changed once written (see strings.Builder.String)
}

// keptBlock is the size of a keptArena's block; an answer of more than keptBlock/8 bytes is
// kept in a string of its own (keep), not to leave most of a block unused.
const keptBlock = 32 << 10

// keep is keep's, the bytes written into the arena's block when they are short.
func (a *keptArena) keep(raw, body []byte) Kept {
	n := len(raw) + len(body)
	if n > keptBlock/8 {
		return keep(raw, body)
	}
	a.mu.Lock()
	if a.block.Cap()-a.block.Len() < n {
		a.block = strings.Builder{}
		a.block.Grow(keptBlock)
	}
	from := a.block.Len()
	a.block.Write(raw)
	a.block.Write(body)
	text := a.block.String()[from:]
	a.mu.Unlock()
	return Kept{text: text, head: len(raw)}
}

// Answer returns the answer Forward returned for k's bytes (see Forward): an equal tree, its
// texts its own.
func (k Kept) Answer() *config.Object {
	b := []byte(k.text)
	block, body := b[:k.head:k.head], b[k.head:]
	_, end, lines, perr := checkHeadLines(block, nil)
	h, ok := plainHead(block, lines)
	if perr != nil || end != len(block) || !ok {
		panic("BUG: a kept answer's head is not the plain head it was")
	}
	var in interner
	return buildAnswer(&in, h.status, body, nil, block, lines, h.ctype, h.cenc)
}

// Headers returns the headers the origin receives for reqHeaders: injectHeaders replace
// headers of the same name (in any case) and are added at the end. The result is what
// Mountebank's request object holds after addInjectedHeadersTo (predicateGenerators see it).
func (p *Proxy) Headers(reqHeaders []request.KV) []request.KV {
	if len(p.inject) == 0 {
		return reqHeaders
	}
	out := make([]request.KV, 0, len(reqHeaders)+len(p.inject))
	for _, h := range reqHeaders {
		injected := false
		for _, ih := range p.inject {
			if ih.Name == h.Name {
				injected = true
				break
			}
		}
		if !injected {
			out = append(out, h)
		}
	}
	return append(out, p.inject...)
}

// RequestFields returns the fields of the request object (its top-level keys) PredicatesFor
// reads for p's generators, or all when they may read any (an injected generator, a
// predicateOperator): the others need not be built.
func (p *Proxy) RequestFields() (keys []string, all bool) { return p.fields, p.allFields }

// requestFields is RequestFields for gens.
func requestFields(gens []*config.Object) (keys []string, all bool) {
	keys = []string{}
	for _, g := range gens {
		if jsvalue.Truthy(get(g, "inject")) {
			return nil, true
		}
		if _, hasOp := g.Get("predicateOperator"); hasOp {
			return nil, true
		}
		for _, k := range keysOf(get(g, "matches")) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys, false
}

// Error is a failed exchange with the origin, rendered as Mountebank renders it.
type Error = config.Error

// Forward sends r to the origin and returns its answer as Mountebank's httpProxy records it:
// {statusCode, headers, body, _mode}, the body parsed as JSON when it is JSON text and base64
// for binary content; or no answer (nil, nil) when it filled r.Plain. A failure is a
// *config.Error with code "invalid proxy", or ctx's error when ctx ended the exchange.
func (p *Proxy) Forward(ctx context.Context, r *Request) (*config.Object, error) {
	if p.CertErr != nil {
		return nil, &config.Error{Code: config.CodeInvalidProxy, Message: "Unable to connect to " + string(config.MarshalJSON(p.To, 0))}
	}
	if r.Hops >= MaxHops {
		return nil, LoopError(p.To)
	}
	// The compiler open-codes deferred calls while returns times defers is at most 15, not
	// through the runtime's defer records: the returns are forward's.
	c := calls.Get().(*call)
	defer c.release()
	return p.forward(ctx, r, &c.req, &c.resp, &c.ex)
}

// call is what one Forward works with: the request it sends, the response it reads and their
// exchange, pooled together: one pool round trip a request, where there were three (fasthttp's
// requests and responses, and the exchanges: ~0.25k instructions).
type call struct {
	req  fasthttp.Request
	resp fasthttp.Response
	ex   exchange
}

var calls = sync.Pool{New: func() any { return new(call) }}

// release empties c and gives it back to the pool, unless its exchange must not be used again
// (see exchange.reusable).
func (c *call) release() {
	c.req.Reset()
	c.resp.Reset()
	if c.ex.reusable() {
		calls.Put(c)
	}
}

// forward is Forward's exchange of r, with req and resp its request and response and ex (begun
// here) their exchange.
func (p *Proxy) forward(ctx context.Context, r *Request, req *fasthttp.Request, resp *fasthttp.Response, ex *exchange) (*config.Object, error) {
	req.Header.DisableNormalizing()
	// Headers go out exactly as listed, in node's case and order (host is lower case).
	req.Header.DisableSpecialHeader()
	// The path goes out as received. A target of the common form is the request line's as it
	// is (direct: see requestTarget); any other is given to HostClient.Do as a URL whose parse
	// makes it (the client's DisablePathNormalizing is set on the URI when Do parses it).
	target, direct := r.URI, true
	if !ex.sameTarget(p.id, r.URI) {
		target, direct = requestTarget(r.URI)
	}
	p.transport.begin(req, ex, ctx, direct)
	ex.hop = r.Hops + 1
	if r.Start != 0 {
		ex.deadline = r.Start + int64(Timeout)
	}
	defer p.transport.end(req, ex) // after answer copied the header block
	if direct && r.Headers == nil && r.From != nil {
		if raw := r.From.RawHeaderBlock(); raw != nil && !ex.sameHead(p.id, r.Method, target, raw, len(r.Body)) {
			ex.head, ex.hasHead = p.rawHead(ex.head[:0], r.Method, target, raw, len(r.Body))
			ex.keepHead(p.id, r.Method, target, raw, len(r.Body))
		}
	}
	if ex.hasHead {
		// The head is written as it is (see send): the round trip reads the method alone of
		// the header (idempotent, IsHead).
		req.Header.SetMethod(r.Method)
	} else {
		p.setHeader(req, r, target, direct)
	}
	if len(r.Body) > 0 {
		req.SetBody(r.Body)
	}
	var err error
	if direct {
		err = p.exchange(req, resp, ex)
	} else {
		err = p.client.DoTimeout(req, resp, Timeout)
	}
	raw := ex.block()
	if err != nil {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, p.failure(err)
	}
	if ex.plain {
		if r.Keep != nil {
			*r.Keep = p.kept.keep(raw, resp.Body())
			if r.Plain != nil && p.plain(r.Plain, *r.Keep, resp.StatusCode(), raw, ex.lines, r.Keep.bytes(), ex.ctype, ex.cenc) {
				return nil, nil
			}
		}
		return p.answer(resp, raw, ex.lines, ex.ctype, ex.cenc), nil
	}
	resp.Header.SetNoDefaultContentType(true) // only what the origin sent
	return p.answer(resp, raw, ex.lines, resp.Header.ContentType(), resp.Header.Peek("Content-Encoding")), nil
}

// setHeader sets req's header to what forward sends of r (r.Headers, or From's list) before
// its body, for the request target target (direct: see requestTarget): the method, the target,
// the headers in node's case and order, the Host line the origin's, a Content-Length of the body.
func (p *Proxy) setHeader(req *fasthttp.Request, r *Request, target []byte, direct bool) {
	if direct {
		req.Header.SetRequestURIBytes(target)
	} else {
		// The URL is written on the stack when it fits (SetRequestURIBytes copies it).
		var room [256]byte
		req.SetRequestURIBytes(append(append(room[:0], p.baseURL...), r.URI...))
	}
	req.UseHostHeader = true
	req.Header.SetMethod(r.Method)
	headers := r.Headers
	if headers == nil && r.From != nil {
		headers = r.From.HeaderList()
	}
	hostDone := p.injectHost
	lengthName := ""
	for _, h := range p.Headers(headers) {
		// The lengths first: strings.EqualFold walks names of other lengths too. A name
		// (injectHeaders' may be any text) that folds to one of these has its length, or one
		// byte more for an 's' written as U+017F (two bytes; 'k' has U+212A, in none of them).
		n := len(h.Name)
		switch {
		case (n == len("host") || n == len("host")+1) && strings.EqualFold(h.Name, "host") && !p.injectHost:
			if !hostDone {
				req.Header.Add("host", p.host)
				hostDone = true
			}
			continue
		case n == len("content-length") && strings.EqualFold(h.Name, "content-length"):
			lengthName = h.Name
			continue
		case (n == len("transfer-encoding") || n == len("transfer-encoding")+1) && strings.EqualFold(h.Name, "transfer-encoding"):
			continue // the body was received whole: it goes out with a Content-Length
		}
		req.Header.Add(latin1(h.Name), latin1(h.Value))
	}
	if !hostDone {
		req.Header.Add("host", p.host)
	}
	if len(r.Body) > 0 || lengthName != "" {
		if lengthName == "" {
			lengthName = "Content-Length"
		}
		req.Header.Add(lengthName, strconv.Itoa(len(r.Body)))
	}
}

// requestTarget returns the request line's target for the raw target uri (the client's), and
// whether it is direct: a path (it begins with '/') without control characters or a fragment.
// Such a target is what fasthttp's parse of the proxy's URL makes of it (the path as sent,
// then '?' and the query when the query is not empty), without the parse: HostClient.Do
// parsed it for every request (about 2.4k instructions). Any other target (none, '*', an
// absolute URL, a fragment, a byte fasthttp refuses) is not direct and goes through the parse.
func requestTarget(uri []byte) ([]byte, bool) {
	if len(uri) == 0 || uri[0] != '/' {
		return nil, false
	}
	q := -1
	for i, c := range uri {
		switch {
		case c < 0x20 || c == 0x7f || c == '#':
			return nil, false
		case c == '?' && q < 0:
			q = i
		}
	}
	if q == len(uri)-1 { // an empty query: fasthttp writes no '?'
		return uri[:q], true
	}
	return uri, true
}

// exchange is HostClient.Do's exchange of a direct request (one whose header holds its
// target) with the origin, on the proxy's client and transport: Do would parse a URI for it.
// As Do, it tries another connection when the round trip says it may (the origin closed a
// kept-alive connection before it answered: roundTrip's retry) and the method is idempotent
// (GET, HEAD, PUT, QUERY), up to the client's attempts and within Timeout, and reports an
// io.EOF as fasthttp.ErrConnectionClosed.
func (p *Proxy) exchange(req *fasthttp.Request, resp *fasthttp.Response, ex *exchange) error {
	attempts := p.client.MaxIdemponentCallAttempts
	if attempts <= 0 {
		attempts = fasthttp.DefaultMaxIdemponentCallAttempts
	}
	if ex.deadline == 0 {
		ex.deadline = time.Now().Add(Timeout).UnixNano()
	}
	deadline := time.Unix(0, ex.deadline)
	var err error
	for n := 1; ; n++ {
		resp.Reset()
		var retry bool
		retry, err = p.transport.roundTrip(p.client, req, resp, ex)
		if err == nil || !retry || n >= attempts || !idempotent(&req.Header) {
			break
		}
		if time.Until(deadline) <= 0 {
			err = fasthttp.ErrTimeout
			break
		}
	}
	if err == io.EOF { //nolint:errorlint // as fasthttp compares it
		err = fasthttp.ErrConnectionClosed
	}
	return err
}

// idempotent is fasthttp's isIdempotent: the methods HostClient.Do tries again.
func idempotent(h *fasthttp.RequestHeader) bool {
	return h.IsGet() || h.IsHead() || h.IsPut() || h.IsQuery()
}

// failure maps a transport error to Mountebank's invalid proxy errors.
func (p *Proxy) failure(err error) error {
	quoted := string(config.MarshalJSON(p.To, 0))
	var dnsErr *net.DNSError
	var perr *ParseError
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return &config.Error{Code: config.CodeInvalidProxy, Message: fmt.Sprintf("the answer of %s is larger than %d bytes (--max-body)", quoted, p.client.MaxResponseBodySize)}
	case errors.As(err, &perr):
		return perr.configError()
	case errors.Is(err, errHangUp):
		return &config.Error{Code: config.CodeInvalidProxy, Message: "Unable to connect to " + quoted}
	case errors.As(err, &dnsErr):
		return &config.Error{Code: config.CodeInvalidProxy, Message: "Cannot resolve " + quoted}
	case errors.As(err, new(tls.RecordHeaderError)):
		// An https origin that answers in plain text: node's OpenSSL error, passed through
		// with its fields (the hexadecimal number is the thread OpenSSL names; node 20's).
		const msg = "write EPROTO 80CC1055C77F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n"
		return &config.Error{Code: "EPROTO", Message: msg,
			Raw: config.NewObject("errno", float64(-71), "code", "EPROTO", "syscall", "write", "message", msg, "name", "Error")}
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, fasthttp.ErrConnectionClosed), errors.Is(err, fasthttp.ErrDialTimeout):
		return &config.Error{Code: config.CodeInvalidProxy, Message: "Unable to connect to " + quoted}
	}
	return &config.Error{Code: config.CodeInvalidProxy, Message: err.Error()}
}

// binaryEncodings and binaryTypes decide, as Mountebank's httpProxy does, that an answer is
// recorded as base64.
var (
	binaryEncodings = []string{"gzip", "br", "compress", "deflate"}
	binaryTypes     = []string{
		"audio/", "application/epub+zip", "application/gzip", "application/java-archive",
		"application/msword", "application/octet-stream", "application/pdf", "application/rtf",
		"application/vnd.ms-excel", "application/vnd.ms-fontobject", "application/vnd.ms-powerpoint",
		"application/vnd.visio", "application/x-shockwave-flash", "application/x-tar",
		"application/zip", "font/", "image/", "model/", "video/",
	}
)

// binaryTypeGroups are binaryTypes grouped by what comes before their '/' (the rest from the
// '/' on): "audio" ["/"], "application" ["/epub+zip", "/gzip", ...], ...
var binaryTypeGroups = func() (groups []struct {
	before string
	rests  []string
}) {
	for _, t := range binaryTypes {
		i := strings.IndexByte(t, '/')
		n := len(groups)
		if n == 0 || groups[n-1].before != t[:i] {
			groups = append(groups, struct {
				before string
				rests  []string
			}{before: t[:i]})
			n++
		}
		groups[n-1].rests = append(groups[n-1].rests, t[i:])
	}
	return groups
}()

// IsBinary reports whether Mountebank records an answer with these Content-Encoding and
// Content-Type values in binary mode: whether contentEncoding contains one of binaryEncodings
// or contentType one of binaryTypes. Each type has one '/', so the types are looked for
// around each '/' of contentType (one, as a rule), by what comes before it, rather than each
// searched for in all of it (19 searches an answer).
func IsBinary(contentEncoding, contentType string) bool {
	if contentEncoding != "" {
		for _, e := range binaryEncodings {
			if strings.Contains(contentEncoding, e) {
				return true
			}
		}
	}
	for i := 0; ; {
		j := strings.IndexByte(contentType[i:], '/')
		if j < 0 {
			return false
		}
		i += j
		before, after := contentType[:i], contentType[i:]
		for _, g := range binaryTypeGroups {
			if !strings.HasSuffix(before, g.before) {
				continue
			}
			for _, rest := range g.rests {
				if strings.HasPrefix(after, rest) {
					return true
				}
			}
		}
		i++
	}
}

// answer converts the origin's response, whose Content-Type and Content-Encoding values are
// ctype and cenc. Headers keep their order and case (raw is the
// header block as it arrived; without it, fasthttp's parse is used, which orders and spells
// its special headers its own way); repeated names become arrays at the first one's place,
// as Mountebank's headersMap.ofRaw does. Header values and a short text body are the same
// values as the previous answers' when their bytes are (p.texts): a proxy records every
// answer, and an origin repeats itself.
func (p *Proxy) answer(resp *fasthttp.Response, raw []byte, lines []headerLine, ctype, cenc []byte) *config.Object {
	p.texts.mu.Lock()
	defer p.texts.mu.Unlock()
	return buildAnswer(&p.texts, resp.StatusCode(), resp.Body(), resp, raw, lines, ctype, cenc)
}

// plain fills out with the plain answer of status, head block raw (its header lines at
// lines) and body, whose Content-Type and Content-Encoding values are ctype and cenc, when it is
// served as it arrived (see Plain); false when it is not (out's fields are then any).
// The values are the interner's, as answer's are. kept is the answer kept (raw, then body):
// when it is the bytes of the plain answer made last, that answer's fields are out's (the
// lines, their names and values, the binary decision and the body's checks were ~1k
// instructions an answer).
func (p *Proxy) plain(out *Plain, kept Kept, status int, raw []byte, lines []headerLine, body, ctype, cenc []byte) bool {
	if len(body) == 0 {
		return false
	}
	p.texts.mu.Lock()
	defer p.texts.mu.Unlock()
	if l := &p.last; l.gen != 0 && kept == l.kept && !noRepeats.Load() {
		out.Status, out.Binary, out.Body, out.Gen = l.status, l.binary, body, l.gen
		out.Headers = append(out.Headers[:0], l.headers...)
		return true
	}
	out.Binary = p.texts.binary(ctype, cenc)
	if !out.Binary && (request.MaybeJSON(view(body)) || !jsvalue.Valid(body)) {
		return false
	}
	out.Status, out.Body = status, body
	hs := out.Headers[:0]
	for i, l := range lines {
		name := headerName(raw[l.name:l.colon])
		for _, h := range hs {
			if h.Name == name {
				return false
			}
		}
		v, _ := p.texts.latin1At(i, raw[l.value:l.valueEnd]).(string) // always a string
		hs = append(hs, request.KV{Name: name, Value: v})
	}
	out.Headers = hs
	out.Gen = plainGens.Add(1)
	p.last = lastPlain{kept: kept, status: status, headers: append(p.last.headers[:0], hs...), binary: out.Binary, gen: out.Gen}
	return true
}

// buildAnswer is answer of an answer of status and body, its texts interned in in (with its
// lock held). resp is read only when raw is nil (then its parsed headers are the answer's).
func buildAnswer(in *interner, status int, body []byte, resp *fasthttp.Response, raw []byte, lines []headerLine, ctype, cenc []byte) *config.Object {
	// The answer is made as a proxy keeps it (proxyAlways records it as it is): each object
	// in one allocation with its members, the headers with room for the Connection header
	// a recorded answer may get, the answer with room for _proxyResponseTime.
	headers := &config.Object{}
	if raw != nil {
		headers = config.ObjectWithRoom(len(lines) + 1) // its lines, and one more
	}
	add := func(name string, value config.Value) {
		// The member of name found once (Get, then Set, looked for it twice).
		for i := range headers.Members {
			m := &headers.Members[i]
			if m.Key != name {
				continue
			}
			switch v := m.Value; {
			case v == "": // arrayifyIfExists: an empty value is replaced
				m.Value = value
			default:
				if list, isList := v.([]any); isList {
					m.Value = append(list, value)
				} else {
					m.Value = []any{v, value}
				}
			}
			return
		}
		headers.Members = append(headers.Members, config.Member{Key: name, Value: value})
	}
	if raw != nil {
		rawHeaders(raw, lines, func(i int, name string, value []byte) { add(name, in.latin1At(i, value)) })
	} else {
		for k, v := range resp.Header.All() {
			add(decodeLatin1(k), decodeLatin1(v))
		}
		if resp.Header.ContentLength() == -1 {
			add("Transfer-Encoding", "chunked")
		}
	}
	var text config.Value
	mode := modeText
	if IsBinary(string(cenc), string(ctype)) {
		mode = modeBinary
		text = base64.StdEncoding.EncodeToString(body)
	} else if b := in.utf8(body); b != nil {
		text = b // not JSON: its first character cannot start JSON (request.MaybeJSON)
	} else {
		text = maybeJSON(jsvalue.DecodeUTF8(body))
	}
	out := config.ObjectWithRoom(5)
	out.Members = append(out.Members,
		config.Member{Key: "statusCode", Value: statusValue(status)},
		config.Member{Key: "headers", Value: headers},
		config.Member{Key: "body", Value: text},
		config.Member{Key: "_mode", Value: mode})
	return out
}

// Values of an answer's fields, made once: a value put in an interface is otherwise a new
// allocation for every answer.
var (
	modeText   config.Value = "text"
	modeBinary config.Value = "binary"
	statuses                = func() (t [600]config.Value) {
		for i := range t {
			t[i] = float64(i)
		}
		return t
	}()
)

// statusValue is float64(code) as a Value.
func statusValue(code int) config.Value {
	if code >= 0 && code < len(statuses) {
		return statuses[code]
	}
	return float64(code)
}

// interner keeps the short texts of recent answers, as Values, to be given again for the same
// bytes: a recorded answer then shares them with the ones before it (less to allocate, and
// less for the garbage collector to mark in what proxyAlways keeps). Its methods are called
// with mu held.
type interner struct {
	mu sync.Mutex
	m  map[string]config.Value
	// lines are the values of the header lines of the answer before, by their place (the
	// ASCII ones, up to maxLines): an origin mostly sends the same lines in the same order,
	// and a line equal to the one before it is found by one comparison, not the map's hash
	// and probe.
	lines []config.Value
	// ctype and cenc are the Content-Type and Content-Encoding values binary decided last
	// (typed), isBinary what it decided.
	ctype, cenc     []byte
	typed, isBinary bool
}

// Bounds of what an interner keeps: texts up to maxInterned bytes, up to maxInterns of them
// (then it starts again empty: a Date header changes every second).
const (
	maxInterned = 256
	maxInterns  = 512
	maxLines    = 32
)

// binary is IsBinary(cenc, ctype), decided again only when they are not the answer's before
// (an origin mostly sends one Content-Type): IsBinary was ~300 instructions an answer.
func (in *interner) binary(ctype, cenc []byte) bool {
	if in.typed && string(ctype) == string(in.ctype) && string(cenc) == string(in.cenc) { // compared without a conversion
		return in.isBinary
	}
	// Copied into the interner's own buffers: kept without an allocation for every change.
	in.ctype, in.cenc, in.typed = append(in.ctype[:0], ctype...), append(in.cenc[:0], cenc...), true
	in.isBinary = IsBinary(view(in.cenc), view(in.ctype))
	return in.isBinary
}

// view is b as a string, without a copy: b must not change while it is read.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// intern returns the Value of the text b, which must be decoded as it is (ASCII, or valid
// UTF-8 for a body).
func (in *interner) intern(b []byte) config.Value {
	if len(b) > maxInterned {
		return string(b)
	}
	if v, ok := in.m[string(b)]; ok { // looked up without a conversion
		return v
	}
	if in.m == nil || len(in.m) >= maxInterns {
		in.m = make(map[string]config.Value, 64)
	}
	s := string(b)
	var v config.Value = s
	in.m[s] = v
	return v
}

// latin1 is decodeLatin1(b) as a Value.
func (in *interner) latin1(b []byte) config.Value {
	for _, c := range b {
		if c >= 0x80 {
			return decodeLatin1(b)
		}
	}
	return in.intern(b)
}

// latin1At is latin1(b) for b, the value of header line i of an answer.
func (in *interner) latin1At(i int, b []byte) config.Value {
	if i < len(in.lines) {
		// Only ASCII is kept: bytes equal to it are the same text decoded.
		if s, ok := in.lines[i].(string); ok && s == string(b) { // compared without a conversion
			return in.lines[i]
		}
	}
	if len(b) > maxInterned || i >= maxLines {
		return in.latin1(b)
	}
	for _, c := range b {
		if c >= 0x80 {
			return decodeLatin1(b)
		}
	}
	v := in.intern(b)
	for len(in.lines) <= i {
		in.lines = append(in.lines, nil)
	}
	in.lines[i] = v
	return v
}

// utf8 is the Value of a body that maybeJSON leaves as text and DecodeUTF8 leaves as it is
// (ASCII whose first character cannot start JSON), nil for any other.
func (in *interner) utf8(b []byte) config.Value {
	if len(b) == 0 || len(b) > maxInterned || request.MaybeJSON(string(b)) {
		return nil
	}
	for _, c := range b {
		if c >= 0x80 {
			return nil
		}
	}
	return in.intern(b)
}

// maybeJSON is Mountebank's maybeJSON: the parsed value when text is JSON, else text.
func maybeJSON(text string) config.Value {
	if !request.MaybeJSON(text) {
		return text // not parsed: a failed parse allocated a copy of the text and an error
	}
	v, err := config.ParseJSON([]byte(text))
	if err != nil {
		return text
	}
	return v
}

// decodeLatin1 decodes header bytes as node does: one character per byte.
func decodeLatin1(b []byte) string {
	for _, c := range b {
		if c >= 0x80 {
			r := make([]rune, len(b))
			for i, c := range b {
				r[i] = rune(c)
			}
			return string(r)
		}
	}
	return string(b)
}

// latin1 encodes s as node writes header strings: one byte per character.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

func get(o *config.Object, key string) config.Value {
	if o == nil {
		return nil
	}
	v, _ := o.Get(key)
	return v
}

// jsText renders a value as JavaScript's String(value).
func jsText(v config.Value) string { return jsvalue.String(v) }
