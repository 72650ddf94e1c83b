package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the writer and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLinesAndEntries(t *testing.T) {
	var console, file syncBuffer
	c := New(Options{Level: slog.LevelInfo, Console: &console, File: &file, Keep: 2})
	log := slog.New(c.Handler("mb:2525"))
	log.Debug("hidden")
	log.Info("first")
	log.With("imposter", "http:4545 users").Warn("second", "n", 1)
	log.Error("third")
	c.Close()

	wantConsole := "info: [mb:2525] first\nwarn: [http:4545 users] second n=1\nerror: [mb:2525] third\n"
	if got := console.String(); got != wantConsole {
		t.Errorf("console:\n%s\nwant:\n%s", got, wantConsole)
	}
	lines := strings.Split(strings.TrimSuffix(file.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("file has %d lines, want 3: %q", len(lines), file.String())
	}
	var first struct{ Level, Message, Timestamp string }
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Level != "info" || first.Message != "[mb:2525] first" || len(first.Timestamp) != len("2006-01-02T15:04:05.000Z") {
		t.Errorf("file line = %+v", first)
	}
	entries := c.Entries()
	if len(entries) != 2 {
		t.Fatalf("kept %d entries, want the latest 2", len(entries))
	}
	if got, _ := entries[1].(interface{ Get(string) (any, bool) }).Get("message"); got != "[mb:2525] third" {
		t.Errorf("last entry = %v", got)
	}
	// After Close lines are written at once.
	log.Info("late")
	if !strings.HasSuffix(console.String(), "info: [mb:2525] late\n") {
		t.Errorf("a line after Close was not written: %q", console.String())
	}
}

func TestJSONConsole(t *testing.T) {
	var console syncBuffer
	c := New(Options{Level: slog.LevelDebug, Console: &console, JSON: true})
	slog.New(c.Handler("http:4545")).Info(`say "hi"`)
	c.Close()
	var line map[string]string
	if err := json.Unmarshal([]byte(console.String()), &line); err != nil {
		t.Fatalf("%q: %v", console.String(), err)
	}
	if line["level"] != "info" || line["message"] != `[http:4545] say "hi"` {
		t.Errorf("line = %v", line)
	}
}

// TestWriterBatches checks lines reach the console without Close, soon after they are logged.
func TestWriterBatches(t *testing.T) {
	var console syncBuffer
	c := New(Options{Level: slog.LevelInfo, Console: &console})
	defer c.Close()
	h := c.Handler("mb:1")
	for i := 0; i < 100; i++ {
		_ = h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "x", 0))
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(console.String(), "\n") < 100 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := strings.Count(console.String(), "\n"); n != 100 {
		t.Fatalf("%d lines written, want 100", n)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "": slog.LevelInfo, "WARN": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("loud"); err == nil {
		t.Error("ParseLevel(loud) should fail")
	}
	if j, err := ParseFormat("json"); err != nil || !j {
		t.Errorf("ParseFormat(json) = %v, %v", j, err)
	}
	if j, err := ParseFormat("text"); err != nil || j {
		t.Errorf("ParseFormat(text) = %v, %v", j, err)
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) should fail")
	}
}

// TestScoped checks that Scoped writes what With("imposter", scope) writes (the scope, the
// attributes added before kept), in one allocation with a Core's handler, and falls back to
// With for another handler.
func TestScoped(t *testing.T) {
	var console syncBuffer
	c := New(Options{Level: slog.LevelInfo, Console: &console})
	base := slog.New(c.Handler("mb:2525")).With("n", 1)
	Scoped(base, "http:4545 users").Warn("scoped", "m", 2)
	base.With("imposter", "http:4545 users").Warn("with", "m", 2)
	base.Info("base")
	c.Close()
	want := "warn: [http:4545 users] scoped n=1 m=2\nwarn: [http:4545 users] with n=1 m=2\ninfo: [mb:2525] base n=1\n"
	if got := console.String(); got != want {
		t.Errorf("console:\n%s\nwant:\n%s", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { Scoped(base, "http:4545") }); n != 1 {
		t.Errorf("Scoped allocates %v times, want 1", n)
	}
	var lines []string
	other := slog.New(lineHandler{&lines})
	Scoped(other, "tcp:5555").Info("x")
	if len(lines) != 1 || lines[0] != "imposter=tcp:5555 x" {
		t.Errorf("another handler: %q, want With's scope", lines)
	}
}

// lineHandler notes each line with its attributes first.
type lineHandler struct{ lines *[]string }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	*h.lines = append(*h.lines, r.Message)
	return nil
}
func (h lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return attrHandler{h, attrs}
}
func (h lineHandler) WithGroup(string) slog.Handler { return h }

type attrHandler struct {
	lineHandler
	attrs []slog.Attr
}

func (h attrHandler) Handle(_ context.Context, r slog.Record) error {
	s := ""
	for _, a := range h.attrs {
		s += a.String() + " "
	}
	*h.lines = append(*h.lines, s+r.Message)
	return nil
}
