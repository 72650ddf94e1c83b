package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The tests below run the steps of action.yml and stop/action.yml as a GitHub runner does: each
// `run` step in bash with the runner's environment (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH,
// GITHUB_STEP_SUMMARY, RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, GITHUB_ACTION_PATH), `${{ … }}`
// expressions replaced from the inputs and the earlier steps' outputs.

type actionStep struct {
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
}

type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

// runner is one job on a fake runner: the environment that later steps inherit.
type runner struct {
	t       *testing.T
	temp    string            // RUNNER_TEMP
	work    string            // GITHUB_WORKSPACE, where steps run
	env     map[string]string // from GITHUB_ENV
	path    []string          // from GITHUB_PATH
	summary string            // GITHUB_STEP_SUMMARY
	machine []string          // extra environment of the machine (PATH, MOCKD_RELEASES_URL…)
	tmpdir  string            // the machine's TMPDIR, which the steps must leave as they found it
}

func newRunner(t *testing.T) *runner {
	temp := t.TempDir()
	r := &runner{t: t, temp: temp, work: t.TempDir(), env: map[string]string{}, summary: filepath.Join(temp, "summary.md"), tmpdir: t.TempDir()}
	// A self-hosted runner keeps its TMPDIR between jobs: what a step leaves there piles up.
	t.Cleanup(func() {
		left, err := os.ReadDir(r.tmpdir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			t.Errorf("the action left %s in TMPDIR", e.Name())
		}
	})
	return r
}

// actionRun is what running one action gave.
type actionRun struct {
	outputs map[string]string
	log     string       // the steps' stdout and stderr
	skipped []actionStep // `uses` steps, which a local run cannot run
}

var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

func (r *runner) run(actionPath string, inputs map[string]string) (actionRun, error) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(actionPath, "action.yml"))
	if err != nil {
		r.t.Fatal(err)
	}
	var af actionFile
	if err := yaml.Unmarshal(data, &af); err != nil {
		r.t.Fatal(err)
	}
	if af.Runs.Using != "composite" {
		r.t.Fatalf("%s: runs.using = %q, want composite", actionPath, af.Runs.Using)
	}
	in := map[string]string{}
	for name, def := range af.Inputs {
		in[name] = def.Default
	}
	for name, v := range inputs {
		if _, ok := af.Inputs[name]; !ok {
			r.t.Fatalf("%s has no input %q", actionPath, name)
		}
		in[name] = v
	}
	stepOut := map[string]map[string]string{}
	eval := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string {
			e := expr.FindStringSubmatch(m)[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				return in[strings.TrimPrefix(e, "inputs.")]
			case strings.HasPrefix(e, "steps."):
				parts := strings.Split(e, ".") // steps.ID.outputs.NAME
				if len(parts) == 4 && parts[2] == "outputs" {
					return stepOut[parts[1]][parts[3]]
				}
			case e == "github.action_ref":
				return "" // as inside a composite action (actions/runner#2473)
			}
			r.t.Fatalf("%s: expression %q is not known to this test runner", actionPath, e)
			return ""
		})
	}
	var res actionRun
	var log bytes.Buffer
	for i, st := range af.Runs.Steps {
		if st.If != "" && !r.condition(st.If, in) {
			continue
		}
		if st.Uses != "" {
			with := map[string]string{}
			for k, v := range st.With {
				with[k] = eval(v)
			}
			st.With = with
			res.skipped = append(res.skipped, st)
			continue
		}
		if st.Shell != "bash" {
			r.t.Fatalf("%s step %d: shell %q, want bash (it runs on every runner OS)", actionPath, i+1, st.Shell)
		}
		outFile := filepath.Join(r.temp, fmt.Sprintf("output-%d", time.Now().UnixNano()))
		envFile, pathFile := filepath.Join(r.temp, "env"), filepath.Join(r.temp, "path")
		for _, f := range []string{outFile, envFile, pathFile} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				r.t.Fatal(err)
			}
		}
		cmd := exec.Command("bash", "-e", "-c", eval(st.Run))
		cmd.Dir = r.work
		cmd.Env = append(os.Environ(), r.machine...)
		for k, v := range r.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if len(r.path) > 0 {
			cmd.Env = append(cmd.Env, "PATH="+strings.Join(r.path, string(os.PathListSeparator))+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		cmd.Env = append(cmd.Env,
			"GITHUB_ACTIONS=true", "CI=true", "GITHUB_WORKSPACE="+r.work,
			"GITHUB_ACTION_PATH="+actionPath,
			"GITHUB_OUTPUT="+outFile, "GITHUB_ENV="+envFile, "GITHUB_PATH="+pathFile,
			"GITHUB_STEP_SUMMARY="+r.summary,
			"RUNNER_TEMP="+r.temp, "RUNNER_OS="+runnerOS(), "RUNNER_ARCH="+runnerArch(), "TMPDIR="+r.tmpdir)
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+eval(v))
		}
		cmd.Stdout, cmd.Stderr = &log, &log
		err := cmd.Run()
		res.log = log.String()
		if err != nil {
			return res, fmt.Errorf("step %d (%s): %w", i+1, st.ID, err)
		}
		stepOut[st.ID] = readKeyValues(r.t, outFile)
		for k, v := range readKeyValues(r.t, envFile) {
			r.env[k] = v
		}
		for _, p := range strings.Split(strings.TrimSpace(readFile(r.t, pathFile)), "\n") {
			if p != "" {
				r.path = append([]string{p}, r.path...)
			}
		}
	}
	res.outputs = map[string]string{}
	for name, o := range af.Outputs {
		res.outputs[name] = eval(o.Value)
	}
	return res, nil
}

// condition evaluates the `inputs.NAME == 'VALUE'` conditions the actions use.
func (r *runner) condition(cond string, in map[string]string) bool {
	m := regexp.MustCompile(`^inputs\.([\w-]+) == '([^']*)'$`).FindStringSubmatch(strings.TrimSpace(cond))
	if m == nil {
		r.t.Fatalf("condition %q is not known to this test runner", cond)
	}
	return in[m[1]] == m[2]
}

func runnerOS() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	}
	return "Linux"
}

func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readKeyValues reads a GITHUB_OUTPUT or GITHUB_ENV file: NAME=value lines and NAME<<EOF blocks.
func readKeyValues(t *testing.T, name string) map[string]string {
	t.Helper()
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, name)))
	for sc.Scan() {
		line := sc.Text()
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			kv[k] = strings.Join(val, "\n")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// stopPID ends a mockd that a failing test left running.
func stopPID(t *testing.T, pid string) {
	t.Cleanup(func() {
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	})
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestActionStartsWaitsAndStops(t *testing.T) {
	root := repoRoot(t)
	r := newRunner(t)
	dir := t.TempDir()
	httpPort, tcpPort, adminPort := listenFree(t), listenFree(t), listenFree(t)
	write(t, dir, "users.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http, recordRequests: true, stubs: [{responses: [{is: {body: hello}}]}]}\n", httpPort))
	write(t, dir, "mb/tcp.json", fmt.Sprintf(`{"protocol": "tcp", "port": %d}`, tcpPort))

	start, err := r.run(root, map[string]string{
		"binary": mockdBin,
		"config": filepath.Join(dir, "users.yaml") + "\n" + filepath.Join(dir, "mb", "*.json"),
		"port":   strconv.Itoa(adminPort),
		"args":   "--apikey sekret --debug",
	})
	if err != nil {
		t.Fatalf("action: %v\n%s", err, start.log)
	}
	stopPID(t, start.outputs["pid"])
	want := map[string]string{
		"admin-url": "http://127.0.0.1:" + strconv.Itoa(adminPort),
		"log":       filepath.Join(r.temp, "mockd", "mockd.log"),
		"dir":       filepath.Join(r.temp, "mockd"),
	}
	for k, v := range want {
		if start.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, start.outputs[k], v)
		}
	}
	if !strings.HasPrefix(start.outputs["version"], "mockd ") || start.outputs["pid"] == "" {
		t.Errorf("outputs version %q and pid %q", start.outputs["version"], start.outputs["pid"])
	}
	if r.env["MOCKD_ADMIN_URL"] != want["admin-url"] || r.env["MOCKD_PID"] != start.outputs["pid"] {
		t.Errorf("GITHUB_ENV: %v", r.env)
	}
	if len(r.path) != 1 || r.path[0] != filepath.Dir(mockdBin) {
		t.Errorf("GITHUB_PATH: %v, want the binary's directory", r.path)
	}
	if s := readFile(t, r.summary); !strings.Contains(s, "mockd is running: admin API "+want["admin-url"]) || !strings.Contains(s, "with 2 imposters") {
		t.Errorf("step summary: %q", s)
	}
	// Ready means ready: both imposters answer right after the step.
	if code, _, body := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/ready", httpPort), ""); code != 200 || body != "hello" {
		t.Errorf("http imposter answered %d %q", code, body)
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(tcpPort))
	if err != nil {
		t.Errorf("tcp imposter: %v", err)
	} else {
		conn.Close()
	}

	stop, err := r.run(filepath.Join(root, "stop"), nil)
	if err != nil {
		t.Fatalf("stop action: %v\n%s", err, stop.log)
	}
	journal := readFile(t, stop.outputs["journal"])
	if !strings.Contains(journal, `"path": "/ready"`) || !strings.Contains(journal, fmt.Sprintf(`"port": %d`, tcpPort)) {
		t.Errorf("journal %s lacks the request or the tcp imposter:\n%s", stop.outputs["journal"], journal)
	}
	if log := readFile(t, stop.outputs["log"]); !strings.Contains(log, "now taking orders") {
		t.Errorf("log %s: %q", stop.outputs["log"], log)
	}
	pid, _ := strconv.Atoi(start.outputs["pid"])
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("mockd (pid %d) still runs after the stop action", pid)
	}
	if len(stop.skipped) != 1 || !strings.HasPrefix(stop.skipped[0].Uses, "actions/upload-artifact@") ||
		stop.skipped[0].With["path"] != stop.outputs["journal"]+"\n"+stop.outputs["log"]+"\n" {
		t.Errorf("stop action's upload step: %+v", stop.skipped)
	}
}

// TestActionFailsWithTheLog: a mockd that exits, or whose imposters do not answer in time,
// fails the step with the end of its log.
func TestActionFailsWithTheLog(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.yaml", "imposters:\n  - {protocol: http, prot: 1}\n")
	// An imposter bound to 127.0.0.2 never answers on 127.0.0.1, where the action checks.
	elsewhere := write(t, dir, "elsewhere.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http, host: 127.0.0.2}\n", listenFree(t)))
	tests := []struct {
		config, timeout string
		want            []string
	}{
		{bad, "30", []string{"mockd exited before it was ready", "last lines of", `unknown field "prot"`}},
		{elsewhere, "2", []string{"mockd was not ready after 2s", "healthcheck: http imposter", "now taking orders"}},
	}
	for _, tt := range tests {
		r := newRunner(t)
		res, err := r.run(repoRoot(t), map[string]string{"binary": mockdBin, "config": tt.config, "port": strconv.Itoa(listenFree(t)), "timeout": tt.timeout})
		for _, w := range tt.want {
			if err == nil || !strings.Contains(res.log, w) {
				t.Errorf("action with %s: err=%v, want the log to say %q:\n%s", filepath.Base(tt.config), err, w, res.log)
				break
			}
		}
		if pid, err := os.ReadFile(filepath.Join(r.temp, "mockd", "mockd.pid")); err == nil {
			stopPID(t, string(pid)) // in case the action left it running
		}
	}
}

// fakeRelease serves mockd_OS_ARCH.tar.gz (holding mockdBin) and checksums.txt under
// /download/TAG/ and /latest/download/, as GitHub serves a goreleaser release.
func fakeRelease(t *testing.T, badChecksum bool) *httptest.Server {
	t.Helper()
	bin, err := os.ReadFile(releaseBin(t))
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	gz := gzip.NewWriter(&archive)
	tw := tar.NewWriter(gz)
	for name, data := range map[string][]byte{"mockd": bin, "README.md": []byte("readme"), "LICENSE": []byte("license")} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	asset := fmt.Sprintf("mockd_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(archive.Bytes())
	if badChecksum {
		sum[0] ^= 0xff
	}
	checksums := fmt.Sprintf("%x  %s\n%x  mockd_plan9_386.tar.gz\n", sum, asset, sha256.Sum256(nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dir, file := filepath.Split(r.URL.Path)
		if dir != "/download/v9.9.9/" && dir != "/latest/download/" {
			http.NotFound(w, r)
			return
		}
		switch file {
		case asset:
			_, _ = w.Write(archive.Bytes())
		case "checksums.txt":
			_, _ = w.Write([]byte(checksums))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

var release struct {
	once sync.Once
	bin  string
	err  error
}

// releaseBin builds mockd as release v9.9.9 (once per test binary).
func releaseBin(t *testing.T) string {
	t.Helper()
	release.once.Do(func() {
		dir, err := os.MkdirTemp("", "mockd-release") // removed by TestMain
		if err != nil {
			release.err = err
			return
		}
		release.bin = filepath.Join(dir, "mockd")
		build := exec.Command("go", "build", "-o", release.bin, "-ldflags", "-X github.com/mockd/mockd/internal/app.Version=9.9.9", "./cmd/mockd")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			release.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if release.err != nil {
		t.Fatal(release.err)
	}
	return release.bin
}

// fakeGo puts a `go` on PATH that records its arguments and "installs" mockdBin into GOBIN.
func fakeGo(t *testing.T, r *runner) string {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	script := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %q\ncp %q \"$GOBIN/mockd\"\n", record, mockdBin)
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.machine = append(r.machine, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return record
}

// TestActionInstalls: the action's own ref (read from where the runner put the action) picks
// the release archive; "latest" picks the latest release; anything else, and a download that
// fails its checksum, falls back to go install.
func TestActionInstalls(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the archive is a zip on Windows")
	}
	// The runner checks out mockd/mockd@v9.9.9 to …/_actions/mockd/mockd/v9.9.9.
	actions := filepath.Join(t.TempDir(), "_actions", "mockd", "mockd")
	if err := os.MkdirAll(actions, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repoRoot(t), filepath.Join(actions, "v9.9.9")); err != nil {
		t.Fatal(err)
	}
	actionPath := filepath.Join(actions, "v9.9.9")
	tests := []struct {
		name, version string
		badChecksum   bool
		wantLog       string
		wantGo        string // the recorded `go` arguments, "" when go must not run
	}{
		{name: "own ref", wantLog: "downloading %s/download/v9.9.9/mockd_"},
		{name: "latest", version: "latest", wantLog: "downloading %s/latest/download/mockd_"},
		{name: "major tag", version: "v9", wantLog: "downloading %s/latest/download/mockd_"},
		{name: "minor tag", version: "v9.9", wantLog: "downloading %s/latest/download/mockd_"},
		{name: "other major", version: "v8", wantLog: "the latest release is not of the v8 line: mockd 9.9.9",
			wantGo: "install github.com/mockd/mockd/cmd/mockd@v8"},
		{name: "branch", version: "main", wantLog: "main is not a release tag", wantGo: "install github.com/mockd/mockd/cmd/mockd@main"},
		{name: "bad checksum", version: "v9.9.9", badChecksum: true, wantLog: "checksum of mockd_", wantGo: "install github.com/mockd/mockd/cmd/mockd@v9.9.9"},
		{name: "no such release", version: "v9.9.8", wantLog: "downloading %s/download/v9.9.8/", wantGo: "install github.com/mockd/mockd/cmd/mockd@v9.9.8"},
	}
	releaseBin(t) // built before the subtests run in parallel
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeRelease(t, tt.badChecksum)
			r := newRunner(t)
			r.machine = append(r.machine, "MOCKD_RELEASES_URL="+srv.URL)
			record := fakeGo(t, r)
			dir := t.TempDir()
			port := listenFree(t)
			cfg := write(t, dir, "a.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http}\n", port))
			res, err := r.run(actionPath, map[string]string{"version": tt.version, "config": cfg, "port": strconv.Itoa(listenFree(t))})
			if err != nil {
				t.Fatalf("action: %v\n%s", err, res.log)
			}
			stopPID(t, res.outputs["pid"])
			if want := strings.ReplaceAll(tt.wantLog, "%s", srv.URL); !strings.Contains(res.log, want) {
				t.Errorf("log lacks %q:\n%s", want, res.log)
			}
			installed := filepath.Join(r.temp, "mockd", "bin", "mockd")
			if len(r.path) != 1 || r.path[0] != filepath.Dir(installed) {
				t.Errorf("GITHUB_PATH %v, want %s", r.path, filepath.Dir(installed))
			}
			goArgs, _ := os.ReadFile(record)
			if strings.TrimSpace(string(goArgs)) != tt.wantGo {
				t.Errorf("go was run with %q, want %q", goArgs, tt.wantGo)
			}
			if code, _, _ := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", port), ""); code != 200 {
				t.Errorf("imposter answered %d", code)
			}
			if stop, err := r.run(filepath.Join(actionPath, "stop"), map[string]string{"upload": "false"}); err != nil || len(stop.skipped) != 0 {
				t.Errorf("stop: %v, skipped %v\n%s", err, stop.skipped, stop.log)
			}
		})
	}
}

// readmeStepLists returns the steps of every README snippet that uses mockd/mockd: a whole
// workflow (its job's steps) or a list of steps.
func readmeStepLists(t *testing.T) [][]actionStep {
	t.Helper()
	var lists [][]actionStep
	for _, block := range strings.Split(readFile(t, "../../README.md"), "```yaml\n")[1:] {
		block = block[:strings.Index(block, "```")]
		if !strings.Contains(block, "uses: mockd/mockd@") {
			continue
		}
		var workflow struct {
			Jobs map[string]struct {
				Steps []actionStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		var steps []actionStep
		if yaml.Unmarshal([]byte(block), &workflow) == nil && len(workflow.Jobs) > 0 {
			for _, job := range workflow.Jobs {
				steps = append(steps, job.Steps...)
			}
		} else if err := yaml.Unmarshal([]byte(block), &steps); err != nil {
			t.Fatalf("README snippet is neither a workflow nor a list of steps: %v\n%s", err, block)
		}
		lists = append(lists, steps)
	}
	if len(lists) < 2 {
		t.Fatalf("README.md has %d snippets that use mockd/mockd, want the Quick start's and the GitHub Actions section's", len(lists))
	}
	return lists
}

// TestActionREADMEWorkflow runs the README's snippets that use the action: their mockd/mockd
// and mockd/mockd/stop steps with their inputs, in a workspace with a config where the
// snippets look (with the binary built here, since no release is served, and a free admin port).
func TestActionREADMEWorkflow(t *testing.T) {
	for n, steps := range readmeStepLists(t) {
		t.Run(strconv.Itoa(n+1), func(t *testing.T) { runREADMESteps(t, steps) })
	}
}

func runREADMESteps(t *testing.T, steps []actionStep) {
	root := repoRoot(t)
	r := newRunner(t)
	port := listenFree(t)
	write(t, r.work, "test/mocks/users.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: http, stubs: [{responses: [{is: {body: mocked}}]}]}\n", port))
	ran := 0
	for _, st := range steps {
		var actionPath string
		inputs := map[string]string{}
		for k, v := range st.With {
			inputs[k] = v
		}
		switch {
		case strings.HasPrefix(st.Uses, "mockd/mockd@"):
			actionPath = root
			inputs["binary"] = mockdBin
			inputs["port"] = strconv.Itoa(listenFree(t))
		case strings.HasPrefix(st.Uses, "mockd/mockd/stop@"):
			actionPath = filepath.Join(root, "stop")
			if st.If != "always()" {
				t.Errorf("README's stop step runs if %q, want always()", st.If)
			}
		default:
			continue
		}
		res, err := r.run(actionPath, inputs)
		if err != nil {
			t.Fatalf("README step %s: %v\n%s", st.Uses, err, res.log)
		}
		if pid := res.outputs["pid"]; pid != "" {
			stopPID(t, pid)
			if code, _, body := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", port), ""); code != 200 || body != "mocked" {
				t.Errorf("imposter of test/mocks/users.yaml answered %d %q", code, body)
			}
		} else if !strings.Contains(readFile(t, res.outputs["journal"]), fmt.Sprintf(`"port": %d`, port)) {
			t.Errorf("journal after the README's stop step lacks the imposter")
		}
		ran++
	}
	if ran != 2 {
		t.Errorf("ran %d of the README's mockd steps, want 2 (start and stop)", ran)
	}
}
