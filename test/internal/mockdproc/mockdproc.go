// Package mockdproc builds the mockd binary and runs it for the black-box suites (test/e2e,
// test/browser): each process serves on 127.0.0.1 and is found ready by its ready line.
package mockdproc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Main is a black-box suite's TestMain: it builds mockd (see Build) into *bin, runs the tests
// and exits with their code.
func Main(m interface{ Run() int }, root string, bin *string) {
	b, done, err := Build(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = b
	code := m.Run()
	done()
	os.Exit(code)
}

// Build returns the mockd binary to test: $MOCKD_BIN, or one built from the repository at root
// into a temporary directory that done removes.
func Build(root string) (bin string, done func(), err error) {
	if bin := os.Getenv("MOCKD_BIN"); bin != "" {
		return bin, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "mockd-test")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "mockd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockd")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("cannot build mockd: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// Server is one running mockd process.
type Server struct {
	Cmd    *exec.Cmd
	Admin  string        // "http://127.0.0.1:PORT"
	Exited chan struct{} // closed when the process has exited
	output SyncBuffer
}

// SyncBuffer is a bytes.Buffer that a process's output and a test may use at once.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var readyLine = regexp.MustCompile(`now taking orders - point your browser to http://localhost:(\d+)/`)

// Args are the arguments that make `mockd serve` listen on a free loopback port.
func Args(args ...string) []string {
	return append([]string{"serve", "--port", "0", "--host", "127.0.0.1"}, args...)
}

// Start runs cmd (mockd, perhaps through a shell that sets limits first) and waits until it
// prints its ready line; what names it in errors. When it exits first or is not ready within
// 30 seconds, the error holds its output.
func Start(cmd *exec.Cmd, what string) (*Server, error) {
	s := &Server{Cmd: cmd, Exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &s.output
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			_, _ = s.output.Write([]byte(line + "\n"))
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
		close(s.Exited)
	}()
	select {
	case p := <-port:
		s.Admin = "http://127.0.0.1:" + p
		return s, nil
	case <-s.Exited:
		return nil, fmt.Errorf("mockd %s exited before it was ready (code %d):\n%s", what, cmd.ProcessState.ExitCode(), s.Output())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("mockd did not become ready:\n%s", s.Output())
	}
}

// Output returns everything mockd printed so far.
func (s *Server) Output() string { return s.output.String() }

// Stop interrupts the process and waits for it, killing it after 15 seconds.
func (s *Server) Stop() { Interrupt(s.Cmd.Process, s.Exited, 15*time.Second) }

// Interrupt ends a process the caller started: it sends an interrupt, waits until exited is
// closed, and kills the process if that takes longer than grace. A process that has exited
// already is left alone.
func Interrupt(p *os.Process, exited <-chan struct{}, grace time.Duration) {
	select {
	case <-exited:
		return
	default:
	}
	_ = p.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = p.Kill()
		<-exited
	}
}

// Client is the HTTP client the suites share.
var Client = &http.Client{Timeout: 30 * time.Second}

// Do sends a request and returns status, headers and body; headers are name, value pairs.
func Do(method, url, body string, headers ...string) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := Client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// Burst sends n GET requests at once, to url(i) for the i-th, all released together after
// their goroutines started, and counts the answers by status; it returns the errors of the
// requests that got no answer.
func Burst(n int, url func(i int) string) (byStatus map[int]int, errs []error) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		gate = make(chan struct{})
	)
	byStatus = map[int]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			status, _, _, err := Do("GET", url(i), "")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			byStatus[status]++
		}()
	}
	close(gate)
	wg.Wait()
	return byStatus, errs
}
