package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestStubsAddedOneAtATimeAreBoundedTogether: --admin-max-indent bounds an imposter's stubs
// together, not each request's body alone. Two stubs nested 600 deep are each under 1 MiB of
// indentation, not both: the second is refused (400 bad data) and the imposter stays as it
// was. mockd took stub after stub, each answer printing them all (64 stubs nested 2,000 deep
// under the default bound: 515 MB a GET, 1 GB kept).
func TestStubsAddedOneAtATimeAreBoundedTogether(t *testing.T) {
	s := start(t, "--admin-max-indent", "1MiB")
	port := listenFree(t)
	self := s.Admin + "/imposters/" + strconv.Itoa(port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"kept"}}]}]}`, port)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	stub := `{"responses":[{"is":{"body":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}]}`
	if status, _, body := do(t, "POST", self+"/stubs", `{"stub":`+stub+`}`); status != 200 {
		t.Fatalf("first deep stub: %d %.300s", status, body)
	}
	status, _, body := do(t, "POST", self+"/stubs", `{"stub":`+stub+`}`)
	if status != 400 || !strings.Contains(body, `"code": "bad data"`) || !strings.Contains(body, "--admin-max-indent") {
		t.Fatalf("second deep stub: %d %.300s", status, body)
	}
	if status, _, body := do(t, "PUT", self+"/stubs/1", stub); status != 200 {
		t.Fatalf("the deep stub replaced: %d %.300s", status, body)
	}
	status, _, body = do(t, "GET", self, "")
	var got struct{ Stubs []any }
	if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil || len(got.Stubs) != 2 {
		t.Fatalf("GET: %d %v, %d stubs", status, err, len(got.Stubs))
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); status != 200 || body != "kept" {
		t.Fatalf("the imposter: %d %q", status, body)
	}
}

// TestLargeAdminAnswersAreStreamed: an admin answer past 4 MiB is streamed (chunked), byte
// for byte what the whole answer was: three stubs nested 900 to 1,100 deep are 6 MB printed.
func TestLargeAdminAnswersAreStreamed(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	deep := func(d int) string {
		return `{"responses":[{"is":{"body":` + strings.Repeat("[", d) + strings.Repeat("]", d) + `}}]}`
	}
	status, h, created := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s,%s,%s]}`, port, deep(1000), deep(900), deep(1100)))
	if status != 201 || h.Get("Content-Length") != strconv.Itoa(len(created)) || len(created) < 5_000_000 {
		t.Fatalf("create: %d %v, %d bytes", status, h, len(created))
	}
	status, h, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if status != 200 || body != created || h.Get("Content-Length") != "" {
		t.Fatalf("GET: %d %v, %d bytes, want the %d of the POST's answer, streamed", status, h, len(body), len(created))
	}
	status, h, body = do(t, "GET", s.Admin+"/imposters?replayable=true", "")
	if status != 200 || len(body) < 5_000_000 || h.Get("Content-Length") != "" || !json.Valid([]byte(body)) {
		t.Fatalf("GET /imposters: %d %v, %d bytes", status, h, len(body))
	}
}
