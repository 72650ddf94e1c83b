package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Custom protocols (--protofile): mockd starts the program a protofile names for each imposter
// of its protocol, as Mountebank does, and the program resolves every request it receives
// through POST /imposters/:id/_requests. test/internal/lineproto is such a program: a
// line-based tcp protocol.

// buildLineproto builds test/internal/lineproto into dir.
func buildLineproto(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "lineproto")
	build := exec.Command("go", "build", "-o", bin, "./test/internal/lineproto")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build lineproto: %v\n%s", err, out)
	}
	return bin
}

// loopbackPort returns a port free on 127.0.0.1 at the time of the call.
func loopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// alive reports whether process pid runs (a zombie does not count: its parent may be a
// container's init that does not reap it).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// waitGone waits until pid has stopped running.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("%s (pid %d) still runs", what, pid)
	}
}

// lineClient sends lines to a lineproto imposter and reads one answer line for each.
func lineClient(t *testing.T, port int, lines ...string) []string {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var out []string
	for _, l := range lines {
		if _, err := fmt.Fprintln(c, l); err != nil {
			t.Fatal(err)
		}
		answer, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer to %q: %v", l, err)
		}
		out = append(out, strings.TrimSuffix(answer, "\n"))
	}
	return out
}

func TestCustomProtocol(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the programs' processes")
	}
	dir := t.TempDir()
	bin := buildLineproto(t, dir)
	protofile := filepath.Join(dir, "protocols.json")
	protocols := fmt.Sprintf(`{"line": {"createCommand": %q}, "linefail": {"createCommand": %q},
		"nosuch": {"createCommand": %q}, "linechild": {"createCommand": %q}}`,
		bin, bin+" fail", filepath.Join(dir, "nosuch")+" x", bin+" child")
	if err := os.WriteFile(protofile, []byte(protocols), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--protofile", protofile)
	port := loopbackPort(t)
	create := fmt.Sprintf(`{"protocol":"line","port":%d,"name":"lines","greeting":"hi","recordRequests":true,"stubs":[
		{"predicates":[{"equals":{"data":"hello"}}],"responses":[{"is":{"data":"world"}}]},
		{"predicates":[{"startsWith":{"data":"px"}}],"responses":[{"proxy":{"to":"line://origin","predicateGenerators":[{"matches":{"data":true}}]}}]}]}`, port)
	status, _, body := do(t, "POST", s.Admin+"/imposters", create)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	created := jsonBody(t, body)
	if created["greeting"] != "hi" || created["port"] != float64(port) {
		t.Errorf("the program's metadata is not shown: %s", body)
	}
	pid := int(created["pid"].(float64))

	// Stub answers over the wire, a no-match's empty response, and a proxy the program runs
	// (its "origin" answers origin:LINE), recorded for the next request alike.
	got := lineClient(t, port, "hello", "other", "px1", "px1", "px2")
	if want := []string{"world", "", "origin:px1", "origin:px1", "origin:px2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	status, _, body = do(t, "GET", s.Admin+fmt.Sprintf("/imposters/%d", port), "")
	if status != 200 {
		t.Fatalf("GET: %d %s", status, body)
	}
	var shown struct {
		NumberOfRequests int              `json:"numberOfRequests"`
		Requests         []map[string]any `json:"requests"`
		Stubs            []map[string]any `json:"stubs"`
		Greeting         string           `json:"greeting"`
	}
	if err := json.Unmarshal([]byte(body), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.NumberOfRequests != 5 || len(shown.Requests) != 5 || shown.Requests[0]["data"] != "hello" || shown.Requests[0]["timestamp"] == nil {
		t.Errorf("recorded: %d requests, %v", shown.NumberOfRequests, shown.Requests)
	}
	if len(shown.Stubs) != 4 || shown.Greeting != "hi" { // two recorded by proxyOnce, before the proxy
		t.Errorf("stubs after proxying: %s", body)
	}

	// The program's children are stopped with it.
	status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"linechild","port":%d}`, loopbackPort(t)))
	if status != 201 {
		t.Fatalf("create linechild: %d %s", status, body)
	}
	child := jsonBody(t, body)
	childPid, childPort := int(child["childPid"].(float64)), int(child["port"].(float64))
	if !alive(childPid) {
		t.Fatalf("the program's child %d does not run", childPid)
	}
	status, _, _ = do(t, "DELETE", s.Admin+fmt.Sprintf("/imposters/%d", childPort), "")
	if status != 200 {
		t.Fatalf("DELETE: %d", status)
	}
	waitGone(t, "a deleted imposter's program's child", childPid)

	// A program that fails to start, or cannot be run, is Mountebank's 400; what runs stays.
	status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"linefail","port":%d}`, loopbackPort(t)))
	if status != 400 || !strings.Contains(body, `"code": "cannot start server"`) || !strings.Contains(body, `\"linefail\" start command failed (exit code 3)`) {
		t.Errorf("failing program: %d %s", status, body)
	}
	status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"nosuch","port":%d}`, loopbackPort(t)))
	if status != 400 || !strings.Contains(body, `cannot run`) || !strings.Contains(body, `"code": "ENOENT"`) {
		t.Errorf("missing program: %d %s", status, body)
	}
	if got := lineClient(t, port, "hello"); got[0] != "world" {
		t.Errorf("after failed creations: %q", got)
	}

	// A callback for an imposter no program serves, or with an unknown proxy key.
	status, _, body = do(t, "POST", s.Admin+fmt.Sprintf("/imposters/%d/_requests/99", port), `{"proxyResponse":{}}`)
	if status != 404 || !strings.Contains(body, "invalid proxy resolution key") {
		t.Errorf("unknown key: %d %s", status, body)
	}
	status, _, body = do(t, "POST", s.Admin+fmt.Sprintf("/imposters/%d/_requests", port), `{"request":"not an object"}`)
	if status != 400 {
		t.Errorf("bad request: %d %s", status, body)
	}

	// A program that crashes leaves mockd and its imposter as they were.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "the killed program", pid)
	status, _, body = do(t, "GET", s.Admin+"/imposters", "")
	if status != 200 || !strings.Contains(body, fmt.Sprintf(`"port": %d`, port)) {
		t.Errorf("after the program crashed: %d %s", status, body)
	}
	for i := 0; i < 100 && !strings.Contains(s.Output(), "Uh oh! I've crashed!"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.Output(), "Uh oh! I've crashed! Expect subsequent requests to fail.") {
		t.Errorf("the crash is not logged:\n%s", s.Output())
	}

	// PUT /imposters replaces the imposter (its program with it); shutdown stops the last one.
	status, _, body = do(t, "PUT", s.Admin+"/imposters", fmt.Sprintf(`{"imposters":[{"protocol":"line","port":%d}]}`, port))
	if status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	status, _, body = do(t, "GET", s.Admin+fmt.Sprintf("/imposters/%d", port), "")
	if status != 200 {
		t.Fatalf("GET: %d %s", status, body)
	}
	last := int(jsonBody(t, body)["pid"].(float64))
	if got := lineClient(t, port, "hello"); got[0] != "" {
		t.Errorf("the replaced imposter answers %q", got)
	}
	s.stop()
	waitGone(t, "the program after shutdown", last)
}

// TestCustomProtocolBadProtofile: a protofile that is not JSON, or not a file, loads no
// protocol; mockd starts and answers as for any unknown protocol.
func TestCustomProtocolBadProtofile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"line": {"createCommand": `), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, dir} {
		s := start(t, "--protofile", path)
		status, _, body := do(t, "POST", s.Admin+"/imposters", `{"protocol":"line","port":`+strconv.Itoa(loopbackPort(t))+`}`)
		if status != 400 || !strings.Contains(body, "the line protocol is not yet supported") {
			t.Errorf("%s: %d %s", path, status, body)
		}
		if out := s.Output(); !strings.Contains(out, "no custom protocols loaded") {
			t.Errorf("%s: not reported:\n%s", path, out)
		}
	}
}

// TestValidateCustomProtocol: `mockd validate --protofile` checks a custom protocol's imposters
// (their predicates, behaviors and scripts, compiled as a server compiles them) without running
// the program; without the protofile such an imposter is an error that says what is missing.
func TestValidateCustomProtocol(t *testing.T) {
	dir := t.TempDir()
	protofile := filepath.Join(dir, "protocols.json")
	marker := filepath.Join(dir, "ran")
	// The program would leave a file behind if validate ran it.
	if err := os.WriteFile(protofile, []byte(`{"line": {"createCommand": "touch `+marker+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(`imposters:
  - port: 4545
    protocol: line
    greeting: hi
    stubs:
      - predicates: [{equals: {data: hello}}]
        responses: [{is: {data: world}, behaviors: [{wait: 5}]}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`imposters:
  - port: 4545
    protocol: line
    stubs:
      - predicates: [{matches: {data: "("}}]
        responses: [{is: {data: one}}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte(`imposters:
  - port: 4545
    protocol: line
    stubs:
      - responses: [{inject: "function () { return {}; }"}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		out, err := exec.Command(mockdBin, append([]string{"validate"}, args...)...).CombinedOutput()
		return exitCode(err), string(out)
	}
	if code, out := run("-c", good, "--protofile", protofile); code != 0 || !strings.Contains(out, "ok: 1 imposters") {
		t.Errorf("validate --protofile of a good file: exit %d\n%s", code, out)
	}
	for file, want := range map[string]string{bad: "bad.yaml:5:9: imposters[0].stubs[0].predicates: Invalid regular expression: /(/",
		script: "script.yaml:5:9: imposters[0].stubs[0]: JavaScript injection is not allowed unless mockd is run with --allowInjection"} {
		if code, out := run("-c", file, "--protofile", protofile); code != 1 || !strings.Contains(out, want) {
			t.Errorf("validate --protofile of a bad file: exit %d, want 1 and %q:\n%s", code, want, out)
		}
	}
	if code, out := run("-c", script, "--protofile", protofile, "--allowInjection"); code != 0 {
		t.Errorf("validate --protofile --allowInjection: exit %d\n%s", code, out)
	}
	code, out := run("-c", good)
	if want := "good.yaml:3:5: imposters[0].protocol: the line protocol is not yet supported (mockd serves http, https, tcp and smtp; a custom protocol needs the --protofile that names its program)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("validate without the protofile: exit %d, want 1 and %q:\n%s", code, want, out)
	}
	if strings.Contains(out, "greeting") {
		t.Errorf("validate without the protofile reports the custom imposter's own fields, not only its protocol:\n%s", out)
	}
	// A near miss of a protocol, built in or of the protofile, is named.
	typos := write(t, dir, "typos.yaml", "imposters:\n  - protocol: htp\n  - protocol: lin\n    greeting: hi\n")
	code, out = run("-c", typos, "--protofile", protofile)
	for _, want := range []string{
		`typos.yaml:2:5: imposters[0].protocol: the htp protocol is not yet supported (did you mean "http"?)`,
		`typos.yaml:3:5: imposters[1].protocol: the lin protocol is not yet supported (did you mean "line"?)`,
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("validate of protocol typos: exit %d, want 1 and %q:\n%s", code, want, out)
		}
	}
	if code, out := run("-c", good, "--protofile", filepath.Join(dir, "missing.json")); code != 1 || !strings.Contains(out, "missing.json") {
		t.Errorf("validate with a missing protofile: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("validate ran the program")
	}
	// mockd schema --protofile: the schema names the protofile's protocols.
	sch, err := exec.Command(mockdBin, "schema", "--protofile", protofile).Output()
	if err != nil || !bytes.Contains(sch, []byte(`"customImposter"`)) || !bytes.Contains(sch, []byte(`["line"]`)) {
		t.Errorf("mockd schema --protofile: %v\n%.300s", err, sch)
	}
}

// TestCustomProtocolDatadir: a custom protocol's imposter kept by --datadir starts its program
// again, after a restart, with the creation request's fields, as Mountebank's data directory
// does; not with what the program announced the first time (its pid, say), which the API shows.
func TestCustomProtocolDatadir(t *testing.T) {
	dir := t.TempDir()
	bin := buildLineproto(t, dir)
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(fmt.Sprintf(`{"line": {"createCommand": %q}}`, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	port := loopbackPort(t)
	argsOf := func(s *server) map[string]any {
		t.Helper()
		status, _, body := do(t, "GET", s.Admin+fmt.Sprintf("/imposters/%d", port), "")
		if status != 200 {
			t.Fatalf("GET: %d %s", status, body)
		}
		shown := jsonBody(t, body)
		var args map[string]any
		if err := json.Unmarshal([]byte(shown["args"].(string)), &args); err != nil {
			t.Fatalf("the program's args: %v\n%s", err, body)
		}
		if shown["greeting"] != "hi" {
			t.Errorf("metadata not shown: %s", body)
		}
		return args
	}
	s := start(t, "--datadir", data, "--protofile", protofile)
	status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"line","port":%d,"greeting":"hi","community":"public",
		"stubs":[{"predicates":[{"equals":{"data":"hello"}}],"responses":[{"is":{"data":"world"}}]}]}`, port))
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	first := argsOf(s)
	s.stop()
	s = start(t, "--datadir", data, "--protofile", protofile)
	again := argsOf(s)
	delete(first, "callbackURLTemplate") // the admin port differs
	delete(again, "callbackURLTemplate")
	if a, b := jsonOf(t, first), jsonOf(t, again); a != b {
		t.Errorf("the program restarted with other arguments:\n first %s\n again %s", a, b)
	}
	if got := lineClient(t, port, "hello"); got[0] != "world" {
		t.Errorf("after the restart: %q", got)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCustomProtocolServerBlock: a YAML config's server block may name the protofile, as any
// `mockd start` flag: serve runs its protocols' imposters and validate checks them; a
// --protofile on the command line wins.
func TestCustomProtocolServerBlock(t *testing.T) {
	dir := t.TempDir()
	bin := buildLineproto(t, dir)
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(fmt.Sprintf(`{"line": {"createCommand": %q}}`, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	port := loopbackPort(t)
	cfg := filepath.Join(dir, "lines.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`server:
  protofile: %s
imposters:
  - port: %d
    protocol: line
    stubs:
      - predicates: [{equals: {data: hello}}]
        responses: [{is: {data: world}}]
`, protofile, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mockdBin, "validate", "-c", cfg).CombinedOutput(); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
	s := start(t, "-c", cfg)
	if got := lineClient(t, port, "hello"); got[0] != "world" {
		t.Errorf("answer %q", got)
	}
	s.stop()
	_, err := tryStart(t, "-c", cfg, "--protofile", filepath.Join(dir, "other.json"))
	if err == nil || !strings.Contains(err.Error(), "the line protocol is not yet supported") {
		t.Errorf("the command line's --protofile did not win: %v", err)
	}
}

// TestCustomProtocolSlowStart: while a custom protocol's program has not printed its first
// line, the other changes go on (mockd held every POST, PUT and DELETE for up to the 60 s
// start timeout), its port is refused to a second imposter and not listed, and a DELETE of its
// port stops the program and fails its creation.
func TestCustomProtocolSlowStart(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the programs' processes")
	}
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	script := filepath.Join(dir, "slow.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho $$ > "+pidfile+".tmp && mv "+pidfile+".tmp "+pidfile+"\nsleep 50\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(fmt.Sprintf(`{"slow": {"createCommand": %q}}`, "/bin/sh "+script)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--protofile", protofile)
	port := loopbackPort(t)
	type result struct {
		status int
		body   string
	}
	slow := make(chan result, 1)
	go func() {
		status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"slow","port":%d}`, port))
		slow <- result{status, body}
	}()
	var pid int
	for i := 0; i < 400 && pid == 0; i++ {
		data, _ := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		if pid == 0 {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if pid == 0 {
		t.Fatal("the program did not start")
	}

	status, _, body := do(t, "POST", s.Admin+"/imposters", `{"protocol":"http"}`)
	if status != 201 {
		t.Fatalf("an http imposter while the program starts: %d %s", status, body)
	}
	select {
	case r := <-slow:
		t.Fatalf("the slow creation ended before the http one: %d %s", r.status, r.body)
	default:
	}
	status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port))
	if status != 400 || !strings.Contains(body, "EADDRINUSE") {
		t.Errorf("a second imposter on the starting port: %d %s", status, body)
	}
	_, _, body = do(t, "GET", s.Admin+"/imposters", "")
	if strings.Contains(body, strconv.Itoa(port)) || !strings.Contains(body, `"protocol": "http"`) {
		t.Errorf("GET /imposters while the program starts: %s", body)
	}

	status, _, body = do(t, "DELETE", s.Admin+fmt.Sprintf("/imposters/%d", port), "")
	if status != 200 || strings.TrimSpace(body) != "{}" {
		t.Errorf("DELETE of the starting port: %d %s", status, body)
	}
	select {
	case r := <-slow:
		if r.status != 400 || !strings.Contains(r.body, "deleted while its program was starting") {
			t.Errorf("the slow creation answered %d %s", r.status, r.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the slow creation did not end after its DELETE")
	}
	waitGone(t, "the deleted imposter's program", pid)
	_, _, body = do(t, "GET", s.Admin+"/imposters", "")
	if strings.Contains(body, strconv.Itoa(port)) {
		t.Errorf("GET /imposters after the DELETE: %s", body)
	}
}

// TestCustomProtocolAbortedStartFreesItsPort: a DELETE of a starting imposter's port, or a
// PUT /imposters, answers once the aborted program has exited, so the port is free for what
// follows. A user replacing imposters in a loop got EADDRINUSE from a PUT naming the port of a
// program still stopping (lineproto linger holds its port for a second after SIGTERM).
func TestCustomProtocolAbortedStartFreesItsPort(t *testing.T) {
	dir := t.TempDir()
	bin := buildLineproto(t, dir)
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(fmt.Sprintf(`{"linger": {"createCommand": %q}}`, bin+" linger")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--protofile", protofile)
	port := loopbackPort(t)
	for _, replace := range []struct{ name, method, path, body string }{
		{"DELETE then POST", "DELETE", fmt.Sprintf("/imposters/%d", port), ""},
		{"PUT", "PUT", "/imposters", fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d}]}`, port)},
	} {
		creation := make(chan string, 1)
		go func() {
			status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"linger","port":%d}`, port))
			creation <- fmt.Sprint(status, " ", body)
		}()
		// The program has bound its port (and catches SIGTERM) once a connection is accepted.
		for i := 0; ; i++ {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				c.Close()
				break
			}
			if i == 400 {
				t.Fatalf("%s: the program did not bind its port: %v", replace.name, err)
			}
			time.Sleep(25 * time.Millisecond)
		}
		status, _, body := do(t, replace.method, s.Admin+replace.path, replace.body)
		if replace.method == "DELETE" && status == 200 {
			status, _, body = do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, port))
		}
		if status != 200 && status != 201 {
			t.Errorf("%s on the aborted program's port: %d %s", replace.name, status, body)
		}
		if got := <-creation; !strings.HasPrefix(got, "400 ") || !strings.Contains(got, "deleted while its program was starting") {
			t.Errorf("%s: the creation answered %s", replace.name, got)
		}
		if status, _, body := do(t, "DELETE", s.Admin+"/imposters", ""); status != 200 || !strings.Contains(body, `"protocol": "http"`) {
			t.Errorf("%s: no http imposter on the port: %d %s", replace.name, status, body)
		}
	}
}
