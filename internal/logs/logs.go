// Package logs is mockd's log handler: Mountebank's console lines ("info: [http:4545 name]
// message") or JSON lines, an optional JSON log file, and the latest entries, which GET /logs
// serves. Imposters log every request at info, as Mountebank does, so a line costs no system
// call: lines are written by a background writer that takes them in batches.
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
)

// Options configure a Core.
type Options struct {
	// Level is the lowest level logged.
	Level slog.Level
	// Console receives every line; nil = none.
	Console io.Writer
	// JSON writes JSON lines to Console (as to File) instead of Mountebank's "level: message".
	JSON bool
	// File receives every line as JSON; nil = none.
	File io.Writer
	// Keep is how many of the latest entries Entries returns; 0 = 1,000.
	Keep int
}

// Core is the state every handler of one server shares. It is safe for concurrent use.
type Core struct {
	opts Options

	mu      sync.Mutex
	ring    []entry
	next    int
	full    bool
	console []byte // lines not yet written
	file    []byte
	// spare buffers the next lines go to while the writer writes a batch (wmu held).
	spareConsole, spareFile []byte
	scratch                 []byte // a message being escaped for JSON (mu held)
	stamp                   stamp  // the last JSON line's timestamp (mu held)
	closed                  bool
	drained                 *sync.Cond // signalled when the writer has taken the pending lines
	wmu                     sync.Mutex // held while writing, so batches go out in order
	wake                    chan struct{}
	stop                    chan struct{}
	done                    chan struct{}
}

// entry is one log line: "[scope] text", text being the message and its attributes. text is
// the ring slot's own buffer, written again when the slot is (no string a line kept for the
// garbage collector to find, and none made for a line given in parts).
type entry struct {
	level slog.Level
	scope string
	text  []byte
	at    time.Time
}

func (e *entry) appendText(dst []byte) []byte {
	dst = append(dst, '[')
	dst = append(dst, e.scope...)
	dst = append(dst, "] "...)
	return append(dst, e.text...)
}

// maxKeptText is the largest buffer a ring slot keeps for its next line: a slot that held one
// long line (a debug dump of a large body) does not hold its memory until it is written again
// with another long one.
const maxKeptText = 4 << 10

// set makes the slot hold a line: level, scope, at and the text of parts.
func (e *entry) set(level slog.Level, scope string, at time.Time, parts []string) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if cap(e.text) > maxKeptText && n <= maxKeptText {
		e.text = nil
	}
	e.text = e.text[:0]
	for _, p := range parts {
		e.text = append(e.text, p...)
	}
	e.level, e.scope, e.at = level, scope, at
}

// maxPending bounds the bytes of lines waiting for the writer: past it, a handler waits as
// a write to the console would.
const maxPending = 1 << 20

// New returns a core and starts its writer; Close stops it.
func New(opts Options) *Core {
	if opts.Keep <= 0 {
		opts.Keep = 1000
	}
	c := &Core{opts: opts, ring: make([]entry, opts.Keep), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.drained = sync.NewCond(&c.mu)
	go c.writer()
	return c
}

// Handler returns a handler whose lines show scope ("mb:2525", "http:4545 name"). An
// "imposter" attribute added with WithAttrs replaces the scope.
func (c *Core) Handler(scope string) slog.Handler { return &handler{core: c, scope: scope} }

// Scoped returns l with its lines under scope, as l.With("imposter", scope) does. With a
// Core's handler, the handler and the logger are one allocation (With made three: its
// arguments' attributes, the handler, the logger), as a client suite starts an imposter around
// each test.
func Scoped(l *slog.Logger, scope string) *slog.Logger {
	h, ok := l.Handler().(*handler)
	if !ok {
		return l.With("imposter", scope)
	}
	p := &struct {
		h handler
		l slog.Logger
	}{h: *h}
	p.h.scope = scope
	p.l = *slog.New(&p.h)
	return &p.l
}

// Entries returns the latest entries, oldest first, as GET /logs shows them:
// {"level", "message", "timestamp"}.
func (c *Core) Entries() []any {
	type kept struct {
		level slog.Level
		text  string
		at    time.Time
	}
	c.mu.Lock()
	list := make([]kept, 0, len(c.ring))
	keep := func(slots []entry) {
		for i := range slots {
			list = append(list, kept{slots[i].level, string(slots[i].appendText(nil)), slots[i].at})
		}
	}
	if c.full {
		keep(c.ring[c.next:])
	}
	keep(c.ring[:c.next])
	c.mu.Unlock()
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = config.NewObject("level", LevelName(e.level), "message", e.text, "timestamp", timestamp(e.at))
	}
	return out
}

// Close writes the lines still pending and stops the writer; lines logged afterwards are
// written at once.
func (c *Core) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.drained.Broadcast()
	c.mu.Unlock()
	close(c.stop)
	<-c.done
}

// batchDelay is how long the writer waits, once lines are pending, for more to write with them:
// under load one write(2) then carries hundreds of lines instead of one each.
const batchDelay = 20 * time.Millisecond

// writer writes the pending lines in batches, batchDelay after the first of each.
func (c *Core) writer() {
	defer close(c.done)
	timer := time.NewTimer(batchDelay)
	timer.Stop()
	for {
		select {
		case <-c.wake:
		case <-c.stop:
			c.flush()
			return
		}
		timer.Reset(batchDelay)
		select {
		case <-timer.C:
		case <-c.stop:
			c.flush()
			return
		}
		c.flush()
	}
}

// flush writes the pending lines.
func (c *Core) flush() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	console, file := c.console, c.file
	c.console, c.file = c.spareConsole[:0], c.spareFile[:0]
	c.drained.Broadcast()
	c.mu.Unlock()
	if len(console) > 0 {
		_, _ = c.opts.Console.Write(console)
	}
	if len(file) > 0 {
		_, _ = c.opts.File.Write(file)
	}
	c.spareConsole, c.spareFile = console, file
}

// add logs a line of parts: "[scope] " and the parts' text.
func (c *Core) add(level slog.Level, scope string, at time.Time, parts ...string) {
	c.mu.Lock()
	e := &c.ring[c.next]
	e.set(level, scope, at, parts)
	c.next = (c.next + 1) % len(c.ring)
	if c.next == 0 {
		c.full = true
	}
	for len(c.console)+len(c.file) > maxPending && !c.closed {
		c.drained.Wait()
	}
	first := len(c.console)+len(c.file) == 0
	switch {
	case c.opts.Console == nil:
	case c.opts.JSON:
		c.console = appendJSONLine(c.console, e, &c.scratch, &c.stamp)
	default:
		c.console = append(append(c.console, LevelName(level)...), ": "...)
		c.console = append(e.appendText(c.console), '\n')
	}
	if c.opts.File != nil {
		c.file = appendJSONLine(c.file, e, &c.scratch, &c.stamp)
	}
	closed := c.closed
	c.mu.Unlock()
	switch {
	case closed:
		c.flush() // no writer any more
	case first:
		select {
		case c.wake <- struct{}{}:
		default: // the writer is awake already
		}
	}
}

// appendJSONLine appends e as the log file has it: {"level","message","timestamp"} and a newline.
// scratch holds the message while it is escaped; last is the timestamp written last.
func appendJSONLine(dst []byte, e *entry, scratch *[]byte, last *stamp) []byte {
	dst = append(dst, `{"level":`...)
	dst = config.AppendString(dst, LevelName(e.level))
	dst = append(dst, `,"message":`...)
	*scratch = e.appendText((*scratch)[:0])
	dst = config.AppendString(dst, unsafe.String(unsafe.SliceData(*scratch), len(*scratch)))
	dst = append(dst, `,"timestamp":"`...)
	dst = last.append(dst, e.at)
	return append(dst, "\"}\n"...)
}

// stamp is a timestamp as JSON lines show it (timeLayout) and the millisecond it shows: lines
// logged in the same millisecond (under load, most) take it as it is instead of formatting the
// time again, which costs more than the rest of the line.
type stamp struct {
	milli int64
	n     int
	text  [len(timeLayout) + 8]byte
}

func (s *stamp) append(dst []byte, t time.Time) []byte {
	if m := t.UnixMilli(); m != s.milli || s.n == 0 {
		s.milli, s.n = m, len(t.UTC().AppendFormat(s.text[:0], timeLayout))
	}
	return append(dst, s.text[:s.n]...)
}

const timeLayout = "2006-01-02T15:04:05.000Z"

func timestamp(t time.Time) string { return t.UTC().Format(timeLayout) }

type handler struct {
	core  *Core
	scope string
	attrs []slog.Attr
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.core.opts.Level }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	var attrs string
	if len(h.attrs) > 0 || r.NumAttrs() > 0 {
		var b strings.Builder
		write := func(a slog.Attr) bool {
			if a.Key != "imposter" {
				fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Any())
			}
			return true
		}
		for _, a := range h.attrs {
			write(a)
		}
		r.Attrs(write)
		attrs = b.String()
	}
	at := r.Time
	if at.IsZero() {
		at = time.Now()
	}
	h.core.add(r.Level, h.scope, at, r.Message, attrs)
	return nil
}

// Parts logs at level, through l, the message the parts make together, without making it
// first: a request's line ("client => GET /path") costs no allocation. With a logger whose
// handler is not a Core's, or one with attributes, it is l.Log of the joined message.
func Parts(l *slog.Logger, level slog.Level, parts ...string) {
	h, ok := l.Handler().(*handler)
	if !ok || len(h.attrs) > 0 {
		if l.Enabled(context.Background(), level) {
			l.Log(context.Background(), level, strings.Join(parts, ""))
		}
		return
	}
	if level >= h.core.opts.Level {
		h.core.add(level, h.scope, time.Now(), parts...)
	}
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	for _, a := range attrs {
		if a.Key == "imposter" {
			n.scope = a.Value.String()
			continue
		}
		n.attrs = append(append([]slog.Attr(nil), n.attrs...), a)
	}
	return &n
}

func (h *handler) WithGroup(string) slog.Handler { return h }

// LevelName is Mountebank's name of a level: debug, info, warn or error.
func LevelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warn"
	case l >= slog.LevelInfo:
		return "info"
	default:
		return "debug"
	}
}

// ParseLevel turns Mountebank's --loglevel names into a slog level.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (expected debug, info, warn or error)", s)
}

// ParseFormat checks a --log-format value: "text" (Mountebank's lines) or "json"; it reports
// whether it is json.
func ParseFormat(s string) (json bool, err error) {
	switch strings.ToLower(s) {
	case "", "text":
		return false, nil
	case "json":
		return true, nil
	}
	return false, fmt.Errorf("unknown log format %q (expected text or json)", s)
}
