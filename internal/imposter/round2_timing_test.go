package imposter

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/script"
)

// startBench creates and starts an imposter from JSON on a free loopback port, with scripts
// allowed.
func startBench(tb testing.TB, def string) *Imposter {
	tb.Helper()
	v, err := config.ParseJSON([]byte(def))
	if err != nil {
		tb.Fatal(err)
	}
	d, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		tb.Fatalf("parse %s: %v", def, errs[0])
	}
	log := slog.New(slog.DiscardHandler)
	im, err := New(d, Options{Host: "127.0.0.1", Logger: log, Script: script.New(script.Options{Logger: log})})
	if err != nil {
		tb.Fatal(err)
	}
	if err := im.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		im.Stop(ctx)
	})
	return im
}

// BenchmarkHTTPSKeepAlive sends the simple stub's request over one keep-alive connection, plain
// and over TLS 1.3 (the handshake is done once, before the loop): what https costs a request.
func BenchmarkHTTPSKeepAlive(b *testing.B) {
	for _, proto := range []string{"http", "https"} {
		b.Run(proto, func(b *testing.B) {
			im := startBench(b, strings.Replace(simpleStub, `"protocol":"http","port":4545`, `"protocol":"`+proto+`"`, 1))
			c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), IsTLS: proto == "https", MaxConns: 1,
				TLSConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}} //nolint:gosec // the imposter's own certificate
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(proto + "://" + c.Addr + "/hello")
			do := func() {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					b.Fatalf("%v %d", err, resp.StatusCode())
				}
			}
			do() // connects and, for https, shakes hands
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}

// BenchmarkProxyRoundTrip serves a request through a proxy stub to a loopback origin:
// proxyTransparent is the round trip alone; proxyAlways also records every answer.
func BenchmarkProxyRoundTrip(b *testing.B) {
	origin := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("order 7, from the origin")
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go origin.Serve(ln) //nolint:errcheck // ends with Shutdown
	b.Cleanup(func() { _ = origin.Shutdown() })
	for _, mode := range []string{"proxyTransparent", "proxyAlways"} {
		b.Run(mode, func(b *testing.B) {
			imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + ln.Addr().String() + `","mode":"` + mode +
				`","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
			h, ctx := newBenchHandler(b, imp, rawRequest("GET", "/orders/7", "", ""), false)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}

// BenchmarkTCPFraming exchanges requests with a tcp imposter on one connection: text, and
// binary frames with a 4-byte length prefix that an endOfRequestResolver (JavaScript) waits for.
func BenchmarkTCPFraming(b *testing.B) {
	frame := func(s string) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
		return append(out, s...)
	}
	lpReq, lpResp := frame("GET user 42"), frame(`{"id":42,"name":"Ada"}`)
	for _, sc := range []struct {
		name, imposter string
		req, resp      []byte
	}{
		{"text", `{"protocol":"tcp","stubs":[{"predicates":[{"equals":{"data":"PING\n"}}],"responses":[{"is":{"data":"PONG\n"}}]}]}`,
			[]byte("PING\n"), []byte("PONG\n")},
		{"binary-length-prefixed", `{"protocol":"tcp","mode":"binary",
			"endOfRequestResolver":{"inject":"function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }"},
			"stubs":[{"predicates":[{"equals":{"data":"` + b64(lpReq) + `"}}],"responses":[{"is":{"data":"` + b64(lpResp) + `"}}]}]}`,
			lpReq, lpResp},
	} {
		b.Run(sc.name, func(b *testing.B) {
			im := startBench(b, sc.imposter)
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			got := make([]byte, len(sc.resp))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(sc.req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(br, got); err != nil || string(got) != string(sc.resp) {
					b.Fatalf("%v: got %q", err, got)
				}
			}
		})
	}
}

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }
