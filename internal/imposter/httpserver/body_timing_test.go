package httpserver

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// uploadImposter is bench's body-1mib-request stub: method and path only, a small JSON answer.
const uploadImposter = `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],
	"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"stored\":true}"}}]}]}`

// uploadRequest is bench's body-1mib-request request: a POST of a 1 MiB text/plain body.
func uploadRequest() string {
	return impostertest.RawRequest("POST", "/upload", "text/plain", strings.Repeat("0123456789abcdef", 1<<16))
}

// BenchmarkLargeRequestBody is bench's body-1mib-request scenario: handler is the handler alone
// on a request already read; mockd and bare read it from a keep-alive loopback connection, bare
// being bench's ceiling (a fasthttp.Server of default settings that reads the body and answers a
// constant), the bound mockd is measured against in the same run. The client writes the request
// bytes and reads the answer itself, so that what differs between the two is the server.
func BenchmarkLargeRequestBody(b *testing.B) {
	raw := uploadRequest()
	b.Run("handler", func(b *testing.B) {
		h, ctx := newBenchHandler(b, uploadImposter, raw, true)
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			serveOnce(b, h, ctx)
		}
	})
	b.Run("mockd", func(b *testing.B) {
		im := startBench(b, uploadImposter)
		benchUpload(b, "127.0.0.1:"+strconv.Itoa(im.Port()), raw)
	})
	b.Run("bare", func(b *testing.B) {
		addr := impostertest.Origin(b, func(ctx *fasthttp.RequestCtx) {
			_ = ctx.PostBody()
			ctx.Response.Header.SetContentType("application/json")
			ctx.Response.SetBodyString(`{"stored":true}`)
		})
		benchUpload(b, strings.TrimPrefix(addr, "http://"), raw)
	})
}

// benchUpload sends raw to addr over one keep-alive connection for each round and reads the
// answer, which must be a 200.
func benchUpload(b *testing.B, addr, raw string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req := []byte(raw)
	var resp fasthttp.Response
	do := func() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		resp.Reset()
		if err := resp.Read(br); err != nil || resp.StatusCode() != 200 {
			b.Fatalf("%v %d", err, resp.StatusCode())
		}
	}
	do()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}
