package admin

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/dashboard"
	"github.com/mockd/mockd/internal/imposter"
)

// The dashboard's reads: what the pages show beyond Mountebank's API (no-match counts, only the
// latest requests), under a prefix of their own. They answer from the imposters' counters and
// copy at most recentRequests journal entries, so a page polling them every second costs the
// imposters nothing they would notice.
const (
	dashboardAPIPrefix = "/dashboard/api/"
	// recentRequests is how many of an imposter's latest recorded requests its page shows.
	recentRequests = 50
	// pageStubs is how many stubs an imposter's page shows (GET /imposters/:port has them all).
	pageStubs = 200
)

// servePage answers a browser: the dashboard page on the routes where Mountebank renders HTML
// for an Accept header that prefers it, and the dashboard's static files. It reports whether it
// answered. Neither carries data (the page's script reads the API), so they are served without
// the API key; the address checks have already passed.
func (a *API) servePage(ctx *fasthttp.RequestCtx, method, path string) bool {
	if method != fasthttp.MethodGet && method != fasthttp.MethodHead {
		return false
	}
	if strings.HasPrefix(path, dashboard.AssetPrefix) && !strings.HasPrefix(path, dashboardAPIPrefix) {
		a.dash.Asset(ctx, path)
		return true
	}
	if !dashboard.WantsHTML(ctx.Request.Header.Peek("Accept")) || !a.isPage(path) {
		return false
	}
	a.log.Info(method + " " + string(ctx.RequestURI()))
	a.dash.Page(ctx)
	return true
}

// isPage reports whether path is one of the routes Mountebank renders as HTML. An imposter's
// page exists only while the imposter does (Mountebank answers 404 JSON otherwise).
func (a *API) isPage(path string) bool {
	switch path {
	case "/", "/imposters", "/logs", "/config":
		return true
	}
	id, ok := strings.CutPrefix(path, "/imposters/")
	return ok && a.lookup(id) != nil
}

// dashboardAPI serves GET /dashboard/api/imposters and /dashboard/api/imposters/:port.
func (a *API) dashboardAPI(ctx *fasthttp.RequestCtx, method, path string) *apiError {
	rest := strings.TrimPrefix(path, dashboardAPIPrefix)
	if method != fasthttp.MethodGet && method != fasthttp.MethodHead {
		notFound(ctx, method, path)
		return nil
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if rest == "imposters" {
		list := a.reg.Listing().Imposters
		out := make([]any, 0, len(list))
		for _, im := range list {
			out = append(out, summary(im))
		}
		sendCompact(ctx, config.NewObject("imposters", out))
		return nil
	}
	id, ok := strings.CutPrefix(rest, "imposters/")
	if !ok {
		notFound(ctx, method, path)
		return nil
	}
	im := a.lookup(id)
	if im == nil {
		return &apiError{status: 404, errs: []*config.Error{{Code: config.CodeNoSuchResource, Message: "Try POSTing to /imposters first?"}}}
	}
	o := summary(im)
	def := im.Definition()
	defs := im.StubDefinitions()
	stubs := make([]any, 0, min(len(defs), pageStubs))
	for _, d := range defs[:min(len(defs), pageStubs)] {
		stubs = append(stubs, d)
	}
	o.Set("stubs", stubs)
	recent := im.RecentRequests(recentRequests)
	requests := make([]any, 0, len(recent))
	for _, r := range recent {
		e := config.NewObject("timestamp", r.At.UTC().Format("2006-01-02T15:04:05.000Z"), "request", r.Request)
		switch {
		case r.Stub >= 0:
			e.Set("stub", float64(r.Stub))
		case r.Stub == imposter.StubError:
			e.Set("matchError", true)
		case def.Protocol != "smtp":
			e.Set("noMatch", true)
		}
		requests = append(requests, e)
	}
	o.Set("requests", requests)
	sendCompact(ctx, o)
	return nil
}

// sendCompact answers 200 with v as unindented JSON: the dashboard's reads are for its script.
func sendCompact(ctx *fasthttp.RequestCtx, v config.Value) {
	jsonHead(ctx, 200)
	buf := ctx.Response.SwapBody(nil)
	ctx.Response.SwapBody(config.AppendJSON(buf[:0], v, 0))
}

// summary is an imposter's line on the dashboard, from its counters.
func summary(im *imposter.Imposter) *config.Object {
	def := im.Definition()
	o := config.NewObject("protocol", def.Protocol, "port", float64(im.Port()))
	if def.Name != "" {
		o.Set("name", def.Name)
	}
	o.Set("numberOfRequests", float64(im.NumberOfRequests()))
	o.Set("noMatch", float64(im.NoMatchCount()))
	o.Set("recordRequests", im.Records())
	o.Set("stubCount", float64(im.StubCount()))
	return o
}

// dashboardPath reports whether path is one of the dashboard's reads.
func dashboardPath(path string) bool { return strings.HasPrefix(path, dashboardAPIPrefix) }
