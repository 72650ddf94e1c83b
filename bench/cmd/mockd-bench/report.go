package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

var engineOrder = []string{"mockd", "mockd-baseline", "mockd-nometrics", "mockd-gopoller", "mockd-store", "mountebank", "rift", "wiremock", "mockserver", "ceiling", "ceiling-sockets"}

// defaultEngines are the engines --engines names by default: all but mockd-baseline, which
// --baseline adds.
func defaultEngines() []string {
	var out []string
	for _, e := range engineOrder {
		if e != "mockd-baseline" {
			out = append(out, e)
		}
	}
	return out
}

// peers are the engines mockd's requests/s is compared with, each a ratio column.
var peers = []struct{ eng, title string }{
	{"mockd-baseline", "baseline"}, {"rift", "Rift"}, {"mountebank", "Mountebank"}, {"wiremock", "WireMock"}, {"mockserver", "MockServer"}, {"ceiling", "ceiling"}, {"ceiling-sockets", "ceiling+sockets"},
}

// ranPeers are the peers this run measured: the report's table has a ratio column for each
// (the CSV keeps one for every peer).
func (h *harness) ranPeers() []struct{ eng, title string } {
	var out []struct{ eng, title string }
	for _, p := range peers {
		for _, e := range h.engines {
			if e.name == p.eng {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func (h *harness) lookup(scen, eng string) *result {
	for _, r := range h.results {
		if r.Scenario == scen && r.Engine == eng {
			return r
		}
	}
	return nil
}

// ratio is mockd's RPS over eng's for scen, or 0 when either is not a valid measurement.
func (h *harness) ratio(scen, eng string) float64 {
	m, o := h.lookup(scen, "mockd"), h.lookup(scen, eng)
	if m == nil || o == nil || m.Status != "ok" || o.Status != "ok" || o.RPS == 0 {
		return 0
	}
	return m.RPS / o.RPS
}

func (h *harness) ranEngines() []string {
	var out []string
	for _, name := range engineOrder {
		for _, e := range h.engines {
			if e.name == name {
				out = append(out, name)
			}
		}
	}
	return out
}

func cell(r *result, f func(*result) string) string {
	switch {
	case r == nil:
		return ""
	case r.Status == "ok":
		return f(r)
	case r.Status == "n/a":
		return "—"
	default:
		return r.Status
	}
}

func fmtRatio(x float64) string {
	if x == 0 {
		return ""
	}
	if x >= 10 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

func fmtRPS(x float64) string {
	switch {
	case x >= 1000:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func fmtMS(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func mib(kb int64) string {
	if kb == 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", float64(kb)/1024)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func (h *harness) writeReport(scens []*scenario) (string, string, error) {
	engs := h.ranEngines()
	stubs := map[string]int{}
	conns := map[string]int{}
	for _, s := range scens {
		stubs[s.Name] = s.stubCount()
		conns[s.Name] = s.Connections
		if conns[s.Name] == 0 {
			conns[s.Name] = h.opts.connections
		}
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	// header writes a table's header row and alignment row: the lead columns, one column per
	// engine, then the tail columns.
	header := func(lead, leadAlign, tail, tailAlign string) {
		w("%s", lead)
		for _, e := range engs {
			w(" %s |", e)
		}
		w("%s\n%s", tail, leadAlign)
		for range engs {
			w("--:|")
		}
		w("%s\n", tailAlign)
	}

	w("# mockd benchmark %s\n\n", h.stamp)
	w("One run on one machine, in %d round(s) per scenario: each round runs every engine once, alone, on a fresh process (a %s warm-up, then a measured run of %s). "+
		"Each number is an engine's median round by requests/s. ", h.opts.runs, h.opts.warmup, h.opts.duration)
	if h.opts.peerRuns < h.opts.runs {
		w("Mountebank, WireMock and MockServer ran %d round(s) (--peer-runs): their targets are ratios of 5× or more. ", h.opts.peerRuns)
	}
	if h.opts.variants == "quick" && h.opts.scenarios == "" {
		w("The variants of mockd (metrics off, Go's poller, --store) ran the quick subset only (--variants). ")
	}
	w("Absolute numbers depend on the machine and on whatever else ran on it; compare the ratios, which come from the same run.\n\n")
	w("## Machine and command\n\n")
	w("- Command: `%s`\n", h.cmdline)
	w("- Machine: %d CPUs (nproc: %s), %s, kernel %s\n", runtime.NumCPU(), output("nproc"), cpuModel(), output("uname", "-r"))
	w("- Load average at the end: %s\n", firstLine(readFile("/proc/loadavg")))
	if h.opts.engineCPU != "" {
		w("- Pinning: engine on CPU %s, load generator on CPU %s (`taskset -c`)\n", h.opts.engineCPU, h.opts.loadCPU)
	} else {
		w("- Pinning: off\n")
	}
	gen := "wrk (" + firstLine(output("wrk", "-v")) + "), 1 thread, response size checked against the checked answer"
	if h.opts.loadgen == "go" {
		gen = "mockd-bench loadgen (fasthttp response parser, every status and body checked)"
	}
	w("- Load generator: %s; %d keep-alive connections unless the scenario says otherwise; request timeout %s\n", gen, h.opts.connections, h.opts.timeout)
	w("- Toolchains: %s\n", runtime.Version())
	for _, e := range h.engines {
		if e.jvm {
			w("- Java peers: JVM flags `%s` (heap, collector), pinned like every engine; a %s warm-up before each measured run on each fresh process, for the JIT compiler\n",
				strings.Join(jvmFlags, " "), h.opts.jvmWarmup)
			break
		}
	}
	for _, e := range h.engines {
		if why, ok := h.skipped[e.name]; ok {
			w("- %s: **unavailable**: %s\n", e.name, truncate(why, 300))
		} else {
			closes := ""
			if h.closes[e.name] {
				closes = " — answers with `Connection: close`, so the generator reconnects for every request"
			}
			w("- %s: %s%s\n", e.name, e.version, closes)
		}
	}

	var loaded, setups []*scenario
	for _, s := range scens {
		if s.loads() {
			loaded = append(loaded, s)
		} else {
			setups = append(setups, s)
		}
	}
	scens = loaded
	var ratioHead, ratioAlign string
	ran := h.ranPeers()
	for _, p := range ran {
		ratioHead += " mockd/" + p.title + " |"
		ratioAlign += "--:|"
	}
	w("\n## Throughput (requests/s)\n\nadmin-pairs counts create-then-delete pairs per second.\n\n")
	header("| scenario | stubs |", "|---|--:|", ratioHead, ratioAlign)
	for _, s := range scens {
		w("| %s | %d |", s.Name, stubs[s.Name])
		for _, e := range engs {
			w(" %s |", cell(h.lookup(s.Name, e), func(r *result) string { return fmtRPS(r.RPS) }))
		}
		for _, p := range ran {
			w(" %s |", fmtRatio(h.ratio(s.Name, p.eng)))
		}
		w("\n")
	}
	if len(setups) > 0 {
		w("\n## Setup: creating stubs (seconds, resident MiB after, resident bytes per stub)\n\n")
		w("Through the API: from the request until the last stub answers, on a process holding nothing else; per stub: the resident memory the stubs added. From a config file: from starting the process until the last stub answers.\n\n")
		header("| scenario | what |", "|---|---|", "", "")
		for _, s := range setups {
			for _, row := range []struct {
				what string
				f    func(*setupRun) string
			}{
				{"create through the API, s", func(u *setupRun) string { return fmt.Sprintf("%.2f", u.CreateS) }},
				{"resident MiB after creating", func(u *setupRun) string { return mib(u.RSSCreated) }},
				{"resident bytes per stub", func(u *setupRun) string { return fmt.Sprintf("%.0f", u.perStub(s.Setup)) }},
				{"start from a config file, s", func(u *setupRun) string { return fmt.Sprintf("%.2f", u.StartS) }},
				{"resident MiB after starting", func(u *setupRun) string { return mib(u.RSSStarted) }},
			} {
				w("| %s | %s |", s.Name, row.what)
				for _, e := range engs {
					w(" %s |", cell(h.lookup(s.Name, e), func(r *result) string { return row.f(r.Setup) }))
				}
				w("\n")
			}
		}
	}

	w("\n## Latency (ms, p50 / p99)\n\n")
	header("| scenario | conns |", "|---|--:|", "", "")
	for _, s := range scens {
		w("| %s | %d |", s.Name, conns[s.Name])
		for _, e := range engs {
			w(" %s |", cell(h.lookup(s.Name, e), func(r *result) string { return fmtMS(r.P50MS) + " / " + fmtMS(r.P99MS) }))
		}
		w("\n")
	}

	w("\n## CPU use (%% of one core during the median run: engine / load generator)\n\nAn engine below about 90%% was not the bottleneck: it waited on the load generator (near 100%%), on a lock or timer, or on other tenants of its core.\n\n")
	header("| scenario |", "|---|", "", "")
	for _, s := range scens {
		w("| %s |", s.Name)
		for _, e := range engs {
			w(" %s |", cell(h.lookup(s.Name, e), func(r *result) string { return fmt.Sprintf("%.0f / %.0f", r.CPUPct, r.LoadCPUPct) }))
		}
		w("\n")
	}

	w("\n## Resident memory (MiB, after loading / at the end)\n\n")
	header("| scenario |", "|---|", "", "")
	for _, s := range scens {
		w("| %s |", s.Name)
		for _, e := range engs {
			r := h.lookup(s.Name, e)
			if r == nil || r.RSSLoaded == 0 {
				w(" |")
				continue
			}
			w(" %s / %s |", mib(r.RSSLoaded), mib(r.RSSEnd))
		}
		w("\n")
	}

	w("\n## Targets (PRODUCT.md section 3)\n\n")
	for _, line := range h.targets(append(scens, setups...)) {
		w("- %s\n", line)
	}
	w("\n(noisy): an engine in the comparison used less than 80%% of its core, so the machine's background load, not the engine, probably set the number.\n")

	w("\n## Notes\n\n")
	w("A scenario is `invalid` when its answer was wrong when checked before the load, or when any request failed or got a wrong answer during it; it is never counted in a ratio. `unavailable` means the engine refused the imposter (for example JS injection it does not support).\n\n")
	any := false
	for _, r := range h.results {
		if r.Note != "" && r.Status != "n/a" {
			w("- %s / %s: %s\n", r.Engine, r.Scenario, r.Note)
			any = true
		}
	}
	if !any {
		w("- none\n")
	}

	mdPath := filepath.Join(h.opts.out, "report-"+h.stamp+".md")
	if err := os.WriteFile(mdPath, []byte(b.String()), 0o644); err != nil {
		return "", "", err
	}
	_ = os.WriteFile(filepath.Join(h.opts.out, "latest.md"), []byte(b.String()), 0o644)
	raw, _ := json.MarshalIndent(h.results, "", "  ")
	_ = os.WriteFile(filepath.Join(h.runDir, "results.json"), raw, 0o644)

	csvPath := filepath.Join(h.opts.out, "results-"+h.stamp+".csv")
	f, err := os.Create(csvPath)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	head := []string{"scenario", "stubs", "connections"}
	for _, e := range engineOrder {
		head = append(head, e+"_status", e+"_rps", e+"_p50_ms", e+"_p99_ms", e+"_errors", e+"_rss_loaded_kb", e+"_rss_end_kb", e+"_cpu_pct", e+"_load_cpu_pct")
	}
	for _, p := range peers {
		head = append(head, "ratio_mockd_"+p.eng)
	}
	_ = cw.Write(head)
	for _, s := range scens {
		row := []string{s.Name, strconv.Itoa(stubs[s.Name]), strconv.Itoa(conns[s.Name])}
		for _, e := range engineOrder {
			r := h.lookup(s.Name, e)
			if r == nil {
				row = append(row, "", "", "", "", "", "", "", "", "")
				continue
			}
			row = append(row, r.Status, f1(r.RPS), f3(r.P50MS), f3(r.P99MS), strconv.FormatInt(r.Errors, 10),
				strconv.FormatInt(r.RSSLoaded, 10), strconv.FormatInt(r.RSSEnd, 10), strconv.FormatFloat(r.CPUPct, 'f', 0, 64), strconv.FormatFloat(r.LoadCPUPct, 'f', 0, 64))
		}
		for _, p := range peers {
			row = append(row, f3(h.ratio(s.Name, p.eng)))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return mdPath, csvPath, cw.Error()
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f3(x float64) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// spread says, for a comparison that fell short, when some round of mockd did meet it against
// some round of the other engine: the shortfall is within the rounds' spread. It gives the
// rounds' ranges of the measure that fell short (RPS, p99 or both).
func spread(m, o *result, min float64, rps, p99 bool) string {
	if len(m.Runs) < 2 || len(o.Runs) < 2 {
		return ""
	}
	span := func(r *result, f func(*loadResult) float64) (lo, hi float64) {
		lo, hi = f(r.Runs[0]), f(r.Runs[0])
		for _, run := range r.Runs[1:] {
			lo, hi = math.Min(lo, f(run)), math.Max(hi, f(run))
		}
		return lo, hi
	}
	mRateLo, mRateHi := span(m, (*loadResult).rps)
	oRateLo, oRateHi := span(o, (*loadResult).rps)
	tail := func(l *loadResult) float64 { return l.P99US / 1000 }
	mTailLo, mTailHi := span(m, tail)
	oTailLo, oTailHi := span(o, tail)
	if (rps && mRateHi < min*oRateLo) || (p99 && mTailLo > oTailHi) {
		return ""
	}
	var parts []string
	if rps {
		parts = append(parts, fmt.Sprintf("req/s %.0f–%.0f vs %.0f–%.0f", mRateLo, mRateHi, oRateLo, oRateHi))
	}
	if p99 {
		parts = append(parts, fmt.Sprintf("p99 %s–%s vs %s–%s ms", fmtMS(mTailLo), fmtMS(mTailHi), fmtMS(oTailLo), fmtMS(oTailHi)))
	}
	return " (within the rounds' spread: " + strings.Join(parts, ", ") + ")"
}

// targets checks the PRODUCT.md speed targets against this run.
func (h *harness) targets(scens []*scenario) []string {
	var out []string
	okRPS := func(s, e string) (float64, bool) {
		r := h.lookup(s, e)
		if r == nil || r.Status != "ok" {
			return 0, false
		}
		return r.RPS, true
	}
	verdict := func(pass bool) string {
		if pass {
			return "met"
		}
		return "**not met**"
	}
	// Every scenario vs Rift (RPS and p99) and vs Mountebank.
	for _, peer := range []struct {
		eng  string
		min  float64
		p99  bool
		name string
	}{{"rift", 1.0, true, "≥ 1.0× Rift's RPS with p99 no worse"}, {"mountebank", 30, false, "≥ 30× Mountebank's RPS"},
		{"wiremock", 5, false, "≥ 5× WireMock's RPS"}, {"mockserver", 5, false, "≥ 5× MockServer's RPS"}} {
		var pass, total int
		var fails []string
		for _, s := range scens {
			if !s.loads() {
				continue
			}
			m, o := h.lookup(s.Name, "mockd"), h.lookup(s.Name, peer.eng)
			if m == nil || o == nil || m.Status != "ok" || o.Status != "ok" {
				continue
			}
			total++
			rpsOK := m.RPS >= peer.min*o.RPS
			p99OK := !peer.p99 || m.P99MS <= o.P99MS
			if rpsOK && p99OK {
				pass++
				continue
			}
			f := s.Name
			if !rpsOK {
				f += fmt.Sprintf(" %.2f×", m.RPS/o.RPS)
				// A target above the bare server's rate is out of reach of any server here.
				if c := h.lookup(s.Name, "ceiling"); c != nil && c.Status == "ok" && peer.min*o.RPS > c.RPS {
					f += fmt.Sprintf(" (%g× would be %.2f× the bare server)", peer.min, peer.min*o.RPS/c.RPS)
				}
			}
			if !p99OK {
				f += fmt.Sprintf(" p99 %s vs %s ms", fmtMS(m.P99MS), fmtMS(o.P99MS))
			}
			f += spread(m, o, peer.min, !rpsOK, !p99OK)
			if m.CPUPct < 80 || o.CPUPct < 80 {
				f += " (noisy)"
			}
			fails = append(fails, f)
		}
		if total == 0 {
			out = append(out, fmt.Sprintf("%s: no comparable scenarios", peer.name))
			continue
		}
		line := fmt.Sprintf("%s: %d of %d scenarios", peer.name, pass, total)
		if len(fails) > 0 {
			line += "; short: " + strings.Join(fails, ", ")
		}
		out = append(out, line)
	}
	// noisy marks a comparison in which an engine did not use most of its core.
	noisy := func(pairs ...[2]string) string {
		for _, p := range pairs {
			if r := h.lookup(p[0], p[1]); r != nil && r.CPUPct < 80 {
				return " (noisy)"
			}
		}
		return ""
	}
	if m, ok := okRPS("simple", "mockd"); ok {
		if c, ok := okRPS("simple", "ceiling"); ok {
			out = append(out, fmt.Sprintf("simple stub ≥ 0.9× the ceiling: %.2f× — %s%s", m/c, verdict(m >= 0.9*c),
				noisy([2]string{"simple", "mockd"}, [2]string{"simple", "ceiling"})))
		}
	}
	if m, ok := okRPS("admin-pairs", "mockd"); ok {
		if c, ok := okRPS("admin-pairs", "ceiling"); ok {
			line := fmt.Sprintf("admin-pairs ≥ 0.9× the ceiling: %.2f× — %s", m/c, verdict(m >= 0.9*c))
			if f, ok := okRPS("admin-pairs", "ceiling-sockets"); ok {
				// The ceiling answers the pairs without opening a socket; ceiling-sockets
				// opens and closes the imposter's listening socket too, the kernel's least work.
				line += fmt.Sprintf(" (%.2f× the ceiling that also opens and closes the imposter's listening socket)", m/f)
			}
			out = append(out, line)
		}
	}
	for _, kind := range []string{"last", "nomatch"} {
		big, ok1 := okRPS("scale-10000-"+kind, "mockd")
		small, ok2 := okRPS("scale-10-"+kind, "mockd")
		if ok1 && ok2 {
			out = append(out, fmt.Sprintf("%s at 10,000 stubs ≥ 0.8× at 10 stubs: %.2f× — %s%s", kind, big/small, verdict(big >= 0.8*small),
				noisy([2]string{"scale-10000-" + kind, "mockd"}, [2]string{"scale-10-" + kind, "mockd"})))
		}
	}
	if d, ok := okRPS("decorate", "mockd"); ok {
		if s, ok := okRPS("simple", "mockd"); ok {
			out = append(out, fmt.Sprintf("decorate ≥ 0.5× simple: %.2f× — %s%s", d/s, verdict(d >= 0.5*s),
				noisy([2]string{"decorate", "mockd"}, [2]string{"simple", "mockd"})))
		}
	}
	// Metrics cost: mockd (metrics on) against mockd-nometrics, per scenario.
	var costs []float64
	for _, s := range scens {
		on, ok1 := okRPS(s.Name, "mockd")
		off, ok2 := okRPS(s.Name, "mockd-nometrics")
		if ok1 && ok2 && off > 0 {
			costs = append(costs, 1-on/off)
		}
	}
	if len(costs) > 0 {
		sort.Float64s(costs)
		med := costs[len(costs)/2]
		out = append(out, fmt.Sprintf("metrics cost ≤ 5%% (mockd vs mockd --no-metrics, median of %d scenarios): %.1f%% (range %.1f%% to %.1f%%) — %s",
			len(costs), 100*med, 100*costs[0], 100*costs[len(costs)-1], verdict(med <= 0.05)))
	}
	// Store cost: mockd --store (a loopback Redis) against mockd, per scenario: plain matching
	// asks Redis nothing, a cycle asks it once per request, recording stores each request.
	for _, s := range scens {
		with, ok1 := okRPS(s.Name, "mockd-store")
		without, ok2 := okRPS(s.Name, "mockd")
		if ok1 && ok2 && without > 0 {
			out = append(out, fmt.Sprintf("%s with --store vs without (mockd-store / mockd): %.2f×%s", s.Name, with/without,
				noisy([2]string{s.Name, "mockd-store"}, [2]string{s.Name, "mockd"})))
		}
	}
	// Baseline: this mockd against another build of it (--baseline), rounds alternating.
	var base []float64
	for _, s := range scens {
		if r := h.ratio(s.Name, "mockd-baseline"); r > 0 {
			base = append(base, r)
		}
	}
	if len(base) > 0 {
		sort.Float64s(base)
		out = append(out, fmt.Sprintf("mockd / mockd-baseline (%s), median of %d scenarios: %.3f× (range %.3f× to %.3f×)",
			h.opts.baseline, len(base), base[len(base)/2], base[0], base[len(base)-1]))
	}
	// ratioOf compares mockd on two scenarios. The two run a minute or more apart, and the
	// machine's speed may drift in between: when the bare server ran both, each is also taken
	// over its own scenario's bare server, and that ratio decides.
	ratioOf := func(a, b, what string, min float64) {
		x, ok1 := okRPS(a, "mockd")
		y, ok2 := okRPS(b, "mockd")
		if !ok1 || !ok2 {
			return
		}
		got, bare := x/y, ""
		ca, ok3 := okRPS(a, "ceiling")
		cb, ok4 := okRPS(b, "ceiling")
		if ok3 && ok4 && ca > 0 && cb > 0 {
			bare = fmt.Sprintf(" over each scenario's bare server (%.2f× in requests/s; the bare server ran %s at %.2f× its %s rate)", got, a, ca/cb, b)
			got = (x / ca) / (y / cb)
		}
		out = append(out, fmt.Sprintf("%s ≥ %g×: %.2f×%s — %s%s", what, min, got, bare, verdict(got >= min),
			noisy([2]string{a, "mockd"}, [2]string{b, "mockd"})))
	}
	ratioOf("record-on", "simple", "recordRequests on vs off (record-on / simple)", 0.8)
	ratioOf("https-simple", "simple", "https vs http (https-simple / simple)", 0.7)
	if m := h.lookup("stubs-100k", "mockd"); m != nil && m.Status == "ok" {
		per := m.Setup.perStub(100000)
		out = append(out, fmt.Sprintf("100,000 plain stubs created in < 2 s using < 1 KiB resident each: %.2f s, %.0f bytes — %s",
			m.Setup.CreateS, per, verdict(m.Setup.CreateS < 2 && per < 1024)))
	}
	for _, p := range peers {
		peer := p.eng
		if peer == "mountebank" || peer == "ceiling" || peer == "ceiling-sockets" {
			continue
		}
		var memPass, memTotal int
		for _, s := range scens {
			m, r := h.lookup(s.Name, "mockd"), h.lookup(s.Name, peer)
			if m == nil || r == nil || m.RSSLoaded == 0 || r.RSSLoaded == 0 || m.Status != "ok" || r.Status != "ok" {
				continue
			}
			memTotal++
			if m.RSSLoaded < r.RSSLoaded {
				memPass++
			}
		}
		if memTotal > 0 {
			out = append(out, fmt.Sprintf("resident memory after loading below %s's: %d of %d scenarios", p.title, memPass, memTotal))
		}
	}
	if len(out) == 0 {
		out = append(out, "nothing to compare in this run")
	}
	return out
}
