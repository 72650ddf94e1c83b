package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mockd/mockd/test/internal/mockdproc"
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
		// Its log reaches the test through a pipe: wait for the line, then count.
		eventually(t, n.host+" logs the garbage entry", func() string {
			if !strings.Contains(n.Output(), fmt.Sprintf("cannot read imposter %d from the store", garbage)) {
				return n.Output()
			}
			return ""
		})
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

// cutMode says what an armed faultProxy does at the write it waits for.
type cutMode int

const (
	// cutBefore loses the store before Redis gets the write: every connection is closed, and
	// every new one at once, until restore.
	cutBefore cutMode = iota
	// cutAfter is cutBefore once Redis got the write: its reply is lost.
	cutAfter
	// cutPartial gives Redis the write (the start of a command larger than one read), runs the
	// hook (which kills the node sending it) and closes that connection alone.
	cutPartial
)

// faultProxy forwards TCP connections to a Redis and, when armed, cuts at a chosen command
// (see cutMode).
type faultProxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu     sync.Mutex
	marker []byte // the armed cut: a client's write containing it
	mode   cutMode
	hook   func()
	down   bool
	conns  map[net.Conn]bool
	cutHit chan struct{}
}

// startProxy starts a faultProxy on a free loopback port in front of r.
func startProxy(t *testing.T, r *redisServer) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, ln: ln, target: "127.0.0.1:" + strconv.Itoa(r.port), conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *faultProxy) url() string { return "redis://" + p.ln.Addr().String() + "/0" }

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns[c] = true
		}
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.relay(c)
	}
}

func (p *faultProxy) relay(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[s] = true
	p.mu.Unlock()
	dropReplies := make(chan struct{})
	go func() { // Redis → client, unless the cut drops the replies
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				select {
				case <-dropReplies:
				default:
					_, _ = c.Write(buf[:n])
				}
			}
			if err != nil {
				c.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.marker != nil && bytes.Contains(buf[:n], p.marker)
			mode, hook := p.mode, p.hook
			if cut {
				p.marker, p.down = nil, mode != cutPartial
				close(p.cutHit)
			}
			p.mu.Unlock()
			if cut {
				switch mode {
				case cutAfter:
					close(dropReplies)
					_, _ = s.Write(buf[:n])
					p.cut()
				case cutPartial:
					_, _ = s.Write(buf[:n])
					hook()
					c.Close()
					s.Close()
				default:
					p.cut()
				}
				return
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			s.Close()
			return
		}
	}
}

// cut closes every connection: the store is lost to every node.
func (p *faultProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// arm makes the next client write containing marker cut as mode says (hook is cutPartial's);
// the channel closes when that happened.
func (p *faultProxy) arm(marker string, mode cutMode, hook func()) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.marker, p.mode, p.hook, p.cutHit = []byte(marker), mode, hook, make(chan struct{})
	return p.cutHit
}

// restore lets connections through again.
func (p *faultProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// saveMarker is what a node sends to store a change of some imposters (the save script's
// prefix and mode arguments).
const saveMarker = "$5\r\nmockd\r\n$3\r\nput\r\n"

// TestStoreLostMidChange loses the store while a change is under way on one node, after the
// node checked the store and before (or after) Redis got the change: the client is told the
// change is not stored, that node alone runs it meanwhile, and once the store is back every
// node runs what the store holds: without the change when Redis never got it, with it when
// only Redis's reply was lost.
func TestStoreLostMidChange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after bool
	}{{"before Redis got it", false}, {"after Redis got it", true}} {
		mode := cutBefore
		if tc.after {
			mode = cutAfter
		}
		t.Run(tc.name, func(t *testing.T) {
			r := startRedis(t)
			p := startProxy(t, r)
			nodes := startCluster(t, p.url())
			kept, port := freePort(t), freePort(t)
			mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, kept, stubBody("kept")))
			eventually(t, "created everywhere", func() string { return served(nodes, kept, "/", "kept") })

			hit := p.arm(saveMarker, mode, nil)
			status, body := do(t, "POST", nodes[1].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("new")))
			select {
			case <-hit:
			default:
				t.Fatal("the change was not cut")
			}
			if status != 503 || !strings.Contains(body, `"code": "store unavailable"`) || !strings.Contains(body, "the change is not stored") {
				t.Errorf("a change cut from the store answered %d, want 503 saying it is not stored\n%s", status, body)
			}
			if msg := served(nodes, kept, "/", "kept"); msg != "" {
				t.Errorf("with the store lost: %s", msg)
			}
			if msg := served(nodes[1:2], port, "/", "new"); msg != "" {
				t.Errorf("the node that made the change does not run it meanwhile: %s", msg)
			}
			for _, n := range []*node{nodes[0], nodes[2]} {
				if status, _ := get(n.url(port) + "/"); status != 0 {
					t.Errorf("%s runs a change it never got from the store (%d)", n.host, status)
				}
			}

			p.restore()
			eventually(t, "every node runs what the store holds", func() string {
				if msg := served(nodes, kept, "/", "kept"); msg != "" {
					return msg
				}
				if tc.after {
					return served(nodes, port, "/", "new")
				}
				for _, n := range nodes {
					if status, _ := get(n.url(port) + "/"); status != 0 {
						return fmt.Sprintf("%s still runs the change the store never took (%d)", n.host, status)
					}
				}
				return agree(nodes)
			})
		})
	}
}

// TestNodeKilledMidChange kills a node with SIGKILL while it sends Redis a large change (PUT
// /imposters of one imposter with many stubs, a command larger than one read): Redis got only
// its start, so the store, and every node, keeps the imposters as they were, whole; the node
// restarted runs them too.
func TestNodeKilledMidChange(t *testing.T) {
	r := startRedis(t)
	p := startProxy(t, r)
	nodes := startCluster(t, p.url())
	old, big := freePort(t), freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, old, stubBody("old")))
	eventually(t, "created everywhere", func() string { return served(nodes, old, "/", "old") })

	var stubs []string
	for i := 0; i < 3000; i++ {
		stubs = append(stubs, fmt.Sprintf(`{"predicates":[{"equals":{"path":"/p%d"}}],"responses":[{"is":{"body":"r%d"}}]}`, i, i))
	}
	hit := p.arm(saveMarker, cutPartial, nodes[1].kill)
	_, _, _, err := mockdproc.Do("PUT", nodes[1].admin+"/imposters", fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d,"stubs":[%s]}]}`, big, strings.Join(stubs, ",")))
	select {
	case <-hit:
	default:
		t.Fatalf("the change was not cut (%v)", err)
	}
	if err == nil {
		t.Fatal("the PUT of a node killed under it was answered")
	}
	if reply, err := r.call("HEXISTS", "mockd:defs", strconv.Itoa(big)); err != nil || reply != "0" {
		t.Errorf("the store holds part of the change of the killed node: HEXISTS %d = %q %v", big, reply, err)
	}
	if reply, err := r.call("HEXISTS", "mockd:defs", strconv.Itoa(old)); err != nil || reply != "1" {
		t.Errorf("the store lost the imposter the killed node's change replaced: HEXISTS %d = %q %v", old, reply, err)
	}
	nodes[1].start(t)
	eventually(t, "every node runs the imposters as they were", func() string {
		if msg := served(nodes, old, "/", "old"); msg != "" {
			return msg
		}
		for _, n := range nodes {
			if status, _ := get(n.url(big) + "/p1"); status != 0 {
				return fmt.Sprintf("%s runs the killed node's change (%d)", n.host, status)
			}
		}
		return agree(nodes)
	})
}

// TestMixedConcurrentChangesConverge has three nodes create, change, replace and delete one
// imposter at once, many times: none is refused (only Mountebank's own answers: a POST on the
// port taken, a change of stubs of an imposter deleted meanwhile), and every node ends with what
// the store holds.
func TestMixedConcurrentChangesConverge(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	imp := func(body string) string {
		return fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody(body))
	}
	var wg sync.WaitGroup
	for w, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 24; i++ {
				tag := fmt.Sprintf("w%d-%d", w, i)
				var method, path, body string
				ok := map[int]bool{200: true}
				switch (i + w) % 4 {
				case 0:
					method, path, body = "POST", "/imposters", imp(tag)
					ok = map[int]bool{201: true, 400: true} // 400: the port is taken
				case 1:
					method, path, body = "PUT", fmt.Sprintf("/imposters/%d/stubs", port), `{"stubs":[`+stubBody(tag)+`]}`
					ok[404] = true // deleted meanwhile
				case 2:
					method, path, body = "PUT", "/imposters", `{"imposters":[`+imp(tag)+`]}`
				case 3:
					method, path = "DELETE", fmt.Sprintf("/imposters/%d", port)
				}
				status, _, b, err := mockdproc.Do(method, n.admin+path, body)
				if err != nil || !ok[status] {
					t.Errorf("%s %s through %s: %d %v\n%s", method, path, n.host, status, err, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	eventually(t, "the nodes agree with the store", func() string {
		if msg := agree(nodes); msg != "" {
			return msg
		}
		stored, err := r.call("HEXISTS", "mockd:defs", strconv.Itoa(port))
		if err != nil {
			return err.Error()
		}
		for _, n := range nodes {
			status, _ := get(n.url(port) + "/")
			if running := status != 0; running != (stored == "1") {
				return fmt.Sprintf("%s answers %d on %d; the store has it: %s", n.host, status, port, stored)
			}
		}
		return ""
	})
}

// syncErrors returns the failed syncs n counted (mockd_store_errors_total{op="sync"}).
func syncErrors(n *node) int {
	_, body := get(n.admin + "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, `mockd_store_errors_total{op="sync"} `); ok {
			got, _ := strconv.Atoi(strings.TrimSpace(v))
			return got
		}
	}
	return 0
}

// TestStoreKeyOfAnotherType replaces the store's versions hash with a string, as a hand-made
// SET would, and bumps the store's version so that the nodes sync: each node logs the failure
// once (it logged it at every poll, four times a second), refuses changes with a 503 that names
// the key and does not say the store is down, keeps serving, and takes changes again, saying
// so, once the key is back.
func TestStoreKeyOfAnotherType(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port, other := freePort(t), freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubBody("kept")))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/", "kept") })
	for _, cmd := range [][]string{{"RENAME", "mockd:versions", "saved"}, {"SET", "mockd:versions", "garbage"}, {"INCR", "mockd:version"}} {
		if _, err := r.call(cmd...); err != nil {
			t.Fatal(cmd, err)
		}
	}
	before := make([]int, len(nodes))
	for i, n := range nodes {
		before[i] = syncErrors(n)
	}
	eventually(t, "every node failed several syncs", func() string {
		for i, n := range nodes {
			if got := syncErrors(n); got < before[i]+4 {
				return fmt.Sprintf("%s failed %d syncs", n.host, got-before[i])
			}
		}
		return ""
	})
	status, body := do(t, "POST", nodes[1].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, other))
	if status != 503 || !strings.Contains(body, "reading mockd:versions") || strings.Contains(body, "until the store is back") {
		t.Errorf("a change with mockd:versions a string answered %d, want 503 naming the key, not saying the store is down\n%s", status, body)
	}
	if msg := served(nodes, port, "/", "kept"); msg != "" {
		t.Errorf("with mockd:versions a string: %s", msg)
	}
	for _, cmd := range [][]string{{"DEL", "mockd:versions"}, {"RENAME", "saved", "mockd:versions"}} {
		if _, err := r.call(cmd...); err != nil {
			t.Fatal(cmd, err)
		}
	}
	eventually(t, "a change is taken again", func() string {
		if status, body := do(t, "POST", nodes[1].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, other)); status != 201 {
			return fmt.Sprintf("%d %s", status, body)
		}
		return ""
	})
	eventually(t, "every node says it is in sync again", func() string {
		for _, n := range nodes {
			if !strings.Contains(n.Output(), "in sync with the store again") {
				return n.host + " did not say so"
			}
		}
		return ""
	})
	for _, n := range nodes {
		if got := strings.Count(n.Output(), "cannot sync the imposters with the store"); got != 1 {
			t.Errorf("%s logged the failing sync %d times, want once:\n%s", n.host, got, n.Output())
		}
	}
}

// TestChangesAfterANodeIsKilled kills a node with SIGKILL and makes changes through another at
// once, while the killed node still counts as live (its heartbeat has not expired): each waits
// its second for the dead node and is taken; none is refused, and no node takes the store for
// lost (the wait's end did, so the next changes answered 503 "cannot reach the store … context
// deadline exceeded" until the next heartbeat).
func TestChangesAfterANodeIsKilled(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[]}`, port))
	eventually(t, "every node is live", func() string { return unreadableOn(nodes[0], 3, port, "") })
	nodes[2].kill()
	for i := 0; i < 3; i++ {
		mustDo(t, 200, "POST", nodes[0].admin+fmt.Sprintf("/imposters/%d/stubs", port), `{"stub":`+stubBody("s"+strconv.Itoa(i))+`}`)
	}
	for _, n := range nodes[:2] {
		if strings.Contains(n.Output(), "lost the store") {
			t.Errorf("%s took the store for lost:\n%s", n.host, n.Output())
		}
	}
}
