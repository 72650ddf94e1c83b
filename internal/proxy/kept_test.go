package proxy

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestForwardKeeps: Forward keeps a plain answer's bytes when asked (not another's), and
// Kept.Answer makes of them the answer Forward returned: equal trees, the same JSON text.
func TestForwardKeeps(t *testing.T) {
	tests := []struct {
		name, answer string
		plain        bool
	}{
		{"text", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", true},
		{"binary", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\n\x89PN", true},
		{"gzip", "HTTP/1.1 200 OK\r\nContent-Encoding: x\r\ncontent-encoding: gzip\r\nContent-Length: 2\r\n\r\nzz", true},
		{"json closing", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 7\r\n\r\n{\"a\":1}", true},
		{"json odd", "HTTP/1.1 200 OK\r\nContent-Length: 29\r\n\r\n{\"a\":1,\"a\":-0,\"b\":[1e400,\"\"]}", true},
		{"number body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n-5", true},
		{"true body", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ntrue", true},
		{"empty body", "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", true},
		{"repeated and Latin-1", "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-E:\r\nset-cookie: b=2\r\nX-E: \t v \r\nSet-Cookie: c\r\nX-Latin: caf\xe9\r\n" +
			"Content-Length: 12\r\n\r\n\xc3\xa9t\xc3\xa9 \xff text", true},
		{"chunked", "HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", false},
		{"204", "HTTP/1.1 204 No Content\r\nX: y\r\n\r\n", false},
		{"RTSP", "RTSP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, cerr := Compile(config.NewObject("to", "http://"+rawOrigin(t, tt.answer)), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			for i := range 3 { // the second and third answers' texts are interned
				var k Kept
				got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/x"), Keep: &k})
				if err != nil {
					t.Fatal(err)
				}
				if k.Ok() != tt.plain {
					t.Fatalf("request %d: kept %v, want %v", i+1, k.Ok(), tt.plain)
				}
				if !k.Ok() {
					continue
				}
				again := k.Answer()
				if s, w := string(config.MarshalJSON(again, 0)), string(config.MarshalJSON(got, 0)); s != w {
					t.Errorf("request %d: kept answer\n%s\nForward's\n%s", i+1, s, w)
				}
				if !reflect.DeepEqual(again, got) {
					t.Errorf("request %d: kept answer %#v, Forward's %#v", i+1, again, got)
				}
			}
			var none Kept
			if _, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/x")}); err != nil || none.Ok() {
				t.Fatal(err, none.Ok())
			}
		})
	}
}

// FuzzKept: a plain head block and a body kept make the answer they were made into, whatever
// an interner kept of the answer before.
func FuzzKept(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\n"), []byte("order 7, from the origin"))
	f.Add([]byte("HTTP/1.1 500 E\r\nConnection: close\r\ncontent-encoding: br\r\nContent-Length: 0\r\n\r\n"), []byte{0xff, 0})
	f.Add([]byte("HTTP/1.1 302 Found\r\nSet-Cookie: a\r\nset-cookie: b\r\nX: caf\xe9\r\nCONTENT-TYPE:  a/b \r\nContent-Length:  12 \r\n\r\n"), []byte(`{"a":[1,-0]}`))
	f.Add([]byte("\r\nHTTP/1.1 200 OK\r\nX:\r\nX: 1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1\r\n\r\n"), []byte("5"))
	var arena keptArena // shared by the inputs: its blocks fill and are replaced
	f.Fuzz(func(t *testing.T, b, body []byte) {
		start, end, lines, perr := checkHeadLines(b, nil)
		if perr != nil || end == 0 {
			return
		}
		block := b[start:end]
		h, ok := plainHead(block, lines)
		if !ok {
			return
		}
		var in interner
		for i := range 2 { // the second with the first's texts interned
			want := buildAnswer(&in, h.status, body, nil, block, lines, h.ctype, h.cenc)
			k := keep(block, body)
			if i == 1 {
				k = arena.keep(block, body)
			}
			got := k.Answer()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("kept answer %#v, made %#v", got, want)
			}
			if s, w := config.MarshalJSON(got, 0), config.MarshalJSON(want, 0); string(s) != string(w) {
				t.Fatalf("kept answer\n%s\nmade\n%s", s, w)
			}
		}
	})
}

// TestInternerBinary: an interner decides binary as IsBinary does, for answers of the same
// Content-Type and Content-Encoding as the one before (kept) and of others, in any order.
func TestInternerBinary(t *testing.T) {
	answers := []struct{ ctype, cenc string }{
		{"text/plain", ""}, {"text/plain", ""}, {"image/png", ""}, {"text/plain", "gzip"},
		{"text/plain", ""}, {"", ""}, {"application/octet-stream", ""}, {"application/octet-stream", "x"},
		{"", "br"}, {"audio/", ""}, {"audio", ""}, {"text/plain", ""},
	}
	var in interner
	for i, a := range answers {
		ctype, cenc := []byte(a.ctype), []byte(a.cenc)
		if got, want := in.binary(ctype, cenc), IsBinary(a.cenc, a.ctype); got != want {
			t.Errorf("answer %d (%q, %q): binary %v, want %v", i+1, a.ctype, a.cenc, got, want)
		}
		if len(ctype) == 0 {
			continue
		}
		ctype[0] = 'X' // the caller's bytes are not kept
		if in.binary([]byte(a.ctype), cenc) != IsBinary(a.cenc, a.ctype) {
			t.Errorf("answer %d again: decided of bytes changed since", i+1)
		}
	}
}

// TestKeptArena: an arena keeps each answer's head block and body as keep does, however many
// it keeps after it (its blocks fill and are replaced; an answer longer than an eighth of one
// is kept on its own), and never from the caller's bytes.
func TestKeptArena(t *testing.T) {
	var a keptArena
	type kept struct {
		k          Kept
		head, body string
	}
	var all []kept
	for i, n := range []int{0, 1, 100, keptBlock / 8, keptBlock/8 + 1, keptBlock, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 50} {
		head := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nX-N: %d\r\n\r\n", i))
		body := bytes.Repeat([]byte{byte('a' + i)}, n)
		k := a.keep(head, body)
		all = append(all, kept{k, string(head), string(body)})
		head[0] = 'X'
		copy(body, "changed")
	}
	for i, e := range all {
		if want := keep([]byte(e.head), []byte(e.body)); e.k != want {
			t.Errorf("answer %d: kept %d bytes with a head of %d, want %d with %d", i, len(e.k.text), e.k.head, len(want.text), want.head)
		}
		if string(e.k.bytes()) != e.body {
			t.Errorf("answer %d: body %q, want %q", i, e.k.bytes(), e.body)
		}
	}
}
