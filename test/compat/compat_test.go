// Package compat runs every scenario in scenarios/ against Mountebank 2.9.1
// and against mockd and fails on any difference in what they answer.
//
//	go test ./test/compat/...                       # compare live
//	go test ./test/compat/... -run 'TestCompat/pred'  # some scenarios
//	go test ./test/compat/... -compat.record         # Mountebank only; rewrite testdata/golden
//	MOCKD_COMPAT_MODE=mb-only go test ./test/compat/...
//
// See README.md for the scenario format and what is normalised.
package compat

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	recordFlag = flag.Bool("compat.record", false,
		"run the scenarios against Mountebank only and rewrite testdata/golden (also MOCKD_COMPAT_RECORD=1)")
	modeFlag = flag.String("compat.mode", "",
		`"mb-only" runs the scenarios against Mountebank alone (also MOCKD_COMPAT_MODE)`)
)

// suite is the shared state of one run, set up by TestMain.
var suite struct {
	skip    string // reason to skip every test, if any
	setup   error  // a setup failure every test reports
	mbOnly  bool
	record  bool
	servers *servers
}

const (
	scenarioDir = "scenarios"
	goldenDir   = "testdata/golden"
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("MOCKD_COMPAT_SKIP") == "1" {
		suite.skip = "MOCKD_COMPAT_SKIP=1"
		return m.Run()
	}
	suite.record = *recordFlag || os.Getenv("MOCKD_COMPAT_RECORD") == "1"
	mode := *modeFlag
	if mode == "" {
		mode = os.Getenv("MOCKD_COMPAT_MODE")
	}
	switch mode {
	case "", "compare":
	case "mb-only":
		suite.mbOnly = true
	default:
		fmt.Fprintf(os.Stderr, "compat: unknown mode %q (want mb-only or compare)\n", mode)
		return 2
	}
	if suite.record {
		suite.mbOnly = true
	}

	compatDir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 1
	}
	work, err := os.MkdirTemp("", "mockd-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 1
	}
	defer os.RemoveAll(work)

	// The scenarios use fixed imposter ports; two runs at once would
	// trample each other, so the second waits for the first. The ports are the machine's, so
	// the lock is too: a fixed path, not $TMPDIR (which two runs may set apart).
	lockPath := "/tmp/mockd-compat.lock"
	if runtime.GOOS == "windows" {
		lockPath = filepath.Join(os.TempDir(), "mockd-compat.lock")
	}
	unlock, err := lockSuite(lockPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: lock:", err)
		return 1
	}
	defer unlock()

	suite.servers = &servers{workDir: work, running: map[string]*server{}, used: map[int]bool{}}
	defer suite.servers.stopAll()

	suite.servers.mbBin, err = ensureMountebank(compatDir)
	if err != nil {
		suite.setup = err
		return m.Run()
	}
	if !suite.mbOnly {
		if bin := os.Getenv("MOCKD_BIN"); bin != "" {
			suite.servers.mockdBin = bin
		} else {
			suite.servers.mockdBin, err = buildMockd(filepath.Join(compatDir, "..", ".."), work)
			if err != nil {
				suite.setup = fmt.Errorf("%w\n(set MOCKD_COMPAT_MODE=mb-only to check the scenarios against Mountebank alone)", err)
				return m.Run()
			}
		}
	}
	return m.Run()
}

func TestCompat(t *testing.T) {
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if suite.setup != nil {
		t.Fatal(suite.setup)
	}
	scenarios, err := loadScenarios(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatal("no scenarios in " + scenarioDir)
	}
	if suite.record {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) { runScenario(t, sc) })
	}
}

func runScenario(t *testing.T, sc scenario) {
	file := filepath.Join(scenarioDir, sc.Name+".json")
	mb, err := suite.servers.get("mb", sc.Flags, sc.flagKey())
	if err != nil {
		t.Fatal(err)
	}
	mbEx, mbCtx := play(t, file, sc, mb)
	if t.Failed() {
		return
	}
	if suite.record {
		writeGolden(t, sc, mbEx, mbCtx)
	}
	if suite.mbOnly {
		return
	}

	mockd, err := suite.servers.get("mockd", sc.Flags, sc.flagKey())
	if err != nil {
		t.Fatal(err)
	}
	mockdEx, mockdCtx := play(t, file, sc, mockd)
	differences := compareRuns(t, file, sc, mbEx, mbCtx, mockdEx, mockdCtx)
	switch {
	case sc.Pending != "" && len(differences) > 0:
		t.Skipf("pending %s: mockd differs from Mountebank in %d steps (first: %s)", sc.Pending, len(differences), differences[0])
	case sc.Pending != "":
		t.Errorf("%s is marked pending %q but mockd now matches Mountebank: remove the pending field", file, sc.Pending)
	}
	for _, d := range differences {
		t.Error(d)
	}
}

// compareRuns lists the steps whose answers differ between the two engines (logging the
// warnings: header case, key order).
func compareRuns(t *testing.T, file string, sc scenario, mbEx []exchange, mbCtx []engineCtx, mockdEx []exchange, mockdCtx []engineCtx) []string {
	t.Helper()
	var differences []string
	for i, st := range sc.Steps {
		jsonBody := !st.Exact && mbEx[i].Err == "" && mockdEx[i].Err == "" && isJSON(mbEx[i].Body) && isJSON(mockdEx[i].Body)
		a := normalise(mbEx[i], st, mbCtx[i], jsonBody)
		b := normalise(mockdEx[i], st, mockdCtx[i], jsonBody)
		reconcileContentLength(a, b)
		warnings := headerCaseWarnings(mbEx[i], mockdEx[i])
		if jsonBody {
			warnings = append(warnings, keyOrderWarnings(mbEx[i].Body, mockdEx[i].Body)...)
		}
		for _, w := range warnings {
			t.Logf("%s step %d (%s): warning: %s", file, i+1, st.describe(), w)
		}
		if d := diff(a, b); len(d) > 0 {
			differences = append(differences, fmt.Sprintf("%s step %d (%s) differs:\n  %s", file, i+1, st.describe(), strings.Join(d, "\n  ")))
		}
	}
	return differences
}

// play runs the scenario on one engine between two DELETE /imposters and
// returns each step's exchange with the context to normalise it.
func play(t *testing.T, file string, sc scenario, s *server) ([]exchange, []engineCtx) {
	t.Helper()
	reset := func(when string) {
		if sc.mbMayCrash && s.engine == "mb" {
			select {
			case <-s.exited:
				return // reported by the step that ended it
			default:
			}
		}
		ex := roundTrip(s.addr(), rawRequest{Method: "DELETE", Target: "/imposters"})
		if ex.Err != "" && sc.mbMayCrash && s.engine == "mb" {
			select {
			case <-s.exited:
				t.Skipf("%s: Mountebank's process ended (mockd answers such requests instead: PRODUCT.md)", file)
			case <-time.After(5 * time.Second):
			}
		}
		if ex.Err != "" || ex.Status != 200 {
			t.Fatalf("%s: DELETE /imposters %s the scenario on %s: status %d %s\n%s", file, when, s, ex.Status, ex.Err, s.tail())
		}
	}
	if err := waitPortsFree(sc.ports()); err != nil {
		reset("before")
		if err := waitPortsFree(sc.ports()); err != nil {
			t.Fatalf("%s on %s: %v", file, s, err)
		}
	}
	reset("before")
	defer reset("after")

	v := vars{}
	exs := make([]exchange, len(sc.Steps))
	ctxs := make([]engineCtx, len(sc.Steps))
	for i, st := range sc.Steps {
		var ex exchange
		switch {
		case st.File != nil:
			ex = st.File.write(s.cmd.Dir)
		case st.TCP != nil:
			ex = st.TCP.exchange(v)
		case st.SMTP != nil:
			ex = st.SMTP.exchange(v)
		default:
			addr, req, err := st.buildRequest(s.addr(), v)
			if err != nil {
				t.Fatalf("%s step %d: %v", file, i+1, err)
			}
			ex = roundTrip(addr, req)
		}
		exs[i] = ex
		if s.engine == "mb" && st.ExpectStatus != 0 && ex.Status != st.ExpectStatus {
			t.Errorf("%s step %d (%s): Mountebank answered %d %s, the scenario expects %d:\n%s",
				file, i+1, st.describe(), ex.Status, ex.Err, st.ExpectStatus, ex.Body)
		}
		for name, path := range st.Capture {
			val, err := capture(ex, path)
			if err != nil {
				t.Fatalf("%s step %d on %s: capture %s: %v", file, i+1, s, name, err)
			}
			v[name] = val
		}
		ctxs[i] = engineCtx{adminPort: s.port, vars: copyVars(v)}
		select {
		case <-s.exited:
			if sc.mbMayCrash && s.engine == "mb" {
				t.Skipf("%s step %d (%s): Mountebank's process ended (mockd answers such requests instead: PRODUCT.md)", file, i+1, st.describe())
			}
			t.Fatalf("%s step %d (%s): %s crashed; its output:\n%s", file, i+1, st.describe(), s, s.tail())
		default:
		}
	}
	return exs, ctxs
}

func copyVars(v vars) vars {
	out := make(vars, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}

// capture reads a value out of an exchange by a path such as body.port or
// headers.location.
func capture(ex exchange, p string) (string, error) {
	path, err := parsePath(p)
	if err != nil {
		return "", err
	}
	var root any = map[string]any{
		"status": json.Number(fmt.Sprint(ex.Status)),
		"body":   mustParseJSON(ex.Body),
	}
	hs := map[string]any{}
	for _, h := range ex.Headers {
		hs[strings.ToLower(h.Name)] = h.Value
	}
	root.(map[string]any)["headers"] = hs
	cur := root
	for _, seg := range path {
		switch t := cur.(type) {
		case map[string]any:
			x, ok := t[seg.key]
			if !ok || seg.isIdx {
				return "", fmt.Errorf("no %q in answer", p)
			}
			cur = x
		case []any:
			if !seg.isIdx || seg.index < 0 || seg.index >= len(t) {
				return "", fmt.Errorf("no %q in answer", p)
			}
			cur = t[seg.index]
		default:
			return "", fmt.Errorf("no %q in answer", p)
		}
	}
	switch t := cur.(type) {
	case string:
		return t, nil
	case json.Number:
		return t.String(), nil
	default:
		return "", fmt.Errorf("%q is not a string or number", p)
	}
}

// goldenStep is one step of a golden file: what Mountebank answered,
// normalised as for comparison (Date is left out).
type goldenStep struct {
	Step    int    `json:"step"`
	Request string `json:"request"`
	Note    string `json:"note,omitempty"`
	Answer  answer `json:"answer"`
}

func writeGolden(t *testing.T, sc scenario, exs []exchange, ctxs []engineCtx) {
	t.Helper()
	steps := make([]goldenStep, len(sc.Steps))
	for i, st := range sc.Steps {
		jsonBody := !st.Exact && exs[i].Err == "" && isJSON(exs[i].Body)
		steps[i] = goldenStep{Step: i + 1, Request: st.describe(), Note: st.Note, Answer: withHeaderCase(normalise(exs[i], st, ctxs[i], jsonBody), exs[i])}
	}
	doc := struct {
		Scenario    string       `json:"scenario"`
		Description string       `json:"description"`
		Flags       []string     `json:"flags,omitempty"`
		Steps       []goldenStep `json:"steps"`
	}{sc.Name, sc.Description, sc.Flags, steps}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(goldenDir, sc.Name+".json"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
