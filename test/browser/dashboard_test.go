package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fixture is a mockd with three imposters and some traffic.
type fixture struct {
	*server
	users, payments, ledger int
}

// newFixture starts mockd with
//   - users (http, recording): stub 0 GET /users/42 (expected once), stub 1 POST /orders…
//     (expected at least twice), stub 2 a proxy to a closed port (its failure is an error in the
//     log); traffic: one request for each stub and one that matches none;
//   - payments (http, not recording): one stub for everything, three requests;
//   - ledger (tcp, recording): PING answers PONG, one packet.
func newFixture(t *testing.T, args ...string) *fixture {
	t.Helper()
	s := startMockd(t, args...)
	dead := closedPort(t)
	f := &fixture{server: s}
	f.users = s.create(t, `{"protocol":"http","name":"users","recordRequests":true,
		"defaultResponse":{"statusCode":404},
		"stubs":[
		{"predicates":[{"equals":{"method":"GET","path":"/users/42"}}],"expect":{"times":1},
		 "responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":{"id":42,"name":"Ada"}}}]},
		{"predicates":[{"startsWith":{"path":"/orders"}},{"equals":{"method":"POST"}}],"expect":{"atLeast":2},
		 "responses":[{"is":{"statusCode":201,"body":"created"}}]},
		{"predicates":[{"equals":{"path":"/proxy"}}],
		 "responses":[{"proxy":{"to":"http://127.0.0.1:`+strconv.Itoa(dead)+`"}}]}]}`)
	f.payments = s.create(t, `{"protocol":"http","name":"payments","stubs":[{"responses":[{"is":{"statusCode":204}}]}]}`)
	f.ledger = s.create(t, `{"protocol":"tcp","name":"ledger","recordRequests":true,
		"stubs":[{"predicates":[{"contains":{"data":"PING"}}],"responses":[{"is":{"data":"PONG"}}]}]}`)

	f.hit(t, f.users, "GET", "/users/42", "")
	f.hit(t, f.users, "POST", "/orders?x=1", `{"item":"it's"}`, "X-Trace", "abc", "Content-Type", "application/json")
	f.hit(t, f.users, "GET", "/nowhere", "")
	f.hit(t, f.users, "GET", "/proxy", "")
	for i := 0; i < 3; i++ {
		f.hit(t, f.payments, "GET", "/pay", "")
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(f.ledger))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("PING"))
	buf := make([]byte, 4)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(buf); err != nil || string(buf) != "PONG" {
		t.Fatalf("tcp imposter answered %q, %v", buf, err)
	}
	return f
}

// hit sends one request to an imposter.
func (f *fixture) hit(t *testing.T, port int, method, path, body string, headers ...string) {
	t.Helper()
	do(t, method, "http://127.0.0.1:"+strconv.Itoa(port)+path, body, headers...)
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func (f *fixture) url(path string) string { return f.Admin + path }

func row(port int) string { return `tr[data-port="` + strconv.Itoa(port) + `"]` }

// count reads an imposter's request count through the API.
func (f *fixture) count(t *testing.T, port int) int {
	t.Helper()
	return int(f.getJSON(t, "/imposters/"+strconv.Itoa(port))["numberOfRequests"].(float64))
}

func TestOverviewPage(t *testing.T) {
	f := newFixture(t)
	tb := newTab(t)
	tb.open(f.url("/"))
	tb.waitText(row(f.users), "users")

	if got := tb.text(`[data-card="imposters"] .value`); got != "3" {
		t.Errorf("imposters card shows %q, want 3", got)
	}
	for _, tt := range []struct {
		port                       int
		name, proto, requests      string
		noMatch, recording, verify string
	}{
		{f.users, "users", "http", "4", "1", "on", "1 expectation failed · 1 unmatched"},
		{f.payments, "payments", "http", "3", "0", "off", "passed"},
		{f.ledger, "ledger", "tcp", "1", "0", "on", "passed"},
	} {
		cells := tb.texts(row(tt.port) + " td")
		want := []string{tt.proto, strconv.Itoa(tt.port), tt.name, tt.requests, tt.noMatch}
		if len(cells) < 9 || strings.Join(cells[:5], "|") != strings.Join(want, "|") || cells[7] != tt.recording || cells[8] != tt.verify {
			t.Errorf("row of %s = %q, want %q … recording %s, verify %s", tt.name, cells, want, tt.recording, tt.verify)
		}
		if api := f.count(t, tt.port); strconv.Itoa(api) != tt.requests {
			t.Errorf("the API counts %d requests for %s, the page %s", api, tt.name, tt.requests)
		}
	}

	// The verdict of GET /verify, and the button that downloads it.
	if got := tb.text(`[data-card="verify"] .value`); got != "failed" {
		t.Errorf("verify card shows %q, want failed", got)
	}
	if got := tb.text(".verdict-line"); !strings.Contains(got, "2 expectations, 1 failed · 0 unused stubs · 1 unmatched request") {
		t.Errorf("verdict line %q", got)
	}
	dir := tb.downloads()
	tb.click("#verdict-download")
	got := waitFile(t, dir, "verdict.json")
	if _, want := f.api(t, "GET", "/verify", ""); !bytes.Equal(got, want) {
		t.Errorf("downloaded verdict:\n%s\nwant GET /verify:\n%s", got, want)
	}

	// Live: new traffic shows without a reload, with a request rate.
	eval[bool](tb, `window.notReloaded = true`)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { // at most 5 s and 500 requests
		defer close(stopped)
		deadline := time.Now().Add(5 * time.Second)
		for i := 0; i < 500 && time.Now().Before(deadline); i++ {
			select {
			case <-done:
				return
			default:
			}
			_, _ = client.Get("http://127.0.0.1:" + strconv.Itoa(f.payments) + "/pay")
			time.Sleep(10 * time.Millisecond)
		}
	}()
	tb.wait("a request rate for payments", `parseFloat(document.querySelector('`+row(f.payments)+` td.rate').innerText) > 0`)
	close(done)
	<-stopped
	n := f.count(t, f.payments)
	tb.waitText(row(f.payments)+" td.requests", strconv.Itoa(n))
	if !eval[bool](tb, `window.notReloaded === true`) {
		t.Error("the page reloaded to show new traffic")
	}
	tb.screenshot("overview")
}

func TestImpostersPage(t *testing.T) {
	f := newFixture(t)
	tb := newTab(t)
	dir := tb.downloads()
	tb.open(f.url("/imposters"))
	tb.waitText(row(f.ledger), "ledger")
	tb.screenshot("imposters")

	// Download config (save): the file is GET /imposters?replayable=true.
	tb.click("#save")
	got := waitFile(t, dir, "imposters.json")
	_, want := f.api(t, "GET", "/imposters?replayable=true", "")
	if !bytes.Equal(got, want) {
		t.Errorf("downloaded config:\n%s\nwant GET /imposters?replayable=true:\n%s", got, want)
	}

	// Clear requests of users.
	tb.click(row(f.users) + ` button[data-action="clear"]`)
	tb.waitText(row(f.users)+" td.requests", "0")
	if !strings.Contains(tb.lastDialog(), strconv.Itoa(f.users)) {
		t.Errorf("the confirmation %q does not name the imposter", tb.lastDialog())
	}
	users := f.getJSON(t, "/imposters/"+strconv.Itoa(f.users))
	if users["numberOfRequests"].(float64) != 0 || len(users["requests"].([]any)) != 0 {
		t.Errorf("after Clear requests the API shows %v requests, %d recorded", users["numberOfRequests"], len(users["requests"].([]any)))
	}

	// Delete payments: cancelled first, then confirmed.
	tb.answerConfirm(false)
	tb.click(row(f.payments) + ` button[data-action="delete"]`)
	time.Sleep(300 * time.Millisecond)
	if status, _ := f.api(t, "GET", "/imposters/"+strconv.Itoa(f.payments), ""); status != 200 {
		t.Fatalf("a cancelled delete removed the imposter (GET answers %d)", status)
	}
	tb.answerConfirm(true)
	tb.click(row(f.payments) + ` button[data-action="delete"]`)
	tb.wait("the payments row to go", `!document.querySelector('`+row(f.payments)+`')`)
	if status, _ := f.api(t, "GET", "/imposters/"+strconv.Itoa(f.payments), ""); status != 404 {
		t.Errorf("after Delete, GET /imposters/%d answers %d, want 404", f.payments, status)
	}
}

func TestImposterPage(t *testing.T) {
	f := newFixture(t)
	tb := newTab(t)
	dir := tb.downloads()
	port := strconv.Itoa(f.users)
	tb.open(f.url("/imposters/" + port))
	tb.waitText("#requests", "/proxy")

	if h := tb.text("h1"); !strings.Contains(h, port) || !strings.Contains(h, "users") {
		t.Errorf("heading %q does not name the imposter", h)
	}
	// Stubs, in order, readable.
	stubs := tb.texts(".stubs > li summary")
	if len(stubs) != 3 {
		t.Fatalf("the page shows %d stubs, want 3: %q", len(stubs), stubs)
	}
	for i, want := range [][]string{
		{"#0", "equals", "method", "GET", "path", "/users/42", "is", "200", `"name":"Ada"`},
		{"#1", "startsWith", "/orders", "and", "equals", "POST", "201", "created"},
		{"#2", "equals", "/proxy", "proxy", "127.0.0.1"},
	} {
		for _, w := range want {
			if !strings.Contains(stubs[i], w) {
				t.Errorf("stub %d shows %q, which lacks %q", i, stubs[i], w)
			}
		}
	}
	// Hits and expectations, as GET /verify judges them.
	status := eval[[]string](tb, `[...document.querySelectorAll('.stubs > li')].map(li => li.querySelector('.stub-status').innerText)`)
	for i, want := range []string{"1 hit", "1 hit", "1 hit"} {
		if !strings.Contains(status[i], want) {
			t.Errorf("stub %d status %q lacks %q", i, status[i], want)
		}
	}
	if !strings.Contains(status[0], "✓") || !strings.Contains(status[1], "✗") {
		t.Errorf("expectations shown as %q: want stub 0 met, stub 1 not", status)
	}
	tb.waitText("#stub-1 .verdict-message", "expected at least 2 requests, got 1")
	if !strings.Contains(status[0], "expects exactly 1") || !strings.Contains(status[1], "expects at least 2") {
		t.Errorf("expectations read %q", status)
	}

	// Recent requests, newest first.
	reqs := tb.texts("#requests details.request > summary")
	wantOrder := []string{"/proxy", "/nowhere", "/orders?x=1", "/users/42"}
	if len(reqs) != len(wantOrder) {
		t.Fatalf("the page shows %d requests, want %d: %q", len(reqs), len(wantOrder), reqs)
	}
	for i, w := range wantOrder {
		if !strings.Contains(reqs[i], w) {
			t.Errorf("request %d shows %q, want %s (newest first)", i, reqs[i], w)
		}
	}
	// The stub that answered each, or that none did.
	answered := eval[[]string](tb, `[...document.querySelectorAll('#requests details.request > summary')].map(s =>
		(s.querySelector('.matched, .nomatch-tag') || {}).innerText || '')`)
	if want := []string{"stub #2", "no match", "stub #1", "stub #0"}; strings.Join(answered, "|") != strings.Join(want, "|") {
		t.Errorf("answered by %q, want %q", answered, want)
	}
	// Why /nowhere matched nothing: the nearest stubs and what each failed.
	tb.click("#requests details.request:nth-child(2) > summary .time")
	tb.waitText("#requests details.request:nth-child(2) .explain", "Why no stub matched")
	why := tb.text("#requests details.request:nth-child(2) .explain")
	for _, w := range []string{"stub #", "checks passed", "path", `"/nowhere"`} {
		if !strings.Contains(why, w) {
			t.Errorf("explanation %q lacks %q", why, w)
		}
	}
	tb.screenshot("imposter")
	tb.fullScreenshot("imposter-full")
	tb.click("#requests details.request:nth-child(3) > summary .time")
	tb.waitText("#requests details.request:nth-child(3) .request-detail", "X-Trace")
	tb.waitText("#requests details.request:nth-child(3) .request-detail", `"item": "it's"`)

	// Live: a new request appears on top without a reload.
	f.hit(t, f.users, "GET", "/users/42?live=1", "")
	tb.waitText("#requests details.request:first-child > summary", "live=1")
	if got := tb.text(`[data-card="requests"] .value`); got != "5" {
		t.Errorf("requests card shows %q after a fifth request", got)
	}

	// Copy as curl: the command sends the same request again.
	curl := tb.copyCurl(`#requests details.request:nth-child(4) button[data-action="curl"]`)
	for _, w := range []string{"curl -X POST", `-H 'X-Trace: abc'`, `--data-raw '{"item":"it'\''s"}'`, "/orders?x=1"} {
		if !strings.Contains(curl, w) {
			t.Errorf("curl command %q lacks %q", curl, w)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("no curl here: the copied command is not run")
	} else {
		out, err := exec.Command("sh", "-c", curl+" -sS").CombinedOutput()
		if err != nil || string(out) != "created" {
			t.Fatalf("%s: %v\n%s", curl, err, out)
		}
		recorded := f.getJSON(t, "/imposters/"+port)["requests"].([]any)
		last, first := recorded[len(recorded)-1].(map[string]any), recorded[1].(map[string]any)
		for _, k := range []string{"method", "path", "query", "body"} {
			if fmt.Sprint(last[k]) != fmt.Sprint(first[k]) {
				t.Errorf("replayed request %s = %v, want %v", k, last[k], first[k])
			}
		}
		if h := last["headers"].(map[string]any); h["X-Trace"] != "abc" {
			t.Errorf("replayed request headers %v lack X-Trace: abc", h)
		}
	}

	// A body past 64 KiB: its first 64 KiB, its length, and no Copy as curl (it would be cut).
	f.hit(t, f.users, "POST", "/orders?big=1", strings.Repeat("b", 70_000))
	tb.waitText("#requests details.request:first-child > summary", "big=1")
	tb.click("#requests details.request:first-child > summary .time")
	tb.waitText("#requests details.request:first-child .request-detail", "body: 70000 bytes, the first 64 KiB shown")
	if shown := eval[int](tb, `document.querySelector('#requests details.request:first-child .request-detail pre.body').textContent.length`); shown != 64<<10 {
		t.Errorf("the page shows %d bytes of a 70,000-byte body, want %d", shown, 64<<10)
	}
	if !eval[bool](tb, `document.querySelector('#requests details.request:first-child button[data-action="curl"]').disabled`) {
		t.Error("Copy as curl is on for a request whose body the page has cut")
	}

	// Download this imposter.
	tb.click("#download")
	got := waitFile(t, dir, "imposter-"+port+".json")
	if _, want := f.api(t, "GET", "/imposters/"+port+"?replayable=true", ""); !bytes.Equal(got, want) {
		t.Errorf("downloaded imposter:\n%s\nwant:\n%s", got, want)
	}

	// Clear requests.
	tb.click("#clear")
	tb.waitText("#requests", "No requests recorded yet")
	if n := f.count(t, f.users); n != 0 {
		t.Errorf("after Clear requests the API counts %d requests", n)
	}

	// Delete: back to the list, and the imposter is gone.
	tb.click("#delete")
	tb.wait("the imposters page", `location.pathname === '/imposters'`)
	tb.wait("the imposters page to read the API", `document.getElementById('live').classList.contains('ok')`)
	if status, _ := f.api(t, "GET", "/imposters/"+port, ""); status != 404 {
		t.Errorf("after Delete, GET /imposters/%s answers %d, want 404", port, status)
	}
	if tb.text(row(f.users)) != "" {
		t.Error("the deleted imposter is still listed")
	}
}

// copyCurl clicks a "Copy as curl" button and returns what reached the clipboard.
func (tb *tab) copyCurl(sel string) string {
	tb.t.Helper()
	tb.grantClipboard()
	tb.click(sel)
	tb.waitText("#toast", "Copied")
	got := eval[string](tb, `navigator.clipboard.readText()`)
	if want := eval[string](tb, `document.body.dataset.lastCopied`); got != want {
		tb.t.Errorf("the clipboard holds %q, the page copied %q", got, want)
	}
	return got
}

func TestLogsPage(t *testing.T) {
	f := newFixture(t)
	tb := newTab(t)
	tb.open(f.url("/logs"))
	tb.waitText("table.logs", "proxy failed")
	tb.screenshot("logs")

	setSelect := func(id, value string) {
		eval[bool](tb, `(() => { const s = document.getElementById('`+id+`'); s.value = `+jsString(value)+`;
			s.dispatchEvent(new Event('change')); return true })()`)
	}
	levels := func() []string {
		return eval[[]string](tb, `[...document.querySelectorAll('table.logs tbody tr')].map(r => r.dataset.level)`)
	}
	scopes := func() []string {
		return eval[[]string](tb, `[...document.querySelectorAll('table.logs tbody tr')].map(r => r.dataset.scope)`)
	}

	setSelect("log-level", "error")
	if got := levels(); len(got) == 0 || strings.Trim(strings.Join(got, ""), "eor") != "" {
		t.Errorf("level filter error shows levels %q", got)
	}
	setSelect("log-level", "")
	scope := "http:" + strconv.Itoa(f.users) + " users"
	setSelect("log-scope", scope)
	got := scopes()
	if len(got) == 0 {
		t.Fatal("the imposter filter shows no entries")
	}
	for _, s := range got {
		if s != scope {
			t.Errorf("imposter filter %q shows an entry of %q", scope, s)
		}
	}
	setSelect("log-scope", "")

	// Live: a new imposter's first line appears without a reload.
	f.create(t, `{"protocol":"http","name":"latecomer"}`)
	tb.waitText("table.logs", "latecomer")
	// The page load is logged; its reads every 2 s are not (they are at debug).
	if n := eval[int](tb, `[...document.querySelectorAll('table.logs td.message')].filter(td => td.innerText === 'GET /logs').length`); n != 1 {
		t.Errorf("the log shows GET /logs %d times, want once (the page load)", n)
	}
}

func TestConfigPage(t *testing.T) {
	f := newFixture(t)
	tb := newTab(t)
	tb.open(f.url("/config"))
	port := strings.TrimPrefix(f.Admin, "http://127.0.0.1:")
	tb.waitText(`tr[data-key="port"]`, port)
	tb.waitText(`#config-version`, "2.9.1")
	tb.waitText(`tr[data-key="goVersion"]`, "go")
	tb.screenshot("config")
	uptime := tb.text(`tr[data-key="uptime"] td`)
	tb.wait("uptime to move on", `document.querySelector('tr[data-key="uptime"] td').innerText !== `+jsString(uptime))
}

func TestAPIKey(t *testing.T) {
	f := newFixture(t, "--apikey", "s3cret")
	// The API still wants the key; the page (which holds no data) does not.
	if status, _ := do(t, "GET", f.url("/imposters"), ""); status != 401 {
		t.Errorf("GET /imposters without the key answers %d, want 401", status)
	}
	if status, body := do(t, "GET", f.url("/dashboard/api/imposters"), ""); status != 401 {
		t.Errorf("GET /dashboard/api/imposters without the key answers %d, want 401: %s", status, body)
	}
	tb := newTab(t)
	tb.do(chromedp.Navigate(f.url("/")))
	tb.wait("the key dialog", `document.getElementById('key-dialog').open`)
	if n := eval[int](tb, `document.querySelectorAll('tr[data-port]').length`); n != 0 {
		t.Fatalf("without a key the page shows %d imposters", n)
	}

	// A wrong key: the API answers 401 and the page asks again.
	tb.allow(`401`)
	tb.enterKey("wrong")
	tb.wait("the key dialog again", `document.getElementById('key-dialog').open && document.getElementById('key-message').innerText.includes('refused')`)

	tb.enterKey("s3cret")
	tb.waitText(row(f.users), "users")
	if got := eval[string](tb, `sessionStorage.getItem('mockd.apikey')`); got != "s3cret" {
		t.Errorf("sessionStorage holds %q", got)
	}
	if n := eval[int](tb, `localStorage.length`); n != 0 {
		t.Errorf("the page wrote %d entries to localStorage", n)
	}

	// Actions send the key.
	tb.open(f.url("/imposters"))
	tb.click(row(f.ledger) + ` button[data-action="delete"]`)
	tb.wait("the ledger row to go", `!document.querySelector('`+row(f.ledger)+`')`)
	if status, _ := f.api(t, "GET", "/imposters/"+strconv.Itoa(f.ledger), ""); status != 404 {
		t.Errorf("after Delete with the key, GET answers %d", status)
	}
}

func (tb *tab) enterKey(key string) {
	tb.t.Helper()
	eval[bool](tb, `(() => { document.getElementById('key-input').value = `+jsString(key)+`;
		document.getElementById('key-form').requestSubmit(); return true })()`)
}

// TestJSONClientsUnchanged checks what a page load must not change: clients that do not prefer
// HTML get the API's JSON, byte for byte.
func TestJSONClientsUnchanged(t *testing.T) {
	s := startMockd(t)
	s.create(t, `{"protocol":"http","port":`+strconv.Itoa(closedPort(t))+`,"name":"x"}`)
	for _, path := range []string{"/", "/imposters", "/config"} {
		_, want := do(t, "GET", s.Admin+path, "", "Accept", "application/json")
		for _, accept := range []string{"", "*/*", "application/json, text/html", "application/json, text/plain, */*"} {
			status, got := do(t, "GET", s.Admin+path, "", "Accept", accept)
			if status != 200 || !bytes.Equal(cut(got, `"process"`), cut(want, `"process"`)) { // uptime and memory move
				t.Errorf("GET %s with Accept %q: %d\n%s\nwant:\n%s", path, accept, status, got, want)
			}
		}
		status, page := do(t, "GET", s.Admin+path, "", "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		if status != 200 || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
			t.Errorf("GET %s from a browser: %d %.60s", path, status, page)
		}
		var v any
		if json.Unmarshal(want, &v) != nil {
			t.Errorf("GET %s: not JSON: %s", path, want)
		}
	}
}

// cut returns b up to at.
func cut(b []byte, at string) []byte {
	if i := bytes.Index(b, []byte(at)); i >= 0 {
		return b[:i]
	}
	return b
}

// TestCustomProtocolRequests: the page of a custom protocol's imposter (--protofile) shows each
// recorded request by the fields its program sent (its data, or all of them), not as an http
// request ("undefined undefined" before), and the program's metadata does not break the page.
func TestCustomProtocolRequests(t *testing.T) {
	dir := t.TempDir()
	program := filepath.Join(dir, "waitproto.sh")
	// The program announces metadata and waits; the test posts its requests to _requests.
	if err := os.WriteFile(program, []byte("#!/bin/sh\necho '{\"greeting\": \"hi\"}'\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(`{"line": {"createCommand": "`+program+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startMockd(t, "--protofile", protofile)
	port := strconv.Itoa(closedPort(t)) // the program serves it (here: nothing does)
	s.create(t, `{"protocol":"line","port":`+port+`,"name":"lines","recordRequests":true,
		"stubs":[{"predicates":[{"equals":{"data":"hello"}}],"responses":[{"is":{"data":"world"}}]}]}`)
	for _, req := range []string{`{"data":"hello"}`, `{"oid":"1.3.6.1","community":"public"}`} {
		if status, body := s.api(t, "POST", "/imposters/"+port+"/_requests", `{"request":`+req+`}`); status != 200 {
			t.Fatalf("_requests %s: %d %s", req, status, body)
		}
	}
	tb := newTab(t)
	tb.open(s.Admin + "/imposters/" + port)
	tb.waitText("#requests", "hello")
	reqs := tb.texts("#requests details.request > summary")
	if len(reqs) != 2 || !strings.Contains(reqs[0], `"oid":"1.3.6.1"`) || !strings.Contains(reqs[1], "hello") {
		t.Errorf("the requests show as %q", reqs)
	}
	for _, r := range reqs {
		if strings.Contains(r, "undefined") {
			t.Errorf("a request shows as %q", r)
		}
	}
}
