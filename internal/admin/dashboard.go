package admin

import (
	"strings"
	"sync"

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
		sendCompact(ctx, a.dashboardList())
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
	sendCompact(ctx, a.dashboardImposter(im))
	return nil
}

// dashboardList is every imposter's line, and GET /verify's verdict in numbers (the imposters'
// pages show the rest). It reads counters only.
func (a *API) dashboardList() *config.Object {
	list := a.reg.Listing().Imposters
	out := make([]any, 0, len(list))
	var expectations, failed, unused, unmatched int
	for _, im := range list {
		e, f, u := im.StubCounts()
		n := int(im.NoMatchCount())
		expectations, failed, unused, unmatched = expectations+e, failed+f, unused+u, unmatched+n
		o := summary(im)
		o.Set("expectationsFailed", float64(f))
		o.Set("unusedStubs", float64(u))
		out = append(out, o)
	}
	a.explained.prune(a.reg)
	// As verdict.Verdict.Finish without allowUnused: any of the three fails it.
	return config.NewObject("imposters", out, "verdict", config.NewObject(
		"passed", failed+unused+unmatched == 0,
		"expectations", float64(expectations),
		"expectationsFailed", float64(failed),
		"unusedStubs", float64(unused),
		"unmatchedRequests", float64(unmatched),
	))
}

// dashboardImposter is an imposter's page: its counters, its first pageStubs stubs with their
// hits and verdicts, and its latest recorded requests with the stub that answered each or why
// none did.
func (a *API) dashboardImposter(im *imposter.Imposter) *config.Object {
	o := summary(im)
	defs := im.Stubs(false)
	n := min(defs.Len(), pageStubs)
	verdicts := im.StubVerdicts(n)
	stubs := make([]any, 0, n)
	for i := range n {
		so := config.NewObject("definition", defs.Def(i))
		if len(verdicts) == n { // else the stubs changed in between; next read
			vs := verdicts[i]
			so.Set("hits", float64(vs.Hits))
			so.Set("status", vs.Status)
			if vs.Message != "" {
				so.Set("message", vs.Message)
			}
		}
		stubs = append(stubs, so)
	}
	o.Set("stubs", stubs)
	recent := im.RecentRequests(recentRequests)
	why := a.explained.explain(im.Port(), recent)
	requests := make([]any, 0, len(recent))
	for _, r := range recent {
		e := config.NewObject("timestamp", r.At.UTC().Format("2006-01-02T15:04:05.000Z"), "request", r.Request)
		switch {
		case r.Stub >= 0:
			e.Set("stub", float64(r.Stub))
		case r.Stub == imposter.StubError:
			e.Set("matchError", true)
		case im.Definition().Protocol != "smtp":
			e.Set("noMatch", true)
			if ex := why[r.Request]; ex != nil {
				e.Set("explanation", ex)
			}
		}
		requests = append(requests, e)
	}
	o.Set("requests", requests)
	return o
}

// explanations keeps, per imposter, the explanations of the no-matches its page showed last,
// so that each is made once rather than at every read. Safe for concurrent use; its lock is
// the dashboard's own.
type explanations struct {
	mu    sync.Mutex
	ports map[int]map[*config.Object]*config.Object
}

// explain returns the explanation of each request of recent that no stub answered, keyed by
// the request: {"nearest": [...], "text": "..."}.
func (c *explanations) explain(port int, recent []imposter.RecordedRequest) map[*config.Object]*config.Object {
	c.mu.Lock()
	old := c.ports[port]
	c.mu.Unlock()
	next := map[*config.Object]*config.Object{}
	for _, r := range recent {
		if r.Stub != imposter.NoStub {
			continue
		}
		ex, ok := old[r.Request]
		if !ok {
			if why := r.Explain(); why != nil {
				ex = why.Summary()
				ex.Set("text", why.Text())
			}
		}
		next[r.Request] = ex
	}
	c.mu.Lock()
	if c.ports == nil {
		c.ports = map[int]map[*config.Object]*config.Object{}
	}
	c.ports[port] = next
	c.mu.Unlock()
	return next
}

// prune forgets the imposters that are gone.
func (c *explanations) prune(reg *imposter.Registry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for port := range c.ports {
		if reg.Get(port) == nil {
			delete(c.ports, port)
		}
	}
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
