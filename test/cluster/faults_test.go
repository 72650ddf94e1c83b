package cluster

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// unreadableOn returns "" when GET /cluster through n lists, for every node, port as
// unreadable with a reason containing want (or, with want "", lists it on no node).
func unreadableOn(n *node, nodes int, port int, want string) string {
	status, body := get(n.admin + "/cluster")
	if status != 200 {
		return fmt.Sprintf("GET /cluster: %d %s", status, body)
	}
	var v struct {
		Nodes []struct {
			Name       string            `json:"name"`
			Unreadable map[string]string `json:"unreadable"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return err.Error()
	}
	if len(v.Nodes) != nodes {
		return fmt.Sprintf("%d nodes listed, want %d:\n%s", len(v.Nodes), nodes, body)
	}
	for _, nd := range v.Nodes {
		why, listed := nd.Unreadable[strconv.Itoa(port)]
		if want == "" && listed || want != "" && !strings.Contains(why, want) {
			return fmt.Sprintf("%s lists %d as unreadable: %q, want %q:\n%s", nd.Name, port, why, want, body)
		}
	}
	return ""
}

// TestUnreadableEntryBlocksNobody writes entries into the store by hand (redis-cli HSET) that
// are not imposters a node stored: garbage, a record whose imposter is invalid, one whose
// imposter names another port. Every node keeps running what it ran on those ports, lists
// them as unreadable in GET /cluster and logs them once; every other change goes on; a node
// restarted meanwhile starts; and a DELETE through a node that runs nothing there clears the
// entry on every node. Before, one such entry made every node refuse every change with 503
// "store unavailable", the DELETE of that imposter included, and a restarted node exit.
func TestUnreadableEntryBlocksNobody(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	garbage, invalid, moved, other := freePort(t), freePort(t), freePort(t), freePort(t)
	for _, p := range []int{garbage, invalid, moved} {
		mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, p, stubBody("before")))
	}
	entries := map[int]string{
		garbage: "garbage",
		invalid: fmt.Sprintf(`{"id":"hand","stubIds":["s"],"imposter":{"protocol":"http","port":%d,"stubs":[{"responses":[{"nope":{}}]}]}}`, invalid),
		moved:   fmt.Sprintf(`{"id":"hand","stubIds":[],"imposter":{"protocol":"http","port":%d}}`, other),
	}
	for p, value := range entries {
		if _, err := r.call("HSET", "mockd:defs", strconv.Itoa(p), value); err != nil {
			t.Fatal(err)
		}
		// A version no node applied, as a change stores, so that every node reads the entry.
		if _, err := r.call("HSET", "mockd:versions", strconv.Itoa(p), "1000"); err != nil {
			t.Fatal(err)
		}
	}
	// The next change makes every node read the entries; it is taken.
	mustDo(t, 201, "POST", nodes[1].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, other, stubBody("other")))
	eventually(t, "the other imposter runs everywhere", func() string { return served(nodes, other, "/", "other") })
	for p, want := range map[int]string{
		garbage: "invalid character 'g' looking for beginning of value",
		invalid: "unrecognized response type",
		moved:   fmt.Sprintf("its definition says port %d", other),
	} {
		eventually(t, fmt.Sprintf("every node lists %d as unreadable", p), func() string { return unreadableOn(nodes[2], 3, p, want) })
		if msg := served(nodes, p, "/", "before"); msg != "" {
			t.Errorf("imposter %d with an unreadable entry: %s", p, msg)
		}
	}
	for _, n := range nodes {
		if got := strings.Count(n.Output(), fmt.Sprintf("cannot read imposter %d from the store", garbage)); got != 1 {
			t.Errorf("%s logged the garbage entry %d times, want once:\n%s", n.host, got, n.Output())
		}
	}

	// A node restarted now starts, without the imposters it cannot read.
	nodes[2].kill()
	nodes[2].start(t)
	eventually(t, "the restarted node runs the other imposter", func() string { return served(nodes[2:], other, "/", "other") })
	if status, _ := get(nodes[2].url(garbage) + "/"); status != 0 {
		t.Errorf("the restarted node answers on %d (%d), whose entry it cannot read", garbage, status)
	}

	// DELETE through the node that runs nothing there clears the entries on every node; a
	// DELETE through a node that runs the imposter, and a POST over an entry, are taken too.
	mustDo(t, 200, "DELETE", nodes[2].admin+"/imposters/"+strconv.Itoa(garbage), "")
	mustDo(t, 200, "DELETE", nodes[0].admin+"/imposters/"+strconv.Itoa(invalid), "")
	mustDo(t, 200, "DELETE", nodes[1].admin+"/imposters/"+strconv.Itoa(moved), "")
	mustDo(t, 201, "POST", nodes[2].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, moved, stubBody("again")))
	eventually(t, "the entries are gone", func() string {
		for _, p := range []int{garbage, invalid} {
			if reply, err := r.call("HEXISTS", "mockd:defs", strconv.Itoa(p)); err != nil || reply != "0" {
				return fmt.Sprintf("HEXISTS mockd:defs %d: %q %v", p, reply, err)
			}
			for _, n := range nodes {
				if status, _ := get(n.url(p) + "/"); status != 0 {
					return fmt.Sprintf("%s still answers on %d", n.host, p)
				}
			}
		}
		for _, p := range []int{garbage, invalid, moved} {
			if msg := unreadableOn(nodes[0], 3, p, ""); msg != "" {
				return msg
			}
		}
		return served(nodes, moved, "/", "again")
	})
}
