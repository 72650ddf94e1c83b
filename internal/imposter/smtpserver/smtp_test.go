package smtpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

func newTestSMTP(t testing.TB) *server {
	v, _ := config.ParseJSON([]byte(`{"protocol":"smtp","recordRequests":true}`))
	def, errs := config.ParseImposter(v, config.ParseOptions{})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	im, err := imposter.New(def, imposter.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(im)
	s.hostname = "mx"
	return s
}

// converse plays client lines against a session and returns the server's replies.
func converse(s *server, input string) string {
	var out bytes.Buffer
	ss := &smtpSession{srv: s, ip: "127.0.0.1", r: bufio.NewReader(strings.NewReader(input)), w: bufio.NewWriter(&out)}
	ss.run()
	return out.String()
}

func TestSMTPSession(t *testing.T) {
	s := newTestSMTP(t)
	in := "MAIL FROM:<a@b.c>\r\nEHLO\r\nHELO me\r\nDATA\r\nRCPT TO:<x@y.z>\r\nMAIL FROM:<a@b.c>\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:bad\r\n" +
		"RCPT TO:<x@y.z>\r\nDATA\r\nFrom: a@b.c\r\nSubject: s\r\n\r\n..dot\r\n.\r\nNOOP\r\nRSET\r\nVRFY x\r\nBOGUS\r\nQUIT\r\nNOOP\r\n"
	want := "220 mx ESMTP\r\n" +
		"503 Error: send HELO/EHLO first\r\n" +
		"501 Error: syntax: EHLO hostname\r\n" +
		"250 mx Nice to meet you, [127.0.0.1]\r\n" +
		"503 Error: need RCPT command\r\n" +
		"503 Error: need MAIL command\r\n" +
		"250 Accepted\r\n" +
		"503 Error: nested MAIL command\r\n" +
		"501 Error: Bad recipient address syntax\r\n" +
		"250 Accepted\r\n" +
		"354 End data with <CR><LF>.<CR><LF>\r\n" +
		"250 OK: message queued\r\n" +
		"250 OK\r\n" +
		"250 Flushed\r\n" +
		"252 Try to send something. No promises though\r\n" +
		"500 Error: command not recognized\r\n" +
		"221 Bye\r\n"
	if got := converse(s, in); got != want {
		t.Errorf("replies:\n%s\nwant:\n%s", got, want)
	}
	reqs := s.im.RecordedRequests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d messages, want 1", len(reqs))
	}
	r := reqs[0].Request
	if got := get(r, "text"); got != ".dot" {
		t.Errorf("text = %q, want dot-stuffing undone", got)
	}
	if got := get(r, "envelopeFrom"); got != "a@b.c" {
		t.Errorf("envelopeFrom = %v", got)
	}
}

func TestSMTPRequest(t *testing.T) {
	msg := "From: \"Sender Name\" <s@example.com>\r\nTo: \"Alice\" <a@example.com>, b@example.com\r\nTo: c@example.com\r\n" +
		"Subject: =?UTF-8?B?SGVsbG8g8J+Mjg==?=\r\nReferences: <r1@x> r2@x\r\nIn-Reply-To: r1@x\r\n" +
		"Content-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\nContent-Type: text/plain\r\n\r\n  text  \r\n" +
		"--XX\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\nContent-Id: <img1>\r\n\r\nAAE=\r\n--XX--\r\n"
	got := string(config.MarshalJSON(smtpRequest("127.0.0.1", "e@x", []string{"r@x"}, []byte(msg)), 0))
	want := `{"requestFrom":"127.0.0.1","ip":"127.0.0.1","envelopeFrom":"e@x","envelopeTo":["r@x"],` +
		`"from":{"address":"s@example.com","name":"Sender Name"},` +
		`"to":[{"address":"a@example.com","name":"Alice"},{"address":"c@example.com","name":""}],"cc":[],"bcc":[],` +
		`"subject":"Hello 🌎","priority":"normal","references":["<r1@x>","<r2@x>"],"inReplyTo":"<r1@x>","text":"text","html":"",` +
		`"attachments":[{"type":"attachment","content":{"type":"Buffer","data":[0,1]},"contentType":"image/png","partId":"2","release":null,` +
		`"contentId":"<img1>","cid":"img1","headers":{},"checksum":"441077cc9e57554dd476bdfb8b8b8102","size":2}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestSMTPRequestDeepMultipart: multiparts are read 32 levels deep and no deeper (each level
// reads the one below in full: 30,000 levels in 2 MB took half a minute).
func TestSMTPRequestDeepMultipart(t *testing.T) {
	nested := func(depth int) []byte {
		var msg bytes.Buffer
		msg.WriteString("From: a@x.org\r\nSubject: t\r\n")
		for i := depth - 1; i >= 0; i-- { // outermost first
			b := "b" + strconv.Itoa(i)
			msg.WriteString("Content-Type: multipart/mixed; boundary=" + b + "\r\n\r\n--" + b + "\r\n")
		}
		msg.WriteString("Content-Type: text/plain\r\n\r\nhello\r\n")
		for i := 0; i < depth; i++ {
			msg.WriteString("\r\n--b" + strconv.Itoa(i) + "--\r\n")
		}
		return msg.Bytes()
	}
	for _, tt := range []struct {
		depth int
		text  string
	}{{1, "hello"}, {maxMIMEDepth, "hello"}, {maxMIMEDepth + 1, ""}, {30000, ""}} {
		if got := get(smtpRequest("127.0.0.1", "a@x.org", nil, nested(tt.depth)), "text"); got != tt.text {
			t.Errorf("text of a message nested %d deep = %q, want %q", tt.depth, got, tt.text)
		}
	}
}

// FuzzSMTPSession plays arbitrary byte streams as an SMTP client: the session must never
// panic, whatever the commands and message.
func FuzzSMTPSession(f *testing.F) {
	f.Add([]byte("HELO x\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\nSubject: x\r\n\r\nhi\r\n.\r\nQUIT\r\n"))
	f.Add([]byte("EHLO x\r\nMAIL FROM:<>\r\nRCPT TO:<c@d>\r\nDATA\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>\r\n--b--\r\n.\r\n"))
	f.Add([]byte("\x00\xff\r\n\n\n.\r\n"))
	s := newTestSMTP(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		ss := &smtpSession{srv: s, ip: "127.0.0.1", r: bufio.NewReader(bytes.NewReader(data)), w: bufio.NewWriter(&out)}
		ss.run()
		_ = smtpRequest("127.0.0.1", "", nil, data)
		_ = s.im.ClearRequests(context.Background())
	})
}

// TestSMTPRequestEmptySubject: an empty Subject is left out, as Mountebank (mailparser) does.
func TestSMTPRequestEmptySubject(t *testing.T) {
	for _, msg := range []string{"From: a@x\r\nSubject: \r\n\r\nhi\r\n", "From: a@x\r\n\r\nhi\r\n"} {
		got := smtpRequest("127.0.0.1", "e@x", []string{"r@x"}, []byte(msg))
		if _, ok := got.Get("subject"); ok {
			t.Errorf("%q: recorded with a subject: %s", msg, config.MarshalJSON(got, 0))
		}
	}
}

// TestDetectMimeType: an application/octet-stream attachment's type comes from its filename,
// as mailparser's libmime.detectMimeType gives it.
func TestDetectMimeType(t *testing.T) {
	for name, want := range map[string]string{
		"é.png": "image/png", "a.XLS": "application/vnd.ms-excel", "zip": "application/zip",
		".png": "image/png", "a. p ng": "image/png", "a.unknownext": "application/octet-stream",
		"b c.csv": "text/csv", "noext": "application/octet-stream",
	} {
		if got := detectMimeType(name); got != want {
			t.Errorf("detectMimeType(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestSMTPRecipientsAreBounded: the recipients of one message are bounded by --max-body, as its
// text is (3 million RCPT commands, never followed by DATA, took 420 MB); past it a RCPT is
// refused with 452 and the session goes on: RSET, or the next message, starts again.
func TestSMTPRecipientsAreBounded(t *testing.T) {
	s := newTestSMTP(t)
	s.maxSize = 2*(11+rcptCost) + 3 // two addresses of 11 bytes
	in := "HELO me\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<1234567@y.z>\r\nRCPT TO:<1234567@y.z>\r\nRCPT TO:<1234567@y.z>\r\n" +
		"DATA\r\nSubject: s\r\n\r\nx\r\n.\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<1234567@y.z>\r\nRCPT TO:<1234567@y.z>\r\nRSET\r\n" +
		"MAIL FROM:<a@b.c>\r\nRCPT TO:<1234567@y.z>\r\nRCPT TO:<1234567@y.z>\r\nQUIT\r\n"
	want := "220 mx ESMTP\r\n250 mx Nice to meet you, [127.0.0.1]\r\n250 Accepted\r\n250 Accepted\r\n250 Accepted\r\n" +
		"452 Error: too many recipients\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 OK: message queued\r\n" +
		"250 Accepted\r\n250 Accepted\r\n250 Accepted\r\n250 Flushed\r\n250 Accepted\r\n250 Accepted\r\n250 Accepted\r\n221 Bye\r\n"
	if got := converse(s, in); got != want {
		t.Errorf("replies:\n%s\nwant:\n%s", got, want)
	}
	reqs := s.im.RecordedRequests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d messages, want 1", len(reqs))
	}
	if got := fmt.Sprint(get(reqs[0].Request, "envelopeTo")); got != "[1234567@y.z 1234567@y.z]" {
		t.Errorf("envelopeTo = %s, want the two recipients accepted", got)
	}
}

// TestSMTPRecipientsCostWhatTheyKeep: a recipient counts against --max-body with what keeping
// it costs, not its address's bytes alone: recipients of one byte (`RCPT TO:<a>`) took 75
// bytes each, so the 64 MiB default let 64 million take 4.8 GB. And it keeps its address, not
// the command line the address is in, which may go on for 64 KiB past it: 2,000 recipients of
// 60 KB lines took 120 MB, counted as 2,000 bytes.
func TestSMTPRecipientsCostWhatTheyKeep(t *testing.T) {
	t.Run("one-byte addresses", func(t *testing.T) {
		s := newTestSMTP(t)
		s.maxSize = 4096
		in := "HELO me\r\nMAIL FROM:<a@b.c>\r\n" + strings.Repeat("RCPT TO:<a>\r\n", 1000) + "QUIT\r\n"
		got := converse(s, in)
		want := 4096 / (1 + rcptCost)
		if n := strings.Count(got, "250 Accepted\r\n") - 1; n != want { // one is MAIL's
			t.Errorf("%d recipients accepted under a 4096-byte --max-body, want %d", n, want)
		}
		if n := strings.Count(got, "452 Error: too many recipients\r\n"); n != 1000-want {
			t.Errorf("%d recipients refused, want %d", n, 1000-want)
		}
	})
	t.Run("long lines", func(t *testing.T) {
		s := newTestSMTP(t)
		const n, pad = 200, 60000
		line := "RCPT TO:<r@x> " + strings.Repeat("x", pad) + "\r\n"
		in := "HELO me\r\nMAIL FROM:<a@b.c> " + strings.Repeat("y", pad) + "\r\n" + strings.Repeat(line, n)
		var before, held runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var accepted int
		var out bytes.Buffer
		ss := &smtpSession{srv: s, ip: "127.0.0.1", w: bufio.NewWriter(&out)}
		// At the end of the input the session waits for its next command, holding the
		// recipients: the heap is measured then.
		ss.r = bufio.NewReader(io.MultiReader(strings.NewReader(in), readerFunc(func([]byte) (int, error) {
			runtime.GC()
			runtime.ReadMemStats(&held)
			accepted = len(ss.rcptTo)
			return 0, io.EOF
		})))
		ss.run()
		runtime.KeepAlive(in) // in the heap both times
		if accepted != n {
			t.Fatalf("%d recipients held, want %d", accepted, n)
		}
		// The lines are 12 MB; what their recipients keep is a few KB.
		if grew := int64(held.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
			t.Errorf("the heap grew by %d bytes for %d recipients of %d-byte lines, want the addresses alone kept", grew, n, len(line))
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

// TestSMTPDataBounds: DATA lines are bounded by the message's size (--max-body), not by the
// command line limit (a 100 KiB line ended the session, where smtp-server takes it); a message
// past the size is read to its end and refused with 552, and the session goes on.
func TestSMTPDataBounds(t *testing.T) {
	const head = "HELO me\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<x@y.z>\r\nDATA\r\n"
	const hello = "220 mx ESMTP\r\n250 mx Nice to meet you, [127.0.0.1]\r\n250 Accepted\r\n250 Accepted\r\n" +
		"354 End data with <CR><LF>.<CR><LF>\r\n"
	long := strings.Repeat("y", 100<<10) // past smtpMaxLine and the reader's buffer
	tests := []struct {
		name    string
		max     int
		in      string
		replies string
		texts   []string // the recorded messages' text
	}{
		{"long line", 1 << 20, head + "Subject: s\r\n\r\n" + long + "\r\n.\r\nQUIT\r\n",
			hello + "250 OK: message queued\r\n221 Bye\r\n", []string{long}},
		{"long dot-stuffed line", 1 << 20, head + "Subject: s\r\n\r\n." + long + "\r\n..\r\n.\r\nQUIT\r\n",
			hello + "250 OK: message queued\r\n221 Bye\r\n", []string{long + "\n."}},
		{"exactly the size", 14 + 2 + 5, head + "Subject: s\r\n\r\n12345\r\n.\r\nQUIT\r\n",
			hello + "250 OK: message queued\r\n221 Bye\r\n", []string{"12345"}},
		{"one byte past the size", 14 + 2 + 5, head + "Subject: s\r\n\r\n123456\r\n.\r\nQUIT\r\n",
			hello + "552 Error: message exceeds fixed maximum message size 21\r\n221 Bye\r\n", nil},
		{"too large, then the next message", 1 << 10, head + "Subject: s\r\n\r\n" + long + "\r\nmore\r\n.\r\n" +
			"DATA\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<x@y.z>\r\nDATA\r\nSubject: s\r\n\r\nsmall\r\n.\r\nQUIT\r\n",
			hello + "552 Error: message exceeds fixed maximum message size 1024\r\n503 Error: need RCPT command\r\n" +
				"250 Accepted\r\n250 Accepted\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 OK: message queued\r\n221 Bye\r\n",
			[]string{"small"}},
		{"too large and never ended", 1 << 10, head + "Subject: s\r\n\r\n" + long + "\r\n" + long,
			hello, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSMTP(t)
			s.maxSize = tt.max
			if got := converse(s, tt.in); got != tt.replies {
				t.Errorf("replies:\n%.500s\nwant:\n%.500s", got, tt.replies)
			}
			reqs := s.im.RecordedRequests()
			var texts []string
			for _, r := range reqs {
				texts = append(texts, fmt.Sprint(get(r.Request, "text")))
			}
			if fmt.Sprint(texts) != fmt.Sprint(tt.texts) {
				t.Errorf("recorded texts %.200q, want %.200q", texts, tt.texts)
			}
		})
	}
}
