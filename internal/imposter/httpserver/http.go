// Package httpserver serves http and https imposters with fasthttp: it reads requests, asks
// the imposter core what answers them (imposter.Resolve) and writes the answers, with node's
// reason phrases, faults on the connection and, for https, TLS configured as node's is.
package httpserver

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// HTTP is the http protocol. Its connections wait for data through the FIFO poller (unless
// --netpoller says otherwise), so that busy ones are served in the order their requests arrived.
func HTTP(*config.Imposter) (imposter.Prepared, error) {
	return imposter.Prepared{New: func(im *imposter.Imposter) imposter.Server { return newServer(im, nil) }, FIFO: true}, nil
}

// server serves an http or https imposter with fasthttp.
type server struct {
	im  *imposter.Imposter
	srv *fasthttp.Server
	tls *tls.Config // https
	il  *netconn.IdleListener
	// live is what fasthttp's handler reaches the server through, nil once it has shut down,
	// so that nothing left of the fasthttp.Server (a connection's goroutine finishing) keeps
	// the imposter. (It was first needed for fasthttp's worker pool, which Serve no longer
	// uses: it kept a goroutine with the fasthttp.Server for a while after Serve returned.)
	live *atomic.Pointer[server]
}

func newServer(im *imposter.Imposter, conf *tls.Config) *server {
	return &server{im: im, tls: conf}
}

// serving makes the fasthttp.Server. Serve makes it: an imposter deleted before any connection
// (a client suite's create-then-delete pair) never makes one, nor its handler closures.
func (h *server) serving() {
	im := h.im
	maxBody := im.MaxBody()
	h.live = new(atomic.Pointer[server])
	h.live.Store(h)
	live := h.live
	h.srv = &fasthttp.Server{
		ErrorHandler: ErrorHandler(maxBody),
		Handler: netconn.TrackRequests(func(ctx *fasthttp.RequestCtx) {
			if s := live.Load(); s != nil {
				s.handle(ctx)
				return
			}
			ctx.SetConnectionClose() // not reached: connections are closed before it is shut down
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		}),
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		MaxRequestBodySize:            maxBody,
		ReadBufferSize:                MaxHeaderBytes,
		ConnState:                     netconn.IdleConnState, // the timeouts, with the IdleListener of Serve
		Logger:                        fasthttpLogger{im.Log()},
	}
}

// Serve accepts connections until ln is closed, and serves each on a goroutine of its own with
// fasthttp's ServeConn. fasthttp's own Serve is not used: its worker pool starts a goroutine that
// sleeps a second between looks at its stop channel (a timer, and the fasthttp.Server with its
// pools kept that long after Serve returns), which a client that creates and deletes imposters
// in a loop (a test suite, bench's admin-pairs) paid on every imposter: thousands of stopped
// servers at once, for the collector to scan.
func (h *server) Serve(ln net.Listener) error {
	h.serving()
	opts := h.im.Settings()
	h.il = netconn.NewIdleListener(ln, netconn.ListenOptions{IdleTimeout: opts.IdleTimeout, HeaderTimeout: opts.HeaderTimeout, TLS: h.tls,
		UnreadBody: h.im.UnreadBody})
	defer h.il.Stop()
	for {
		c, err := h.il.Accept()
		if err != nil {
			// ln is a RetryListener (see Imposter.Start), which keeps accepting through
			// failures: an error means it was closed.
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go h.serveConn(c)
	}
}

// serveConn serves one connection until it closes, logging (at debug level, as fasthttp's
// worker pool does) why it ended unless that was the client going away. An error closing a
// connection that was closed already (an idle one the listener let go, or a deleted
// imposter's) is not logged.
func (h *server) serveConn(c net.Conn) {
	err := h.srv.ServeConn(c)
	releaseConnRequest(c)
	if err == nil || errors.Is(err, net.ErrClosed) {
		return
	}
	s := err.Error()
	if strings.Contains(s, "broken pipe") || strings.Contains(s, "reset by peer") ||
		strings.Contains(s, "request headers: "+fasthttp.ErrSmallReadBuffer.Error()) ||
		strings.Contains(s, "unexpected EOF") || strings.Contains(s, "i/o timeout") || errors.Is(err, fasthttp.ErrBadTrailer) {
		return
	}
	h.srv.Logger.Printf("error when serving connection %q<->%q: %v", c.LocalAddr(), c.RemoteAddr(), err)
}

// CloseIdle and Shutdown are called once Serve has returned.
func (h *server) CloseIdle() (busy int) {
	if h.il != nil {
		return h.il.CloseIdle()
	}
	return 0
}

func (h *server) Shutdown(ctx context.Context) error {
	if h.il == nil {
		return nil // never served (see imposter.Server): no connection to wait for
	}
	err := h.il.Shutdown(ctx)
	h.live.Store(nil) // every connection is closed: let the imposter go (see live)
	return err
}

// handle serves one HTTP request. A panic becomes a 500 for this request only.
func (h *server) handle(ctx *fasthttp.RequestCtx) {
	im := h.im
	defer func() {
		if p := recover(); p != nil {
			im.Log().Error("panic while serving a request", "panic", p, "stack", string(debug.Stack()))
			ctx.Response.Reset()
			writeError(ctx, &config.Error{Code: "internal error", Message: fmt.Sprint(p)})
		}
	}()
	if !im.Admit(ctx.RemoteIP()) {
		im.Blocked(ctx.RemoteIP().String())
		_ = ctx.Conn().Close()
		return
	}
	kept := netconn.Kept(ctx.Conn())
	req := connRequest(kept)
	recycle := false
	defer func() {
		if !recycle {
			request.KeepBody(ctx, req) // something may hold the body: fasthttp must not reuse it
		}
		switch {
		case kept != nil:
			request.Reuse(req, recycle) // the connection's, for its next request
		case recycle:
			request.Recycle(req)
		default:
			request.Release(req)
		}
	}()
	// A large body nothing of the imposter reads was read past without being kept (see
	// Imposter.UnreadBody): the request has none, and ctx's bytes are not it.
	unread := netconn.Unread(ctx.Conn())
	request.FromHTTPView(ctx, req, im.PlainIPv4(), im.MaxBody(), request.HeaderLines(netconn.Lines(ctx.Conn())))
	if im.LogEnabled(slog.LevelInfo) {
		uri := ctx.RequestURI() // copied into the log before LogLineOf returns
		im.LogLineOf(slog.LevelInfo, req.RequestFrom(), " => ", req.Method, " ", unsafe.String(unsafe.SliceData(uri), len(uri)))
	}
	if req.BodyTooLarge {
		tooLarge(ctx, im.MaxBody())
		return
	}

	var a imposter.Answer
	if unread != nil {
		a = im.ResolveUnread(req, unread)
	} else {
		a = im.Resolve(req)
	}
	if a.Err != nil {
		im.LogFailure(req, a.Err)
		writeError(ctx, a.Err)
		return
	}
	recycle = im.Recyclable(&a)
	// Response generation, as Mountebank times it: from the match to the built response
	// (behaviors, injection, proxying), not writing it.
	m := im.Metrics()
	if !a.Dynamic() {
		if m != nil {
			m.RespDuration.Observe(0) // ready-made when the stub was compiled: nothing to time
		}
	} else {
		var t0 metrics.Instant
		if m != nil {
			t0 = metrics.Now()
		}
		if f := a.Fault(); f != "" && fault(ctx, f) {
			im.RecordFaultMatch(&a, f)
			return
		}
		var body []byte
		if unread == nil {
			body = ctx.Request.Body()
		}
		rctx := requestContext(ctx)
		if err := im.Build(rctx, req, ctx.Request.Header.RequestURI(), body, &a); err != nil {
			if rctx.Err() != nil {
				// The client went away: nobody reads the answer.
				im.Log().Debug("the client closed the connection before the response was ready", "err", err)
			} else {
				im.LogFailure(req, err)
			}
			writeError(ctx, err)
			return
		}
		recycle = im.Recyclable(&a) // built natively, it may be recyclable now
		if m != nil {
			m.RespDuration.Observe(t0.Since())
		}
	}
	status, err := a.Status()
	if a.HeadersNotObject() && im.Definition().AllowCORS && req.Method == "OPTIONS" && preflight(req) != nil {
		// Mountebank's postProcess sets the CORS headers first: they fail before the body does.
		status, err = 0, a.HeadersError("Access-Control-Allow-Headers")
	}
	if err != nil {
		var ce *config.Error
		if !errors.As(err, &ce) {
			// node's writeHead throws a RangeError (its stack is left out, as in every 500).
			ce = &config.Error{Raw: config.NewObject("code", "ERR_HTTP_INVALID_STATUS_CODE",
				"message", err.Error(), "name", "RangeError")}
		}
		im.RecordMatch(&a) // Mountebank kept the match before node refused the status
		writeError(ctx, ce)
		if status != 0 {
			// A header node refused: the 500 keeps the reason phrase of the status the
			// response gave (writeHead set it before it checked the headers).
			ctx.Response.Header.SetStatusMessage(reasonOf(status))
		}
		return
	}
	var cors *corsAnswer
	if im.Definition().AllowCORS {
		cors = corsFor(req, &a, im)
	}
	write(ctx, status, &a, cors)
	if a.Why != nil && im.Debug() {
		ctx.Response.Header.Set(NoMatchHeader, a.Why.Text())
	}
	if im.LogEnabled(slog.LevelDebug) {
		im.LogLine(slog.LevelDebug, req.RequestFrom()+" <= "+string(config.MarshalJSON(responseJSON(status, &a), 0)))
	}
	im.RecordMatch(&a)
	im.Done(&a)
}

// connRequest returns the request view kept with a connection (kept, from netconn.Kept),
// made at its first request, or one from the pool when kept is nil (a handler run on a
// connection no IdleListener accepted). A connection's requests are served one at a time, each
// once the last one's answer is written, so nothing of one request's view is written over
// before its answer is out; what outlives the answer (the journal, a script's state, a proxy
// recording, --debug's match) holds copies or strings of an arena the view does not reuse (see
// request.Reuse), never the view itself.
func connRequest(kept *any) *request.Request {
	if kept == nil {
		return request.Acquire()
	}
	if req, ok := (*kept).(*request.Request); ok {
		return req
	}
	req := request.Acquire()
	*kept = req
	return req
}

// releaseConnRequest gives the request view kept with connection c back to the pool once c
// has served its last request: a client that opens a connection for each request (Mountebank's
// own clients) takes one from the pool and gives it back, as before.
func releaseConnRequest(c net.Conn) {
	kept := netconn.Kept(c)
	if kept == nil {
		return
	}
	if req, ok := (*kept).(*request.Request); ok {
		*kept = nil
		request.Recycle(req) // reset after its last request already (Reuse): what it keeps is free
	}
}

// NoMatchHeader is the response header that, with --debug, says why a request got the default
// response: the nearest stubs and the first predicate each failed.
const NoMatchHeader = "X-Mockd-No-Match"

// responseJSON is a response as Mountebank's debug log shows it.
func responseJSON(status int, a *imposter.Answer) *config.Object {
	headers := &config.Object{}
	for i := range a.NumHeaders() {
		name, value, _ := a.Header(i)
		headers.Set(name, value)
	}
	return config.NewObject("statusCode", float64(status), "headers", headers, "body", string(a.Body()), "_mode", "text")
}

// write puts a's response on ctx: status, headers (with cors's, when allowCORS adds some:
// corsFor), body.
func write(ctx *fasthttp.RequestCtx, status int, a *imposter.Answer, cors *corsAnswer) {
	h := &ctx.Response.Header
	setStatus(h, status)
	for i := range a.NumHeaders() {
		name, value, first := a.WireHeader(i) // node writes a value one byte a character
		if cors != nil && cors.replaces(h, name) {
			continue
		}
		switch {
		case first && contentTypeName(name):
			// What SetCanonical does for this name, without its copy of the value first.
			h.SetContentType(value)
		case first:
			// Nothing to replace and nothing to clean: SetCanonical only copies.
			h.SetCanonical(bytesOf(name), bytesOf(value))
		default:
			h.Add(name, value)
		}
	}
	if cors != nil {
		cors.rest(h)
	}
	if a.HasConnection() {
		// fasthttp honours Connection: close only through its own flag.
		if v := h.Peek("Connection"); string(v) == "close" {
			ctx.SetConnectionClose()
		}
	}
	if a.BodyIsBuffer() {
		// The answer's own buffer (a rendered template): the response takes it, and gives
		// the buffer it held to the answer for the next one, instead of copying it.
		a.ExchangeBuffer(ctx.Response.SwapBody(a.Body()))
		return
	}
	if a.MustCopyBody() {
		ctx.Response.SetBody(a.Body()) // copied: the memory serves the next request once Done
		return
	}
	ctx.Response.SetBodyRaw(a.Body())
}

// contentTypeName reports whether fasthttp's SetCanonical takes name for Content-Type (its
// caseInsensitiveCompare: each byte equal once 0x20 is set in both; "content-type" has it set
// in each byte already), comparing eight bytes and four at a time.
func contentTypeName(name string) bool {
	if len(name) != len("content-type") {
		return false
	}
	b := bytesOf(name)
	return binary.LittleEndian.Uint64(b)|0x2020202020202020 == content8 &&
		binary.LittleEndian.Uint32(b[8:])|0x20202020 == type4
}

// content8 and type4 are "content-" and "type" as little-endian integers (contentTypeName).
var (
	content8 = binary.LittleEndian.Uint64([]byte("content-"))
	type4    = binary.LittleEndian.Uint32([]byte("type"))
)

// corsFor returns the CORS headers an allowCORS imposter's answer a to req carries: a
// preflight's, or those an earlier preflight left in the defaultResponse's headers when a's
// headers are those (DefaultCORS); nil for none. With --debug the answer's match is told of a
// preflight's (Answer.SetPreflight).
func corsFor(req *request.Request, a *imposter.Answer, im *imposter.Imposter) *corsAnswer {
	var cors *corsAnswer
	if req.Method == "OPTIONS" {
		if cors = preflight(req); cors != nil && im.Debug() {
			a.SetPreflight(&cors.values) // the match shows the headers the preflight added
		}
	}
	if dc := im.DefaultCORS(); dc != nil && a.HeadersFromDefault() {
		if cors != nil {
			dc.Store(cloneValues(&cors.values)) // the request's strings go with it
		} else if v := dc.Load(); v != nil {
			cors = &corsAnswer{values: *v}
		}
	}
	return cors
}

// cloneValues copies a preflight's values out of its request.
func cloneValues(v *[3][]string) *[3][]string {
	var out [3][]string
	for i, vs := range v {
		out[i] = make([]string, len(vs))
		for j, s := range vs {
			out[i][j] = strings.Clone(s)
		}
	}
	return &out
}

// corsNames are the headers allowCORS answers a preflight with, in Mountebank's order.
var corsNames = [3]string{"Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Origin"}

// corsAnswer is what allowCORS adds to the answer of a preflight: the values of each of
// corsNames, and the configured header each replaced (headersMap.set replaces the first
// configured name matching case-insensitively, in its place and spelling, and appends the
// others).
type corsAnswer struct {
	values   [3][]string
	replaced [3]string
}

// preflight returns what allowCORS adds to the answer of an OPTIONS request, or nil when it is
// not a preflight: Mountebank reads the recorded headers (headersMap.get), where several values
// of one name are an array, truthy, written back as as many header lines.
func preflight(req *request.Request) *corsAnswer {
	c := &corsAnswer{values: [3][]string{
		req.MBHeader("Access-Control-Request-Headers"),
		req.MBHeader("Access-Control-Request-Method"),
		req.MBHeader("Origin"),
	}}
	for _, v := range c.values {
		if len(v) == 0 || len(v) == 1 && v[0] == "" {
			return nil
		}
	}
	return c
}

// replaces writes the CORS values in place of a configured header name, when it is the first
// of its CORS header (or that header's same spelling again), and reports whether it did.
func (c *corsAnswer) replaces(h *fasthttp.ResponseHeader, name string) bool {
	for k, cn := range corsNames {
		if !strings.EqualFold(name, cn) {
			continue
		}
		switch c.replaced[k] {
		case "":
			c.replaced[k] = name
			for _, v := range c.values[k] {
				h.Add(name, imposter.Latin1(v))
			}
			return true
		case name:
			return true // the configured name's further values: replaced already
		}
	}
	return false
}

// rest appends the CORS headers no configured header stood for.
func (c *corsAnswer) rest(h *fasthttp.ResponseHeader) {
	for k, cn := range corsNames {
		if c.replaced[k] == "" {
			for _, v := range c.values[k] {
				h.Add(cn, imposter.Latin1(v))
			}
		}
	}
}

// MaxHeaderBytes bounds a request's header block as sent (request line, header lines, line
// breaks), on the imposters and the admin API: past it the answer is 431. It is node's
// maxHeaderSize (16 KiB), which node counts over the URL and the header names and values only,
// so node takes some blocks of many small headers that mockd refuses (2,000 headers of 9 bytes).
const MaxHeaderBytes = 16 << 10

// ErrorHandler answers a request fasthttp could not read as node (so Mountebank) does, with a
// status line and no body: 431 for a header block too large, 413 for a chunk whose extensions
// are too long (see netconn.ChunkExtTooLarge), 408 for one too slow to arrive,
// 400 for anything else it cannot parse; except a body larger than maxBody: 413 with an error
// body in Mountebank's shape. The connection is closed after the answer.
func ErrorHandler(maxBody int) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		var small *fasthttp.ErrSmallBuffer
		var ne *net.OpError
		switch {
		case errors.Is(err, fasthttp.ErrBodyTooLarge):
			tooLarge(ctx, maxBody)
		case netconn.ChunkExtTooLarge(ctx.Conn()):
			bare(ctx, fasthttp.StatusRequestEntityTooLarge)
			netconn.LingerOnClose(ctx.Conn())
		case errors.As(err, &small):
			bare(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge)
			// The rest of the header block is still coming: read it before closing, or
			// the client may get a reset instead of the answer.
			netconn.LingerOnClose(ctx.Conn())
		case errors.As(err, &ne) && ne.Timeout():
			bare(ctx, fasthttp.StatusRequestTimeout)
		default:
			bare(ctx, fasthttp.StatusBadRequest)
		}
	}
}

// bare answers status with no body and closes the connection, as node answers a request its
// parser refused (fasthttp's own answers carry a text body).
func bare(ctx *fasthttp.RequestCtx, status int) {
	ctx.Response.Reset()
	setStatus(&ctx.Response.Header, status) // node's reason phrase (413: Payload Too Large)
	ctx.SetConnectionClose()
}

// tooLarge answers 413 for a body past the limit and closes the connection: the client may
// still be sending it.
func tooLarge(ctx *fasthttp.RequestCtx, maxBody int) {
	ctx.SetStatusCode(fasthttp.StatusRequestEntityTooLarge)
	ctx.Response.Header.Set("Content-Type", "application/json")
	ctx.SetConnectionClose()
	ctx.Response.SetBodyRaw(config.MarshalJSON(config.NewObject("errors", []any{config.NewObject(
		"code", "payload too large",
		"message", fmt.Sprintf("the request body is larger than the limit of %d bytes", maxBody),
	)}), 0))
}

// requestContext is the context of the work a request sets off (waits, scripts, behaviors):
// done when its client closes the connection. It is not done when mockd shuts down: requests
// in flight then finish (up to --drain-timeout), and their connection is closed after that.
func requestContext(ctx *fasthttp.RequestCtx) context.Context {
	return netconn.Context(ctx.Conn())
}

// bytesOf views s as bytes for fasthttp calls that copy them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// writeError answers a request that failed inside the imposter as Mountebank does: a 500 with
// its error body.
func writeError(ctx *fasthttp.RequestCtx, e error) {
	ctx.SetStatusCode(fasthttp.StatusInternalServerError)
	ctx.Response.Header.Set("content-type", "application/json")
	ctx.Response.SetBodyRaw(config.MarshalJSON(imposter.ErrorBody(e), 0))
}

type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l != nil {
		f.l.Debug(fmt.Sprintf(format, args...))
	}
}

// fault simulates a fault on the request's connection; it reports false for a fault name
// Mountebank does not know, which then gets an ordinary (empty) response.
func fault(ctx *fasthttp.RequestCtx, name string) bool {
	switch name {
	case "CONNECTION_RESET_BY_PEER":
		ctx.HijackSetNoResponse(true)
		// Mountebank destroys the socket: with the request read in full, the client sees the
		// connection closed (FIN), not a reset (test/compat/scenarios/http-fault-connection-
		// reset-by-peer.json).
		ctx.Hijack(func(c net.Conn) { _ = c.Close() })
		return true
	case "RANDOM_DATA_THEN_CLOSE":
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			_, _ = c.Write([]byte(imposter.RandomFaultData))
			_ = c.Close()
		})
		return true
	}
	return false
}
