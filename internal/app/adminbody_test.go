package app

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// shortReads reads at most n bytes a call, as a client's chunks arrive.
type shortReads struct {
	r io.Reader
	n int
}

func (s shortReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// TestChunkedAdminBody reads chunked bodies around the sizes where the reader changes its way:
// each must come out whole, the budget taken must be given back in full, and a body past what
// fits in one part must be held at its size (grown by doubling, a 64 MiB body was held in a
// 128 MiB buffer while its request ran, 256 MB allocated on the way).
func TestChunkedAdminBody(t *testing.T) {
	const max = 1 << 20
	for _, tt := range []struct {
		size    int
		wantErr error
	}{
		{0, nil}, {1, nil}, {smallAdminBody - 1, nil}, {smallAdminBody, nil}, {smallAdminBody + 1, nil},
		{3*smallAdminBody + 5, nil}, {max - 1, nil}, {max, nil},
		{max + 1, fasthttp.ErrBodyTooLarge}, {3 * max, fasthttp.ErrBodyTooLarge},
	} {
		for _, chunk := range []int{1000, 1 << 16} {
			if tt.size > 100_000 && chunk == 1000 && tt.size != max {
				continue
			}
			b := &bodyBudget{max: max}
			in := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16+1)[:tt.size]
			var ctx fasthttp.RequestCtx
			ctx.Request.SetBodyStream(shortReads{bytes.NewReader(in), chunk}, -1)
			held, err := b.read(&ctx)
			b.give(held)
			if b.used != 0 {
				t.Errorf("%d bytes in reads of %d: %d bytes of the budget left taken", tt.size, chunk, b.used)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%d bytes in reads of %d: %v, want %v", tt.size, chunk, err, tt.wantErr)
				continue
			}
			if err != nil {
				continue
			}
			body := ctx.Request.Body()
			if !bytes.Equal(body, in) {
				t.Errorf("%d bytes in reads of %d: read %d bytes, not the body", tt.size, chunk, len(body))
			}
			if len(body) > smallAdminBody && cap(body) != len(body) {
				t.Errorf("%d bytes in reads of %d: held in %d bytes", tt.size, chunk, cap(body))
			}
		}
	}
}

// TestLargeAdminBodiesAreHandledInTurn checks that bodies past smallAdminBody are handled at most
// handleAtOnce bytes of them at once, in turn, while small bodies are handled at once: four
// 40 MB bodies handled together took 3.7 GB (each ~1.5 GB alone) and a memory limit ended the
// process with every imposter it ran.
func TestLargeAdminBodiesAreHandledInTurn(t *testing.T) {
	b := &bodyBudget{max: 256 << 20}
	var mu sync.Mutex
	entered := map[byte]bool{}
	release := map[byte]chan struct{}{}
	for _, tag := range []byte("ABCD") {
		release[tag] = make(chan struct{})
	}
	h := b.handler(func(ctx *fasthttp.RequestCtx) {
		tag := ctx.Request.Body()[0]
		mu.Lock()
		entered[tag] = true
		mu.Unlock()
		<-release[tag]
	})
	done := map[byte]chan struct{}{}
	send := func(tag byte, size int) {
		body := bytes.Repeat([]byte{tag}, size)
		done[tag] = make(chan struct{})
		go func() {
			defer close(done[tag])
			var ctx fasthttp.RequestCtx
			ctx.Request.SetBodyStream(bytes.NewReader(body), size)
			h(&ctx)
		}()
	}
	has := func(tag byte) bool {
		mu.Lock()
		defer mu.Unlock()
		return entered[tag]
	}
	// waitFor polls until cond holds, failing at once if a body is being handled that must not.
	waitFor := func(what string, cond func() bool, never ...byte) {
		t.Helper()
		for i := 0; !cond(); i++ {
			for _, tag := range never {
				if has(tag) {
					t.Fatalf("waiting for %s: body %c is being handled beside the others", what, tag)
				}
			}
			if i > 10_000 {
				t.Fatalf("%s never happened", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	send('A', handleAtOnce) // as large as may be handled at once
	waitFor("A handled", func() bool { return has('A') })
	send('B', 2<<20)
	waitFor("B waiting", func() bool { return b.handling.waiting() == 1 }, 'B')
	send('C', 100<<10) // would fit beside B, but comes after it
	waitFor("C waiting", func() bool { return b.handling.waiting() == 2 }, 'B', 'C')
	// A small body is handled while the large one is.
	close(release['D'])
	send('D', smallAdminBody)
	<-done['D']
	if has('B') || has('C') {
		t.Fatal("a body waiting its turn was handled")
	}
	close(release['A'])
	<-done['A']
	waitFor("B and C handled once A was", func() bool { return has('B') && has('C') })
	close(release['B'])
	close(release['C'])
	<-done['B']
	<-done['C']
	if b.used != 0 || b.handling.used != 0 || b.handling.waiting() != 0 {
		t.Errorf("after every body: budget %d, handling %d, waiting %d; want all 0", b.used, b.handling.used, b.handling.waiting())
	}
}

// TestLargeAdminBodyMemoryIsReleased checks that the memory of a large admin body goes back to
// the system whatever its answer: a 256 MB body refused with 413 left the heap at ~317 MB.
func TestLargeAdminBodyMemoryIsReleased(t *testing.T) {
	const max = 4 << 20
	calls := 0
	defer func(f func()) { releaseMemory = f }(releaseMemory)
	releaseMemory = func() { calls++ }
	for _, tt := range []struct {
		name    string
		size    int
		chunked bool
		handled bool
		want    int // calls of releaseMemory
	}{
		{name: "small", size: 1000, handled: true},
		{name: "under largeAdminBody", size: largeAdminBody - 1, handled: true},
		{name: "large", size: largeAdminBody, handled: true, want: 1},
		{name: "large, chunked", size: 2 * largeAdminBody, chunked: true, handled: true, want: 1},
		{name: "chunked past the limit", size: 2 * max, chunked: true, want: 1},
		{name: "announced past the limit (not read)", size: 2 * max},
	} {
		calls = 0
		b := &bodyBudget{max: max}
		handled := false
		h := b.handler(func(*fasthttp.RequestCtx) { handled = true })
		var ctx fasthttp.RequestCtx
		size := tt.size
		if tt.chunked {
			size = -1
		}
		ctx.Request.SetBodyStream(bytes.NewReader(make([]byte, tt.size)), size)
		h(&ctx)
		if handled != tt.handled || calls != tt.want {
			t.Errorf("%s: handled %v, memory released %d times; want %v, %d", tt.name, handled, calls, tt.handled, tt.want)
		}
	}
}
