package app

import (
	"bytes"
	"errors"
	"io"
	"testing"

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
