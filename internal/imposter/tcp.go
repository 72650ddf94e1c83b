package imposter

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// tcpIdleTimeout is how long a tcp or smtp connection may stay silent before mockd closes it,
// and how long a proxied origin may take to answer, unless Options.IdleTimeout says otherwise.
// Mountebank has no limit; a variable so tests can shorten it.
var tcpIdleTimeout = 2 * time.Minute

// idleTimeout is how long a connection may wait for its next request.
func (im *Imposter) idleTimeout() time.Duration {
	if im.opts.IdleTimeout > 0 {
		return im.opts.IdleTimeout
	}
	return tcpIdleTimeout
}

// tcpReadSize is the most one read takes from a socket: node's 64 KiB, so that a packet is one
// request as in Mountebank.
const tcpReadSize = 64 << 10

// randomFaultData is what Mountebank writes before closing for RANDOM_DATA_THEN_CLOSE.
const randomFaultData = `Htijy%@tWXJ/hQ#[Q:7G@dH4"gu[QaX&`

// tcpData is the data of a tcp `is` response, compiled.
type tcpData struct {
	data    []byte
	hasData bool // data is truthy; otherwise the imposter's default data is sent
	// badData is set when `data` is neither a string nor absent: node's Buffer.from fails, and
	// Mountebank writes that error onto the socket.
	badData bool
}

// tcpProxy is a compiled tcp proxy response.
type tcpProxy struct {
	to         string
	addr       string // host:port; "" when to is not a tcp:// URL
	toErr      *config.Error
	mode       string
	generators []tcpGenerator
	addWait    bool         // addWaitBehavior
	addDecor   config.Value // addDecorateBehavior, nil when not truthy
}

// tcpGenerator is one compiled predicateGenerator of a tcp proxy.
type tcpGenerator struct {
	base    *config.Object // the generator's keys but matches, predicateOperator and ignore
	op      config.Value   // predicateOperator
	hasOp   bool
	matches *config.Object
}

// compileTCPResponse validates and compiles one response of a tcp imposter: `is` with `data`,
// `proxy` to a tcp:// origin, or `fault`.
func (im *Imposter) compileTCPResponse(r *config.Object) (response, *config.Error) {
	n := 0
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && jsvalue.Truthy(v) {
			n++
		}
	}
	if n > 1 {
		return nil, &config.Error{Code: config.CodeBadData, Message: "each response object must have only one response type", Source: r}
	}
	var out response
	switch {
	case jsvalue.Truthy(get(r, "is")):
		is := config.AsObject(get(r, "is"))
		if is == nil {
			is = &config.Object{}
		}
		data := &tcpData{}
		data.setData(get(is, "data"), im.encoding == "base64")
		out = &isResponse{is: is, tcp: data}
	case jsvalue.Truthy(get(r, "proxy")):
		p, err := compileTCPProxy(config.AsObject(get(r, "proxy")))
		if err != nil {
			return nil, err
		}
		out = &proxyResponse{tcp: p} // its behaviors apply to the origin's answer
	case jsvalue.Truthy(get(r, "fault")):
		// Mountebank applies no behaviors to faults, nor checks them.
		return &faultResponse{respBase: respBase{config: r}, name: jsvalue.String(get(r, "fault"))}, nil
	case jsvalue.Truthy(get(r, "inject")):
		out = &injectResponse{source: jsvalue.String(get(r, "inject"))}
	default:
		return nil, &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: r}
	}
	b := out.base()
	b.config = r
	var err error
	if b.behaviors, err = im.compileBehaviors(r); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		var list config.Errors
		if errors.As(err, &list) && len(list) > 0 {
			return nil, list[0]
		}
		return nil, &config.Error{Code: config.CodeBadData, Message: err.Error(), Source: r}
	}
	return out, nil
}

// setData compiles a configured `data` value as Buffer.from(value, encoding) would.
func (t *tcpData) setData(v config.Value, binary bool) {
	if !jsvalue.Truthy(v) {
		return
	}
	if b, ok := bufferJSON(v); ok {
		// A Buffer from a script (inject, decorate): written as is, in either mode, as
		// Mountebank writes a Buffer it is given.
		t.data, t.hasData = b, true
		return
	}
	s, ok := v.(string)
	if !ok {
		t.badData = true
		t.hasData = true
		return
	}
	t.hasData = true
	if binary {
		t.data = decodeBase64Loose(s)
	} else {
		t.data = []byte(s)
	}
}

// bufferJSON returns the bytes of a node Buffer as JSON shows it, {"type":"Buffer","data":[…]},
// the form Buffer.from also accepts.
func bufferJSON(v config.Value) ([]byte, bool) {
	o, ok := v.(*config.Object)
	if !ok || get(o, "type") != "Buffer" {
		return nil, false
	}
	items, ok := get(o, "data").([]any)
	if !ok {
		return nil, false
	}
	out := make([]byte, len(items))
	for i, it := range items {
		f, _ := it.(float64)
		out[i] = byte(int64(f))
	}
	return out, true
}

func compileTCPProxy(p *config.Object) (*tcpProxy, *config.Error) {
	if p == nil {
		return nil, &config.Error{Code: config.CodeBadData, Message: "unrecognized response type"}
	}
	to, ok := get(p, "to").(string)
	if !ok {
		return nil, &config.Error{Code: config.CodeBadData, Message: "Missing to", Source: p}
	}
	out := &tcpProxy{to: to, mode: "proxyOnce", addWait: jsvalue.Truthy(get(p, "addWaitBehavior"))}
	if d := get(p, "addDecorateBehavior"); jsvalue.Truthy(d) {
		out.addDecor = d
	}
	if m, ok := get(p, "mode").(string); ok && (m == "proxyAlways" || m == "proxyTransparent") {
		out.mode = m
	}
	u, err := url.Parse(to)
	switch {
	case err != nil || u.Scheme == "":
		return nil, &config.Error{Code: "ERR_INVALID_URL", Message: "Invalid URL", Source: to}
	case u.Scheme != "tcp":
		out.toErr = &config.Error{Code: "invalid proxy", Message: "Unable to proxy to any protocol other than tcp", Source: to}
	default:
		out.addr = u.Host
	}
	gens, _ := get(p, "predicateGenerators").([]any)
	for _, g := range gens {
		o := config.AsObject(g)
		if o == nil || o.Has("inject") && jsvalue.Truthy(get(o, "inject")) {
			continue // injected generators are not supported yet and add nothing
		}
		matches := config.AsObject(get(o, "matches"))
		if matches == nil {
			continue
		}
		gen := tcpGenerator{base: &config.Object{}, matches: matches}
		gen.op, gen.hasOp = o.Get("predicateOperator")
		for _, m := range o.Members {
			if m.Key != "matches" && m.Key != "predicateOperator" && m.Key != "ignore" {
				gen.base.Set(m.Key, m.Value)
			}
		}
		out.generators = append(out.generators, gen)
	}
	return out, nil
}

// tcpServer serves a tcp imposter: one goroutine per connection, each packet a request unless
// an end-of-request resolver says to wait for more.
type tcpServer struct {
	im          *Imposter
	binary      bool
	defaultData []byte
	defaultBad  bool // defaultResponse has no usable data: Buffer.from(undefined) fails in Mountebank
	// endOfRequest decides whether the bytes received so far make a whole request; nil means
	// every packet is one (Mountebank's default).
	endOfRequest func(data []byte) bool
	maxRequest   int

	connServer
}

func newTCPServer(im *Imposter) protocolServer {
	s := &tcpServer{im: im, binary: im.encoding == "base64"}
	s.connServer = connServer{netconn.Server{Log: im.log, Handle: s.handle}}
	s.maxRequest = im.maxBody()
	if im.def.DefaultResponse == nil {
		// Mountebank's default is {data: ''}: nothing is written.
	} else if v, ok := im.def.DefaultResponse.Get("data"); ok {
		var t tcpData
		t.setData(v, s.binary)
		s.defaultData = t.data
		if _, isString := v.(string); !isString {
			s.defaultBad = true
		}
	} else {
		s.defaultBad = true
	}
	if eor := config.AsObject(get(im.def.Header, "endOfRequestResolver")); eor != nil && jsvalue.Truthy(get(eor, "inject")) {
		source := jsvalue.String(get(eor, "inject"))
		if im.js == nil {
			im.log.Warn("endOfRequestResolver needs --allowInjection; every packet is a request")
		} else {
			s.endOfRequest = func(data []byte) bool {
				done, err := im.js.EndOfRequest(source, data, s.binary)
				if err != nil {
					im.log.Error("injection X=> " + err.Error())
					return false
				}
				return done
			}
		}
	}
	return s
}

func (s *tcpServer) handle(conn net.Conn) {
	im := s.im
	buf := make([]byte, tcpReadSize)
	var pending []byte
	for {
		_ = conn.SetReadDeadline(time.Now().Add(s.im.idleTimeout()))
		n, err := conn.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			if len(pending) > s.maxRequest {
				im.log.Warn("tcp request too large; closing the connection", "client", conn.RemoteAddr().String(), "bytes", len(pending))
				return
			}
			if s.endOfRequest == nil || s.endOfRequest(pending) {
				payload := pending
				pending = nil
				if !s.respond(conn, payload) {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// respond answers one request; it returns false when the connection must be dropped.
func (s *tcpServer) respond(conn net.Conn, payload []byte) bool {
	im := s.im
	ip, from := request.NodeAddr(conn.RemoteAddr(), im.plainIPv4)
	if im.opts.AllowIP != nil {
		if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok && !im.opts.AllowIP(a.IP) {
			if im.metrics != nil {
				im.metrics.Blocked.Inc()
			}
			im.log.Warn("Blocking incoming connection from " + ip + ". Turn off --localOnly or add to --ipWhitelist to allow")
			return false
		}
	}
	req := request.Acquire()
	defer request.Release(req)
	req.TCP = true
	req.SetClient(ip, from)
	req.Data = s.encode(payload)

	if im.enabled(slog.LevelInfo) {
		// Mountebank shows the first 20 characters of the payload.
		data := req.Data
		if n := len16(data); n > 20 {
			data = prefix16(data, 20) + "..."
		}
		im.logLine(slog.LevelInfo, from+" => "+data)
	}
	st, resp, recorded, _, cerr := im.resolve(req)
	if cerr != nil {
		im.logFailure(req, cerr)
		s.writeError(conn, cerr.Render())
		return true
	}
	// Response generation, as Mountebank times it: from the match to the built response
	// (behaviors, injection, proxying), not writing it.
	var t0 metrics.Instant
	if im.metrics != nil {
		t0 = metrics.Now()
	}
	out, keep := s.build(req, st, resp)
	if im.metrics != nil {
		im.metrics.RespDuration.Observe(t0.Since())
	}
	if len(out) > 0 {
		_ = conn.SetWriteDeadline(time.Now().Add(s.im.idleTimeout()))
		if _, err := conn.Write(out); err != nil {
			return false
		}
	}
	if st != nil && im.opts.Debug {
		im.recordMatch(st, recorded, isObject(resp), resp)
	}
	return keep
}

// build makes the bytes that answer req (none for some faults and an origin that closed) and
// says whether the connection stays open after they are written.
func (s *tcpServer) build(req *request.Request, st *stub, resp response) (out []byte, keep bool) {
	fail := func(err error) ([]byte, bool) {
		s.im.log.Error("cannot build the response", "err", err)
		return config.MarshalJSON(scriptErrorBody(err), 0), true
	}
	var t *tcpData // nil: the imposter's default data
	fault := ""
	switch r := resp.(type) {
	case *proxyResponse:
		obj, errObj := s.proxy(req, r.tcp)
		if errObj != nil {
			return errorsJSON(errObj), true
		}
		if obj == nil {
			return nil, true // the origin closed without answering: Mountebank never answers either
		}
		var err error
		if obj, err = s.proxied(req, st, r, obj); err != nil {
			return fail(err)
		}
		t = &tcpData{}
		t.setData(get(obj, "data"), s.binary)
	case *isResponse:
		t = r.tcp
		if r.behaviors != nil {
			obj, err := s.im.buildObject(context.Background(), req, r)
			if err != nil {
				return fail(err)
			}
			t = &tcpData{}
			t.setData(get(obj, "data"), s.binary)
		}
	case *injectResponse:
		obj, err := s.im.buildObject(context.Background(), req, r)
		if err != nil {
			return fail(err)
		}
		t = &tcpData{}
		t.setData(get(obj, "data"), s.binary)
	case *faultResponse:
		fault = r.name
	}
	if t == nil {
		t = &tcpData{}
	}
	data, hasData, bad := t.data, t.hasData, t.badData
	if !hasData {
		data, bad = s.defaultData, s.defaultBad
	}
	if bad {
		return errorsJSON(config.NewObject("code", "ERR_INVALID_ARG_TYPE")), true
	}
	switch fault {
	case "":
	case "CONNECTION_RESET_BY_PEER":
		// Mountebank destroys the socket: with the request read in full, the client sees the
		// connection closed (FIN), not a reset (test/compat/scenarios/tcp-fault-reset.json).
		return nil, false
	case "RANDOM_DATA_THEN_CLOSE":
		return []byte(randomFaultData), false
	default:
		s.im.log.Error("Unexpected fault type [" + fault + "], expected either CONNECTION_RESET_BY_PEER or RANDOM_DATA_THEN_CLOSE")
	}
	return data, true
}

// errorsJSON is Mountebank's {"errors":[e]}, which its tcp server writes onto the socket when
// resolving a response fails.
func errorsJSON(e *config.Object) []byte {
	return config.MarshalJSON(config.NewObject("errors", []any{e}), 0)
}

// writeError writes Mountebank's {"errors":[error]} onto the socket.
func (s *tcpServer) writeError(conn net.Conn, e *config.Object) {
	_ = conn.SetWriteDeadline(time.Now().Add(s.im.idleTimeout()))
	_, _ = conn.Write(errorsJSON(e))
}

// encode renders request bytes as Mountebank does: base64 in binary mode, otherwise UTF-8 with
// invalid bytes replaced by U+FFFD.
func (s *tcpServer) encode(b []byte) string {
	if s.binary {
		return base64.StdEncoding.EncodeToString(b)
	}
	return jsvalue.DecodeUTF8(b)
}

// proxied passes the origin's answer obj through the response's behaviors and records the result
// as Mountebank's proxy modes say, as its proxyAndRecord does.
func (s *tcpServer) proxied(req *request.Request, st *stub, r *proxyResponse, obj *config.Object) (*config.Object, error) {
	p := r.tcp
	if r.behaviors != nil {
		var err error
		if obj, err = r.behaviors.Apply(context.Background(), req, obj, s.im.js); err != nil {
			return nil, err
		}
	}
	if p.mode != "proxyTransparent" && st != nil {
		s.recordProxy(req, st, p, obj)
	}
	return obj, nil
}

// proxy forwards req to the origin and returns its first answer (the bytes of the first read,
// or as many as the end-of-request resolver wants) as a response object {data,
// _proxyResponseTime}. A nil answer without error means the origin closed without sending
// anything.
func (s *tcpServer) proxy(req *request.Request, p *tcpProxy) (*config.Object, *config.Object) {
	im := s.im
	if p.toErr != nil {
		return nil, p.toErr.Render()
	}
	start := time.Now()
	payload := []byte(req.Data)
	if s.binary {
		payload = decodeBase64Loose(req.Data)
	}
	conn, err := net.DialTimeout("tcp", p.addr, im.idleTimeout())
	if err != nil {
		im.log.Error(fmt.Sprintf("Proxy %s transmission error X=> %v", p.addr, err))
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			return nil, config.NewObject("code", "invalid proxy", "message", "Cannot resolve "+quoteJS(p.to))
		}
		return nil, config.NewObject("code", "invalid proxy", "message", "Unable to connect to "+quoteJS(p.to))
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(s.im.idleTimeout()))
	if _, err := conn.Write(payload); err != nil {
		return nil, nodeSocketError(err)
	}
	buf := make([]byte, tcpReadSize)
	var got []byte
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			got = append(got, buf[:n]...)
			if s.endOfRequest == nil || s.endOfRequest(got) {
				break
			}
		}
		if err != nil {
			if len(got) == 0 || isEOF(err) {
				return nil, nil
			}
			return nil, nodeSocketError(err)
		}
	}
	elapsed := time.Since(start)
	return config.NewObject("data", s.encode(got), "_proxyResponseTime", float64(elapsed.Milliseconds())), nil
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// nodeSocketError renders a socket error the way JSON.stringify renders node's.
func nodeSocketError(err error) *config.Object {
	code := "ECONNRESET"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		code = "ETIMEDOUT"
	}
	return config.NewObject("code", code, "message", err.Error())
}

func quoteJS(s string) string { return string(config.MarshalJSON(s, 0)) }

// recordProxy saves the origin's answer as a new stub (proxyOnce: just before the proxy stub) or
// a new response of the stub with the same generated predicates (proxyAlways), as Mountebank's
// responseResolver does.
func (s *tcpServer) recordProxy(req *request.Request, st *stub, p *tcpProxy, answer *config.Object) {
	im := s.im
	preds := tcpPredicatesFor(req, p.generators)
	newResp := config.NewObject("is", config.Clone(answer))
	var extra []any
	if t, _ := get(answer, "_proxyResponseTime").(float64); p.addWait && t > 0 {
		extra = append(extra, config.NewObject("wait", t))
	}
	if p.addDecor != nil {
		extra = append(extra, config.NewObject("decorate", p.addDecor))
	}
	if len(extra) > 0 {
		newResp.Set("behaviors", extra)
	}
	im.recordProxied(st, p.mode == "proxyAlways", preds, newResp)
}

// tcpPredicatesFor builds the predicates of a recorded proxy response from predicateGenerators,
// as Mountebank's predicatesFor does for a tcp request {requestFrom, ip, data}. Injected
// generators are not supported yet and add nothing.
func tcpPredicatesFor(req *request.Request, gens []tcpGenerator) []any {
	fields := config.NewObject("requestFrom", req.RequestFrom(), "ip", req.IP(), "data", req.Data)
	preds := []any{}
	for _, g := range gens {
		op, hasOp := g.op, g.hasOp
		for _, m := range g.matches.Members {
			pred := config.Clone(g.base).(*config.Object)
			field, known := fields.Get(m.Key)
			switch {
			case m.Value == true && !hasOp:
				de := &config.Object{}
				if known {
					de.Set(m.Key, field)
				}
				pred.Set("deepEquals", de)
			case hasOp && op == "exists":
				ex := &config.Object{}
				for _, f := range fields.Members {
					ex.Set(f.Key, m.Key != "")
				}
				pred.Set("exists", ex)
			case hasOp:
				pred.Set(jsvalue.String(op), config.Clone(fields))
			default:
				// buildEquals looks up the generator's keys inside a string field: nothing.
				pred.Set("equals", config.NewObject(m.Key, &config.Object{}))
			}
			preds = append(preds, pred)
		}
	}
	return preds
}
