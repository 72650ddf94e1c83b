package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBadInputChangesNothing sends malformed and invalid API requests and checks that the
// running imposter keeps serving exactly as before.
func TestBadInputChangesNothing(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"alive"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	_, _, before := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	// A port another process holds: a PUT naming it fails and the running imposter stays (it is
	// started on its own port only once every port it does not hold could be bound).
	busy := listenFree(t)
	holder, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(busy))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	put := fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"replaced"}}]}]},{"protocol":"http","port":%d}]}`, port, busy)

	bad := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/imposters", `{"protocol":`, 400, "invalid JSON"},
		{"POST", "/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port), 400, "EADDRINUSE"}, // as Mountebank 2.9.1
		{"POST", "/imposters", `{"protocol":"http","port":-5}`, 400, "bad data"},
		{"PUT", "/imposters", `{"imposters":[{"protocol":"nope"}]}`, 400, "bad data"},
		{"PUT", fmt.Sprintf("/imposters/%d/stubs", port), `{"stubs":[{"responses":[]}]}`, 400, "bad data"},
		{"PUT", fmt.Sprintf("/imposters/%d/stubs/5", port), `{"responses":[{"is":{}}]}`, 404, "bad data"},
		{"POST", fmt.Sprintf("/imposters/%d/stubs", port), `{"stub":{"responses":[{"inject":"function(){}"}]}}`, 400, "invalid injection"},
		{"GET", "/imposters/1", ``, 404, "no such resource"},
		{"PUT", "/imposters", put, 400, "EADDRINUSE"}, // Mountebank has deleted the running ones by then
	}
	for _, b := range bad {
		status, _, body := do(t, b.method, s.Admin+b.path, b.body)
		if status != b.status || !strings.Contains(body, `"code": "`+b.code+`"`) {
			t.Errorf("%s %s %s → %d %s, want %d with code %q", b.method, b.path, b.body, status, body, b.status, b.code)
		}
	}
	_, _, after := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if after != before {
		t.Errorf("imposter changed after rejected requests\nbefore: %s\nafter:  %s", before, after)
	}
	if _, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); body != "alive" {
		t.Errorf("imposter answers %q after rejected requests, want %q", body, "alive")
	}
}

// TestKeepAlive checks the deliberate difference from Mountebank: connections stay open unless a
// response sets Connection: close.
func TestKeepAlive(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/close"}}],"responses":[{"is":{"body":"bye","headers":{"Connection":"close"}}}]},
		{"responses":[{"is":{"body":"hi"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i, path := range []string{"/a", "/b", "/close"} {
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		status, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("request %d on the same connection: %v", i+1, err)
		}
		if !strings.HasPrefix(status, "HTTP/1.1 200") {
			t.Fatalf("request %d: status line %q", i+1, status)
		}
		length := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body := make([]byte, length)
		if _, err := r.Read(body); err != nil && length > 0 {
			t.Fatal(err)
		}
	}
	if _, err := r.ReadByte(); err == nil {
		t.Error("connection still open after a response with Connection: close")
	}
}

// TestMetrics checks GET /metrics uses Mountebank's metric names, labelled by imposter.
func TestMetrics(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"name":"shop","stubs":[{"predicates":[{"equals":{"path":"/hit"}}],"responses":[{"is":{"body":"x"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	do(t, "GET", base+"/hit", "")
	do(t, "GET", base+"/miss", "")
	do(t, "GET", base+"/miss", "")
	status, _, body := do(t, "GET", s.Admin+"/metrics", "")
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	label := fmt.Sprintf(`imposter="[http:%d shop] "`, port)
	for _, want := range []string{
		"mb_request_total{" + label + "} 3",
		"mb_no_match_total{" + label + "} 2",
		"mb_predicate_match_duration_seconds_count{" + label + "} 3",
		"mb_response_generation_duration_seconds_count{" + label + "} 3",
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
}

// TestMetricsTimeResponseGeneration checks that mb_response_generation_duration_seconds covers
// what Mountebank's does: building the response, behaviors included (a 200 ms wait here). Only a
// lower bound is checked: a slow machine makes it longer, never shorter.
func TestMetricsTimeResponseGeneration(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"x"},"_behaviors":{"wait":200}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); status != 200 || body != "x" {
		t.Fatalf("imposter: %d %q", status, body)
	}
	_, _, body := do(t, "GET", s.Admin+"/metrics", "")
	prefix := fmt.Sprintf(`mb_response_generation_duration_seconds_sum{imposter="[http:%d] "} `, port)
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			sum, err := strconv.ParseFloat(v, 64)
			if err != nil || sum < 0.2 {
				t.Fatalf("response generation took %q s in all, want at least the 0.2 s wait", v)
			}
			return
		}
	}
	t.Fatalf("GET /metrics lacks %q", prefix)
}

// TestNoMetrics checks --no-metrics: imposters answer as usual and GET /metrics is not served.
func TestNoMetrics(t *testing.T) {
	s := start(t, "--no-metrics")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"x"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); status != 200 || body != "x" {
		t.Fatalf("imposter: %d %q", status, body)
	}
	if status, _, _ := do(t, "GET", s.Admin+"/metrics", ""); status != 404 {
		t.Fatalf("GET /metrics with --no-metrics: %d, want 404", status)
	}
}

// TestListFollowsChanges polls GET /imposters (which mockd answers from its last rendering
// while nothing changed) across every kind of change the list shows.
func TestListFollowsChanges(t *testing.T) {
	s := start(t)
	pa, pb := listenFree(t), listenFree(t)
	for pb == pa {
		pb = listenFree(t)
	}
	if pa > pb {
		pa, pb = pb, pa
	}
	create := func(port int) {
		imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[{"responses":[{"is":{"body":"first"}}]}]}`, port)
		if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
			t.Fatalf("create %d: %d %s", port, status, body)
		}
	}
	type listed struct {
		Imposters []struct {
			Port             int
			NumberOfRequests *int
			Stubs            []any
		}
	}
	list := func(query string) listed {
		t.Helper()
		status, _, body := do(t, "GET", s.Admin+"/imposters"+query, "")
		if status != 200 {
			t.Fatalf("GET /imposters%s: %d %s", query, status, body)
		}
		var l listed
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatalf("GET /imposters%s: %v in %s", query, err, body)
		}
		return l
	}
	requests := func(want ...int) { // numberOfRequests of each listed imposter, in order
		t.Helper()
		for round := 0; round < 2; round++ { // the second answer comes from the kept rendering
			l := list("")
			if len(l.Imposters) != len(want) {
				t.Fatalf("listed %d imposters, want %d", len(l.Imposters), len(want))
			}
			for i, im := range l.Imposters {
				if im.NumberOfRequests == nil || *im.NumberOfRequests != want[i] {
					t.Fatalf("imposter %d (port %d): numberOfRequests %v, want %d", i, im.Port, im.NumberOfRequests, want[i])
				}
			}
		}
	}

	create(pa)
	requests(0)
	for i := 0; i < 2; i++ {
		do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(pa)+"/", "")
	}
	requests(2)

	create(pb)
	requests(2, 0)
	do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(pb)+"/", "")
	requests(2, 1)

	if n := len(list("?replayable=true").Imposters[0].Stubs); n != 1 {
		t.Fatalf("replayable list shows %d stubs, want 1", n)
	}
	if status, _, body := do(t, "POST", s.Admin+"/imposters/"+strconv.Itoa(pa)+"/stubs", `{"stub":{"responses":[{"is":{"body":"second"}}]}}`); status != 200 {
		t.Fatalf("add stub: %d %s", status, body)
	}
	if n := len(list("?replayable=true").Imposters[0].Stubs); n != 2 {
		t.Fatalf("replayable list after adding a stub shows %d stubs, want 2", n)
	}

	if status, _, body := do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(pa)+"/savedRequests", ""); status != 200 {
		t.Fatalf("clear requests: %d %s", status, body)
	}
	requests(0, 1)

	do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(pa), "")
	requests(1)
	do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(pb), "")
	requests()
}

// TestDeleteClosesKeepAliveConnections: once DELETE /imposters/:port is answered, a client's
// idle keep-alive connection to the deleted imposter is closed, not served, so a request on it
// can never reach the old stubs (and a client's retry reaches whatever serves the port next).
func TestDeleteClosesKeepAliveConnections(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	for _, del := range []string{"/imposters/" + strconv.Itoa(port), "/imposters"} {
		imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"old"}}]}]}`, port)
		if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		get := func() (*http.Response, error) {
			if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				return nil, err
			}
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound, not a threshold
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			return resp, err
		}
		if _, err := get(); err != nil {
			t.Fatalf("first request: %v", err)
		}
		if status, _, body := do(t, "DELETE", s.Admin+del, ""); status != 200 {
			t.Fatalf("DELETE %s: %d %s", del, status, body)
		}
		if resp, err := get(); err == nil {
			t.Errorf("after DELETE %s the old imposter still answered on a kept-alive connection: %s", del, resp.Status)
		}
		conn.Close()
	}
}
