package imposter

import (
	"context"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/proxy"
	"github.com/mockd/mockd/internal/request"
)

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
	if err := oneKind(r); err != nil {
		return nil, err
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
		po, err := proxy.Object(get(r, "proxy"))
		if err != nil {
			return nil, err
		}
		p, err := compileTCPProxy(po)
		if err != nil {
			return nil, err // no source: addResponse names the stub, as Mountebank's dry run does
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
	return im.withBehaviors(out, r)
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
	toV, present := p.Get("to")
	u, cerr := proxy.ParseTo(toV, present) // as Mountebank's dry run reads it (http's too)
	if cerr != nil {
		return nil, cerr
	}
	to := jsvalue.String(toV)
	out := &tcpProxy{to: to, mode: "proxyOnce", addWait: jsvalue.Truthy(get(p, "addWaitBehavior"))}
	if d := get(p, "addDecorateBehavior"); jsvalue.Truthy(d) {
		out.addDecor = d
	}
	if m, ok := get(p, "mode").(string); ok && (m == "proxyAlways" || m == "proxyTransparent") {
		out.mode = m
	}
	if u.Scheme != "tcp" {
		out.toErr = &config.Error{Code: "invalid proxy", Message: "Unable to proxy to any protocol other than tcp", Source: to}
	} else {
		out.addr = u.Host
	}
	gens, err := proxy.GeneratorList(get(p, "predicateGenerators"))
	if err != nil {
		return nil, err
	}
	if err := proxy.DryRunGenerators(gens, config.NewObject("data", "test"), false); err != nil {
		return nil, err
	}
	out.generators = compileGenerators(p)
	return out, nil
}

// compileGenerators compiles the predicateGenerators of a tcp or custom protocol's proxy.
func compileGenerators(p *config.Object) []tcpGenerator {
	var out []tcpGenerator
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
		out = append(out, gen)
	}
	return out
}

// TCPOrigin sends a tcp proxy's request to its origin at addr (host:port; to is the proxy's
// `to`, for messages) and returns the origin's first answer as a response object {data,
// _proxyResponseTime}, or nil when the origin closed without answering, or the error object
// Mountebank writes instead.
type TCPOrigin func(req *request.Request, addr, to string) (answer, failure *config.Object)

// BuildTCP makes the bytes that answer req with a (none for some faults and an origin that
// closed) and says whether the connection stays open after they are written. A proxy response
// asks its origin through origin. Cancelling ctx stops the behaviors of an `is` or inject
// response (a wait, a shell command).
func (im *Imposter) BuildTCP(ctx context.Context, req *request.Request, a *Answer, origin TCPOrigin) (out []byte, keep bool) {
	fail := func(err error) ([]byte, bool) {
		im.log.Error("cannot build the response", "err", err)
		var shell *behavior.ShellError
		if asShell(err, &shell) {
			return config.MarshalJSON(scriptErrorBody(err), 0), true
		}
		return errorsJSON(tcpErrorObject(err)), true
	}
	binary := im.Binary()
	var t *tcpData // nil: the imposter's default data
	fault := ""
	var built response // an inject, or an `is` with behaviors: its object is built for req
	switch r := a.resp.(type) {
	case *proxyResponse:
		p := r.tcp
		if p.toErr != nil {
			return errorsJSON(p.toErr.Render()), true
		}
		obj, errObj := origin(req, p.addr, p.to)
		if errObj != nil {
			return errorsJSON(errObj), true
		}
		if obj == nil {
			return nil, true // the origin closed without answering: Mountebank never answers either
		}
		var err error
		if obj, err = im.proxiedTCP(req, a.stub, r, obj); err != nil {
			return fail(err)
		}
		t = &tcpData{}
		t.setData(get(obj, "data"), binary)
	case *isResponse:
		t = r.tcp
		if r.behaviors != nil {
			built = r
		}
	case *injectResponse:
		built = r
	case *faultResponse:
		fault = r.name
	}
	if built != nil {
		obj, err := im.buildObject(ctx, req, built)
		if err != nil {
			return fail(err)
		}
		t = &tcpData{}
		t.setData(get(obj, "data"), binary)
	}
	if t == nil {
		t = &tcpData{}
	}
	data, hasData, bad := t.data, t.hasData, t.badData
	if !hasData {
		data, bad = im.tcpDefault.data, im.tcpDefault.badData
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
		return []byte(RandomFaultData), false
	default:
		im.log.Error("Unexpected fault type [" + fault + "], expected either CONNECTION_RESET_BY_PEER or RANDOM_DATA_THEN_CLOSE")
	}
	return data, true
}

// tcpDefaultOf compiles the data of a tcp imposter's defaultResponse.
func tcpDefaultOf(dr *config.Object, binary bool) tcpData {
	var t tcpData
	if dr == nil {
		return t // Mountebank's default is {data: ''}: nothing is written
	}
	v, ok := dr.Get("data")
	if !ok {
		t.badData = true // no usable data: Buffer.from(undefined) fails in Mountebank
		return t
	}
	t.setData(v, binary)
	if _, isString := v.(string); !isString {
		t.badData = true
	}
	return t
}

// TCPErrorJSON is Mountebank's {"errors":[err]}, which its tcp server writes onto the socket
// when resolving a response fails (see tcpErrorObject).
func TCPErrorJSON(err error) []byte { return errorsJSON(tcpErrorObject(err)) }

func errorsJSON(e *config.Object) []byte {
	return config.MarshalJSON(config.NewObject("errors", []any{e}), 0)
}

// proxiedTCP passes the origin's answer obj through the response's behaviors and records the
// result as Mountebank's proxy modes say, as its proxyAndRecord does.
func (im *Imposter) proxiedTCP(req *request.Request, st *stub, r *proxyResponse, obj *config.Object) (*config.Object, error) {
	p := r.tcp
	if r.behaviors != nil {
		var err error
		if obj, err = r.behaviors.Apply(context.Background(), req, obj, im.js); err != nil {
			return nil, err
		}
	}
	if p.mode != "proxyTransparent" && st != nil {
		im.recordTCPProxy(req, st, p, obj)
	}
	return obj, nil
}

// recordTCPProxy saves the origin's answer as a new stub (proxyOnce: just before the proxy
// stub) or a new response of the stub with the same generated predicates (proxyAlways), as
// Mountebank's responseResolver does.
func (im *Imposter) recordTCPProxy(req *request.Request, st *stub, p *tcpProxy, answer *config.Object) {
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
	im.recordProxied(st, p.mode == "proxyAlways", preds, nil, newResp, nil, nil)
}

// tcpPredicatesFor builds the predicates of a recorded proxy response from predicateGenerators,
// as Mountebank's predicatesFor does for a tcp request {requestFrom, ip, data}. Injected
// generators are not supported yet and add nothing.
func tcpPredicatesFor(req *request.Request, gens []tcpGenerator) []any {
	return predicatesFor(config.NewObject("requestFrom", req.RequestFrom(), "ip", req.IP(), "data", req.Data()), gens)
}

// predicatesFor builds the predicates of a recorded proxy response from predicateGenerators
// for a request whose fields are those of fields (a tcp request, or a custom protocol's).
func predicatesFor(fields *config.Object, gens []tcpGenerator) []any {
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
