package imposter

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/proxy"
	"github.com/mockd/mockd/internal/script"
)

// header is one response header line, as it goes on the wire.
type header struct {
	name, value string
	// set: the first line of this exact name, without CR or LF, so it may skip the checks of
	// fasthttp's Add (see httpserver's write).
	set bool
	// bad: node's writeHead refuses the line (checkHeader fails): Answer.Status reads the flag
	// rather than checking every line of every answer again.
	bad bool
	// wide: the value has a character past ASCII, written one byte a character (Latin1); a
	// value without one is written as it is, not scanned again for every answer.
	wide bool
}

// headerLists shares the header lines of an imposter's responses that send the same headers
// (most stubs of a large imposter send one Content-Type): compiled lines are never changed.
type headerLists struct {
	mu    sync.Mutex
	lists map[string][]header // by the lines joined with NULs
	buf   []byte
}

// maxHeaderLists bounds the header lists an imposter shares.
const maxHeaderLists = 256

// share returns the shared lines equal to hs, or hs.
func (c *headerLists) share(hs []header) []header {
	if len(hs) == 0 {
		return hs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf[:0]
	for _, h := range hs {
		b = append(append(append(append(b, h.name...), 0), h.value...), 0)
	}
	c.buf = b
	if l, ok := c.lists[string(b)]; ok && slices.Equal(l, hs) {
		return l
	}
	if c.lists == nil {
		c.lists = map[string][]header{}
	}
	if len(c.lists) < maxHeaderLists {
		c.lists[string(b)] = hs
	}
	return hs
}

// markHeaders sets header.set and header.bad on the lines they apply to, once, when the lines
// are compiled. A line node accepts has no CR or LF (they are control characters, and no
// token's), so only a refused one needs the scan for line breaks. A line equal to the line at
// the same place of like (a base's lines, which a decorate mostly keeps) takes its bad flag
// from it rather than checking the text again (equal strings that share their bytes compare
// at once).
func markHeaders(hs, like []header) {
	for i := range hs {
		h := &hs[i]
		if i < len(like) && like[i].name == h.name && like[i].value == h.value {
			h.bad = like[i].bad
		} else {
			h.bad = !validHeader(h.name, h.value)
		}
		h.set = !h.bad || !hasLineBreak(h.name) && !hasLineBreak(h.value)
		h.wide = !isASCII(h.value)
		for j := 0; j < i && h.set; j++ {
			h.set = hs[j].name != h.name
		}
	}
}

// isASCII reports whether s has no byte past ASCII (jsvalue.ASCII): a proxied answer's header
// values are checked on every answer.
func isASCII(s string) bool { return jsvalue.ASCII(s) }

func hasLineBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= '\r' && (c == '\r' || c == '\n') {
			return true
		}
	}
	return false
}

// response is one compiled response of a stub: exactly one of the kinds Mountebank knows,
// *isResponse, *proxyResponse, *injectResponse or *faultResponse. It is compiled once, when the
// stub is created (compileResponse); nothing on the request path reads the configured object by
// key. Code that depends on the kind is a type switch over those four types.
type response interface {
	// base is what every kind has.
	base() *respBase
}

// respBase is the part every kind of response has.
type respBase struct {
	// config is the response as configured (upcast), for --debug and the debug log; nil for a
	// static response of an imposter that has neither (see lean).
	config    *config.Object
	behaviors *behavior.Compiled // nil when the response has none (a fault never has any)
}

func (b *respBase) base() *respBase { return b }

// isResponse is an `is` response (and the imposter's default response).
type isResponse struct {
	respBase
	// is is the `is` object, never changed: behaviors and templates start from it (nil as
	// config is).
	is *config.Object
	// http(s): the answer compiled once from is, defaultResponse filling what it leaves out
	// (in the same allocation as the response); unset (http.is nil) for a tcp response.
	http wire
	// tcp: the data compiled once from is; nil means the imposter's default data.
	tcp  *tcpData
	tmpl *templated // http(s): the body and header templates of a `template: true` response
	// bodyOnly: tmpl's only template is the body's text, and nothing else is done per request
	// (no behaviors, no --debug, a text body): an answer is http with the body rendered into
	// the answer's own buffer (see produce), not an object rendered and compiled.
	bodyOnly bool
	// constant: an http(s) response whose behaviors give the same answer for every request
	// (behavior.Compiled.Constant: decorates that read only config.response, and no template);
	// fixed is that answer once built (see fix), which static then returns.
	constant bool
	fixed    atomic.Pointer[wire]
}

// proxyResponse is a proxy response: one of http, tcp and custom is set, after the imposter's protocol.
type proxyResponse struct {
	respBase
	http   *proxy.Proxy
	gen    predCache // proxyAlways's generated predicates (see proxyHTTP)
	tcp    *tcpProxy
	custom *customProxy // a custom protocol's: its program proxies
	// last is the answer compiled last (see proxyHTTP): an origin mostly sends the same
	// header lines, whose checks the next answer's take from it (markHeaders).
	last atomic.Pointer[wire]
	// plain is the answer compiled last of a proxy.Plain (plainWire), with its Gen: an
	// answer of the same Gen is it, without plainWire's look at every line (~450
	// instructions). Replaced only when an answer of another Gen comes (an origin's
	// answer changed: a Date, once a second).
	plain atomic.Pointer[plainServed]
}

// injectResponse is an `inject` response: a JavaScript function builds the response object.
type injectResponse struct {
	respBase
	source string // the function
	// memo keeps the header lines of its answers (see headerMemo).
	memo atomic.Value
	// shaped: the function returns an object whose members but its body are constants
	// (script.Scope.InjectShape), and the response has no behaviors: shape is that object
	// compiled, without a body, and an answer is shape with the body of the call (see produce).
	shaped    bool
	body      *script.Shaped // makes the body of a shaped answer
	shape     wire
	shapeMode config.Value // shape's _mode
}

// faultResponse is a `fault` response: the connection is broken in the named way.
type faultResponse struct {
	respBase
	name string
}

// static returns the answer compiled for r when it is sent as it is, with no work per request
// (an http `is` response without behaviors or templates); nil otherwise.
func static(r response) *wire {
	if is, ok := r.(*isResponse); ok {
		if is.behaviors == nil && is.tmpl == nil && is.http.compiled {
			return &is.http
		}
		if is.constant {
			return is.fixed.Load() // nil until fix
		}
	}
	return nil
}

// readsNoRequest reports whether r answers without reading the request: an http `is` response
// without templates, whose behaviors, if any, give the same answer to every request (constant).
func readsNoRequest(r response) bool {
	is, ok := r.(*isResponse)
	return ok && is.tmpl == nil && is.http.compiled && (is.behaviors == nil || is.constant)
}

// lean drops what a static response keeps of its configured objects (config, is) when the
// imposter shows neither (no --debug, no debug log) and does not need to know whether an
// answer's headers are its defaultResponse's (DefaultCORS): only those read them, and they kept
// alive the objects of every stub's response, which the stubs keep as text.
func (im *Imposter) lean(r response) {
	if im.opts.Debug || im.logDebug || im.defaultCORS != nil {
		return
	}
	if w := static(r); w != nil {
		is := r.(*isResponse)
		is.config, is.is, w.is = nil, nil, nil
	}
}

// isObject is the `is` object of r, for --debug matches: empty for the kinds without one.
func isObject(r response) *config.Object {
	if is, ok := r.(*isResponse); ok && is.is != nil {
		return is.is
	}
	return &config.Object{}
}

// wire is an http answer in the form it goes on the wire: a configured `is` response compiled
// once, or one built for a request (inject, behaviors, templates, a proxy's answer).
type wire struct {
	is *config.Object // the `is` object it was compiled from (for --debug matches); never changed

	headers []header
	body    []byte
	// fail, when set, says why Mountebank's http server fails the request once it has the
	// response (a pointer, not an error, to keep an `is` response 112 B rather than 128).
	fail   *failure
	status int32
	// hasConnection and hasContentLength say whether the configured headers name them.
	hasConnection    bool
	hasContentLength bool
	// compiled says the answer is compiled (http, not tcp): is may be nil then (see lean).
	compiled bool
	// binaryNotText says a binary body is a number or true: Mountebank's http server fails
	// such a request (it calls the body's replace) before it looks at status and headers.
	binaryNotText bool
}

// failure is why Mountebank's http server fails a request once it has the response.
type failure struct {
	// status is node's message for an invalid statusCode ("" when it is valid).
	status string
	// headersOn, when the headers are a truthy value that is not an object (true, a string, a
	// number), names it as V8 does ("boolean 'true'"): postProcess sets headers on it, which
	// throws in strict mode, before writeHead looks at the status code.
	headersOn string
}

// primitiveOn names a truthy headers value that is not an object as V8's "Cannot create
// property … on …" does: "boolean 'true'", "string 'x'", "number '5'"; "" for any other value.
func primitiveOn(v config.Value) string {
	if vr, ok := v.(jsvalue.Valuer); ok {
		v = vr.JSValue()
	}
	switch t := v.(type) {
	case bool:
		if t {
			return "boolean 'true'"
		}
	case string:
		if t != "" {
			return "string '" + t + "'"
		}
	case float64:
		if jsvalue.NumberTruthy(t) {
			return "number '" + jsvalue.FormatNumber(t) + "'"
		}
	}
	return ""
}

// responseKinds are the response types Mountebank knows.
var responseKinds = []string{"is", "proxy", "inject", "fault"}

// oneKind is the error of a tcp or custom protocol's response naming more than one response
// type with a truthy value (http counts every non-null one: checkResponse).
func oneKind(r *config.Object) *config.Error {
	n := 0
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && jsvalue.Truthy(v) {
			n++
		}
	}
	if n > 1 {
		return &config.Error{Code: config.CodeBadData, Message: "each response object must have only one response type", Source: r}
	}
	return nil
}

// checkResponse returns Mountebank's dry-run error for a response config, or nil.
func checkResponse(r *config.Object) *config.Error {
	n := 0
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && v != nil {
			n++
		}
	}
	if n > 1 {
		return &config.Error{Code: config.CodeBadData, Message: "each response object must have only one response type", Source: r}
	}
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && jsvalue.Truthy(v) {
			return nil
		}
	}
	return &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: r}
}

// compileHTTPResponse validates and compiles one response of an http(s) imposter, in the order
// Mountebank's dry run reports problems: the response type, a proxy, the behaviors, a template.
// A proxy's error has no source yet (see stubSource).
func (im *Imposter) compileHTTPResponse(r *config.Object) (response, error) {
	if err := checkResponse(r); err != nil {
		return nil, err
	}
	var out response
	switch {
	case jsvalue.Truthy(get(r, "inject")):
		out = &injectResponse{source: jsvalue.String(get(r, "inject"))}
	case jsvalue.Truthy(get(r, "fault")):
		// Mountebank applies no behaviors to faults, nor checks them.
		return &faultResponse{respBase: respBase{config: r}, name: jsvalue.String(get(r, "fault"))}, nil
	case jsvalue.Truthy(get(r, "proxy")):
		po, err := proxy.Object(get(r, "proxy"))
		if err != nil {
			return nil, dryRunError{err}
		}
		p, err := proxy.Compile(po, im.MaxBody())
		if err != nil {
			return nil, dryRunError{err}
		}
		if im.opts.Poller == netconn.PollerGo {
			p.UseRuntimePoller()
		}
		if err := im.dryRunInjectedGenerators(p); err != nil {
			return nil, err
		}
		out = &proxyResponse{http: p}
	default:
		is := newIsResponse(r, im.defaults)
		is.http.headers = im.headerLists.share(is.http.headers)
		out = is
	}
	b := out.base()
	b.config = r
	var err error
	if b.behaviors, err = im.compileBehaviors(r); err != nil {
		return nil, err
	}
	if is, ok := out.(*isResponse); ok {
		tmpl, err := compileTemplate(r)
		if err != nil {
			err.Path = "is"
			return nil, err
		}
		is.tmpl = tmpl
		is.bodyOnly = bodyRendered && tmpl.bodyOnly() && b.behaviors == nil && !im.opts.Debug && !is.binary(im.defaults)
		// With --debug the object that answered is kept (RecordMatch): each request's own.
		is.constant = tmpl == nil && !im.opts.Debug && b.behaviors.Constant(im.js)
	}
	// --debug keeps the object that answered (RecordMatch): each request's whole one.
	if ir, ok := out.(*injectResponse); ok && b.behaviors == nil && !im.opts.Debug && im.js != nil {
		if fixed, sh, ok := im.js.InjectShape(ir.source); ok {
			ir.body = sh
			ir.shape.compile(fixed, im.defaults, nil, nil, nil, nil)
			_, _, _, ir.shapeMode = isFields(fixed)
			ir.shaped = true
		}
	}
	im.lean(out)
	return out, nil
}

// binary reports whether the body of is is base64 (_mode binary, its own or the default's).
func (is *isResponse) binary(def *defaults) bool {
	_, _, _, mode := isFields(is.is)
	if !truthy(mode) {
		mode = def.mode
	}
	return mode == "binary"
}

// defaults are the fields of an http(s) imposter's defaultResponse that fill in what a response
// leaves out, as Mountebank's postProcess does; read once from the configured object.
type defaults struct {
	statusCode, headers, body, mode config.Value
}

// noDefaults are the defaults of every imposter without a defaultResponse (defaultsOf(nil)), and
// noDefaultResp its default response (an empty is): neither is ever changed, so they are made
// once rather than for each imposter a client suite creates.
var (
	noDefaults    = defaultsOf(nil)
	noDefaultResp = sync.OnceValue(func() *isResponse {
		return newIsResponse(config.NewObject("is", &config.Object{}), noDefaults)
	})
)

// defaultsOf reads the defaultResponse def (nil for none).
func defaultsOf(def *config.Object) *defaults {
	return &defaults{statusCode: get(def, "statusCode"), headers: get(def, "headers"), body: get(def, "body"), mode: get(def, "_mode")}
}

// newIsResponse compiles the `is` response r (or the default response, for r without `is`) of an
// http(s) imposter, falling back to the imposter's defaultResponse field by field as
// Mountebank's postProcess does.
func newIsResponse(r *config.Object, def *defaults) *isResponse {
	is := config.AsObject(get(r, "is"))
	if is == nil {
		is = &config.Object{}
	}
	out := &isResponse{respBase: respBase{config: r}, is: is}
	out.http.compile(is, def, nil, nil, nil, nil)
	return out
}

// compileIs compiles an `is` object into its wire form, which keeps is and never changes it;
// def holds the imposter's defaultResponse fields. base, when not nil, is an answer compiled
// from base.is with the same def: the parts of is that are base.is's (the same objects, as a
// decorate leaves what it does not change) are taken from it rather than compiled again, and is
// itself gives base. The body is a view of a string body's bytes, never written.
func compileIs(is *config.Object, def *defaults, base *wire) *wire {
	if base != nil && base.is == is {
		return base
	}
	return compileIsLike(is, def, base, nil)
}

// compileIsLike is compileIs, with like, when base is nil, the header lines markHeaders
// compares is's with (the lines of an answer like it: a proxy's answer before).
func compileIsLike(is *config.Object, def *defaults, base *wire, like []header) *wire {
	n := -1
	if ho, _ := get(is, "headers").(*config.Object); ho != nil {
		n = headerLines(ho)
	}
	out := wireWithRoom(n)
	out.compile(is, def, base, nil, nil, like)
	return out
}

// wireWithRoom returns a new wire with room for n header lines (none for n < 0): the wire and
// its lines in one allocation (a response's few headers; a proxied answer's are mostly four to
// six).
func wireWithRoom(n int) *wire {
	var out *wire
	switch {
	case n < 0 || n > 8:
		out = &wire{}
	case n <= 2:
		p := &struct {
			w wire
			h [2]header
		}{}
		out, p.w.headers = &p.w, p.h[:0]
	case n <= 4:
		p := &struct {
			w wire
			h [4]header
		}{}
		out, p.w.headers = &p.w, p.h[:0]
	default:
		p := &struct {
			w wire
			h [8]header
		}{}
		out, p.w.headers = &p.w, p.h[:0]
	}
	return out
}

// isFields returns the fields of an `is` object compile reads (nil for those absent, and for a
// nil object), in one pass over its members: the first member of each name, as get reads it.
func isFields(o *config.Object) (status, headers, body, mode config.Value) {
	if o == nil {
		return
	}
	var seen uint8
	for i := range o.Members {
		m := &o.Members[i]
		// The four names differ in length: one comparison of the text decides (a switch on
		// the text orders it by comparisons of their own).
		switch len(m.Key) {
		case len("statusCode"):
			if seen&1 == 0 && m.Key == "statusCode" {
				status, seen = m.Value, seen|1
			}
		case len("headers"):
			if seen&2 == 0 && m.Key == "headers" {
				headers, seen = m.Value, seen|2
			}
		case len("body"):
			if seen&4 == 0 && m.Key == "body" {
				body, seen = m.Value, seen|4
			}
		case len("_mode"):
			if seen&8 == 0 && m.Key == "_mode" {
				mode, seen = m.Value, seen|8
			}
		}
	}
	return
}

// compile sets out to the wire form of is, as compileIs describes. memo, when not nil, is the
// slot of a headerMemo for answers built for one response: header lines equal to the ones it
// holds are taken from it, compiled once; volatile is as newHeaderMemo reads it. like, when
// base is nil, is as markHeaders reads it.
func (out *wire) compile(is *config.Object, def *defaults, base *wire, memo *atomic.Value, volatile func(string) bool, like []header) {
	out.is, out.compiled = is, true
	status, hv, body, mode := isFields(is)
	var baseHeaders, baseBody, baseMode config.Value
	if base != nil {
		_, baseHeaders, baseBody, baseMode = isFields(base.is)
	}
	if !truthy(status) {
		status = def.statusCode
	}
	code, err := statusCode(status)
	out.status, out.fail = int32(code), nil
	if err != nil {
		out.fail = &failure{status: err.Error()}
	}

	if base != nil && sameValue(hv, baseHeaders) {
		out.headers, out.hasConnection, out.hasContentLength = base.headers, base.hasConnection, base.hasContentLength
		if base.fail != nil && base.fail.headersOn != "" {
			if out.fail == nil {
				out.fail = &failure{}
			}
			out.fail.headersOn = base.fail.headersOn
		}
	} else {
		if !truthy(hv) {
			hv = def.headers
		}
		if on := primitiveOn(hv); on != "" {
			if out.fail == nil {
				out.fail = &failure{}
			}
			out.fail.headersOn = on
		}
		ho := config.AsObject(hv)
		var m *headerMemo
		if memo != nil && ho != nil {
			m, _ = memo.Load().(*headerMemo)
		}
		if m != nil && m.matches(ho) {
			out.headers, out.hasConnection, out.hasContentLength = m.lines, m.hasConnection, m.hasContentLength
		} else {
			if base != nil {
				like = base.headers
			}
			out.compileHeaders(ho, like)
			if memo != nil && ho != nil && m == nil {
				if m = newHeaderMemo(ho, out, volatile); m != nil {
					memo.CompareAndSwap(nil, m)
				}
			}
		}
	}

	if base != nil && sameValue(body, baseBody) && sameValue(mode, baseMode) {
		out.body, out.binaryNotText = base.body, base.binaryNotText
	} else {
		out.compileBody(body, mode, def)
	}
	if out.hasContentLength {
		out.utf8Values(mode, def)
	}
}

// utf8Values makes out's header values past ASCII go out as UTF-8 rather than one byte a
// character, as node writes them in an answer with a Content-Length and a text body that is
// not empty: it sends the header block together with the body's first piece, a string, in the
// body's encoding (OutgoingMessage._send); otherwise (chunked, empty or binary) alone, as
// Latin-1. mode is the body's _mode as given (def's when not). The lines are copied, and only
// when one of them has such a value: compiled lines are shared and never changed.
func (out *wire) utf8Values(mode config.Value, def *defaults) {
	if !out.hasContentLength || len(out.body) == 0 {
		return
	}
	if !truthy(mode) {
		mode = def.mode
	}
	if mode == "binary" {
		return
	}
	for i := range out.headers {
		if out.headers[i].wide {
			hs := slices.Clone(out.headers)
			for j := range hs {
				hs[j].wide = false
			}
			out.headers = hs
			return
		}
	}
}

// latin1Values undoes utf8Values: out's header values past ASCII go out one byte a character
// again, in lines copied into dst's room when one has such a value.
func (out *wire) latin1Values(dst []header) {
	for i := range out.headers {
		if !out.headers[i].wide && !isASCII(out.headers[i].value) {
			hs := append(dst, out.headers...)
			for j := range hs {
				hs[j].wide = !isASCII(hs[j].value)
			}
			out.headers = hs
			return
		}
	}
}

// compileBody sets out's body from an `is` object's body and _mode fields (nil for absent).
func (out *wire) compileBody(body, mode config.Value, def *defaults) {
	if !truthy(body) {
		body = def.body
	}
	if !truthy(mode) {
		mode = def.mode
	}
	var text string
	out.binaryNotText = false
	switch b := body.(type) {
	case *config.Object, []any:
		js := config.MarshalJSON(b, 4)
		if mode != "binary" {
			out.body = js
			return
		}
		text = string(js)
	case nil:
		text = ""
	default:
		if truthy(b) {
			text = jsvalue.String(b)
			if _, isString := b.(string); !isString && mode == "binary" {
				out.binaryNotText = true
			}
		}
	}
	if mode == "binary" {
		out.body = decodeBase64Loose(stripURLSafe(text))
	} else if text != "" {
		out.body = bytesOf(text) // read only: written to the wire, never changed
	}
}

// compileHeaders sets the header lines of ho (nil for none); like is as markHeaders reads it.
func (out *wire) compileHeaders(ho *config.Object, like []header) {
	if ho == nil {
		return
	}
	n := headerLines(ho)
	switch {
	case n > cap(out.headers):
		out.headers = make([]header, 0, n)
	case n == 0:
		out.headers = nil
	}
	for _, m := range ho.Members {
		if len(m.Key) == len("connection") && strings.EqualFold(m.Key, "connection") {
			out.hasConnection = true
		}
		if len(m.Key) == len("content-length") && strings.EqualFold(m.Key, "content-length") {
			out.hasContentLength = true
			continue // recomputed from the body, as Mountebank does
		}
		switch v := m.Value.(type) {
		case []any:
			for _, e := range v {
				out.headers = append(out.headers, header{name: m.Key, value: jsvalue.String(e)})
			}
		default:
			out.headers = append(out.headers, header{name: m.Key, value: jsvalue.String(v)})
		}
	}
	markHeaders(out.headers, like)
}

// headerLines is the number of header lines of ho at most (an array is a line an element;
// compileHeaders leaves Content-Length out).
func headerLines(ho *config.Object) int {
	n := 0
	for _, m := range ho.Members {
		if a, isArr := m.Value.([]any); isArr {
			n += len(a)
		} else {
			n++
		}
	}
	return n
}

// headerMemo is the header lines compiled from the first headers object of a response's built
// answers (an inject function's result, or what its decorates left), kept for the answers after
// it: a script that returns the same names and values for every request (the usual
// Content-Type) has its lines compiled and checked once, not for every answer. A later headers
// object equal to src, member for member, compiles to lines; one that is not is compiled as
// usual (the memo is made once, never replaced, so that headers that change cost no
// allocation). A string of the first answer in memory the request gives back (volatile) is
// copied; the others (the configured ones, a script's literals) are kept as they are, so that
// the next answer's same strings compare at once.
type headerMemo struct {
	src                             []string // names and values, one after the other
	lines                           []header // read only: answers share them
	hasConnection, hasContentLength bool
}

// matches reports whether ho's members are src's names and string values, in order.
func (m *headerMemo) matches(ho *config.Object) bool {
	if 2*len(ho.Members) != len(m.src) {
		return false
	}
	for i := range ho.Members {
		mb := &ho.Members[i]
		v, ok := mb.Value.(string)
		if !ok || mb.Key != m.src[2*i] || v != m.src[2*i+1] {
			return false
		}
	}
	return true
}

// newHeaderMemo returns the memo of out's header lines, compiled from ho; nil when a value of
// ho is not a string (arrays and numbers are compiled each time). volatile says a string is in
// memory that serves another request once this answer is written.
func newHeaderMemo(ho *config.Object, out *wire, volatile func(string) bool) *headerMemo {
	m := &headerMemo{src: make([]string, 0, 2*len(ho.Members)), hasConnection: out.hasConnection, hasContentLength: out.hasContentLength}
	keep := func(s string) string {
		if volatile(s) {
			return strings.Clone(s)
		}
		return s
	}
	for _, mb := range ho.Members {
		v, ok := mb.Value.(string)
		if !ok {
			return nil
		}
		m.src = append(m.src, keep(mb.Key), keep(v))
	}
	m.lines = make([]header, len(out.headers))
	for i, h := range out.headers {
		// The lines' strings are ho's (the configured names and values, or jsvalue.String of
		// them): the memo's serve as well.
		h.name, h.value = kept(h.name, m.src, keep), kept(h.value, m.src, keep)
		m.lines[i] = h
	}
	return m
}

// kept returns the string of src equal to s, or keep(s).
func kept(s string, src []string, keep func(string) string) string {
	for _, c := range src {
		if c == s {
			return c
		}
	}
	return keep(s)
}

// truthy is jsvalue.Truthy, deciding the response fields' usual kinds first: an object or an
// array is truthy (jsvalue.Truthy reaches them only after asking for its Valuer interface).
func truthy(v config.Value) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case *config.Object, []any:
		return true
	}
	return jsvalue.Truthy(v)
}

// sameValue reports whether a and b, two values of the same field of two `is` objects, certainly
// compile alike: both absent or falsy (the default applies to both), the same object or array,
// or equal strings.
func sameValue(a, b config.Value) bool {
	if !truthy(a) && !truthy(b) {
		return true
	}
	switch x := a.(type) {
	case *config.Object:
		y, ok := b.(*config.Object)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// statusCode converts a configured statusCode as node's writeHead does: statusCode |= 0
// (ToNumber, then ToInt32: [200], "0x70" and 2^32+200 are valid), then 100..999.
func statusCode(v config.Value) (int, error) {
	if f, ok := v.(float64); ok && f >= 100 && f <= 999 && f == math.Trunc(f) {
		return int(f), nil // the usual: an integer in range is its own ToInt32
	}
	if v == nil || !jsvalue.Truthy(v) {
		return 200, nil
	}
	code := toInt32(jsvalue.Number(v))
	if code < 100 || code > 999 {
		return 0, fmt.Errorf("Invalid status code: %s", formatS(v))
	}
	return int(code), nil
}

// toInt32 is JavaScript's ToInt32 (f | 0).
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int32(uint32(int64(math.Mod(math.Trunc(f), 1<<32))))
}

// decodeBase64Loose decodes base64 as node's Buffer.from(text, 'base64') does.
var decodeBase64Loose = config.DecodeBase64

// stripURLSafe drops '-' and '_' from an http response's binary body: Mountebank's http server
// removes every character outside [A-Za-z0-9=+/] before node decodes it, so the URL-safe
// alphabet node would otherwise accept is skipped there ("QUJD-_" is "ABC", not "ABC\xfb").
func stripURLSafe(text string) string {
	if !strings.ContainsAny(text, "-_") {
		return text
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return r
	}, text)
}
