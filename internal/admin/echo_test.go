package admin

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// The answer to DELETE /imposters/:port is the imposter as it is then, whether or not the
// answer to its POST is sent again (see createdEcho): the same bytes when nothing changed, the
// change otherwise (a request it answered, a stub added), and what the DELETE's query asks.
func TestDeleteAnswersTheImposterAsItIsNow(t *testing.T) {
	a, _ := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	c := inmemClient(t, a, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	doc := `{"protocol":"http","port":` + port + `,"stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]}]}`
	for _, tc := range []struct {
		name    string
		between func(t *testing.T)
		query   string
		same    bool
		want    string // in the DELETE's answer
	}{
		{name: "nothing changed", same: true},
		{name: "nothing changed again", same: true},
		{name: "a request", between: func(t *testing.T) {
			if code, _, _ := httpGet(t, "http://127.0.0.1:"+port+"/a"); code != 200 {
				t.Fatalf("imposter answered %d", code)
			}
		}, want: `"numberOfRequests": 1`},
		{name: "a stub added", between: func(t *testing.T) {
			if got, err := do(t, c, "POST", "/imposters/"+port+"/stubs", `{"stub":{"responses":[{"is":{"body":"b"}}]}}`); err != nil || got.status != 200 {
				t.Fatalf("adding a stub: %v %d %s", err, got.status, got.body)
			}
		}, want: `"body": "b"`},
		{name: "replayable", query: "?replayable=true", want: `"stubs"`},
		{name: "another imposter on the port", between: func(t *testing.T) {
			other := strings.Replace(doc, `"body":"a"`, `"body":"c"`, 1)
			if got, err := do(t, c, "PUT", "/imposters", `{"imposters":[`+other+`]}`); err != nil || got.status != 200 {
				t.Fatalf("replacing the imposters: %v %d %s", err, got.status, got.body)
			}
		}, want: `"body": "c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, err := do(t, c, "POST", "/imposters", doc)
			if err != nil || created.status != 201 {
				t.Fatalf("POST: %v %d %s", err, created.status, created.body)
			}
			if tc.between != nil {
				tc.between(t)
			}
			want, err := do(t, c, "GET", "/imposters/"+port+tc.query, "")
			if err != nil || want.status != 200 {
				t.Fatalf("GET: %v %d %s", err, want.status, want.body)
			}
			deleted, err := do(t, c, "DELETE", "/imposters/"+port+tc.query, "")
			if err != nil || deleted.status != 200 {
				t.Fatalf("DELETE: %v %d %s", err, deleted.status, deleted.body)
			}
			if deleted.body != want.body {
				t.Errorf("DELETE answered\n%s\nwant (GET just before)\n%s", deleted.body, want.body)
			}
			if tc.same != (deleted.body == created.body) {
				t.Errorf("DELETE's answer the same as POST's: %v, want %v", deleted.body == created.body, tc.same)
			}
			if !strings.Contains(deleted.body, tc.want) {
				t.Errorf("DELETE's answer has no %s:\n%s", tc.want, deleted.body)
			}
			if deleted.headers["Content-Type"] != created.headers["Content-Type"] {
				t.Errorf("Content-Type %q, want %q", deleted.headers["Content-Type"], created.headers["Content-Type"])
			}
		})
	}
}
