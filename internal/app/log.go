package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// logHandler writes Mountebank-style lines ("info: [http:4545 name] message") to the console,
// JSON lines to an optional log file, and keeps the latest entries for GET /logs.
type logHandler struct {
	core  *logCore
	scope string
	attrs []slog.Attr
}

type logCore struct {
	mu      sync.Mutex
	level   slog.Level
	console io.Writer // nil = quiet
	file    io.Writer // nil = none
	ring    []any
	next    int
	full    bool
}

const logRingSize = 1000

func newLogCore(level slog.Level, console, file io.Writer) *logCore {
	return &logCore{level: level, console: console, file: file, ring: make([]any, logRingSize)}
}

func (c *logCore) entries() []any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.full {
		return append([]any(nil), c.ring[:c.next]...)
	}
	out := make([]any, 0, len(c.ring))
	out = append(out, c.ring[c.next:]...)
	return append(out, c.ring[:c.next]...)
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.core.level }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	level := levelName(r.Level)
	var msg strings.Builder
	msg.WriteString("[")
	msg.WriteString(h.scope)
	msg.WriteString("] ")
	msg.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Key == "imposter" {
			return true
		}
		fmt.Fprintf(&msg, " %s=%v", a.Key, a.Value.Any())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	text := msg.String()
	ts := r.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	entry := config.NewObject("level", level, "message", text, "timestamp", ts.UTC().Format("2006-01-02T15:04:05.000Z"))

	c := h.core
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ring[c.next] = entry
	c.next = (c.next + 1) % len(c.ring)
	if c.next == 0 {
		c.full = true
	}
	if c.console != nil {
		fmt.Fprintf(c.console, "%s: %s\n", level, text)
	}
	if c.file != nil {
		_, _ = c.file.Write(append(config.MarshalJSON(entry, 0), '\n'))
	}
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	for _, a := range attrs {
		if a.Key == "imposter" {
			n.scope = a.Value.String()
			continue
		}
		n.attrs = append(append([]slog.Attr(nil), h.attrs...), a)
	}
	return &n
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

func levelName(l slog.Level) string {
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
