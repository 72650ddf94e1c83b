package compat

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Imposter ports of TestSharedDatadir, inside the suite's range and used by no scenario.
var sharedDatadirPorts = []int{26892, 26893, 26894}

// TestSharedDatadir plays two servers of one engine on one --datadir (mbtest starts every server
// with --datadir .mbdb; Mountebank's FAQ shares one volume between instances), on Mountebank and
// on mockd: both must start, keep each other's saved imposters, refuse a third server whose
// imposters' ports are taken, and bring back both servers' imposters on a restart.
func TestSharedDatadir(t *testing.T) {
	engines := comparedEngines(t)
	transcripts := map[string][]string{}
	for _, engine := range engines {
		if err := waitPortsFree(sharedDatadirPorts); err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		transcripts[engine] = playSharedDatadir(t, engine, filepath.Join(t.TempDir(), "db"))
		t.Logf("%s:\n  %s", engine, strings.Join(transcripts[engine], "\n  "))
	}
	compareTranscripts(t, "step", transcripts)
}

// playSharedDatadir runs the servers of one engine on the data directory dir and returns what
// each step saw, as text.
func playSharedDatadir(t *testing.T, engine, dir string) []string {
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	startOne := func() (*server, error) { return startOnDatadir(engine, dir) }
	mustStart := func(string) *server { return mustStartOnDatadir(t, engine, dir) }
	send := func(s *server, method, target, body string) exchange {
		req := rawRequest{Method: method, Target: target, Headers: []header{{"Accept", "application/json"}}}
		if body != "" {
			req.Headers = append(req.Headers, header{"Content-Type", "application/json"})
			req.Body = []byte(body)
		}
		return roundTrip(s.addr(), req)
	}
	create := func(s *server, who, name string, port int) {
		ex := send(s, "POST", "/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"name":%q,"stubs":[{"responses":[{"is":{"body":%q}}]}]}`, port, name, name))
		note("server %s POST /imposters %d %s: %s", who, port, name, ex.outcome())
	}
	list := func(s *server, who string) {
		ex := send(s, "GET", "/imposters?replayable=true", "")
		var names []string
		if v, ok := mustParseJSON(ex.Body).(map[string]any); ok {
			ims, _ := v["imposters"].([]any)
			for _, im := range ims {
				o, _ := im.(map[string]any)
				names = append(names, fmt.Sprintf("%v %v", o["port"], o["name"]))
			}
		}
		sort.Strings(names)
		note("server %s GET /imposters: %s [%s]", who, ex.outcome(), strings.Join(names, ", "))
	}
	answer := func(port int) {
		ex := roundTrip(fmt.Sprintf("127.0.0.1:%d", port), rawRequest{Method: "GET", Target: "/"})
		note("imposter %d answers %s %s", port, ex.outcome(), ex.Body)
	}
	p1, p2, p3 := sharedDatadirPorts[0], sharedDatadirPorts[1], sharedDatadirPorts[2]

	a := mustStart("a")
	b := mustStart("b")
	note("servers a and b started on one datadir")
	create(a, "a", "a", p1)
	create(b, "b", "b", p2)
	create(a, "a", "c", p3)
	ex := send(a, "DELETE", fmt.Sprintf("/imposters/%d", p3), "")
	note("server a DELETE /imposters/%d: %s", p3, ex.outcome())
	answer(p1)
	answer(p2)
	list(a, "a")
	list(b, "b")

	// A third server starts every imposter saved there: their ports are taken.
	if c, err := startOne(); err == nil {
		c.stop()
		note("server c started while a and b run")
	} else {
		note("server c did not start while a and b run")
	}

	a.stop()
	b.stop()
	if err := waitPortsFree(sharedDatadirPorts); err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	d := mustStart("d")
	list(d, "d after a and b stopped")
	answer(p1)
	answer(p2)
	ex = send(d, "DELETE", "/imposters", "")
	note("server d DELETE /imposters: %s", ex.outcome())
	d.stop()
	if err := waitPortsFree(sharedDatadirPorts); err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	e := mustStart("e")
	list(e, "e after d deleted all")
	e.stop()
	return out
}

// outcome is the status of an answer, or the error when none came.
func (ex exchange) outcome() string {
	if ex.Err != "" {
		return "no answer: " + ex.Err
	}
	return fmt.Sprint(ex.Status)
}

// TestDatadirKeepsResponseCycles restarts a server on its --datadir between the responses of a
// cycling stub (Mountebank's mbTest cli datadirTest, "should load previously saved imposters
// until they are deleted"), on Mountebank and on mockd: the cycle goes on after a restart, and
// an imposter deleted stays deleted.
func TestDatadirKeepsResponseCycles(t *testing.T) {
	engines := comparedEngines(t)
	port := sharedDatadirPorts[0]
	transcripts := map[string][]string{}
	for _, engine := range engines {
		if err := waitPortsFree(sharedDatadirPorts); err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		dir := filepath.Join(t.TempDir(), "db")
		var out []string
		note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
		startOne := func() *server { return mustStartOnDatadir(t, engine, dir) }
		get := func() {
			ex := roundTrip(fmt.Sprintf("127.0.0.1:%d", port), rawRequest{Method: "GET", Target: "/"})
			note("GET: %s %s", ex.outcome(), ex.Body)
		}
		restart := func(s *server) *server {
			s.stop()
			if err := waitPortsFree(sharedDatadirPorts); err != nil {
				t.Fatalf("%s: %v", engine, err)
			}
			note("restarted")
			return startOne()
		}
		s := startOne()
		ex := roundTrip(s.addr(), rawRequest{Method: "POST", Target: "/imposters",
			Headers: []header{{"Content-Type", "application/json"}},
			Body:    []byte(fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"first"}},{"is":{"body":"second"},"repeat":2},{"is":{"body":"third"}}]}]}`, port))})
		note("POST /imposters: %s", ex.outcome())
		get()
		s = restart(s)
		get()
		s = restart(s)
		get()
		get()
		get()
		s = restart(s)
		get()
		ex = roundTrip(s.addr(), rawRequest{Method: "DELETE", Target: "/imposters"})
		note("DELETE /imposters: %s", ex.outcome())
		s = restart(s)
		get()
		s.stop()
		transcripts[engine] = out
		t.Logf("%s:\n  %s", engine, strings.Join(out, "\n  "))
	}
	compareTranscripts(t, "step", transcripts)
}

// TestDatadirFromMountebank has Mountebank write a --datadir (its directory an imposter), then
// starts each engine on it: mockd must start the same imposters as Mountebank does, with each
// stub's response cycle where Mountebank left it (a user moving from mb to mockd keeps what
// mb saved; mockd read only its own imposters.json and started empty).
func TestDatadirFromMountebank(t *testing.T) {
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if suite.setup != nil {
		t.Fatal(suite.setup)
	}
	if suite.mbOnly {
		t.Skip("compares mockd with Mountebank")
	}
	port := sharedDatadirPorts[0]
	transcripts := map[string]string{}
	for _, engine := range []string{"mb", "mockd"} {
		if err := waitPortsFree(sharedDatadirPorts); err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		dir := filepath.Join(t.TempDir(), "db")
		startOn := func(engine string) *server { return mustStartOnDatadir(t, engine, dir) }
		writer := startOn("mb")
		ex := roundTrip(writer.addr(), rawRequest{Method: "POST", Target: "/imposters",
			Headers: []header{{"Content-Type", "application/json"}},
			Body: []byte(fmt.Sprintf(`{"protocol":"http","port":%d,"name":"from mb","stubs":[`+
				`{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"first"}},{"is":{"body":"second"},"repeat":2},{"is":{"statusCode":201,"headers":{"X-A":"b"},"body":{"json":true}}}]},`+
				`{"responses":[{"is":{"statusCode":404}}]}]}`, port))})
		if ex.Status != 201 {
			t.Fatalf("mb: POST /imposters: %s %s", ex.outcome(), ex.Body)
		}
		roundTrip(fmt.Sprintf("127.0.0.1:%d", port), rawRequest{Method: "GET", Target: "/a"})
		writer.stop()
		if err := waitPortsFree(sharedDatadirPorts); err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		s := startOn(engine)
		var out []string
		for _, path := range []string{"/a", "/a", "/a", "/a", "/b"} {
			ex := roundTrip(fmt.Sprintf("127.0.0.1:%d", port), rawRequest{Method: "GET", Target: path})
			out = append(out, fmt.Sprintf("GET %s: %s %s", path, ex.outcome(), ex.Body))
		}
		ex = roundTrip(s.addr(), rawRequest{Method: "GET", Target: fmt.Sprintf("/imposters/%d?replayable=true", port)})
		out = append(out, fmt.Sprintf("GET /imposters/%d?replayable=true: %s %s", port, ex.outcome(), show(mustParseJSON(ex.Body))))
		s.stop()
		transcripts[engine] = strings.Join(out, "\n")
		t.Logf("%s:\n%s", engine, transcripts[engine])
	}
	if transcripts["mb"] != transcripts["mockd"] {
		t.Errorf("on Mountebank's --datadir, mockd and mb differ:\nmb:\n%s\nmockd:\n%s", transcripts["mb"], transcripts["mockd"])
	}
}

// comparedEngines returns the engines a transcript test plays, mb then mockd (mb alone when the
// suite runs Mountebank only), after skipping or failing t as the suite's setup says.
func comparedEngines(t *testing.T) []string {
	t.Helper()
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if suite.setup != nil {
		t.Fatal(suite.setup)
	}
	if suite.mbOnly {
		return []string{"mb"}
	}
	return []string{"mb", "mockd"}
}

// compareTranscripts fails t for each of its steps (named what) that mb and mockd saw
// differently; nothing when the suite runs Mountebank only.
func compareTranscripts(t *testing.T, what string, transcripts map[string][]string) {
	t.Helper()
	if suite.mbOnly {
		return
	}
	mb, mockd := transcripts["mb"], transcripts["mockd"]
	for i := range max(len(mb), len(mockd)) {
		var a, b string
		if i < len(mb) {
			a = mb[i]
		}
		if i < len(mockd) {
			b = mockd[i]
		}
		if a != b {
			t.Errorf("%s %d differs:\n  mb:    %s\n  mockd: %s", what, i+1, a, b)
		}
	}
}

// startOnDatadir starts a server of engine with --datadir dir (not one the suite shares).
func startOnDatadir(engine, dir string) (*server, error) {
	suite.servers.mu.Lock()
	defer suite.servers.mu.Unlock()
	return suite.servers.start(engine, []string{"--datadir", dir})
}

// mustStartOnDatadir is startOnDatadir failing t when the server does not start; the server
// is stopped when the test ends.
func mustStartOnDatadir(t *testing.T, engine, dir string) *server {
	t.Helper()
	s, err := startOnDatadir(engine, dir)
	if err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	t.Cleanup(s.stop)
	return s
}
