package imposter

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Custom protocols (--protofile): a program serves the imposter's port and resolves each
// request it receives through the admin API (POST /imposters/:id/_requests), as Mountebank's
// out-of-process protocols do (models/protocols.js, responseResolver.js). The core matches the
// request the program sent, as it is, against the stubs, records it, and answers the response
// object the stub picks ({"response": …}) or, for a proxy, the instruction to proxy, whose
// result the program sends back (POST …/_requests/:key) to be recorded.

// customState is what an imposter of a custom protocol keeps: its program and the proxies
// the program has not resolved yet.
type customState struct {
	ext     *External
	mu      sync.Mutex
	pending map[string]*pendingProxy
	order   []string // keys of pending, oldest first
	next    int
}

// maxPendingProxies bounds the proxies a program may leave unresolved; the oldest go first.
const maxPendingProxies = 10000

// pendingProxy is a proxy response handed to the program, waiting for the origin's answer.
type pendingProxy struct {
	stub  *stub
	resp  *proxyResponse
	req   *config.Object
	start time.Time
}

// customProxy is a compiled proxy response of a custom protocol: the program proxies.
type customProxy struct {
	config *config.Object // the proxy object as handed to the program (mode defaulted)
	mode   string
	gens   []tcpGenerator
	wait   bool         // addWaitBehavior
	decor  config.Value // addDecorateBehavior, nil when not truthy
}

// Custom reports whether a program serves the imposter (a custom protocol).
func (im *Imposter) Custom() bool { return im.custom != nil }

// Metadata is what the program of a custom protocol announced when it started (shown in the
// imposter's JSON); nil for other imposters.
func (im *Imposter) Metadata() *config.Object {
	if im.custom == nil {
		return nil
	}
	return im.custom.ext.Metadata
}

// compileCustomResponse compiles one response of a custom protocol's imposter: an `is`
// object handed to the program as it is (after behaviors), a proxy the program runs, an
// inject, or a fault (handed over as configured).
func (im *Imposter) compileCustomResponse(r *config.Object) (response, error) {
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
		out = &isResponse{is: is}
	case jsvalue.Truthy(get(r, "proxy")):
		p := config.AsObject(get(r, "proxy"))
		if p == nil {
			p = &config.Object{}
		}
		cp := &customProxy{config: p, mode: "proxyOnce", wait: jsvalue.Truthy(get(p, "addWaitBehavior")), gens: compileGenerators(p)}
		if d := get(p, "addDecorateBehavior"); jsvalue.Truthy(d) {
			cp.decor = d
		}
		if m, ok := get(p, "mode").(string); ok && (m == "proxyAlways" || m == "proxyTransparent") {
			cp.mode = m
		} else {
			// Mountebank sets the mode it uses on the proxy it hands the program.
			cp.config = config.Clone(p).(*config.Object)
			cp.config.Set("mode", "proxyOnce")
		}
		out = &proxyResponse{custom: cp}
	case jsvalue.Truthy(get(r, "fault")):
		return &faultResponse{respBase: respBase{config: r}, name: jsvalue.String(get(r, "fault"))}, nil
	case jsvalue.Truthy(get(r, "inject")):
		out = &injectResponse{source: jsvalue.String(get(r, "inject"))}
	default:
		return nil, &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: r}
	}
	resp, ce := im.withBehaviors(out, r)
	if ce != nil {
		return nil, ce
	}
	return resp, nil
}

// ErrNotCustom is ResolveCustomProxy's error for an imposter no program serves: it hands no
// proxy to a program, so it has no key to resolve (Mountebank's process ends on the rejection).
var ErrNotCustom = &config.Error{Code: config.CodeNoSuchResource, Message: "invalid proxy resolution key"}

// errBuiltinProxy is ResolveCustom's error for a proxy of an imposter mockd serves itself:
// Mountebank forwards the posted request to the origin there; mockd proxies only requests it
// received on the wire (README, Differences).
var errBuiltinProxy = &config.Error{Code: config.CodeBadData,
	Message: "a proxy of an http, https, tcp or smtp imposter answers only requests it receives on its port, not those posted to _requests"}

// ResolveCustom resolves a request the program of a custom protocol received (the "request"
// of POST /imposters/:id/_requests) as Mountebank's getResponseFor does: it is counted,
// recorded and matched as it is, and the answer is {"response": …} (the stub's `is` object
// after its behaviors, an inject's result, a fault as configured, {} when no stub matches),
// or, for a proxy, {"proxy": …, "request": …, "callbackURL": …/_requests/:key}, or
// {"blocked": true, …} for a client --localOnly or --ipWhitelist refuses.
// An imposter mockd serves itself (http, https, tcp, smtp) resolves a posted request the same
// way, as Mountebank's getResponseFor does for every imposter, and answers the response object
// itself, not wrapped in {"response": …}.
func (im *Imposter) ResolveCustom(ctx context.Context, obj *config.Object) (*config.Object, error) {
	if ip, ok := get(obj, "ip").(string); ok && im.opts.AllowIP != nil {
		if parsed := net.ParseIP(ip); parsed != nil && !im.opts.AllowIP(parsed) {
			im.Blocked(ip)
			return config.NewObject("blocked", true, "code", "unauthorized ip address"), nil
		}
	}
	req := request.Acquire()
	defer request.Release(req)
	req.Object = obj
	a := im.Resolve(req)
	if a.Err != nil {
		return nil, a.Err
	}
	wrap := func(o *config.Object) *config.Object {
		if im.custom == nil {
			return o
		}
		return config.NewObject("response", o)
	}
	switch r := a.resp.(type) {
	case *proxyResponse:
		if r.custom == nil {
			if im.custom == nil {
				return nil, errBuiltinProxy
			}
			return nil, errors.New("BUG: a custom protocol's proxy was not compiled as one")
		}
		key := im.custom.add(&pendingProxy{stub: a.stub, resp: r, req: obj, start: time.Now()})
		return config.NewObject("proxy", r.custom.config, "request", obj,
			"callbackURL", im.custom.ext.CallbackURL+"/"+key), nil
	case *faultResponse:
		return wrap(config.Clone(r.config).(*config.Object)), nil
	}
	if is, ok := a.resp.(*isResponse); ok && is.is == nil { // lean: see Imposter.lean
		return configuredIs(a.stub, is), nil
	}
	out, err := im.buildObject(ctx, req, a.resp)
	if err != nil {
		return nil, err
	}
	if a.stub != nil && im.opts.Debug {
		im.recordMatch(a.stub, obj, out, a.resp)
	}
	return wrap(out), nil
}

// configuredIs is a clone of the `is` object of st's response r, which lean left only in
// st's text: r's place in the repeat-expanded list names the configured response. {} when
// there is none (the default response, or the empty one of a stub whose responses all repeat
// no times).
func configuredIs(st *stub, r *isResponse) *config.Object {
	if st == nil {
		return &config.Object{}
	}
	k := -1
	responses, _ := st.list()
	for i, x := range responses {
		if x == response(r) {
			k = i
			break
		}
	}
	if k < 0 {
		return &config.Object{}
	}
	at := st.start(k) // r's first place in the cycle
	list, _ := get(st.definition(), "responses").([]any)
	var pos uint64
	for _, rv := range list {
		o := config.AsObject(rv)
		pos += uint64(config.Repeat(o))
		if at < pos {
			if is := config.AsObject(get(o, "is")); is != nil {
				return config.Clone(is).(*config.Object)
			}
			break
		}
	}
	return &config.Object{}
}

// ResolveCustomProxy takes the origin's answer to a proxy ResolveCustom handed the program
// (POST /imposters/:id/_requests/:key): the proxy's behaviors run on it, it is recorded as
// the proxy's mode says, and the result is the response the program sends. An unknown key is
// Mountebank's "invalid proxy resolution key" (404).
func (im *Imposter) ResolveCustomProxy(ctx context.Context, key string, answer config.Value) (*config.Object, error) {
	if im.custom == nil {
		return nil, ErrNotCustom
	}
	p := im.custom.take(key)
	if p == nil {
		return nil, &config.Error{Code: config.CodeNoSuchResource, Message: "invalid proxy resolution key",
			Source: im.custom.ext.CallbackURL + "/" + key}
	}
	resp := config.AsObject(answer)
	if resp == nil {
		resp = &config.Object{}
	}
	resp.Set("_proxyResponseTime", float64(time.Since(p.start).Milliseconds()))
	req := request.Acquire()
	defer request.Release(req)
	req.Object = p.req
	if b := p.resp.behaviors; b != nil {
		var err error
		if resp, err = b.Apply(ctx, req, resp, im.js); err != nil {
			return nil, err
		}
	}
	if cp := p.resp.custom; cp.mode != "proxyTransparent" {
		newResp := config.NewObject("is", config.Clone(resp))
		var extra []any
		if t, _ := get(resp, "_proxyResponseTime").(float64); cp.wait && t > 0 {
			extra = append(extra, config.NewObject("wait", t))
		}
		if cp.decor != nil {
			extra = append(extra, config.NewObject("decorate", cp.decor))
		}
		if len(extra) > 0 {
			newResp.Set("behaviors", extra)
		}
		im.recordProxied(p.stub, cp.mode == "proxyAlways", predicatesFor(p.req, cp.gens), nil, newResp, nil, nil)
	}
	return resp, nil
}

// add keeps p until the program resolves it and returns its key.
func (c *customState) add(p *pendingProxy) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strconv.Itoa(c.next)
	c.next++
	c.pending[key] = p
	c.order = append(c.order, key)
	for len(c.pending) > maxPendingProxies {
		delete(c.pending, c.order[0])
		c.order = c.order[1:]
	}
	if len(c.order) > 2*maxPendingProxies { // resolved keys linger in order: compact
		kept := c.order[:0]
		for _, k := range c.order {
			if c.pending[k] != nil {
				kept = append(kept, k)
			}
		}
		c.order = kept
	}
	return key
}

// take returns the pending proxy of key and forgets it; nil when there is none.
func (c *customState) take(key string) *pendingProxy {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[key]
	delete(c.pending, key)
	return p
}
