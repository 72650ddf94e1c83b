package e2e

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLinesNodeRefuses: header and chunk lines that llhttp (Node 20, so Mountebank 2.9.1)
// refuses with 400 and fasthttp read are refused the same way, on an imposter and on the admin
// API, and a request hidden behind them is not answered: a folded header line (fasthttp dropped
// its continuation), a space in a header name, white space or a non-token character in a
// chunk-size line, a folded trailer line, a space in a trailer's name, a trailer line ending
// with a bare LF (held until --header-timeout before). The requests next to them, that both
// read, are answered.
func TestLinesNodeRefuses(t *testing.T) {
	s, port, admin := recordingServer(t, "hello")
	// The request behind closes its connection once answered: the exchange ends there.
	const next = "GET /smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	chunked := func(lines string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + lines + next
	}
	for _, tc := range []struct {
		name, data string
		refused    bool
	}{
		{"a folded header line", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n" + next, true},
		{"a header line folded with a tab", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tTransfer-Encoding: chunked\r\n\r\n" + next, true},
		{"a space in a header name", "GET / HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n" + next, true},
		{"a space after a chunk size", chunked("5 \r\nhello\r\n0\r\n\r\n"), true},
		{"a tab after a chunk size", chunked("5\t\r\nhello\r\n0\r\n\r\n"), true},
		{"a space in a chunk extension", chunked("5; a=b\r\nhello\r\n0\r\n\r\n"), true},
		{"an empty chunk extension", chunked("5;\r\nhello\r\n0\r\n\r\n"), true},
		{"a chunk extension value that is no token", chunked("5;a=b/c\r\nhello\r\n0\r\n\r\n"), true},
		{"a folded trailer line", chunked("5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"), true},
		{"a space in a trailer name", chunked("5\r\nhello\r\n0\r\nX-T : a\r\n\r\n"), true},
		{"a trailer line ending with a bare LF", chunked("5\r\nhello\r\n0\r\nX-T: a\n\r\n"), true},
		{"chunk extensions and trailers both read", chunked("5;a=b;c=\"d e\"\r\nhello\r\n0\r\nX-T: a b\r\n\r\n"), false},
	} {
		refusedOrBoth(t, tc.name, tc.data, tc.refused, port, admin)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if strings.Count(body, `"path": "/smuggled"`) != 1 {
		t.Errorf("the imposter recorded other than the one request behind a chunked body both read:\n%s", body)
	}
}

// recordingServer starts mockd with an imposter that records its requests and answers body,
// and returns the server, the imposter's port and the admin API's.
func recordingServer(t *testing.T, body string) (s *server, port, admin int) {
	t.Helper()
	s = start(t)
	port = listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[{"responses":[{"is":{"body":%q}}]}]}`, port, body)
	if status, _, answer := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, answer)
	}
	u, err := url.Parse(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ = strconv.Atoi(u.Port())
	return s, port, admin
}

// refusedOrBoth sends data, two requests on one connection, to each port: refused, it must be
// answered 400 alone and the connection closed; otherwise both requests are answered.
func refusedOrBoth(t *testing.T, name, data string, refused bool, ports ...int) {
	t.Helper()
	for _, p := range ports {
		answer, closed := rawExchange(t, p, data)
		if refused && (!closed || !strings.HasPrefix(answer, "HTTP/1.1 400 Bad Request") || strings.Count(answer, "HTTP/1.1 ") != 1) {
			t.Errorf("%s, port %d: answered %q (closed %v), want 400 alone and the connection closed", name, p, answer, closed)
		}
		if !refused && strings.Count(answer, "HTTP/1.1 ") != 2 {
			t.Errorf("%s, port %d: answered %q, want both requests answered", name, p, answer)
		}
	}
}

// TestSaveKeepsTheLastGoodFile: a mockd save that cannot write its file in full (here a file
// size limit, as a full disk or a SIGTERM midway) fails and leaves the file of the last save as
// it was, with no temporary file beside it; mockd truncated it first and left the part it had
// written. A save that succeeds replaces it, keeping its mode.
func TestSaveKeepsTheLastGoodFile(t *testing.T) {
	s := start(t)
	u, err := url.Parse(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"%s"}}]}]}`, listenFree(t), strings.Repeat("y", 50000))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %.200s", status, body)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mb.json")
	const last = `{"imposters":[{"protocol":"http","port":1,"name":"the last good save"}]}`
	if err := os.WriteFile(file, []byte(last), 0o600); err != nil {
		t.Fatal(err)
	}
	// ulimit -f 8: 4 KiB (blocks of 512 bytes in sh), less than the 50 KB to save.
	save := exec.Command("sh", "-c", `ulimit -f 8 && exec "$0" "$@"`, mockdBin, "save", "--port", u.Port(), "--host", "127.0.0.1", "--savefile", file)
	out, err := save.CombinedOutput()
	if err == nil {
		t.Fatalf("a save past the file size limit succeeded: %s", out)
	}
	if got, _ := os.ReadFile(file); string(got) != last {
		t.Errorf("the last good save became %d bytes: %.100q", len(got), got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left beside it: %v", entries)
	}
	if out, err := exec.Command(mockdBin, "save", "--port", u.Port(), "--host", "127.0.0.1", "--savefile", file).CombinedOutput(); err != nil {
		t.Fatalf("save: %v %s", err, out)
	}
	_, _, want := do(t, "GET", s.Admin+"/imposters?replayable=true", "")
	got, _ := os.ReadFile(file)
	if info, err := os.Stat(file); string(got) != want || err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a save that succeeds: %d bytes, want %d; mode %v", len(got), len(want), info.Mode())
	}
}
