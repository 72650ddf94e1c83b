// Command mockd-bench runs the same Mountebank imposters in mockd, Mountebank, Rift and a bare
// fasthttp server, and the same stubs translated for WireMock and MockServer, one engine at a
// time, pinned to one core with the load generator on another, and writes a Markdown report and
// a CSV of throughput, latency, memory and ratios.
//
// Usage (from bench/): go run ./cmd/mockd-bench [--quick] [--engines mockd,mountebank,rift,wiremock,mockserver,ceiling]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	quick          bool
	engines        []string
	scenarios      string
	duration       time.Duration
	warmup         time.Duration
	runs           int
	connections    int
	timeout        time.Duration
	out            string
	loadgen        string
	engineCPU      string
	loadCPU        string
	mockdPath      string
	baseline       string
	mbPath         string
	riftPath       string
	riftVersion    string
	installTimeout time.Duration
	perf           bool
	jvmWarmup      time.Duration
	// peerRuns is the rounds of the peers measured against a target of 5x or more (Mountebank,
	// WireMock, MockServer); variants says which scenarios the mockd variants run
	// (mockd-nometrics, mockd-gopoller, mockd-store): "quick" or "all".
	peerRuns int
	variants string
}

// harness holds one invocation's state.
type harness struct {
	ctx      context.Context
	opts     options
	root     string // the main module
	benchDir string
	peers    string // bench/.peers: built and installed engines
	runDir   string // this run's logs, scripts and imposter files
	stamp    string
	results  []*result
	engines  []*engine
	skipped  map[string]string // engine -> why it is unavailable
	closes   map[string]bool   // engines that answered with Connection: close
	ports    map[int]bool
	cmdline  string
	// mockdVersion is set once prepareMockd has found or built mockd: both mockd engines
	// share the binary.
	mockdVersion string
	ceilingBin   string // cmd/ceiling, built once: the ceiling engine and the proxy origin
	// The redis-server of the mockd-store engine, started once per run, and how many
	// mockd-store processes have been started (each gets a key prefix of its own).
	redis         *proc
	redisPort     int
	storeLaunches int
	origin        string // the running proxy origin's URL
}

// result is one scenario on one engine. Status is "ok", "invalid" (errors or wrong answers),
// "unavailable" (the engine refused the imposter) or "n/a".
type result struct {
	Scenario   string
	Engine     string
	Status     string
	Note       string
	RPS        float64
	P50MS      float64
	P99MS      float64
	Requests   int64
	Errors     int64
	RSSLoaded  int64         // KiB after the imposter was loaded, before traffic (first round)
	RSSEnd     int64         // KiB after the measured run (the most of any round)
	CPUPct     float64       // the engine's CPU use during the median run, % of one core
	LoadCPUPct float64       // the load generator's, likewise
	Runs       []*loadResult // one per round
	Setups     []*setupRun   // a setup scenario's rounds
	Setup      *setupRun     // a setup scenario's medians

	checkTook time.Duration // how long the last round's checked request took
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "loadgen" || os.Args[1] == "pairs") {
		sub := map[string]func([]string) error{"loadgen": loadgenMain, "pairs": pairsMain}[os.Args[1]]
		if err := sub(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mockd-bench:", err)
		cancel()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("mockd-bench", flag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", false, "run the ~2-minute subset (1 run of 2 s per scenario)")
	engines := fs.String("engines", strings.Join(defaultEngines(), ","), "comma-separated engines to run")
	fs.StringVar(&o.scenarios, "scenarios", "", "comma-separated scenario names or name prefixes (default: all, or the quick subset)")
	fs.DurationVar(&o.duration, "duration", 0, "measured duration of each run (default 3s, 2s with --quick)")
	fs.DurationVar(&o.warmup, "warmup", -1, "unmeasured warm-up before each measured run, on the same process (default 1s)")
	fs.IntVar(&o.runs, "runs", 0, "rounds per scenario, each running every engine once on a fresh process; the median round by RPS is reported (default 3, 1 with --quick)")
	fs.IntVar(&o.peerRuns, "peer-runs", 1, "rounds for Mountebank, WireMock and MockServer, at most --runs: their targets are ratios of 5x or more, which one round measures (each round saved is 5-20 s a scenario)")
	fs.StringVar(&o.variants, "variants", "quick", "scenarios the mockd variants (mockd-nometrics, mockd-gopoller, mockd-store) run: quick (the --quick subset, or the named --scenarios) or all")
	fs.IntVar(&o.connections, "connections", 50, "keep-alive connections (a scenario may set its own)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout; a slower answer is an error")
	fs.StringVar(&o.out, "out", "", "directory for the report and CSV (default bench/results)")
	fs.StringVar(&o.loadgen, "loadgen", "go", "load generator: go (this binary's own, checks every answer) or wrk")
	fs.StringVar(&o.engineCPU, "engine-cpu", "1", "CPU list the engine is pinned to (taskset -c); empty disables pinning")
	fs.StringVar(&o.loadCPU, "load-cpu", "0", "CPU list the load generator is pinned to")
	fs.StringVar(&o.mockdPath, "mockd", "", "path to a mockd executable to use instead of building ./cmd/mockd")
	fs.StringVar(&o.baseline, "baseline", "", "another mockd to compare with, a git revision of this repository or an executable: "+
		"it runs as engine mockd-baseline (added to --engines), in the same rounds as mockd, and the report gives mockd's RPS over it")
	fs.StringVar(&o.mbPath, "mb", "", "path to an mb 2.9.1 executable to use instead of installing one")
	fs.StringVar(&o.riftPath, "rift", "", "path to a rift executable to use instead of building one")
	fs.StringVar(&o.riftVersion, "rift-version", "", "rift-http-proxy version to cargo install (default: newest this Rust builds)")
	fs.BoolVar(&o.perf, "perf", false, "record a CPU profile of each engine (perf record -g) during each scenario's first round; writes perf-*.txt to the run directory")
	fs.DurationVar(&o.installTimeout, "install-timeout", 60*time.Minute, "how long building Rift may take")
	fs.DurationVar(&o.jvmWarmup, "jvm-warmup", 0, "warm-up of the Java peers (WireMock, MockServer) before each measured run, for their JIT compiler (default 10s, 3s with --quick)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.engines = splitList(*engines)
	if o.baseline != "" && !slices.Contains(o.engines, "mockd-baseline") {
		o.engines = append(o.engines, "mockd-baseline")
	}
	for _, p := range []*string{&o.mockdPath, &o.mbPath, &o.riftPath} {
		if *p != "" && strings.ContainsRune(*p, os.PathSeparator) {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			*p = abs
		}
	}
	if o.duration == 0 {
		o.duration = pick(o.quick, 2*time.Second, 3*time.Second)
	}
	if o.warmup < 0 {
		o.warmup = time.Second
	}
	if o.runs == 0 {
		o.runs = pick(o.quick, 1, 3)
	}
	if o.jvmWarmup == 0 {
		o.jvmWarmup = pick(o.quick, 3*time.Second, 10*time.Second)
	}
	if o.peerRuns < 1 || o.peerRuns > o.runs {
		o.peerRuns = o.runs
	}
	if o.variants != "quick" && o.variants != "all" {
		return fmt.Errorf("--variants %q: want quick or all", o.variants)
	}
	if o.loadgen != "wrk" && o.loadgen != "go" {
		return fmt.Errorf("--loadgen %q: want wrk or go", o.loadgen)
	}

	h := &harness{ctx: ctx, opts: o, skipped: map[string]string{}, closes: map[string]bool{}, ports: map[int]bool{}}
	h.cmdline = "mockd-bench " + strings.Join(args, " ")
	defer func() { h.redis.stop() }()
	var err error
	if h.root, err = findRoot(); err != nil {
		return err
	}
	h.benchDir = filepath.Join(h.root, "bench")
	h.peers = filepath.Join(h.benchDir, ".peers")
	if o.out == "" {
		o.out = filepath.Join(h.benchDir, "results")
	}
	if o.out, err = filepath.Abs(o.out); err != nil {
		return err
	}
	h.opts.out = o.out
	h.stamp = time.Now().UTC().Format("20060102-150405")
	h.runDir = filepath.Join(o.out, h.stamp)
	for _, d := range []string{h.peers, h.runDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := h.checkPinning(); err != nil {
		return err
	}
	if o.loadgen == "wrk" {
		if _, err := exec.LookPath("wrk"); err != nil {
			return errors.New("wrk is not installed (apt-get install -y wrk), or use --loadgen go")
		}
	}

	scens, err := selectScenarios(allScenarios(), o.quick, o.scenarios)
	if err != nil {
		return err
	}
	known := newEngines()
	for _, name := range o.engines {
		e, ok := known[name]
		if !ok {
			return fmt.Errorf("--engines: unknown engine %q (want some of %s)", name, strings.Join(engineOrder, ", "))
		}
		h.engines = append(h.engines, e)
	}
	h.logf("%d scenarios x %d engines; %d run(s) of %s after %s warm-up; %d connections; generator %s; run dir %s",
		len(scens), len(h.engines), o.runs, o.duration, o.warmup, o.connections, o.loadgen, h.runDir)

	var ready []*engine
	for _, e := range h.engines {
		if ctx.Err() != nil {
			break
		}
		if err := e.prepare(h, e); err != nil {
			h.skipped[e.name] = err.Error()
			h.logf("%s unavailable: %v", e.name, err)
			continue
		}
		h.logf("%s: %s (%s)", e.name, e.version, e.bin)
		ready = append(ready, e)
	}
	// Scenario by scenario, in rounds: each round runs every engine once, alone, on a fresh
	// process (warm-up, then one measured run), and an engine's number is its median round. The
	// engines' runs of one scenario alternate within seconds of each other, so a change in the
	// machine's background load shifts them together and their ratios stay comparable.
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, s := range scens {
		rs := make([]*result, len(ready))
		for i, e := range ready {
			rs[i] = &result{Scenario: s.Name, Engine: e.name}
			h.results = append(h.results, rs[i])
		}
		for round := range h.opts.runs {
			for i, e := range ready {
				if ctx.Err() != nil {
					break
				}
				if rs[i].Status != "" {
					continue // settled in an earlier round: invalid, unavailable or n/a
				}
				if round >= h.roundsFor(e.name) {
					continue
				}
				if why := h.variantSkipped(e, s); why != "" {
					rs[i].Status, rs[i].Note = "n/a", why
					continue
				}
				if e.ceiling {
					h.runCeiling(e, s, rs[i], round)
				} else {
					h.runEngine(e, s, rs[i], round, client)
				}
			}
		}
		for _, r := range rs {
			if s.Setup > 0 {
				settleSetup(r)
			} else {
				h.settle(r)
			}
		}
	}
	if ctx.Err() != nil {
		h.logf("interrupted; writing what was measured")
	}
	mdPath, csvPath, err := h.writeReport(scens)
	if err != nil {
		return err
	}
	h.logf("report: %s", mdPath)
	h.logf("csv:    %s", csvPath)
	return nil
}

// roundsFor is how many rounds engine runs: --peer-runs for the peers whose targets are 5x or more
// (Mountebank, WireMock, MockServer), --runs for every other engine.
func (h *harness) roundsFor(engine string) int {
	switch engine {
	case "mountebank", "wiremock", "mockserver":
		return h.opts.peerRuns
	}
	return h.opts.runs
}

// variantSkipped says why a variant of mockd (metrics off, Go's poller, --store) does not run
// s: with --variants quick it runs only the quick subset, or every scenario --scenarios names.
func (h *harness) variantSkipped(e *engine, s *scenario) string {
	switch e.name {
	case "mockd-nometrics", "mockd-gopoller", "mockd-store":
	default:
		return ""
	}
	if h.opts.variants == "all" || h.opts.scenarios != "" || s.Quick {
		return ""
	}
	return "a variant of mockd, run on the quick subset (--variants all runs it everywhere)"
}

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// selectScenarios is the quick subset, the full set, or the named scenarios (a name that is not
// a scenario's selects every scenario it prefixes).
func selectScenarios(all []*scenario, quick bool, names string) ([]*scenario, error) {
	var out []*scenario
	if names == "" {
		for _, s := range all {
			if !quick || s.Quick {
				out = append(out, s)
			}
		}
		return out, nil
	}
	for _, n := range splitList(names) {
		var exact, prefixed []*scenario
		for _, s := range all {
			if s.Name == n {
				exact = append(exact, s)
			} else if strings.HasPrefix(s.Name, n) {
				prefixed = append(prefixed, s)
			}
		}
		switch {
		case len(exact) > 0:
			out = append(out, exact...)
		case len(prefixed) > 0:
			out = append(out, prefixed...)
		default:
			return nil, fmt.Errorf("--scenarios: no scenario named %q", n)
		}
	}
	return out, nil
}

// findRoot walks up from the working directory to the main module (github.com/mockd/mockd).
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/mockd/mockd\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the mockd repository (go.mod of github.com/mockd/mockd) above the working directory")
		}
		dir = parent
	}
}

// checkPinning turns pinning off, with a note, when taskset is missing or there are fewer than
// two CPUs.
func (h *harness) checkPinning() error {
	if h.opts.engineCPU == "" || h.opts.loadCPU == "" {
		h.opts.engineCPU, h.opts.loadCPU = "", ""
		return nil
	}
	if _, err := exec.LookPath("taskset"); err != nil || runtime.NumCPU() < 2 {
		h.logf("pinning disabled: need taskset and 2 CPUs (have %d)", runtime.NumCPU())
		h.opts.engineCPU, h.opts.loadCPU = "", ""
	}
	return nil
}

// port picks a port in lo-hi that no process of the run has had yet, so that a stopped engine's
// connections (TIME_WAIT) never meet the next one. Once the range is used up (a full run
// starts more than a thousand processes) it starts again from lo, skipping ports still bound:
// the processes that had the oldest ports stopped long ago.
func (h *harness) port(lo, hi int) (int, error) {
	p, err := freePort(lo, hi, h.ports)
	if err != nil {
		for q := lo; q <= hi; q++ {
			delete(h.ports, q)
		}
		p, err = freePort(lo, hi, h.ports)
	}
	if err == nil {
		h.ports[p] = true
	}
	return p, err
}

// startEngine starts e with its admin API on a free port in 21000-21999 and waits for it.
func (h *harness) startEngine(e *engine, l launch) (*proc, launch, error) {
	port, err := h.port(21000, 21989)
	if err != nil {
		return nil, l, err
	}
	h.ports[port+1] = true // Rift's metrics listener
	l.admin = port
	p, err := startProc(h.opts.engineCPU, filepath.Join(h.runDir, e.name+".log"), h.runDir, e.bin, e.args(h, e, l)...)
	if err != nil {
		return nil, l, err
	}
	wait := 2 * time.Minute
	if l.config != "" {
		wait = setupTimeout // a peer may load a config file of 100,000 stubs before it listens
	}
	if err := waitHTTP(p, e.readyURL(port), wait); err != nil {
		p.stop()
		return nil, l, fmt.Errorf("%s did not start: %w", e.name, err)
	}
	return p, l, nil
}

// notApplicable says why e cannot run s at all, before an engine is started for it.
func notApplicable(e *engine, s *scenario) string {
	switch {
	case e.sockets && !s.Pairs:
		return "admin-pairs only"
	case e.ceiling && ((s.Admin && !s.Pairs) || s.Want.Contains != "" || s.Setup > 0):
		return "no admin API"
	case e.name == "rift" && s.Proto == "tcp":
		return "Rift has no tcp imposters"
	case s.Template && (e.name == "mountebank" || e.name == "rift"):
		return "no response templates (Mountebank has copy, lookup and JavaScript)"
	case e.api == "wiremock" || e.api == "mockserver":
		switch {
		case s.Proto == "tcp":
			return "HTTP only"
		case s.Injection:
			return map[string]string{"wiremock": "no JavaScript", "mockserver": "its JavaScript templates need GraalJS, which the jar does not ship"}[e.api]
		case s.Proxy == "proxyOnce":
			return "no proxy mode that proxies once and then replays"
		case s.Name == "admin-get":
			return "no per-imposter resource (one server per process)"
		}
	}
	return ""
}

// runEngine runs one round of a scenario on a fresh process of e, which runs alone: each
// scenario's memory is that of its imposter alone, and no round inherits another's heap, caches
// or JIT state.
func (h *harness) runEngine(e *engine, s *scenario, r *result, round int, client *http.Client) {
	if why := notApplicable(e, s); why != "" {
		r.Status, r.Note = "n/a", why
		return
	}
	if s.Setup > 0 {
		h.runSetup(e, s, r, round, client)
		return
	}
	l := launch{record: s.Record}
	if s.Proto == "https" && e.api == "wiremock" {
		var err error
		if l.https, err = h.port(22000, 22998); err != nil {
			r.Status, r.Note = "invalid", err.Error()
			return
		}
	}
	p, l, err := h.startEngine(e, l)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		h.logf("%v", err)
		return
	}
	defer p.stop()
	if s.Proxy != "" {
		origin, err := h.startOrigin()
		if err != nil {
			r.Status, r.Note = "invalid", "origin: "+err.Error()
			return
		}
		defer origin.stop()
	}
	if s.Pairs {
		h.measurePairs(e, s, r, l.admin, 0, p.pid(), round)
		h.logRound(r, round, "")
		return
	}
	impPort, err := h.port(22000, 22998)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		return
	}
	t0 := time.Now()
	target, err := h.load(e, s, l, impPort, client)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		if why, ok := isNA(err); ok {
			r.Status, r.Note = "n/a", why
		} else if se := (*statusError)(nil); s.Injection && errors.As(err, &se) && se.code >= 400 && se.code < 500 {
			r.Status = "unavailable"
		}
		h.logf("%s/%s: %s", r.Engine, s.Name, r.Note)
		return
	}
	loadTime := time.Since(t0)
	time.Sleep(200 * time.Millisecond) // let a garbage-collected runtime settle before reading RSS
	h.measure(r, s, target, e, p.pid(), round)
	if r.Status == "" && !p.alive() {
		r.Status, r.Note = "invalid", "engine exited during the scenario"
	}
	h.logRound(r, round, fmt.Sprintf(" (loaded in %s)", loadTime.Round(time.Millisecond)))
}

// load loads s into the started engine and says where to send which request for which answer.
func (h *harness) load(e *engine, s *scenario, l launch, impPort int, client *http.Client) (peerLoad, error) {
	if e.api != "mb" {
		return h.loadPeer(e, s, l, client)
	}
	target := peerLoad{addr: fmt.Sprintf("127.0.0.1:%d", impPort), req: s.Req, want: s.Want}
	if s.Admin {
		target.addr = fmt.Sprintf("127.0.0.1:%d", l.admin)
	}
	target.req.Path = strings.ReplaceAll(target.req.Path, "{port}", strconv.Itoa(impPort))
	target.want.Contains = strings.ReplaceAll(target.want.Contains, "{port}", strconv.Itoa(impPort))
	if s.Proxy != "" {
		return target, h.proxyMB(s, l.admin, impPort, client)
	}
	doc, _ := json.Marshal(imposterDoc(s, impPort))
	_ = os.WriteFile(filepath.Join(h.runDir, "imposter-"+s.Name+".json"), doc, 0o644)
	_, err := peerCall(client, "POST", fmt.Sprintf("http://127.0.0.1:%d/imposters", l.admin), doc, 201)
	if err != nil {
		err = fmt.Errorf("imposter refused: %w", err)
	}
	return target, err
}

// startOrigin starts the proxy scenarios' origin: the bare fasthttp server answering
// originBody, on the engine's core (the proxying engine waits for it).
func (h *harness) startOrigin() (*proc, error) {
	if err := h.buildCeiling(); err != nil {
		return nil, err
	}
	port, err := h.port(22000, 22998)
	if err != nil {
		return nil, err
	}
	bodyFile := filepath.Join(h.runDir, "origin.body")
	_ = os.WriteFile(bodyFile, []byte(originBody), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := startProc(h.opts.engineCPU, filepath.Join(h.runDir, "origin.log"), h.runDir, h.ceilingBin,
		"-addr", addr, "-body-file", bodyFile, "-content-type", "text/plain")
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(p, "http://"+addr+"/", 10*time.Second); err != nil {
		p.stop()
		return nil, err
	}
	h.origin = "http://" + addr
	return p, nil
}

// buildCeiling builds cmd/ceiling once per run.
func (h *harness) buildCeiling() error {
	if h.ceilingBin != "" {
		return nil
	}
	bin := filepath.Join(h.peers, "ceiling")
	if err := runQuiet(h.ctx, h.benchDir, []string{"CGO_ENABLED=0"}, "", "go", "build", "-trimpath", "-o", bin, "./cmd/ceiling"); err != nil {
		return err
	}
	h.ceilingBin = bin
	return nil
}

// runCeiling runs one round on the bare fasthttp server, started with the scenario's expected
// answer as its constant response (for a tcp scenario, a bare tcp server writing it for each
// read).
func (h *harness) runCeiling(e *engine, s *scenario, r *result, round int) {
	if why := notApplicable(e, s); why != "" {
		r.Status, r.Note = "n/a", why
		return
	}
	port, err := h.port(22000, 22998)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		return
	}
	bodyFile := filepath.Join(h.runDir, "ceiling-"+s.Name+".body")
	body := s.Want.Body
	impPort := pairsImposterPort
	if s.Pairs {
		if e.sockets {
			// It listens on the imposter's port as mockd would: one that is free.
			if impPort, err = h.port(22000, 22998); err != nil {
				r.Status, r.Note = "invalid", err.Error()
				return
			}
		}
		// The pairs client's POST wants 201 and its DELETE 200; both are answered with the
		// imposter's JSON, as Mountebank's API echoes it.
		body = pairsEcho(port, impPort)
	}
	_ = os.WriteFile(bodyFile, []byte(body), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"-addr", addr, "-status", strconv.Itoa(s.Want.Status), "-body-file", bodyFile, "-content-type", "application/json"}
	switch s.Proxy {
	case "proxyAlways": // every request forwarded to the same origin mockd's proxy forwards to
		origin, err := h.startOrigin()
		if err != nil {
			r.Status, r.Note = "invalid", "origin: "+err.Error()
			return
		}
		defer origin.stop()
		args = []string{"-addr", addr, "-proxy-to", h.origin}
	case "proxyOnce", "replay": // after the first request, what is recorded is answered: a constant
		args[len(args)-1] = "text/plain"
	}
	if s.Pairs {
		args = append(args, "-post-status", "201")
		if e.sockets {
			args = append(args, "-listen-on-post", fmt.Sprintf("127.0.0.1:%d", impPort))
		}
	}
	switch s.Proto {
	case "https":
		args = append(args, "-tls")
	case "tcp": // every read answered with the expected bytes
		args = []string{"-addr", addr, "-tcp", "-body-file", bodyFile}
	}
	p, err := startProc(h.opts.engineCPU, filepath.Join(h.runDir, "ceiling.log"), h.runDir, e.bin, args...)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		return
	}
	defer p.stop()
	if err := waitTCP(p, addr, 10*time.Second); err != nil {
		r.Status, r.Note = "invalid", err.Error()
		return
	}
	if s.Pairs {
		h.measurePairs(e, s, r, port, impPort, p.pid(), round)
	} else {
		h.measure(r, s, peerLoad{addr: addr, req: s.Req, want: s.Want}, e, p.pid(), round)
	}
	h.logRound(r, round, "")
}

// logRound logs the round just measured, or why r is settled.
func (h *harness) logRound(r *result, round int, extra string) {
	if r.Status != "" {
		h.logf("%s/%s: %s %s", r.Engine, r.Scenario, r.Status, r.Note)
		return
	}
	lr := r.Runs[len(r.Runs)-1]
	h.logf("%s/%s round %d/%d: rps=%.0f p50=%.2fms p99=%.2fms errors=%d rss=%d/%d KiB%s",
		r.Engine, r.Scenario, round+1, h.roundsFor(r.Engine), lr.rps(), lr.P50US/1000, lr.P99US/1000, lr.errors(), lr.rssLoaded, lr.rssEnd, extra)
}

// warmupFor is the warm-up before e's measured run: a JVM's just-in-time compiler needs longer
// than the others need to fill their caches.
func (h *harness) warmupFor(e *engine) time.Duration {
	if e.jvm {
		return max(h.opts.warmup, h.opts.jvmWarmup)
	}
	return h.opts.warmup
}

// measure runs one round on a started engine: it reads the resident memory, checks the
// scenario's answer once, warms up and runs the load once, adding the run to r.Runs. A wrong
// answer or an error settles r as invalid.
func (h *harness) measure(r *result, s *scenario, t peerLoad, e *engine, pid, round int) {
	rssLoaded := rssKB(pid)
	addr, req, want, proto := t.addr, t.req, t.want, s.protocol()
	c, err := checkOnce(addr, proto, req, want)
	for try := 1; err != nil && proto == "https" && try < 3; try++ {
		// MockServer closes its first TLS connection while it makes its certificate.
		time.Sleep(time.Second)
		c, err = checkOnce(addr, proto, req, want)
	}
	if err != nil {
		r.Status, r.Note = "invalid", "check: "+err.Error()
		return
	}
	if !c.OK {
		r.Status = "invalid"
		r.Note = fmt.Sprintf("wrong answer: got %d %q, want %d %q", c.Status, truncate(c.Body, 80), want.Status, truncate(want.Body+want.Contains, 80))
		return
	}
	conns := s.Connections
	if conns == 0 {
		conns = h.opts.connections
	}
	spec := loadSpec{Addr: addr, Req: req, Want: want, Connections: conns, Timeout: h.opts.timeout, CPU: h.opts.loadCPU, WireSize: c.WireSize, Proto: proto}
	if want.Contains != "" {
		spec.WireSize = 0 // admin answers may vary in size
	}
	name := r.Engine + "-" + s.Name
	var script string
	if h.opts.loadgen == "wrk" {
		if proto == "tcp" {
			r.Status, r.Note = "invalid", "wrk speaks HTTP only: use --loadgen go"
			return
		}
		if script, err = wrkScript(h.runDir, name, req); err != nil {
			r.Status, r.Note = "invalid", err.Error()
			return
		}
	}
	one := func(d time.Duration) (*loadResult, error) {
		spec.Duration = d
		var lr *loadResult
		var err error
		if h.opts.loadgen == "wrk" {
			lr, err = runWrk(h.ctx, spec, script)
		} else {
			lr, err = runGoGen(h.ctx, spec, h.runDir, name)
		}
		if err != nil {
			return nil, err
		}
		// The generator cuts requests still in flight at the end; a slow engine is still
		// working through them. One more checked request waits until it is idle again, so
		// the next run does not start behind a backlog, and checks the answer after the load.
		after, err := checkOnce(addr, proto, req, want)
		if err != nil {
			return nil, fmt.Errorf("check after the load: %w", err)
		}
		if !after.OK {
			lr.WrongAnswers++
		}
		return lr, nil
	}
	if !h.warmAndRun(r, e, s, pid, rssLoaded, round, one) {
		return
	}
	r.checkTook = c.Took
	if c.Close {
		h.closes[r.Engine] = true
	}
}

// warmAndRun warms e up with one, then measures one run of --duration with the engine's CPU
// use (and a profile with --perf in the first round), and adds it to r; it reports whether it
// did, settling r as invalid on an error.
func (h *harness) warmAndRun(r *result, e *engine, s *scenario, pid int, rssLoaded int64, round int, one func(time.Duration) (*loadResult, error)) bool {
	if w := h.warmupFor(e); w > 0 {
		if _, err := one(w); err != nil {
			r.Status, r.Note = "invalid", "warm-up: "+err.Error()
			return false
		}
	}
	if h.ctx.Err() != nil {
		return false
	}
	if round == 0 && h.opts.perf {
		stopPerf := h.startPerf(r.Engine+"-"+s.Name, pid)
		defer stopPerf()
	}
	ticks0, t0 := cpuTicks(pid), time.Now()
	lr, err := one(h.opts.duration)
	if err != nil {
		r.Status, r.Note = "invalid", err.Error()
		return false
	}
	// Includes the check after the run, which is short next to the run.
	lr.EngineCPU = 100 * float64(cpuTicks(pid)-ticks0) / clockTicks / time.Since(t0).Seconds()
	h.addRun(r, lr, rssLoaded, rssKB(pid))
	return true
}

// addRun adds one measured round to r.
func (h *harness) addRun(r *result, lr *loadResult, rssLoaded, rssEnd int64) {
	lr.rssLoaded, lr.rssEnd = rssLoaded, rssEnd
	r.Runs = append(r.Runs, lr)
	r.Errors += lr.errors()
	r.Requests += lr.Requests
}

// settle sums up r's rounds: the median round by requests/s gives the throughput, latency and
// CPU use; resident memory is the first round's after loading and the most any round reached at
// its end.
func (h *harness) settle(r *result) {
	if r.Status != "" {
		return
	}
	if len(r.Runs) == 0 {
		r.Status, r.Note = "invalid", "interrupted"
		return
	}
	m := median(r.Runs)
	r.RPS, r.P50MS, r.P99MS, r.CPUPct, r.LoadCPUPct = m.rps(), m.P50US/1000, m.P99US/1000, m.EngineCPU, m.LoadCPU
	r.RSSLoaded = r.Runs[0].rssLoaded
	for _, lr := range r.Runs {
		r.RSSEnd = max(r.RSSEnd, lr.rssEnd)
	}
	r.Status = "ok"
	if r.Requests == 0 && r.Errors == 0 {
		r.Status = "too slow"
		r.Note = fmt.Sprintf("no answer completed within a %s run; the check alone took %s", h.opts.duration, r.checkTook.Round(time.Millisecond))
	} else if r.Errors > 0 {
		r.Status = "invalid"
		var parts []string
		for _, lr := range r.Runs {
			parts = append(parts, fmt.Sprintf("connect=%d read=%d write=%d status=%d timeout=%d wrong=%d",
				lr.ConnectErr, lr.ReadErr, lr.WriteErr, lr.StatusErr, lr.TimeoutErr, lr.WrongAnswers))
		}
		r.Note = "errors: " + strings.Join(parts, "; ")
	}
	h.logf("%s/%s: %s rps=%.0f p50=%.2fms p99=%.2fms errors=%d rss=%d/%d KiB %s",
		r.Engine, r.Scenario, r.Status, r.RPS, r.P50MS, r.P99MS, r.Errors, r.RSSLoaded, r.RSSEnd, r.Note)
}

func post(c *http.Client, url string, body []byte) (int, string, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// startPerf samples pid's stacks with perf until the returned function is called, which writes
// perf's report (hottest symbols, self time) beside the run's logs.
func (h *harness) startPerf(name string, pid int) func() {
	if _, err := exec.LookPath("perf"); err != nil {
		h.logf("--perf: perf is not installed")
		return func() {}
	}
	data := filepath.Join(h.runDir, "perf-"+name+".data")
	// perf -p follows only the threads that exist when it attaches, and the Go runtime starts
	// threads as it needs them; with pinning, sampling the engine's CPU sees every thread.
	target := []string{"-p", strconv.Itoa(pid)}
	if h.opts.engineCPU != "" {
		target = []string{"-a", "-C", h.opts.engineCPU}
	}
	cmd := exec.Command("perf", append([]string{"record", "-q", "-F", "999", "-g", "-o", data}, target...)...)
	if err := cmd.Start(); err != nil {
		h.logf("--perf: %v", err)
		return func() {}
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		// First where the time went by binary (the kernel's share is what no engine can save),
		// then the hottest symbols.
		out, _ := exec.Command("perf", "report", "--stdio", "--no-children", "-g", "none", "--sort", "dso", "--percent-limit", "0.5", "-i", data).CombinedOutput()
		sym, _ := exec.Command("perf", "report", "--stdio", "--no-children", "-g", "none", "--sort", "comm,dso,sym", "--percent-limit", "0.7", "-i", data).CombinedOutput()
		out = append(out, sym...)
		txt := filepath.Join(h.runDir, "perf-"+name+".txt")
		_ = os.WriteFile(txt, out, 0o644)
		h.logf("perf profile: %s", txt)
	}
}
