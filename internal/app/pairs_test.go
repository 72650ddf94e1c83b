package app

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestCreateDeleteSamePortLoop: what a client suite does around each test, in a tight loop:
// POST /imposters on a port, a request to it (left on an open keep-alive connection), DELETE
// /imposters/:port, and POST the same port again at once. DELETE frees the port before it
// answers, so the next POST never fails with the port in use.
func TestCreateDeleteSamePortLoop(t *testing.T) {
	port := freePort(t)
	a, c, _ := startInmem(t, Options{Port: 2525, LogLevel: "warn"})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	create := `{"protocol":"http","port":` + strconv.Itoa(port) + `,"host":"127.0.0.1","stubs":[` +
		`{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`
	send := func(method, uri, body string, want int) {
		t.Helper()
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(method)
		req.SetRequestURI("http://localhost:2525" + uri)
		req.SetBodyString(body)
		if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != want {
			t.Fatalf("%s %s: %d %s", method, uri, resp.StatusCode(), resp.Body())
		}
	}
	n := 300
	if testing.Short() {
		n = 50
	}
	var open []net.Conn
	defer func() {
		for _, conn := range open {
			_ = conn.Close()
		}
	}()
	for i := range n {
		send("POST", "/imposters", create, 201)
		if i%10 == 0 { // now and then a request, its connection left open across the DELETE
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, conn)
			if _, err := conn.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
				t.Fatalf("pair %d: the imposter answered %q, %v", i, line, err)
			}
		}
		send("DELETE", "/imposters/"+strconv.Itoa(port), "", 200)
	}
}
