package compat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/pkg/client"
)

// Imposter ports of TestClient, inside the suite's range and used by no scenario.
const (
	clientPort      = 26890
	clientProxyPort = 26891
)

// TestClient plays one sequence of pkg/client calls against Mountebank and against mockd: every
// call must succeed (or fail) on both as the test expects, and what the calls return must be
// the same on both.
func TestClient(t *testing.T) {
	engines := comparedEngines(t)
	transcripts := map[string][]string{}
	for _, engine := range engines {
		s, err := suite.servers.get(engine, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := waitPortsFree([]int{clientPort, clientProxyPort}); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		transcripts[engine] = playClient(t, s)
		t.Logf("%s:\n  %s", s, strings.Join(transcripts[engine], "\n  "))
	}
	compareTranscripts(t, "client call", transcripts)
}

// playClient runs the calls against one engine and returns what each call gave, as text.
func playClient(t *testing.T, s *server) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New("http://" + s.addr())
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v\n%s", s, what, err, s.tail())
		}
	}
	stubPaths := func(imp *client.Imposter) string {
		var paths []string
		for _, st := range imp.Stubs {
			if len(st.Predicates) == 0 {
				paths = append(paths, "*")
				continue
			}
			p := st.Predicates[0]
			if p.DeepEquals != nil {
				paths = append(paths, fmt.Sprintf("deepEquals %v", p.DeepEquals["path"]))
			} else {
				paths = append(paths, fmt.Sprint(p.Equals["path"]))
			}
		}
		return strings.Join(paths, ",")
	}
	get := func(port int, path string) string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		must("GET "+path, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
	stub := func(path, body string) client.Stub {
		return client.Stub{
			Predicates: []client.Predicate{{Equals: client.Fields{"method": "GET", "path": path}}},
			Responses:  []client.Response{{Is: &client.Is{StatusCode: 200, Headers: map[string]any{"X-Stub": path}, Body: body}}},
		}
	}

	_, err := c.DeleteImposters(ctx, client.ListOptions{})
	must("DeleteImposters", err)
	defer c.DeleteImposters(context.Background(), client.ListOptions{}) //nolint:errcheck // best effort

	imp, err := c.CreateImposter(ctx, client.Imposter{Protocol: "http", Port: clientPort, Name: "client",
		RecordRequests: true, Stubs: []client.Stub{stub("/a", "A")}})
	must("CreateImposter", err)
	note("created %s %d %q record=%v stubs=%s", imp.Protocol, imp.Port, imp.Name, imp.RecordRequests, stubPaths(imp))

	imp, err = c.AddStub(ctx, clientPort, stub("/b", "B"))
	must("AddStub", err)
	note("added: %s", stubPaths(imp))
	imp, err = c.InsertStub(ctx, clientPort, 0, stub("/c", "C"))
	must("InsertStub", err)
	note("inserted: %s", stubPaths(imp))
	imp, err = c.ReplaceStub(ctx, clientPort, 0, stub("/d", "D"))
	must("ReplaceStub", err)
	note("replaced: %s", stubPaths(imp))
	imp, err = c.DeleteStub(ctx, clientPort, 0)
	must("DeleteStub", err)
	note("deleted: %s", stubPaths(imp))
	note("GET /a: %s; GET /b: %s", get(clientPort, "/a"), get(clientPort, "/b?x=1"))

	reqs, err := c.Requests(ctx, clientPort)
	must("Requests", err)
	for _, r := range reqs {
		note("recorded %s %s query=%v body=%q", r.Method, r.Path, r.Query, r.Body)
		if r.Timestamp == "" || r.RequestFrom == "" {
			t.Errorf("%s: recorded request without timestamp or requestFrom: %+v", s, r)
		}
	}
	imp, err = c.DeleteSavedRequests(ctx, clientPort)
	must("DeleteSavedRequests", err)
	reqs, err = c.Requests(ctx, clientPort)
	must("Requests", err)
	note("after DeleteSavedRequests: numberOfRequests=%d requests=%d", imp.NumberOfRequests, len(reqs))

	imp, err = c.ReplaceStubs(ctx, clientPort, []client.Stub{stub("/e", "E")})
	must("ReplaceStubs", err)
	note("replaced all: %s; GET /e: %s", stubPaths(imp), get(clientPort, "/e"))

	proxy, err := c.CreateImposter(ctx, client.Imposter{Protocol: "http", Port: clientProxyPort, Stubs: []client.Stub{{
		Responses: []client.Response{{Proxy: &client.Proxy{To: fmt.Sprintf("http://127.0.0.1:%d", clientPort), Mode: "proxyOnce",
			PredicateGenerators: []client.PredicateGenerator{{Matches: map[string]any{"path": true}}}}}},
	}}})
	must("CreateImposter proxy", err)
	note("through the proxy: %s", get(proxy.Port, "/e"))
	imp, err = c.Imposter(ctx, clientProxyPort, client.ListOptions{})
	must("Imposter", err)
	note("proxy recorded: %d stubs, first %s", len(imp.Stubs), stubPaths(imp))

	saved, err := c.Save(ctx, false)
	must("Save", err)
	note("saved: %s", describeImposters(saved))
	saved, err = c.Save(ctx, true)
	must("Save removeProxies", err)
	note("saved without proxies: %s", describeImposters(saved))
	imp, err = c.DeleteSavedProxyResponses(ctx, clientProxyPort)
	must("DeleteSavedProxyResponses", err)
	note("after DeleteSavedProxyResponses: %d stubs", len(imp.Stubs))

	replayed, err := c.Replay(ctx)
	must("Replay", err)
	note("replayed: %s", describeImposters(replayed))
	list, err := c.Imposters(ctx, client.ListOptions{})
	must("Imposters", err)
	note("listed: %s", describeImposters(list))

	cfg, err := c.Config(ctx)
	must("Config", err)
	note("config: version %s, allowInjection %v, port %v", cfg.Version, cfg.Options["allowInjection"], cfg.Options["port"] == float64(s.port))
	logs, err := c.Logs(ctx, 0, 0)
	must("Logs", err)
	note("logs: %+v", logs)

	_, err = c.Imposter(ctx, 26899, client.ListOptions{})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		t.Errorf("%s: Imposter of a missing port: %v, want a *client.Error", s, err)
	} else {
		note("missing imposter: %d %+v", apiErr.StatusCode, apiErr.Errors)
	}
	_, err = c.CreateImposter(ctx, client.Imposter{Protocol: "http", Stubs: []client.Stub{{Responses: []client.Response{{Inject: "function () {}"}}}}})
	if errors.As(err, &apiErr) {
		note("injection refused: %d %s: %s", apiErr.StatusCode, apiErr.Code(), apiErr.Errors[0].Message)
	} else {
		t.Errorf("%s: inject without --allowInjection: %v, want a *client.Error", s, err)
	}

	gone, err := c.DeleteImposter(ctx, clientProxyPort, client.ListOptions{})
	must("DeleteImposter", err)
	note("deleted imposter: %v", gone != nil && gone.Port == clientProxyPort)
	gone, err = c.DeleteImposter(ctx, clientProxyPort, client.ListOptions{})
	must("DeleteImposter again", err)
	note("deleted again: %v", gone)
	left, err := c.ReplaceImposters(ctx, nil)
	must("ReplaceImposters", err)
	note("replaced with none: %d left", len(left))

	want := []string{
		`created http 26890 "client" record=true stubs=/a`,
		"added: /a,/b",
		"inserted: /c,/a,/b",
		"replaced: /d,/a,/b",
		"deleted: /a,/b",
		"GET /a: 200 A; GET /b: 200 B",
	}
	if !reflect.DeepEqual(out[:len(want)], want) {
		t.Errorf("%s: the first calls gave\n  %s\nwant\n  %s", s, strings.Join(out[:len(want)], "\n  "), strings.Join(want, "\n  "))
	}
	return out
}

func describeImposters(imps []client.Imposter) string {
	var parts []string
	for _, imp := range imps {
		kinds := make([]string, 0, len(imp.Stubs))
		for _, st := range imp.Stubs {
			for _, r := range st.Responses {
				switch {
				case r.Proxy != nil:
					kinds = append(kinds, "proxy")
				case r.Is != nil:
					kinds = append(kinds, fmt.Sprintf("is %v", r.Is.Body))
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%d %s [%s] requests=%d", imp.Port, imp.Protocol, strings.Join(kinds, ", "), len(imp.Requests)))
	}
	return strings.Join(parts, "; ")
}
