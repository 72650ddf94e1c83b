package imposter

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/request"
)

// httpServer serves an http imposter with fasthttp.
type httpServer struct {
	im  *Imposter
	srv *fasthttp.Server
}

func newHTTPServer(im *Imposter) protocolServer {
	maxBody := im.opts.MaxBodySize
	if maxBody <= 0 {
		maxBody = 64 << 20
	}
	h := &httpServer{im: im}
	h.srv = &fasthttp.Server{
		Handler:                       h.handle,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		MaxRequestBodySize:            maxBody,
		ReadBufferSize:                16 << 10,
		ConnState:                     IdleConnState, // the idle timeout, with the IdleListener of serve
		Logger:                        fasthttpLogger{im.log},
	}
	return h
}

// HTTPIdleTimeout is how long an http connection may wait for its next (or first) request.
const HTTPIdleTimeout = 2 * time.Minute

func (h *httpServer) serve(ln net.Listener) error {
	il := NewIdleListener(ln, HTTPIdleTimeout)
	defer il.Close()
	return h.srv.Serve(il)
}

func (h *httpServer) shutdown(ctx context.Context) error { return h.srv.ShutdownWithContext(ctx) }

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
	request.FromHTTPListen(ctx, req, im.plainIPv4)

	st, resp, recorded, err := im.resolve(req)
	if err != nil {
		writeError(ctx, err)
		return
	}
	// A static response from stubs without scripts, not recorded: nothing kept the request's
	// strings, so their memory serves the next request.
	recycle = !resp.dynamic() && recorded == nil && !im.scripted.Load()
	// Response generation, as Mountebank times it: from the match to the built response
	// (behaviors, injection, proxying), not writing it.
	m := im.metrics
	if !resp.dynamic() {
		if m != nil {
			m.RespDuration.Observe(0) // ready-made when the stub was compiled: nothing to time
		}
	} else {
		var t0 metrics.Instant
		if m != nil {
			t0 = metrics.Now()
		}
		if resp.kind == kindFault && httpFault(ctx, resp.fault) {
			return
		}
		var built *response
		var perr error
		if resp.kind == kindProxy {
			built, perr = im.proxyHTTP(ctx, req, st, resp)
		} else {
			built, perr = im.produce(ctx, req, resp)
		}
		if perr != nil {
			im.log.Error("cannot build the response", "err", perr)
			writeError(ctx, perr)
			return
		}
		resp = built
		if m != nil {
			m.RespDuration.Observe(t0.Since())
		}
	}
	if resp.statusErr != nil {
		writeError(ctx, &config.Error{Code: "ERR_HTTP_INVALID_STATUS_CODE", Message: resp.statusErr.Error()})
		return
	}
	im.writeHTTP(ctx, req, resp)
	if st != nil && im.opts.Debug {
		im.recordMatch(st, recorded, resp)
	}
}

func (im *Imposter) writeHTTP(ctx *fasthttp.RequestCtx, req *request.Request, resp *response) {
	ctx.SetStatusCode(resp.status)
	h := &ctx.Response.Header
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

// bytesOf views s as bytes for fasthttp calls that copy them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// setCORS sets a CORS header, replacing a configured one of the same name in any case.
func setCORS(h *fasthttp.ResponseHeader, resp *response, name, value string) {
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
