package proxy

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/netconn"
)

// TestCheckHead: what node 20's parser (Mountebank 2.9.1's) says of origins' answers, each
// recorded from mb's 500 answer to a proxyTransparent request (code, reason, bytesParsed).
func TestCheckHead(t *testing.T) {
	for _, tc := range []struct {
		in, code, reason string
		at               int
	}{
		{"hello world", "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/", 0},
		{"HX", "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/", 1},
		{"HTTX/1.1 200 OK\r\n\r\n", "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/", 3},
		{"http/1.1 200 OK\r\n\r\n", "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/", 0},
		{" HTTP/1.1 200 OK\r\n\r\n", "HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/", 0},
		{"HTTP/2 200\r\n\r\n", "HPE_INVALID_VERSION", "Expected dot", 6},
		{"HTTP/1.x 200 OK\r\n\r\n", "HPE_INVALID_VERSION", "Invalid minor version", 7},
		{"HTTP/3.5 200 OK\r\n\r\n", "HPE_INVALID_VERSION", "Invalid HTTP version", 8},
		{"HTTP/1.11 200 OK\r\n\r\n", "HPE_INVALID_VERSION", "Expected space after version", 8},
		{"HTTP/1.1 abc OK\r\n\r\n", "HPE_INVALID_STATUS", "Invalid status code", 9},
		{"HTTP/1.1  200 OK\r\n\r\n", "HPE_INVALID_STATUS", "Invalid status code", 9},
		{"HTTP/1.1 20 OK\r\n\r\n", "HPE_INVALID_STATUS", "Invalid status code", 11},
		{"HTTP/1.1 1000 OK\r\n\r\n", "HPE_INVALID_STATUS", "Invalid response status", 12},
		{"HTTP/1.1 200\nContent-Length: 2\r\n\r\nok", "HPE_INVALID_STATUS", "Invalid response status", 13},
		{"HTTP/1.1 200 OK\nX: y\nContent-Length: 2\n\nok", "HPE_CR_EXPECTED", "Missing expected CR after response line", 16},
		{"HTTP/1.1 200 OK\rX\r\n\r\n", "HPE_STRICT", "Expected LF after CR", 16},
		{"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header token", 20},
		{"HTTP/1.1 200 OK\r\nX : y\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header token", 18},
		{"HTTP/1.1 200 OK\r\nX\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header token", 18},
		{"HTTP/1.1 200 OK\r\nX\tY: a\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header token", 18},
		{"HTTP/1.1 200 OK\r\n: a\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header token", 17},
		{"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", "HPE_INVALID_HEADER_TOKEN", "Invalid header value char", 21},
		{"HTTP/1.1 200 OK\r\nX: a\x7fb\r\nContent-Length: 2\r\n\r\nok", "HPE_INVALID_HEADER_TOKEN", "Invalid header value char", 21},
		{"HTTP/1.1 200 OK\r\nX: y\n\r\n", "HPE_CR_EXPECTED", "Missing expected CR after header value", 21},
		{"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "HPE_LF_EXPECTED", "Missing expected LF after header value", 22},
		{"HTTP/1.1 200 OK\r\n X: a\r\nContent-Length: 2\r\n\r\nok", "HPE_UNEXPECTED_SPACE", "Unexpected space after start line", 18},
		{"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok", "HPE_INVALID_HEADER_TOKEN", "Unexpected whitespace after header value", 23},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nok", "HPE_INVALID_HEADER_TOKEN", "Invalid header field char", 37},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\rxok", "HPE_STRICT", "Expected LF after headers", 37},
		{"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", "HPE_INVALID_CONTENT_LENGTH", "Invalid character in Content-Length", 33},
		{"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", "HPE_INVALID_CONTENT_LENGTH", "Invalid character in Content-Length", 33},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\nok", "HPE_INVALID_CONTENT_LENGTH", "Invalid character in Content-Length", 35},
		{"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nok", "HPE_INVALID_CONTENT_LENGTH", "Empty Content-Length", 34},
		{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nok", "HPE_INVALID_CONTENT_LENGTH", "Content-Length overflow", 53},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length", 52},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", "HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length", 52},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", "HPE_INVALID_TRANSFER_ENCODING", "Transfer-Encoding can't be present with Content-Length", 54},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n", "HPE_INVALID_CONTENT_LENGTH", "Content-Length can't be present with Transfer-Encoding", 60},
	} {
		_, _, perr := checkHead([]byte(tc.in))
		if perr == nil || perr.Code != tc.code || perr.Reason != tc.reason || perr.At != tc.at || string(perr.Packet) != tc.in {
			t.Errorf("checkHead(%q) = %+v; want %s %q at %d", tc.in, perr, tc.code, tc.reason, tc.at)
		}
	}
	// Answers node reads (mb proxied them), whole and cut anywhere (more is needed).
	for _, in := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
		"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
		"HTTP/0.9 200 OK\r\nContent-Length: 2\r\n\r\n",
		"HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\n",
		"RTSP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
		"ICE/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 999 OK\r\n\r\n",
		"HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 \xe9t\xe9\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2 \r\n\r\n",
		"HTTP/1.1 200 OK\r\nX:\ty\tz\r\nX: a\xe9b\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
	} {
		start, end, perr := checkHead([]byte(in))
		if perr != nil || end != len(in) || start != strings.Index(in, "HTTP") && start != strings.IndexAny(in, "RI") {
			t.Errorf("checkHead(%q) = %d, %d, %v; want the whole head", in, start, end, perr)
		}
		for n := 0; n < len(in); n++ {
			if _, end, perr := checkHead([]byte(in[:n])); perr != nil || end != 0 {
				t.Errorf("checkHead(%q) = %d, %v; want more", in[:n], end, perr)
			}
		}
	}
}

// TestForwardNotHTTP: an origin whose answer node cannot parse fails the request with node's
// parse error, rendered as Mountebank renders it; one that closes in the middle of its head
// cannot be connected to (node's socket hang up), as for Mountebank (test/compat scenario
// proxy-origin-not-http).
func TestForwardNotHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		keepOpen     bool
		want         string
	}{
		{"garbage, kept open", "hello", true, `{"bytesParsed":0,"code":"HPE_INVALID_CONSTANT","reason":"Expected HTTP/, RTSP/ or ICE/","rawPacket":{"type":"Buffer","data":[104,101,108,108,111]},"message":"Parse Error: Expected HTTP/, RTSP/ or ICE/","name":"Error"}`},
		{"bad header", "HTTP/1.1 200 OK\r\nA B\r\n\r\n", false, `{"bytesParsed":18,"code":"HPE_INVALID_HEADER_TOKEN","reason":"Invalid header token","rawPacket":{"type":"Buffer","data":[72,84,84,80,47,49,46,49,32,50,48,48,32,79,75,13,10,65,32,66,13,10,13,10]},"message":"Parse Error: Invalid header token","name":"Error"}`},
		{"cut in its head", "HTTP/1.1 200 OK\r\nX: y", false, "Unable to connect"},
		{"cut in its status line", "HTTP/1.1 20", false, "Unable to connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := hostileOrigin(t, func(c net.Conn) {
				_, _ = c.Write([]byte(tc.answer))
				if tc.keepOpen {
					_, _ = c.Read(make([]byte, 1)) // until the proxy closes it
				}
			})
			p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a threshold
			defer cancel()
			_, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")})
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Forward = %v; want a config.Error", err)
			}
			got := ce.Message
			if ce.Raw != nil {
				got = string(config.MarshalJSON(ce.Raw, 0))
			}
			if !strings.HasPrefix(got, tc.want) || ctx.Err() != nil {
				t.Errorf("Forward failed with %s; want %s", got, tc.want)
			}
		})
	}
}

// FuzzCheckHead: reading an origin's answer as node does never panics; an error points into
// what was read and carries it; an accepted head ends with its blank line, and every shorter
// part of it only asks for more.
func FuzzCheckHead(f *testing.F) {
	for _, s := range []string{"hello", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "\r\nRTSP/1.0 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", "HTTP/1.1 200\n", "ICE/2.0 999 \xff\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		start, end, perr := checkHead(b)
		if perr != nil {
			if perr.At < 0 || perr.At > len(b) || string(perr.Packet) != string(b) || end != 0 {
				t.Fatalf("%q: error %+v", b, perr)
			}
			return
		}
		if end == 0 {
			return
		}
		if start > end || end > len(b) || string(b[end-2:end]) != "\r\n" {
			t.Fatalf("%q: head %d..%d", b, start, end)
		}
		for n := 0; n < end; n++ {
			if _, e, p := checkHead(b[:n]); e != 0 || p != nil {
				t.Fatalf("%q: its first %d bytes read as %d, %v", b, n, e, p)
			}
		}
	})
}

// TestCheckHeadValueBytes: every byte but CR (TestCheckHead has those) in a header value, at
// its start, middle and end, is read as node's parser reads it: a tab, a space, visible ASCII
// and bytes past ASCII are the value's; LF alone is refused as a line end without CR; any
// other control character and DEL are refused where they stand.
func TestCheckHeadValueBytes(t *testing.T) {
	const before = "HTTP/1.1 200 OK\r\nX-V: "
	for c := 0; c < 256; c++ {
		if c == '\r' {
			continue
		}
		for _, value := range []string{"@b", "a@b", "ab@"} {
			at := len(before) + strings.IndexByte(value, '@')
			value = strings.Replace(value, "@", string([]byte{byte(c)}), 1)
			in := before + value + "\r\nContent-Length: 0\r\n\r\n"
			_, end, perr := checkHead([]byte(in))
			want := ""
			switch {
			case c == '\n':
				want = "HPE_CR_EXPECTED"
			case c != '\t' && (c < 0x20 || c == 0x7f):
				want = "HPE_INVALID_HEADER_TOKEN"
			}
			switch {
			case want == "" && (perr != nil || end != len(in)):
				t.Errorf("%q: %v (end %d), want the head read whole", in, perr, end)
			case want != "" && (perr == nil || perr.Code != want || perr.At != at):
				t.Errorf("%q: %v, want %s at %d", in, perr, want, at)
			}
		}
	}
}

// valueRunBytes is valueRun one byte at a time, as checkHeadLines read values before.
func valueRunBytes(b []byte, i int) int {
	for i < len(b) && netconn.ValueByte(b[i]) {
		i++
	}
	return i
}

// TestValueRun: valueRun stops where the byte-wise loop does, at every place of texts with
// each byte a value may not hold (and a tab, DEL, 0x80 and 0xff) at every place.
func TestValueRun(t *testing.T) {
	base := []byte("Sat, 28 Nov 2026 02:46:21 GMT; charset=utf-8 \xc3\xa9t\xc3\xa9")
	for _, c := range []byte{0, 1, '\t', '\n', '\r', 0x1f, ' ', '~', 0x7f, 0x80, 0xff} {
		for at := range base {
			b := append([]byte(nil), base...)
			b[at] = c
			for i := range len(b) + 1 {
				if got, want := valueRun(b, i), valueRunBytes(b, i); got != want {
					t.Fatalf("byte %#x at %d, from %d: %d, want %d", c, at, i, got, want)
				}
			}
		}
	}
}

// FuzzValueRun: valueRun is the byte-wise loop.
func FuzzValueRun(f *testing.F) {
	f.Add([]byte("text/plain; charset=utf-8\r\n"), 0)
	f.Add([]byte("abcdefg\x7fhijklmnop\t\x1f"), 3)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		if got, want := valueRun(b, i), valueRunBytes(b, i); got != want {
			t.Fatalf("valueRun(%q, %d) = %d, want %d", b, i, got, want)
		}
	})
}
