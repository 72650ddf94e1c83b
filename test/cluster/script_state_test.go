package cluster

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// counterImposter answers /count with a counter kept in the injection state (config.state,
// Mountebank's imposterState) and /path with a script that does not use the state.
func counterImposter(port int) string {
	return fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/count"}}],"responses":[{"inject":"function (config) { config.state.n = (config.state.n || 0) + 1; return { body: String(config.state.n) }; }"}]},
		{"predicates":[{"equals":{"path":"/path"}}],"responses":[{"inject":"function (config) { return { body: config.request.path }; }"}]}]}`, port)
}

// TestScriptStateIsClusterWide runs an injected counter on three nodes with
// --store-script-state: requests spread over the nodes, one at a time and then 60 at once,
// each advance the one counter, so the counts sum exactly; a script that does not use the state
// takes no lock in Redis.
func TestScriptStateIsClusterWide(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url(), "--allowInjection", "--store-script-state")
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", counterImposter(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/path", "/path") })

	for i := 1; i <= 9; i++ {
		if got := mustDo(t, 200, "GET", nodes[i%3].url(port)+"/count", ""); got != strconv.Itoa(i) {
			t.Fatalf("request %d (to %s): counter %s, want %d", i, nodes[i%3].host, got, i)
		}
	}
	const n = 60
	seen := make([]bool, 9+n+1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(nodes[i%3].url(port) + "/count")
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			v, err := strconv.Atoi(string(b))
			mu.Lock()
			defer mu.Unlock()
			if err != nil || v < 10 || v > 9+n || seen[v] {
				t.Errorf("concurrent request got %q (a value twice, or out of 10..%d)", b, 9+n)
				return
			}
			seen[v] = true
		}()
	}
	wg.Wait()
	logsOnFailure(t, nodes)
	if got := mustDo(t, 200, "GET", nodes[2].url(port)+"/count", ""); got != strconv.Itoa(9+n+1) {
		t.Errorf("after %d requests over three nodes the counter gives %s, want %d", 9+n, got, 9+n+1)
	}

	before := storeCalls(t, r)
	for i := 0; i < 9; i++ {
		mustDo(t, 200, "GET", nodes[i%3].url(port)+"/path", "")
	}
	after := storeCalls(t, r)
	if after["evalsha"] != before["evalsha"] || after["eval"] != before["eval"] {
		t.Errorf("9 requests for a script that does not use the state ran %d Lua scripts in Redis",
			after["evalsha"]-before["evalsha"]+after["eval"]-before["eval"])
	}
}

// TestScriptStateStaysPerNodeWithoutTheFlag runs the counter without --store-script-state:
// each node counts on its own, and the scripts ask Redis nothing.
func TestScriptStateStaysPerNodeWithoutTheFlag(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url(), "--allowInjection")
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", counterImposter(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/path", "/path") })
	before := storeCalls(t, r)
	for round := 1; round <= 2; round++ {
		for _, nd := range nodes {
			if got := mustDo(t, 200, "GET", nd.url(port)+"/count", ""); got != strconv.Itoa(round) {
				t.Errorf("%s, round %d: counter %s, want %d (each node its own)", nd.host, round, got, round)
			}
		}
	}
	after := storeCalls(t, r)
	for _, c := range []string{"evalsha", "eval"} { // (GET and SET: the nodes' polls and heartbeats)
		if after[c] != before[c] {
			t.Errorf("6 requests for a stateful script without --store-script-state made Redis run %s %d times", c, after[c]-before[c])
		}
	}
}

// TestScriptStateWithoutTheStore stops Redis: each node goes on counting from its own copy.
func TestScriptStateWithoutTheStore(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url(), "--allowInjection", "--store-script-state")
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", counterImposter(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/path", "/path") })
	for i := 1; i <= 3; i++ {
		mustDo(t, 200, "GET", nodes[i-1].url(port)+"/count", "") // node i's copy is i
	}
	r.stop()
	for i, nd := range nodes {
		if got := mustDo(t, 200, "GET", nd.url(port)+"/count", ""); got != strconv.Itoa(i+2) {
			t.Errorf("%s without the store: counter %s, want %d (its copy, %d, plus one)", nd.host, got, i+2, i+1)
		}
	}
}

// logsOnFailure logs what each node printed when the test has failed.
func logsOnFailure(t *testing.T, nodes []*node) {
	t.Helper()
	if t.Failed() {
		for _, nd := range nodes {
			t.Logf("%s printed:\n%s", nd.host, nd.Output())
		}
	}
}

// TestScriptStateSurvivesAStalledStore stalls Redis (SIGSTOP) for 1.5 s, longer than a store
// command may take (1 s: each node takes the store for lost), while requests for the injected
// counter come to the three nodes: the calls wait for the store instead of counting on their
// nodes' copies, so every request still gets its own value and the counter sums exactly.
// (TestScriptStateIsClusterWide failed so on a loaded machine: 12 of 60 values twice.)
func TestScriptStateSurvivesAStalledStore(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url(), "--allowInjection", "--store-script-state")
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", counterImposter(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/path", "/path") })
	const n = 60
	values := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 20 * time.Millisecond) // over 1.2 s: before, in and after the stall
			status, body := get(nodes[i%3].url(port) + "/count")
			if status != 200 {
				t.Errorf("request %d: %d %s", i, status, body)
			}
			values[i] = body
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := r.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	seen := map[string]int{}
	for i, v := range values {
		if seen[v]++; seen[v] == 2 {
			t.Errorf("request %d got %q, as another did before it", i, v)
		}
	}
	if got := mustDo(t, 200, "GET", nodes[2].url(port)+"/count", ""); got != strconv.Itoa(n+1) {
		t.Errorf("after %d requests the counter gives %s, want %d", n, got, n+1)
	}
	lost := false
	for _, nd := range nodes {
		lost = lost || strings.Contains(nd.Output(), "lost the store")
	}
	if !lost {
		t.Error("no node took the store for lost: the stall was too short to test anything")
	}
	logsOnFailure(t, nodes)
}
