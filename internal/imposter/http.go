package imposter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// httpServer serves an http imposter with fasthttp.
type httpServer struct {
	im  *Imposter
	srv *fasthttp.Server
	tls *tls.Config // https
	il  *netconn.IdleListener
}

func newHTTPServer(im *Imposter) protocolServer {
	maxBody := im.maxBody()
	h := &httpServer{im: im}
	h.srv = &fasthttp.Server{
		ErrorHandler:                  ErrorHandler(maxBody),
		Handler:                       netconn.TrackRequests(h.handle),
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		MaxRequestBodySize:            maxBody,
		ReadBufferSize:                16 << 10,
		ConnState:                     netconn.IdleConnState, // the timeouts, with the IdleListener of serve
		Logger:                        fasthttpLogger{im.log},
	}
	return h
}

func (h *httpServer) serve(ln net.Listener) error {
	h.il = netconn.NewIdleListener(ln, netconn.ListenOptions{IdleTimeout: h.im.opts.IdleTimeout, HeaderTimeout: h.im.opts.HeaderTimeout, TLS: h.tls})
	defer h.il.Close()
	return h.srv.Serve(h.il)
}

// closeIdle and shutdown are called once serve has returned.
func (h *httpServer) closeIdle() {
	if h.il != nil {
		h.il.CloseIdle()
	}
}

func (h *httpServer) shutdown(ctx context.Context) error { return h.il.Shutdown(ctx) }

// handle serves one HTTP request. A panic becomes a 500 for this request only.
func (h *httpServer) handle(ctx *fasthttp.RequestCtx) {
	im := h.im
	defer func() {
		if p := recover(); p != nil {
			im.log.Error("panic while serving a request", "panic", p, "stack", string(debug.Stack()))
			ctx.Response.Reset()
			writeError(ctx, &config.Error{Code: "internal error", Message: fmt.Sprint(p)})
		}
	}()
	if im.opts.AllowIP != nil && !im.opts.AllowIP(ctx.RemoteIP()) {
		if im.metrics != nil {
			im.metrics.Blocked.Inc()
		}
		im.log.Warn("Blocking incoming connection from " + ctx.RemoteIP().String() + ". Turn off --localOnly or add to --ipWhitelist to allow")
		_ = ctx.Conn().Close()
		return
	}
	req := request.Acquire()
	recycle := false
	defer func() {
		if recycle {
			request.Recycle(req)
		} else {
			request.Release(req)
		}
	}()
	request.FromHTTPLimit(ctx, req, im.plainIPv4, im.maxBody())
	if im.enabled(slog.LevelInfo) {
		im.logLine(slog.LevelInfo, req.RequestFrom()+" => "+req.Method+" "+string(ctx.RequestURI()))
	}
	if req.BodyTooLarge {
		tooLarge(ctx, im.maxBody())
		return
	}

	st, resp, recorded, why, err := im.resolve(req)
	if err != nil {
		im.logFailure(req, err)
		writeError(ctx, err)
		return
	}
	// A static response from stubs without scripts, not recorded: nothing kept the request's
	// strings, so their memory serves the next request.
	out := static(resp)
	recycle = out != nil && recorded == nil && !im.Records() && !im.scripted.Load()
	// Response generation, as Mountebank times it: from the match to the built response
	// (behaviors, injection, proxying), not writing it.
	m := im.metrics
	if out != nil {
		if m != nil {
			m.RespDuration.Observe(0) // ready-made when the stub was compiled: nothing to time
		}
	} else {
		var t0 metrics.Instant
		if m != nil {
			t0 = metrics.Now()
		}
		if f, ok := resp.(*faultResponse); ok && httpFault(ctx, f.name) {
			return
		}
		var perr error
		rctx := requestContext(ctx)
		if p, ok := resp.(*proxyResponse); ok {
			out, perr = im.proxyHTTP(ctx, rctx, req, st, p)
		} else {
			out, perr = im.produce(rctx, req, resp)
		}
		if perr != nil {
			if rctx.Err() != nil {
				// The client went away: nobody reads the answer.
				im.log.Debug("the client closed the connection before the response was ready", "err", perr)
			} else {
				im.logFailure(req, perr)
			}
			writeError(ctx, perr)
			return
		}
		if m != nil {
			m.RespDuration.Observe(t0.Since())
		}
	}
	if out.statusErr != nil {
		writeError(ctx, &config.Error{Code: "ERR_HTTP_INVALID_STATUS_CODE", Message: out.statusErr.Error()})
		return
	}
	im.writeHTTP(ctx, req, out)
	if why != nil && im.opts.Debug {
		ctx.Response.Header.Set(NoMatchHeader, why.Text())
	}
	if im.enabled(slog.LevelDebug) {
		im.logLine(slog.LevelDebug, req.RequestFrom()+" <= "+string(config.MarshalJSON(httpResponseJSON(out), 0)))
	}
	if st != nil && im.opts.Debug {
		im.recordMatch(st, recorded, out.is, resp)
	}
}

// NoMatchHeader is the response header that, with --debug, says why a request got the default
// response: the nearest stubs and the first predicate each failed.
const NoMatchHeader = "X-Mockd-No-Match"

// httpResponseJSON is a response as Mountebank's debug log shows it.
func httpResponseJSON(resp *wire) *config.Object {
	headers := &config.Object{}
	for _, h := range resp.headers {
		headers.Set(h.name, h.value)
	}
	return config.NewObject("statusCode", float64(resp.status), "headers", headers, "body", string(resp.body), "_mode", "text")
}

func (im *Imposter) writeHTTP(ctx *fasthttp.RequestCtx, req *request.Request, resp *wire) {
	h := &ctx.Response.Header
	setStatus(h, resp.status)
	for _, hd := range resp.headers {
		if hd.set {
			// Nothing to replace and nothing to clean: SetCanonical only copies.
			h.SetCanonical(bytesOf(hd.name), bytesOf(hd.value))
		} else {
			h.Add(hd.name, hd.value)
		}
	}
	if im.def.AllowCORS && req.Method == "OPTIONS" {
		acrh, _ := req.Header("Access-Control-Request-Headers")
		acrm, _ := req.Header("Access-Control-Request-Method")
		origin, _ := req.Header("Origin")
		if acrh != "" && acrm != "" && origin != "" {
			setCORS(h, resp, "Access-Control-Allow-Headers", acrh)
			setCORS(h, resp, "Access-Control-Allow-Methods", acrm)
			setCORS(h, resp, "Access-Control-Allow-Origin", origin)
		}
	}
	if resp.hasConnection {
		// fasthttp honours Connection: close only through its own flag.
		if v := h.Peek("Connection"); string(v) == "close" {
			ctx.SetConnectionClose()
		}
	}
	ctx.Response.SetBodyRaw(resp.body)
}

// maxBody is the largest request body, also once decompressed.
func (im *Imposter) maxBody() int {
	if im.opts.MaxBodySize > 0 {
		return im.opts.MaxBodySize
	}
	return request.DefaultMaxBody
}

// ErrorHandler answers a request fasthttp could not read as fasthttp does (400, 408 or 431),
// except a body larger than maxBody: 413 with an error body in Mountebank's shape. The
// connection is closed after the answer.
func ErrorHandler(maxBody int) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		var small *fasthttp.ErrSmallBuffer
		var ne *net.OpError
		switch {
		case errors.Is(err, fasthttp.ErrBodyTooLarge):
			tooLarge(ctx, maxBody)
		case errors.As(err, &small):
			ctx.Error("Too big request header", fasthttp.StatusRequestHeaderFieldsTooLarge)
		case errors.As(err, &ne) && ne.Timeout():
			ctx.Error("Request timeout", fasthttp.StatusRequestTimeout)
		default:
			ctx.Error("Error when parsing request", fasthttp.StatusBadRequest)
		}
	}
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

// setCORS sets a CORS header, replacing a configured one of the same name in any case.
func setCORS(h *fasthttp.ResponseHeader, resp *wire, name, value string) {
	for _, hd := range resp.headers {
		if strings.EqualFold(hd.name, name) {
			h.Del(hd.name)
			h.Set(hd.name, value)
			return
		}
	}
	h.Set(name, value)
}

// writeError answers a request that failed inside the imposter as Mountebank does: a 500 with
// its error body.
func writeError(ctx *fasthttp.RequestCtx, e error) {
	ctx.SetStatusCode(fasthttp.StatusInternalServerError)
	ctx.Response.Header.Set("content-type", "application/json")
	ctx.Response.SetBodyRaw(config.MarshalJSON(scriptErrorBody(e), 0))
}

type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l != nil {
		f.l.Debug(fmt.Sprintf(format, args...))
	}
}
