package netconn

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// DefaultIdleTimeout is how long an http connection may wait for its next (or first) request,
// unless told otherwise.
const DefaultIdleTimeout = 2 * time.Minute

// ListenOptions configure an IdleListener.
type ListenOptions struct {
	// IdleTimeout closes a connection that waits longer for its next (or first) request;
	// 0 = DefaultIdleTimeout.
	IdleTimeout time.Duration
	// HeaderTimeout closes a connection whose request has been arriving for longer, from its
	// first byte until it is read in full (headers and body): a client that stops in the
	// middle of a request (slowloris). 0 = no limit.
	HeaderTimeout time.Duration
	// TLS, when set, makes the connections speak TLS: the listener then tracks what the server
	// reads after decryption.
	TLS *tls.Config
	// UnreadBody, when set, is asked as the header block of a request ends with at least
	// minUnreadBody bytes of a Content-Length body still to come (no Content-Encoding, every
	// header line looked at): an answer other than nil says that nothing reads the body. The
	// connection then reads the rest of it through a small buffer of its own and drops it
	// rather than pass it on, and the server, which reads the body as usual, holds bytes that
	// are not the body: its handler must not read them (Lines says BodyUnread, and Unread
	// returns the answer). The body still arrives in full before the handler runs, as node
	// reads it: the answer comes after it, timed by the header timeout as before, and the
	// bytes after it are the next request's.
	UnreadBody func() any
}

// minUnreadBody is the least of a body, past what came with its header block, that is read
// past without being kept (ListenOptions.UnreadBody): a smaller one is read as any other.
const minUnreadBody = 64 << 10

// unreadBytes is the size of the buffers the bodies nothing reads are read through: small
// enough to stay in the core's L2 cache (1 MiB here), large enough that a read takes most of
// what the socket holds. Server CPU time a 1 MiB upload, on 10 connections (three alternated
// rounds): 16 KiB 137 µs, 64 KiB 90-130, 256 KiB 86-113, 512 KiB 116-133; fasthttp's own
// buffer of the body's size 166-183.
const unreadBytes = 256 << 10

// unreadBufs are the buffers of unreadBytes bodies nothing reads are read through, one for
// each read.
var unreadBufs = sync.Pool{New: func() any { return new([unreadBytes]byte) }}

// IdleListener serves an http server's connections and keeps them in check:
//   - it closes the connections that stay idle, with no request in progress, longer than the
//     idle timeout, and those whose request takes longer than the header timeout to arrive;
//   - Shutdown stops accepting, closes idle connections, lets requests in flight finish (their
//     connection closes after the answer) and closes what is left when its context ends.
//
// It replaces fasthttp's IdleTimeout and ReadTimeout, which re-arm a read deadline twice per
// request (a runtime timer change each time: 5-8% of a small request's cost under load); here a
// request costs a few atomic stores, and one goroutine checks the connections every tick
// (from the first connection on).
// Install IdleConnState as the fasthttp.Server's ConnState hook and wrap its handler with
// TrackRequests.
type IdleListener struct {
	net.Listener
	tls         *tls.Config
	unreadBody  func() any
	idleLimit   int64 // ticks a connection may stay idle
	headerLimit int64 // ticks a request may take to arrive; 0 = no limit
	every       time.Duration

	tick atomic.Int64 // starts at 1: a mark of 0 means "not in that state"

	mu       sync.Mutex
	conns    map[*idleConn]struct{}
	closed   bool
	sweeping bool // the sweeper runs: from the first connection on (see Accept)
	done     chan struct{}
	draining atomic.Bool
	changed  chan struct{} // while draining: a connection went idle or closed
}

// NewIdleListener tracks the connections ln accepts as opts say. Timeouts count in seconds,
// rounded up.
func NewIdleListener(ln net.Listener, opts ListenOptions) *IdleListener {
	return newIdleListener(ln, opts, time.Second)
}

func newIdleListener(ln net.Listener, opts ListenOptions, every time.Duration) *IdleListener {
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	ticks := func(d time.Duration) int64 { return int64((d+every-1)/every) + 1 }
	l := &IdleListener{
		Listener:   ln,
		tls:        opts.TLS,
		unreadBody: opts.UnreadBody,
		idleLimit:  ticks(idle),
		every:      every,
	}
	if opts.HeaderTimeout > 0 {
		l.headerLimit = ticks(opts.HeaderTimeout)
	}
	l.tick.Store(1)
	return l
}

// Accept waits for the next connection and wraps it; it counts as idle until its first
// request starts. (Wrap a listener in a RetryListener to keep accepting through failures.)
func (l *IdleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ic := l.newConn(c)
	if l.tls != nil {
		// The TLS handshake and records count as activity, as bytes of plain http do.
		ic.marksOnRaw = true
		ic.Conn = tls.Server(&rawConn{Conn: c, ic: ic}, l.tls)
	}
	ic.since.Store(l.tick.Load())
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if l.conns == nil {
		// Made with the first connection, as the sweeper's done is: an imposter a client suite
		// creates and deletes without connecting to it made them for nothing. changed is
		// written before any connection that sends on it exists (notify), and read by
		// Shutdown only while some connection is busy.
		l.conns = map[*idleConn]struct{}{}
		if l.changed == nil {
			l.changed = make(chan struct{}, 1)
		}
	}
	l.conns[ic] = struct{}{}
	connOpened()
	if !l.sweeping {
		// The sweeper starts with the first connection: an imposter a client suite creates
		// and deletes without connecting to it costs no goroutine and no ticker.
		l.sweeping = true
		l.done = make(chan struct{})
		go l.sweep()
		withConns.add(l) // until shut: ReclaimIdle looks at its connections
	}
	l.mu.Unlock()
	if tc, ok := ic.Conn.(*tls.Conn); ok {
		return &tlsIdleConn{idleConn: ic, tc: tc}, nil
	}
	return ic, nil
}

// newConn makes the idleConn of a TCP connection c, hearing of its writes' progress and
// polling for its bodies' bytes where c can.
func (l *IdleListener) newConn(c net.Conn) *idleConn {
	ic := &idleConn{Conn: c, raw: c, l: l, next: true}
	ic.bp, _ = c.(bodyPoller)
	if r, ok := c.(progressReporter); ok {
		r.reportWrites(ic)
		ic.reported = true
	}
	return ic
}

// Close stops accepting and closes the listener; accepted connections stay open.
func (l *IdleListener) Close() error {
	if first, err := l.shut(); first {
		return err
	}
	return l.Listener.Close() // the error a listener closed already returns
}

// Stop is Close where a listener closed already is left alone: no error is made (a
// *net.OpError for each of the several ways an imposter's listener is closed on DELETE).
func (l *IdleListener) Stop() {
	_, _ = l.shut()
}

// shut closes the listener if it is the first to, and returns the wrapped listener's Close error.
func (l *IdleListener) shut() (first bool, err error) {
	l.mu.Lock()
	first = !l.closed
	if first {
		l.closed = true
		if l.done != nil {
			close(l.done)
		}
	}
	l.mu.Unlock()
	if first {
		withConns.remove(l)
		err = l.Listener.Close()
	}
	return first, err
}

// Shutdown stops accepting, closes the idle connections and waits for the others to finish the
// request they are in (they close after answering it), or until ctx ends: then it closes them
// and returns ctx's error.
func (l *IdleListener) Shutdown(ctx context.Context) error {
	for {
		if l.CloseIdle() == 0 {
			return nil
		}
		select {
		case <-l.changed:
		case <-ctx.Done():
			l.CloseAll()
			return ctx.Err()
		}
	}
}

// CloseIdle stops accepting and closes the connections that wait for their next request, at
// once: their FIN is sent before it returns, so a keep-alive client learns of it before an answer
// sent after it (an imposter's DELETE). The busy ones close after answering the request they are
// in. It returns how many are busy.
func (l *IdleListener) CloseIdle() (busy int) {
	l.draining.Store(true)
	l.Stop()
	var idle []*idleConn
	l.mu.Lock()
	for c := range l.conns {
		if c.since.Load() != 0 {
			delete(l.conns, c)
			idle = append(idle, c)
		}
	}
	busy = len(l.conns)
	l.mu.Unlock()
	for _, c := range idle {
		// A FIFO connection's socket is closed only when the read waiting on it returns, on
		// another thread and maybe after the caller has answered: shut its sending side now.
		if cw, ok := c.raw.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.raw.Close()
	}
	return busy
}

// CloseAll closes every connection the listener accepted.
func (l *IdleListener) CloseAll() {
	l.mu.Lock()
	all := l.conns
	l.conns = nil
	l.mu.Unlock()
	for c := range all {
		_ = c.raw.Close()
	}
}

// notify wakes Shutdown, if it waits.
func (l *IdleListener) notify() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *IdleListener) sweep() {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		now := l.tick.Add(1)
		var stale, slow, lean []*idleConn
		l.mu.Lock()
		for c := range l.conns {
			if s := c.since.Load(); s != 0 && now-s >= l.idleLimit {
				delete(l.conns, c)
				stale = append(stale, c)
			} else if w := c.writing.Load(); w != 0 && now-w >= l.idleLimit {
				delete(l.conns, c)
				stale = append(stale, c)
			} else if r := c.reading.Load(); r != 0 && l.headerLimit > 0 && now-r >= l.headerLimit {
				delete(l.conns, c)
				slow = append(slow, c)
			} else if s != 0 && now-s >= leanTicks && c.leanSince != s && c.park.Load() == parkBlocked {
				c.leanSince = s
				lean = append(lean, c)
			}
		}
		l.mu.Unlock()
		var freed int
		for _, c := range lean {
			freed += c.releaseIdleBodies()
		}
		if freed > 0 {
			noteFreed(freed)
		}
		for _, c := range stale {
			_ = c.raw.Close()
		}
		for _, c := range slow {
			go c.timeOut()
		}
	}
}

func (l *IdleListener) forget(c *idleConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	connClosed()
	if l.draining.Load() {
		l.notify()
	}
}

// idleConn is an accepted connection with its marks, in ticks of its listener: since is when
// it last became idle (0 while a request is in progress) and reading when its current request
// began to arrive (0 once it is read, or between requests).
type idleConn struct {
	net.Conn          // what the server reads: the TCP connection, or TLS over it
	raw      net.Conn // the TCP connection
	l        *IdleListener
	since    atomic.Int64
	reading  atomic.Int64
	// writing is when the step of a write in progress began (0 outside a write): the sweeper
	// closes a connection whose write makes no progress for the idle timeout (see Write).
	writing atomic.Int64
	// reported is set when the TCP connection tells wrote of its writes' progress; sent
	// counts the bytes a Write sent since it last marked its progress.
	reported bool
	sent     atomic.Int64
	once     sync.Once
	// started is set by the first read that returns data. fasthttp calls a new connection
	// active before reading anything, so until then the connection stays idle.
	started    bool
	marksOnRaw bool // TLS: the reads of the TCP connection mark activity
	// next is set while the next read begins a request (none has begun since the last one
	// was answered); head scans that request's header block (see framing.go).
	next bool
	head headScan
	// bp is the TCP connection when it can poll for a body's next bytes (see
	// FIFOConn.pollBody). bpCredit is what polling earned on this connection: a read whose
	// poll did not miss adds one (up to bodyPollCredit), one that missed takes bodyPollMiss,
	// and reads poll while it is positive; each request begins with at least one. A client
	// sending a body as fast as it is read keeps polling; one whose bytes come later than the
	// poll lasts (slow, or far away) costs one missed poll a request.
	bp       bodyPoller
	bpCredit int8
	// carry holds bytes read past the end of a request (the next ones, pipelined behind it),
	// which the next Read returns before reading again, and carryErr the error of the read
	// that brought them, returned once they are.
	carry    []byte
	carryErr error
	// linger makes Close read what the client is still sending before it closes (see
	// LingerOnClose).
	linger atomic.Bool
	// chunkExtErr is set when a read failed on a chunk's extensions too long (errChunkExt).
	chunkExtErr bool
	// kept is the server's (see Kept).
	kept any
	// ctx is the fasthttp context the connection's requests are served with (set by
	// TrackRequests), whose large body buffers the sweeper lets go of while the connection
	// waits for its next request (see releaseIdleBodies).
	ctx *fasthttp.RequestCtx
	// waiting is set from the answer's end (IdleConnState) until the next request's first byte
	// (or its state change): a read then parks (park) until data comes.
	waiting bool
	// park says whether the connection's goroutine is blocked in a read for its next request,
	// touching nothing of ctx: parkBlocked, which the sweeper turns to parkReleasing while it
	// lets go of ctx's large body buffers, then parkReleased. The read that ends waits for the
	// release to be over.
	park atomic.Int32
	// leanSince is the since of the idle spell the sweeper last released ctx's bodies in (the
	// sweeper's own).
	leanSince int64
	// lines is what the scan found in the header block of the request the handler serves
	// (see Lines), taken from head as the handler begins, zero outside it.
	lines uint8
	// dropping is set while the rest of a request's body is read past without being kept
	// (ListenOptions.UnreadBody), pin being what UnreadBody answered for it; unread is the pin
	// of the request the handler serves (see Unread), taken as lines is.
	dropping    bool
	pin, unread any
}

// lingerBytes and lingerTime bound what a lingering Close reads and how long it waits.
const (
	lingerBytes = 1 << 20
	lingerTime  = 500 * time.Millisecond
)

// LingerOnClose makes the close of connection c (one an IdleListener accepted) graceful for an
// answer given before the request was read in full (431: a header block too large): the
// answer is followed by a FIN, and what the client is still sending is read and dropped (up
// to 1 MiB, for at most half a second) before the socket closes. Closing a socket with unread
// bytes sends a reset instead, and the client may lose the answer with it; node reads a
// request's bytes as they come and closes after them.
func LingerOnClose(c net.Conn) {
	if ic := trackedConn(c); ic != nil {
		ic.linger.Store(true)
	}
}

// drain shuts the sending side of the TCP connection and reads what the client still sends,
// as LingerOnClose says.
func (c *idleConn) drain() {
	cw, ok := c.raw.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	_ = c.raw.SetReadDeadline(time.Now().Add(lingerTime))
	buf := make([]byte, 32<<10)
	for total := 0; total < lingerBytes; {
		n, err := c.raw.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}

// The credit of a connection's body polls (idleConn.bpCredit).
const (
	bodyPollCredit = 16
	bodyPollMiss   = 4
)

func (c *idleConn) Read(b []byte) (int, error) {
	var n int
	var err error
	var drop *[unreadBytes]byte
	if len(c.carry) > 0 {
		// The next request, pipelined behind the last one and read with it.
		n = copy(b, c.carry)
		c.carry = c.carry[:copy(c.carry, c.carry[n:])]
	} else if c.carryErr != nil {
		err, c.carryErr = c.carryErr, nil
		return 0, err
	} else {
		parked := c.waiting && c.ctx != nil
		if parked {
			c.park.Store(parkBlocked)
		}
		poll := c.bp != nil && c.bpCredit > 0 && c.head.inBody && c.head.framing == framedLength
		if poll {
			c.bp.pollBody(true)
		}
		if c.dropping && c.head.active && c.head.inBody {
			// The body nothing reads: into a buffer of the pool, not b.
			drop = unreadBufs.Get().(*[unreadBytes]byte)
			defer unreadBufs.Put(drop)
			n, err = c.Conn.Read(drop[:min(len(b), unreadBytes)])
		} else {
			n, err = c.Conn.Read(b)
		}
		if poll {
			if c.bp.pollBody(false) {
				c.bpCredit -= bodyPollMiss
			} else if c.bpCredit < bodyPollCredit {
				c.bpCredit++
			}
		}
		if parked {
			c.unpark()
		}
		if n > 0 && !c.marksOnRaw {
			c.arrived()
		}
	}
	if n > 0 {
		c.waiting = false
		first := c.next
		if first {
			c.next = false
			c.bpCredit = max(c.bpCredit, 1)
			c.dropping, c.pin = false, nil
			c.head.begin(b[:n])
			if c.head.active {
				n = tidyRequestLineAt(b, n, c.head.method)
			}
		}
		if c.head.active {
			var bad bool
			var end int
			inBody := c.head.inBody
			buf := b
			if drop != nil {
				buf = drop[:]
			}
			if n, end, _, bad = c.head.feed(buf, n); bad {
				if first {
					// fasthttp has nothing of this request yet: it would close the
					// connection without a word.
					_, _ = c.Conn.Write([]byte(badRequest))
					return 0, io.EOF
				}
				return 0, errUnreadable // fasthttp answers 400
			}
			if c.head.extOverflow {
				c.head.extOverflow = false
				if first {
					_, _ = c.Conn.Write([]byte(chunkTooLarge))
					c.linger.Store(true)
					return 0, io.EOF
				}
				c.chunkExtErr = true
				return 0, errChunkExt // the server's error handler answers 413 (ChunkExtTooLarge)
			}
			if !inBody && c.head.inBody {
				c.askUnread()
			} else if c.dropping && !c.head.inBody {
				c.dropping = false // the body ends in this read
			}
			if end < n {
				// The request ends here: what follows waits in carry for the next Read,
				// after fasthttp answered this one, and is scanned as a request of its own.
				c.carry = slices.Insert(c.carry, 0, buf[end:n]...)
				n = end
				c.carryErr, err = err, nil
			}
		}
	}
	return n, err
}

// askUnread asks the listener's UnreadBody, once a header block has ended with a body still to
// come, whether the rest of it may be read past without being kept (see ListenOptions).
func (c *idleConn) askUnread() {
	h := &c.head
	if c.l.unreadBody == nil || h.framing != framedLength || h.length < minUnreadBody ||
		h.hdr&(hdrKnown|hdrEncoding) != hdrKnown {
		return
	}
	if pin := c.l.unreadBody(); pin != nil {
		c.dropping, c.pin = true, pin
		h.hdr |= hdrUnread
	}
}

// Write writes b in steps of writeStep, marking when each began: the sweeper closes a
// connection whose write has made no progress for the idle timeout, a client that does not
// read its answer, as a tcp imposter's IdleConn fails such a write (one that reads a large
// answer slowly keeps it going). Without it, a client that asked for an answer larger than the
// sockets' buffers and never read it held its connection, and the goroutine serving it,
// for as long as it stayed open: neither idle nor receiving a request, nothing timed it out.
//
// A TCP connection that reports its writes' progress (a progressReporter: the FIFO poller's,
// and the admin API's raw one) is written all at once, and every writeStep it sends marks the write anew (see wrote): a
// client reading a 1 MiB answer in 256 KiB writes got it at 0.65x the rate of one write (each
// write pushed its segments and woke the reader apart).
func (c *idleConn) Write(b []byte) (int, error) {
	if c.reported {
		c.sent.Store(0)
		c.writing.Store(c.l.tick.Load())
		n, err := c.Conn.Write(b)
		c.writing.Store(0)
		return n, err
	}
	written := 0
	for {
		step := min(len(b)-written, writeStep)
		c.writing.Store(c.l.tick.Load())
		n, err := c.Conn.Write(b[written : written+step])
		written += n
		if err != nil || written == len(b) {
			c.writing.Store(0)
			return written, err
		}
	}
}

// wrote is told by the TCP connection (a progressReporter) of the n bytes one of its system
// calls sent: during a Write, each writeStep of them marks its progress. It may be called from
// another goroutine than the Write's (a TLS close_notify written by the sweeper's Close).
func (c *idleConn) wrote(n int) {
	if c.writing.Load() != 0 && c.sent.Add(int64(n)) >= writeStep {
		c.sent.Store(0)
		c.writing.Store(c.l.tick.Load())
	}
}

// arrived marks bytes that arrived on an idle connection as the beginning of a request
// (fasthttp reads one byte ahead before it calls the connection active).
func (c *idleConn) arrived() {
	if c.since.Load() != 0 {
		c.started = true
		c.since.Store(0)
		c.reading.Store(c.l.tick.Load())
	}
}

// rawConn is the TCP connection under TLS, whose reads mark activity.
type rawConn struct {
	net.Conn
	ic *idleConn
}

func (c *rawConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.ic.arrived()
	}
	return n, err
}

func (c *idleConn) Close() error {
	c.once.Do(func() { c.l.forget(c) })
	if c.linger.Swap(false) {
		c.drain()
	}
	return c.Conn.Close()
}

// timeOut answers a request that took too long to arrive with 408 and closes the connection,
// as node does when its headersTimeout passes.
func (c *idleConn) timeOut() {
	// The deadline is the TCP connection's, for reads too: over TLS the write first waits for
	// a handshake in progress (a client that stopped in the middle of it), which only its
	// failing read ends.
	_ = c.raw.SetDeadline(time.Now().Add(time.Second))
	_, _ = c.Conn.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
	_ = c.raw.Close()
}

// tlsIdleConn is an idleConn over TLS; fasthttp sees it as a TLS connection.
type tlsIdleConn struct {
	*idleConn
	tc *tls.Conn
}

// Handshake runs the TLS handshake, if it has not run yet.
func (c *tlsIdleConn) Handshake() error { return c.tc.Handshake() }

// ConnectionState returns the TLS connection's state.
func (c *tlsIdleConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// NetConn returns the TCP connection under TLS.
func (c *tlsIdleConn) NetConn() net.Conn { return c.raw }

// ChunkExtTooLarge reports whether the read of a request on connection c (one an IdleListener
// accepted) failed on a chunk whose extensions are longer than node reads: the server answers
// 413 and closes the connection, as node does. It is for the server's error handler, on the
// connection's goroutine.
func ChunkExtTooLarge(c net.Conn) bool {
	ic := trackedConn(c)
	return ic != nil && ic.chunkExtErr
}

// Kept is where the server keeps a value of its own with connection c (one an IdleListener
// accepted, or Tracked) from one request to the next: the http server's request view, reset in
// place for the next request instead of taken from a pool shared by every connection. It is nil
// for another connection. The value belongs to the goroutine serving c: it is read and written
// by c's requests, one at a time, and by that goroutine once it has served the last of them.
func Kept(c net.Conn) *any {
	if ic := trackedConn(c); ic != nil {
		return &ic.kept
	}
	return nil
}

// Lines returns what the scan of the header block, as it arrived, found in the lines of the
// request the handler of connection c (one an IdleListener accepted, with TrackRequests) serves;
// nothing is Known for another connection, or a request the scan did not follow whole (one
// pipelined behind a request whose body the scan could not count is read without a scan).
func Lines(c net.Conn) HeaderLines {
	if ic := trackedConn(c); ic != nil {
		return linesOf(ic.lines)
	}
	return HeaderLines{}
}

// Unread returns, for the request the handler of connection c (one an IdleListener accepted,
// with TrackRequests) serves, what the listener's UnreadBody answered when the connection read
// its body past without keeping it; nil when the body was read as usual (or c is another
// connection).
func Unread(c net.Conn) any {
	if ic := trackedConn(c); ic != nil {
		return ic.unread
	}
	return nil
}

// Tracked wraps c as a connection an IdleListener accepted, for a handler run outside a server
// (a benchmark of the handler, as a keep-alive client's requests reach it): Kept and Context
// work with it. No listener counts, times or closes it; reading it is reading c.
func Tracked(c net.Conn) net.Conn {
	return &idleConn{Conn: c, raw: c, l: &IdleListener{}}
}

// trackedConn returns the idleConn of a connection an IdleListener accepted, or nil.
func trackedConn(c net.Conn) *idleConn {
	switch t := c.(type) {
	case *idleConn:
		return t
	case *tlsIdleConn:
		return t.idleConn
	}
	return nil
}

// Context is the context of connection c (one an IdleListener accepted, or under it): done once
// the peer has closed or reset it, where the FIFO poller serves it; with Go's runtime poller it is
// never done.
func Context(c net.Conn) context.Context {
	if ic := trackedConn(c); ic != nil {
		c = ic.raw
	}
	if cc, ok := c.(interface{ Context() context.Context }); ok {
		return cc.Context()
	}
	return context.Background()
}

// IdleBodyBytes is the most memory a connection idle for a second or more keeps for a body (its
// request's, its response's). fasthttp keeps a server connection's body buffers for its next
// request, each as large as the largest body the connection read or wrote: 200 idle keep-alive
// connections that had each sent 1 MiB held 206 MiB of heap (1 MiB each, twice that when the
// answer echoed the body; up to --max-body each) for as long as they stayed open.
const IdleBodyBytes = 64 << 10

// leanTicks is how many sweeper ticks a connection has waited for its next request, at least,
// when its large body buffers are let go of: from one to two seconds. A busy connection keeps
// its buffers from one request to the next (a client uploading 1 MiB bodies one after the
// other: letting go of the buffer after each answer made each upload allocate and fault in
// 1 MiB, three times slower).
const leanTicks = 2

// Park states of a connection (idleConn.park).
const (
	parkNone = iota
	parkBlocked
	parkReleasing
	parkReleased
)

// releaseIdleBodies lets go of the body buffers (request and response) past IdleBodyBytes of an
// idle connection's fasthttp context, if its goroutine is still parked in the read of its next
// request: the next large body has a buffer made for it (one allocation), a small one gets a
// small one from fasthttp's pool. A buffer something else holds (a body the journal keeps:
// request.KeepBody) is not the context's any more.
// It returns the bytes let go of.
func (c *idleConn) releaseIdleBodies() (freed int) {
	if !c.park.CompareAndSwap(parkBlocked, parkReleasing) {
		return 0 // the request has begun
	}
	req, resp := &c.ctx.Request, &c.ctx.Response
	// Body is the buffer, emptied once the answer was written (nothing streams then).
	before := cap(req.Body()) + cap(resp.Body())
	req.ReleaseBody(IdleBodyBytes)
	resp.ReleaseBody(IdleBodyBytes)
	freed = before - cap(req.Body()) - cap(resp.Body())
	c.park.Store(parkReleased)
	return freed
}

// collectAfter is how many bytes of body buffers the sweepers let go of before they have the
// garbage collector run and give the free memory back to the system (debug.FreeOSMemory): a
// process that has gone quiet (its clients idle) allocates nothing that would start a
// collection, and the runtime's own, every two minutes, returns free memory slowly: 200 MiB let
// go of stayed resident for minutes.
const collectAfter = 64 << 20

var (
	freedBytes atomic.Int64 // let go of since the last collection the sweepers started
	collecting atomic.Bool
)

// noteFreed counts n bytes of body buffers let go of, and starts a collection once
// collectAfter are, unless one runs already.
func noteFreed(n int) {
	if freedBytes.Add(int64(n)) < collectAfter || !collecting.CompareAndSwap(false, true) {
		return
	}
	freedBytes.Store(0)
	go func() {
		defer collecting.Store(false)
		debug.FreeOSMemory()
	}()
}

// connBytes is about what the server keeps of a connection it served, in pools once it is
// closed: fasthttp's 16 KiB read buffer and 4 KiB write buffer, its request context and this
// package's connection.
const connBytes = 24 << 10

// openConns counts the connections of every IdleListener; peakConns is the most there were
// since the last collection a burst's end started (see connClosed).
var openConns, peakConns atomic.Int64

// connOpened counts a connection accepted.
func connOpened() {
	n := openConns.Add(1)
	for p := peakConns.Load(); n > p && !peakConns.CompareAndSwap(p, n); p = peakConns.Load() {
	}
}

// connClosed counts a connection closed. When a burst of connections has ended (at most half
// the most there were are open, and collectAfter's worth fewer), the memory they kept goes back
// to the system (ReleaseMemorySoon): their buffers wait in fasthttp's pools (sync.Pool), which a
// collection only sets aside and the next one frees, and an idle process collects every two
// minutes only: 10,000 admin connections, closed, left 250 MB resident for minutes.
func connClosed() {
	n := openConns.Add(-1)
	p := peakConns.Load()
	if p-n < collectAfter/connBytes || n > p/2 || !peakConns.CompareAndSwap(p, n) {
		return
	}
	releaseSoon()
}

// releaseSoon is ReleaseMemorySoon (a variable for the tests).
var releaseSoon = ReleaseMemorySoon

// unpark ends the park of a read for the next request, once a release the sweeper began in the
// meantime is over.
func (c *idleConn) unpark() {
	if c.park.CompareAndSwap(parkBlocked, parkNone) {
		return
	}
	for c.park.Load() != parkReleased {
		runtime.Gosched() // a few field writes
	}
	c.park.Store(parkNone)
}

// IdleConnState is the fasthttp ConnState hook that marks the connections of an IdleListener
// active or idle; other connections are left alone. It runs on the connection's goroutine, as
// its reads do.
func IdleConnState(c net.Conn, st fasthttp.ConnState) {
	ic := trackedConn(c)
	if ic == nil {
		return
	}
	switch st {
	case fasthttp.StateActive:
		ic.waiting = false
		// A request pipelined behind the last one was read with it: it begins now.
		if ic.started && ic.since.Load() != 0 {
			ic.since.Store(0)
			ic.reading.Store(ic.l.tick.Load())
		}
	case fasthttp.StateIdle:
		ic.reading.Store(0)
		ic.since.Store(ic.l.tick.Load())
		ic.next = true
		ic.waiting = true
		if ic.l.draining.Load() {
			// The listener is shutting down: a connection that has answered is closed here,
			// before fasthttp reads what the client sends next. Waiting for Shutdown to see it
			// idle would let a request sent after the imposter was deleted reach it.
			ic.l.mu.Lock()
			delete(ic.l.conns, ic)
			ic.l.mu.Unlock()
			_ = ic.raw.Close()
			ic.l.notify()
		}
	}
}

// BodyRead tells the IdleListener that the request of ctx, on a server that streams request
// bodies (see TrackRequests), has arrived in full: the header timeout no longer applies to it.
func BodyRead(ctx *fasthttp.RequestCtx) {
	if ic := trackedConn(ctx.Conn()); ic != nil {
		ic.reading.Store(0)
	}
}

// TrackRequests wraps the handler of a server whose connections an IdleListener accepted: the
// request has arrived in full when the handler runs (on a server that streams request bodies,
// once the handler calls BodyRead), and while the listener shuts down the
// connection closes after the answer. A request node would not read (an ambiguous length:
// Content-Length and Transfer-Encoding; a method node does not know; see nodeReads) is refused
// with 400 and its connection closed, as node refuses it.
func TrackRequests(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ic := trackedConn(ctx.Conn())
		if ic != nil {
			if ic.ctx != ctx { // the same for each of the connection's requests
				ic.ctx = ctx
			}
			ic.since.Store(0) // a pipelined request may begin without a read or a state change
			if !ctx.Request.IsBodyStream() {
				ic.reading.Store(0)
			} else if ic.reading.Load() == 0 {
				// A server that streams request bodies: the handler reads the body, whose
				// time counts as the request's until it calls BodyRead.
				ic.reading.Store(ic.l.tick.Load())
			}
			// The scan ends with the header block, but for a chunked body the handler
			// streams: it follows the chunks still to come (a chunk's extensions are bounded).
			if !ctx.Request.IsBodyStream() || !ic.head.inBody || ic.head.framing != framedChunked {
				ic.head.active = false
			}
			ic.head.restore(&ctx.Request.Header)
			// What the scan found is this request's (Lines), once: a request read without a
			// scan of its own (behind one whose body the scan could not count) finds nothing.
			ic.lines, ic.head.hdr = ic.head.hdr, 0
			ic.unread, ic.pin = ic.pin, nil
		}
		var hdr uint8
		if ic != nil {
			hdr = ic.lines
		}
		if refuseUnreadable(ctx, hdr) {
			return
		}
		h(ctx)
		if ic != nil {
			ic.lines, ic.unread = 0, nil
			if ic.l.draining.Load() {
				ctx.SetConnectionClose()
			}
		}
	}
}
