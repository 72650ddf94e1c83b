package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The Java peers: what a team picks instead of Mountebank. Both come from Maven Central.
const (
	wiremockArtifact   = "org.wiremock:wiremock-standalone:3.13.2"
	wiremockJar        = "wiremock-standalone-3.13.2.jar"
	mockserverArtifact = "org.mock-server:mockserver-netty:7.6.0:jar:jar-with-dependencies"
	mockserverJar      = "mockserver-netty-7.6.0-jar-with-dependencies.jar"
)

// jvmFlags are the JVM options both peers run with: a heap that holds 100,000 stubs and the
// throughput collector. The report states them.
var jvmFlags = []string{"-Xmx2g", "-XX:+UseParallelGC"}

// launch is how one engine process is started for one round.
type launch struct {
	admin  int    // the admin API's port (WireMock and MockServer also serve the stubs on it)
	https  int    // WireMock's https port, for https scenarios
	record bool   // the peers keep their request journal (WireMock) and event log (MockServer)
	config string // start from this config file (Mountebank JSON, WireMock root directory, MockServer expectations)
	stubs  int    // how many stubs a setup scenario loads (0 for the others)
}

// prepareJava finds java and the peer's jar in bench/.peers/java, fetching the jar from Maven
// Central with `mvn dependency:copy` (through the Maven settings of the machine) when missing.
func prepareJava(artifact, jar string) func(h *harness, e *engine) error {
	return func(h *harness, e *engine) error {
		java, err := exec.LookPath("java")
		if err != nil {
			return errors.New("java is not installed (a JDK 17 or later runs both Java peers)")
		}
		dir := filepath.Join(h.peers, "java")
		e.jar = filepath.Join(dir, jar)
		if _, err := os.Stat(e.jar); err != nil {
			if _, err := exec.LookPath("mvn"); err != nil {
				return fmt.Errorf("%s is missing and Maven (mvn) is not installed to fetch %s", e.jar, artifact)
			}
			h.logf("fetching %s from Maven Central into %s", artifact, dir)
			ctx, cancel := context.WithTimeout(h.ctx, 10*time.Minute)
			defer cancel()
			if err := runQuiet(ctx, h.peers, nil, filepath.Join(h.peers, "java-install.log"), "mvn", "-q", "-B",
				"dependency:copy", "-Dartifact="+artifact, "-DoutputDirectory="+dir); err != nil {
				return err
			}
			if _, err := os.Stat(e.jar); err != nil {
				return fmt.Errorf("mvn dependency:copy left no %s", e.jar)
			}
		}
		v := firstLine(output(java, "-version"))
		e.bin = java
		e.version = strings.TrimSuffix(jar, ".jar") + " on " + v + ", JVM flags " + strings.Join(jvmFlags, " ")
		return nil
	}
}

func wiremockArgs(h *harness, e *engine, l launch) []string {
	a := append(append([]string{}, jvmFlags...), "-jar", e.jar, "--port", strconv.Itoa(l.admin), "--bind-address", "127.0.0.1",
		"--disable-banner", "--root-dir", filepath.Join(h.runDir, "wiremock-root"))
	if l.config != "" {
		a[len(a)-1] = l.config
	}
	if l.https > 0 {
		a = append(a, "--https-port", strconv.Itoa(l.https))
	}
	if !l.record {
		a = append(a, "--no-request-journal")
	}
	return a
}

func mockserverArgs(h *harness, e *engine, l launch) []string {
	a := append(append([]string{}, jvmFlags...), "-Dmockserver.logLevel=WARN")
	if !l.record {
		a = append(a, "-Dmockserver.maxLogEntries=0")
	}
	if l.config != "" {
		a = append(a, "-Dmockserver.initializationJsonPath="+l.config)
	}
	if l.stubs > 0 {
		// MockServer keeps at most min(heap KiB / 10, 15,000) expectations by default and drops
		// the oldest beyond that, and refuses a request body over its limit (413): a setup
		// scenario raises both so that all of its stubs are loaded, in one request, and held.
		a = append(a, fmt.Sprintf("-Dmockserver.maxExpectations=%d", 2*l.stubs), "-Dmockserver.maxRequestBodySize=1073741824")
	}
	return append(a, "-jar", e.jar, "-serverPort", strconv.Itoa(l.admin))
}

// adminURL is the URL the harness polls until the engine is up.
func (e *engine) readyURL(admin int) string {
	switch e.api {
	case "wiremock":
		return fmt.Sprintf("http://127.0.0.1:%d/__admin/health", admin)
	case "mockserver":
		return fmt.Sprintf("http://127.0.0.1:%d/mockserver/status", admin) // PUT, but any answer will do
	}
	return fmt.Sprintf("http://127.0.0.1:%d/imposters", admin)
}

// peerLoad is what loading a scenario into an engine gives: where to send the scenario's
// request, and the request and answer when the engine's differ from the scenario's.
type peerLoad struct {
	addr string
	req  request
	want expect
}

// loadPeer loads s into a started WireMock or MockServer on l.admin, translated into the
// peer's own format. An errNA says the peer cannot express s (what notApplicable cannot tell
// before the engine starts).
func (h *harness) loadPeer(e *engine, s *scenario, l launch, client *http.Client) (peerLoad, error) {
	pl := peerLoad{addr: fmt.Sprintf("127.0.0.1:%d", l.admin), req: s.Req, want: s.Want}
	base := "http://" + pl.addr
	if s.Proxy != "" {
		return pl, h.proxyPeer(e, s, base, client)
	}
	if s.Proto == "https" && e.api == "wiremock" {
		pl.addr = fmt.Sprintf("127.0.0.1:%d", l.https)
	}
	// Answers that differ by engine: the admin API's and the no-match answer.
	switch {
	case s.Name == "admin-list" && e.api == "wiremock":
		pl.req = request{Method: "GET", Path: "/__admin/mappings"}
		pl.want = expect{Status: 200, Contains: "resource499"}
	case s.Name == "admin-list":
		pl.req = request{Method: "PUT", Path: "/mockserver/retrieve?type=ACTIVE_EXPECTATIONS"}
		pl.want = expect{Status: 200, Contains: "resource499"}
	case s.Want == noMatch && e.api == "wiremock":
		pl.want = expect{Status: 404, Contains: "Request was not matched"}
	case s.Want == noMatch:
		pl.want = expect{Status: 404}
	}
	docs, err := h.peerDocs(e, s.Stubs())
	if err != nil {
		return pl, err
	}
	if e.api == "wiremock" {
		_, err = peerCall(client, "POST", base+"/__admin/mappings/import", docs, 200)
	} else {
		_, err = peerCall(client, "PUT", base+"/mockserver/expectation", docs, 201)
	}
	return pl, err
}

// peerDocs is stubs in e's format: WireMock's import document, or MockServer's expectation array.
func (h *harness) peerDocs(e *engine, stubs []any) ([]byte, error) {
	if e.api == "wiremock" {
		m, err := wiremockMappings(stubs)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"mappings": m})
	}
	x, err := mockserverExpectations(stubs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// proxyPeer puts a peer in its record mode towards the origin, and for replay records one
// request and turns the recording into stubs, as each peer's users do:
//   - WireMock: POST /__admin/recordings/start proxies every request and journals it
//     (proxyAlways); /__admin/recordings/stop makes stub mappings of what it saw (replay).
//   - MockServer: a forward expectation proxies and logs every request (proxyAlways);
//     its recorded expectations, loaded back after a reset, replay them.
//
// Neither proxies only the first request of a kind (proxyOnce: notApplicable says so).
func (h *harness) proxyPeer(e *engine, s *scenario, base string, client *http.Client) error {
	var err error
	if e.api == "wiremock" {
		_, err = peerCall(client, "POST", base+"/__admin/recordings/start", []byte(fmt.Sprintf(`{"targetBaseUrl":%q,"persist":false}`, h.origin)), 200)
	} else {
		_, err = peerCall(client, "PUT", base+"/mockserver/expectation", []byte(fmt.Sprintf(
			`[{"httpRequest":{},"httpForward":{"host":"127.0.0.1","port":%s,"scheme":"HTTP"}}]`, strings.TrimPrefix(h.origin, "http://127.0.0.1:"))), 201)
	}
	if err != nil || s.Proxy != "replay" {
		return err
	}
	if err := recordOne(strings.TrimPrefix(base, "http://"), s); err != nil {
		return err
	}
	if e.api == "wiremock" {
		_, err = peerCall(client, "POST", base+"/__admin/recordings/stop", nil, 200)
		return err
	}
	rec, err := peerCall(client, "PUT", base+"/mockserver/retrieve?type=RECORDED_EXPECTATIONS&format=JSON", nil, 200)
	if err != nil {
		return err
	}
	if rec, err = replayable(rec); err != nil {
		return err
	}
	if _, err := peerCall(client, "PUT", base+"/mockserver/reset", nil, 200); err != nil {
		return err
	}
	_, err = peerCall(client, "PUT", base+"/mockserver/expectation", rec, 201)
	return err
}

// replayable turns MockServer's recorded expectations into expectations that answer again and
// again what was recorded, as Mountebank's predicateGenerators on method and path do: the
// recording matches the origin's Host header and the client's address, and only once.
func replayable(recorded []byte) ([]byte, error) {
	var list []map[string]any
	if err := json.Unmarshal(recorded, &list); err != nil {
		return nil, fmt.Errorf("recorded expectations: %w", err)
	}
	if len(list) == 0 {
		return nil, errors.New("MockServer recorded no expectation")
	}
	out := make([]any, 0, len(list))
	for _, x := range list {
		req, _ := x["httpRequest"].(map[string]any)
		resp, _ := x["httpResponse"].(map[string]any)
		if h, ok := resp["headers"].(map[string]any); ok {
			for k := range h {
				if strings.EqualFold(k, "Date") || strings.HasPrefix(strings.ToLower(k), "x-mockserver") {
					delete(h, k)
				}
			}
		}
		out = append(out, map[string]any{"httpRequest": map[string]any{"method": req["method"], "path": req["path"]}, "httpResponse": resp})
	}
	return json.Marshal(out)
}

// proxyMB sets up the proxy scenarios on a Mountebank-API engine: a proxy stub to the origin
// in proxyAlways or proxyOnce mode, or for replay what `mb replay` does: record one request
// through proxyOnce, then replace the imposter with its replayable form without proxies.
func (h *harness) proxyMB(s *scenario, admin, port int, client *http.Client) error {
	mode := s.Proxy
	if mode == "replay" {
		mode = "proxyOnce"
	}
	doc := map[string]any{"protocol": "http", "port": port, "host": "127.0.0.1", "name": "bench-" + s.Name, "stubs": proxyStubs(mode, h.origin)}
	body, _ := json.Marshal(doc)
	base := fmt.Sprintf("http://127.0.0.1:%d/imposters", admin)
	if _, err := peerCall(client, "POST", base, body, 201); err != nil {
		return err
	}
	if s.Proxy != "replay" {
		return nil
	}
	if err := recordOne(fmt.Sprintf("127.0.0.1:%d", port), s); err != nil {
		return err
	}
	rec, err := peerCall(client, "GET", fmt.Sprintf("%s/%d?replayable=true&removeProxies=true", base, port), nil, 200)
	if err != nil {
		return err
	}
	if _, err := peerCall(client, "DELETE", fmt.Sprintf("%s/%d", base, port), nil, 200); err != nil {
		return err
	}
	_, err = peerCall(client, "POST", base, rec, 201)
	return err
}

// recordOne sends the scenario's request once through the proxy, byte for byte as the load
// generator will (a recorder may keep every header as a predicate).
func recordOne(addr string, s *scenario) error {
	c, err := checkOnce(addr, "http", s.Req, s.Want)
	if err == nil && !c.OK {
		err = fmt.Errorf("got %d %q", c.Status, truncate(c.Body, 80))
	}
	if err != nil {
		return fmt.Errorf("the request to record: %w", err)
	}
	return nil
}

// peerCall sends one admin request and wants the status code want.
func peerCall(c *http.Client, method, url string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, &statusError{code: resp.StatusCode, msg: fmt.Sprintf("%s %s: %d %s", method, url, resp.StatusCode, truncate(string(b), 200))}
	}
	return b, nil
}

// statusError is an admin answer with an unexpected status.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }
