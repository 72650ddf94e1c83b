package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSchemaCommandPrintsTheShippedSchema: `mockd schema` prints schema/mockd.schema.json.
func TestSchemaCommandPrintsTheShippedSchema(t *testing.T) {
	out, err := exec.Command(mockdBin, "schema").Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../schema/mockd.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("mockd schema printed %d bytes that differ from schema/mockd.schema.json (%d bytes)", len(out), len(want))
	}
}

func healthcheck(args ...string) (string, error) {
	out, err := exec.Command(mockdBin, append([]string{"healthcheck", "--host", "127.0.0.1"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestHealthcheck: exit 0 when the admin API answers and, with --imposters, every imposter
// accepts connections; exit 1 naming what failed otherwise.
func TestHealthcheck(t *testing.T) {
	free := refusedPort(t)
	if out, err := healthcheck("--port", fmt.Sprint(free)); err == nil || !strings.Contains(out, "no mockd (or Mountebank) is running") {
		t.Errorf("healthcheck with nothing running: err=%v\n%s", err, out)
	}
	s := start(t, "--apikey", "secret")
	port := strings.TrimPrefix(s.Admin, "http://127.0.0.1:")
	if out, err := healthcheck("--port", port); err == nil || !strings.Contains(out, "401") {
		t.Errorf("healthcheck without the API key: err=%v\n%s", err, out)
	}
	imp := listenFree(t)
	if code, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol": "tcp", "port": %d}`, imp), "x-api-key", "secret"); code != 201 {
		t.Fatalf("POST /imposters: %d %s", code, body)
	}
	out, err := healthcheck("--port", port, "--apikey", "secret", "--imposters")
	if err != nil || !strings.Contains(out, "ok: http://127.0.0.1:"+port+" answers with 1 imposters") {
		t.Errorf("healthcheck --imposters of a healthy mockd: err=%v\n%s", err, out)
	}
	// An imposter whose port stops accepting fails the check: stand a closed port in with a
	// fake admin API that lists it.
	closed := refusedPort(t)
	fake := serveLoopback(t, func(c net.Conn) {
		// Read the request before answering: an answer that arrives before the request is
		// written is one Go's client may take for an unsolicited response and drop.
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		body := fmt.Sprintf(`{"imposters": [{"protocol": "http", "port": %d}]}`, closed)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	})
	_, fakePort, _ := net.SplitHostPort(fake)
	if out, err := healthcheck("--port", fakePort); err != nil {
		t.Errorf("healthcheck without --imposters: err=%v\n%s", err, out)
	}
	if out, err := healthcheck("--port", fakePort, "--imposters"); err == nil || !strings.Contains(out, fmt.Sprintf("http imposter %d", closed)) {
		t.Errorf("healthcheck --imposters with a closed imposter port: err=%v\n%s", err, out)
	}
}
