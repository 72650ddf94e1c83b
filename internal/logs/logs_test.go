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

// TestPartsAsMessages checks that a line given in parts is the line of the message they make,
// on the console (text and JSON), in the log file and in Entries; that levels below the core's
// are dropped; and that a logger with attributes, or another handler, logs the joined message.
func TestPartsAsMessages(t *testing.T) {
	for _, jsonLines := range []bool{false, true} {
		var viaParts, viaLog, fileParts, fileLog syncBuffer
		p := New(Options{Level: slog.LevelInfo, Console: &viaParts, File: &fileParts, JSON: jsonLines})
		l := New(Options{Level: slog.LevelInfo, Console: &viaLog, File: &fileLog, JSON: jsonLines})
		pl, ll := Scoped(slog.New(p.Handler("mb:2525")), "http:4545"), Scoped(slog.New(l.Handler("mb:2525")), "http:4545")
		at := time.Date(2026, 11, 28, 20, 1, 2, 345678901, time.UTC)
		for _, parts := range [][]string{
			{"::ffff:127.0.0.1:5000", " => ", "GET", " ", "/orders?id=7"},
			{`a "quoted" \ line`, "\x01\u00e9\n", ""},
			{},
			{strings.Repeat("x", 3*maxKeptText)},
			{"short again"},
		} {
			Parts(pl, slog.LevelInfo, parts...)
			Parts(pl, slog.LevelDebug, "hidden")
			_ = ll.Handler().Handle(context.Background(), slog.NewRecord(at, slog.LevelInfo, strings.Join(parts, ""), 0))
		}
		p.Close()
		l.Close()
		if got, want := stripStamps(viaParts.String(), jsonLines), stripStamps(viaLog.String(), jsonLines); got != want {
			t.Errorf("json %v: console\n%q\nwant\n%q", jsonLines, got, want)
		}
		if got, want := stripStamps(fileParts.String(), true), stripStamps(fileLog.String(), true); got != want {
			t.Errorf("json %v: file\n%q\nwant\n%q", jsonLines, got, want)
		}
		pe, le := p.Entries(), l.Entries()
		if len(pe) != 5 || len(le) != 5 {
			t.Fatalf("entries: %d and %d, want 5", len(pe), len(le))
		}
		for i := range pe {
			got, _ := pe[i].(interface{ Get(string) (any, bool) }).Get("message")
			want, _ := le[i].(interface{ Get(string) (any, bool) }).Get("message")
			if got != want {
				t.Errorf("entry %d: %q, want %q", i, got, want)
			}
		}
	}
	var lines []string
	Parts(slog.New(lineHandler{&lines}), slog.LevelInfo, "a", " => ", "b")
	var console syncBuffer
	c := New(Options{Level: slog.LevelInfo, Console: &console})
	Parts(slog.New(c.Handler("mb:1")).With("n", 1), slog.LevelInfo, "a", " => ", "b")
	c.Close()
	if len(lines) != 1 || lines[0] != "a => b" || console.String() != "info: [mb:1] a => b n=1\n" {
		t.Errorf("another handler: %q; with attributes: %q", lines, console.String())
	}
}

// stripStamps drops the timestamps of JSON lines (the parts' lines are stamped when logged).
func stripStamps(s string, jsonLines bool) string {
	if !jsonLines {
		return s
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, `,"timestamp":"`); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestRingSlotsReused checks the entries GET /logs shows when the ring has wrapped around several
// times over lines of other lengths (each slot's buffer is written again): the latest, in order.
func TestRingSlotsReused(t *testing.T) {
	c := New(Options{Level: slog.LevelInfo, Keep: 3})
	log := slog.New(c.Handler("mb:2525"))
	var want []string
	for i := range 20 {
		msg := strings.Repeat(string(rune('a'+i)), []int{1, 40, 5, 3 * maxKeptText, 0, 7, 2}[i%7])
		Parts(log, slog.LevelInfo, msg, "!")
		want = append(want, "[mb:2525] "+msg+"!")
	}
	c.Close()
	entries := c.Entries()
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	for i, e := range entries {
		if got, _ := e.(interface{ Get(string) (any, bool) }).Get("message"); got != want[17+i] {
			t.Errorf("entry %d: %.40q, want %.40q", i, got, want[17+i])
		}
	}
	for i, e := range c.ring { // a slot that held a long line lets its buffer go for a short one
		if len(e.text) <= maxKeptText && cap(e.text) > maxKeptText {
			t.Errorf("slot %d keeps %d bytes for a line of %d", i, cap(e.text), len(e.text))
		}
	}
}

// TestStampAsFormatted checks the kept timestamp against time.Format across milliseconds,
// seconds, a day's end and zones.
func TestStampAsFormatted(t *testing.T) {
	var s stamp
	base := time.Date(2026, 12, 31, 23, 59, 59, 998_000_000, time.UTC)
	zone := time.FixedZone("x", -5*3600)
	for _, d := range []time.Duration{0, 100 * time.Microsecond, 999 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond,
		2 * time.Millisecond, 3 * time.Millisecond, time.Hour, -time.Hour} {
		for _, at := range []time.Time{base.Add(d), base.Add(d).In(zone)} {
			if got, want := string(s.append(nil, at)), at.UTC().Format(timeLayout); got != want {
				t.Errorf("%v: %q, want %q", at, got, want)
			}
		}
	}
}
