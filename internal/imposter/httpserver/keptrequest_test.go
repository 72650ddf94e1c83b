package httpserver

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/script"
)

// keptRequest is request k of TestKeptRequestOutlivesNext: each one's path, query, header and
// body differ in their text and length from the others', so that a string of one written over
// by the next (the view the connection keeps, reset for it) shows. From k = largeRequests on,
// every other body (k even) is larger than the request view's arena and is left where fasthttp
// read it (request.FromHTTPView), in the buffer the connection reads its next request into.
func keptRequest(k int) (path, query, id, body string) {
	i := k % largeRequests
	pad := 2 + 9*(i%3)
	if k >= largeRequests && i%2 == 0 {
		pad = 70000 + 1000*i
	}
	return "/r/" + strconv.Itoa(k) + "-" + strings.Repeat(string(rune('a'+i)), 3+5*(i%4)),
		strings.Repeat(string(rune('K'+i)), 1+7*(i%3)),
		"id-" + strconv.Itoa(k) + strings.Repeat("x", 11*(i%2)),
		fmt.Sprintf(`{"n":%d,"pad":"%s"}`, k, strings.Repeat(string(rune('A'+i)), pad))
}

// largeRequests is where keptRequest's requests with large bodies start.
const largeRequests = 100

// TestKeptRequestOutlivesNext: an http connection keeps its request view from one request to
// the next (reset in place); what outlives a request's answer (the journal's record, a
// script's state, --debug's explanation) is never written over by the next request on the
// connection, and each answer built from its request (a template, a decorate, a copy) is its
// own, for requests sent one after the other and pipelined in one write (with either
// --netpoller, over TLS too). The journal is read while the requests are served, and again
// after the last.
func TestKeptRequestOutlivesNext(t *testing.T) {
	const n = 8
	for _, tc := range []struct {
		name  string
		def   string
		debug bool
		// want is request i's answer body, and what its header X-Mockd-No-Match says with
		// --debug ("" for no such header).
		want func(i int) (body, why string)
	}{
		{"recorded", `{"protocol":"http","recordRequests":true,"stubs":[{"responses":[{"is":{"body":"ok"}}]}]}`, false,
			func(int) (string, string) { return "ok", "" }},
		{"template", `{"protocol":"http","stubs":[{"responses":[{"is":{"template":true,` +
			`"body":"{{request.path}}|{{request.query.q}}|{{request.headers.X-Id}}|{{request.body}}"}}]}]}`, false,
			func(i int) (string, string) {
				p, q, id, b := keptRequest(i)
				return p + "|" + q + "|" + id + "|" + strings.ReplaceAll(b, `"`, "&quot;"), ""
			}},
		{"inject-state", `{"protocol":"http","stubs":[{"responses":[{"inject":` + strconv.Quote(
			`function (config) { var s = config.state; if (!s.path) { s.path = config.request.path; s.q = config.request.query.q; s.id = config.request.headers['X-Id']; s.body = config.request.body; } return { body: [s.path, s.q, s.id, s.body].join('|') }; }`) +
			`}]}]}`, false,
			func(k int) (string, string) {
				p, q, id, b := keptRequest(k - k%largeRequests) // the first request of the run
				return p + "|" + q + "|" + id + "|" + b, ""
			}},
		{"decorate", `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"d"},"behaviors":[{"decorate":` + strconv.Quote(
			`(config) => { config.response.body = config.request.path + '|' + config.request.headers['X-Id'] + '|' + config.request.body; }`) +
			`}]}]}]}`, false,
			func(i int) (string, string) {
				p, _, id, b := keptRequest(i)
				return p + "|" + id + "|" + b, ""
			}},
		{"copy", `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"${P}|${B}"},"behaviors":[{"copy":{"from":"path","into":"${P}","using":{"method":"regex","selector":".*"}}},` +
			`{"copy":{"from":"body","into":"${B}","using":{"method":"jsonpath","selector":"$.pad"}}}]}]}]}`, false,
			func(i int) (string, string) {
				p, _, _, b := keptRequest(i)
				pad := b[strings.Index(b, `"pad":"`)+7 : len(b)-2]
				return p + "|" + pad, ""
			}},
		{"inject-echo", `{"protocol":"http","stubs":[{"responses":[{"inject":` + strconv.Quote(
			`function (config) { return { body: config.request.body }; }`) + `}]}]}`, false,
			func(k int) (string, string) {
				_, _, _, b := keptRequest(k)
				return b, ""
			}},
		{"debug-no-match", `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/never"}}],"responses":[{"is":{"body":"never"}}]}]}`, true,
			func(i int) (string, string) {
				p, _, _, _ := keptRequest(i)
				return "", p
			}},
	} {
		for _, v := range []struct {
			proto     string
			poller    netconn.Poller
			pipelined bool
			first     int // 0, or largeRequests for large bodies
		}{
			{"http", netconn.PollerFIFO, false, 0}, {"http", netconn.PollerFIFO, true, 0}, {"http", netconn.PollerGo, true, 0}, {"https", netconn.PollerFIFO, true, 0},
			{"http", netconn.PollerFIFO, false, largeRequests}, {"http", netconn.PollerFIFO, true, largeRequests}, {"https", netconn.PollerFIFO, true, largeRequests},
		} {
			pipelined := v.pipelined
			t.Run(fmt.Sprintf("%s/%s/%s/pipelined=%t/large=%t", tc.name, v.proto, v.poller, pipelined, v.first > 0), func(t *testing.T) {
				im := startKept(t, strings.Replace(tc.def, `"protocol":"http"`, `"protocol":"`+v.proto+`"`, 1), tc.debug, v.poller)
				addr := "127.0.0.1:" + strconv.Itoa(im.Port())
				var c net.Conn
				var err error
				if v.proto == "https" {
					c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the imposter's own certificate
				} else {
					c, err = net.Dial("tcp", addr)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				stop := make(chan struct{})
				var readers sync.WaitGroup
				readers.Go(func() { // the journal read while the connection's requests are served
					for {
						select {
						case <-stop:
							return
						default:
						}
						for _, r := range im.RecordedRequests() {
							_ = string(config2JSON(r))
						}
					}
				})
				var raw strings.Builder
				br := bufio.NewReader(c)
				for i := v.first; i < v.first+n; i++ {
					p, q, id, b := keptRequest(i)
					fmt.Fprintf(&raw, "POST %s?q=%s HTTP/1.1\r\nHost: x\r\nX-Id: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", p, q, id, len(b), b)
					if !pipelined {
						if _, err := c.Write([]byte(raw.String())); err != nil {
							t.Fatal(err)
						}
						raw.Reset()
						checkKeptAnswer(t, br, i, tc.want)
					}
				}
				if pipelined {
					if _, err := c.Write([]byte(raw.String())); err != nil {
						t.Fatal(err)
					}
					for i := v.first; i < v.first+n; i++ {
						checkKeptAnswer(t, br, i, tc.want)
					}
				}
				close(stop)
				readers.Wait()
				if !strings.Contains(tc.def, `"recordRequests":true`) {
					return
				}
				recorded := im.RecordedRequests()
				if len(recorded) != n {
					t.Fatalf("%d requests recorded, want %d", len(recorded), n)
				}
				for i, r := range recorded {
					p, q, id, b := keptRequest(v.first + i)
					got := string(config2JSON(r))
					for _, want := range []string{`"path":"` + p + `"`, `"q":"` + q + `"`, `"X-Id":"` + id + `"`, `"body":` + strconv.Quote(b)} {
						if !strings.Contains(got, want) {
							t.Errorf("recorded request %d: %s, want %s in it", i, clip(got), clip(want))
						}
					}
				}
			})
		}
	}
}

// startKept starts an http or https imposter from JSON on a free loopback port, with scripts
// allowed, --debug as asked and its connections waiting for data on poller (--netpoller).
func startKept(t *testing.T, def string, debug bool, poller netconn.Poller) *imposter.Imposter {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(impostertest.Def(t, def), imposter.Options{Host: "127.0.0.1", Logger: log, Debug: debug, Poller: poller,
		Script: script.New(script.Options{Logger: log}), Protocols: map[string]imposter.Protocol{"http": HTTP, "https": HTTPS}})
	if err != nil {
		t.Fatal(err)
	}
	impostertest.Start(t, im)
	return im
}

// checkKeptAnswer reads request i's answer from br and checks it against want.
func checkKeptAnswer(t *testing.T, br *bufio.Reader, i int, want func(i int) (body, why string)) {
	t.Helper()
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		t.Fatalf("answer %d: %v", i, err)
	}
	body, why := want(i)
	if why != "" {
		if got := string(resp.Header.Peek(NoMatchHeader)); !strings.Contains(got, why) {
			t.Errorf("answer %d: %s %q, want %q in it", i, NoMatchHeader, got, why)
		}
		return
	}
	if resp.StatusCode() != 200 || string(resp.Body()) != body {
		t.Errorf("answer %d: %d %q (%d bytes), want 200 %q (%d bytes)", i, resp.StatusCode(), clip(string(resp.Body())), len(resp.Body()), clip(body), len(body))
	}
}

// clip is s, or its start and end when it is long (a large body in a message).
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:100] + "..." + s[len(s)-100:]
}

// config2JSON is a recorded request as the API shows it.
func config2JSON(r imposter.RecordedRequest) []byte {
	return config.MarshalJSON(r.Request, 0)
}
