package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Header blocks and chunk extensions are bounded as node bounds them, on the admin API as on
// imposters. The admin API answered 431 to 1,000 small headers (fasthttp's 4 KiB read buffer)
// where Mountebank's admin API and every imposter answer 200; a chunk-size line with a megabyte
// of extensions was read (node answers 413 past 16 KiB and closes the connection).
func TestHeaderAndChunkExtensionBounds(t *testing.T) {
	s := start(t)
	admin := adminPort(t, s)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"hello"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	headers := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "x%d: 1\r\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, head string
		want       int
	}{
		{"1,000 headers", headers(1000), 200},
		{"a header of 16,300 bytes", "x: " + strings.Repeat("a", 16300) + "\r\n", 200},
		{"3,000 headers", headers(3000), 431},
		{"a header of 20 KiB", "x: " + strings.Repeat("a", 20<<10) + "\r\n", 431},
	} {
		for where, p := range map[string]int{"admin API": admin, "imposter": port} {
			path := "/"
			if p == admin {
				path = "/imposters"
			}
			answer, closed := rawExchange(t, p, "GET "+path+" HTTP/1.1\r\nHost: x\r\n"+tc.head+"Connection: close\r\n\r\n")
			if !closed || !strings.HasPrefix(answer, "HTTP/1.1 "+strconv.Itoa(tc.want)+" ") {
				t.Errorf("%s, %s: %.100q (closed %v), want %d", where, tc.name, answer, closed, tc.want)
			}
		}
	}

	chunked := "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"extensions of 16 KiB", "5;" + strings.Repeat("a", 16<<10) + "\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 200 OK"},
		{"extensions of 16 KiB and a byte", "5;" + strings.Repeat("a", 16<<10+1) + "\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 413 Payload Too Large\r\n"},
		{"a megabyte of extensions after a chunk", "5\r\nhello\r\n5;" + strings.Repeat("a", 1<<20) + "\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 413 Payload Too Large\r\n"},
		{"the last chunk's extensions past 16 KiB", "5\r\nhello\r\n0;" + strings.Repeat("a", 20<<10) + "\r\n\r\n", "HTTP/1.1 413 Payload Too Large\r\n"},
	} {
		// Connection: close after the body: the 200 case ends as the others do.
		answer, closed := rawExchange(t, port, strings.Replace(chunked, "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1)+tc.body)
		if !closed || !strings.HasPrefix(answer, tc.want) || strings.Count(answer, "HTTP/1.1 ") != 1 {
			t.Errorf("imposter, %s: %.100q (closed %v), want %q and the connection closed", tc.name, answer, closed, tc.want)
		}
	}
	if code, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); code != 200 || body != "hello" {
		t.Errorf("a good request after them: %d %q", code, body)
	}

	// The admin API streams its request bodies: the chunks are followed all the same.
	port2 := listenFree(t)
	imp2 := fmt.Sprintf(`{"protocol":"http","port":%d}`, port2)
	chunk := func(data, ext string) string { return fmt.Sprintf("%x;%s\r\n%s\r\n", len(data), ext, data) }
	post := "POST /imposters HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
	over := chunk(imp2[:10], strings.Repeat("a", 16<<10+1)) + chunk(imp2[10:], "") + "0\r\n\r\n"
	if answer, closed := rawExchange(t, admin, post+over); !closed || !strings.HasPrefix(answer, "HTTP/1.1 413 Payload Too Large\r\n") {
		t.Errorf("admin API, extensions of 16 KiB and a byte: %.100q (closed %v), want 413 and the connection closed", answer, closed)
	}
	if code, _, _ := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port2), ""); code != 404 {
		t.Errorf("admin API: the imposter of the refused body: GET %d, want 404", code)
	}
	ok := chunk(imp2[:10], "e="+strings.Repeat("a", 16<<10-1)) + chunk(imp2[10:], strings.Repeat("b", 16<<10)) + "0;" + strings.Repeat("c", 16<<10) + "\r\n\r\n"
	if answer, closed := rawExchange(t, admin, post+ok); !closed || !strings.HasPrefix(answer, "HTTP/1.1 201 ") {
		t.Errorf("admin API, extensions of 16 KiB: %.100q (closed %v), want 201", answer, closed)
	}
	if code, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port2), ""); code != 200 {
		t.Errorf("admin API: the imposter of the chunked body: %d %.200s", code, body)
	}
}

// An inject that stringifies a shared graph of objects of no prototype (forty levels, each
// naming the one below twice: 2^40 objects) ran on past --script-timeout and --script-memory,
// growing until the machine ran out of memory; it now gets its 500 like any script past a
// limit, the process stays well under a gigabyte, and the imposter answers after it.
func TestStringifyOfNullPrototypesIsBounded(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "2s", "--script-memory", "64MiB")
	port := listenFree(t)
	graph := `(function () { let o = Object.create(null); o.x = 1; for (let i = 0; i < 40; i++) { const p = Object.create(null); p.a = o; p.b = o; o = p; } return o; })()`
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/plain"}}],"responses":[{"inject":"function () { return { body: JSON.stringify(%s).length }; }"}]},
		{"predicates":[{"equals":{"path":"/list"}}],"responses":[{"inject":"function () { return { body: JSON.stringify(%s, ['a', 'b', 'x']).length }; }"}]},
		{"predicates":[{"equals":{"path":"/body"}}],"responses":[{"inject":"function () { return { body: %s }; }"}]},
		{"responses":[{"inject":"function (config) { return { body: JSON.stringify(Object.assign(Object.create(null), { path: config.request.path })) }; }"}]}]}`,
		port, graph, graph, graph)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, path := range []string{"/plain", "/list", "/body"} {
		status, _, body := do(t, "GET", base+path, "")
		if status != 500 || !strings.Contains(body, "invalid injection") || !strings.Contains(body, "timed out") && !strings.Contains(body, "memory") {
			t.Errorf("%s: %d %.300s, want 500 invalid injection, past a limit", path, status, body)
		}
	}
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 1<<30 {
		t.Errorf("peak resident memory %d MiB, want under 1 GiB", peak>>20)
	}
	if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != `{"path":"/good"}` {
		t.Errorf("a good request after them: %d %q", status, body)
	}
}
