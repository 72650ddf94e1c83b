package admin

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// The routes a custom protocol's program calls back (Mountebank's imposterController
// postRequest and postProxyResponse): the imposter core resolves them (imposter.ResolveCustom).

// startsProgram reports whether the request (POST /imposters) creates an imposter of a custom
// protocol: its program may take long to start (up to customproto's start timeout).
func (a *API) startsProgram(ctx *fasthttp.RequestCtx) bool {
	if len(a.opts.Custom) == 0 {
		return false
	}
	body, aerr := readBody(ctx)
	if aerr != nil {
		return false
	}
	p, _ := field(body, "protocol").(string)
	return a.opts.Custom[p]
}

// createCustom creates an imposter of a custom protocol as createImposter does, without
// holding the other changes while its program starts, as Mountebank goes on serving its API
// while it waits for a program (it adds the imposter to its list once the program has
// started). The port is reserved meanwhile (a second imposter on it is refused), the imposter
// is not listed, and nothing is saved: it is added, and saved, once the program has started.
// A DELETE of the port, DELETE /imposters or PUT /imposters meanwhile stops the program and
// the creation fails (imposter.ErrDeletedWhileStarting).
func (a *API) createCustom(ctx *fasthttp.RequestCtx) {
	fail := func(aerr *apiError) { a.sendErrors(ctx, aerr) }
	body, aerr := readBody(ctx)
	if aerr != nil {
		fail(aerr)
		return
	}
	def, errs := config.ParseImposter(body, a.bodyOptions())
	if len(errs) > 0 {
		fail(badRequest(errs...))
		return
	}
	im, err := a.reg.Build(def)
	if err != nil {
		fail(toAPIError(err, nil))
		return
	}
	if aerr := a.beginChange(ctx, func() error { return a.reg.Reserve(im) }); aerr != nil {
		fail(aerr)
		return
	}
	if err := a.reg.StartReserved(im); err != nil {
		fail(toAPIError(err, nil))
		return
	}
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	if aerr := a.changeAllowed(ctx); aerr != nil {
		a.reg.Release(im)
		fail(aerr)
		return
	}
	if a.saves {
		defer a.saveAfter(ctx, a.snapshot())
	}
	if err := a.reg.AddStarted(im); err != nil {
		fail(toAPIError(err, nil))
		return
	}
	a.sendCreated(ctx, im)
}

// beginChange runs change under the change lock, as Handler runs a change, without saving
// anything (change must not change what is saved).
func (a *API) beginChange(ctx *fasthttp.RequestCtx, change func() error) *apiError {
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	if aerr := a.changeAllowed(ctx); aerr != nil {
		return aerr
	}
	if err := change(); err != nil {
		return toAPIError(err, nil)
	}
	return nil
}

// customRequest answers POST /imposters/:id/_requests {"request": …}.
func (a *API) customRequest(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	req := config.AsObject(field(body, "request"))
	if req == nil {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'request' must be an object", Source: body})
	}
	out, err := im.ResolveCustom(ctx, req)
	if err != nil {
		return customError(err)
	}
	send(ctx, 200, out)
	return nil
}

// customProxyResponse answers POST /imposters/:id/_requests/:key {"proxyResponse": …}.
func (a *API) customProxyResponse(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	out, err := im.ResolveCustomProxy(ctx, rest[1], field(body, "proxyResponse"))
	if err != nil {
		return customError(err)
	}
	send(ctx, 200, out)
	return nil
}

// customError is the answer to a callback that failed: an unknown proxy key is a 404, as
// Mountebank's MissingResourceError; the rest are 400s with the error as Mountebank renders it.
func customError(err error) *apiError {
	var ce *config.Error
	if errors.As(err, &ce) && ce.Code == config.CodeNoSuchResource {
		return &apiError{status: 404, errs: []*config.Error{ce}}
	}
	if !errors.As(err, &ce) {
		ce = &config.Error{Code: config.CodeBadData, Message: err.Error()}
	}
	return badRequest(ce)
}

// field is the value of key in a JSON body that is an object; nil otherwise.
func field(body config.Value, key string) config.Value {
	if o := config.AsObject(body); o != nil {
		v, _ := o.Get(key)
		return v
	}
	return nil
}
