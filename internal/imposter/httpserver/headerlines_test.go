package httpserver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/netconn"
)

// TestHeaderLinesFromTheScan: the request view learns from the connection's scan of the header
// block whether a line names an encoding to undo or a form's Content-Type (netconn.Lines), and
// then does not search the block itself: bodies are decoded and forms read as when it searched,
// for requests whose lines the scan saw whole and for those it did not (sent a byte at a time:
// lines split between reads), on one keep-alive connection, with either --netpoller.
func TestHeaderLinesFromTheScan(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"zipped":true}`))
	_ = zw.Close()
	post := func(headers, body string) string {
		return "POST /p HTTP/1.1\r\nHost: x\r\n" + headers + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	cases := []struct {
		name, raw string
		want, not []string // in the recorded request, and not in it
	}{
		{"form", post("Content-Type: application/x-www-form-urlencoded\r\n", "a=1&b=2"),
			[]string{`"form":{"a":"1","b":"2"}`}, nil},
		{"form lower-case name", post("content-type: application/x-www-form-urlencoded; charset=utf-8\r\n", "a=1"),
			[]string{`"form":{"a":"1"}`}, nil},
		{"form type in other case", post("Content-Type: Application/X-WWW-Form-Urlencoded\r\n", "a=1"),
			[]string{`"body":"a=1"`}, []string{`"form"`}},
		{"form type in a parameter", post("Content-Type: text/plain; x=application/x-www-form-urlencoded\r\n", "a=1"),
			[]string{`"body":"a=1"`}, []string{`"form"`}},
		{"form type in another header", post("X-Note: application/x-www-form-urlencoded\r\n", "a=1"),
			[]string{`"body":"a=1"`, `"X-Note":"application/x-www-form-urlencoded"`}, []string{`"form"`}},
		{"gzip", post("Content-Encoding: gzip\r\nContent-Type: application/json\r\n", gz.String()),
			[]string{`"body":"{\"zipped\":true}"`}, nil},
		{"gzip upper-case name", post("CONTENT-ENCODING: gzip\r\n", gz.String()),
			[]string{`"body":"{\"zipped\":true}"`}, nil},
		{"form without a body", "GET /g HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n",
			[]string{`"path":"/g"`}, []string{`"form"`}},
		{"plain", post("Content-Type: application/json\r\n", `{"a":1}`), []string{`"body":"{\"a\":1}"`}, []string{`"form"`}},
	}
	for _, poller := range []netconn.Poller{netconn.PollerFIFO, netconn.PollerGo} {
		t.Run(string(poller), func(t *testing.T) {
			im := startKept(t, `{"protocol":"http","recordRequests":true,"stubs":[{"responses":[{"is":{"body":"ok"}}]}]}`, false, poller)
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			for _, split := range []bool{false, true} {
				for _, tc := range cases {
					if split {
						for i := range len(tc.raw) { // a read for each byte: no line seen whole
							if _, err := c.Write([]byte{tc.raw[i]}); err != nil {
								t.Fatal(err)
							}
						}
					} else if _, err := c.Write([]byte(tc.raw)); err != nil {
						t.Fatal(err)
					}
					var resp fasthttp.Response
					if err := resp.Read(br); err != nil || resp.StatusCode() != 200 {
						t.Fatalf("%s: %v %d", tc.name, err, resp.StatusCode())
					}
				}
			}
			recorded := im.RecordedRequests()
			if len(recorded) != 2*len(cases) {
				t.Fatalf("%d requests recorded, want %d", len(recorded), 2*len(cases))
			}
			for i, r := range recorded {
				tc := cases[i%len(cases)]
				got := string(config2JSON(r))
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("%s (split %t): recorded %s, want %s in it", tc.name, i >= len(cases), got, w)
					}
				}
				for _, w := range tc.not {
					if strings.Contains(got, w) {
						t.Errorf("%s (split %t): recorded %s, want no %s in it", tc.name, i >= len(cases), got, w)
					}
				}
			}
		})
	}
}
