package app

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/mockd/mockd/internal/config"
)

// freePort returns a loopback port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// loadYAML writes text to a config file and loads it.
func loadYAML(t *testing.T, text string) *config.Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mockd.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startInmem starts an App whose admin API listens on fasthttputil's in-memory listener and
// returns it with a client for that listener.
func startInmem(t testing.TB, opts Options) (*App, *fasthttp.Client, *fasthttputil.InmemoryListener) {
	t.Helper()
	ln := fasthttputil.NewInmemoryListener()
	opts.Listener, opts.Quiet, opts.Host = ln, true, "127.0.0.1"
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	return a, &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}, ln
}

// get sends GET uri to the admin API and returns the status and body.
func get(c *fasthttp.Client, uri string) (int, string, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://localhost" + uri)
	if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
		return 0, "", err
	}
	return resp.StatusCode(), string(resp.Body()), nil
}

// TestStartStop starts an App with one imposter, uses its admin API and imposter, stops it and
// checks that both stopped listening.
func TestStartStop(t *testing.T) {
	port := freePort(t)
	cfg := loadYAML(t, "imposters:\n  - port: "+strconv.Itoa(port)+"\n    protocol: http\n    stubs:\n      - responses:\n          - is: {body: hello}\n")
	a, c, ln := startInmem(t, Options{Port: 2525, Config: cfg, AllowInjection: true, Origin: "http://app.test"})

	status, body, err := get(c, "/imposters")
	if err != nil || status != 200 || !strings.Contains(body, `"port": `+strconv.Itoa(port)) {
		t.Fatalf("GET /imposters: %d %v %s", status, err, body)
	}
	status, body, err = get(c, "/config")
	if err != nil || status != 200 {
		t.Fatalf("GET /config: %d %v %s", status, err, body)
	}
	var got struct {
		Version string         `json:"version"`
		Options map[string]any `json:"options"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	wantOptions := map[string]any{"port": 2525.0, "host": "127.0.0.1", "allowInjection": true, "origin": "http://app.test",
		"pidfile": "mb.pid", "apikey": nil, "ipWhitelist": []any{"*"}}
	if got.Version != MountebankVersion {
		t.Errorf("GET /config version %q, want %q", got.Version, MountebankVersion)
	}
	for k, want := range wantOptions {
		if g, _ := json.Marshal(got.Options[k]); string(g) != mustJSON(want) {
			t.Errorf("GET /config options.%s = %s, want %s", k, g, mustJSON(want))
		}
	}
	_, resp, err := fasthttp.Get(nil, "http://127.0.0.1:"+strconv.Itoa(port)+"/")
	if err != nil || string(resp) != "hello" {
		t.Fatalf("imposter answered %q %v, want hello", resp, err)
	}
	if n := len(a.Registry().All()); n != 1 {
		t.Fatalf("%d imposters running, want 1", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
	if conn, err := ln.Dial(); err == nil {
		conn.Close()
		t.Error("the admin listener still accepts after Stop")
	}
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		conn.Close()
		t.Error("the imposter still accepts after Stop")
	}
	if v := a.Verdict(true); v == nil {
		t.Error("no verdict after Stop")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestNewErrors: bad options fail New, before anything listens.
func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"log level", Options{LogLevel: "loud"}, "loud"},
		{"log format", Options{LogFormat: "xml"}, "xml"},
		{"log file", Options{LogFile: filepath.Join(t.TempDir(), "missing", "mb.log")}, "cannot open log file"},
		{"script state without a store", Options{StoreScriptState: true, AllowInjection: true}, "--store-script-state needs --store"},
	}
	for _, tc := range tests {
		tc.opts.Quiet = true
		a, err := New(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, %v; want an error containing %q", tc.name, a, err, tc.want)
		}
	}
}

// TestNewConfigErrors: an imposter that does not compile is a LoadError naming it; injection
// without AllowInjection is one too.
func TestNewConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"bad regex", "imposters:\n  - port: 4545\n    protocol: http\n    stubs:\n      - predicates: [{matches: {path: '('}}]\n        responses: [{is: {}}]\n", "imposters[0].stubs[0].predicates[0].matches.path"},
		{"injection", "imposters:\n  - port: 4545\n    protocol: http\n    stubs:\n      - responses: [{inject: 'function () { return {}; }'}]\n", "allowInjection"},
		{"same port twice", "imposters:\n  - {port: 4545, protocol: http}\n  - {port: 4545, protocol: http}\n", "port 4545 is already used"},
	}
	for _, tc := range tests {
		_, err := New(Options{Quiet: true, Config: loadYAML(t, tc.yaml)})
		var le *config.LoadError
		if !errors.As(err, &le) || !strings.Contains(strings.Join(le.Problems, "\n"), tc.want) {
			t.Errorf("%s: New = %v; want a LoadError containing %q", tc.name, err, tc.want)
		}
	}
}

// TestStartFails: a taken admin port or imposter port fails Start, which leaves nothing
// listening.
func TestStartFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	a, err := New(Options{Quiet: true, Host: "127.0.0.1", Port: takenPort})
	if err != nil {
		t.Fatal(err)
	}
	want := "cannot start admin API: port " + strconv.Itoa(takenPort) + " is already in use"
	if err := a.Start(); err == nil || err.Error() != want {
		t.Errorf("admin port taken: Start = %v, want %q", err, want)
	}

	ln := fasthttputil.NewInmemoryListener()
	cfg := loadYAML(t, "imposters:\n  - {port: "+strconv.Itoa(takenPort)+", protocol: http}\n")
	a, err = New(Options{Quiet: true, Host: "127.0.0.1", Listener: ln, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err == nil || !strings.HasPrefix(err.Error(), "cannot start imposter") {
		t.Errorf("imposter port taken: Start = %v, want cannot start imposter", err)
	}
	if conn, err := ln.Dial(); err == nil {
		conn.Close()
		t.Error("the admin listener still accepts after a failed Start")
	}
}

func TestIPFilter(t *testing.T) {
	tests := []struct {
		localOnly bool
		whitelist []string
		ip        string
		want      bool
	}{
		{false, nil, "192.0.2.1", true},
		{false, []string{"*"}, "192.0.2.1", true},
		{false, []string{"192.0.2.1"}, "192.0.2.1", true},
		{false, []string{" 192.0.2.1 "}, "192.0.2.2", false},
		{false, []string{"192.0.2.1"}, "127.0.0.1", true},
		{false, []string{"fe80::1%eth0"}, "fe80::1", true},
		{true, []string{"192.0.2.1"}, "192.0.2.1", false},
		{true, nil, "::1", true},
		// As in Mountebank: the loopback interface's own addresses, not all of 127.0.0.0/8.
		{true, nil, "::ffff:127.0.0.1", true},
		{true, nil, "127.0.0.2", false},
		{true, []string{"127.0.0.2"}, "127.0.0.2", false},
		{false, []string{"127.0.0.2"}, "127.0.0.2", true},
		{false, []string{"127.0.0.2", "not an address"}, "127.0.0.3", false},
	}
	local := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	for _, tc := range tests {
		allow := ipFilter(tc.localOnly, tc.whitelist, local)
		got := allow == nil || allow(net.ParseIP(tc.ip))
		if got != tc.want {
			t.Errorf("ipFilter(%v, %q)(%s) = %v, want %v", tc.localOnly, tc.whitelist, tc.ip, got, tc.want)
		}
	}
}

func TestLoopbackIPs(t *testing.T) {
	ips := loopbackIPs()
	if len(ips) == 0 {
		t.Fatal("no loopback address")
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			t.Errorf("%s is not a loopback address", ip)
		}
	}
}

// TestInjectionWarningLogged: as Mountebank, --allowInjection makes the first log entry a warning
// (before the config file's imposters and the ready line); client suites read GET /logs by index.
func TestInjectionWarningLogged(t *testing.T) {
	for _, allow := range []bool{true, false} {
		port := freePort(t)
		cfg := loadYAML(t, "imposters:\n  - port: "+strconv.Itoa(port)+"\n    protocol: http\n")
		a, c, _ := startInmem(t, Options{Port: 2525, Config: cfg, AllowInjection: allow})
		status, body, err := get(c, "/logs")
		a.Stop(context.Background())
		if err != nil || status != 200 {
			t.Fatalf("GET /logs: %d %v", status, err)
		}
		var got struct {
			Logs []struct{ Level, Message string } `json:"logs"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range got.Logs {
			lines = append(lines, l.Level+" "+l.Message)
		}
		want := []string{
			"info [http:" + strconv.Itoa(port) + "] Open for business...",
			"info [mb:2525] mountebank v" + MountebankVersion + " (mockd " + BuildInfo().Version + ") now taking orders - point your browser to http://localhost:2525/ for help",
		}
		if allow {
			want = append([]string{"warn [mb:2525] Running with --allowInjection set. See http://127.0.0.1:2525/docs/security for security info"}, want...)
		}
		if len(lines) < len(want) || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") {
			t.Errorf("allowInjection %v: GET /logs starts\n%s\nwant\n%s", allow, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}
