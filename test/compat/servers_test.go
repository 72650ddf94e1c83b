package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Admin ports come from the top of the range reserved for this suite, so
// they never collide with the imposter ports the scenarios use.
const (
	adminPortLow  = 26900
	adminPortHigh = 26999
	readyTries    = 150 // × readyPause: how long a server may take to start
	readyPause    = 100 * time.Millisecond
	freeTries     = 50 // × readyPause: how long an imposter port may take to close
)

// syncBuffer collects a server's output for diagnostics.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is one running engine (Mountebank or mockd) with one flag set.
type server struct {
	engine string // "mb" or "mockd"
	flags  []string
	port   int
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) String() string {
	return fmt.Sprintf("%s on :%d [%s]", s.engine, s.port, strings.Join(s.flags, " "))
}

// servers starts engines lazily, one per engine and flag set, and stops
// them all at the end of the run.
type servers struct {
	mbBin    string
	mockdBin string
	workDir  string

	mu      sync.Mutex
	running map[string]*server
	used    map[int]bool
}

func (ss *servers) get(engine string, flags []string, key string) (*server, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	id := engine + "|" + key
	if s, ok := ss.running[id]; ok {
		select {
		case <-s.exited:
			// It crashed during an earlier scenario, which reported it;
			// start a fresh one so later scenarios still run.
		default:
			return s, nil
		}
	}
	s, err := ss.start(engine, flags)
	if err != nil {
		return nil, err
	}
	ss.running[id] = s
	return s, nil
}

func (ss *servers) start(engine string, flags []string) (*server, error) {
	port, err := ss.freeAdminPort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(ss.workDir, engine+"-")
	if err != nil {
		return nil, err
	}
	// The same arguments for both engines (mockd accepts mb's flag names),
	// so that GET /config can be compared. --host keeps every listener,
	// Mountebank's imposters included, on the loopback interface.
	args := append([]string{"start", "--port", strconv.Itoa(port), "--host", "127.0.0.1", "--nologfile"}, flags...)
	// A flag may name a file of the suite as ${compat}/testdata/… (the engines run in a
	// directory of their own): --protofile.
	if wd, err := os.Getwd(); err == nil {
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "${compat}", wd)
		}
	}
	bin := ss.mbBin
	if engine == "mockd" {
		bin = ss.mockdBin
	}
	s := &server{engine: engine, flags: flags, port: port, out: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir // where mb.pid and friends go
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	setProcessGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		s.cmd.Wait() //nolint:errcheck // exit status is reported through the output
		close(s.exited)
	}()
	if err := s.waitReady(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls GET / until the admin API answers.
func (s *server) waitReady() error {
	for range readyTries {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited before it answered; its output:\n%s", s, s.tail())
		default:
		}
		ex := roundTrip(s.addr(), rawRequest{Method: "GET", Target: "/", Headers: []header{{"Accept", "application/json"}}})
		if ex.Err == "" {
			return nil
		}
		time.Sleep(readyPause)
	}
	return fmt.Errorf("%s did not answer GET / after %d tries; its output:\n%s", s, readyTries, s.tail())
}

// tail is the end of the server's output, for failure messages.
func (s *server) tail() string {
	lines := strings.Split(strings.TrimRight(s.out.String(), "\n"), "\n")
	if len(lines) > 40 {
		lines = append([]string{"…"}, lines[len(lines)-40:]...)
	}
	return strings.Join(lines, "\n")
}

func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	stopProcess(s.cmd)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		killProcess(s.cmd)
		<-s.exited
	}
}

func (ss *servers) stopAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.running {
		s.stop()
	}
}

// freeAdminPort picks an unused port in the suite's admin range, starting
// at a random offset.
func (ss *servers) freeAdminPort() (int, error) {
	n := adminPortHigh - adminPortLow + 1
	off := rand.IntN(n)
	for i := range n {
		p := adminPortLow + (off+i)%n
		if ss.used[p] {
			continue
		}
		if portFree(p) {
			ss.used[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free admin port in %d-%d", adminPortLow, adminPortHigh)
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// waitPortsFree waits until the imposter ports of a scenario are closed,
// so one engine never finds the other's listener.
func waitPortsFree(ports []int) error {
	for _, p := range ports {
		free := false
		for range freeTries {
			if portFree(p) {
				free = true
				break
			}
			time.Sleep(readyPause)
		}
		if !free {
			return fmt.Errorf("imposter port %d is still in use (by a leftover imposter or another process)", p)
		}
	}
	return nil
}

// ensureMountebank installs the pinned Mountebank with npm ci unless it is
// already there, and returns the path of its mb script.
func ensureMountebank(compatDir string) (string, error) {
	need := func(tool string) error {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not on PATH: the Mountebank comparison suite needs Node.js and npm to install and run Mountebank %s "+
				"(set MOCKD_COMPAT_SKIP=1 to skip the suite)", tool, mountebankVersion)
		}
		return nil
	}
	if err := need("node"); err != nil {
		return "", err
	}
	mb := filepath.Join(compatDir, "node_modules", ".bin", "mb")
	if _, err := os.Stat(mb); err == nil && installedMountebankVersion(compatDir) == mountebankVersion {
		return mb, nil
	}
	if err := need("npm"); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = compatDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("npm ci in %s failed: %w\n%s", compatDir, err, out)
	}
	if _, err := os.Stat(mb); err != nil {
		return "", errors.New("npm ci succeeded but node_modules/.bin/mb is missing")
	}
	if v := installedMountebankVersion(compatDir); v != mountebankVersion {
		return "", fmt.Errorf("npm ci installed Mountebank %q, want %s: check package-lock.json", v, mountebankVersion)
	}
	return mb, nil
}

// mountebankVersion is the version the suite compares against; the lock
// file pins it.
const mountebankVersion = "2.9.1"

func installedMountebankVersion(compatDir string) string {
	data, err := os.ReadFile(filepath.Join(compatDir, "node_modules", "mountebank", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// buildMockd builds ./cmd/mockd into dir.
func buildMockd(repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "mockd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mockd")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/mockd failed: %w\n%s", err, out)
	}
	return bin, nil
}
