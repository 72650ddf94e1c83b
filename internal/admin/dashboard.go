package admin

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"weak"

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
	// pageText is how much of a recorded request's body (tcp: data; smtp: text, html) an
	// imposter's page shows (GET /imposters/:port has it whole).
	pageText = 64 << 10
)

// pageTextFields are the fields of a recorded request that may be large (the others are
// bounded by the header block's 16 KiB).
var pageTextFields = [...]string{"body", "data", "text", "html"}

// pageRequest is req as an imposter's page shows it: its large text fields cut to their first
// pageText bytes, with their lengths (nil when none was cut). One recorded 1 MiB body after
// another made each read of the page 50 MB of JSON, and mockd's memory 230 MB larger for good.
func pageRequest(req *config.Object) (*config.Object, *config.Object) {
	long := false
	for _, k := range pageTextFields {
		if v, ok := req.Get(k); ok {
			if s, ok := v.(string); ok && len(s) > pageText {
				long = true
			}
		}
	}
	if !long {
		return req, nil
	}
	out, cut := config.NewObject(), config.NewObject()
	for _, k := range req.Keys() {
		v, _ := req.Get(k)
		if s, ok := v.(string); ok && len(s) > pageText && slices.Contains(pageTextFields[:], k) {
			n := pageText
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			v = s[:n]
			cut.Set(k, float64(len(s)))
		}
		out.Set(k, v)
	}
	return out, cut
}

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
		a.dashReads.send(ctx, nil, a.dashboardList)
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
	a.dashReads.send(ctx, im, func() *config.Object { return a.dashboardImposter(im) })
	return nil
}

// A read of the dashboard costs many requests' work (an imposter's page with traffic flowing:
// about 0.3-1 ms, rendering and explaining the latest requests), and the goroutines serving
// its readers share the processors with the imposters' as equals: 1,000 clients reading one
// imposter's page every second took the imposter from 13,000 requests a second to under 100
// (each waited seconds). A page read more than busyReads times in a second is therefore
// rendered at most once every shareFor: its readers meanwhile get the latest rendering, which
// is then at most shareFor old (the page shows it for a second or two anyway). A page read
// less often is rendered for each read, as before, so a client (a test) that reads it after
// a change sees the change.
const (
	busyReads = 10
	shareFor  = 100 * time.Millisecond
)

// dashReads holds the renderings of the dashboard's reads that many clients read at once, by
// page: the zero weak pointer for the list, the imposter for an imposter's page (a new
// imposter on the same port is another page; a deleted one is not kept for its page). Safe
// for concurrent use.
type dashReads struct {
	mu    sync.Mutex
	pages map[weak.Pointer[imposter.Imposter]]*dashPage
	now   func() time.Time // time.Now; a test's clock
	// renders counts the renderings made (for tests).
	renders atomic.Int64
}

// dashPage is one page's reads (its own lock, held while a busy page is rendered: its readers
// wait for that rendering and share it).
type dashPage struct {
	mu     sync.Mutex
	window time.Time // when the current second of reads began
	reads  int       // reads since window
	body   []byte    // the latest rendering while the page is busy; nil otherwise
	at     time.Time // when body was rendered
}

// send answers a read of page im (nil: the list) with render's value, or with the page's
// latest rendering when the page is busy and that rendering is recent enough.
func (d *dashReads) send(ctx *fasthttp.RequestCtx, im *imposter.Imposter, render func() *config.Object) {
	now := d.clock()
	p := d.page(im, now)
	p.mu.Lock()
	if now.Sub(p.window) >= time.Second {
		p.window, p.reads = now, 0
	}
	p.reads++
	if p.reads <= busyReads {
		p.body = nil // not busy (any more): rendered for this read alone, nothing kept
		p.mu.Unlock()
		d.renders.Add(1)
		sendCompact(ctx, render())
		return
	}
	if p.body == nil || now.Sub(p.at) >= shareFor {
		d.renders.Add(1)
		p.body = config.AppendJSON(p.body[:0], render(), 0)
		p.at = d.clock()
	}
	jsonHead(ctx, 200)
	ctx.Response.SetBody(p.body) // a copy: the rendering is shared
	p.mu.Unlock()
}

func (d *dashReads) clock() time.Time {
	if d.now != nil {
		return d.now()
	}
	return time.Now()
}

// page returns im's page, made on its first read; it forgets the pages of imposters that are
// gone and the renderings not read for a second (what they kept goes back to the heap).
func (d *dashReads) page(im *imposter.Imposter, now time.Time) *dashPage {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := weak.Make(im)
	p := d.pages[key]
	if p == nil {
		if d.pages == nil {
			d.pages = map[weak.Pointer[imposter.Imposter]]*dashPage{}
		}
		for other, op := range d.pages {
			if op.mu.TryLock() { // else it is being read: in use
				if now.Sub(op.window) >= time.Second {
					delete(d.pages, other)
				}
				op.mu.Unlock()
			}
		}
		p = &dashPage{}
		d.pages[key] = p
	}
	return p
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
		shown, cut := pageRequest(r.Request)
		e := config.NewObject("timestamp", r.At.UTC().Format("2006-01-02T15:04:05.000Z"), "request", shown)
		if cut != nil {
			e.Set("truncated", cut) // field -> its length
		}
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
