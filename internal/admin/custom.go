package admin

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// The routes a custom protocol's program calls back (Mountebank's imposterController
// postRequest and postProxyResponse): the imposter core resolves them (imposter.ResolveCustom).

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
