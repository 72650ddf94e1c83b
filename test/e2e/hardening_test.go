package e2e

// Black-box tests of issue 19 (hardening): each starts the real binary on loopback and checks
// what a user sees when a port is taken, when mockd is stopped with requests in flight, when
// clients misbehave and when resources run out. None asserts a timing threshold: where time
// matters a generous deadline only tells a hang from an answer.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// run runs mockd with args until it exits, killing it after limit; it returns the exit code
// (-1 when it had to be killed) and what it printed.
func run(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(mockdBin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return -1, out.String()
	}
}

// Item 0: an imposter whose port is taken makes `mockd serve -c` print the error and exit 1,
// every time. At b7b0a86 most starts hung (App.Start → Stop waited for a Serve that had not
// begun), ignoring SIGTERM.
func TestPortTakenExitsWithError(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	cfg := write(t, t.TempDir(), "taken.json", fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d}]}`, port))
	for i := 0; i < 10; i++ {
		code, out := run(t, 20*time.Second, "serve", "--port", "0", "--host", "127.0.0.1", "-c", cfg)
		if code != 1 {
			t.Fatalf("start %d: exit code %d, want 1 (-1: killed after hanging)\n%s", i, code, out)
		}
		want := fmt.Sprintf("Port %d is already in use", port)
		if !strings.Contains(out, want) {
			t.Fatalf("start %d: the output does not say %q:\n%s", i, want, out)
		}
		if a := strings.Index(out, "Adios"); a >= 0 && a < strings.Index(out, want) {
			t.Fatalf("start %d: Adios is printed before the error:\n%s", i, out)
		}
	}
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

// numberOfRequests is what the admin API reports for the imposter on port.
func numberOfRequests(t *testing.T, s *server, port int) int {
	t.Helper()
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	n, _ := jsonBody(t, body)["numberOfRequests"].(float64)
	return int(n)
}

// exitCode waits (up to limit) for s to exit and returns its code; -1 if it did not.
func (s *server) exitCode(limit time.Duration) int {
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		return -1
	}
}

// Item 2: SIGTERM stops accepting, lets the requests in flight finish with their real answer,
// and exits 0. At b7b0a86 all of them got `500 context canceled` at once.
func TestSIGTERMLetsRequestsInFlightFinish(t *testing.T) {
	s := start(t, "--drain-timeout", "60s")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"waited"},"behaviors":[{"wait":2000}]}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	const n = 50
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, n)
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n}}
	for i := 0; i < n; i++ {
		go func() {
			resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			answers <- answer{resp.StatusCode, string(b), err}
		}()
	}
	waitFor(t, "50 requests in flight", func() bool { return numberOfRequests(t, s, port) == n })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		a := <-answers
		if a.err != nil || a.status != 200 || a.body != "waited" {
			t.Errorf("request %d: %d %q %v, want 200 \"waited\"", i, a.status, a.body, a.err)
		}
	}
	if code := s.exitCode(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\n%s", code, s.Output())
	}
}

// Item 2: after SIGTERM mockd accepts no new connections; a second signal ends it at once,
// without waiting for the requests in flight.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	s := start(t, "--drain-timeout", "10m")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"waited"},"behaviors":[{"wait":600000}]}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	go func() {
		c := &http.Client{Timeout: 10 * time.Minute}
		if resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/"); err == nil {
			_ = resp.Body.Close()
		}
	}()
	waitFor(t, "a request in flight", func() bool { return numberOfRequests(t, s, port) == 1 })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the imposter to stop accepting", func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err != nil {
			return true
		}
		_ = c.Close()
		return false
	})
	if code := s.exitCode(time.Second); code != -1 {
		t.Fatalf("mockd exited (code %d) with a request in flight after one signal\n%s", code, s.Output())
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well before the request's ten minutes.
	if code := s.exitCode(60 * time.Second); code == -1 || code == 0 {
		t.Fatalf("exit code %d after a second signal, want a failure at once\n%s", code, s.Output())
	}
}

// Item 7: DELETE /imposters/:port answers without waiting for the requests in flight, which
// finish with their real answer; the port is free as soon as the answer arrives. At b7b0a86 the
// request in flight got `500 context canceled`. That a DELETE with no traffic takes a few
// milliseconds (100 ms each at b7b0a86) is a timing this suite does not assert; to see it:
// `for i in $(seq 20); do curl -s -XPOST localhost:2525/imposters -d '{"protocol":"http","port":4545}' >/dev/null;
// curl -s -o /dev/null -w '%{time_total}\n' -XDELETE localhost:2525/imposters/4545; done`.
func TestDeleteLetsRequestsInFlightFinish(t *testing.T) {
	s := start(t)
	for _, path := range []string{"/imposters/%d", "/imposters"} {
		port := listenFree(t)
		imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"waited"},"behaviors":[{"wait":8000}]}]}]}`, port)
		if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		type answer struct {
			status int
			body   string
			err    error
		}
		got := make(chan answer, 1)
		go func() {
			resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
			if err != nil {
				got <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			got <- answer{resp.StatusCode, string(b), err}
		}()
		waitFor(t, "a request in flight", func() bool { return numberOfRequests(t, s, port) == 1 })
		target := path
		if strings.Contains(path, "%d") {
			target = fmt.Sprintf(path, port)
		}
		if status, _, body := do(t, "DELETE", s.Admin+target, ""); status != 200 {
			t.Fatalf("DELETE %s: %d %s", target, status, body)
		}
		select { // 8 s: only a DELETE that waits for the request in flight answers after it
		case a := <-got:
			t.Errorf("DELETE %s answered after the request in flight (%d %q %v): it waited for it", target, a.status, a.body, a.err)
			got <- a
		default:
		}
		// The port is free at once: the same imposter can be created again.
		if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port)); status != 201 {
			t.Fatalf("create again after DELETE %s: %d %s", target, status, body)
		}
		if a := <-got; a.err != nil || a.status != 200 || a.body != "waited" {
			t.Errorf("after DELETE %s the request in flight got %d %q %v, want 200 \"waited\"", target, a.status, a.body, a.err)
		}
		do(t, "DELETE", s.Admin+fmt.Sprintf("/imposters/%d", port), "")
	}
}

// hangUp sends a request on a connection of its own and closes it once the imposter counts the
// request.
func hangUp(t *testing.T, s *server, port int, path string) {
	t.Helper()
	before := numberOfRequests(t, s, port)
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request to arrive", func() bool { return numberOfRequests(t, s, port) > before })
	_ = c.Close()
}

// Item 8: a client that hangs up cancels the wait or the script serving it: the behaviors after
// them (here a shellTransform that leaves a file behind) never run. At b7b0a86 they ran to the
// end for nobody.
func TestHangUpCancelsTheRequest(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "60s")
	dir := t.TempDir()
	port := listenFree(t)
	mark := func(name string) string {
		cmd, _ := json.Marshal("touch " + filepath.Join(dir, name) + `; printf '{"body":"done"}' #`)
		return `{"shellTransform":` + string(cmd) + `}`
	}
	spin := `function () { var end = Date.now() + 3000; while (Date.now() < end) {} return { body: 'spun' }; }`
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"path":"/wait"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"wait":3000},%s]}]},
		{"predicates":[{"equals":{"path":"/wait-kept"}}],"responses":[{"is":{"body":"x"},"behaviors":[{"wait":3000},%s]}]},
		{"predicates":[{"equals":{"path":"/script"}}],"responses":[{"inject":%q,"behaviors":[%s]}]},
		{"predicates":[{"equals":{"path":"/script-kept"}}],"responses":[{"inject":%q,"behaviors":[%s]}]}]}`,
		port, mark("wait"), mark("wait-kept"), spin, mark("script"), spin, mark("script-kept"))
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}

	hangUp(t, s, port, "/wait")
	// Started later and as long: when it is answered the other would have finished too.
	if status, _, body := do(t, "GET", base+"/wait-kept", ""); status != 200 || body != "done" {
		t.Fatalf("GET /wait-kept: %d %q", status, body)
	}
	if !exists("wait-kept") {
		t.Fatal("the request that was kept left no file: the test cannot tell")
	}
	if exists("wait") {
		t.Error("the wait of a request whose client hung up ran to its end")
	}

	hangUp(t, s, port, "/script")
	// Scripts of one imposter run one at a time: this one starts after the other ended.
	if status, _, body := do(t, "GET", base+"/script-kept", ""); status != 200 || body != "done" {
		t.Fatalf("GET /script-kept: %d %q", status, body)
	}
	if exists("script") {
		t.Error("the script of a request whose client hung up ran to its end")
	}
}

var _ sync.Mutex

// peakRSS returns the most memory the process has had resident (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmHWM:") }

// rss returns the memory process pid has resident now (VmRSS), in bytes.
func rss(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmRSS:") }

// procStatus returns a size field of /proc/PID/status in bytes; the test is skipped where /proc
// does not tell.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/PID/status", field)
	return 0
}

// gzipBomb returns about 1 MB of gzip that inflates to 1 GiB of zeros (1,024 members).
func gzipBomb(t *testing.T) []byte {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	return bytes.Repeat(one.Bytes(), 1024)
}

// rawStatus sends head (a request's header block, nothing more) on a connection of its own and
// returns the status of the answer.
func rawStatus(t *testing.T, port int, head string) int {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", head, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Item 4: a body past --max-body (64 MiB by default), also once inflated, gets 413 and memory
// stays bounded. At b7b0a86 a 1 MB gzip body that inflates to 1 GiB took RSS to gigabytes (and
// a body past the limit got 400).
func TestBodyLimit(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"predicates":[{"equals":{"body":{"a":1}}}],"responses":[{"is":{"body":"matched"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	var small bytes.Buffer
	zw := gzip.NewWriter(&small)
	_, _ = zw.Write([]byte(`{"a":1}`))
	_ = zw.Close()
	if status, _, body := do(t, "POST", base, small.String(), "Content-Encoding", "gzip", "Content-Type", "application/json"); status != 200 || body != "matched" {
		t.Fatalf("a small gzip body: %d %q", status, body)
	}
	status, _, body := do(t, "POST", base, string(gzipBomb(t)), "Content-Encoding", "gzip", "Content-Type", "application/json")
	if status != 413 || !strings.Contains(body, "larger than the limit") {
		t.Errorf("a gzip body that inflates to 1 GiB: %d %.200s, want 413", status, body)
	}
	if rss := peakRSS(t, s.cmd.Process.Pid); rss > 1<<30 {
		t.Errorf("peak RSS %d MiB after a gzip bomb, want well under 1 GiB", rss>>20)
	}
	if got := rawStatus(t, port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n\r\n"); got != 413 {
		t.Errorf("a body of 64 MiB + 1 byte: status %d, want 413", got)
	}
	if status, _, body := do(t, "POST", base, small.String(), "Content-Encoding", "gzip", "Content-Type", "application/json"); status != 200 || body != "matched" {
		t.Fatalf("a small gzip body after the bomb: %d %q", status, body)
	}
}

// rawExchange sends data on a connection of its own and returns everything the server writes
// until it closes the connection, or until 30 s pass (then closed is false).
func rawExchange(t *testing.T, port int, data string) (answer string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, data); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	return string(b), !(errors.As(err, &ne) && ne.Timeout())
}

// Item 3: requests whose framing is ambiguous are refused as Mountebank (node) refuses them,
// 400 and the connection closed; a request that stops in the middle of its headers gets 408
// after --header-timeout. At b7b0a86 a request hidden behind a chunked body with a
// Content-Length was answered, bare LF line ends held the connection silently, and so did a
// request stalled in its headers, forever.
func TestAmbiguousAndSlowRequests(t *testing.T) {
	s := start(t, "--header-timeout", "1s")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[{"responses":[{"is":{"body":"hello"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	smuggled := "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for name, data := range map[string]string{
		"Content-Length then Transfer-Encoding":    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggled,
		"Transfer-Encoding then Content-Length":    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + smuggled,
		"bare LF everywhere":                       "GET / HTTP/1.1\nHost: x\n\n",
		"bare LF before the blank line":            "GET / HTTP/1.1\r\nHost: x\n\r\n",
		"bare LF in a header line":                 "GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
		"bare LF on a new request of a connection": "",
	} {
		if data == "" {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(r, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: the first request: %v", name, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_, _ = io.WriteString(c, "GET /second HTTP/1.1\nHost: x\n\n")
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 400 {
				t.Errorf("%s: %v %v, want 400", name, resp, err)
			}
			_ = c.Close()
			continue
		}
		answer, closed := rawExchange(t, port, data)
		if !closed {
			t.Errorf("%s: the connection was held open 30 s; answer so far %q", name, answer)
			continue
		}
		if strings.Count(answer, "HTTP/1.1 ") > 2 || !strings.Contains(answer, "HTTP/1.1 400 Bad Request") || strings.Count(answer, "hello") > 1 ||
			(strings.Contains(data, "smuggled") && strings.Contains(answer, "hello")) {
			t.Errorf("%s: answered %q, want 400 and the connection closed", name, answer)
		}
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if strings.Contains(body, "/smuggled") {
		t.Errorf("a smuggled request reached the imposter:\n%s", body)
	}

	answer, closed := rawExchange(t, port, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	if !closed || !strings.HasPrefix(answer, "HTTP/1.1 408") {
		t.Errorf("a request stalled in its headers: %q (closed %v), want 408 and the connection closed", answer, closed)
	}
	if code, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); code != 200 || body != "hello" {
		t.Errorf("a good request after them: %d %q", code, body)
	}
}

// startUnderLimit starts mockd through sh after `ulimit -n nofile` (soft and hard limit).
func startUnderLimit(t *testing.T, limit string, args ...string) *server {
	t.Helper()
	full := append([]string{"serve", "--port", "0", "--host", "127.0.0.1"}, args...)
	cmd := exec.Command("sh", append([]string{"-c", "ulimit " + limit + " && exec \"$0\" \"$@\"", mockdBin}, full...)...)
	s, err := startCmd(t, cmd, "under ulimit "+limit)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openFilesLimit returns the soft and hard limit of open files of process pid.
func openFilesLimit(t *testing.T, pid int) (soft, hard string) {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			f := strings.Fields(strings.TrimPrefix(line, "Max open files"))
			return f[0], f[1]
		}
	}
	t.Skip("no open files limit in /proc/PID/limits")
	return "", ""
}

// Item 1: running out of file descriptors slows accepting down but never stops a listener: once
// the clients leave, the imposter and the admin API answer again. At b7b0a86 both listeners
// stopped for good (`accept4: too many open files`) while the process lived on.
func TestFileDescriptorExhaustion(t *testing.T) {
	if _, err := os.Stat("/proc/self/limits"); err != nil {
		t.Skip("needs /proc and sh's ulimit")
	}
	// The soft limit is raised to the hard one at start.
	s := startUnderLimit(t, "-S -n 100")
	if soft, hard := openFilesLimit(t, s.cmd.Process.Pid); soft != hard {
		t.Errorf("open files limit: soft %s, hard %s; want the soft limit raised to the hard one", soft, hard)
	}
	s.stop()

	s = startUnderLimit(t, "-n 64")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"hello"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	adminPort := strings.TrimPrefix(s.Admin, "http://127.0.0.1:")
	var conns []net.Conn
	for _, p := range []string{strconv.Itoa(port), adminPort} {
		for i := 0; i < 100; i++ {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, 5*time.Second)
			if err != nil {
				break // the backlog is full: enough
			}
			conns = append(conns, c)
		}
	}
	// Let mockd run out while the clients hold their connections.
	waitFor(t, "mockd to run out of file descriptors", func() bool {
		return strings.Contains(s.Output(), "too many open files")
	})
	for _, c := range conns {
		_ = c.Close()
	}
	short := &http.Client{Timeout: 5 * time.Second}
	for _, url := range []string{"http://127.0.0.1:" + strconv.Itoa(port) + "/", s.Admin + "/imposters"} {
		waitFor(t, "an answer from "+url, func() bool {
			resp, err := short.Get(url)
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
}

// Item 10: --localOnly and --ipWhitelist apply to imposters too (as in Mountebank), and --help
// says so. At b7b0a86 it said "admin API" only.
func TestAccessFlagsHelp(t *testing.T) {
	out, err := exec.Command(mockdBin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("mockd serve --help: %v\n%s", err, out)
	}
	for _, flag := range []string{"--localOnly", "--ipWhitelist"} {
		i := strings.Index(string(out), flag)
		if i < 0 {
			t.Fatalf("--help does not list %s:\n%s", flag, out)
		}
		line, _, _ := strings.Cut(string(out[i:]), "\n")
		if !strings.Contains(line, "imposter") {
			t.Errorf("--help: %q does not say it applies to imposters", line)
		}
	}
}

// getFrom sends GET url from the loopback address local and returns the status, or 0 when the
// connection is closed without an answer. The test is skipped where local cannot be bound (only
// Linux gives the loopback interface all of 127.0.0.0/8).
func getFrom(t *testing.T, local, url string) int {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Skipf("cannot send from %s on this machine: %v", local, err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return 0
		}
		t.Fatalf("GET %s from %s: %v", url, local, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Item 10: --localOnly and --ipWhitelist guard every imposter as well as the admin API, and, as
// in Mountebank, only the loopback interface's own address is always let in: a client from
// 127.0.0.2 is refused (its connection closed, no answer) unless it is whitelisted. At b7b0a86
// all of 127.0.0.0/8 was let in.
func TestAccessFlagsApplyToImposters(t *testing.T) {
	for _, tc := range []struct {
		flags   []string
		allowed []string // client addresses answered
		refused []string // client addresses whose connection is closed unanswered
	}{
		{[]string{"--localOnly"}, []string{"127.0.0.1"}, []string{"127.0.0.2"}},
		{[]string{"--ipWhitelist", "127.0.0.2|10.0.0.1"}, []string{"127.0.0.1", "127.0.0.2"}, []string{"127.0.0.3"}},
		{[]string{"--localOnly", "--ipWhitelist", "127.0.0.2"}, []string{"127.0.0.1"}, []string{"127.0.0.2"}},
		{nil, []string{"127.0.0.1", "127.0.0.2"}, nil},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			port := listenFree(t)
			cfg := filepath.Join(t.TempDir(), "mockd.yaml")
			imp := fmt.Sprintf("imposters:\n  - {port: %d, protocol: http, stubs: [{responses: [{is: {body: hello}}]}]}\n", port)
			if err := os.WriteFile(cfg, []byte(imp), 0o644); err != nil {
				t.Fatal(err)
			}
			s := start(t, append([]string{"-c", cfg}, tc.flags...)...)
			imposter := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
			for _, from := range tc.allowed {
				if got := getFrom(t, from, imposter); got != 200 {
					t.Errorf("imposter, from %s: status %d, want 200", from, got)
				}
				if got := getFrom(t, from, s.Admin+"/imposters"); got != 200 {
					t.Errorf("admin API, from %s: status %d, want 200", from, got)
				}
			}
			for _, from := range tc.refused {
				if got := getFrom(t, from, imposter); got != 0 {
					t.Errorf("imposter, from %s: status %d, want the connection closed", from, got)
				}
				if got := getFrom(t, from, s.Admin+"/imposters"); got != 0 {
					t.Errorf("admin API, from %s: status %d, want the connection closed", from, got)
				}
			}
		})
	}
}

// readmeSection returns the text of the README's section that starts with heading, up to the
// next heading of the same or a higher level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	readme := readFile(t, "../../README.md")
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	rest := readme[i+1+len(heading):]
	for k := 1; k <= strings.IndexByte(heading, ' '); k++ { // headings of level 1 to heading's
		if j := strings.Index(rest, "\n"+strings.Repeat("#", k)+" "); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// Every limit has a flag that `mockd serve --help` and `mockd start --help` list, a row in the
// README's Limits section, and the help text the README quotes is the binary's; the path rules
// of --file-root and the script memory limit are among the differences from Mountebank.
func TestLimitsAreDocumented(t *testing.T) {
	limits := readmeSection(t, "### Limits")
	differences := readmeSection(t, "## Differences from Mountebank")
	for _, cmd := range []string{"serve", "start"} {
		out, err := exec.Command(mockdBin, cmd, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("mockd %s --help: %v\n%s", cmd, err, out)
		}
		for _, flag := range []string{"--max-body", "--admin-max-body", "--header-timeout", "--idle-timeout", "--journal-size", "--journal-bytes",
			"--script-timeout", "--script-memory", "--drain-timeout", "--file-root"} {
			line := ""
			for l := range strings.Lines(string(out)) {
				if f := strings.Fields(l); len(f) > 0 && f[0] == flag {
					line = strings.TrimRight(l, "\n")
				}
			}
			if line == "" {
				t.Errorf("mockd %s --help does not list %s", cmd, flag)
				continue
			}
			if !strings.Contains(limits, "| `"+flag) {
				t.Errorf("README, Limits: no row names %s", flag)
			}
			if cmd == "serve" && !strings.Contains(limits, "\n"+line+"\n") {
				t.Errorf("README, Limits, does not quote the help of %s as the binary prints it:\n%s", flag, line)
			}
		}
	}
	for _, flag := range []string{"--file-root", "--script-memory", "--max-body", "--journal-size", "--header-timeout", "--idle-timeout"} {
		if !strings.Contains(differences, flag) {
			t.Errorf("README, Differences from Mountebank, does not name %s", flag)
		}
	}
}

// lookupImposter is an imposter whose one stub answers name=<the row's name> from csvPath.
func lookupImposter(port int, csvPath string) string {
	path, _ := json.Marshal(csvPath)
	return fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"name=$ROW[name]"},"behaviors":[
		{"lookup":{"key":{"from":"path","using":{"method":"regex","selector":"\\d+"}},"fromDataSource":{"csv":{"path":%s,"keyColumn":"id"}},"into":"$ROW"}}]}]}]}`, port, path)
}

// Item 5: files named through the admin API (a lookup's CSV) are read only as regular files of
// bounded size, never while the admin API waits, and without --allowInjection only under the
// working directory, the config files' directories or --file-root. At b7b0a86 any readable file
// could be read back through a response, /dev/zero took RSS to gigabytes and a FIFO blocked
// every admin write.
func TestFilesNamedThroughTheAPI(t *testing.T) {
	root := t.TempDir()
	s := start(t, "--file-root", root)
	port := listenFree(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// Checked first: at b7b0a86 the later steps would have read /dev/zero without bound.
	status, _, body := do(t, "POST", s.Admin+"/imposters", lookupImposter(port, "/etc/passwd"))
	if status != 403 || !strings.Contains(body, "insufficient access") || !strings.Contains(body, "--file-root") {
		t.Fatalf("a lookup of /etc/passwd without --allowInjection: %d %s, want 403 insufficient access", status, body)
	}
	csv := filepath.Join(root, "people.csv")
	if status, _, body := do(t, "POST", s.Admin+"/imposters", lookupImposter(port, csv)); status != 201 {
		t.Fatalf("a lookup under --file-root: %d %s", status, body)
	}
	if err := os.WriteFile(csv, []byte("id,name\n42,Bob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, body := do(t, "GET", base+"/people/42", ""); body != "name=Bob" {
		t.Errorf("a CSV written after the imposter: %q, want name=Bob", body)
	}
	do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), "")

	// A config file's directory is allowed too.
	cfgDir := t.TempDir()
	cfgCSV := filepath.Join(cfgDir, "people.csv")
	if err := os.WriteFile(cfgCSV, []byte("id,name\n42,Ann\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := write(t, cfgDir, "imposters.json", `{"imposters":[`+lookupImposter(port, cfgCSV)+`]}`)
	sc := start(t, "-c", cfg)
	if _, _, body := do(t, "GET", base+"/people/42", ""); body != "name=Ann" {
		t.Errorf("a CSV beside the config file: %q, want name=Ann", body)
	}
	sc.stop()

	s2 := start(t, "--allowInjection")
	fifo := filepath.Join(root, "fifo.csv")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		if status, _, body := do(t, "POST", s2.Admin+"/imposters", lookupImposter(port, path)); status != 201 {
			t.Fatalf("a lookup of %s with --allowInjection: %d %s", path, status, body)
		}
		if _, _, body := do(t, "GET", base+"/people/42", ""); body != "name=$ROW[name]" {
			t.Errorf("a lookup of %s: %q, want the tokens left", path, body)
		}
		if status, _, _ := do(t, "POST", s2.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, listenFree(t))); status != 201 {
			t.Errorf("an admin write after a lookup of %s: %d", path, status)
		}
		do(t, "DELETE", s2.Admin+"/imposters/"+strconv.Itoa(port), "")
	}
	if rss := peakRSS(t, s2.cmd.Process.Pid); rss > 512<<20 {
		t.Errorf("peak RSS %d MiB after reading /dev/zero, want it bounded", rss>>20)
	}
}

// Item 9: answers that show a large journal are streamed, not built whole (twice) in memory;
// an invalid JSON error echoes only the start of a large body. At b7b0a86 GET /imposters/:port
// on a 250 MiB journal took RSS to 1.3 GB, and a 50 MB invalid body came back whole.
func TestLargeAnswersAreStreamed(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	const n, size = 400, 250 << 10 // a journal of about 100 MiB
	payload := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		if status, _, _ := do(t, "POST", "http://127.0.0.1:"+strconv.Itoa(port)+"/r/"+strconv.Itoa(i), payload); status != 200 {
			t.Fatalf("request %d: %d", i, status)
		}
	}
	before := rss(t, s.cmd.Process.Pid)
	for round := 0; round < 2; round++ {
		resp, err := client.Get(s.Admin + "/imposters/" + strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			NumberOfRequests int `json:"numberOfRequests"`
			Requests         []struct {
				Path string `json:"path"`
				Body string `json:"body"`
			} `json:"requests"`
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /imposters/%d: %d %v", port, resp.StatusCode, err)
		}
		if got.NumberOfRequests != n || len(got.Requests) != n || got.Requests[n-1].Path != "/r/"+strconv.Itoa(n-1) || got.Requests[0].Body != payload {
			t.Fatalf("GET /imposters/%d: %d requests of %d, want all %d with their bodies", port, len(got.Requests), got.NumberOfRequests, n)
		}
	}
	// Held twice (as values and as text) the answer would add another 100 MiB at least.
	if grew := peakRSS(t, s.cmd.Process.Pid) - before; grew > n*size/2 {
		t.Errorf("peak RSS grew by %d MiB answering GET /imposters/:port on a %d MiB journal", grew>>20, n*size>>20)
	}

	big := "{" + strings.Repeat(`"a":1,`, 8<<20) // 48 MiB of invalid JSON
	status, _, body := do(t, "POST", s.Admin+"/imposters", big)
	if status != 400 || !strings.Contains(body, "invalid JSON") || len(body) > 16<<10 {
		t.Errorf("a 48 MiB invalid body: %d, an answer of %d bytes (%.200s), want 400 echoing a few KiB", status, len(body), body)
	}
}

// Item 6: scripts that cannot reach the imposter's state run beside each other, so endless
// loops do not hold up a good request. At b7b0a86 every scripted request of an imposter waited
// for the ones before it (three loops made a good request wait three time limits).
func TestScriptsRunConcurrently(t *testing.T) {
	// A time limit far longer than the test needs, so that a loaded machine cannot make a loop
	// fail before the good request is answered; the loops' clients then go away, which stops
	// their scripts (a request whose client closed its connection is interrupted).
	s := start(t, "--allowInjection", "--script-timeout", "60s")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/loop"}}],"responses":[{"inject":"function (config) { while (true) {} }"}]},
		{"responses":[{"inject":"function (config) { return { body: 'good ' + config.request.path }; }"}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	var loopsDone atomic.Int32
	loops := make(chan struct{}, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 3; i++ {
		go func() {
			defer func() { loops <- struct{}{} }()
			req, err := http.NewRequestWithContext(ctx, "GET", base+"/loop", nil)
			if err == nil {
				if resp, err := client.Do(req); err == nil {
					_ = resp.Body.Close()
				}
			}
			loopsDone.Add(1)
		}()
	}
	waitFor(t, "3 loops in flight", func() bool { return numberOfRequests(t, s, port) == 3 })
	if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != "good /good" {
		t.Fatalf("a good request beside 3 loops: %d %q", status, body)
	}
	if n := loopsDone.Load(); n > 0 {
		t.Errorf("the good request was answered only after %d of the 3 loops had ended", n)
	}
	cancel()
	for i := 0; i < 3; i++ {
		<-loops
	}
	// Their clients gone, the imposter still answers.
	if status, _, body := do(t, "GET", base+"/after", ""); status != 200 || body != "good /after" {
		t.Errorf("after the loops' clients went away: %d %q", status, body)
	}
}

// Item 6: a script that allocates without end fails its request with Mountebank's error body
// once it takes more than --script-memory, and its memory is given back. At b7b0a86 it took
// RSS to gigabytes until its time limit, and RSS stayed there.
func TestScriptMemoryLimit(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "20s", "--script-memory", "64MiB")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/bomb"}}],"responses":[{"inject":"function (config) { var a = []; while (true) a.push(new Array(1e6)); }"}]},
		{"responses":[{"inject":"function (config) { return { body: 'good ' + config.request.path }; }"}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	status, _, body := do(t, "GET", base+"/bomb", "")
	if status != 500 || !strings.Contains(body, "invalid injection") || !strings.Contains(body, "memory") {
		t.Fatalf("the memory bomb: %d %s, want 500 invalid injection, out of memory", status, body)
	}
	waitFor(t, "the memory to be given back", func() bool { return rss(t, s.cmd.Process.Pid) < 200<<20 })
	if status, _, body := do(t, "GET", base+"/good", ""); status != 200 || body != "good /good" {
		t.Errorf("a good request after the bomb: %d %q", status, body)
	}
}
