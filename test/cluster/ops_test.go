package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// storeCalls returns how many times Redis ran each command, from INFO commandstats.
func storeCalls(t *testing.T, r *redisServer) map[string]int {
	t.Helper()
	info, err := r.call("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`cmdstat_([a-z|]+):calls=(\d+)`).FindAllStringSubmatch(info, -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

// TestPlainStubsTouchNoStore sends requests for a stub with one response to an imposter that
// does not record: Redis runs no command for them (the nodes' background work aside, which
// does not grow with requests), while a stub with three responses asks Redis once per request.
func TestPlainStubsTouchNoStore(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/cycle"}}],"responses":[{"is":{"body":"a"}},{"is":{"body":"b"}},{"is":{"body":"c"}}]},
		{"responses":[{"is":{"body":"plain"}}]}]}`, port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/", "plain") })
	// Commands a request for a cycling stub or a recording imposter would run.
	requestPath := []string{"hincrby", "xadd", "evalsha", "eval"}
	before := storeCalls(t, r)
	const plain = 300
	for i := 0; i < plain; i++ {
		mustDo(t, 200, "GET", nodes[i%3].url(port)+"/plain", "")
	}
	after := storeCalls(t, r)
	for _, c := range requestPath {
		if after[c] != before[c] {
			t.Errorf("%d plain requests made Redis run %s %d times", plain, c, after[c]-before[c])
		}
	}
	// Background work only: a poll of the version, a heartbeat and a write of the counts a few
	// times a second per node, far below one command per request.
	total := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	t.Logf("Redis ran %d commands during %d plain requests (background work of 3 nodes)", total(after)-total(before), plain)
	for i := 0; i < 9; i++ {
		mustDo(t, 200, "GET", nodes[i%3].url(port)+"/cycle", "")
	}
	if got := storeCalls(t, r)["hincrby"] - after["hincrby"]; got != 9 {
		t.Errorf("9 requests for a cycling stub, one at a time, made %d HINCRBY, want 9", got)
	}
}

// TestMissedChangesAreSynced changes an imposter in Redis the way a node does but without
// publishing the change, as if every node missed the message: the nodes still apply it, from
// the version they read.
func TestMissedChangesAreSynced(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("published")))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/", "published") })
	// The store's saveScript without its PUBLISH.
	const unpublished = `
local rec = redis.call('HGET', KEYS[2], ARGV[1])
rec = string.gsub(rec, 'published', 'unpublished')
local v = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], rec)
redis.call('HSET', KEYS[3], ARGV[1], v)
return v`
	if _, err := r.call("EVAL", unpublished, "3", "mockd:version", "mockd:defs", "mockd:versions", strconv.Itoa(port)); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, "the unpublished change", func() string { return served(nodes, port, "/", "unpublished") })
	t.Logf("every node applied a change it got no message for in %s (loaded machine)", took.Round(time.Millisecond))
}

// clusterView is GET /cluster.
type clusterView struct {
	Store     string `json:"store"`
	Available bool   `json:"available"`
	Node      string `json:"node"`
	Version   int    `json:"version"`
	Nodes     []struct {
		Name      string            `json:"name"`
		Address   string            `json:"address"`
		Version   int               `json:"version"`
		LastSync  string            `json:"lastSync"`
		Self      bool              `json:"self"`
		Unstarted map[string]string `json:"unstarted"`
	} `json:"nodes"`
}

// TestClusterListsLiveNodes reads GET /cluster on every node: the three nodes, each once, with
// the version it runs and when it last synced; a node killed drops off the list. GET /metrics
// times the store's operations.
func TestClusterListsLiveNodes(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[2].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[]}`, port))
	adminPort := nodes[0].admin[strings.LastIndex(nodes[0].admin, ":"):]
	names := func(v clusterView) string {
		var out []string
		for _, n := range v.Nodes {
			out = append(out, n.Name)
		}
		return strings.Join(out, " ")
	}
	read := func(n *node) (clusterView, string) {
		var v clusterView
		_, body := get(n.admin + "/cluster")
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return v, body
		}
		return v, ""
	}
	eventually(t, "every node lists the three", func() string {
		for _, n := range nodes {
			v, bad := read(n)
			if bad != "" {
				return bad
			}
			if got := names(v); got != "node-127.0.0.1 node-127.0.0.2 node-127.0.0.3" {
				return fmt.Sprintf("%s lists %q", n.host, got)
			}
			if !v.Available || v.Node != "node-"+n.host || !strings.Contains(v.Store, r.url()[:len("redis://127.0.0.1")]) {
				return fmt.Sprintf("%s: %+v", n.host, v)
			}
			for _, e := range v.Nodes {
				if e.Self != (e.Name == v.Node) || e.Version != v.Version || e.LastSync == "" ||
					e.Address != strings.TrimPrefix(e.Name, "node-")+adminPort {
					return fmt.Sprintf("%s: entry %+v (runs version %d)", n.host, e, v.Version)
				}
			}
		}
		return ""
	})
	nodes[1].kill()
	eventually(t, "the killed node is off the list", func() string {
		v, bad := read(nodes[0])
		if bad != "" {
			return bad
		}
		if got := names(v); got != "node-127.0.0.1 node-127.0.0.3" {
			return "lists " + got
		}
		return ""
	})
	_, metrics := get(nodes[2].admin + "/metrics")
	for _, want := range []string{`mockd_store_operation_duration_seconds_count{op="save"}`, `mockd_store_operation_duration_seconds_count{op="sync"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("GET /metrics has no %s", want)
		}
	}
}

// TestImposterOnATakenPortIsRetried creates an imposter through one node while its port is
// taken on another: that node logs that it cannot start it and tries again, every node's
// GET /cluster lists it as unstarted on that node, and once the port is free the node starts
// it and serves it (it had been left out for good, with one log line).
func TestImposterOnATakenPortIsRetried(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	taken, err := net.Listen("tcp", "127.0.0.2:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"up"}}]}]}`, port))
	unstarted := func(n *node) map[string]string {
		var v clusterView
		_, body := get(n.admin + "/cluster")
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return nil
		}
		for _, e := range v.Nodes {
			if e.Name == "node-127.0.0.2" {
				return e.Unstarted
			}
		}
		return nil
	}
	eventually(t, "every node lists the imposter as unstarted on 127.0.0.2", func() string {
		for _, n := range nodes {
			if u := unstarted(n); !strings.Contains(u[strconv.Itoa(port)], "already in use") {
				return fmt.Sprintf("%s lists %v", n.host, u)
			}
		}
		return ""
	})
	// The node's log reaches the test through a pipe, and /cluster may show the entry (its
	// heartbeat) before the line is read: wait for the line, then check that it is the only one.
	eventually(t, "127.0.0.2 logs that it tries again", func() string {
		if log := nodes[1].Output(); !strings.Contains(log, "tries again") {
			return log
		}
		return ""
	})
	if log := nodes[1].Output(); strings.Count(log, "cannot start imposter "+strconv.Itoa(port)) != 1 {
		t.Errorf("127.0.0.2 logged, want one line saying that it tries again:\n%s", log)
	}
	taken.Close()
	eventually(t, "served everywhere once the port is free", func() string { return served(nodes, port, "/", "up") })
	eventually(t, "no longer listed as unstarted", func() string {
		for _, n := range nodes {
			if u := unstarted(n); len(u) > 0 {
				return fmt.Sprintf("%s lists %v", n.host, u)
			}
		}
		return ""
	})
	eventually(t, "127.0.0.2 logs that it started the imposter", func() string {
		if log := nodes[1].Output(); !strings.Contains(log, fmt.Sprintf("started imposter %d from the store", port)) {
			return log
		}
		return ""
	})
}
