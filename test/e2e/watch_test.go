package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func get(url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestWatchReloads edits, breaks and removes config files of a mockd serve --watch while a
// bounded load runs against one imposter: no request fails, the edited imposter answers the
// new stubs and keeps its journal, the untouched one keeps its response cycle and scenario
// state, a broken file changes nothing and is reported with its line, and a removed file's
// imposter stops.
func TestWatchReloads(t *testing.T) {
	dir := t.TempDir()
	portA, portB := listenFree(t), listenFree(t)
	fileA := filepath.Join(dir, "a.yaml")
	fileB := filepath.Join(dir, "b.yaml")
	writeA := func(body string) {
		t.Helper()
		cfg := fmt.Sprintf("imposters:\n  - port: %d\n    protocol: http\n    recordRequests: true\n    stubs:\n      - responses: [{is: {body: %s}}]\n", portA, body)
		// Written to a temporary file and renamed, as editors save.
		tmp := fileA + ".tmp"
		if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, fileA); err != nil {
			t.Fatal(err)
		}
	}
	writeA("v1")
	write(t, dir, "b.yaml", fmt.Sprintf(`imposters:
  - port: %d
    protocol: http
    stubs:
      - scenarioName: s
        requiredScenarioState: Started
        newScenarioState: Moved
        predicates: [{equals: {path: /move}}]
        responses: [{is: {body: moved}}]
      - scenarioName: s
        requiredScenarioState: Moved
        predicates: [{equals: {path: /state}}]
        responses: [{is: {body: in Moved}}]
      - predicates: [{equals: {path: /state}}]
        responses: [{is: {body: in Started}}]
      - responses: [{is: {body: one}}, {is: {body: two}}, {is: {body: three}}]
`, portB))
	s := start(t, "--watch", "--watch-interval", "100ms", "-c", dir)
	a := fmt.Sprintf("http://127.0.0.1:%d/", portA)
	b := fmt.Sprintf("http://127.0.0.1:%d", portB)

	// A bounded load against imposter A for the whole test: at most 30 s and 200,000 requests.
	var sent, failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && sent.Load() < 200000 {
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				status, body, err := get(a)
				if err != nil || status != 200 || (body != "v1" && body != "v2") {
					failed.Add(1)
					lastErr.Store(fmt.Sprintf("%d %q %v", status, body, err))
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
		if failed.Load() > 0 {
			t.Errorf("%d of %d requests during the reloads failed; last: %v", failed.Load(), sent.Load(), lastErr.Load())
		}
		if sent.Load() == 0 {
			t.Error("the load sent no request")
		}
	}()

	// Imposter B: one step into its response cycle and its scenario moved.
	if _, body, _ := get(b + "/"); body != "one" {
		t.Fatalf("B first answer %q", body)
	}
	if _, body, _ := get(b + "/move"); body != "moved" {
		t.Fatalf("B /move answered %q", body)
	}
	waitFor(t, "load on A", func() bool { return sent.Load() > 50 })

	// An edit of A's stubs: swapped on the same listener; its journal stays.
	writeA("v2")
	waitFor(t, "A to answer v2", func() bool { _, body, _ := get(a); return body == "v2" })
	_, _, imp := do(t, "GET", fmt.Sprintf("%s/imposters/%d", s.Admin, portA), "")
	if n := jsonBody(t, imp)["numberOfRequests"].(float64); n < 50 {
		t.Errorf("A's journal was reset by the reload: numberOfRequests %v", n)
	}
	// B did not change: its response cycle and scenario state are as they were.
	if _, body, _ := get(b + "/"); body != "two" {
		t.Errorf("B's response cycle was reset: %q, want two", body)
	}
	if _, body, _ := get(b + "/state"); body != "in Moved" {
		t.Errorf("B's scenario was reset: %q", body)
	}
	_, _, imp = do(t, "GET", fmt.Sprintf("%s/imposters/%d", s.Admin, portB), "")
	if n := jsonBody(t, imp)["numberOfRequests"].(float64); n != 4 {
		t.Errorf("B's journal was reset by the reload: numberOfRequests %v, want 4", n)
	}

	// A broken edit is reported with its file and line; nothing changes. (Written to a temporary
	// file and renamed, as writeA: written in place, the watcher may read the file between its
	// truncation and its content, an empty file that defines no imposter, and unload A.)
	broken := fmt.Sprintf("imposters:\n  - port: %d\n    protocol: http\n    stubs:\n      - responses: [{is: {body: v3}}]\n        predicats: []\n", portA)
	if err := os.WriteFile(fileA+".tmp", []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fileA+".tmp", fileA); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the broken edit to be reported", func() bool {
		return strings.Contains(s.Output(), fileA+`:6:9: imposters[0].stubs[0].predicats: unknown field "predicats"`)
	})
	// The refusal is printed just after the error: wait for it as well.
	waitFor(t, "the refusal to be reported", func() bool {
		return strings.Contains(s.Output(), "refused: the running imposters are unchanged")
	})
	if _, body, _ := get(a); body != "v2" {
		t.Errorf("after a broken edit A answers %q, want v2", body)
	}
	writeA("v2") // fixed again, unchanged from what runs

	// Removing B's file stops B; A keeps serving.
	if err := os.Remove(fileB); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B to stop", func() bool { _, _, err := get(b + "/"); return err != nil })
	if _, body, _ := get(a); body != "v2" {
		t.Errorf("after removing b.yaml A answers %q", body)
	}
}

// TestSIGHUPReloads: without --watch, SIGHUP reloads the config. A config file emptied (as a
// shell redirection or an editor truncates it before writing) is refused, the imposters it had
// running on.
func TestSIGHUPReloads(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	cfg := func(body string) string {
		return fmt.Sprintf("imposters:\n  - port: %d\n    protocol: http\n    stubs:\n      - responses: [{is: {body: %s}}]\n", port, body)
	}
	file := write(t, dir, "c.yaml", cfg("before"))
	s := start(t, "-c", file)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	if _, body, _ := get(url); body != "before" {
		t.Fatalf("answer %q", body)
	}
	write(t, dir, "c.yaml", " \n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload of the empty file to be refused", func() bool {
		return strings.Contains(s.Output(), "mockd: reload (SIGHUP) refused: "+file+" is empty")
	})
	if _, body, err := get(url); body != "before" {
		t.Errorf("after the refused reload the imposter answers %q (%v), want before", body, err)
	}
	write(t, dir, "c.yaml", cfg("after"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload", func() bool { _, body, _ := get(url); return body == "after" })
	// Reported once the reload is done, which may be just after the new stubs answer.
	waitFor(t, "the reload to be reported", func() bool {
		return strings.Contains(s.Output(), "mockd: reloaded (SIGHUP): 0 unchanged, 1 with new stubs")
	})
}

// TestReloadWithAPortTakenChangesNothing: a reload whose new imposter's port another process
// holds is refused, and the running imposters stay as they were (the others were changed: new
// stubs swapped in, removed imposters stopped); once the port is free, SIGHUP applies it.
func TestReloadWithAPortTakenChangesNothing(t *testing.T) {
	dir := t.TempDir()
	portA, portB := listenFree(t), listenFree(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	portC := held.Addr().(*net.TCPAddr).Port
	imp := func(port int, body string) string {
		return fmt.Sprintf("  - {port: %d, protocol: http, stubs: [{responses: [{is: {body: %s}}]}]}\n", port, body)
	}
	file := write(t, dir, "c.yaml", "imposters:\n"+imp(portA, "a1")+imp(portB, "b1"))
	s := start(t, "-c", file)
	answer := func(port int) string {
		_, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return err.Error()
		}
		return body
	}
	write(t, dir, "c.yaml", "imposters:\n"+imp(portA, "a2")+imp(portC, "c2"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload to be refused", func() bool {
		return strings.Contains(s.Output(), "mockd: reload (SIGHUP) refused: the running imposters are unchanged")
	})
	if !strings.Contains(s.Output(), fmt.Sprintf("cannot start imposter: Port %d is already in use", portC)) {
		t.Errorf("the held port is not named:\n%s", s.Output())
	}
	if a, b := answer(portA), answer(portB); a != "a1" || b != "b1" {
		t.Errorf("after the refused reload A answers %q and B %q, want a1 and b1", a, b)
	}
	held.Close()
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload to be reported", func() bool {
		return strings.Contains(s.Output(), "mockd: reloaded (SIGHUP): 0 unchanged, 1 with new stubs, 0 restarted, 1 added, 1 removed")
	})
	if a, c := answer(portA), answer(portC); a != "a2" || c != "c2" {
		t.Errorf("after the reload A answers %q and C %q, want a2 and c2", a, c)
	}
}
