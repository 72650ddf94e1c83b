package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// adminPort is the port of s's admin API.
func adminPort(t *testing.T, s *server) int {
	t.Helper()
	u, err := url.Parse(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// The admin API's request bodies are bounded one by one (413) and together (503): six clients
// posting 200 MB imposter files at once took mockd to 5.4 GB resident, as each body was read in
// full, and parsed, beside the others. A body held back by its client keeps its part of the
// budget until it ends or --header-timeout does; the imposters keep answering throughout.
func TestAdminBodiesAreBounded(t *testing.T) {
	s := start(t, "--admin-max-body", "1MiB", "--header-timeout", "10m")
	admin := adminPort(t, s)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"%s"}}]}]}`, port, strings.Repeat("x", 900_000))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("a body of 900 KB, under the limit: %d %.300s", status, body)
	}
	if status, _, body := do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("delete: %d %.300s", status, body)
	}
	// A chunked body under the limit is read as one with a length.
	if status, _, body := doChunked(t, s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("a chunked body of 900 KB: %d %.300s", status, body)
	}
	do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), "")

	// (The answer comes once the body has begun: the first 8 KiB are read with the headers.)
	if got := rawStatus(t, admin, "POST /imposters HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n"+strings.Repeat(" ", 16<<10)); got != 413 {
		t.Errorf("a body of 1 MiB + 1 byte: status %d, want 413", got)
	}
	if status, _, body := doChunked(t, s.Admin+"/imposters", strings.Repeat(" ", 1<<20+1)); status != 413 {
		t.Errorf("a chunked body of 1 MiB + 1 byte: %d %.300s, want 413", status, body)
	}

	// A client announces 900 KB and stops after 100 KB: its body holds most of the budget.
	// Until its body is being read, the budget is all there: wait for the first refusal. (A
	// body posted as the held one arrives may take the budget first: the held one is then
	// refused, and sent again.)
	held := holdBody(t, admin)
	other := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"%s"}}]}]}`, port, strings.Repeat("y", 200_000))
	for deadline := time.Now().Add(2 * time.Minute); ; {
		status, _, body := do(t, "POST", s.Admin+"/imposters", other)
		if status == 503 {
			if !strings.Contains(body, `"code":"admin API busy"`) || !strings.Contains(body, "--admin-max-body") {
				t.Errorf("a body past what is left of the budget: 503 %.300s, want the errors naming --admin-max-body", body)
			}
			break
		}
		if status != 201 || time.Now().After(deadline) {
			t.Fatalf("a body of 200 KB beside the held one: %d %.300s, want 503", status, body)
		}
		do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), "")
		_ = held.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if n, _ := held.Read(make([]byte, 1)); n > 0 {
			_ = held.Close()
			held = holdBody(t, admin)
		}
	}
	// Small bodies, and the imposters, are served meanwhile.
	port2 := listenFree(t)
	small := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"small"}}]}]}`, port2)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", small); status != 201 {
		t.Fatalf("a small body beside the held one: %d %.300s", status, body)
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port2)+"/", ""); status != 200 || body != "small" {
		t.Errorf("the imposter beside the held body: %d %q", status, body)
	}
	// The client that goes away gives its part back (its handler's read fails).
	_ = held.Close()
	postUntil(t, s.Admin+"/imposters", other, 201, port)

	// --header-timeout ends a held body, and gives its part back.
	s = start(t, "--admin-max-body", "1MiB", "--header-timeout", "1s")
	held = holdBody(t, adminPort(t, s))
	_ = held.SetReadDeadline(time.Now().Add(2 * time.Minute))
	answer, _ := io.ReadAll(held)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 408") {
		t.Errorf("a body held back past --header-timeout: %q, want 408", answer)
	}
	postUntil(t, s.Admin+"/imposters", imp, 201, port)
}

// holdBody sends POST /imposters to the admin port announcing 900 KB of body, sends 100 KB of
// it and returns the connection.
func holdBody(t *testing.T, admin int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(admin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "POST /imposters HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n"+strings.Repeat(" ", 100_000)); err != nil {
		t.Fatal(err)
	}
	return c
}

// postUntil posts body (an imposter on port) until it is answered want, the other answer
// being 201 or 503 (the imposter made is deleted), for two minutes at most; it returns the
// last answer.
func postUntil(t *testing.T, target, body string, want, port int) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		status, _, got := do(t, "POST", target, body)
		if status == 201 {
			do(t, "DELETE", strings.TrimSuffix(target, "/imposters")+"/imposters/"+strconv.Itoa(port), "")
		}
		if status == want {
			return status, got
		}
		if (status != 201 && status != 503) || time.Now().After(deadline) {
			t.Fatalf("POST %d bytes: %d %.300s, want %d", len(body), status, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// doChunked posts body with Transfer-Encoding: chunked, in chunks of 64 KiB.
func doChunked(t *testing.T, target, body string) (int, http.Header, string) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		_, _ = io.WriteString(w, body)
		_ = w.Flush()
		_ = pw.Close()
	}()
	req, err := http.NewRequest("POST", target, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
