package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Request lines node (so Mountebank 2.9.1) reads and fasthttp refuses are read as node reads
// them: extra spaces around the target, a target `*?query` (path "/*"), a line without a
// version (HTTP/0.9, headers and all). Each want is what Mountebank recorded; mockd answered
// them 400 before.
func TestOddRequestLines(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[{"responses":[{"is":{"body":"hello"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	for line, want := range map[string]string{
		"GET  /x HTTP/1.1":             `GET /x {}`,
		"GET /x   HTTP/1.1":            `GET /x {}`,
		"GET  http://h/y?z=1 HTTP/1.1": `GET /y {"z":"1"}`,
		"OPTIONS *?a=1 HTTP/1.1":       `OPTIONS /* {"a":"1"}`,
		"GET /v?q=1":                   `GET /v {"q":"1"}`,
		"GET ** HTTP/1.1":              `GET /** {}`,
		"M-SEARCH  /m":                 `M-SEARCH /m {}`,
	} {
		do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port)+"/savedRequests", "")
		answer, closed := rawExchange(t, port, line+"\r\nHost: x\r\nConnection: close\r\n\r\n")
		if !closed || !strings.HasPrefix(answer, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(answer, "hello") {
			t.Errorf("%q: answered %q (closed %v), want 200 hello", line, answer, closed)
			continue
		}
		_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
		var got struct {
			Requests []struct {
				Method, Path string
				Query        map[string]any
				Headers      map[string]any
			}
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Requests) != 1 {
			t.Errorf("%q: recorded %s", line, body)
			continue
		}
		r := got.Requests[0]
		q, _ := json.Marshal(r.Query)
		if g := r.Method + " " + r.Path + " " + string(q); g != want || r.Headers["Host"] != "x" {
			t.Errorf("%q: recorded %q, headers %v; want %q", line, g, r.Headers, want)
		}
	}
	for _, line := range []string{"GET ", "GET /x HTTP/1.1 ", "GET  "} {
		if answer, _ := rawExchange(t, port, line+"\r\nHost: x\r\n\r\n"); !strings.HasPrefix(answer, "HTTP/1.1 400") {
			t.Errorf("%q: answered %q, want 400 as node answers", line, answer)
		}
	}
}
