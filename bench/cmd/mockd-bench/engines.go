package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	mountebankVersion = "2.9.1"
	riftCrate         = "rift-http-proxy"
)

// engine is one server under test. prepare installs or builds it (once); start runs it with its
// admin API (or, for the ceiling, its only listener) on port.
type engine struct {
	name    string
	version string
	bin     string // the executable prepare found or built
	// ceiling is the bare fasthttp server: no admin API, restarted per scenario with the
	// scenario's expected answer.
	ceiling bool
	// sockets (ceiling-sockets) makes the ceiling also open a listening socket on each POST
	// and close it on each DELETE: admin-pairs' floor with the kernel's share of an imposter.
	sockets bool
	// api is the admin API the engine speaks: "mb" (Mountebank's: mockd, Mountebank, Rift),
	// "wiremock" or "mockserver"; "" for the ceiling.
	api     string
	jvm     bool   // a Java peer: longer warm-up for the JIT
	jar     string // the Java peer's jar
	prepare func(h *harness, e *engine) error
	args    func(h *harness, e *engine, l launch) []string
}

// proc is a started engine process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process group it started, then SIGKILL after 10 s.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	if p.alive() {
		_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
			<-p.done
		}
	}
	p.log.Close()
}

// startProc runs name with args in its own process group, pinned to cpu when cpu is set,
// logging to logPath.
func startProc(cpu, logPath, dir string, name string, args ...string) (*proc, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	n, a := pinned(cpu, name, args...)
	fmt.Fprintf(lf, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), n, strings.Join(a, " "))
	cmd := exec.Command(n, a...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: lf}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// rssKB is the process's resident set size from /proc/PID/status, in KiB.
func rssKB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// cpuTicks is the process's user plus system CPU time in clock ticks (all threads), from
// /proc/PID/stat.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; fields count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// waitHTTP polls url until it answers, the process dies, or timeout passes.
func waitHTTP(p *proc, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		if !p.alive() {
			return errors.New("process exited during startup (see its log)")
		}
		resp, err := c.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer from %s after %s", url, timeout)
}

// waitTCP polls addr until it accepts a connection, the process dies, or timeout passes.
func waitTCP(p *proc, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return errors.New("process exited during startup (see its log)")
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after %s", addr, timeout)
}

// freePort is the first port in [lo, hi] nothing listens on at 127.0.0.1.
func freePort(lo, hi int, skip map[int]bool) (int, error) {
	for p := lo; p <= hi; p++ {
		if skip[p] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d", lo, hi)
}

func runQuiet(ctx context.Context, dir string, env []string, logPath string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	w := io.Writer(&buf)
	if logPath != "" {
		lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer lf.Close()
		w = io.MultiWriter(&buf, lf)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(buf.String(), 8))
	}
	return nil
}

func output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	return strings.TrimSpace(string(out))
}

func newEngines() map[string]*engine {
	return map[string]*engine{
		"mockd": {
			name:    "mockd",
			api:     "mb",
			prepare: prepareMockd,
			args:    mockdArgs,
		},
		// another build of mockd (--baseline), measured in the same rounds as mockd: what a
		// change did to the speed, with the machine's drift shared by both.
		"mockd-baseline": {
			name:    "mockd-baseline",
			api:     "mb",
			prepare: prepareBaseline,
			args:    mockdArgs,
		},
		// mockd with metrics off: the metrics' cost is mockd's RPS over this one's.
		"mockd-nometrics": {
			name:    "mockd-nometrics",
			api:     "mb",
			prepare: prepareMockd,
			args: func(h *harness, e *engine, l launch) []string {
				return append(mockdArgs(h, e, l), "--no-metrics")
			},
		},
		// mockd with Go's runtime poller: what the FIFO poller (the default) changes.
		"mockd-gopoller": {
			name:    "mockd-gopoller",
			api:     "mb",
			prepare: prepareMockd,
			args: func(h *harness, e *engine, l launch) []string {
				return append(mockdArgs(h, e, l), "--netpoller", "go")
			},
		},
		// mockd sharing its imposters and their state through Redis (--store): the report
		// gives its RPS over mockd's, the cost of --store (see store.go).
		"mockd-store": {
			name:    "mockd-store",
			api:     "mb",
			prepare: prepareMockdStore,
			args:    mockdStoreArgs,
		},
		"mountebank": {
			name:    "mountebank",
			api:     "mb",
			prepare: prepareMountebank,
			args: func(h *harness, e *engine, l launch) []string {
				return withConfig([]string{"start", "--port", strconv.Itoa(l.admin), "--host", "127.0.0.1", "--allowInjection",
					"--loglevel", "warn", "--nologfile", "--pidfile", filepath.Join(h.runDir, "mb.pid")}, "--configfile", l)
			},
		},
		"rift": {
			name:    "rift",
			api:     "mb",
			prepare: prepareRift,
			args: func(h *harness, e *engine, l launch) []string {
				// --local-only also moves the metrics listener to 127.0.0.1.
				return withConfig([]string{"--port", strconv.Itoa(l.admin), "--host", "127.0.0.1", "--local-only", "--metrics-port", strconv.Itoa(l.admin + 1),
					"--allow-injection", "--loglevel", "warn", "--nologfile", "--pidfile", filepath.Join(h.runDir, "rift.pid")}, "--configfile", l)
			},
		},
		"wiremock": {
			name:    "wiremock",
			api:     "wiremock",
			jvm:     true,
			prepare: prepareJava(wiremockArtifact, wiremockJar),
			args:    wiremockArgs,
		},
		"mockserver": {
			name:    "mockserver",
			api:     "mockserver",
			jvm:     true,
			prepare: prepareJava(mockserverArtifact, mockserverJar),
			args:    mockserverArgs,
		},
		"ceiling": {
			name:    "ceiling",
			ceiling: true,
			prepare: func(h *harness, e *engine) error {
				e.version = "fasthttp constant server (bench/cmd/ceiling)"
				err := h.buildCeiling()
				e.bin = h.ceilingBin
				return err
			},
		},
		"ceiling-sockets": {
			name:    "ceiling-sockets",
			ceiling: true,
			sockets: true,
			prepare: func(h *harness, e *engine) error {
				e.version = "fasthttp constant server (bench/cmd/ceiling -listen-on-post): admin-pairs only, each POST also opens a listening socket on the imposter's port and each DELETE closes it"
				err := h.buildCeiling()
				e.bin = h.ceilingBin
				return err
			},
		},
	}
}

// withConfig adds the config file flag when the engine starts from one.
func withConfig(args []string, flag string, l launch) []string {
	if l.config != "" {
		args = append(args, flag, l.config)
	}
	return args
}

// prepareMockd uses --mockd or builds ./cmd/mockd, once per run.
func prepareMockd(h *harness, e *engine) error {
	if h.mockdVersion != "" {
		e.bin, e.version = filepath.Join(h.peers, "mockd"), h.mockdVersion
		if h.opts.mockdPath != "" {
			e.bin = h.opts.mockdPath
		}
		return nil
	}
	defer func() { h.mockdVersion = e.version }()
	if h.opts.mockdPath != "" {
		e.bin = h.opts.mockdPath
		e.version = firstLine(output(e.bin, "version")) + " (--mockd " + e.bin + ")"
		return nil
	}
	e.bin = filepath.Join(h.peers, "mockd")
	h.logf("building mockd from %s", h.root)
	if err := buildMockd(h, h.root, e.bin); err != nil {
		return err
	}
	e.version = firstLine(output(e.bin, "version"))
	if rev := output("git", "-C", h.root, "describe", "--always", "--dirty"); rev != "" && !strings.Contains(rev, "fatal") {
		e.version += " (" + rev + ")"
	}
	return nil
}

// buildMockd builds ./cmd/mockd of the checkout src into bin as a user's binary is built
// (the release, the Makefile and the Dockerfile: CGO_ENABLED=0, -trimpath, -ldflags '-s -w'),
// then copies it into place with write(2), as an archive, a package manager or a container
// layer puts it on disk. The copy matters to the resident memory measured: pages the linker
// wrote through its memory mapping can stay in the page cache in a form that maps more of the
// binary on each fault (2 MB more RssFile for one and the same binary, seen on Linux 6.18).
func buildMockd(h *harness, src, bin string) error {
	linked := bin + ".linked"
	defer os.Remove(linked)
	if err := runQuiet(h.ctx, src, []string{"CGO_ENABLED=0"}, "", "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", linked, "./cmd/mockd"); err != nil {
		return err
	}
	return copyExecutable(linked, bin)
}

// copyExecutable writes a fresh copy of the executable from to the path to.
func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.Remove(to); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	// (The wrapper hides ReadFrom: plain write(2), not copy_file_range.)
	if _, err := io.Copy(struct{ io.Writer }{out}, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// prepareBaseline uses --baseline as an executable when it names one, and otherwise builds that
// git revision of the repository (git archive into .peers/baseline-REV, then go build), once.
func prepareBaseline(h *harness, e *engine) error {
	b := h.opts.baseline
	if b == "" {
		return errors.New("no --baseline given (a git revision or a mockd executable)")
	}
	if st, err := os.Stat(b); err == nil && !st.IsDir() {
		if e.bin, err = filepath.Abs(b); err != nil {
			return err
		}
		e.version = firstLine(output(e.bin, "version")) + " (--baseline " + b + ")"
		return nil
	}
	rev := output("git", "-C", h.root, "rev-parse", "--verify", "--quiet", b+"^{commit}")
	if len(rev) != 40 {
		return fmt.Errorf("--baseline %q is neither an executable nor a git revision of %s", b, h.root)
	}
	src := filepath.Join(h.peers, "baseline-"+rev[:12])
	e.bin = filepath.Join(src, "mockd")
	if _, err := os.Stat(e.bin); err != nil {
		if err := os.RemoveAll(src); err != nil {
			return err
		}
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		h.logf("building mockd %s (--baseline %s) in %s", rev[:12], b, src)
		if err := runQuiet(h.ctx, h.root, nil, "", "sh", "-c", `git archive "$0" | tar -x -C "$1"`, rev, src); err != nil {
			return err
		}
		if err := buildMockd(h, src, e.bin); err != nil {
			return err
		}
	}
	e.version = firstLine(output(e.bin, "version")) + " (" + rev[:12] + ")"
	return nil
}

func mockdArgs(h *harness, e *engine, l launch) []string {
	return withConfig([]string{"start", "--port", strconv.Itoa(l.admin), "--host", "127.0.0.1", "--allowInjection",
		"--loglevel", "warn", "--nologfile", "--pidfile", filepath.Join(h.runDir, "mockd.pid")}, "--configfile", l)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// prepareMountebank uses --mb, then an mb 2.9.1 on PATH, then bench/.peers/mountebank, and
// installs mountebank@2.9.1 from npm there when none is found.
func prepareMountebank(h *harness, e *engine) error {
	candidates := []string{h.opts.mbPath}
	if p, err := exec.LookPath("mb"); err == nil {
		candidates = append(candidates, p)
	}
	local := filepath.Join(h.peers, "mountebank", "node_modules", ".bin", "mb")
	candidates = append(candidates, local)
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if v := output(c, "--version"); v == mountebankVersion {
			e.bin, e.version = c, v
			return nil
		}
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("mb is missing and npm is not installed")
	}
	h.logf("installing mountebank@%s from npm into %s", mountebankVersion, filepath.Dir(filepath.Dir(filepath.Dir(local))))
	dir := filepath.Join(h.peers, "mountebank")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Minute)
	defer cancel()
	if err := runQuiet(ctx, dir, nil, filepath.Join(h.peers, "mountebank-install.log"), "npm", "install", "--no-audit", "--no-fund",
		"--prefix", dir, "mountebank@"+mountebankVersion); err != nil {
		return err
	}
	if v := output(local, "--version"); v != mountebankVersion {
		return fmt.Errorf("installed mb reports version %q", v)
	}
	e.bin, e.version = local, mountebankVersion
	return nil
}

var versionLine = regexp.MustCompile(`(?m)^version:\s*([0-9][^ \n]*)`)

// prepareRift uses --rift, then bench/.peers/rift/bin/rift-http-proxy, and otherwise runs cargo install
// with the newest rift-http-proxy whose rust-version the local toolchain satisfies (as
// `cargo info` picks it), or --rift-version when given.
func prepareRift(h *harness, e *engine) error {
	bin := filepath.Join(h.peers, "rift", "bin", "rift-http-proxy")
	for _, c := range []string{h.opts.riftPath, bin} {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			e.bin, e.version = c, firstLine(output(c, "--version"))
			return nil
		}
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		return errors.New("rift is missing and cargo is not installed")
	}
	version := h.opts.riftVersion
	if version == "" {
		m := versionLine.FindStringSubmatch(output("cargo", "info", riftCrate))
		if m == nil {
			return errors.New("cargo info found no rift-http-proxy version for this toolchain")
		}
		version = m[1]
	}
	logPath := filepath.Join(h.peers, "rift-build.log")
	h.logf("building %s %s with cargo (%s; log: %s) — this takes a while", riftCrate, version, output("rustc", "--version"), logPath)
	ctx, cancel := context.WithTimeout(h.ctx, h.opts.installTimeout)
	defer cancel()
	if err := runQuiet(ctx, h.peers, nil, logPath, "cargo", "install", riftCrate, "--version", version, "--locked",
		"--root", filepath.Join(h.peers, "rift")); err != nil {
		return err
	}
	e.bin, e.version = bin, firstLine(output(bin, "--version"))
	return nil
}
