package e2e

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHTTP10WithoutHeadersRecorded: an HTTP/1.0 request without header lines is answered and
// recorded with no headers, as Mountebank records it ({}); the Connection: close the HTTP
// parser assumes for HTTP/1.0 is not one the client sent.
func TestHTTP10WithoutHeadersRecorded(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	if code, got := createImposter(t, s.Admin, map[string]any{"protocol": "http", "port": port, "recordRequests": true,
		"stubs": []any{map[string]any{"responses": []any{map[string]any{"is": map[string]any{"body": "ok"}}}}}}); code != 201 {
		t.Fatalf("POST imposter: %d %v", code, got)
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte("GET /old HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(conn) // HTTP/1.0 without keep-alive: the server closes
	if !strings.HasPrefix(string(answer), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(answer), "\r\n\r\nok") {
		t.Fatalf("answer %q", answer)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	requests, _ := jsonBody(t, body)["requests"].([]any)
	if len(requests) != 1 {
		t.Fatalf("requests %v", requests)
	}
	req, _ := requests[0].(map[string]any)
	if h, _ := req["headers"].(map[string]any); req["path"] != "/old" || len(h) != 0 {
		t.Errorf("recorded %v, want path /old and headers {}", req)
	}
}
