package admin

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// freeTestPort returns a loopback port nothing listens on.
func freeTestPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// postAndGet posts body (PORT standing for port) with the Host host, reads the imposter back
// with GET while it is as the POST left it, and deletes it. It returns the POST's answer and
// the GET's (its status 0 when the POST did not create the imposter).
func postAndGet(t testing.TB, c *fasthttp.Client, body, port, host string) (created, got answer) {
	t.Helper()
	var headers []string
	if host != "" {
		headers = []string{"Host", host}
	}
	created, err := doTB(t, c, "POST", "/imposters", strings.ReplaceAll(body, "PORT", port), headers...)
	if err != nil {
		t.Fatal(err)
	}
	if created.status != 201 {
		return created, answer{}
	}
	// The imposter's own port: the body may name none, or another (a fuzzed body).
	at := created.headers["Location"]
	at = at[strings.Index(at, "/imposters/"):]
	if got, err = doTB(t, c, "GET", at, "", headers...); err != nil || got.status != 200 {
		t.Fatalf("GET: %v %d %s", err, got.status, got.body)
	}
	if deleted, err := doTB(t, c, "DELETE", at, "", headers...); err != nil || deleted.status != 200 {
		t.Fatalf("DELETE: %v %d %s", err, deleted.status, deleted.body)
	}
	return created, got
}

// doTB is do for a testing.TB.
func doTB(t testing.TB, c *fasthttp.Client, method, uri, body string, headers ...string) (answer, error) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://localhost:2525" + uri)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.UseHostHeader = true // the Host given, not the URI's
	if body != "" {
		req.SetBodyString(body)
	}
	if err := c.Do(req, resp); err != nil {
		return answer{}, err
	}
	if len(headers) > 0 && !strings.Contains(string(resp.Body()), headers[1]) && resp.StatusCode() < 300 {
		t.Fatalf("the answer does not show the Host %s:\n%s", headers[1], resp.Body())
	}
	return answer{status: resp.StatusCode(), body: string(resp.Body()), headers: map[string]string{"Location": string(resp.Header.Peek("Location"))}}, nil
}

// A POST /imposters of the body the last one sent, on the same port and base, its imposter as
// fresh, is answered with that POST's answer (createdAnswer): it must be what printing the
// imposter makes, which GET shows, for every protocol and field; another body, port or Host
// gets its own answer.
func TestCreatedAnswerIsThePrintedOne(t *testing.T) {
	a, _ := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	c := inmemClient(t, a, nil)
	port, other := freeTestPort(t), freeTestPort(t)
	const plain = `{"protocol":"http","port":PORT,"stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]}]}`
	for _, tc := range []struct {
		name, body, port, host string
		reused                 bool // answered from the last POST's answer
	}{
		{name: "first", body: plain, port: port},
		{name: "same", body: plain, port: port, reused: true},
		{name: "same again", body: plain, port: port, reused: true},
		{name: "other host", body: plain, port: port, host: "example.test:2525"},
		{name: "other host again", body: plain, port: port, host: "example.test:2525", reused: true},
		{name: "other port", body: plain, port: other},
		{name: "other body", body: strings.Replace(plain, `"a"}}]}]}`, `"b"}}]}]}`, 1), port: port},
		{name: "spaces", body: strings.ReplaceAll(plain, ",", " , "), port: port},
		{name: "spaces again", body: strings.ReplaceAll(plain, ",", " , "), port: port, reused: true},
		{name: "fields", body: `{"protocol":"http","port":PORT,"name":7,"recordRequests":true,"defaultResponse":{"statusCode":404},"stubs":[{"responses":[{"is":{"body":"x"}},{"proxy":{"to":"http://127.0.0.1:1"}}]}]}`, port: port},
		{name: "fields again", body: `{"protocol":"http","port":PORT,"name":7,"recordRequests":true,"defaultResponse":{"statusCode":404},"stubs":[{"responses":[{"is":{"body":"x"}},{"proxy":{"to":"http://127.0.0.1:1"}}]}]}`, port: port, reused: true},
		{name: "https", body: `{"protocol":"https","port":PORT}`, port: port},
		{name: "https again", body: `{"protocol":"https","port":PORT}`, port: port, reused: true},
		{name: "tcp", body: `{"protocol":"tcp","port":PORT,"mode":"binary","stubs":[{"responses":[{"is":{"data":"AQI="}}]}]}`, port: port},
		{name: "tcp again", body: `{"protocol":"tcp","port":PORT,"mode":"binary","stubs":[{"responses":[{"is":{"data":"AQI="}}]}]}`, port: port, reused: true},
		{name: "smtp", body: `{"protocol":"smtp","port":PORT}`, port: port},
		{name: "smtp again", body: `{"protocol":"smtp","port":PORT}`, port: port, reused: true},
		{name: "refused", body: `{"protocol":"smtp","port":PORT,"stubs":[{"responses":[{"is":{"body":1}}]}]} x`, port: port},
		{name: "smtp after a refusal", body: `{"protocol":"smtp","port":PORT}`, port: port, reused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.lastCreated.Load()
			created, got := postAndGet(t, c, tc.body, tc.port, tc.host)
			if got.status == 0 {
				if tc.name != "refused" {
					t.Fatalf("POST: %d %s", created.status, created.body)
				}
				return
			}
			if created.body != got.body {
				t.Errorf("POST answered\n%s\nwant (GET)\n%s", created.body, got.body)
			}
			after := a.lastCreated.Load()
			if reused := before != nil && after == before; reused != tc.reused {
				t.Errorf("answered from the last POST's answer: %v, want %v", reused, tc.reused)
			}
			if after == nil || after.answer == nil || string(after.answer) != created.body {
				t.Errorf("the answer kept is not the one sent")
			}
		})
	}
}

// An imposter that is not as New built it (a request counted, a stub changed) is not fresh:
// its answer shows that, and is not kept for the next POST.
func TestCreatedAnswerNotKeptOnceChanged(t *testing.T) {
	a, _ := newTestAPI(t, Options{Port: 2525, Version: "2.9.1"})
	c := inmemClient(t, a, nil)
	port := freeTestPort(t)
	body := `{"protocol":"http","port":` + port + `,"recordRequests":true}`
	if created, err := do(t, c, "POST", "/imposters", body); err != nil || created.status != 201 {
		t.Fatalf("POST: %v %d %s", err, created.status, created.body)
	}
	im := a.reg.Get(mustAtoi(t, port))
	if im == nil || !im.Fresh() {
		t.Fatal("a new imposter is not fresh")
	}
	if code, _, _ := httpGet(t, "http://127.0.0.1:"+port+"/x"); code != 200 {
		t.Fatalf("imposter answered %d", code)
	}
	if im.Fresh() {
		t.Fatal("an imposter that answered a request is fresh")
	}
	kept := a.lastCreated.Load()
	if kept == nil {
		t.Fatal("the answer to the POST of a fresh imposter is not kept")
	}
	// The same body again once the imposter is gone: its own, fresh, answer.
	if deleted, err := do(t, c, "DELETE", "/imposters/"+port, ""); err != nil || !strings.Contains(deleted.body, `"numberOfRequests": 1`) {
		t.Fatalf("DELETE: %v %s", err, deleted.body)
	}
	created, err := do(t, c, "POST", "/imposters", body)
	if err != nil || created.status != 201 || created.body != string(kept.answer) {
		t.Fatalf("POST again: %v %d\n%s\nwant\n%s", err, created.status, created.body, kept.answer)
	}
	if got, err := do(t, c, "POST", "/imposters/"+port+"/stubs", `{"stub":{"responses":[{"is":{"body":"b"}}]}}`); err != nil || got.status != 200 {
		t.Fatalf("adding a stub: %v %d %s", err, got.status, got.body)
	}
	if a.reg.Get(mustAtoi(t, port)).Fresh() {
		t.Fatal("an imposter whose stubs changed is fresh")
	}
}

func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzCreatedAnswer posts a body twice (the second answered from the first's answer when it
// is kept) and compares both answers with GET's rendering of the imposter.
func FuzzCreatedAnswer(f *testing.F) {
	for _, s := range []string{
		`{"protocol":"http","port":PORT}`,
		`{"protocol":"http","port":PORT,"name":"n","stubs":[{"predicates":[{"deepEquals":{"query":{"a":["1","2"]}}}],"responses":[{"is":{"headers":{"X":"\u00e9"}},"repeat":2}]}]}`,
		`{"protocol":"https","port":PORT,"mutualAuth":true,"ciphers":"abc"}`,
		`{"protocol":"tcp","port":PORT,"endOfRequestResolver":{"inject":"x"}}`,
		`{"protocol":"smtp","port":PORT,"recordRequests":true}`,
		`{"port":PORT,"protocol":"http","defaultResponse":{"body":"d"},"stubs":[{"responses":[{"is":{"body":"1e3"}}],"predicates":[{"matches":{"body":"^a"}}]}]}`,
	} {
		f.Add(s)
	}
	a, _ := newTestAPI(f, Options{Port: 2525, Version: "2.9.1"})
	c := inmemClient(f, a, nil)
	port := freeTestPort(f)
	f.Fuzz(func(t *testing.T, body string) {
		if !strings.Contains(body, "PORT") {
			return
		}
		for range 2 {
			created, got := postAndGet(t, c, body, port, "")
			if got.status != 0 && created.body != got.body {
				t.Fatalf("POST answered\n%s\nwant (GET)\n%s", created.body, got.body)
			}
		}
	})
}
