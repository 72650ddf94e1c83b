package admin

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// Store keeps the imposters across restarts. Save must not return before doc
// ({"imposters": […]}, replayable) is durable.
type Store interface {
	Save(doc *config.Object) error
}

// changes reports whether a request may change the imposters.
func changes(method, path string) bool {
	switch method {
	case fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodDelete, fasthttp.MethodPatch:
		return strings.HasPrefix(path, "/imposters") && !strings.HasSuffix(path, "/explain")
	}
	return false
}

// Persist saves every imposter to the store; it does nothing without one.
func (a *API) Persist() error {
	if a.opts.Store == nil {
		return nil
	}
	doc := config.NewObject("imposters", a.render(a.reg.All(), imposter.PrintOptions{Replayable: true}))
	return a.opts.Store.Save(doc)
}

// persistAfter saves the state a change left, whether it succeeded or not (a failed PUT
// /imposters still removed the old imposters), before the answer goes out. When saving fails
// the client gets a 500 instead of its answer: the change happened but is not durable.
func (a *API) persistAfter(ctx *fasthttp.RequestCtx) {
	if err := a.Persist(); err != nil {
		a.log.Error("cannot persist imposters", "err", err)
		ctx.Response.Reset()
		a.sendErrors(ctx, &apiError{status: 500, errs: []*config.Error{{Code: "cannot persist", Message: err.Error()}}})
	}
}
