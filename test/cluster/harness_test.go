// Package cluster holds the black-box tests of several mockd nodes sharing a Redis store: each
// test starts a real redis-server on a free loopback port and three mockd processes bound to
// 127.0.0.1, 127.0.0.2 and 127.0.0.3 with the same admin and imposter ports, and talks to
// them over the wire.
package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

var mockdBin string

func TestMain(m *testing.M) { mockdproc.Main(m, "../..", &mockdBin) }

// deadline bounds every wait for something to happen: generous, as the machine may be loaded.
const deadline = 20 * time.Second

// freePort returns a TCP port that is free on 127.0.0.1 (and so, almost surely, on the other
// loopback addresses the nodes use).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// redisServer is one redis-server process the test started.
type redisServer struct {
	t      *testing.T
	port   int
	dir    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts redis-server on a free loopback port, in a temporary directory, with no
// snapshots and the extra args given (such as "--appendonly", "yes"). The test is skipped when
// redis-server is not installed, except in CI, where it fails.
func startRedis(t *testing.T, args ...string) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (.ci/run installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed: apt-get install redis-server to run the cluster tests")
	}
	r := &redisServer{t: t, port: freePort(t), dir: t.TempDir(), args: args}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) url() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

func (r *redisServer) start() {
	r.t.Helper()
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no"}, r.args...)
	r.cmd = exec.Command("redis-server", args...)
	var out mockdproc.SyncBuffer
	r.cmd.Stdout, r.cmd.Stderr = &out, &out
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.exited = make(chan struct{})
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	end := time.Now().Add(deadline)
	for {
		if reply, err := r.call("PING"); err == nil && reply == "PONG" {
			return
		}
		select {
		case <-r.exited:
			r.t.Fatalf("redis-server exited:\n%s", out.String())
		default:
		}
		if time.Now().After(end) {
			r.t.Fatalf("redis-server did not answer:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the redis-server the test started (SIGTERM: with appendonly it keeps its data).
func (r *redisServer) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// call sends one command as a RESP array and returns its reply: a status, error, integer or
// bulk string's text (an error reply is returned as an error).
func (r *redisServer) call(args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.port), time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", errors.New("empty reply")
	case line[0] == '-':
		return "", errors.New(line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(rd, data); err != nil {
			return "", err
		}
		return string(data[:n]), nil
	}
	return line[1:], nil
}

// node is one mockd process of the cluster.
type node struct {
	*mockdproc.Server
	host  string // 127.0.0.N
	admin string // http://127.0.0.N:PORT
	args  []string
}

// startNode starts mockd on host with the admin port and store given, named after its host.
func startNode(t *testing.T, host string, adminPort int, storeURL string, args ...string) *node {
	t.Helper()
	n, err := tryStartNode(host, adminPort, storeURL, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n
}

func (n *node) start(t *testing.T) {
	t.Helper()
	if err := n.tryStart(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
}

func (n *node) tryStart() error {
	p, err := mockdproc.Start(exec.Command(mockdBin, n.args...), strings.Join(n.args, " "))
	if err != nil {
		return err
	}
	n.Server = p
	return nil
}

// tryStartNode is startNode without failing the test; the caller stops the node.
func tryStartNode(host string, adminPort int, storeURL string, args ...string) (*node, error) {
	full := append([]string{"serve", "--host", host, "--port", strconv.Itoa(adminPort), "--store", storeURL,
		"--node-name", "node-" + host}, args...)
	n := &node{host: host, admin: "http://" + host + ":" + strconv.Itoa(adminPort), args: full}
	return n, n.tryStart()
}

// kill ends the node with SIGKILL and waits until it is gone.
func (n *node) kill() {
	_ = n.Cmd.Process.Kill()
	<-n.Exited
}

// url is the address of port on the node's host.
func (n *node) url(port int) string { return "http://" + n.host + ":" + strconv.Itoa(port) }

// startCluster starts three nodes on 127.0.0.1-3 with one admin port, sharing store.
//
// The admin port is one freePort found free on 127.0.0.1; another process on the machine can
// take it (or bind it on another loopback address) before the nodes do: the cluster is then
// started again on another port, a few times.
func startCluster(t *testing.T, storeURL string, args ...string) []*node {
	t.Helper()
	for attempt := 1; ; attempt++ {
		admin := freePort(t)
		var nodes []*node
		var err error
		for i := 1; i <= 3 && err == nil; i++ {
			var n *node
			if n, err = tryStartNode("127.0.0."+strconv.Itoa(i), admin, storeURL, args...); err == nil {
				nodes = append(nodes, n)
			}
		}
		if err == nil {
			for _, n := range nodes {
				t.Cleanup(n.Stop)
			}
			return nodes
		}
		for _, n := range nodes {
			n.Stop()
		}
		if !strings.Contains(err.Error(), "already in use") || attempt == 5 {
			t.Fatal(err)
		}
		t.Logf("admin port %d taken meanwhile, starting the cluster on another: %v", admin, err)
	}
}

// do sends a request and returns status and body.
func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	status, _, b, err := mockdproc.Do(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, string(b)
}

// mustDo is do failing the test unless the status is want.
func mustDo(t *testing.T, want int, method, url, body string) string {
	t.Helper()
	status, b := do(t, method, url, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d\n%s", method, url, status, want, b)
	}
	return b
}

// eventually polls check until it returns "" (done) or the deadline passes, and returns how
// long it took; it fails the test with check's last complaint.
func eventually(t *testing.T, what string, check func() string) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < deadline {
		if last = check(); last == "" {
			return time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s: %s", what, deadline, last)
	return 0
}

// get returns status and body of a GET, or an error's text as status 0.
func get(url string) (int, string) {
	status, _, b, err := mockdproc.Do("GET", url, "")
	if err != nil {
		return 0, err.Error()
	}
	return status, string(b)
}

// jsonOf decodes body into a generic value, failing the test when it is not JSON.
func jsonOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	return v
}
