package browser

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// TestFirefox loads every page in headless Firefox, driven over its Marionette protocol on
// loopback, and fails on a JavaScript error or warning of the page (Firefox prints them, with
// the page's console, to its output). It runs where Firefox is installed (Debian's firefox-esr)
// and skips elsewhere, CI included: Chromium is the browser CI drives.
func TestFirefox(t *testing.T) {
	bin := ""
	for _, name := range []string{"firefox-esr", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no Firefox found (Debian's firefox-esr): the pages are checked in Chromium only")
	}
	f := newFixture(t)
	ff := startFirefox(t, bin)
	for _, page := range []struct{ path, ready string }{
		{"/", `document.querySelector('tr[data-port]')`},
		{"/imposters", `document.querySelector('tr[data-port] button[data-action="delete"]')`},
		{"/imposters/" + strconv.Itoa(f.users), `document.querySelector('details.request') && document.querySelector('.stubs li')`},
		{"/logs", `document.querySelector('table.logs tbody tr')`},
		{"/config", `document.querySelector('tr[data-key="goVersion"]')`},
	} {
		ff.call(t, "WebDriver:Navigate", map[string]any{"url": f.url(page.path)})
		ff.wait(t, page.path, `document.getElementById('live').classList.contains('ok') && `+page.ready)
	}
	// The imposter page's buttons: a request opens, and Copy as curl without clipboard access
	// (a script's click is no user gesture) offers the command to copy by hand.
	ff.call(t, "WebDriver:Navigate", map[string]any{"url": f.url("/imposters/" + strconv.Itoa(f.users))})
	ff.wait(t, "requests", `document.querySelector('details.request')`)
	ff.script(t, `document.querySelector('details.request > summary').click();
		document.querySelector('button[data-action="curl"]').click()`)
	ff.wait(t, "the curl command", `document.getElementById('copy-dialog').open || document.getElementById('toast').innerText.includes('Copied')`)
	if got := ff.script(t, `return document.body.dataset.lastCopied`); !strings.Contains(fmt.Sprint(got), "curl") {
		t.Errorf("Copy as curl copied %v", got)
	}
	ff.stop()
	for _, line := range strings.Split(ff.output(), "\n") {
		if strings.Contains(line, f.Admin) && (strings.Contains(line, "error") || strings.Contains(line, "warning")) {
			t.Errorf("Firefox: %s", line)
		}
	}
}

// firefox is a headless Firefox with a Marionette session.
type firefox struct {
	cmd  *exec.Cmd
	conn net.Conn
	rd   *bufio.Reader
	id   int
	out  mockdproc.SyncBuffer
	done chan struct{}
}

// firefoxPrefs keep Firefox's own traffic off the network (everything not for 127.0.0.1 goes
// to a closed loopback port) and print the pages' console to its output.
const firefoxPrefs = `user_pref("devtools.console.stdout.content", true);
user_pref("browser.dom.window.dump.enabled", true);
user_pref("network.proxy.type", 1);
user_pref("network.proxy.http", "127.0.0.1");
user_pref("network.proxy.http_port", 9);
user_pref("network.proxy.ssl", "127.0.0.1");
user_pref("network.proxy.ssl_port", 9);
user_pref("network.proxy.socks_remote_dns", true);
user_pref("network.proxy.no_proxies_on", "127.0.0.1");
user_pref("network.proxy.allow_hijacking_localhost", false);
user_pref("network.dns.disablePrefetch", true);
user_pref("network.prefetch-next", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.trr.mode", 5);
user_pref("app.update.enabled", false);
user_pref("app.normandy.enabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("extensions.update.enabled", false);
user_pref("extensions.blocklist.enabled", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
user_pref("dom.push.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("media.gmp-manager.updateEnabled", false);
`

func startFirefox(t *testing.T, bin string) *firefox {
	t.Helper()
	profile := t.TempDir()
	port := closedPort(t)
	prefs := firefoxPrefs + fmt.Sprintf("user_pref(\"marionette.port\", %d);\n", port)
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o644); err != nil {
		t.Fatal(err)
	}
	ff := &firefox{done: make(chan struct{})}
	ff.cmd = exec.Command(bin, "--headless", "--marionette", "--no-remote", "--profile", profile, "--window-size=1280,860")
	ff.cmd.Stdout, ff.cmd.Stderr = &ff.out, &ff.out
	if err := ff.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = ff.cmd.Wait(); close(ff.done) }()
	t.Cleanup(func() { ff.stop() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ff.conn, ff.rd = c, bufio.NewReader(c)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Firefox opened no Marionette port: %v\n%s", err, ff.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := ff.read(); err != nil { // the greeting
		t.Fatal(err)
	}
	ff.call(t, "WebDriver:NewSession", map[string]any{"capabilities": map[string]any{}})
	return ff
}

func (ff *firefox) output() string { return ff.out.String() }

// read reads one Marionette message: its length, a colon and as many bytes of JSON.
func (ff *firefox) read() (json.RawMessage, error) {
	_ = ff.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := ff.rd.ReadString(':')
	if err != nil {
		return nil, err
	}
	size, err := strconv.Atoi(strings.TrimSuffix(n, ":"))
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(ff.rd, b); err != nil {
		return nil, err
	}
	return b, nil
}

// call sends a Marionette command and returns its result.
func (ff *firefox) call(t *testing.T, name string, params any) json.RawMessage {
	t.Helper()
	ff.id++
	msg, _ := json.Marshal([]any{0, ff.id, name, params})
	if _, err := ff.conn.Write(append([]byte(strconv.Itoa(len(msg))+":"), msg...)); err != nil {
		t.Fatal(err)
	}
	raw, err := ff.read()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var resp []json.RawMessage
	if err := json.Unmarshal(raw, &resp); err != nil || len(resp) != 4 {
		t.Fatalf("%s: bad answer %s", name, raw)
	}
	if string(resp[2]) != "null" {
		t.Fatalf("%s: %s", name, resp[2])
	}
	return resp[3]
}

// script runs JavaScript in the page and returns its value.
func (ff *firefox) script(t *testing.T, code string) any {
	t.Helper()
	var res struct{ Value any }
	if err := json.Unmarshal(ff.call(t, "WebDriver:ExecuteScript", map[string]any{"script": code, "args": []any{}}), &res); err != nil {
		t.Fatal(err)
	}
	return res.Value
}

func (ff *firefox) wait(t *testing.T, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for ff.script(t, "return !!("+expr+")") != true {
		if time.Now().After(deadline) {
			t.Fatalf("Firefox: timed out waiting for %s (%s)", what, expr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends the Firefox this test started.
func (ff *firefox) stop() {
	if ff.conn != nil {
		ff.conn.Close()
	}
	mockdproc.Interrupt(ff.cmd.Process, ff.done, 20*time.Second)
}
