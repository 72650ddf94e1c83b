package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// served returns "" when every node answers GET port+path with body, else what one answered.
func served(nodes []*node, port int, path, body string) string {
	for _, n := range nodes {
		if status, got := get(n.url(port) + path); status != 200 || got != body {
			return fmt.Sprintf("%s answered %d %q, want %q", n.host, status, got, body)
		}
	}
	return ""
}

// replayable returns each node's GET /imposters?replayable=true.
func replayable(nodes []*node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		_, out[i] = get(n.admin + "/imposters?replayable=true")
	}
	return out
}

// agree returns "" when every node shows the same imposters, else the differences.
func agree(nodes []*node) string {
	all := replayable(nodes)
	for i := 1; i < len(all); i++ {
		if all[i] != all[0] {
			return fmt.Sprintf("%s shows\n%s\n%s shows\n%s", nodes[0].host, all[0], nodes[i].host, all[i])
		}
	}
	return ""
}

func stubBody(body string) string { return fmt.Sprintf(`{"responses":[{"is":{"body":%q}}]}`, body) }

// TestChangesReachEveryNode makes each kind of change through one node and waits until the
// others apply it, reporting how long that took (the issue asks for 1 s; the wait here is
// generous because the machine may be loaded, and the times are logged).
func TestChangesReachEveryNode(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	var times []string
	step := func(what string, via *node, method, path, body string, check func() string) {
		t.Helper()
		want := 200
		if method == "POST" && path == "/imposters" {
			want = 201
		}
		start := time.Now()
		mustDo(t, want, method, via.admin+path, body)
		acked := time.Since(start)
		applied := eventually(t, what, check)
		times = append(times, fmt.Sprintf("%s: answered in %s, on every node %s later", what, acked.Round(time.Microsecond), applied.Round(time.Microsecond)))
	}
	step("create", nodes[0], "POST", "/imposters",
		fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("one")),
		func() string { return served(nodes, port, "/", "one") })
	step("add a stub", nodes[1], "POST", fmt.Sprintf("/imposters/%d/stubs", port),
		`{"index":0,"stub":{"predicates":[{"equals":{"path":"/two"}}],"responses":[{"is":{"body":"two"}}]}}`,
		func() string { return served(nodes, port, "/two", "two") })
	step("replace a stub", nodes[2], "PUT", fmt.Sprintf("/imposters/%d/stubs/1", port), stubBody("uno"),
		func() string { return served(nodes, port, "/", "uno") })
	step("delete a stub", nodes[0], "DELETE", fmt.Sprintf("/imposters/%d/stubs/0", port), "",
		func() string { return served(nodes, port, "/two", "uno") })
	step("replace every stub", nodes[1], "PUT", fmt.Sprintf("/imposters/%d/stubs", port), `{"stubs":[`+stubBody("eins")+`]}`,
		func() string { return served(nodes, port, "/", "eins") })
	other := freePort(t)
	step("replace every imposter", nodes[2], "PUT", "/imposters",
		fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d,"stubs":[%s]}]}`, other, stubBody("other")),
		func() string {
			if msg := served(nodes, other, "/", "other"); msg != "" {
				return msg
			}
			for _, n := range nodes {
				if status, _ := get(n.url(port) + "/"); status != 0 {
					return fmt.Sprintf("%s still serves port %d", n.host, port)
				}
			}
			return ""
		})
	step("delete an imposter", nodes[0], "DELETE", fmt.Sprintf("/imposters/%d", other), "",
		func() string {
			for _, n := range nodes {
				if status, _ := get(n.admin + fmt.Sprintf("/imposters/%d", other)); status != 404 {
					return fmt.Sprintf("%s still has imposter %d", n.host, other)
				}
			}
			return ""
		})
	t.Log("propagation times (loaded machine):\n  " + strings.Join(times, "\n  "))
	if msg := agree(nodes); msg != "" {
		t.Error(msg)
	}
}

// TestSequentialWritesThroughDifferentNodes sends each change to another node right after the
// previous one was answered, as a client behind a load balancer does: each applies to the state
// the previous left, and every node ends with the last.
func TestSequentialWritesThroughDifferentNodes(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[]}`, port))
	var want []string
	for i := 0; i < 12; i++ {
		body := "s" + strconv.Itoa(i)
		mustDo(t, 200, "POST", nodes[i%3].admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"stub":`+stubBody(body)+`}`)
		want = append(want, body)
	}
	eventually(t, "every node has the 12 stubs", func() string {
		for _, n := range nodes {
			_, body := get(n.admin + fmt.Sprintf("/imposters/%d?replayable=true", port))
			for _, w := range want {
				if !strings.Contains(body, `"`+w+`"`) {
					return fmt.Sprintf("%s lacks stub %s:\n%s", n.host, w, body)
				}
			}
		}
		return agree(nodes)
	})
}

// TestConcurrentWritesConverge has two nodes replace the same imposter's stubs at once, many
// times: whatever the order, every node ends with the same stubs, those of one of the writes.
func TestConcurrentWritesConverge(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[]}`, port))
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				body := fmt.Sprintf(`{"stubs":[%s]}`, stubBody(fmt.Sprintf("w%d-%d", w, i)))
				status, _, b, err := mockdproc.Do("PUT", nodes[w].admin+fmt.Sprintf("/imposters/%d/stubs", port), body)
				if err != nil || status != 200 {
					t.Errorf("writer %d: %d %v %s", w, status, err, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	eventually(t, "the nodes agree", func() string { return agree(nodes) })
	final := replayable(nodes)[0]
	if !strings.Contains(final, `"w0-19"`) && !strings.Contains(final, `"w1-19"`) {
		t.Errorf("the imposter ends with neither writer's last stubs:\n%s", final)
	}
}

// TestStoreLostAndBack stops Redis under a running cluster: the imposters keep serving, admin
// changes answer 503 with Mountebank's error shape, and once Redis is back the nodes take
// changes again and every node applies them.
func TestStoreLostAndBack(t *testing.T) {
	r := startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("before")))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/", "before") })

	r.stop()
	if msg := served(nodes, port, "/", "before"); msg != "" {
		t.Fatalf("with Redis stopped: %s", msg)
	}
	for _, n := range nodes {
		status, body := do(t, "POST", n.admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"stub":`+stubBody("lost")+`}`)
		if status != 503 || !strings.Contains(body, `"code": "store unavailable"`) {
			t.Errorf("%s: a change with Redis stopped answered %d\n%s", n.host, status, body)
		}
	}
	_, body := do(t, "GET", nodes[1].admin+"/cluster", "")
	if v := jsonOf(t, body)["available"]; v != false {
		t.Errorf("GET /cluster with Redis stopped: available = %v\n%s", v, body)
	}
	if msg := served(nodes, port, "/", "before"); msg != "" {
		t.Fatalf("after refused changes: %s", msg)
	}

	r.start()
	var applied time.Duration
	eventually(t, "a change is taken again", func() string {
		status, body := get(nodes[2].admin + "/cluster")
		if status != 200 || !strings.Contains(body, `"available": true`) {
			return "not available yet: " + body
		}
		status, body = do(t, "PUT", nodes[2].admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"stubs":[`+stubBody("after")+`]}`)
		if status != 200 {
			return fmt.Sprintf("PUT stubs: %d %s", status, body)
		}
		applied = eventually(t, "the change after Redis came back", func() string { return served(nodes, port, "/", "after") })
		return ""
	})
	t.Logf("after Redis came back, a change reached every node in %s (loaded machine)", applied.Round(time.Microsecond))
	for _, n := range nodes {
		if !strings.Contains(n.Output(), "lost the store") {
			t.Errorf("%s did not warn that it lost the store:\n%s", n.host, n.Output())
		}
		// One warning, not the Redis client's own lines at every try (it logged "redis: …
		// connection pool: failed to dial after 5 attempts" several times a second).
		if strings.Contains(n.Output(), "connection pool") {
			t.Errorf("%s logged the Redis client's retries:\n%s", n.host, n.Output())
		}
	}
}

// TestStoreLosesItsData restarts Redis without persistence: the first node to see the empty
// store gives it back the imposters the nodes run, so nothing acknowledged is lost.
func TestStoreLosesItsData(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("kept")))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/", "kept") })
	r.stop()
	r.start()
	eventually(t, "the store has the imposter again", func() string {
		if reply, err := r.call("HEXISTS", "mockd:defs", strconv.Itoa(port)); err != nil || reply != "1" {
			return fmt.Sprintf("HEXISTS: %q %v", reply, err)
		}
		return ""
	})
	// A node that saw the store lost refuses changes until it has seen it back.
	eventually(t, "the node sees the store back", func() string {
		if status, body := get(nodes[1].admin + "/cluster"); status != 200 || !strings.Contains(body, `"available": true`) {
			return "not available yet: " + body
		}
		return ""
	})
	mustDo(t, 200, "POST", nodes[1].admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"index":0,"stub":{"predicates":[{"equals":{"path":"/new"}}],"responses":[{"is":{"body":"new"}}]}}`)
	eventually(t, "every node runs both stubs", func() string {
		if msg := served(nodes, port, "/new", "new"); msg != "" {
			return msg
		}
		return served(nodes, port, "/", "kept")
	})
}

// TestNodeKilledAndRestarted kills a node with SIGKILL while the others take changes: it comes
// back with everything acknowledged, its own changes and theirs.
func TestNodeKilledAndRestarted(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[1].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("first")))
	nodes[1].kill()
	mustDo(t, 200, "POST", nodes[0].admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"index":0,"stub":{"predicates":[{"equals":{"path":"/second"}}],"responses":[{"is":{"body":"second"}}]}}`)
	nodes[1].start(t)
	eventually(t, "the restarted node runs every acknowledged change", func() string {
		if msg := served(nodes, port, "/second", "second"); msg != "" {
			return msg
		}
		if msg := served(nodes, port, "/", "first"); msg != "" {
			return msg
		}
		return agree(nodes)
	})
}

// TestStoreUnreachableAtStart: a node whose store does not answer exits 1 with a clear message,
// unless --store-wait lets it wait for the store to come up.
func TestStoreUnreachableAtStart(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("CI") == "" {
		t.Skip("redis-server is not installed")
	}
	port := freePort(t)
	url := "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	out, err := exec.Command(mockdBin, "serve", "--host", "127.0.0.1", "--port", "0", "--store", url).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "cannot reach the store "+url) {
		t.Fatalf("without Redis: exit %d, want 1 with \"cannot reach the store\":\n%s", code, out)
	}

	// With --store-wait the node says it waits, and starts once Redis is up.
	cmd := exec.Command(mockdBin, "serve", "--host", "127.0.0.1", "--port", "0", "--store", url, "--store-wait", "60s")
	var output mockdproc.SyncBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() { mockdproc.Interrupt(cmd.Process, exited, 15*time.Second) })
	eventually(t, "the node says it waits", func() string {
		if !strings.Contains(output.String(), "waiting up to 1m0s for the store "+url) {
			return output.String()
		}
		return ""
	})
	r := &redisServer{t: t, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	eventually(t, "the node starts once Redis is up", func() string {
		if !strings.Contains(output.String(), "now taking orders") {
			return output.String()
		}
		return ""
	})
}

// TestStoreInit starts nodes with config files: merge (the default) adds the file's imposters
// on ports the store lacks and keeps the store's on the others; replace makes the file's all the
// store holds; skip leaves the store alone.
func TestStoreInit(t *testing.T) {
	r := startRedis(t)
	dir := t.TempDir()
	p1, p2 := freePort(t), freePort(t)
	file := func(name string, ports ...int) string {
		var b strings.Builder
		b.WriteString("imposters:\n")
		for _, p := range ports {
			fmt.Fprintf(&b, "  - port: %d\n    protocol: http\n    stubs:\n      - responses: [{is: {body: %s}}]\n", p, name)
		}
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	admin := freePort(t)
	n1 := startNode(t, "127.0.0.1", admin, r.url(), "-c", file("a", p1))
	n2 := startNode(t, "127.0.0.2", admin, r.url(), "-c", file("b", p1, p2))
	nodes := []*node{n1, n2}
	eventually(t, "merge", func() string {
		if msg := served(nodes, p1, "/", "a"); msg != "" {
			return msg
		}
		return served(nodes, p2, "/", "b")
	})
	n3 := startNode(t, "127.0.0.3", admin, r.url(), "-c", file("c", p2), "--store-init", "replace")
	nodes = append(nodes, n3)
	eventually(t, "replace", func() string {
		for _, n := range nodes {
			if status, _ := get(n.url(p1) + "/"); status != 0 {
				return fmt.Sprintf("%s still serves %d", n.host, p1)
			}
		}
		return served(nodes, p2, "/", "c")
	})
	n1.Stop()
	n1 = startNode(t, "127.0.0.1", admin, r.url(), "-c", file("d", p2), "--store-init", "skip")
	nodes[0] = n1
	eventually(t, "skip", func() string { return served(nodes, p2, "/", "c") })
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
