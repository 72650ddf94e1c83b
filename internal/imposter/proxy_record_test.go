package imposter

import (
	"net"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
)

// TestProxyAlwaysAppends: proxyAlways appends each answer to the recorded stub, and a stub
// taken before an append keeps the responses it had (the lists grow in place).
func TestProxyAlwaysAppends(t *testing.T) {
	n := 0
	origin := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		n++
		ctx.SetBodyString("answer " + strconv.Itoa(n))
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go origin.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = origin.Shutdown() })
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + ln.Addr().String() +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`
	h, ctx := newBenchHandler(t, imp, rawRequest("GET", "/orders/7", "", ""), false)
	responses := func(s *stub) int { return len(get(s.def, "responses").([]any)) }
	var first *stub
	for i := 1; i <= 3; i++ {
		serveOnce(t, h, ctx)
		if got := string(ctx.Response.Body()); got != "answer "+strconv.Itoa(i) {
			t.Fatalf("request %d: got %q", i, got)
		}
		stubs := h.im.tbl.Load().stubs
		if len(stubs) != 2 || responses(stubs[1]) != i || len(stubs[1].responses) != i {
			t.Fatalf("after %d requests: %d stubs, recorded %d responses (%d compiled)", i, len(stubs), responses(stubs[1]), len(stubs[1].responses))
		}
		if first == nil {
			first = stubs[1]
		}
	}
	if responses(first) != 1 || len(first.responses) != 1 {
		t.Errorf("the stub after the first request now has %d responses", responses(first))
	}
	last := get(h.im.tbl.Load().stubs[1].def, "responses").([]any)[2]
	if body := get(config.AsObject(get(config.AsObject(last), "is")), "body"); body != "answer 3" {
		t.Errorf("third recorded body %v", body)
	}
	if len(h.im.def.Stubs) != 2 || responses(&stub{def: h.im.def.Stubs[1]}) != 3 {
		t.Errorf("the definition's stubs were not updated")
	}
}
