package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
)

// rawOrigin answers every request on 127.0.0.1 with the given bytes (one answer per request
// on a kept-alive connection) and returns its address.
func rawOrigin(t *testing.T, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveRaw(t, ln, func(net.Conn) string { return answer })
	return ln.Addr().String()
}

// serveRaw answers every request that arrives on ln with the bytes answer returns for its
// connection (one answer per request on a kept-alive connection), until the test ends.
func serveRaw(t *testing.T, ln net.Listener, answer func(c net.Conn) string) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if _, err := c.Write([]byte(answer(c))); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// TestForwardKeepsRawHeaders: the recorded headers are node's rawHeaders, in the origin's
// order and case, the headers fasthttp parses into fields of their own included.
func TestForwardKeepsRawHeaders(t *testing.T) {
	tests := []struct{ name, answer, want string }{
		{"special headers in place and case",
			"HTTP/1.1 201 Created\r\nX-Origin: yes\r\ncontent-type: text/plain\r\nSet-Cookie: a=1\r\nserver: o\r\nx-lower: v\r\nSet-Cookie: b=2\r\ncontent-length: 2\r\nContent-Encoding: identity\r\n\r\nhi",
			`{"statusCode":201,"headers":{"X-Origin":"yes","content-type":"text/plain","Set-Cookie":["a=1","b=2"],"server":"o","x-lower":"v","content-length":"2","Content-Encoding":"identity"},"body":"hi","_mode":"text"}`},
		{"chunked and connection close",
			"HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nX-A:  spaced \r\n\r\n2\r\nhi\r\n0\r\n\r\n",
			`{"statusCode":200,"headers":{"Connection":"close","Transfer-Encoding":"chunked","X-A":"spaced"},"body":"hi","_mode":"text"}`},
		{"a repeat after an empty value replaces it",
			"HTTP/1.1 200 OK\r\nX-E: \r\nX-E: \r\nX-F: \r\nX-F: z\r\nX-G: y\r\nX-G: \r\nContent-Length: 0\r\n\r\n",
			`{"statusCode":200,"headers":{"X-E":"","X-F":"z","X-G":["y",""],"Content-Length":"0"},"body":"","_mode":"text"}`},
		{"latin1 value",
			"HTTP/1.1 200 OK\r\nX-L: caf\xe9\r\nContent-Length: 0\r\n\r\n",
			`{"statusCode":200,"headers":{"X-L":"café","Content-Length":"0"},"body":"","_mode":"text"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, cerr := Compile(config.NewObject("to", "http://"+rawOrigin(t, tt.answer)), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			for i := 0; i < 2; i++ { // the second one on a kept-alive connection when there is one
				got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/x")})
				if err != nil {
					t.Fatal(err)
				}
				if s := string(config.MarshalJSON(got, 0)); s != tt.want {
					t.Errorf("request %d: got  %s\nwant %s", i+1, s, tt.want)
				}
			}
		})
	}
}

// rawHeadersSearched is rawHeaders with its lines split by searching for "\r\n", as it was.
func rawHeadersSearched(block []byte, add func(name string, value []byte)) {
	first := true
	for len(block) > 0 {
		line := block
		if i := bytes.Index(block, []byte("\r\n")); i >= 0 {
			line, block = block[:i], block[i+2:]
		} else {
			block = nil
		}
		if first || len(line) == 0 {
			first = false
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			continue
		}
		add(headerName(line[:colon]), bytes.Trim(line[colon+1:], " \t"))
	}
}

// FuzzRawHeaders: rawHeaders, which reads the header lines where checkHeadLines found them,
// gives what splitting the block by searching for "\r\n" gives, for every head checkHead
// reads whole (empty lines before it, empty values, spaces and tabs around values, obs-text).
func FuzzRawHeaders(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A: a b \t\r\nX-B:\r\nX-C: \t \r\n\r\n"))
	f.Add([]byte("\r\n\nHTTP/1.0 404\r\nX-Latin:caf\xe9\r\ncontent-length:  12 \r\nA:\t\tb\tc\r\n\r\nbody"))
	f.Add([]byte("RTSP/1.0 200 OK\r\nCSeq: 1\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		start, end, lines, perr := checkHeadLines(b, nil)
		if perr != nil || end == 0 {
			return
		}
		block := b[start:end]
		list := func(split func(func(string, []byte))) string {
			var out []string
			split(func(name string, value []byte) { out = append(out, fmt.Sprintf("%q=%q", name, value)) })
			return strings.Join(out, ",")
		}
		n := 0
		got := list(func(add func(string, []byte)) {
			rawHeaders(block, lines, func(i int, name string, value []byte) {
				if i != n {
					t.Fatalf("rawHeaders(%q): line %d given as %d", block, n, i)
				}
				n++
				add(name, value)
			})
		})
		want := list(func(add func(string, []byte)) { rawHeadersSearched(block, add) })
		if got != want {
			t.Errorf("rawHeaders(%q):\n%s\nwant\n%s", block, got, want)
		}
	})
}

// TestOtherProtocolsReadAsHTTP: an answer whose status line begins with RTSP/ or ICE/ (node's
// parser reads them as HTTP's; fasthttp refuses them) is read as an HTTP answer of its version
// (HTTP/1.0 for one fasthttp does not know), the empty lines before it skipped.
func TestOtherProtocolsReadAsHTTP(t *testing.T) {
	for _, tc := range []struct{ in, status, body string }{
		{"RTSP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", "200", "hi"},
		{"ICE/1.0 201 Created\r\nContent-Length: 3\r\n\r\nice", "201", "ice"},
		{"RTSP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "404", "abc"},
		{"RTSP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nv2", "200", "v2"},
		{"\r\n\r\nICE/1.0 200 OK\r\nContent-Length: 4\r\n\r\nlead", "200", "lead"},
		{"RTSP/1.0 200 OK\r\nX-A: b\r\n\r\nuntil close", "200", "until close"},
	} {
		br := bufio.NewReader(strings.NewReader(tc.in))
		block, skip, _, _, err := peekHeader(br, nil, nil)
		if err != nil || block == nil {
			t.Fatalf("%q: peekHeader: %q, %v", tc.in, block, err)
		}
		rd, err := asHTTP(br, block, skip)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		var resp fasthttp.Response
		if err := resp.Read(rd); err != nil {
			t.Fatalf("%q: fasthttp cannot read it: %v", tc.in, err)
		}
		if got := strconv.Itoa(resp.StatusCode()); got != tc.status || string(resp.Body()) != tc.body {
			t.Errorf("%q: %s %q, want %s %q", tc.in, got, resp.Body(), tc.status, tc.body)
		}
	}
}

// TestInternerLines: a header value is decodeLatin1 of its bytes whatever the answers before
// it had at its place: the same ASCII (taken from the line before), other text, a Latin-1 value
// and then the UTF-8 bytes of its decoding (which must not be taken for it), lines past
// maxLines, long values, fewer and more lines than before.
func TestInternerLines(t *testing.T) {
	long := strings.Repeat("v", maxInterned+1)
	answers := [][]string{
		{"text/plain", "24", "caf\xe9", "x"},
		{"text/plain", "24", "caf\xc3\xa9", "y"},
		{"text/plain", "25", "caf\xe9", "caf\xc3\xa9", long},
		{"text/html"},
		{"text/html", "", "caf\xc3\xa9", "caf\xe9", long, "z"},
	}
	var many []string
	for i := range maxLines + 3 {
		many = append(many, "line "+strconv.Itoa(i%3))
	}
	answers = append(answers, many, many, answers[0])
	var in interner
	for n, values := range answers {
		for i, v := range values {
			got := in.latin1At(i, []byte(v))
			if s, ok := got.(string); !ok || s != decodeLatin1([]byte(v)) {
				t.Fatalf("answer %d, line %d (%q): %q, want %q", n, i, v, got, decodeLatin1([]byte(v)))
			}
		}
	}
}
