package app

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/httpserver"
	"github.com/mockd/mockd/internal/netconn"
)

// DefaultAdminMaxBody is the largest admin request body when Options.AdminMaxBody is zero.
const DefaultAdminMaxBody = 256 << 20

// DefaultAdminMaxIndent is the admin API's indentation bound when Options.AdminMaxIndent is
// zero: what a body of up to 2 MiB may make the POST answer grow by (an `is` body's answer to
// each request by twice that). A body nested 4,000 deep (32 MB once indented) is taken and
// answered as Mountebank 2.9.1 does; its process exits from about 5,000 levels.
const DefaultAdminMaxIndent = 32 << 20

func adminMaxIndent(n int) int {
	if n == 0 {
		return DefaultAdminMaxIndent
	}
	return max(n, 0)
}

// releaseMemory is netconn.ReleaseMemorySoon (a variable for the tests).
var releaseMemory = netconn.ReleaseMemorySoon

// largeAdminBody is the size from which the memory an admin request body took (read, and
// handled) goes back to the system soon after its answer (netconn.ReleaseMemorySoon).
const largeAdminBody = 1 << 20

// smallAdminBody is the size up to which an admin request body is not counted against the
// budget of bodies read at once: fasthttp has read it with the headers (its pre-read).
const smallAdminBody = 8 << 10

// bodyBudget bounds the admin API's request bodies: each one to max bytes (413 past it), and
// those being read and handled at once, past smallAdminBody each, to max bytes together (503
// past it). Six clients sending 200 MB imposter files at once took 5.4 GB before: each body
// was read in full before the handler ran, and parsed beside the others.
// The admin server streams request bodies (fasthttp's StreamRequestBody) so the handler
// decides before reading one.
type bodyBudget struct {
	max int

	mu   sync.Mutex
	used int

	// handling bounds the bodies past smallAdminBody being handled at once (see handleAtOnce).
	handling gate
}

// handleAtOnce is how many bytes of request bodies past smallAdminBody the admin API handles at
// once; a larger body is handled alone. Handling a body takes many times its size (the JSON
// tree, the imposter's model, each stub's compiled form: about 37 times for a body of a million
// small stubs), so the bodies read at once (bounded by --admin-max-body) could take far more
// memory together than any alone: four 40 MB bodies, each 1.5 GB handled alone, took 3.7 GB at
// once, and under a 4.5 GB limit the process died with every imposter it ran. Mountebank
// handles them one at a time (node runs one thing at a time).
const handleAtOnce = 16 << 20

// gate is a weighted semaphore whose waiters go in turn (first come, first served: a large body
// is not passed over for ever by smaller ones that fit).
type gate struct {
	mu      sync.Mutex
	used    int
	waiters []gateWaiter
}

type gateWaiter struct {
	n     int
	ready chan struct{}
}

// acquire waits until n bytes (at most handleAtOnce) are free, and takes them.
func (g *gate) acquire(n int) {
	g.mu.Lock()
	if len(g.waiters) == 0 && g.used+n <= handleAtOnce {
		g.used += n
		g.mu.Unlock()
		return
	}
	w := gateWaiter{n: n, ready: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()
	<-w.ready
}

// release gives back n bytes and lets in the waiters that now fit, in turn.
func (g *gate) release(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= n
	for len(g.waiters) > 0 && g.used+g.waiters[0].n <= handleAtOnce {
		w := g.waiters[0]
		g.waiters = g.waiters[1:]
		g.used += w.n
		close(w.ready)
	}
}

// waiting is the number of bodies waiting to be handled.
func (g *gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiters)
}

// take reserves n bytes of the budget, if they are left.
func (b *bodyBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) give(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

var errAdminBusy = errors.New("admin API busy")

// handler reads the request body within the budget, then runs h with it (as a body fasthttp
// read itself), and gives the budget back once h has returned.
func (b *bodyBudget) handler(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.Request.IsBodyStream() {
			h(ctx)
			return
		}
		held, err := b.read(ctx)
		netconn.BodyRead(ctx)
		defer b.give(held)
		if held >= largeAdminBody {
			// Whatever the answer (a refusal too), the memory the body took goes back to the
			// system: a 256 MB body answered 413 left the heap ~317 MB while idle.
			defer releaseMemory()
		}
		if err != nil {
			// The client may still be sending the body: read and drop it for a moment before
			// closing, or it may get a reset instead of the answer.
			netconn.LingerOnClose(ctx.Conn())
		}
		switch {
		case err == nil:
			if n := len(ctx.Request.Body()); n > smallAdminBody {
				n = min(n, handleAtOnce)
				b.handling.acquire(n)
				defer b.handling.release(n)
			}
			h(ctx)
		case errors.Is(err, fasthttp.ErrBodyTooLarge), netconn.ChunkExtTooLarge(ctx.Conn()):
			httpserver.ErrorHandler(b.max)(ctx, err)
		case errors.Is(err, errAdminBusy):
			ctx.Response.Reset()
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.Response.Header.Set("Content-Type", "application/json")
			ctx.Response.Header.Set("Retry-After", "1")
			ctx.SetConnectionClose()
			ctx.Response.SetBodyRaw(config.MarshalJSON(config.NewObject("errors", []any{config.NewObject(
				"code", "admin API busy",
				"message", fmt.Sprintf("with this one, the request bodies the admin API reads at once would pass %d bytes (--admin-max-body): try again", b.max),
			)}), 0))
		default:
			// The client went away or sent a broken body: nothing can be answered.
			ctx.Response.Reset()
			ctx.SetStatusCode(fasthttp.StatusBadRequest)
			ctx.SetConnectionClose()
		}
	}
}

// read reads the body of ctx's request, and answers how much of the budget it holds.
func (b *bodyBudget) read(ctx *fasthttp.RequestCtx) (int, error) {
	n := ctx.Request.Header.ContentLength()
	switch {
	case n > b.max:
		return 0, fasthttp.ErrBodyTooLarge
	case n >= 0 && n <= smallAdminBody:
		// Read with the headers: Body takes it from fasthttp's buffer, without allocating.
		if len(ctx.Request.Body()) != n {
			return 0, io.ErrUnexpectedEOF
		}
		return 0, nil
	case n > 0:
		if !b.take(n) {
			return 0, errAdminBusy
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(ctx.RequestBodyStream(), body); err != nil {
			return n, err
		}
		ctx.Request.SetBodyRaw(body)
		return n, nil
	}
	// Chunked: the budget is taken as the body arrives, read in parts that double in size and
	// joined once, at the body's size. (Grown by doubling, a body of 64 MiB made 256 MB and
	// was held in 128 while the request ran.)
	held, total := 0, 0
	var parts [][]byte
	var part []byte
	r := ctx.RequestBodyStream()
	for {
		if len(part) == cap(part) {
			if part != nil {
				parts = append(parts, part)
			}
			grow := max(smallAdminBody, total)
			if total+grow > b.max {
				grow = b.max + 1 - total
			}
			if total+grow > smallAdminBody {
				if !b.take(grow) {
					return held, errAdminBusy
				}
				held += grow
			}
			part = make([]byte, 0, grow)
		}
		m, err := r.Read(part[len(part):cap(part)])
		part = part[:len(part)+m]
		total += m
		if total > b.max {
			return held, fasthttp.ErrBodyTooLarge
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return held, err
		}
	}
	body := part
	if len(parts) > 0 {
		body = make([]byte, 0, total)
		for _, p := range parts {
			body = append(body, p...)
		}
		body = append(body, part...)
	}
	ctx.Request.SetBodyRaw(body)
	return held, nil
}
