// Package browser tests the dashboard in a real browser: each test starts the real mockd binary
// on 127.0.0.1, gives it imposters and traffic, drives headless Chromium (Debian's chromium
// package) through the DevTools protocol with chromedp, and checks what the pages show and what
// their buttons do through the admin API. Screenshots of the pages go to out/ (git-ignored).
//
// Without a Chromium the tests skip, except in CI (CI=true), where they fail: .ci/run installs
// it. MOCKD_CHROMIUM names another browser binary.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

var (
	mockdBin   string
	chromePath string
	// browserCtx is the context of the one Chromium the tests share; each test opens a tab.
	browserCtx context.Context
)

// outDir receives a screenshot of each page.
const outDir = "out"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	chromePath = findChromium()
	bin, done, err := mockdproc.Build("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer done()
	mockdBin = bin
	if chromePath != "" {
		profile, err := os.MkdirTemp("", "mockd-chromium")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(profile)
		// The flags of this machine's notes: no sandbox (root), no GPU, and nothing that
		// reaches for the network on its own (the machine may be offline).
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromePath),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(profile),
			// Chromium's own scratch directory (org.chromium.Chromium.*) goes with the profile,
			// not into the machine's /tmp, where one was left behind per run.
			chromedp.Env("TMPDIR="+profile),
			chromedp.WindowSize(1280, 860),
		)
		// Cancelling the allocator ends the Chromium it started, and only that one.
		defer cancelAlloc()
		var cancel context.CancelFunc
		browserCtx, cancel = chromedp.NewContext(allocCtx)
		defer cancel()
		if err := chromedp.Do(browserCtx); err != nil {
			fmt.Fprintln(os.Stderr, "cannot start", chromePath+":", err)
			return 1
		}
	}
	return m.Run()
}

// findChromium returns the browser to drive: $MOCKD_CHROMIUM, or Chromium (or Chrome) on PATH.
func findChromium() string {
	if p := os.Getenv("MOCKD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func needBrowser(t *testing.T) {
	t.Helper()
	if browserCtx != nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found, and CI=true: the browser tests must run in CI (.ci/run installs Debian's chromium package)")
	}
	t.Skip("no Chromium found (install Debian's chromium package, or set MOCKD_CHROMIUM): browser tests skipped")
}

// ---- mockd -------------------------------------------------------------------------------

// server is one running mockd process.
type server struct {
	*mockdproc.Server
	APIKey string // sent by api
}

// startMockd runs `mockd serve --port 0 --host 127.0.0.1 args...` until the test ends.
func startMockd(t *testing.T, args ...string) *server {
	t.Helper()
	full := mockdproc.Args(args...)
	p, err := mockdproc.Start(exec.Command(mockdBin, full...), strings.Join(full, " "))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	s := &server{Server: p}
	for i, a := range args {
		if a == "--apikey" && i+1 < len(args) {
			s.APIKey = args[i+1]
		}
	}
	return s
}

var client = mockdproc.Client

// do sends a request and returns the status and body; headers are name, value pairs.
func do(t *testing.T, method, url, body string, headers ...string) (int, []byte) {
	t.Helper()
	status, _, b, err := mockdproc.Do(method, url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return status, b
}

// api calls the admin API (with the server's key) and returns the status and body.
func (s *server) api(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	headers := []string{"Content-Type", "application/json"}
	if s.APIKey != "" {
		headers = append(headers, "x-api-key", s.APIKey)
	}
	return do(t, method, s.Admin+path, body, headers...)
}

// getJSON reads an admin resource that must exist.
func (s *server) getJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	status, body := s.api(t, "GET", path, "")
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return v
}

// create posts an imposter and returns its port.
func (s *server) create(t *testing.T, imposter string) int {
	t.Helper()
	status, body := s.api(t, "POST", "/imposters", imposter)
	if status != 201 {
		t.Fatalf("POST /imposters: %d %s", status, body)
	}
	var v struct{ Port int }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v.Port
}

// ---- the browser -------------------------------------------------------------------------

// tab is one browser tab, with everything its pages wrote to the console.
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	// console holds errors, warnings and uncaught exceptions; allowed matches those a test
	// expects (a 401 it provokes).
	console []chromedp.ConsoleMessage
	allowed []*regexp.Regexp
	// confirm answers the page's confirm() dialogs.
	confirm bool
	dialogs []string
}

// newTab opens a tab; when the test ends it fails the test if a page wrote an error, a warning
// or an exception to the console, and closes the tab.
func newTab(t *testing.T) *tab {
	t.Helper()
	needBrowser(t)
	ctx, cancel := chromedp.NewContext(browserCtx)
	tb := &tab{t: t, ctx: ctx, confirm: true}
	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				tb.mu.Lock()
				tb.console = append(tb.console, m)
				tb.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			accept := tb.confirm
			tb.dialogs = append(tb.dialogs, ev.Message)
			tb.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		}
	}()
	t.Cleanup(func() {
		// A round trip: the console events sent before its answer have been read.
		_, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`true`))
		time.Sleep(200 * time.Millisecond)
		tb.mu.Lock()
		for _, m := range tb.console {
			if !tb.isAllowed(m) {
				t.Errorf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
			}
		}
		tb.mu.Unlock()
		cancel()
	})
	return tb
}

func (tb *tab) isAllowed(m chromedp.ConsoleMessage) bool {
	for _, re := range tb.allowed {
		if re.MatchString(m.Text) {
			return true
		}
	}
	return false
}

// allow lets console messages matching re pass (for an error the test provokes).
func (tb *tab) allow(re string) {
	tb.mu.Lock()
	tb.allowed = append(tb.allowed, regexp.MustCompile(re))
	tb.mu.Unlock()
}

// answerConfirm sets what the page's next confirm() dialogs get.
func (tb *tab) answerConfirm(accept bool) {
	tb.mu.Lock()
	tb.confirm = accept
	tb.mu.Unlock()
}

func (tb *tab) lastDialog() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.dialogs) == 0 {
		return ""
	}
	return tb.dialogs[len(tb.dialogs)-1]
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatal(err)
	}
}

// open loads url and waits until the page has read the API once.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url))
	tb.wait("the page to read the API", `document.getElementById('live').classList.contains('ok')`)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait evaluates expr until it is true, for up to 15 seconds.
func (tb *tab) wait(what, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("timed out waiting for %s (%s; last error %v); the page shows:\n%s", what, expr, err, tb.text("main"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// text returns the rendered text of the first element sel matches ("" when none does).
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, `(document.querySelector(`+jsString(sel)+`) || {}).innerText || ''`)
}

// texts returns the rendered text of every element sel matches.
func (tb *tab) texts(sel string) []string {
	tb.t.Helper()
	return eval[[]string](tb, `[...document.querySelectorAll(`+jsString(sel)+`)].map(e => e.innerText)`)
}

// waitText waits until the element sel matches shows want.
func (tb *tab) waitText(sel, want string) {
	tb.t.Helper()
	tb.wait(fmt.Sprintf("%s to show %q", sel, want),
		`((document.querySelector(`+jsString(sel)+`) || {}).innerText || '').includes(`+jsString(want)+`)`)
}

func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// screenshot writes the visible part of the page to out/name.png.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	tb.writeScreenshot(name, chromedp.CaptureScreenshot())
}

// fullScreenshot writes the whole page to out/name.png.
func (tb *tab) fullScreenshot(name string) {
	tb.t.Helper()
	tb.writeScreenshot(name, chromedp.FullScreenshot(100))
}

func (tb *tab) writeScreenshot(name string, shot chromedp.Action[[]byte]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outDir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// downloads makes the tab's downloads land in a new directory, which it returns.
func (tb *tab) downloads() string {
	tb.t.Helper()
	dir := tb.t.TempDir()
	_, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
	if err != nil {
		tb.t.Fatal(err)
	}
	return dir
}

// waitFile waits until a download named name is complete in dir and returns its content.
func waitFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			if _, err := os.Stat(filepath.Join(dir, name+".crdownload")); os.IsNotExist(err) {
				return b
			}
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no download %s in %s (it holds %v)", name, dir, entries)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// grantClipboard lets the page write and read the clipboard, as a user's click on a focused
// window would.
func (tb *tab) grantClipboard() {
	tb.t.Helper()
	origin := eval[string](tb, `location.origin`)
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(tb.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: origin})
		if err != nil {
			tb.t.Fatal(err)
		}
	}
	if _, err := chromedp.Call(tb.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		tb.t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
