package main

import "io"

// answered takes the n bytes just read into c.buf's spare room (eof: the peer closed the
// connection) and says whether c.buf now holds a whole answer, with its status. The connection
// is closed after an error, an answer that closes it, or bytes after the answer (none was asked
// for); the next request connects again.
func (c *pairConn) answered(n int, eof bool) (status int, done bool, err error) {
	c.buf = c.buf[:len(c.buf)+n]
	f, scratch, perr := parseFrame(c.buf, eof, c.scratch)
	c.scratch = scratch
	switch {
	case perr != nil:
		c.close()
		return 0, true, perr
	case f.n > 0:
		if f.close || eof || f.n < len(c.buf) {
			c.close()
		}
		return f.status, true, nil
	case eof:
		c.close()
		return 0, true, io.ErrUnexpectedEOF
	}
	return 0, false, nil
}
