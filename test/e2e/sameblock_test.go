package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSameHeaderBlockOnAConnection: a connection's requests that send the header block of the
// one before again (as clients do) are read as the first was; one that differs from it, or
// begins as it does and then goes on with a line node refuses, is read as it is. (The scan of
// the header lines finds a block equal to the connection's last as it found that one.)
func TestSameHeaderBlockOnAConnection(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[{"responses":[{"is":{"template":true,`+
		`"body":"{{request.headers.Host}}|{{request.headers.X-Trace}}|{{request.body}}"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c := dialImposter(t, "http", port)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	const block = "Host: x\r\nX-Trace: t-1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"
	for i, tc := range []struct {
		writes []string // the request, written a piece at a time
		want   string   // the answer's body, or "400" for a refusal (the connection closed)
	}{
		{[]string{"POST /a HTTP/1.1\r\n" + block + "hello"}, "x|t-1|hello"},
		{[]string{"POST /b HTTP/1.1\r\n" + block + "hello"}, "x|t-1|hello"},
		{[]string{"POST /c HTTP/1.1\r\n" + block + "he", "llo"}, "x|t-1|hello"},
		{[]string{"POST /d HTTP/1.1\r\n" + strings.Replace(block, "t-1", "t-2", 1) + "world"}, "x|t-2|world"},
		{[]string{"POST /e HTTP/1.1\r\n" + strings.Replace(block, "Host: x", "Host: a b", 1) + "hello"}, "a b|t-1|hello"},
		{[]string{"POST /f HTTP/1.1\r\n" + block + "hello"}, "x|t-1|hello"},
		{[]string{"POST /g HTTP/1.1\r\n" + block + "hello"}, "x|t-1|hello"},
		{[]string{"POST /h HTTP/1.1\r\n" + block[:len(block)-2] + " folded\r\n\r\nhello"}, "400"},
	} {
		for _, w := range tc.writes {
			if _, err := io.WriteString(c, w); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			time.Sleep(20 * time.Millisecond) // each piece a read of its own
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if tc.want == "400" {
			if resp.StatusCode != 400 {
				t.Fatalf("request %d: %d %q, want 400", i, resp.StatusCode, body)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("request %d: the connection is still open after a 400 (%v)", i, err)
			}
			continue
		}
		if resp.StatusCode != 200 || string(body) != tc.want {
			t.Fatalf("request %d: %d %q, want 200 %q", i, resp.StatusCode, body, tc.want)
		}
	}
	_, _, recorded := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g"} {
		if !strings.Contains(recorded, `"path": "`+p+`"`) {
			t.Errorf("request %s not recorded:\n%s", p, recorded)
		}
	}
	if strings.Contains(recorded, `"/h"`) || strings.Count(recorded, `"X-Trace": "t-1"`) != 6 || !strings.Contains(recorded, `"Host": "a b"`) {
		t.Errorf("recorded requests are not those sent:\n%s", recorded)
	}
}
