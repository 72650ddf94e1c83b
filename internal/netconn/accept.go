package netconn

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"
)

// RetryListener keeps accepting when accepting fails for another reason than being closed
// (such as running out of file descriptors), as net/http's server does: it pauses, longer
// after each failure up to a second, and logs the first failure of a burst. fasthttp's server
// stops for good on such an error. Accept is for one goroutine at a time.
type RetryListener struct {
	net.Listener
	backoff acceptBackoff
	// done is closed by Close, ending a pause; made (under mu) by the first pause or by
	// Close, whichever comes first: an imposter's listener, whose accepts do not fail, makes
	// none (a client suite creates and deletes one per test).
	mu      sync.Mutex
	done    chan struct{}
	closed  bool
	reserve *fdReserve // see KeepReserve
	// gated: after a failure, with a client waiting, an accept holds fdGate (a FIFO
	// listener's accepts hold it themselves)
	gated bool
}

// KeepReserve makes l keep a file descriptor open for when the process runs out of them: when
// a client waits and no idle connection can be closed for it (see ReclaimIdle), the reserve is
// closed and the client accepted in its place, one at a time; it is taken back when that
// connection closes; other accepts wait meanwhile (see fdGate). The admin API's listener
// keeps one, so that it answers while the imposters' clients hold every other descriptor. It
// returns l.
func (l *RetryListener) KeepReserve() *RetryListener {
	l.reserve = &fdReserve{}
	l.reserve.hold()
	return l
}

// NewRetryListener wraps ln; log receives the failures (nil = none).
func NewRetryListener(ln net.Listener, log *slog.Logger) *RetryListener {
	_, self := ln.(gatedListener)
	return &RetryListener{Listener: ln, backoff: acceptBackoff{log: log}, gated: !self && canTellPending}
}

// Accept returns the next connection, retrying failed accepts until the listener is closed.
func (l *RetryListener) Accept() (net.Conn, error) {
	for {
		c, err := l.accept()
		if err == nil {
			l.backoff.accepted()
			if l.reserve != nil {
				c = l.reserve.stand(c)
			}
			return c, nil
		}
		var useReserve func() bool
		if l.reserve != nil {
			useReserve = func() bool {
				c = l.reserve.accept(l.Listener)
				return c != nil
			}
		}
		if !l.backoff.retry(err, l.closedChan(), l.Listener, useReserve) {
			return nil, err
		}
		if c != nil {
			l.backoff.accepted()
			return c, nil
		}
	}
}

// accept accepts the next connection; after a failure (out of descriptors, it may take one
// freed for another listener's reserve) with a client waiting, holding fdGate.
func (l *RetryListener) accept() (net.Conn, error) {
	if l.gated && l.backoff.failures > 0 && connPending(l.Listener) {
		gateShared()
		defer gateDone()
		return acceptWaiting(l.Listener, true)
	}
	return l.Listener.Accept()
}

// closedChan returns the channel Close closes (closed already after Close).
func (l *RetryListener) closedChan() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = make(chan struct{})
		if l.closed {
			close(l.done)
		}
	}
	return l.done
}

// Close closes the listener, ending a pause in progress.
func (l *RetryListener) Close() error {
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	if first && l.done != nil {
		close(l.done)
	}
	l.mu.Unlock()
	if first && l.reserve != nil {
		l.reserve.shut()
	}
	return l.Listener.Close()
}

// Bounds of the pause between failed accepts.
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

// acceptBackoff keeps a listener accepting through failures such as running out of file
// descriptors: each failure pauses longer (up to a second) and the first of a burst is logged,
// as net/http's server does; the next success logs that accepting resumed. It belongs to the
// one goroutine that accepts.
type acceptBackoff struct {
	log       *slog.Logger
	pause     time.Duration
	failures  int
	reclaimed int // idle connections closed during this burst of failures (see ReclaimIdle)
}

// Out of file descriptors, with no connection waiting, the pause is at most fdPauseMax: a
// client that comes then waits no longer for the idle connections to be closed for it.
const fdPauseMax = 50 * time.Millisecond

// retry reports whether the accept on ln that failed with err should be tried again, after
// pausing; a closed listener is final, and so is a pause cut short by closing done. Out of
// file descriptors with a client waiting and no idle connection to close, useReserve (when
// given) accepts it on the listener's reserve: true if it did (retry then returns at once).
func (b *acceptBackoff) retry(err error, done <-chan struct{}, ln net.Listener, useReserve func() bool) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	if b.failures == 0 {
		b.pause = acceptPauseMin
		if b.log != nil {
			b.log.Warn("cannot accept connections; retrying with back-off until it works again", "err", err.Error())
		}
	} else {
		b.pause = min(2*b.pause, acceptPauseMax)
	}
	b.failures++
	pause := b.pause
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		// Out of file descriptors (accept4 says so whether or not a connection waits). When
		// one waits, closing the connections idle longest gives some back, to this listener
		// or another (the admin API's among them); the short pause lets those connections'
		// readers let go of their sockets. Otherwise look again soon.
		pause = min(pause, fdPauseMax)
		if connPending(ln) {
			if n := ReclaimIdle(reclaimBatch); n > 0 {
				if b.log != nil && b.reclaimed == 0 {
					b.log.Warn("out of file descriptors: closing the connections idle longest to accept new ones", "closed", n)
				}
				b.reclaimed += n
				pause = acceptPauseMin
			} else if useReserve != nil && useReserve() {
				if b.log != nil {
					b.log.Warn("out of file descriptors and no idle connection to close: accepting one connection on the descriptor kept in reserve")
				}
				return true
			}
		}
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// accepted ends a burst of failures, if any.
func (b *acceptBackoff) accepted() {
	if b.failures > 0 {
		if b.log != nil {
			b.log.Info("accepting connections again", "failed accepts", b.failures, "idle connections closed", b.reclaimed)
		}
		b.failures, b.reclaimed = 0, 0
	}
}
