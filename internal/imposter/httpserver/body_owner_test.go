package httpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// TestRenderedBodyStaysWithItsResponse: a template's body, rendered into the answer's buffer,
// is handed to the response (SwapBody) and the buffer the response gave back serves the next
// answer: a response not yet written (another connection's, held across the next requests)
// keeps its own body while the pooled request and its answer box serve other requests.
func TestRenderedBodyStaysWithItsResponse(t *testing.T) {
	h, _ := newBenchHandler(t, handlebarsImposter, handlebarsRequest, false)
	const conns = 3
	var ctxs [conns]*fasthttp.RequestCtx
	want := func(round, c int) string {
		return fmt.Sprintf(`{"id":"42","q":"r%dc%d","trace":"t-1","name":"Ada","method":"POST"}`, round, c)
	}
	for round := 0; round < 20; round++ {
		for c := range ctxs {
			raw := strings.Replace(handlebarsRequest, "?q=x", fmt.Sprintf("?q=r%dc%d", round, c), 1)
			ctxs[c] = impostertest.RequestCtx(t, raw)
			serveOnce(t, h, ctxs[c])
		}
		for c, ctx := range ctxs {
			if got := string(ctx.Response.Body()); got != want(round, c) {
				t.Fatalf("round %d, connection %d: body %s, want %s", round, c, got, want(round, c))
			}
		}
	}
}
