package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestLargeRequestBodiesOnOneConnection: large request bodies (over the request view's 64 KiB
// arena, which mockd reads without copying them) sent one after the other on one keep-alive
// connection keep what each request showed: a body an inject kept in its state, the bodies
// recordRequests kept (GET /imposters/:port), and a body predicate on a 1 MiB body, while stubs
// on method and path alone answer the bodies in between. Through the real binary.
func TestLargeRequestBodiesOnOneConnection(t *testing.T) {
	s := start(t, "--allowInjection")
	for _, recorded := range []bool{false, true} {
		t.Run("recordRequests="+strconv.FormatBool(recorded), func(t *testing.T) {
			largeBodiesOnOneConnection(t, s, recorded)
		})
	}
}

func largeBodiesOnOneConnection(t *testing.T, s *server, record bool) {
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":%t,"stubs":[
		{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],"responses":[{"is":{"body":"stored"}}]},
		{"predicates":[{"equals":{"path":"/state"}}],"responses":[{"inject":%s}]},
		{"predicates":[{"endsWith":{"body":"NEEDLE"}}],"responses":[{"is":{"body":"found"}}]}]}`, port, record,
		strconv.Quote(`function (config) { if (!config.state.first) { config.state.first = config.request.body; } `+
			`var f = config.state.first; return { body: f.length + ':' + f.substring(0, 3) + ':' + f.substring(f.length - 3) }; }`))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	type sent struct{ path, body string }
	var all []sent
	post := func(path, body, want string) {
		t.Helper()
		all = append(all, sent{path, body})
		if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		got := make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(br, got); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || string(got) != want {
			t.Fatalf("POST %s of %d bytes: %d %q, want 200 %q", path, len(body), resp.StatusCode, got, want)
		}
	}
	fill := func(prefix string, n int, c byte) string {
		return prefix + strings.Repeat(string(c), n-len(prefix)-3) + prefix
	}
	post("/upload", fill("aa1", 1<<20, 'a'), "stored")
	post("/state", fill("bb2", 200000, 'b'), "200000:bb2:bb2")
	post("/upload", fill("cc3", 1<<20, 'c'), "stored")
	post("/state", fill("dd4", 300000, 'd'), "200000:bb2:bb2") // the first body, as the state kept it
	post("/upload", fill("ee5", 70000, 'e'), "stored")
	post("/other", strings.Repeat("f", 1<<20)+"NEEDLE", "found")
	post("/state", "small", "200000:bb2:bb2")

	if !record {
		return
	}
	status, _, body := do(t, "GET", fmt.Sprintf("%s/imposters/%d", s.Admin, port), "")
	if status != 200 {
		t.Fatalf("GET imposter: %d", status)
	}
	recorded, _ := jsonBody(t, body)["requests"].([]any)
	if len(recorded) != len(all) {
		t.Fatalf("%d requests recorded, want %d", len(recorded), len(all))
	}
	for i, r := range recorded {
		req, _ := r.(map[string]any)
		if req["path"] != all[i].path || req["body"] != all[i].body {
			got, _ := req["body"].(string)
			t.Errorf("recorded request %d: %v, %d bytes, want %s, %d bytes", i, req["path"], len(got), all[i].path, len(all[i].body))
		}
	}
}
