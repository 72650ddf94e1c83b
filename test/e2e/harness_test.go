// Package e2e holds black-box tests: each starts the real mockd binary on 127.0.0.1 and talks
// to it over the wire.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var mockdBin string

func TestMain(m *testing.M) {
	code := func() int {
		if bin := os.Getenv("MOCKD_BIN"); bin != "" {
			mockdBin = bin
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "mockd-e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		mockdBin = filepath.Join(dir, "mockd")
		build := exec.Command("go", "build", "-o", mockdBin, "./cmd/mockd")
		build.Dir = "../.."
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "cannot build mockd:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// server is one running mockd process.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	Admin  string // "http://127.0.0.1:PORT"
	mu     sync.Mutex
	output bytes.Buffer
	exited chan struct{}
}

var readyLine = regexp.MustCompile(`now taking orders - point your browser to http://localhost:(\d+)/`)

// start runs `mockd serve --port 0 --host 127.0.0.1 args...` and waits until it prints its ready
// line. It fails the test if the process exits first.
func start(t *testing.T, args ...string) *server {
	t.Helper()
	s, err := tryStart(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryStart is start without failing: it returns the error and output when mockd does not come up.
func tryStart(t *testing.T, args ...string) (*server, error) {
	t.Helper()
	full := append([]string{"serve", "--port", "0", "--host", "127.0.0.1"}, args...)
	return startCmd(t, exec.Command(mockdBin, full...), strings.Join(full, " "))
}

// startCmd runs cmd (mockd, perhaps through a shell that sets limits first) as tryStart does;
// what names it in errors.
func startCmd(t *testing.T, cmd *exec.Cmd, what string) (*server, error) {
	t.Helper()
	s := &server{t: t, cmd: cmd, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &lockedWriter{s: s}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.output.WriteString(line + "\n")
			s.mu.Unlock()
			if m := readyLine.FindStringSubmatch(line); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case p := <-port:
		s.Admin = "http://127.0.0.1:" + p
		t.Cleanup(s.stop)
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("mockd %s exited before it was ready (code %d):\n%s", what, cmd.ProcessState.ExitCode(), s.Output())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("mockd did not become ready:\n%s", s.Output())
	}
}

type lockedWriter struct{ s *server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.output.Write(p)
}

// Output returns everything mockd printed so far.
func (s *server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.output.String()
}

func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// do sends a request and returns status, headers and body.
func do(t *testing.T, method, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// jsonBody decodes a JSON body into a generic value, failing the test when it is not JSON.
func jsonBody(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	return v
}
