package main

import (
	"fmt"
	"net/url"

	"github.com/valyala/fasthttp"
)

// proxyHandler forwards every request to origin (http://host:port) over kept-alive connections
// and answers with what the origin answered, untouched: the least a proxy does, the bound of
// bench's proxyAlways scenario (which also records each answer).
func proxyHandler(origin string) (fasthttp.RequestHandler, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("-proxy-to wants http://host:port, got %q", origin)
	}
	hc := &fasthttp.HostClient{Addr: u.Host, MaxConns: 4096}
	return func(ctx *fasthttp.RequestCtx) {
		if err := hc.Do(&ctx.Request, &ctx.Response); err != nil {
			ctx.Error("ceiling: origin: "+err.Error(), fasthttp.StatusBadGateway)
		}
	}, nil
}
