package imposter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/hbs"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// withBehaviors gives out the configured response r and its compiled behaviors, as a tcp or
// custom protocol's response has them: a list of behavior errors reports its first.
func (im *Imposter) withBehaviors(out response, r *config.Object) (response, *config.Error) {
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

// compileBehaviors validates a response's behaviors as Mountebank's behaviorsValidator does and
// compiles them once; nil when the response has none that do something.
func (im *Imposter) compileBehaviors(r *config.Object) (*behavior.Compiled, error) {
	bv, present := r.Get("behaviors")
	if !present {
		return nil, nil
	}
	if errs := behavior.Validate(bv); len(errs) > 0 {
		if len(errs) == 1 {
			return nil, errs[0]
		}
		return nil, config.Errors(errs)
	}
	list, _ := bv.([]any)
	comp, err := behavior.Compile(list, behavior.Options{Timeout: im.scriptTimeout(), MaxOutput: im.MaxBody(), Logger: im.log, Files: im.opts.Files})
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		return nil, &config.Error{Code: config.CodeBadData, Message: err.Error(), Source: r}
	}
	if comp.Len() == 0 {
		return nil, nil
	}
	return comp, nil
}

func (im *Imposter) scriptTimeout() time.Duration {
	if im.opts.Script != nil {
		return im.opts.Script.Timeout()
	}
	return 0
}

// produce builds the http answer of a response that is not static (inject, fault, behaviors,
// templates; a proxy is proxyHTTP's) for req: the response object, passed through the
// behaviors, compiled like a configured response (defaultResponse filling what it leaves out).
// Parts the behaviors left as they were keep their compiled form; the result is the stub's
// compiled answer itself when nothing changed, and must not be modified.
//
// The wire is the stub's, or box's: slab's own (see boxOf) or, without a slab, one taken from
// the pool (Done gives it back).
func (im *Imposter) produce(ctx context.Context, req *request.Request, r response, slab *script.Slab) (*wire, *wireBox, error) {
	if ir, ok := r.(*injectResponse); ok && ir.shaped {
		// Only the body is made for this request; the rest was compiled with the stub.
		if body, ok := ir.body.Body(req); ok {
			box := boxOf(slab)
			box.w = ir.shape
			box.w.body = nil
			box.w.compileBody(body, ir.shapeMode, im.defaults)
			if box.w.hasContentLength {
				box.w.utf8Values(ir.shapeMode, im.defaults)
			}
			return &box.w, box, nil
		}
	}
	if is, ok := r.(*isResponse); ok && is.bodyOnly {
		return im.renderBody(req, is, slab)
	}
	obj, err := im.buildObject(ctx, req, r)
	if err != nil {
		return nil, nil, err
	}
	base := &im.defaultResp.http // what an empty `is` compiles to: inject and faults start there
	var memo *atomic.Value       // where the answers of r keep their header lines (headerMemo)
	switch r := r.(type) {
	case *isResponse:
		base = &r.http
		memo = r.behaviors.Memo()
	case *injectResponse:
		memo = &r.memo
	}
	if base.is == obj {
		return base, nil, nil
	}
	box := boxOf(slab)
	box.w.headers = box.h[:0]
	box.w.compile(obj, im.defaults, base, memo, func(s string) bool {
		return req.Holds(bytesOf(s)) || slab.Holds(bytesOf(s))
	}, nil)
	return &box.w, box, nil
}

// bodyRendered is false only in tests comparing the bodyOnly route with the general one.
var bodyRendered = true

// renderBody builds the answer of a bodyOnly response: its compiled answer with the body
// rendered for req into the box's buffer (the answer's body then; MustCopyBody). It answers
// what buildObject and compile answer for the rendered object: an empty text is the
// defaultResponse's body, as an empty body is.
func (im *Imposter) renderBody(req *request.Request, is *isResponse, slab *script.Slab) (*wire, *wireBox, error) {
	var box *wireBox
	if slab == nil {
		box = keptBox(req)
	} else {
		box = boxOf(slab)
	}
	buf, err := is.tmpl.renderBody(&box.rd, &box.m, box.buf[:0], req, im.port, im.def.Protocol)
	box.buf = buf
	if err != nil {
		if slab == nil && !box.kept {
			wirePool.Put(box)
		}
		return nil, nil, err
	}
	box.w = is.http
	if len(buf) > 0 {
		box.w.body, box.w.binaryNotText = buf, false
	} else {
		_, _, _, mode := isFields(is.is)
		box.w.body = nil
		box.w.compileBody("", mode, im.defaults)
		if box.w.hasContentLength && len(box.w.body) == 0 {
			// The template's text made its values UTF-8 (utf8Values); node writes the header
			// block of an empty body on its own, as Latin-1.
			box.w.latin1Values(box.h[:0])
		}
	}
	return &box.w, box, nil
}

// fix keeps out, the answer built for the constant response is (see isResponse.constant),
// as the answer of every request after this one: compiled again from a copy of what answered
// that owns its strings, since out's may be in memory the request or its slab give back.
func (im *Imposter) fix(is *isResponse, out *wire) {
	w := compileIs(ownedCopy(out.is).(*config.Object), im.defaults, nil)
	is.fixed.CompareAndSwap(nil, w)
}

// ownedCopy is a deep copy of v whose strings are copies too.
func ownedCopy(v config.Value) config.Value {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return &config.Object{}
		}
		c := &config.Object{Members: make([]config.Member, len(t.Members))}
		for i, m := range t.Members {
			c.Members[i] = config.Member{Key: strings.Clone(m.Key), Value: ownedCopy(m.Value)}
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = ownedCopy(e)
		}
		return c
	case string:
		return strings.Clone(t)
	}
	return v
}

// wireBox is a wire with room for a built answer's few header lines, pooled: an http answer
// built per request lives until it is written (Imposter.Done).
type wireBox struct {
	w wire
	h [4]header
	// buf holds a bodyOnly template's rendered body (renderBody), kept from one answer to the
	// next up to maxKeptBuffer; rd and m are what renders it (empty between renders).
	buf []byte
	rd  hbs.Renderer
	m   hbs.Model
	// kept: the box is a request's (keptBox), never the pool's.
	kept bool
}

// holds reports whether b is in the box's buffer.
func (box *wireBox) holds(b []byte) bool {
	if len(b) == 0 || cap(box.buf) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(box.buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p < lo+uintptr(cap(box.buf))
}

var wirePool = sync.Pool{New: func() any { return new(wireBox) }}

// keptBox returns the wireBox kept with the pooled request req (request.Kept), made at its
// first use, so that an answer built for each request spares the pool's round trip: a request
// serves one answer at a time, and Done leaves the box with it. When req keeps something else
// (a script's slab, from a request it served before), the box is the pool's.
func keptBox(req *request.Request) *wireBox {
	kept := req.Kept()
	switch k := (*kept).(type) {
	case *wireBox:
		return k
	case nil:
		box := &wireBox{kept: true}
		*kept = box
		return box
	}
	return wirePool.Get().(*wireBox)
}

// boxOf returns the wireBox kept with slab (made at its first use: a slab serves one request
// at a time, and keeps its box from one to the next), or one from the pool when slab is nil.
func boxOf(slab *script.Slab) *wireBox {
	if slab == nil {
		return wirePool.Get().(*wireBox)
	}
	aux := slab.Aux()
	box, _ := (*aux).(*wireBox)
	if box == nil {
		box = new(wireBox)
		*aux = box
	}
	return box
}

// buildObject returns the response object of r for req: the inject function's result or a copy
// of the `is` object (rendered when it is a template), passed through the behaviors. A fault
// Mountebank does not know gives an empty response. A proxy is not built here.
func (im *Imposter) buildObject(ctx context.Context, req *request.Request, r response) (*config.Object, error) {
	var obj *config.Object
	switch r := r.(type) {
	case *injectResponse:
		if im.js == nil {
			return nil, &config.Error{Code: config.CodeInvalidInjection,
				Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag"}
		}
		var err error
		if obj, err = im.js.Response(ctx, r.source, req); err != nil {
			return nil, err
		}
	case *isResponse:
		switch {
		case r.tmpl != nil:
			var err error
			if obj, err = r.tmpl.render(r.is, req, im.port, im.def.Protocol); err != nil {
				return nil, err
			}
		case r.behaviors != nil && r.behaviors.KeepsInput():
			obj = r.is // read, never changed: no copy needed
		default:
			obj = config.Clone(r.is).(*config.Object)
		}
	case *faultResponse:
		obj = &config.Object{}
	case *proxyResponse:
		return nil, errors.New("a proxy response is built by its proxy")
	}
	if b := r.base().behaviors; b != nil {
		var err error
		if obj, err = b.Apply(ctx, req, obj, im.js); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// scriptErrorBody renders an error from a script, a behavior or a shell command as Mountebank's
// http server does in its 500 answer (errors.details: the error's own fields, then message and
// name from its prototype; node's stack is left out): invalid injection errors carry their
// source and data after code and message, JavaScript errors without a code carry only their
// message and name, and a failed shell command is a bare string.
func scriptErrorBody(err error) *config.Object {
	var shell *behavior.ShellError
	if asShell(err, &shell) {
		return config.NewObject("errors", []any{shell.Text})
	}
	ce := asConfigError(err)
	var o *config.Object
	switch {
	case ce.Raw != nil:
		o = ce.Raw
	case ce.Code == "":
		o = config.NewObject("message", ce.Message, "name", "Error")
	default:
		o = ownFields(ce)
		o.Set("name", "Error")
	}
	return config.NewObject("errors", []any{o})
}

// tcpErrorObject is the error as Mountebank's tcp server writes it onto the socket,
// JSON.stringify(error): only the error's own fields, so Mountebank's errors show code, message
// and their options, and a JavaScript error (a TypeError from predicates.js) shows as {}.
func tcpErrorObject(err error) *config.Object {
	ce := asConfigError(err)
	switch {
	case ce.Raw != nil && ce.Raw.Has("code"): // node's own error objects (their fields are own)
		return ce.Raw
	case ce.Raw != nil, ce.Code == "":
		return &config.Object{}
	}
	return ownFields(ce)
}

func asConfigError(err error) *config.Error {
	if ce, ok := err.(*config.Error); ok {
		return ce
	}
	return &config.Error{Code: config.CodeBadData, Message: err.Error()}
}

// ownFields is code, message and the options Mountebank's error was made with: an invalid
// injection's source and data, or another error's source.
func ownFields(ce *config.Error) *config.Object {
	o := config.NewObject("code", ce.Code, "message", ce.Message)
	if src, isObj := ce.Source.(*config.Object); isObj && ce.Code == config.CodeInvalidInjection {
		for _, m := range src.Members {
			o.Set(m.Key, m.Value)
		}
	} else if ce.Source != nil {
		o.Set("source", ce.Source)
	}
	if ce.Message == "malformed xpath predicate selector" {
		o.Set("inner", &config.Object{}) // xpath.js keeps the error it caught, which JSON shows as {}
	}
	return o
}

func asShell(err error, target **behavior.ShellError) bool {
	se, ok := err.(*behavior.ShellError)
	if ok {
		*target = se
	}
	return ok
}
