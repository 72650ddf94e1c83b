package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnreadBodiesAnswered: an imposter whose stubs read no body (method and path) and one
// whose stubs read it (a body predicate) are sent the same requests, pipelined on one
// connection: large Content-Length bodies (which the first reads past without keeping),
// chunked ones, one holding request lines, one sent with Expect: 100-continue, requests without
// a body between them. Each answers every request as its stubs say, in order, over http and
// https, and counts them all. Through the real binary.
func TestUnreadBodiesAnswered(t *testing.T) {
	s := start(t)
	for _, proto := range []string{"http", "https"} {
		t.Run(proto, func(t *testing.T) {
			unreadPort := listenFree(t)
			readPort := listenFree(t)
			upload := `{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],"responses":[{"is":{"body":"stored"}}]}`
			needle := `{"predicates":[{"endsWith":{"body":"NEEDLE"}}],"responses":[{"is":{"body":"found"}}]}`
			for port, stubs := range map[int]string{unreadPort: upload, readPort: needle + "," + upload} {
				imp := fmt.Sprintf(`{"protocol":%q,"port":%d,"stubs":[%s]}`, proto, port, stubs)
				if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
					t.Fatalf("create: %d %s", status, body)
				}
			}
			reqs := []struct{ raw, unread, read string }{
				{postBody("/upload", fill(1<<20, "NEEDLE"), ""), "stored", "found"},
				{"GET /x HTTP/1.1\r\nHost: x\r\n\r\n", "", ""},
				{chunkedBody("/upload", fill(300000, "NEEDLE")), "stored", "found"},
				{postBody("/upload", strings.Repeat("GET /upload HTTP/1.1\r\nHost: x\r\n\r\n", 10000), ""), "stored", "stored"},
				{postBody("/other", fill(1<<20, "NEEDLE"), ""), "", "found"},
				{postBody("/upload", fill(400000, "NEEDLE"), "Expect: 100-continue\r\n"), "stored", "found"},
				{postBody("/upload", fill(200000, "x"), ""), "stored", "stored"},
				{"GET /y HTTP/1.1\r\nHost: x\r\n\r\n", "", ""},
			}
			for _, port := range []int{unreadPort, readPort} {
				var stream bytes.Buffer
				want := make([]string, len(reqs))
				for i, r := range reqs {
					stream.WriteString(r.raw)
					want[i] = r.read
					if port == unreadPort {
						want[i] = r.unread
					}
				}
				answers := pipeline(t, proto, port, stream.Bytes(), len(reqs))
				for i, got := range answers {
					if got != "200 "+want[i] {
						t.Errorf("port %d, request %d: %q, want %q", port, i, got, "200 "+want[i])
					}
				}
				status, _, body := do(t, "GET", fmt.Sprintf("%s/imposters/%d", s.Admin, port), "")
				if n, _ := jsonBody(t, body)["numberOfRequests"].(float64); status != 200 || int(n) != len(reqs) {
					t.Errorf("port %d: numberOfRequests %v, want %d", port, n, len(reqs))
				}
			}
		})
	}
}

// fill is n bytes ending with end.
func fill(n int, end string) string { return strings.Repeat("a", n-len(end)) + end }

// postBody is a POST of body to path with Content-Length, and extra header lines.
func postBody(path, body, extra string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s", path, extra, len(body), body)
}

// chunkedBody is a POST of body to path in chunks of 64 KiB.
func chunkedBody(path, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", path)
	for len(body) > 0 {
		n := min(len(body), 64<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// dialImposter connects to the http or https imposter on port (any certificate), within 5 s.
func dialImposter(t *testing.T, proto string, port int) net.Conn {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var c net.Conn
	var err error
	if proto == "https" {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // our own test server
	} else {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pipeline writes stream on one connection to port (in pieces of growing sizes, as it goes)
// and reads n answers from it, each as "status body" (a 100 Continue skipped).
func pipeline(t *testing.T, proto string, port int, stream []byte, n int) []string {
	t.Helper()
	c := dialImposter(t, proto, port)
	defer c.Close()
	go func() {
		for step := 777; len(stream) > 0; step = step*5 + 1 {
			k := min(step, len(stream))
			if _, err := c.Write(stream[:k]); err != nil {
				return
			}
			stream = stream[k:]
		}
	}()
	br := bufio.NewReader(c)
	var out []string
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err == nil && resp.StatusCode == http.StatusContinue {
			resp, err = http.ReadResponse(br, nil)
		}
		if err != nil {
			t.Fatalf("answer %d of %d: %v", len(out)+1, n, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strconv.Itoa(resp.StatusCode)+" "+string(body))
	}
	return out
}

// TestUnreadBodiesWhereRead: what reads a body sees the whole of it, while an imposter with
// stubs that read none reads large bodies past: a body predicate PUT in place of such stubs
// (the next request matches on its body), a proxy (the origin gets every byte), and --max-body
// on a gzip body that inflates past it (413, as the inflated body is counted). Through the real
// binary.
func TestUnreadBodiesWhereRead(t *testing.T) {
	s := start(t, "--max-body", "512KiB")
	port := listenFree(t)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],"responses":[{"is":{"body":"stored"}}]}]}`, port)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	big := fill(400<<10, "NEEDLE")
	if got := pipeline(t, "http", port, []byte(postBody("/upload", big, "")), 1); got[0] != "200 stored" {
		t.Fatalf("before the change: %q", got)
	}

	// Over --max-body: refused before it is read, as before.
	if got := pipeline(t, "http", port, []byte(postBody("/upload", fill(600<<10, "x"), "")), 1); !strings.HasPrefix(got[0], "413 ") {
		t.Fatalf("a body over --max-body: %q, want 413", got)
	}
	// A gzip body of 200 KiB on the wire that inflates past --max-body.
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	noise := make([]byte, 200<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	_, _ = zw.Write(noise)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	if got := pipeline(t, "http", port, []byte(postBody("/upload", zipped.String(), "Content-Encoding: gzip\r\n")), 1); !strings.HasPrefix(got[0], "413 ") {
		t.Fatalf("a gzip body inflating past --max-body: %q, want 413", got)
	}

	// A body predicate, in place of the stubs.
	if status, _, body := do(t, "PUT", fmt.Sprintf("%s/imposters/%d/stubs", s.Admin, port), `{"stubs":[
		{"predicates":[{"endsWith":{"body":"NEEDLE"}}],"responses":[{"is":{"body":"found"}}]},
		{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],"responses":[{"is":{"body":"stored"}}]}]}`); status != 200 {
		t.Fatalf("PUT stubs: %d %s", status, body)
	}
	stream := postBody("/upload", big, "") + postBody("/upload", fill(400<<10, "x"), "")
	if got := pipeline(t, "http", port, []byte(stream), 2); got[0] != "200 found" || got[1] != "200 stored" {
		t.Fatalf("after the change: %q, want found then stored", got)
	}

	// A proxy: the origin answers the length and digest of what it got.
	origin := serveLoopback(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(req.Body)
			answer := fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
			if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer); err != nil {
				return
			}
		}
	})
	proxyPort := listenFree(t)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"method":"POST","path":"/upload"}}],"responses":[{"proxy":{"to":"http://%s"}}]}]}`, proxyPort, origin)); status != 201 {
		t.Fatalf("create proxy: %d %s", status, body)
	}
	want := fmt.Sprintf("200 %d %x", len(big), sha256.Sum256([]byte(big)))
	if got := pipeline(t, "http", proxyPort, []byte(postBody("/upload", big, "")+postBody("/upload", big, "")), 2); got[0] != want || got[1] != want {
		t.Fatalf("proxied: %q, want %q twice", got, want)
	}
}
