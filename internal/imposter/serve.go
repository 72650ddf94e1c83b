package imposter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// This file is what the protocol servers (httpserver, tcpserver, smtpserver) use of an
// imposter: they read connections and write answers; what a request means (which stub, which
// response, what is counted and recorded) is decided here, through Resolve.

// Server serves one protocol on a started imposter's listener.
type Server interface {
	// Serve accepts connections on ln until shutdown; it returns nil after a shutdown. On a
	// FIFO listener it runs from the first connection on (netconn.StartOnConn): a server
	// whose listener closed before any connection came is never served, and then neither
	// CloseIdle nor Shutdown is called.
	Serve(ln net.Listener) error
	// CloseIdle closes, at once, every connection that waits for its next request; busy ones
	// close after their answer. Serve has returned. It returns how many connections may still
	// be busy: with none, Shutdown has nothing to wait for.
	CloseIdle() (busy int)
	// Shutdown stops accepting, lets requests in flight finish until ctx ends, and closes every
	// connection. Serve has returned.
	Shutdown(ctx context.Context) error
}

// Protocol prepares the server of an imposter of one protocol. Start calls it before the port
// is bound: it fails as Mountebank does for a definition the protocol cannot serve (https: a
// bad key, certificate or cipher list), and otherwise says how to serve it.
type Protocol func(def *config.Imposter) (Prepared, error)

// Prepared is how a protocol serves one imposter.
type Prepared struct {
	// New builds the server once the port is bound (and the imposter's log names it).
	New func(*Imposter) Server
	// FIFO asks for the listener of netconn's poller (Options.Poller): connections with data
	// are served in the order their requests arrived (http and https).
	FIFO bool
	// Start, when set, starts a program that serves the imposter itself (a custom protocol):
	// no port is bound here, and the program resolves its requests through ResolveCustom.
	Start func(im *Imposter) (*External, error)
}

// External is an imposter a program serves (a custom protocol, see Prepared.Start).
type External struct {
	// Listener stands for the program: its Addr is the port the program serves, Accept
	// blocks until Close, and Close stops the program (and returns once it has exited).
	Listener net.Listener
	// Metadata is what the program announced, shown in the imposter's JSON; nil for none.
	Metadata *config.Object
	// CallbackURL is the URL the program resolves requests at (…/imposters/:port/_requests).
	CallbackURL string
	// Encoding is the encoding the program announced: "base64" makes the stubs' predicates
	// binary (its requests' fields are base64, as a tcp imposter's in mode binary); "" or
	// anything else is utf8.
	Encoding string
}

// Answer is what Resolve decided for a request: the stub that matched (none for the default
// response), the response to send, or the error to answer with.
type Answer struct {
	stub *stub
	resp response // as configured
	out  *wire    // http: the answer as it goes on the wire; nil until built when not static
	// Recorded is the request in Mountebank's recorded shape when --debug or the debug log
	// needed it; nil otherwise.
	Recorded *config.Object
	// Why explains why no stub matched, when --debug or the debug log asks for it.
	Why *match.Explanation
	// Err, when set, is the answer: matching failed (an inject predicate threw).
	Err *config.Error
	// box holds out when Build made it (the slab's box, or the pool's without a slab), and slab
	// the objects native script calls made for it (see Done).
	box  *wireBox
	slab *script.Slab
	// contained says Build made the answer without leaving the request's strings anywhere but
	// in the answer's header lines (copied when written): see Recyclable.
	contained bool
	// cors, with --debug, holds the Access-Control-Allow-* values an allowCORS preflight was
	// answered with, for the match (SetPreflight).
	cors *[3][]string
}

// SetPreflight tells RecordMatch, with --debug, the Access-Control-Allow-Headers, -Methods and
// -Origin values the answer was sent with as an allowCORS preflight's: Mountebank's http server
// writes them into the response's own headers object, which its match shows. The values are
// copied.
func (a *Answer) SetPreflight(v *[3][]string) {
	var c [3][]string
	for i, vs := range v {
		c[i] = make([]string, len(vs))
		for j, s := range vs {
			c[i][j] = strings.Clone(s)
		}
	}
	a.cors = &c
}

// Resolve counts and records req, finds the first matching stub and returns its next response,
// or the imposter's default response when no stub matches. It is the protocol-neutral part of
// serving a request; an http answer that is Dynamic still has to be built (Build), and a tcp
// answer always is (BuildTCP).
func (im *Imposter) Resolve(req *request.Request) Answer {
	return answerOf(im.resolve(im.tbl.Load(), req))
}

// UnreadBody returns, when nothing that answers a request of the imposter reads its body, what
// ResolveUnread answers such a request with; nil otherwise. Nothing reads it when no predicate
// does and every response answers without reading the request (a table's bodyUnread), the
// journal is off (recordRequests, --mock) and nothing shows requests (--debug, the debug log).
// The http server asks it as a request's header block ends, and then reads the body past
// without keeping it.
func (im *Imposter) UnreadBody() any {
	if im.Records() || im.opts.Debug || im.logDebug {
		return nil
	}
	if t := im.tbl.Load(); t != nil && t.bodyUnread {
		return t
	}
	return nil
}

// ResolveUnread is Resolve for a request whose body was read past without being kept, with the
// stubs pin holds (what UnreadBody returned as the request's header block ended): stubs changed
// since, which may read bodies, do not see a request that began before them without one.
func (im *Imposter) ResolveUnread(req *request.Request, pin any) Answer {
	t, ok := pin.(*table)
	if !ok {
		t = im.tbl.Load()
	}
	return answerOf(im.resolve(t, req))
}

// answerOf is the Answer of what resolve found.
func answerOf(st *stub, resp response, recorded *config.Object, why *match.Explanation, err *config.Error) Answer {
	a := Answer{stub: st, resp: resp, Recorded: recorded, Why: why, Err: err}
	if err == nil {
		a.out = static(resp)
	}
	return a
}

// Defers reports whether the answer's behaviors wait or run a shell command (see
// behavior.Compiled.Defers): Mountebank writes it in a later turn of its event loop, which a
// tcp client's end of sending (FIN) comes before.
func (a *Answer) Defers() bool {
	return a.resp != nil && a.resp.base().behaviors.Defers()
}

// Matched reports whether a stub answered (rather than the default response or an error).
func (a *Answer) Matched() bool { return a.stub != nil }

// Dynamic reports whether the http answer is built per request (inject, proxy, fault,
// behaviors, templates) rather than sent as compiled, and has not been built yet.
func (a *Answer) Dynamic() bool { return a.out == nil }

// Fault is the name of the response's fault; "" when it is not a fault.
func (a *Answer) Fault() string {
	if f, ok := a.resp.(*faultResponse); ok {
		return f.name
	}
	return ""
}

// The http answer, once static or built (not Dynamic):

// Status is the status code, or the error an invalid configured one fails with. A binary
// body that is a number or true fails first, as Mountebank's postProcess does. A header
// node's writeHead refuses fails the request too, after the status code, as a *config.Error in
// node's shape: a name that is not an HTTP token, or a value with a control character other
// than tab or a character past U+00FF; the status code comes with that error, as node keeps
// the reason phrase of the status it was given before it checked the headers.
func (a *Answer) Status() (int, error) {
	if a.out.binaryNotText {
		return 0, &config.Error{Raw: config.NewObject(
			"message", "response.body.replace is not a function", "name", "TypeError")}
	}
	if f := a.out.fail; f != nil {
		if f.headersOn != "" {
			return 0, a.HeadersError("Connection")
		}
		return 0, errors.New(f.status)
	}
	for i := range a.out.headers {
		if h := &a.out.headers[i]; h.bad { // checked when the lines were compiled (markHeaders)
			return int(a.out.status), checkHeader(h.name, h.value)
		}
	}
	return int(a.out.status), nil
}

// HeadersNotObject reports whether the answer's headers are a truthy value that is not an object
// (true, a string, a number): Mountebank's http server fails the request as it sets a header
// on it (HeadersError), Connection, or first, for an allowCORS preflight,
// Access-Control-Allow-Headers.
func (a *Answer) HeadersNotObject() bool { return a.out.fail != nil && a.out.fail.headersOn != "" }

// HeadersError is the TypeError of setting the header name on headers that are not an object
// (HeadersNotObject).
func (a *Answer) HeadersError(name string) *config.Error {
	msg := "Cannot create property '" + name + "' on " + a.out.fail.headersOn
	return &config.Error{Message: msg, Raw: config.NewObject("message", msg, "name", "TypeError")}
}

// checkHeader is node's check of a header line in writeHead: the name first, then the value.
func checkHeader(name, value string) *config.Error {
	if !isToken(name) {
		return &config.Error{Raw: config.NewObject("code", "ERR_INVALID_HTTP_TOKEN",
			"message", "Header name must be a valid HTTP token [\""+name+"\"]", "name", "TypeError")}
	}
	if !validValue(value) {
		return &config.Error{Raw: config.NewObject("code", "ERR_INVALID_CHAR",
			"message", "Invalid character in header content [\""+name+"\"]", "name", "TypeError")}
	}
	return nil
}

// validHeader reports whether checkHeader accepts the line.
func validHeader(name, value string) bool { return isToken(name) && validValue(value) }

// validValue reports whether value has no control character other than tab and no character
// past U+00FF.
func validValue(value string) bool {
	i := 0
	for i < len(value) && byteClass[value[i]]&valueByte != 0 {
		i++
	}
	for _, r := range value[i:] { // past the ASCII prefix
		if r < ' ' && r != '\t' || r == 0x7f || r > 0xff {
			return false
		}
	}
	return true
}

// isToken reports whether s is an HTTP token as node checks header names:
// /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if byteClass[s[i]]&tokenByte == 0 {
			return false
		}
	}
	return true
}

// Classes of bytes (byteClass) for the checks of header lines.
const (
	tokenByte = 1 << iota // in an HTTP token
	valueByte             // an ASCII character a header value may hold
)

// byteClass classifies each byte for isToken and validValue: one lookup a character.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("^_`-!#$%&'*+.|~", byte(c)) >= 0:
			t[c] |= tokenByte
		}
		if c < 0x80 && (c >= ' ' && c != 0x7f || c == '\t') {
			t[c] |= valueByte
		}
	}
	return t
}()

// Latin1 is a header value as node writes it, one byte a character (latin1): "ü" is the byte
// 0xFC, not its UTF-8. Status has checked that every character fits in a byte; a value of
// ASCII only is returned as is.
func Latin1(v string) string {
	i := 0
	for i < len(v) && v[i] < 0x80 {
		i++
	}
	if i == len(v) {
		return v
	}
	b := make([]byte, 0, len(v))
	for _, r := range v {
		b = append(b, byte(r))
	}
	return string(b)
}

// NumHeaders is the number of header lines.
func (a *Answer) NumHeaders() int { return len(a.out.headers) }

// Header returns header line i. first says it is the first line of its exact name and holds no
// CR or LF: it may be set without the checks of adding a line.
func (a *Answer) Header(i int) (name, value string, first bool) {
	h := &a.out.headers[i]
	return h.name, h.value, h.set
}

// WireHeader is Header with the value as node writes it (Latin1).
func (a *Answer) WireHeader(i int) (name, value string, first bool) {
	h := &a.out.headers[i]
	if value = h.value; h.wide {
		value = Latin1(value)
	}
	return h.name, value, h.set
}

// HasConnection reports whether the configured headers name Connection.
func (a *Answer) HasConnection() bool { return a.out.hasConnection }

// Body is the body; it must not be modified.
func (a *Answer) Body() []byte { return a.out.body }

// MustCopyBody reports whether the body is in memory Done gives back for the next request's
// answer: the connection must copy it, not refer to it, since it is written after Done.
func (a *Answer) MustCopyBody() bool {
	return a.slab.Holds(a.out.body) || a.box != nil && a.box.holds(a.out.body)
}

// BodyIsBuffer reports whether the body is the whole of the answer's own buffer, built for this
// request (a template's rendered body): the connection may take it (ExchangeBuffer) rather
// than copy it.
func (a *Answer) BodyIsBuffer() bool {
	return a.box != nil && len(a.out.body) > 0 && len(a.out.body) == len(a.box.buf) &&
		unsafe.SliceData(a.out.body) == unsafe.SliceData(a.box.buf)
}

// ExchangeBuffer gives the answer's buffer up to the connection, which has taken the body
// (BodyIsBuffer), and keeps b, emptied, for the next answer in its place: the body's memory is
// the connection's from then on, never written by the imposter again.
func (a *Answer) ExchangeBuffer(b []byte) {
	a.box.buf = b[:0]
}

// Build builds a Dynamic http answer a for req, in place: the proxy's origin is asked (uri and
// body are the request's as received), or the inject function, template and behaviors run,
// cancelled with ctx. An answer already built is left as it is. After an error a is no answer
// to write. (Answers go by pointer: eleven words copied for every call and method cost a
// template's request ~0.1k instructions.)
func (im *Imposter) Build(ctx context.Context, req *request.Request, uri, body []byte, a *Answer) error {
	if a.out != nil {
		return nil
	}
	if is, ok := a.resp.(*isResponse); ok && is.bodyOnly {
		// A template of the body alone (renderBody): no script, no behavior, and nothing of
		// the request in the answer.
		out, box, err := im.renderBody(req, is, nil)
		if err != nil {
			return err
		}
		a.out, a.box, a.contained = out, box, !req.Holds(out.body)
		return nil
	}
	var out *wire
	var err error
	calls, known := 0, false // the script calls that see req (scriptCalls), with a slab
	proxied := false         // a proxy's answer that kept nothing of req (see proxyHTTP)
	if p, ok := a.resp.(*proxyResponse); ok {
		out, proxied, err = im.proxyHTTP(ctx, req, uri, body, a.stub, p)
	} else {
		if im.js != nil && !im.opts.Debug && scriptedResponse(a.resp) {
			// --debug keeps the object that answered (RecordMatch): its objects must outlive
			// the request then.
			a.slab = script.AttachSlab(req)
			if calls, known = scriptCalls(a.resp); known && calls == 1 {
				// The one script call that sees the request is the last to read what it makes:
				// its strings may be the slab's (the body is copied when written: MustCopyBody).
				a.slab.AllowText()
			}
		}
		out, a.box, err = im.produce(ctx, req, a.resp, a.slab)
	}
	if err != nil {
		return err
	}
	a.out = out
	if proxied {
		// The origin's answer, recorded (or not) without the request's strings: the
		// request's memory may serve the next request (Recyclable).
		a.contained = !req.Holds(out.body)
	}
	if is, ok := a.resp.(*isResponse); ok && is.tmpl != nil && is.behaviors == nil && !im.opts.Debug {
		// A template's answer is the stub's values and text rendered for this request, copied
		// out of the renderer (templated.render): none of it is the request's memory, which
		// may then serve the next request (Recyclable). --debug keeps the answer (RecordMatch).
		a.contained = !req.Holds(out.body)
	}
	if is, ok := a.resp.(*isResponse); ok && is.constant && is.fixed.Load() == nil {
		im.fix(is, out)
	}
	if a.slab != nil {
		// Every call that saw the request ran natively, and the body (handed over, written
		// after the handler returns) is not in the memory the request would give the next one.
		a.contained = known && a.slab.Native() == calls && !req.Holds(out.body)
	}
	return nil
}

// scriptCalls is the number of script calls that see the request while r is built (the inject
// function, the decorates), when nothing else does; known is false for a response something
// else reads the request for (a template, a copy, lookup or shellTransform behavior).
func scriptCalls(r response) (calls int, known bool) {
	n, ok := r.base().behaviors.Decorates()
	if !ok {
		return 0, false
	}
	switch r := r.(type) {
	case *injectResponse:
		return n + 1, true
	case *isResponse:
		return n, r.tmpl == nil
	}
	return 0, false
}

// Done says a's answer is written (its headers copied onto the connection's response, its
// body handed over, the debug log and RecordMatch done): the wire Build made for it goes back
// to the pool, for the next request's answer. The body's bytes are not the wire's: they stay
// valid for the connection to write, but for a body in the box's or the slab's memory, which
// the connection has copied (MustCopyBody). a must not be used afterwards.
func (im *Imposter) Done(a *Answer) {
	if a.box != nil {
		// Clear only the header lines that can have been used (a list of the base's or a
		// longer one of its own left them empty), not the whole box.
		for i := range min(len(a.box.w.headers), len(a.box.h)) {
			a.box.h[i] = header{} // not clear, a runtime call: a few lines
		}
		a.box.w = wire{}
		if cap(a.box.buf) > maxKeptBuffer {
			a.box.buf = nil
		}
		if a.slab == nil && !a.box.kept {
			wirePool.Put(a.box) // with a slab, the box is the slab's (boxOf); a kept one, its request's
		}
	}
	if a.slab != nil {
		a.slab.Release()
	}
}

// scriptedResponse reports whether building r may call a script: an inject response, or one
// with behaviors (a decorate among them).
func scriptedResponse(r response) bool {
	if _, ok := r.(*injectResponse); ok {
		return true
	}
	return r.base().behaviors != nil
}

// Recyclable reports whether nothing kept req's strings once a is written: a static response,
// one Build made with scripts the native evaluator ran and nothing else that reads the
// request, or a template's without behaviors (a.contained), of stubs without script predicates, not recorded in a shared store
// (the journal copies what it keeps). Their memory may then serve the next request.
//
// Why a native call keeps nothing: it reads the request's strings into values that live in the
// call (pooled, cleared, never read again by a later call) or in the response it returns (the
// slab's objects, emptied by Done; header values are copied onto the connection's response when
// written; a body in the request's memory makes a not contained). A call goja runs is not
// counted by the slab (Slab.Native): a runtime may keep the strings in its state, so that
// request is released, not recycled.
func (im *Imposter) Recyclable(a *Answer) bool {
	st := static(a.resp) // the answer of every request (a fixed one: see fix)
	return (st != nil && a.out == st || a.contained) && a.Recorded == nil && (im.shared == nil || !im.Records()) && !im.scripted.Load()
}

// RecyclableTCP is Recyclable for a tcp answer: BuildTCP writes a plain `is` response's data
// (or the default data) without reading the request, so nothing keeps req's strings once it is
// written, unless the request was shown in Mountebank's recorded shape or explained (--debug,
// the debug log), recorded in a shared store (the journal copies what it keeps), or seen by a
// script predicate.
func (im *Imposter) RecyclableTCP(a *Answer) bool {
	if a.Err != nil || a.Recorded != nil || a.Why != nil || im.scripted.Load() || im.shared != nil && im.Records() {
		return false
	}
	is, ok := a.resp.(*isResponse)
	return ok && is.behaviors == nil
}

// RecordMatch keeps, with --debug, the match of the stub that answered for the imposter's JSON.
func (im *Imposter) RecordMatch(a *Answer) {
	if a.stub == nil || !im.opts.Debug {
		return
	}
	is := isObject(a.resp)
	if a.out != nil {
		is = a.out.is // what was sent
	}
	if im.def.Protocol != "tcp" {
		is = withConnectionClose(is, a.cors)
	}
	im.recordMatch(a.stub, a.Recorded, is, a.resp)
}

// RecordFaultMatch keeps, with --debug, the match of a stub that answered with a fault: its
// response is {"fault": name}, as Mountebank records it.
func (im *Imposter) RecordFaultMatch(a *Answer, name string) {
	if a.stub == nil || !im.opts.Debug {
		return
	}
	im.recordMatch(a.stub, a.Recorded, config.NewObject("fault", name), a.resp)
}

// withConnectionClose is an http response as Mountebank's match shows it: its http server
// adds Connection: close to the response's own headers object (unless it names a Connection)
// after the match keeps it, so a response with headers shows that header too, and before that,
// for an allowCORS preflight (cors), its Access-Control-Allow-* headers (a name configured in
// another case keeps its place and spelling); one without headers is left as it is. is is not
// changed.
func withConnectionClose(is *config.Object, cors *[3][]string) *config.Object {
	hv, ok := is.Get("headers")
	h, isObj := hv.(*config.Object)
	if !ok || !isObj {
		return is
	}
	nh := &config.Object{Members: append(make([]config.Member, 0, len(h.Members)+4), h.Members...)}
	if cors != nil {
		for i, name := range [3]string{"Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Origin"} {
			var v config.Value
			if vs := cors[i]; len(vs) == 1 {
				v = vs[0]
			} else {
				arr := make([]any, len(vs))
				for j, s := range vs {
					arr[j] = s
				}
				v = arr
			}
			setFolded(nh, name, v)
		}
	}
	for _, m := range nh.Members {
		if strings.EqualFold(m.Key, "connection") {
			if cors == nil {
				return is
			}
			out := &config.Object{Members: append([]config.Member(nil), is.Members...)}
			out.Set("headers", nh)
			return out
		}
	}
	nh.Members = append(nh.Members, config.Member{Key: "Connection", Value: "close"})
	out := &config.Object{Members: append([]config.Member(nil), is.Members...)}
	out.Set("headers", nh)
	return out
}

// setFolded is Mountebank's headersMap.set: the value replaces the first member whose name
// equals name in any case, in its place and spelling, or is added under name.
func setFolded(o *config.Object, name string, v config.Value) {
	for i := range o.Members {
		if strings.EqualFold(o.Members[i].Key, name) {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, config.Member{Key: name, Value: v})
}

// Count counts a request of a protocol without stubs (smtp), which Resolve does for the others.
func (im *Imposter) Count() {
	im.numRequests.Add(1)
	if im.metrics != nil {
		im.metrics.Requests.Inc()
	}
}

// RecordObject records a request already in Mountebank's recorded shape (smtp), answered by no
// stub.
func (im *Imposter) RecordObject(req *config.Object) {
	at := time.Now()
	im.journal.addObject(req, at, NoStub, nil, nil)
	im.changes.Add(1)
	if im.shared != nil {
		im.recordShared(req, at, NoStub)
	}
}

// Admit reports whether the client at ip may be answered (--localOnly, --ipWhitelist).
func (im *Imposter) Admit(ip net.IP) bool { return im.opts.AllowIP == nil || im.opts.AllowIP(ip) }

// Blocked counts and logs a client Admit refused; shown is its address as Mountebank shows it.
func (im *Imposter) Blocked(shown string) {
	if im.metrics != nil {
		im.metrics.Blocked.Inc()
	}
	im.log.Warn("Blocking incoming connection from " + shown + ". Turn off --localOnly or add to --ipWhitelist to allow")
}

// Settings are the options the protocol servers read when they start serving.
func (im *Imposter) Settings() Options { return im.opts }

// DefaultCORS is what an http(s) imposter with allowCORS and a defaultResponse that has headers
// answered its last preflight with, when that answer's headers were the defaultResponse's:
// Mountebank's http server writes a preflight's Access-Control-Allow-* headers into the
// headers object of the answer, which for an answer without headers of its own is the
// defaultResponse's, the same object every time; so from then on every such answer carries
// them, with the values of the latest such preflight.
type DefaultCORS struct {
	values atomic.Pointer[[3][]string]
}

// Load returns the values of the last preflight kept (Access-Control-Allow-Headers, -Methods,
// -Origin), or nil when there was none.
func (d *DefaultCORS) Load() *[3][]string { return d.values.Load() }

// Store keeps the values of a preflight answered with the defaultResponse's headers.
func (d *DefaultCORS) Store(v *[3][]string) { d.values.Store(v) }

// DefaultCORS returns the imposter's DefaultCORS: nil unless it is an http(s) imposter with
// allowCORS whose defaultResponse has headers.
func (im *Imposter) DefaultCORS() *DefaultCORS { return im.defaultCORS }

// HeadersFromDefault reports whether the answer's headers are the imposter's defaultResponse's:
// the response it was built from gives no headers of its own (none, or a falsy value). Only
// for an imposter with a DefaultCORS (whose responses keep their is objects).
func (a *Answer) HeadersFromDefault() bool {
	return a.out != nil && a.out.is != nil && !truthy(get(a.out.is, "headers"))
}

// Debug reports whether mockd runs with --debug.
func (im *Imposter) Debug() bool { return im.opts.Debug }

// MaxBody is the largest request body, also once decompressed.
func (im *Imposter) MaxBody() int {
	if im.opts.MaxBodySize > 0 {
		return im.opts.MaxBodySize
	}
	return request.DefaultMaxBody
}

// DefaultIdleTimeout is how long a tcp or smtp connection may stay silent before mockd closes
// it, and how long a proxied tcp origin may take to answer, unless Options.IdleTimeout says
// otherwise. Mountebank has no limit; a variable so tests can shorten it.
var DefaultIdleTimeout = 2 * time.Minute

// IdleTimeout is how long a tcp or smtp connection may wait for its next request.
func (im *Imposter) IdleTimeout() time.Duration {
	if im.opts.IdleTimeout > 0 {
		return im.opts.IdleTimeout
	}
	return DefaultIdleTimeout
}

// PlainIPv4 reports whether clients are shown as a.b.c.d (node does when bound to an IPv4
// address) rather than ::ffff:a.b.c.d.
func (im *Imposter) PlainIPv4() bool { return im.plainIPv4 }

// Binary reports whether the imposter's mode is binary (tcp data in base64).
func (im *Imposter) Binary() bool { return im.encoding == "base64" }

// Metrics returns the imposter's metrics; nil when metrics are off.
func (im *Imposter) Metrics() *metrics.Imposter { return im.metrics }

// Script returns the imposter's script state; nil without --allowInjection.
func (im *Imposter) Script() *script.Scope { return im.js }

// Log returns the imposter's log.
func (im *Imposter) Log() *slog.Logger { return im.log }

// LogEnabled reports whether the imposter's log takes lines at level: a request's log line is
// built only when it does.
func (im *Imposter) LogEnabled(level slog.Level) bool { return im.enabled(level) }

// LogLine logs msg at level (check LogEnabled first), without looking up the caller.
func (im *Imposter) LogLine(level slog.Level, msg string) { im.logLine(level, msg) }

// LogLineOf logs at level the message its parts make together (check LogEnabled first), without
// making the message: a request's line costs no allocation.
func (im *Imposter) LogLineOf(level slog.Level, parts ...string) { logs.Parts(im.log, level, parts...) }

// LogFailure logs a request that failed with err (its answer is an error), as Mountebank does.
func (im *Imposter) LogFailure(req *request.Request, err error) { im.logFailure(req, err) }

// ErrorBody renders an error a request failed with as Mountebank answers it ({"errors":[…]}).
func ErrorBody(err error) *config.Object { return scriptErrorBody(err) }

// RandomFaultData is what Mountebank writes before closing for RANDOM_DATA_THEN_CLOSE.
const RandomFaultData = `Htijy%@tWXJ/hQ#[Q:7G@dH4"gu[QaX&`

// bytesOf views s as bytes, for reading only.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
