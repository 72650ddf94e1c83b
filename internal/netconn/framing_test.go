package netconn

import (
	"bufio"
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// scanAll feeds b to a headScan in chunks of n bytes (all at once for n <= 0).
func scanAll(b []byte, n int) (done, bad bool) {
	_, done, bad = scanWith(b, n)
	return done, bad
}

// scanWith is scanAll that also returns the scan's state where it ended.
func scanWith(b []byte, n int) (h *headScan, done, bad bool) {
	h = new(headScan)
	if n <= 0 || n > len(b) {
		n = len(b)
	}
	if n == 0 {
		return h, false, false
	}
	h.begin(b[:n])
	for len(b) > 0 {
		k := min(n, len(b))
		if _, _, done, bad = h.feed(b[:k], k); done {
			return h, done, bad
		}
		b = b[k:]
	}
	return h, false, false
}

// scanRef is what headScan computes for b, whose first read gave first.
// end is where the head ends in b when it is done and not bad (the body's first byte).
func scanRef(b, first []byte) (done, bad bool, end int) {
	if !startsRequest(first) {
		return true, false, 0
	}
	start, lines, inName := 0, 0, false
	for i, c := range b {
		if lines > 0 && i == start {
			if c == ' ' || c == '\t' {
				return true, true, 0 // obs-fold
			}
			inName = true
		}
		if c == ':' {
			inName = false
		}
		if c == ' ' && inName {
			return true, true, 0 // a space in a name
		}
		if c != '\n' {
			continue
		}
		if i == 0 || b[i-1] != '\r' {
			return true, true, 0
		}
		lines++
		if i-1 == start && lines > 1 {
			return true, false, i + 1
		}
		start, inName = i+1, false
	}
	return false, false, 0
}

func TestHeadScan(t *testing.T) {
	for _, tc := range []struct {
		in        string
		done, bad bool
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", true, false},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\nbody\n\nmore", true, false},
		{"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n", false, false},
		{"GET / HTTP/1.1\nHost: x\n\n", true, true},
		{"GET / HTTP/1.1\r\nHost: x\n\r\n", true, true},
		{"GET / HTTP/1.1\r\nHost: x\r\n\n", true, true},
		{"GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", true, true},
		{"GET / HTTP/1.1\nHost: x\r\n\r\n", true, true},
		{"\r\nGET / HTTP/1.1\nHost: x\n\n", true, false}, // not at a request's start: not judged
		{"ost: x\n\n", true, false},
		{"get / HTTP/1.1\n\n", true, false},
		{"GET / HTTP/1.1\r\n", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", true, true},  // obs-fold
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n", true, true}, // obs-fold
		{"GET / HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", true, true},        // a space in a name
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n", true, true},       // and before the colon
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A:b c\r\n\r\n", true, false},      // in the value
		{"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", true, false},              // the request line is fasthttp's
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n body", true, false},            // the body is not scanned
	} {
		for _, n := range []int{0, 16, 17, 18, 30} {
			done, bad := scanAll([]byte(tc.in), n)
			if done != tc.done || bad != tc.bad {
				t.Errorf("%q in chunks of %d: done %v bad %v, want %v %v", tc.in, n, done, bad, tc.done, tc.bad)
			}
		}
	}
}

func TestHasHeader(t *testing.T) {
	raw := []byte("Host: x\r\nContent-length: 5\r\nX-Transfer-Encoding: chunked\r\ntransfer-encoding : chunked\r\n\r\n")
	for name, want := range map[string]bool{"content-length": true, "transfer-encoding": false, "host": true, "x-transfer-encoding": true, "x": false} {
		if got := hasHeader(raw, name); got != want {
			t.Errorf("hasHeader(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzHeadScan checks the header-block scanner against scanRef, however the bytes are split
// into reads.
func FuzzHeadScan(f *testing.F) {
	for _, s := range []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\nHost: x\n\n", "POST / HTTP/1.1\r\nHost: x\n\r\nbody", "PUT /x HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", "GET / HTTP/1.1\r\nX A: b\r\nY:c d\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000000005;a=b\r\nhello\r\n00000000000000000\r\n\r\n",
		"A \r\nTrAnsfer-EnCoding:chunked\r\n\r\n\r0", "GET / HTTP/1.1\r\nHost :x\r\nContent-Type :a\r\nContent-Length : 0\r\n\r\n",
		"POST / HTTP/1.1\r\nhOST: x\r\ncontent-TYPE: a\r\nCONTENT-LENGTH: 2\r\n\r\nab", "GET / HTTP/1.1\r\nContent Type: a\r\nContent-Le gth: 1\r\nHo t: x\r\n\r\n", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n"} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(17))
	}
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		if len(b) == 0 || len(b) > maxHeadScan {
			return
		}
		first := b[:min(max(int(chunk), 1), len(b))]
		if chunk == 0 {
			first = b
		}
		wantDone, wantBad, end := scanRef(b, first)
		done, bad := scanAll(bytes.Clone(b), int(chunk))
		if bad && wantDone && !wantBad {
			// The reference reads heads only, and a chunked body has rules of its own
			// (TestChunk*): a refusal past the head must follow a head the scan accepts and
			// reads as chunked.
			h, headDone, headBad := scanWith(bytes.Clone(b[:end]), int(chunk))
			bad = !headDone || headBad || !h.inBody || h.framing != framedChunked
		}
		if done != wantDone || bad != wantBad {
			t.Fatalf("%q in chunks of %d: done %v bad %v, want %v %v", b, chunk, done, bad, wantDone, wantBad)
		}
		if bytes.Count(b, []byte("\n")) == 0 && wantDone && wantBad {
			t.Fatal("bad without a line end")
		}
	})
}

// TestNodeReads: the requests node's parser refuses (Mountebank answers 400 and closes) and
// fasthttp reads, as Mountebank 2.9.1 on Node 20 answered them.
func TestNodeReads(t *testing.T) {
	for _, tt := range []struct {
		head string
		want bool
	}{
		{"GET /x HTTP/1.1", true},
		{"PURGE /x HTTP/1.1", true},
		{"M-SEARCH * HTTP/1.1", true},
		{"QUERY /x HTTP/1.1", true},
		{"GET /a\"b{c}|^` HTTP/1.1", true},
		{"GET /x HTTP/1.0", true},
		{"GET /x HTTP/0.9", true},
		{"GET /x HTTP/2.0", true},
		{"get /x HTTP/1.1", false},
		{"Get /x HTTP/1.1", false},
		{"FOO /x HTTP/1.1", false},
		{"DESCRIBE /x HTTP/1.1", false}, // RTSP's
		{"PRI /x HTTP/1.1", false},
		{"GET /x HTTP/1.9", false},
		{"GET /x HTTP/3.0", false},
		{"GET /\xe9 HTTP/1.1", false},
		{"GET /p?q=\xff HTTP/1.1", false},
		{"POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked", false},
		{"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked", true},
		{"POST /x HTTP/1.1\r\nTransfer-Encoding: CHUNKED", true},
		{"GET /x HTTP/1.1\r\nTransfer-Encoding: identity", false},
		{"POST /x HTTP/1.1\r\nTransfer-Encoding: Identity", false},
	} {
		var req fasthttp.Request
		raw := tt.head + "\r\nHost: x\r\n\r\n"
		if strings.HasSuffix(strings.ToLower(tt.head), "chunked") {
			raw += "0\r\n\r\n"
		}
		if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%q: fasthttp cannot read it: %v", tt.head, err)
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		if got := nodeReads(&ctx, 0); got != tt.want {
			t.Errorf("nodeReads(%q) = %v, want %v", tt.head, got, tt.want)
		}
		// Told what the scan of the block as it arrived found (whole, and a few bytes a read).
		for _, chunk := range []int{0, 5} {
			h, _, _ := scanWith([]byte(raw), chunk)
			if got := nodeReads(&ctx, h.hdr); got != tt.want {
				t.Errorf("nodeReads(%q) after a scan in reads of %d (%b) = %v, want %v", tt.head, chunk, h.hdr, got, tt.want)
			}
		}
	}
}

// TestTidyRequestLine: request lines llhttp reads and fasthttp refuses become ones fasthttp
// reads alike (each `from` was answered by Mountebank 2.9.1 as `to` is by mockd); others,
// and lines that are not whole yet, are left as they are.
func TestTidyRequestLine(t *testing.T) {
	const rest = "\r\nHost: a\r\n\r\n"
	for _, tc := range []struct{ from, to string }{
		{"GET /x HTTP/1.1", "GET /x HTTP/1.1"},
		{"GET  /x HTTP/1.1", "GET /x HTTP/1.1"},
		{"GET   /x HTTP/1.1", "GET /x HTTP/1.1"},
		{"GET /x  HTTP/1.1", "GET /x HTTP/1.1"},
		{"GET  /x   HTTP/1.1", "GET /x HTTP/1.1"},
		{"GET  http://h/y?z=1 HTTP/1.1", "GET http://h/y?z=1 HTTP/1.1"},
		{"OPTIONS *?a=1 HTTP/1.1", "OPTIONS /*?a=1 HTTP/1.1"},
		{"OPTIONS  *?a=1 HTTP/1.1", "OPTIONS /*?a=1 HTTP/1.1"},
		{"OPTIONS * HTTP/1.1", "OPTIONS * HTTP/1.1"},
		{"GET /x", "GET /x HTTP/0.9"},
		{"GET  /x?q=1", "GET /x?q=1 HTTP/0.9"},
		{"GET *?a", "GET /*?a HTTP/0.9"},
		{"GET ** HTTP/1.1", "GET /** HTTP/1.1"},
		{"GET  *x  HTTP/1.1", "GET /*x HTTP/1.1"},
		{"M-SEARCH   /x", "M-SEARCH /x HTTP/0.9"},
		{"GET /x HTTP/1.1 ", "GET /x HTTP/1.1 "}, // refused by both
		{"GET /x ", "GET /x "},                   // refused by both
		{"GET ", "GET "},
		{"GET  ", "GET  "},
	} {
		b := make([]byte, 256)
		n := copy(b, tc.from+rest)
		if got := string(b[:tidyRequestLine(b, n)]); got != tc.to+rest {
			t.Errorf("%q: got %q, want %q", tc.from, got, tc.to+rest)
		}
		// Without room, nothing is inserted; what is removed still is.
		b = []byte(tc.from + rest)
		got := string(b[:tidyRequestLine(b, len(b))])
		if len(tc.to) <= len(tc.from) && got != tc.to+rest || len(tc.to) > len(tc.from) && len(got) > len(tc.from+rest) {
			t.Errorf("%q without room: got %q", tc.from, got)
		}
	}
	if !startsRequest([]byte("M-SEARCH   /x\r\n")) {
		t.Error("M-SEARCH does not start a request")
	}
	// A line not whole yet, or ending with a bare LF, is left alone.
	for _, in := range []string{"GET  /x HTTP/1.1", "GET  /x HTTP/1.1\n", "GET  /x\nHost: a\r\n"} {
		b := []byte(in)
		if got := string(b[:tidyRequestLine(b, len(b))]); got != in {
			t.Errorf("%q: got %q", in, got)
		}
	}
}

// BenchmarkTidyRequestLine is what the check costs the first read of every request (bench/'s
// simple request: nothing to rewrite).
func BenchmarkTidyRequestLine(b *testing.B) {
	req := []byte("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		n := copy(buf, req)
		if tidyRequestLine(buf, n) != n {
			b.Fatal("rewritten")
		}
	}
}

// TestTidyHost: the Host lines node reads and fasthttp refuses are rewritten for fasthttp and
// put back in the raw header block mockd records (Mountebank 2.9.1 records them as sent), in
// one read or split into several; what fasthttp reads anyway is left as it is.
func TestTidyHost(t *testing.T) {
	for _, tc := range []struct {
		head    string // the header lines
		raw     string // the raw header block after restore ("" for head itself)
		host    string // fasthttp's Host after restore
		rewrite bool
	}{
		{head: "Host: localhost:2525\r\n", host: "localhost:2525"},
		{head: "host: a.b-c_d\r\nX: y\r\n", host: "a.b-c_d"},
		{head: "Host: localhost: 2525\r\n", host: "localhost: 2525", rewrite: true},
		{head: "Host: a b\r\nX: y\r\n", host: "a b", rewrite: true},
		{head: "HOST: a:b:c \r\n", host: "a:b:c", rewrite: true},
		{head: "Host: a%zz\r\n", host: "a%zz", rewrite: true},
		{head: "Host: [::1]:80\r\n", host: "[::1]:80", rewrite: true},
		{head: "Host: h\xc3\xa9\r\n", host: "h\xc3\xa9", rewrite: true},
		{head: "Host:   \r\n", host: "", rewrite: true},
		{head: "Host:\r\n", raw: "Host: \r\n", host: "", rewrite: true},
		{head: "X: y\r\nHost:\r\nZ: w\r\n", raw: "X: y\r\nHost: \r\nZ: w\r\n", host: "", rewrite: true},
		{head: "Host: a\r\nHost: b\r\n", host: "a", rewrite: true},
		{head: "Host: a b\r\nhost:\r\nHOST: c\r\n", host: "a b", rewrite: true},
	} {
		for _, chunk := range []int{0, 9, 23} {
			in := "GET /x HTTP/1.1\r\n" + tc.head + "\r\n"
			buf := make([]byte, len(in)+8)
			n := copy(buf, in)
			var h headScan
			first := n
			if chunk > 0 {
				first = chunk
			}
			h.begin(buf[:first])
			// Feed the request as reads of chunk bytes, each read's bytes moved after the
			// bytes before it as a reader's buffer holds them.
			var out []byte
			rest := buf[:n]
			for len(rest) > 0 {
				k := len(rest)
				if chunk > 0 {
					k = min(chunk, k)
				}
				rd := make([]byte, k+8)
				copy(rd, rest[:k])
				m, _, done, bad := h.feed(rd, k)
				if bad {
					t.Fatalf("%q: bad", in)
				}
				out = append(out, rd[:m]...)
				rest = rest[k:]
				if done {
					out = append(out, rest...)
					break
				}
			}
			if got := string(out) != in; got != tc.rewrite && chunk == 0 {
				t.Errorf("%q: rewritten %v, want %v (%q)", in, got, tc.rewrite, out)
			}
			var hdr fasthttp.RequestHeader
			if err := hdr.Read(bufio.NewReader(bytes.NewReader(out))); err != nil {
				if chunk == 0 {
					t.Errorf("%q: fasthttp refuses %q: %v", in, out, err)
				}
				continue // a line split between reads is left as it came
			}
			h.restore(&hdr)
			want := tc.raw
			if want == "" {
				want = tc.head
			}
			if got := string(hdr.RawHeaders()); got != want+"\r\n" {
				t.Errorf("%q in chunks of %d: raw %q, want %q", in, chunk, got, want+"\r\n")
			}
			if got := string(hdr.Host()); got != tc.host && (chunk == 0 || !tc.rewrite) {
				t.Errorf("%q in chunks of %d: Host %q, want %q", in, chunk, got, tc.host)
			}
		}
	}
}

// TestTidyHostNoRoom: an empty Host with no room in the read to give it an x is left, and
// fasthttp refuses it as before.
func TestTidyHostNoRoom(t *testing.T) {
	in := []byte("GET / HTTP/1.1\r\nHost:\r\n\r\n")
	var h headScan
	h.begin(in)
	if m, _, done, bad := h.feed(in, len(in)); m != len(in) || !done || bad || string(in) != "GET / HTTP/1.1\r\nHost:\r\n\r\n" || len(h.fixes) != 0 {
		t.Errorf("got %d %v %v %q %v", m, done, bad, in, h.fixes)
	}
}

// TestTidyHostSameConnection: the requests of one connection share a headScan, which keeps the
// last plain Host line to skip looking at it again; a later request with a second Host or an
// odd value is still rewritten, and a plain one is not.
func TestTidyHostSameConnection(t *testing.T) {
	var h headScan
	for i, tc := range []struct {
		head    string
		rewrite bool
	}{
		{"Host: a:1\r\n", false},
		{"Host: a:1\r\n", false},
		{"Host: a:1\r\nHost: a:1\r\n", true},
		{"X: y\r\nHost: a:1\r\n", false},
		{"Host: a:12\r\n", false},
		{"Host: localhost: 2525\r\n", true},
		{"Host: a:12\r\n", false},
		{"host: a:12\r\n", false},
		{"Host: a:12\r\nhost: a:12\r\n", true},
	} {
		in := "GET /x HTTP/1.1\r\n" + tc.head + "\r\n"
		buf := make([]byte, len(in)+8)
		n := copy(buf, in)
		h.begin(buf[:n])
		m, _, done, bad := h.feed(buf, n)
		if !done || bad {
			t.Fatalf("%d %q: done %v bad %v", i, in, done, bad)
		}
		if got := string(buf[:m]) != in; got != tc.rewrite || (len(h.fixes) > 0) != tc.rewrite {
			t.Errorf("%d %q: rewritten %v (%q, %d fixes), want %v", i, in, got, buf[:m], len(h.fixes), tc.rewrite)
		}
	}
}

// BenchmarkHeadScan is what the header-block scan costs the first read of every request (bench/'s
// simple request: nothing to rewrite): the same block on a connection again (found as the last
// one), and blocks that differ in their last line each time (each compared with the last one,
// scanned, then kept).
func BenchmarkHeadScan(b *testing.B) {
	for _, reqs := range []struct {
		name string
		reqs [][]byte
	}{
		{"same", [][]byte{[]byte("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")}},
		{"changing", [][]byte{[]byte("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\nX-Request-Id: 1\r\n\r\n"),
			[]byte("GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\nX-Request-Id: 2\r\n\r\n")}},
	} {
		b.Run(reqs.name, func(b *testing.B) {
			buf := make([]byte, 4096)
			var h headScan
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				n := copy(buf, reqs.reqs[i%len(reqs.reqs)])
				i++
				h.begin(buf[:n])
				if _, _, done, bad := h.feed(buf, n); !done || bad {
					b.Fatal("not done")
				}
			}
		})
	}
}

// TestBadTransferEncoding: the Transfer-Encoding lines llhttp refuses (Mountebank 2.9.1 answered
// these 400) and those it reads, chunked last.
func TestBadTransferEncoding(t *testing.T) {
	for _, tc := range []struct {
		lines string
		bad   bool
	}{
		{"", false},
		{"Transfer-Encoding: chunked\r\n", false},
		{"Transfer-Encoding: gzip, chunked\r\n", false},
		{"Transfer-Encoding: gzip,chunked\r\n", false},
		{"Transfer-Encoding: gzip ,\tChunked \r\n", false},
		{"Transfer-Encoding: ,chunked\r\n", false},
		{"Transfer-Encoding: chunkedx, chunked\r\n", false},
		{"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", false},
		{"Transfer-Encoding: gzip\r\n", true},
		{"Transfer-Encoding: chunked, gzip\r\n", true},
		{"Transfer-Encoding: chunked, chunked\r\n", true},
		{"Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", true},
		{"Transfer-Encoding: x chunked\r\n", true},
		{"Transfer-Encoding: identity\r\n", true},
	} {
		if got := badTransferEncoding([]byte("Host: a\r\n" + tc.lines + "\r\n")); got != tc.bad {
			t.Errorf("%q: bad %v, want %v", tc.lines, got, tc.bad)
		}
	}
}

// TestTidyTE: Transfer-Encoding lines fasthttp refuses are rewritten so that it reads the
// chunks, and put back by restore.
func TestTidyTE(t *testing.T) {
	for _, tc := range []struct{ line, sent string }{
		{"Transfer-Encoding: chunked", "Transfer-Encoding: chunked"},
		{"Transfer-Encoding: gzip, chunked", "Transfer-Encoding:       chunked"},
		{"transfer-encoding:gzip,chunked", "transfer-encoding:     chunked"},
		{"Transfer-Encoding: gzip", "Xransfer-Encoding: gzip"},
		{"Transfer-Encoding: x chunked", "Xransfer-Encoding: x chunked"},
	} {
		in := "POST /x HTTP/1.1\r\nHost: a\r\n" + tc.line + "\r\n\r\n"
		buf := []byte(in)
		var h headScan
		h.begin(buf)
		m, end, done, bad := h.feed(buf, len(buf))
		want := "POST /x HTTP/1.1\r\nHost: a\r\n" + tc.sent + "\r\n\r\n"
		if string(buf[:m]) != want || end != m || !done || bad {
			t.Errorf("%q: %q (end %d, done %v, bad %v), want %q", tc.line, buf[:m], end, done, bad, want)
		}
		var hdr fasthttp.RequestHeader
		if err := hdr.Read(bufio.NewReader(bytes.NewReader(buf[:m]))); err != nil {
			t.Errorf("%q: fasthttp refuses %q: %v", tc.line, buf[:m], err)
			continue
		}
		h.restore(&hdr)
		if got := string(hdr.RawHeaders()); got != "Host: a\r\n"+tc.line+"\r\n\r\n" {
			t.Errorf("%q: restored %q", tc.line, got)
		}
	}
}

// TestChunkedEnd: the scan follows a chunked body to its end, read in pieces of any size, so that the
// bytes behind it are a request of their own; it stops at a chunk line it cannot read.
func TestChunkedEnd(t *testing.T) {
	const next = "GET /n HTTP/1.1\r\n\r\n"
	for _, tc := range []struct {
		body string
		end  bool // the scan finds where the body ends
	}{
		{"0\r\n\r\n", true},
		{"3\r\nabc\r\n0\r\n\r\n", true},
		{"a;x=1\r\n0123456789\r\nF\r\n0123456789abcde\r\n0\r\n\r\n", true},
		{"1\r\nx\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n", true},
		{"1\r\n\n\r\n0;e\r\n\r\n", true},
		{"zz\r\nabc\r\n0\r\n\r\n", false},
		{"3\r\nabcd\r\n0\r\n\r\n", false},
		{"10000000000000\r\nx", false},
	} {
		for _, te := range []string{"chunked", "gzip, chunked"} {
			head := "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: " + te + "\r\n\r\n"
			in := head + tc.body
			for _, step := range []int{1, 2, 7, len(in) + len(next)} {
				b := []byte(in + next)
				var h headScan
				ended, at := false, 0
				for at < len(b) {
					k := min(step, len(b)-at)
					if at == 0 {
						k = max(k, len(head)) // the header block in one read: its lines are not split
					}
					piece := b[at : at+k]
					if at == 0 {
						h.begin(piece)
					}
					if !h.active {
						break
					}
					_, end, _, _ := h.feed(piece, k)
					if end < k || !h.active && end == k && at+k == len(in) {
						ended = at+end == len(in)
						break
					}
					at += k
				}
				if ended != tc.end {
					t.Errorf("%s %q in reads of %d: ended at the body's end %v, want %v", te, tc.body, step, ended, tc.end)
				}
			}
		}
	}
}

// TestChunkExtBound: a chunk's extensions (names and values, ';' and '=' not counted) are
// bounded at 16 KiB per chunk-size line, as node bounds them (413); fasthttp read any length.
// The bound holds however the body is split between reads, and for the last chunk too.
func TestChunkExtBound(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		name, body string
		over       bool
	}{
		{"16 KiB", "5;" + a(16384) + "\r\nhello\r\n0\r\n\r\n", false},
		{"16 KiB and a byte", "5;" + a(16385) + "\r\nhello\r\n0\r\n\r\n", true},
		{"name=value of 16 KiB", "5;a=" + a(16383) + "\r\nhello\r\n0\r\n\r\n", false},
		{"name=value past 16 KiB", "5;a=" + a(16384) + "\r\nhello\r\n0\r\n\r\n", true},
		{"three chunks of 6000", strings.Repeat("1;"+a(6000)+"\r\nh\r\n", 3) + "0\r\n\r\n", false},
		{"the last chunk's", "5\r\nhello\r\n0;" + a(20000) + "\r\n\r\n", true},
		{"a megabyte after a chunk", "5\r\nhello\r\n5;" + a(1<<20) + "\r\nhello\r\n0\r\n\r\n", true},
	} {
		head := "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		in := head + tc.body
		for _, step := range []int{1, 1000, 16 << 10, len(in)} {
			var h headScan
			over, ended := false, false
			for at := 0; at < len(in); {
				k := min(step, len(in)-at)
				if at == 0 {
					k = max(k, len(head))
				}
				piece := []byte(in[at : at+k])
				if at == 0 {
					h.begin(piece)
				}
				if !h.active {
					break
				}
				_, end, _, _ := h.feed(piece, k)
				if h.extOverflow {
					over = true
					break
				}
				if !h.active {
					ended = at+end == len(in)
					break
				}
				at += k
			}
			if over != tc.over || !tc.over && !ended {
				t.Errorf("%s in reads of %d: over the bound %v (body's end found %v), want %v", tc.name, step, over, ended, tc.over)
			}
		}
	}
}

// TestChunkLinesNodeRefuses: the chunk-size and trailer lines llhttp (Node 20, so Mountebank
// 2.9.1) refuses with 400 and fasthttp read, however the body is split between reads; the
// lines both read go on to the body's end. Answers checked against mb 2.9.1.
func TestChunkLinesNodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		body string
		bad  bool
	}{
		{"5\r\nhello\r\n0\r\n\r\n", false},
		{"5;a\r\nhello\r\n0\r\n\r\n", false},
		{"5;a=b;c=d\r\nhello\r\n0\r\n\r\n", false},
		{"5;;a\r\nhello\r\n0\r\n\r\n", false},
		{"5;a=\r\nhello\r\n0\r\n\r\n", false},
		{"5;a=\"q q\"\r\nhello\r\n0\r\n\r\n", false},
		{"5;a=\"q\\\"r\"\r\nhello\r\n0\r\n\r\n", false},
		{"5;a=\"q\tq\x80\"\r\nhello\r\n0\r\n\r\n", false},
		{"5\r\nhello\r\n0\r\nX-T: a\r\nY: b c\r\n\r\n", false},
		{"5 \r\nhello\r\n0\r\n\r\n", true},
		{"5\t\r\nhello\r\n0\r\n\r\n", true},
		{"5;\r\nhello\r\n0\r\n\r\n", true},
		{"5; a\r\nhello\r\n0\r\n\r\n", true},
		{"5;a =b\r\nhello\r\n0\r\n\r\n", true},
		{"5;a= b\r\nhello\r\n0\r\n\r\n", true},
		{"5;a==b\r\nhello\r\n0\r\n\r\n", true},
		{"5;a=b=c\r\nhello\r\n0\r\n\r\n", true},
		{"5;a/b\r\nhello\r\n0\r\n\r\n", true},
		{"5;a=@\r\nhello\r\n0\r\n\r\n", true},
		{"5;\"q\"\r\nhello\r\n0\r\n\r\n", true},
		{"5;a=\"q\"x\r\nhello\r\n0\r\n\r\n", true},
		{"5;a=\"\x01\"\r\nhello\r\n0\r\n\r\n", true},
		{"5;a=\x80\r\nhello\r\n0\r\n\r\n", true},
		{"5;a\rb\r\nhello\r\n0\r\n\r\n", true},
		{"5\r\nhello\r\n0 \r\n\r\n", true},
		{"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n", true},
		{"5\r\nhello\r\n0\r\nX-T : a\r\n\r\n", true},
		{"5\r\nhello\r\n0\r\nX T: a\r\n\r\n", true},
		{"5\r\nhello\r\n0\r\nX-T: a\n\r\n", true},
		{"5\r\nhello\r\n0\r\n: a\r\n\r\n", true},
	} {
		head := "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		in := head + tc.body
		for _, step := range []int{1, 2, 5, len(in)} {
			var h headScan
			bad, ended := false, false
			for at := 0; at < len(in); {
				k := min(step, len(in)-at)
				if at == 0 {
					k = max(k, len(head))
				}
				piece := []byte(in[at : at+k])
				if at == 0 {
					h.begin(piece)
				}
				_, end, _, b := h.feed(piece, k)
				if b {
					bad = true
					break
				}
				if !h.active {
					ended = at+end == len(in)
					break
				}
				at += k
			}
			if bad != tc.bad || !tc.bad && !ended {
				t.Errorf("%q in reads of %d: refused %v (body's end found %v), want refused %v", tc.body, step, bad, ended, tc.bad)
			}
		}
	}
}

// TestChunkSizeLeadingZeros: a chunk-size line of more digits than fasthttp reads, the extra
// ones leading zeros, is rewritten in place to its significant digits and an extension of the
// same length, when the whole line came in one read; fasthttp then reads the body node reads.
// Lines fasthttp reads as they are, and a line begun in an earlier read, stay as they were.
func TestChunkSizeLeadingZeros(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		step       int // bytes a read after the head (0: all at once)
	}{
		{"0000000000000000005\r\nhello\r\n0\r\n\r\n", "5;00000000000000000\r\nhello\r\n0\r\n\r\n", 0},
		{"0000000000000005;a=b\r\nhello\r\n0\r\n\r\n", "5;00000000000000;a=b\r\nhello\r\n0\r\n\r\n", 0},
		{"5\r\nhello\r\n00000000000000000000\r\n\r\n", "5\r\nhello\r\n0;000000000000000000\r\n\r\n", 0},
		{"000000000000000000a\r\nhelloworld\r\n0\r\n\r\n", "a;00000000000000000\r\nhelloworld\r\n0\r\n\r\n", 0},
		{"000000000000005\r\nhello\r\n0\r\n\r\n", "000000000000005\r\nhello\r\n0\r\n\r\n", 0},
		{"0000000000000000005\r\nhello\r\n0\r\n\r\n", "0000000000000000005\r\nhello\r\n0\r\n\r\n", 4},
	} {
		head := "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		in := []byte(head + tc.body)
		var h headScan
		h.begin(in)
		step := tc.step
		if step == 0 {
			step = len(tc.body)
		}
		for at := 0; at < len(in); {
			k := min(step, len(in)-at)
			if at == 0 {
				k = min(len(head)+step, len(in))
			}
			m, _, _, bad := h.feed(in[at:at+k], k)
			if bad || m != k {
				t.Fatalf("%q: feed answered length %d (of %d), bad %v", tc.body, m, k, bad)
			}
			at += k
		}
		if got := string(in[len(head):]); got != tc.want {
			t.Errorf("%q: the scan made %q, want %q", tc.body, got, tc.want)
		}
		if tc.step != 0 {
			continue
		}
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(bytes.NewReader(in))); err != nil {
			t.Errorf("%q: fasthttp cannot read %q: %v", tc.body, in, err)
		} else if b := string(req.Body()); b != "hello" && b != "helloworld" {
			t.Errorf("%q: fasthttp read the body %q", tc.body, b)
		}
	}
}

// TestScanHeaderLines: what the scan finds in the header lines for the request view
// (HeaderLines), the block read whole or a few bytes a read (a line split between reads is not
// looked at: nothing is Known).
func TestScanHeaderLines(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	for _, tt := range []struct {
		raw   string
		chunk int
		want  HeaderLines
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0, HeaderLines{Known: true}},
		{"PUT /x HTTP/1.0\r\n\r\n", 0, HeaderLines{Known: true}},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: " + form + "\r\nContent-Length: 3\r\n\r\na=1", 0, HeaderLines{Known: true, Form: true}},
		{"POST / HTTP/1.1\r\ncontent-type: " + form + "; charset=utf-8\r\nContent-Length: 3\r\n\r\na=1", 0, HeaderLines{Known: true, Form: true}},
		{"POST / HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\na=1", 0, HeaderLines{Known: true}},
		{"POST / HTTP/1.1\r\nX-Type: " + form + "\r\nContent-Length: 3\r\n\r\na=1", 0, HeaderLines{Known: true}},
		{"POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", 0, HeaderLines{Known: true, Encoding: true}},
		{"GET / HTTP/1.1\r\nCONTENT-ENCODING: br\r\n\r\n", 0, HeaderLines{Known: true, Encoding: true}},
		{"GET / HTTP/1.1\r\nContent-Encodingx: br\r\nContent-Typed: " + form + "\r\n\r\n", 0, HeaderLines{Known: true, Encoding: true, Form: true}},
		{"GET / HTTP/1.1\r\nContent-: x\r\nContent-MD5: x\r\nContent-Language: en\r\n\r\n", 0, HeaderLines{Known: true}},
		// Content-Length is still read from a line that begins as the others (the body counted).
		{"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Encoding: gzip\r\n\r\nabcGET / HTTP/1.1\r\n\r\n", 0, HeaderLines{Known: true, Encoding: true}},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: " + form + "\r\nContent-Length: 3\r\n\r\na=1", 7, HeaderLines{}},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 3, HeaderLines{}},
		{"GET / HTTP/1.1\r\n", 0, HeaderLines{}},         // the block has not ended
		{"\r\nGET / HTTP/1.1\r\n\r\n", 0, HeaderLines{}}, // not scanned
	} {
		h, _, bad := scanWith([]byte(tt.raw), tt.chunk)
		if got := linesOf(h.hdr); got != tt.want || bad {
			t.Errorf("%q in reads of %d: %+v (bad %t), want %+v", tt.raw, tt.chunk, got, bad, tt.want)
		}
	}
	h, _, _ := scanWith([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Encoding: gzip\r\n\r\nabcGET"), 0)
	if h.framing != framedLength || h.length != 3 {
		t.Errorf("Content-Length among the content- lines: framing %d length %d, want %d 3", h.framing, h.length, framedLength)
	}
}

// FuzzScanHeaderLines holds the scan's HeaderLines to what they stand for: when it says it
// looked at every header line (Known), a header whose name, as a parser reads it (the text
// before the line's first ':', white space trimmed), is Content-Encoding in any case makes
// Encoding set, and a Content-Type whose value holds the form's type makes Form set.
func FuzzScanHeaderLines(f *testing.F) {
	for _, s := range []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "POST / HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1",
		"GET / HTTP/1.1\r\ncontent-encoding : gzip\r\n\r\n", "GET / HTTP/1.1\r\nContent-Encoding\t: gzip\r\n\r\n", "GET / HTTP/1.1\r\nX: y\r\n content-encoding: gzip\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Type:application/x-www-form-urlencoded\r\n\r\n", "GET / HTTP/1.1\r\nCONTENT-TYPE: a; application/x-www-form-urlencoded\r\n\r\n"} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		if len(b) == 0 || len(b) > maxHeadScan {
			return
		}
		h, _, bad := scanWith(bytes.Clone(b), int(chunk))
		got := linesOf(h.hdr)
		if !got.Known || bad {
			return
		}
		end := bytes.Index(b, []byte("\r\n\r\n"))
		start := bytes.IndexByte(b, '\n')
		if end < 0 || start < 0 || start > end+1 {
			t.Fatalf("%q: Known without a header block", b)
		}
		for _, line := range bytes.Split(b[start+1:end+2], []byte("\n")) {
			name, value, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(":"))
			if !ok {
				continue
			}
			name = bytes.Trim(name, " \t")
			if bytes.EqualFold(name, []byte("content-encoding")) && !got.Encoding {
				t.Fatalf("%q in reads of %d: a Content-Encoding line, Encoding not set", b, chunk)
			}
			if bytes.EqualFold(name, []byte("content-type")) && bytes.Contains(value, formType) && !got.Form {
				t.Fatalf("%q in reads of %d: a form's Content-Type line, Form not set", b, chunk)
			}
		}
	})
}

// TestContentLengthLine: a Content-Length line is one named content-length in any ASCII case,
// and only that (a byte that ORed with 0x20 looks like a letter or the hyphen is not one).
func TestContentLengthLine(t *testing.T) {
	for _, tt := range []struct {
		line   string
		length int64 // -1: not read as a Content-Length
	}{
		{"Content-Length: 5", 5},
		{"content-length:7", 7},
		{"CONTENT-LENGTH: \t12\t ", 12},
		{"cOnTeNt-LeNgTh: 0", 0},
		{"Content\rLength: 5", -1},
		{"Content-Lengt\x08: 5", -1},
		{"Content-Lengtx: 5", -1},
		{"Content-Length5: 5", -1},
		{"Content-Type: 5", -1},
	} {
		var h headScan
		h.contentLine([]byte(tt.line))
		got := int64(-1)
		if h.framing == framedLength {
			got = h.length
		}
		if got != tt.length {
			t.Errorf("%q: length %d (framing %d), want %d", tt.line, got, h.framing, tt.length)
		}
	}
}

// TestASCII: a byte past ASCII anywhere in b, in the words or the bytes after them.
func TestASCII(t *testing.T) {
	for n := range 20 {
		b := bytes.Repeat([]byte{'a'}, n)
		if !ascii(b) {
			t.Errorf("%q: not ASCII", b)
		}
		for i := range n {
			c := bytes.Clone(b)
			c[i] = 0x80 + byte(i)
			if ascii(c) {
				t.Errorf("%q: ASCII", c)
			}
		}
	}
}

// plainKnownName is the scan's test for a line whose name need not be searched for a space.
func plainKnownName(line []byte) bool {
	return plainHostName(line) || len(line) > 0 && line[0]|0x20 == 'c' && plainContentName(line)
}

// startsRequestRef is startsRequest as it was first written: the first space, 1 to 20 bytes in,
// after upper-case letters and '-' only.
func startsRequestRef(b []byte) bool {
	i := bytes.IndexByte(b, ' ')
	if i <= 0 || i > 20 {
		return false
	}
	for _, c := range b[:i] {
		if (c < 'A' || c > 'Z') && c != '-' {
			return false
		}
	}
	return true
}

// FuzzStartsRequest: the one-pass startsRequest agrees with the reference, method lengths of 20
// and 21, a space first and bytes around the letters included.
func FuzzStartsRequest(f *testing.F) {
	for _, s := range []string{"GET / HTTP/1.1", "M-SEARCH * HTTP/1.1", " GET /", "GET", "", "get / x", "G@T /", "G[T /", "GE- /",
		strings.Repeat("A", 20) + " /", strings.Repeat("A", 21) + " /", strings.Repeat("A", 19) + "a /", "POST\t/x", "\xffGET /"} {
		f.Add([]byte(s))
	}
	f.Add([]byte("GET  /x  HTTP/1.1\r\n\r\n"))
	f.Add([]byte("OPTIONS ** HTTP/1.1\r\n\r\n"))
	f.Add([]byte("GET /x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := startsRequest(b), startsRequestRef(b); got != want {
			t.Fatalf("%q: %v, want %v", b, got, want)
		}
		// The request line is tidied from where begin found the method's end as it is from
		// its first space (the connection's reads: a request's first one, which startsRequest
		// accepts).
		if m := methodEnd(b); m > 0 {
			if first := bytes.IndexByte(b, ' '); m != first {
				t.Fatalf("%q: the method ends at %d, the first space is at %d", b, m, first)
			}
			at, whole := append(bytes.Clone(b), make([]byte, 16)...), append(bytes.Clone(b), make([]byte, 16)...)
			if n, want := tidyRequestLineAt(at, len(b), m), tidyRequestLine(whole, len(b)); n != want || !bytes.Equal(at, whole) {
				t.Fatalf("%q: tidied from the method's end %q, from the first space %q", b, at[:n], whole[:want])
			}
		}
	})
}

// TestPlainKnownName: the names the scan reads without searching them for a space are those of
// Host, Content-Length and Content-Type lines in any case, each ended by its ':'; wherever it
// says so, nameEnd finds that ':' (no space before it).
func TestPlainKnownName(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"Host: x", true}, {"HOST:x", true}, {"hOsT:", true},
		{"Content-Length: 29", true}, {"content-length:1", true}, {"Content-Type: application/json", true}, {"CONTENT-TYPE:", true},
		{"Host :x", false}, {"Ho t: x", false}, {"Hostx: y", false}, {"Host", false}, {"Hos:", false}, {"", false},
		{"Content-Length : 1", false}, {"Content-Length", false}, {"Content-Lengthx: 1", false}, {"Content Length: 1", false},
		{"Content-Type : a", false}, {"Content-Typ: a", false}, {"Content-Encoding: gzip", false}, {"Content-Type", false},
		{"X-Trace: t-1", false}, {"Accept: */*", false},
	} {
		if got := plainKnownName([]byte(tt.line)); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.line, got, tt.want)
		}
		if tt.want {
			if k := nameEnd([]byte(tt.line)); tt.line[k] != ':' {
				t.Errorf("%q: name ends at %d (%q), not at its ':'", tt.line, k, tt.line[k])
			}
		}
	}
	// Every byte in any position of a known name: where plainKnownName still takes it, the
	// name has no space before its ':'.
	for _, line := range []string{"Host: x", "Content-Length: 1", "Content-Type: a"} {
		for i := range len(line) {
			for c := range 256 {
				b := []byte(line)
				b[i] = byte(c)
				if plainKnownName(b) {
					if k := nameEnd(b); k >= len(b) || b[k] != ':' {
						t.Fatalf("%q: taken as a known name, but nameEnd finds %d", b, k)
					}
				}
			}
		}
	}
}

// TestNameEnd: the first ':' or ' ' of a segment, wherever it lies (in the words or the bytes
// after them), or its length.
func TestNameEnd(t *testing.T) {
	for n := range 26 {
		seg := bytes.Repeat([]byte{'a'}, n)
		if got := nameEnd(seg); got != n {
			t.Errorf("%q: %d, want %d", seg, got, n)
		}
		for i := range n {
			for _, c := range []byte{':', ' '} {
				s := bytes.Clone(seg)
				s[i] = c
				if i+1 < n {
					s[n-1] = ":: "[n%3] // a later one does not count
				}
				if got := nameEnd(s); got != i {
					t.Errorf("%q: %d, want %d", s, got, i)
				}
			}
		}
		// Bytes near ':' and ' ' (each bit flipped) are not taken for them.
		for _, c := range []byte{':' ^ 1, ':' ^ 0x80, ' ' ^ 1, ' ' ^ 0x80, 0, 0xff, ':' - 1, ' ' + 1} {
			s := bytes.Repeat([]byte{c}, n)
			if got := nameEnd(s); got != n {
				t.Errorf("%q: %d, want %d", s, got, n)
			}
		}
	}
}

// scanResult is what a headScan's feed of one read returns and leaves for the request view and
// the reads after it (what the connection's last block, kept or not, must not change).
type scanResult struct {
	m, end, head, hosts       int
	done, bad, active, inBody bool
	malformed, hostSet        bool
	framing, chunk            int8
	length                    int64
	hdr                       uint8
	buf                       string
	fixes                     []hostFix
	saved                     string
	host                      [2]int
}

// feedOne scans req, one read of a request, with h (room bytes to grow in the buffer:
// tidyHost's insertion) and returns what it found.
func feedOne(h *headScan, req []byte, room int) scanResult {
	buf := make([]byte, len(req)+room)
	n := copy(buf, req)
	h.begin(buf[:n])
	m, end, done, bad := h.feed(buf, n)
	var fixes []hostFix // (none as nil: an earlier request's left h.fixes empty, not nil)
	if len(h.fixes) > 0 {
		fixes = slices.Clone(h.fixes)
	}
	return scanResult{m: m, end: end, head: h.head, hosts: h.hosts, done: done, bad: bad, active: h.active, inBody: h.inBody,
		malformed: h.malformed, hostSet: h.hostSet, framing: h.framing, chunk: h.chunk, length: h.length, hdr: h.hdr,
		buf: string(buf[:m]), fixes: fixes, saved: string(h.saved), host: h.host}
}

// checkSameBlocks feeds reqs one after another to one headScan (a connection's, which keeps
// the last header block) and each to a new one: they must find the same. Every other read has
// no room to grow in its buffer.
func checkSameBlocks(t *testing.T, reqs ...[]byte) (kept []int) {
	t.Helper()
	var conn headScan
	for i, req := range reqs {
		room := 8 * (i % 2)
		got, want := feedOne(&conn, req, room), feedOne(new(headScan), req, room)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("request %d %q after %q:\n got %+v\nwant %+v", i, req, reqs[:i], got, want)
		}
		kept = append(kept, conn.lastLen)
	}
	return kept
}

// TestHeadScanSameBlock: a connection's headScan keeps the last request's header block when its
// findings are the block's alone, and finds the same block again as it found it, without a look
// at its lines; what it finds in any request is what a new scan finds.
func TestHeadScanSameBlock(t *testing.T) {
	const block = "Host: x\r\nX-Trace: t-1\r\nContent-Type: application/json\r\nContent-Length: 29\r\n\r\n"
	body := `{"name":"Ada","tags":[1,2,3]}`
	hb := []byte("POST /users/42?q=x HTTP/1.1\r\n" + block + body)
	for _, tc := range []struct {
		name string
		reqs []string
		kept []int // the block kept after each request (its length), 0 for none
	}{
		{"same", []string{string(hb), string(hb), "GET /other HTTP/1.1\r\n" + block + body + "GET / HTTP/1.1\r\n\r\n"},
			[]int{len(block), len(block), len(block)}},
		{"body shorter than its length", []string{string(hb), string(hb[:len(hb)-5]), string(hb[:len(hb)-len(body)])},
			[]int{len(block), len(block), len(block)}},
		{"a header changes", []string{string(hb), strings.Replace(string(hb), "t-1", "t-2", 1), string(hb)},
			[]int{len(block), len(block), len(block)}},
		{"the length changes", []string{string(hb), strings.Replace(string(hb), ": 29", ": 28", 1), string(hb)},
			[]int{len(block), len(block), len(block)}},
		{"no header lines", []string{"GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n"}, []int{2, 2}},
		// Not kept: a Host rewritten, an odd one left (it depends on the buffer's room), two
		// Hosts, a Transfer-Encoding, two Content-Lengths, a block not ended.
		{"host rewritten", []string{"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"}, []int{0, 0}},
		{"empty host", []string{"GET / HTTP/1.1\r\nHost:\r\n\r\n", "GET / HTTP/1.1\r\nHost:\r\n\r\n"}, []int{0, 0}},
		{"host with a control character", []string{"GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n"}, []int{0, 0}},
		{"two hosts", []string{"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"}, []int{0, 0}},
		{"chunked", []string{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}, []int{0, 0}},
		{"te rewritten", []string{"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"}, []int{0, 0}},
		{"two lengths", []string{"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nab", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nab"}, []int{0, 0}},
		{"a block not ended forgets nothing", []string{string(hb), "GET / HTTP/1.1\r\nHost: x\r\n", string(hb)}, []int{len(block), len(block), len(block)}},
		{"a refused block forgets nothing", []string{string(hb), "GET / HTTP/1.1\r\nHost: x\r\n b\r\n\r\n", string(hb)}, []int{len(block), len(block), len(block)}},
		{"the kept block then a line more", []string{string(hb), "POST / HTTP/1.1\r\n" + block[:len(block)-2] + "X: y\r\n\r\n"}, []int{len(block), len(block) + 6}},
		{"the kept block then a fold", []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r\n b\r\n"}, []int{11, 11}},
		{"the kept block with a bare LF", []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\n"}, []int{11, 11}},
		{"larger than kept", []string{"GET / HTTP/1.1\r\nX: " + strings.Repeat("a", maxLast) + "\r\n\r\n", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", maxLast) + "\r\n\r\n"}, []int{0, 0}},
		{"a request line in the block's place", []string{"GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n"}, []int{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := make([][]byte, len(tc.reqs))
			for i, r := range tc.reqs {
				reqs[i] = []byte(r)
			}
			if kept := checkSameBlocks(t, reqs...); !slices.Equal(kept, tc.kept) {
				t.Errorf("blocks kept %v, want %v", kept, tc.kept)
			}
		})
	}
}

// TestHeadScanChangingBlocks: a connection whose blocks differ each time keeps them no more
// after four requests, but for one in 16, and keeps them all again once one was sent again.
func TestHeadScanChangingBlocks(t *testing.T) {
	a := []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: 1\r\n\r\n")
	b := []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: 2\r\n\r\n")
	k := len(a) - len("GET / HTTP/1.1\r\n") // the block's length
	var reqs [][]byte
	for i := range 20 {
		reqs = append(reqs, [][]byte{a, b}[i%2])
	}
	want := make([]int, 20)
	for _, i := range []int{0, 1, 2, 3, 15} {
		want[i] = k
	}
	if kept := checkSameBlocks(t, reqs...); !slices.Equal(kept, want) {
		t.Errorf("alternating blocks kept %v, want %v", kept, want)
	}
	// The same block from the 13th request on: kept at the 16th, found at the 17th, then kept
	// with each request.
	reqs = reqs[:12]
	want = want[:12]
	for range 12 {
		reqs = append(reqs, a)
	}
	want = append(want, 0, 0, 0, k, k, k, k, k, k, k, k, k)
	if kept := checkSameBlocks(t, reqs...); !slices.Equal(kept, want) {
		t.Errorf("alternating, then the same block: kept %v, want %v", kept, want)
	}
}

// FuzzHeadScanSameBlock: whatever a connection's requests before it were (its headScan keeping
// the last header block), a request is found as a new scan finds it, the same request again
// (which finds the block kept) included.
func FuzzHeadScanSameBlock(f *testing.F) {
	for _, s := range [][2]string{
		{"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab", "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\na"},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r\n\r\n"},
		{"GET / HTTP/1.1\r\nhost: a:1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a:1\r\nhost: a:1\r\n\r\n"},
		{"GET / HTTP/1.1\r\nHost:\r\n\r\n", "GET / HTTP/1.1\r\nHost:\r\n\r\n"},
		{"POST / HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1", "POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n\r\n"},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > maxHeadScan || len(b) > maxHeadScan {
			return
		}
		checkSameBlocks(t, a, b, b, a, a, b)
	})
}
