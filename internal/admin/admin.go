// Package admin serves Mountebank's REST API over the imposter registry.
package admin

import (
	"bufio"
	"bytes"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/dashboard"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/store"
)

// Options configure the admin API.
type Options struct {
	// Port is the admin port (used for links when a request has no Host header).
	Port int
	// APIKey, when set, must be sent in the x-api-key header (Mountebank's --apikey).
	APIKey string
	// AllowIP, when set, decides which clients may use the API (Mountebank's --localOnly and
	// --ipWhitelist); a refused connection is closed without an answer.
	AllowIP func(net.IP) bool
	// AllowInjection permits JavaScript and shell in stubs.
	AllowInjection bool
	// Origin, when set, is the only origin CORS allows on the admin API (Mountebank's --origin).
	Origin string
	// Version is reported by GET /config.
	Version string
	// PublicOptions is the options object GET /config reports.
	PublicOptions *config.Object
	// Metrics is served at GET /metrics; nil answers 404.
	Metrics *metrics.Registry
	// Logs returns the log entries GET /logs serves.
	Logs func() []any
	// Logger receives operational messages; nil = slog.Default().
	Logger *slog.Logger
	// Store receives every change before it is acknowledged; nil = store.NewMemory(). When it
	// is a SharedStore the API also runs what other nodes store (see Sync).
	Store Store
	// Node and Address name this node and its admin API in GET /cluster without a shared
	// store (a SharedStore names them itself).
	Node, Address string
	// Custom names the custom protocols (--protofile) imposters may have.
	Custom map[string]bool
	// MaxIndent bounds the line breaks and indentation a JSON body's answers may add to it
	// (config.Indentation at 2, as the admin API indents): a body nested deeper is refused
	// with a 400, since its answers, each request of an `is` body nested so and the files
	// saving it grow with the square of its depth. 16 times the body's size is always
	// allowed (large imposters nested as usual). A stub added or replaced on its own is
	// bounded with the imposter's other stubs (see checkStubsIndent). 0 = no limit.
	MaxIndent int
}

// API is the admin API handler. It is safe for concurrent use.
type API struct {
	opts      Options
	reg       *imposter.Registry
	log       *slog.Logger
	changeMu  sync.Mutex         // one change at a time, each saved before the next
	unsaved   bool               // the last save to the node's own store failed (under changeMu)
	saved     map[int]stubsState // the imposters as the node's own store last took them (under changeMu)
	closing   bool               // the process is shutting down: changes are refused (under changeMu)
	saves     bool               // changes are saved: the store is not the in-memory one (see New)
	listed    atomic.Pointer[renderedList]
	rendered  renderings
	created   atomic.Pointer[createdEcho] // the answer to the last POST /imposters
	echoBuf   atomic.Pointer[[]byte]      // a buffer for the next one
	lastBase  atomic.Pointer[string]      // the last base URL baseURL made from a Host
	dash      *dashboard.Dashboard
	explained explanations // the no-matches the dashboard showed
	dashReads dashReads    // the renderings of its pages that many read at once

	// With a shared store: the store's version this node last synced to, and the version of
	// each imposter it runs (under changeMu; -1 for a change not stored yet); the stored
	// imposters it could not start (under changeMu: port → why), tried again at every poll.
	shared    SharedStore
	synced    atomic.Int64
	applied   map[int]int64
	unstarted map[int]string
	retry     atomic.Bool // unstarted is not empty
	// The stored imposters this node cannot read or run from their entries (under changeMu;
	// see syncLocked), and those of them the change under way removes though this node runs
	// no imposter there (see forgetUnreadable).
	unreadable map[int]unreadable
	forget     []int
	// syncFailed is why the last sync failed ("" when it did not; under changeMu), so that a
	// store that keeps failing the same way is logged once, not at every poll.
	syncFailed string

	// dryRunFunc is dryRun, the method value made once (parseOptions gives it to each parse).
	dryRunFunc func(*config.Imposter, *config.Object) []*config.Error
}

// New returns the admin API over reg.
func New(reg *imposter.Registry, opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Store == nil {
		opts.Store = store.NewMemory()
	}
	a := &API{opts: opts, reg: reg, log: opts.Logger, dash: dashboard.New(dashboard.Options{KeyRequired: opts.APIKey != ""})}
	a.dryRunFunc = a.dryRun
	if ss, ok := opts.Store.(SharedStore); ok {
		a.shared, a.applied, a.unstarted, a.unreadable = ss, map[int]int64{}, map[int]string{}, map[int]unreadable{}
	}
	// The in-memory store (no --datadir, no --store) keeps nothing: the running imposters are
	// the state. A change is not diffed for it (a snapshot of the imposters before each
	// change and a walk after: a client suite's POST and DELETE per test paid them).
	_, inMemory := opts.Store.(*store.Memory)
	a.saves = !inMemory || a.shared != nil
	return a
}

// apiError is an error with Mountebank's code and the HTTP status it is answered with.
type apiError struct {
	status int
	errs   []*config.Error
}

func badRequest(errs ...*config.Error) *apiError { return &apiError{status: 400, errs: errs} }

// Handler serves one admin request. A panic becomes a 500 for that request only.
func (a *API) Handler(ctx *fasthttp.RequestCtx) {
	defer dropLargeRequest(ctx) // last, once the change is saved
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("panic in admin API", "panic", p, "stack", string(debug.Stack()))
			ctx.Response.Reset()
			a.sendErrors(ctx, &apiError{status: 500, errs: []*config.Error{{Code: "internal error", Message: fmt.Sprint(p)}}})
		}
	}()
	if a.opts.Origin != "" {
		ctx.Response.Header.Set("Access-Control-Allow-Origin", a.opts.Origin)
		ctx.Response.Header.Set("Vary", "Origin")
	}
	if !a.allowed(ctx) {
		a.log.Warn("Blocking incoming connection from " + ctx.RemoteIP().String() + ". Turn off --localOnly or add to --ipWhitelist to allow")
		ctx.Conn().Close()
		return
	}
	method := string(ctx.Method())
	// Only a GET or HEAD may be a page (servePage): the others' path is not copied for it.
	if (method == fasthttp.MethodGet || method == fasthttp.MethodHead) && a.servePage(ctx, method, string(ctx.Path())) {
		return
	}
	// The API's routes match as Mountebank's Express routes do, on the path as sent.
	path, routable, malformed := expressPath(ctx)
	if a.opts.APIKey != "" && !a.keyOK(ctx) {
		a.sendErrors(ctx, &apiError{status: 401, errs: []*config.Error{{Code: config.CodeUnauthorized,
			Message: "If you set the apiKey option, make sure you are sending the correct apiKey in the x-api-key header."}}})
		return
	}
	// The dashboard's pages read the API every second or two: they mark those reads, which are
	// logged at debug so as not to bury what clients do.
	level := slog.LevelInfo
	// So do custom protocols' programs, resolving every request they receive (Mountebank
	// logs their calls at debug too).
	if len(ctx.Request.Header.Peek(dashboard.RefreshHeader)) > 0 || strings.Contains(path, "/_requests") {
		level = slog.LevelDebug
	}
	// (Made in the log's buffers, without slog's look-up of the caller: a client suite's
	// POST and DELETE of an imposter around each test log two lines.)
	uri := ctx.RequestURI()
	logs.Parts(a.log, level, method, " ", unsafe.String(unsafe.SliceData(uri), len(uri)))
	// Mountebank parses every request's body as JSON before it routes it, so a malformed body is
	// a 400 whatever the route, method or imposter (a missing imposter included).
	if aerr := parseBody(ctx, a.opts.MaxIndent); aerr != nil {
		a.sendErrors(ctx, aerr)
		return
	}
	if !routable && (method != fasthttp.MethodOptions || a.opts.Origin == "") {
		notFound(ctx, method, rawPath(ctx))
		return
	}
	if malformed && mbMethods(path) != "" && (method != fasthttp.MethodOptions || a.opts.Origin == "") {
		// A parameter of one of Mountebank's routes (:id, :stubIndex) that decodeURIComponent
		// refuses: Express answers 400 whatever the method (a CORS preflight is answered before).
		errorPage(ctx, fasthttp.StatusBadRequest, "Bad Request")
		return
	}
	if method == fasthttp.MethodOptions {
		if a.opts.Origin != "" {
			a.preflight(ctx)
		} else {
			options(ctx, path)
		}
		return
	}
	if method == fasthttp.MethodPost && path == "/imposters" && a.startsProgram(ctx) {
		a.createCustom(ctx) // its program's start does not hold the other changes
		return
	}
	if changes(method, path) {
		a.changeMu.Lock()
		defer a.changeMu.Unlock()
		if aerr := a.changeAllowed(ctx); aerr != nil {
			a.sendErrors(ctx, aerr)
			return
		}
		if a.saves {
			defer a.saveAfter(ctx, a.snapshot())
		}
	} else if a.shared != nil && a.shared.Available() && readsImposters(path) {
		_ = a.catchUp(ctx) // a lost store: answer with what this node runs
	}
	if err := a.route(ctx, method, path); err != nil {
		a.sendErrors(ctx, err)
	}
}

// changeAllowed is nil when a change may go on (the caller holds changeMu): mockd is not
// shutting down and, with a shared store, this node runs the imposters as stored.
func (a *API) changeAllowed(ctx *fasthttp.RequestCtx) *apiError {
	if a.closing {
		return &apiError{status: fasthttp.StatusServiceUnavailable, errs: []*config.Error{{Code: "shutting down",
			Message: "mockd is shutting down: the imposters are not changed"}}}
	}
	if a.shared != nil {
		// The change applies to the imposters as stored, whichever node changed them last.
		if err := a.syncLocked(ctx); err != nil {
			return storeUnavailable(err)
		}
	}
	return nil
}

func (a *API) keyOK(ctx *fasthttp.RequestCtx) bool {
	got := ctx.Request.Header.Peek("x-api-key")
	if len(got) == 0 {
		return false
	}
	h1, h2 := sha512.Sum512(got), sha512.Sum512([]byte(a.opts.APIKey))
	return subtle.ConstantTimeCompare(h1[:], h2[:]) == 1
}

func (a *API) allowed(ctx *fasthttp.RequestCtx) bool {
	return a.opts.AllowIP == nil || a.opts.AllowIP(ctx.RemoteIP())
}

func (a *API) preflight(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE")
	ctx.Response.Header.Set("Vary", "Origin, Access-Control-Request-Headers")
	if h := ctx.Request.Header.Peek("Access-Control-Request-Headers"); len(h) > 0 {
		ctx.Response.Header.SetBytesV("Access-Control-Allow-Headers", h)
	}
	ctx.Response.Header.Set("Content-Length", "0")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// options answers an OPTIONS request as Express does when no CORS origin is set (Mountebank's
// cors middleware then passes it on): 200 with the methods of Mountebank's routes that match the
// path, in the order it registers them (HEAD after each GET), as the Allow header and the body;
// a path none of its routes matches is Express's 404.
func options(ctx *fasthttp.RequestCtx, path string) {
	allow := mbMethods(path)
	if allow == "" {
		notFound(ctx, fasthttp.MethodOptions, rawPath(ctx))
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.Set("Allow", allow)
	ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	ctx.SetBodyString(allow)
}

// mbPages are the pages Mountebank serves at GET besides its API (docs, feed, sitemap).
var mbPages = map[string]bool{
	"metrics": true, "feed": true, "releases": true, "sitemap": true, "support": true, "license": true,
	"faqs": true, "docs/gettingStarted": true, "docs/mentalModel": true, "docs/commandLine": true,
	"docs/communityExtensions": true, "docs/security": true, "docs/api/overview": true,
	"docs/api/contracts": true, "docs/api/mocks": true, "docs/api/stubs": true,
	"docs/api/predicates": true, "docs/api/xpath": true, "docs/api/json": true,
	"docs/api/jsonpath": true, "docs/api/proxies": true, "docs/api/injection": true,
	"docs/api/behaviors": true, "docs/api/errors": true, "docs/api/faults": true,
	"docs/protocols/http": true, "docs/protocols/https": true, "docs/protocols/tcp": true,
	"docs/protocols/smtp": true, "docs/protocols/custom": true,
}

// mbMethods lists the methods of Mountebank's routes that match path, as Express's Allow
// header lists them, or "" when none does. A :param matches one non-empty segment.
func mbMethods(path string) string {
	trimmed := strings.Trim(path, "/")
	parts := strings.Split(trimmed, "/")
	if trimmed == "" {
		return "GET,HEAD"
	}
	for _, p := range parts {
		if p == "" {
			return ""
		}
	}
	switch {
	case len(parts) == 1 && parts[0] == "imposters":
		return "GET,HEAD,POST,DELETE,PUT"
	case len(parts) == 1 && (parts[0] == "logs" || parts[0] == "config"):
		return "GET,HEAD"
	case len(parts) == 2 && parts[0] == "imposters":
		return "GET,HEAD,DELETE"
	case len(parts) == 2 && parts[0] == "releases":
		return "GET,HEAD"
	case len(parts) == 3 && parts[0] == "imposters":
		switch parts[2] {
		case "savedProxyResponses", "savedRequests", "requests":
			return "DELETE"
		case "stubs":
			return "PUT,POST"
		case "_requests":
			return "POST"
		}
	case len(parts) == 4 && parts[0] == "imposters" && parts[2] == "stubs":
		return "PUT,DELETE"
	case len(parts) == 4 && parts[0] == "imposters" && parts[2] == "_requests":
		return "POST"
	}
	if mbPages[trimmed] {
		return "GET,HEAD"
	}
	return ""
}

func (a *API) route(ctx *fasthttp.RequestCtx, method, path string) *apiError {
	// A client suite's POST /imposters and DELETE /imposters/:id, routed as the split below
	// routes them, without the split's allocation.
	if path == "/imposters" && method == "POST" {
		return a.createImposter(ctx)
	}
	if id, ok := strings.CutPrefix(path, "/imposters/"); ok && method == "DELETE" && id != "" && !strings.Contains(id, "/") {
		return a.deleteImposter(ctx, id)
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if path == "/" {
		parts = nil
	}
	switch {
	case len(parts) == 0 && (method == "GET" || method == "HEAD"):
		return a.home(ctx)
	case len(parts) == 1 && parts[0] == "imposters":
		switch method {
		case "GET", "HEAD":
			return a.listImposters(ctx)
		case "POST":
			return a.createImposter(ctx)
		case "PUT":
			return a.replaceImposters(ctx)
		case "DELETE":
			return a.deleteImposters(ctx)
		}
	case len(parts) == 1 && parts[0] == "config" && (method == "GET" || method == "HEAD"):
		return a.config(ctx)
	case len(parts) == 1 && parts[0] == "logs" && (method == "GET" || method == "HEAD"):
		return a.logs(ctx)
	case len(parts) == 1 && parts[0] == "cluster" && (method == "GET" || method == "HEAD"):
		return a.cluster(ctx)
	case len(parts) == 1 && parts[0] == "verify" && (method == "GET" || method == "HEAD"):
		return a.verify(ctx, a.reg.All())
	case len(parts) == 1 && parts[0] == "metrics" && (method == "GET" || method == "HEAD") && a.opts.Metrics != nil:
		a.opts.Metrics.Handler(ctx)
		return nil
	case len(parts) >= 2 && parts[0] == "imposters":
		return a.routeImposter(ctx, method, parts[1], parts[2:])
	case dashboardPath(path):
		return a.dashboardAPI(ctx, method, path)
	}
	notFound(ctx, method, rawPath(ctx))
	return nil
}

func (a *API) routeImposter(ctx *fasthttp.RequestCtx, method, id string, rest []string) *apiError {
	if len(rest) == 0 && method == "DELETE" {
		return a.deleteImposter(ctx, id)
	}
	var handler func(*fasthttp.RequestCtx, *imposter.Imposter, []string) *apiError
	switch {
	case len(rest) == 0 && (method == "GET" || method == "HEAD"):
		handler = a.getImposter
	case len(rest) == 1 && method == "DELETE" && (rest[0] == "savedProxyResponses" || rest[0] == "requests"):
		handler = a.deleteSavedProxyResponses
	case len(rest) == 1 && method == "DELETE" && rest[0] == "savedRequests":
		handler = a.deleteSavedRequests
	case len(rest) == 1 && rest[0] == "stubs" && method == "PUT":
		handler = a.replaceStubs
	case len(rest) == 1 && rest[0] == "stubs" && method == "POST":
		handler = a.addStub
	case len(rest) == 2 && rest[0] == "stubs" && method == "PUT":
		handler = a.replaceStub
	case len(rest) == 2 && rest[0] == "stubs" && method == "DELETE":
		handler = a.deleteStub
	case len(rest) == 1 && rest[0] == "_requests" && method == "POST": // custom protocols (custom.go)
		handler = a.customRequest
	case len(rest) == 2 && rest[0] == "_requests" && method == "POST":
		handler = a.customProxyResponse
	case len(rest) == 1 && rest[0] == "explain" && method == "POST":
		handler = a.explain
	case len(rest) == 1 && rest[0] == "verify" && (method == "GET" || method == "HEAD"):
		handler = func(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
			return a.verify(ctx, []*imposter.Imposter{im})
		}
	case len(rest) >= 1 && rest[0] == "scenarios":
		if handler = a.scenarioHandler(method, len(rest)); handler == nil {
			notFound(ctx, method, rawPath(ctx))
			return nil
		}
	default:
		notFound(ctx, method, rawPath(ctx))
		return nil
	}
	im := a.lookup(id)
	if im == nil {
		return &apiError{status: 404, errs: []*config.Error{{Code: config.CodeNoSuchResource, Message: "Try POSTing to /imposters first?"}}}
	}
	return handler(ctx, im, rest)
}

// lookup finds the imposter an :id names; Mountebank keys imposters by the port's string form.
func (a *API) lookup(id string) *imposter.Imposter {
	port, ok := canonicalInt(id)
	if !ok {
		return nil
	}
	return a.reg.Get(port)
}

// canonicalInt is strconv.Atoi of s when s is the integer as strconv.Itoa writes it (no sign
// but a minus, no leading zero, no "-0"): the test strconv.Itoa(n) == s without making the
// string (an allocation and ~350 instructions, for every request naming an imposter).
func canonicalInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	digits := strings.TrimPrefix(s, "-")
	return n, s[0] != '+' && (digits[0] != '0' || s == "0")
}

// routeWords are the literal segments of the API's routes, by their lower-case form: Express
// matches them whatever their case (/IMPOSTERS is /imposters).
var routeWords = func() map[string]string {
	m := map[string]string{}
	for _, w := range []string{"imposters", "stubs", "savedProxyResponses", "savedRequests", "requests",
		"_requests", "config", "logs", "metrics", "cluster", "verify", "explain", "scenarios"} {
		m[strings.ToLower(w)] = w
	}
	return m
}()

// encodeURL is the encodeurl package's encoding, as Express's 404 page shows a path: bytes
// outside the characters a URL may hold are percent-encoded, and so is a '%' that starts no
// escape; escapes already there are kept.
func encodeURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(c)
		case c == '%':
			b.WriteString("%25")
		case c == '!' || c >= '#' && c <= ';' || c == '=' || c >= '?' && c <= '_' || c >= 'a' && c <= 'z' || c == '|' || c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// rawPath is the request's path as sent, without its query, as Express's 404 page shows it.
func rawPath(ctx *fasthttp.RequestCtx) string {
	p := string(ctx.URI().PathOriginal())
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		p = "/"
	}
	return encodeURL(p)
}

// expressPath is the path the API routes on, as Express matches Mountebank's routes against
// the path as sent: one trailing slash is allowed, an empty segment (//imposters) matches no
// route (routable is false), literal segments match in any case, and a parameter (:id,
// :stubIndex) is its decoded text. fasthttp's own path is decoded and has its empty segments
// removed, which made /imposters//4545 and //imposters answer as /imposters/4545 and /imposters.
// malformed is true when a segment that is no route word does not decode as JavaScript's
// decodeURIComponent decodes (a '%' without two hex digits, or bytes that are not UTF-8): it is
// then left as sent.
func expressPath(ctx *fasthttp.RequestCtx) (path string, routable, malformed bool) {
	if p, ok := plainRoute(ctx.URI().PathOriginal()); ok {
		return p, true, false
	}
	return expressPathOf(ctx)
}

// plainRoute is expressPath of a path as a client library sends it (/imposters, /imposters/4545,
// /imposters/4545/stubs/0): segments that are route words as written or numbers, which the
// path routes on as they are, one trailing slash dropped. false for any other path.
func plainRoute(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '/' {
		return "", false
	}
	n := len(raw)
	if raw[n-1] == '/' {
		n--
	}
	for i := 1; ; {
		j := i
		digits := true
		for ; j < n && raw[j] != '/'; j++ {
			c := raw[j]
			switch {
			case '0' <= c && c <= '9':
			case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_':
				digits = false
			default:
				return "", false // an escape, a query, anything else: expressPathOf
			}
		}
		if j == i {
			return "", false // an empty segment
		}
		if !digits {
			if w, ok := routeWords[string(raw[i:j])]; !ok || w != string(raw[i:j]) {
				return "", false // not a route word as it is written (a case to fold, a name)
			}
		}
		if j == n {
			break
		}
		i = j + 1
	}
	if string(raw[:n]) == "/imposters" {
		return "/imposters", true // POST /imposters, a client suite's every test: no copy
	}
	return string(raw[:n]), true
}

// expressPathOf is expressPath of any path.
func expressPathOf(ctx *fasthttp.RequestCtx) (path string, routable, malformed bool) {
	raw := string(ctx.URI().PathOriginal())
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if !strings.HasPrefix(raw, "/") {
		return string(ctx.Path()), true, false // an asterisk or odd request target: as before
	}
	trimmed := strings.TrimPrefix(raw, "/")
	trimmed = strings.TrimSuffix(trimmed, "/")
	if trimmed == "" {
		return "/", raw == "/", false
	}
	parts := strings.Split(trimmed, "/")
	for i, p := range parts {
		if p == "" {
			return string(ctx.Path()), false, false
		}
		if w, ok := routeWords[strings.ToLower(p)]; ok {
			parts[i] = w
			continue
		}
		d, err := url.PathUnescape(p)
		_, word := routeWords[strings.ToLower(d)]
		switch {
		case err != nil || !utf8.ValidString(d):
			malformed = true
		case word:
			// A route word written with escapes (/imp%6fsters) is no route's literal, which
			// Express compares with the path as sent; as a parameter it names nothing either.
		case !strings.Contains(d, "/"):
			parts[i] = d
		}
	}
	return "/" + strings.Join(parts, "/"), true, malformed
}

// notFound answers as Express does for an unknown route.
func notFound(ctx *fasthttp.RequestCtx, method, path string) {
	errorPage(ctx, fasthttp.StatusNotFound, "Cannot "+method+" "+htmlEscape(path))
}

// errorPage answers as Express's final handler does: the status, and an HTML page holding text.
func errorPage(ctx *fasthttp.RequestCtx, status int, text string) {
	ctx.SetStatusCode(status)
	ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetBodyString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>" +
		text + "</pre>\n</body>\n</html>\n")
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
	return r.Replace(s)
}

// varyAccept adds Accept to the answer's Vary header, in one line as Express's vary does
// (with --origin it is "Origin, Accept").
func varyAccept(ctx *fasthttp.RequestCtx) {
	if v := ctx.Response.Header.Peek("Vary"); len(v) > 0 {
		ctx.Response.Header.Set("Vary", string(v)+", Accept")
		return
	}
	ctx.Response.Header.Set("Vary", "Accept")
}

// sendFormatted is send for the routes Mountebank answers through res.format (JSON or HTML),
// which adds Vary: Accept.
func sendFormatted(ctx *fasthttp.RequestCtx, status int, v config.Value) {
	varyAccept(ctx)
	send(ctx, status, v)
}

// jsonHead sets the status and content type of a JSON answer.
func jsonHead(ctx *fasthttp.RequestCtx, status int) {
	ctx.SetStatusCode(status)
	// What Header.Set("Content-Type", …) comes to, without normalising the key and matching
	// it against the special headers (~1k instructions; every admin answer sets it).
	ctx.Response.Header.SetContentType("application/json; charset=utf-8")
}

// send writes v as Express's res.send does with "json spaces" 2. A value that shows a large
// journal is streamed (see sendStream).
func send(ctx *fasthttp.RequestCtx, status int, v config.Value) {
	if config.StreamBytes(v) > streamAbove {
		sendStream(ctx, status, v)
		return
	}
	// Rendered into the response's own (pooled) body buffer, unless it grew large: that one is
	// sent and let go (see largeBody); past renderWhole, it is streamed instead.
	buf := ctx.Response.SwapBody(nil)
	c := &config.Chunker{Limit: renderWhole}
	out := config.RenderJSON(buf[:0], v, 2, c)
	if c.Err != nil {
		sendStream(ctx, status, v)
		return
	}
	jsonHead(ctx, status)
	sendRendered(ctx, out)
}

// sendRendered makes out the answer's body: a large one is sent and let go (see largeBody),
// another becomes the response's body buffer.
func sendRendered(ctx *fasthttp.RequestCtx, out []byte) {
	if cap(out) > largeBody {
		// With its length, so it goes as any answer does (Content-Length); once written, the
		// memory of the change it answers goes back to the system (see ReleaseMemorySoon).
		ctx.Response.SetBodyStream(&largeAnswer{Reader: bytes.NewReader(out), change: !ctx.IsGet()}, len(out))
		return
	}
	ctx.Response.SwapBody(out)
}

// largeAnswer is the body of a large answer, which fasthttp closes once it is written.
type largeAnswer struct {
	*bytes.Reader
	change bool // it answers a change (not a GET, which a client may poll)
}

func (l *largeAnswer) Close() error {
	if l.change {
		netconn.ReleaseMemorySoon()
	}
	return nil
}

// largeBody is the size from which the admin API lets go of a request's or an answer's body
// once done with it (a large answer is sent from a stream of its own). fasthttp keeps each
// connection's body buffers at the largest size they reached, for as long as the client keeps
// the connection (then in a pool): creating 100,000 stubs with one POST kept its ~15 MB request
// and ~60 MB answer resident, as much again as the stubs themselves.
const largeBody = 1 << 20

// dropLargeRequest lets go of a large request body, once the request is handled (see largeBody).
func dropLargeRequest(ctx *fasthttp.RequestCtx) {
	if cap(ctx.Request.Body()) > largeBody {
		ctx.Request.SwapBody(nil)
	}
}

// sendStream writes v as send does, rendering it while it is sent (chunked): the recorded
// requests of a large journal are rendered one after the other, never all at once, and a
// large answer a chunk at a time (see renderWhole).
func sendStream(ctx *fasthttp.RequestCtx, status int, v config.Value) {
	streamAnswer(ctx, status, func(dst []byte, c *config.Chunker) []byte {
		return config.RenderJSON(dst, v, 2, c)
	})
}

// streamAnswer sends a JSON answer that render renders while it is sent (chunked): render
// appends to dst and hands the text to c as it grows (see config.Chunker).
func streamAnswer(ctx *fasthttp.RequestCtx, status int, render func(dst []byte, c *config.Chunker) []byte) {
	jsonHead(ctx, status)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		c := &config.Chunker{W: w}
		_ = c.Finish(render(make([]byte, 0, 64<<10), c))
	})
}

func (a *API) sendErrors(ctx *fasthttp.RequestCtx, e *apiError) {
	send(ctx, e.status, errorsDoc(e.errs))
}

func errorsDoc(errs []*config.Error) *config.Object {
	list := make([]any, 0, len(errs))
	for _, e := range errs {
		list = append(list, e.Render())
	}
	return config.NewObject("errors", list)
}

// baseURL is the scheme and host links are built from: the request's Host header, as Mountebank.
func (a *API) baseURL(ctx *fasthttp.RequestCtx) string {
	host := ctx.Request.Header.Host()
	if len(host) == 0 {
		return "http://localhost:" + strconv.Itoa(a.opts.Port)
	}
	// A client sends the same Host with every request (a suite's POST and DELETE of each
	// test): the URL made for the last one serves again.
	const scheme = "http://"
	if p := a.lastBase.Load(); p != nil && len(*p) == len(scheme)+len(host) && (*p)[len(scheme):] == string(host) {
		return *p
	}
	base := scheme + string(host)
	a.lastBase.Store(&base)
	return base
}

// bodyKey is the user value under which Handler keeps the parsed body.
const bodyKey = "mockd.body"

// parseBody parses the request body as Mountebank's json middleware does, once, for readBody:
// empty is "", anything else must be JSON.
func parseBody(ctx *fasthttp.RequestCtx, maxIndent int) *apiError {
	body := ctx.Request.Body()
	if len(body) == 0 {
		return nil
	}
	v, err := config.ParseJSON(body)
	if err != nil {
		return badRequest(&config.Error{Code: config.CodeInvalidJSON, Message: "Unable to parse body as JSON", Source: echoed(body)})
	}
	if aerr := checkIndent(v, len(body), maxIndent); aerr != nil {
		return aerr
	}
	ctx.SetUserValue(bodyKey, v)
	return nil
}

// readBody is the body parseBody parsed: "" when it was empty.
func readBody(ctx *fasthttp.RequestCtx) (config.Value, *apiError) {
	if v := ctx.UserValue(bodyKey); v != nil {
		return v, nil
	}
	if len(ctx.Request.Body()) == 0 {
		return "", nil
	}
	// Not through Handler (a test calling a handler directly): parse it here.
	if aerr := parseBody(ctx, 0); aerr != nil {
		return nil, aerr
	}
	return ctx.UserValue(bodyKey), nil
}

// checkIndent refuses a body whose answers would indent it past maxIndent bytes (or 16 times
// its size), see Options.MaxIndent. A body of n bytes holds at most n/2 values nested at most
// n/2 deep: one too short to pass the bound is not walked.
func checkIndent(v config.Value, n, maxIndent int) *apiError {
	limit := max(maxIndent, 16*n)
	if maxIndent <= 0 || n*(n+4) <= limit {
		return nil
	}
	if got := config.Indentation(v, 2, limit); got > limit {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: fmt.Sprintf(
			"the body nests too deep: indented as the answers show it, it would grow by more than %d bytes (--admin-max-indent, or 16 times the body's size)", limit)})
	}
	return nil
}

// checkStubsIndent refuses stub, to be added to im's stubs (at index replaced, or -1 to add
// it), when the imposter's stubs would then indent past Options.MaxIndent (or 16 times their
// size) together: each body is checked on its own (checkIndent), but an imposter's answers
// show all its stubs, and each stub keeps its `is` body indented, so stubs added one at a time
// each under the bound made answers and memory grow without one (64 stubs nested 2,000 deep:
// a GET 515 MB, each stub's answer as much, 1 GB kept). The stubs' texts are read (less than
// printing the answer takes), their indentation counted at level 2, as in the answers.
func (a *API) checkStubsIndent(im *imposter.Imposter, stub config.Value, replaced int) *apiError {
	maxIndent := a.opts.MaxIndent
	if maxIndent <= 0 {
		return nil
	}
	stubs := im.Stubs(false)
	buf := stubTexts.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= 64<<10 {
			stubTexts.Put(buf)
		}
	}()
	size, indent := 0, 0
	for i := range stubs.Len() {
		if i == replaced {
			continue
		}
		*buf = stubs.AppendJSON((*buf)[:0], i)
		size += len(*buf)
		indent += config.TextIndentation(unsafe.String(unsafe.SliceData(*buf), len(*buf)), 2, 2, math.MaxInt)
	}
	*buf = config.AppendJSON((*buf)[:0], stub, 0)
	size += len(*buf)
	limit := max(maxIndent, 16*size)
	if indent <= limit {
		indent += config.IndentationAt(stub, 2, 2, limit-indent)
	}
	if indent > limit {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: fmt.Sprintf(
			"the imposter's stubs nest too deep: indented as its answers show them, they would grow by more than %d bytes (--admin-max-indent, or 16 times their size)", limit)})
	}
	return nil
}

// maxEchoed bounds the source an error echoes back.
const maxEchoed = 4 << 10

// echoed is the body an invalid JSON error shows as its source: all of it, as Mountebank shows
// it, up to maxEchoed bytes, then a note of how much was left out.
func echoed(body []byte) string {
	// Express reads the body as UTF-8 text (an invalid byte is U+FFFD) before parsing it.
	if len(body) <= maxEchoed {
		return jsvalue.DecodeUTF8(body)
	}
	cut := maxEchoed
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return jsvalue.DecodeUTF8(body[:cut]) + fmt.Sprintf("… (%d more bytes not shown)", len(body)-cut)
}

func queryFlag(ctx *fasthttp.RequestCtx, key string) (set, isTrue bool) {
	v := ctx.QueryArgs().Peek(key)
	if v == nil {
		return false, false
	}
	return true, strings.EqualFold(string(v), "true")
}

func (a *API) printOptions(ctx *fasthttp.RequestCtx) PrintOptions {
	_, replayable := queryFlag(ctx, "replayable")
	_, removeProxies := queryFlag(ctx, "removeProxies")
	_, explain := queryFlag(ctx, "explain")
	return PrintOptions{BaseURL: a.baseURL(ctx), Replayable: replayable, RemoveProxies: removeProxies, Explain: explain}
}

// toAPIError converts an error from config or imposter into Mountebank's answer.
func toAPIError(err error, source config.Value) *apiError {
	var list config.Errors
	if errors.As(err, &list) {
		return badRequest(list...)
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		e := *ce
		if e.Source == nil && source != nil {
			e.Source = source
		}
		status := 400
		if e.Code == config.CodeInsufficient {
			status = 403
		}
		return &apiError{status: status, errs: []*config.Error{&e}}
	}
	return badRequest(&config.Error{Code: config.CodeBadData, Message: err.Error()})
}

func (a *API) home(ctx *fasthttp.RequestCtx) *apiError {
	base := a.baseURL(ctx)
	sendFormatted(ctx, 200, config.NewObject("_links", config.NewObject(
		"imposters", config.NewObject("href", base+"/imposters"),
		"config", config.NewObject("href", base+"/config"),
		"logs", config.NewObject("href", base+"/logs"),
	)))
	return nil
}

func (a *API) config(ctx *fasthttp.RequestCtx) *apiError {
	opts := a.opts.PublicOptions
	if opts == nil {
		opts = &config.Object{}
	}
	sendFormatted(ctx, 200, config.NewObject(
		"version", a.opts.Version,
		"options", opts,
		"process", processInfo(),
	))
	return nil
}

func (a *API) logs(ctx *fasthttp.RequestCtx) *apiError {
	var all []any
	if a.opts.Logs != nil {
		all = a.opts.Logs()
	}
	if len(all) == 0 {
		all = []any{config.NewObject("level", "error", "message", "No logfile")}
	}
	start, end := 0, len(all)-1
	if v := ctx.QueryArgs().Peek("startIndex"); v != nil {
		if n, ok := jsvalue.ParseInt(string(v)); ok {
			start = int(n)
		}
	}
	if v := ctx.QueryArgs().Peek("endIndex"); v != nil {
		if n, ok := jsvalue.ParseInt(string(v)); ok {
			end = int(n)
		}
	}
	sendFormatted(ctx, 200, config.NewObject("logs", jsSlice(all, start, end+1)))
	return nil
}

// jsSlice mirrors Array.prototype.slice(start, end) with negative indexes.
func jsSlice(list []any, start, end int) []any {
	n := len(list)
	clamp := func(i int) int {
		if i < 0 {
			i += n
			if i < 0 {
				i = 0
			}
		}
		if i > n {
			i = n
		}
		return i
	}
	start, end = clamp(start), clamp(end)
	if start >= end {
		return []any{}
	}
	return list[start:end]
}
