package admin

import (
	"encoding/json"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// explain answers POST /imposters/:port/explain (a mockd route): the request in the body, in
// Mountebank's request JSON shape, evaluated against every stub without running scripts:
// {"request": as evaluated, "match": first stub that matched or null, "stubs": [every stub's
// predicate tree with what failed]}.
func (a *API) explain(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	if body == "" {
		body = &config.Object{}
	}
	req, why, err := im.Explain(body)
	if err != nil {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: err.Error(), Source: body})
	}
	out := config.NewObject("request", req)
	for _, m := range why.JSON().Members {
		out.Set(m.Key, m.Value)
	}
	send(ctx, 200, out)
	return nil
}

// verify answers GET /verify and GET /imposters/:port/verify (mockd routes) with the verdict on
// list; ?allowUnused=true lets stubs that answered nothing pass.
func (a *API) verify(ctx *fasthttp.RequestCtx, list []*imposter.Imposter) *apiError {
	_, allowUnused := queryFlag(ctx, "allowUnused")
	body, err := json.MarshalIndent(imposter.Verify(list, allowUnused), "", "  ")
	if err != nil {
		return &apiError{status: 500, errs: []*config.Error{{Code: "internal error", Message: err.Error()}}}
	}
	jsonHead(ctx, 200)
	ctx.SetBody(body)
	return nil
}
