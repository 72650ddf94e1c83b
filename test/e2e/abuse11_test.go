package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleTCPAndSMTPConnectionsGiveWayWhenOutOfDescriptors: tcp and smtp clients holding idle
// connections (answered, or greeted, and waiting) until mockd ran out of file descriptors kept
// the http imposters from accepting until the idle timeout: only idle http connections were
// closed for a waiting client. Now idle tcp and smtp connections are closed too, those idle
// longest first; a connection in a request (an smtp message being sent) is left alone.
func TestIdleTCPAndSMTPConnectionsGiveWayWhenOutOfDescriptors(t *testing.T) {
	if _, err := os.Stat("/proc/self/limits"); err != nil {
		t.Skip("needs /proc and sh's ulimit")
	}
	for _, protocol := range []string{"tcp", "smtp"} {
		t.Run(protocol, func(t *testing.T) {
			s := startUnderLimit(t, "-n 64", "--idle-timeout", "10m")
			httpPort, port := listenFree(t), listenFree(t)
			for _, imp := range []string{
				fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"hello"}}]}]}`, httpPort),
				fmt.Sprintf(`{"protocol":%q,"port":%d,"stubs":[{"responses":[{"is":{"data":"hello"}}]}]}`, protocol, port),
			} {
				if status, _, body := do(t, "POST", s.Admin+"/imposters", imp, "Connection", "close"); status != 201 {
					t.Fatalf("create: %d %s", status, body)
				}
			}
			client.CloseIdleConnections()
			// (Descriptors the process inherited above the limit, such as make's, do not count.)
			fds := func() int {
				list, err := os.ReadDir("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/fd")
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range list {
					if fd, err := strconv.Atoi(e.Name()); err == nil && fd < 64 {
						n++
					}
				}
				return n
			}
			var held []net.Conn
			defer func() {
				for _, c := range held {
					_ = c.Close()
				}
			}()
			// One client in a request: an smtp message under way.
			var busy *bufio.Reader
			if protocol == "smtp" {
				c, r := dialSMTP(t, port)
				held = append(held, c)
				for _, cmd := range []string{"EHLO x", "MAIL FROM:<a@example.com>", "RCPT TO:<b@example.com>", "DATA"} {
					if _, err := io.WriteString(c, cmd+"\r\n"); err != nil {
						t.Fatal(err)
					}
					readReply(t, r)
				}
				if _, err := io.WriteString(c, "Subject: hi\r\n\r\nbody\r\n"); err != nil {
					t.Fatal(err)
				}
				busy = r
			}
			// Idle clients, each answered (or greeted), until mockd has no descriptor left.
			for i := 0; fds() < 64 && i < 100; i++ {
				if protocol == "tcp" {
					c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					held = append(held, c)
					_ = c.SetDeadline(time.Now().Add(time.Minute)) // (a hang is not a slow answer)
					if _, err := io.WriteString(c, "hi"); err != nil {
						t.Fatal(err)
					}
					if got, err := io.ReadAll(io.LimitReader(c, 5)); err != nil || string(got) != "hello" {
						t.Fatalf("tcp client %d: %q %v", i, got, err)
					}
				} else {
					c, r := dialSMTP(t, port)
					held = append(held, c)
					if _, err := io.WriteString(c, "EHLO x\r\n"); err != nil {
						t.Fatal(err)
					}
					readReply(t, r)
				}
			}
			if fds() < 64 {
				t.Fatalf("mockd holds %d descriptors, not all 64", fds())
			}
			// A new http client is served (a minute is a hang, not a slow answer).
			short := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := short.Get("http://127.0.0.1:" + strconv.Itoa(httpPort) + "/")
			if err != nil {
				t.Fatalf("GET while idle %s clients hold the descriptors: %v", protocol, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET: %d", resp.StatusCode)
			}
			waitOutput(t, s, "closing the connections idle longest")
			if busy != nil {
				// The message under way goes on.
				if _, err := io.WriteString(held[0], ".\r\n"); err != nil {
					t.Fatal(err)
				}
				if reply := readReply(t, busy); !strings.HasPrefix(reply, "250") {
					t.Fatalf("the message under way: %q", reply)
				}
			}
		})
	}
}

// dialSMTP connects to the smtp imposter on port and reads its greeting.
func dialSMTP(t *testing.T, port int) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // (a hang is not a slow answer)
	r := bufio.NewReader(c)
	if reply := readReply(t, r); !strings.HasPrefix(reply, "220") {
		_ = c.Close()
		t.Fatalf("greeting %q", reply)
	}
	return c, r
}

// readReply reads an smtp reply (its lines) and returns its last line.
func readReply(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("smtp reply: %q %v", line, err)
		}
		if len(line) < 4 || line[3] != '-' {
			return strings.TrimSpace(line)
		}
	}
}

// TestDeeplyNestedAdminBodyIsRefused: a valid JSON body nested 500,000 deep (1 MB) is refused
// as invalid JSON (400, Mountebank's error body), quickly and without a crash; what runs stays.
// Mountebank 2.9.1's process exits (RangeError: Maximum call stack size exceeded) from about
// 5,000 levels. mockd reads 10,000 levels (see the README's limits).
func TestDeeplyNestedAdminBodyIsRefused(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"kept"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	for _, depth := range []int{10001, 500000} {
		deep := `{"protocol":"http","stubs":[{"responses":[{"is":{"body":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}]}]}`
		status, _, body := do(t, "POST", s.Admin+"/imposters", deep)
		if status != 400 || !strings.Contains(body, `"code": "invalid JSON"`) {
			t.Fatalf("%d deep: %d %.300s", depth, status, body)
		}
	}
	status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", "")
	if status != 200 || body != "kept" {
		t.Fatalf("the imposter: %d %q", status, body)
	}
}

// TestSaveToAnUnwritablePlaceNamesTheFile: mockd save to a directory it cannot write in (here
// a missing one) fails naming the file asked for; it named a temporary file of its own
// (`open /x/.mb.json.2501022145.tmp: no such file or directory`).
func TestSaveToAnUnwritablePlaceNamesTheFile(t *testing.T) {
	s := start(t)
	u, err := url.Parse(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "missing", "mb.json")
	out, err := exec.Command(mockdBin, "save", "--port", u.Port(), "--host", "127.0.0.1", "--savefile", file).CombinedOutput()
	if err == nil {
		t.Fatalf("saved: %s", out)
	}
	if want := "create " + file + ": no such file or directory"; !strings.Contains(string(out), want) || strings.Contains(string(out), ".tmp") {
		t.Fatalf("output %q, want %q", out, want)
	}
}
