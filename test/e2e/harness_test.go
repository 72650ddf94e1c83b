// Package e2e holds black-box tests: each starts the real mockd binary on 127.0.0.1 and talks
// to it over the wire.
package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

var mockdBin string

func TestMain(m *testing.M) { mockdproc.Main(suite{m}, "../..", &mockdBin) }

// suite runs the tests, then removes what they built once for all of them.
type suite struct{ m *testing.M }

func (s suite) Run() int {
	code := s.m.Run()
	if release.bin != "" {
		os.RemoveAll(filepath.Dir(release.bin))
	}
	return code
}

// server is one running mockd process.
type server struct {
	*mockdproc.Server
	cmd    *exec.Cmd
	exited chan struct{}
}

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
	full := mockdproc.Args(args...)
	return startCmd(t, exec.Command(mockdBin, full...), strings.Join(full, " "))
}

// startCmd runs cmd (mockd, perhaps through a shell that sets limits first) as tryStart does;
// what names it in errors. The process is stopped when the test ends.
func startCmd(t *testing.T, cmd *exec.Cmd, what string) (*server, error) {
	t.Helper()
	p, err := mockdproc.Start(cmd, what)
	if err != nil {
		return nil, err
	}
	t.Cleanup(p.Stop)
	return &server{Server: p, cmd: p.Cmd, exited: p.Exited}, nil
}

func (s *server) stop() { s.Stop() }

var client = mockdproc.Client

// do sends a request and returns status, headers and body.
func do(t *testing.T, method, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	status, h, b, err := mockdproc.Do(method, url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return status, h, string(b)
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

// serveLoopback listens on a free loopback port until the test ends and runs handle on each
// connection in a goroutine of its own, closing the connection when handle returns; it
// returns the listener's address. The stand-in servers of the tests (origins, a fake admin
// API) are this with their own handle.
func serveLoopback(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}
