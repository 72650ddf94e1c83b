package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCustomProtocolAcrossNodes: an imposter of a custom protocol (--protofile) created on one
// node runs its program on every node, each on its node's host and calling its node's admin
// API back; the response cycle and the journal are the cluster's, as for mockd's own
// protocols. Each node's program is started with the creation request's fields, not with what
// the first node's program announced (its pid), which each node shows of its own program.
func TestCustomProtocolAcrossNodes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "lineproto")
	build := exec.Command("go", "build", "-o", bin, "./test/internal/lineproto")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build lineproto: %v\n%s", err, out)
	}
	protofile := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(protofile, []byte(fmt.Sprintf(`{"line": {"createCommand": %q}}`, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRedis(t)
	nodes := startCluster(t, r.url(), "--protofile", protofile)
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"line","port":%d,"recordRequests":true,
		"greeting":"hi","community":"public","stubs":[{"predicates":[{"equals":{"data":"next"}}],
		"responses":[{"is":{"data":"a"}},{"is":{"data":"b"}},{"is":{"data":"c"}}]}]}`, port))
	pids := map[float64]bool{}
	eventually(t, "the program running on every node", func() string {
		for _, n := range nodes {
			status, body := get(n.admin + fmt.Sprintf("/imposters/%d", port))
			if status != 200 {
				return n.host + ": " + body
			}
			shown := jsonOf(t, body)
			var args map[string]any
			if s, _ := shown["args"].(string); json.Unmarshal([]byte(s), &args) != nil {
				return n.host + ": no program args shown: " + body
			}
			if args["community"] != "public" || args["greeting"] != "hi" || args["pid"] != nil || args["host"] != n.host ||
				!strings.Contains(fmt.Sprint(args["callbackURLTemplate"]), "//"+n.host+":") {
				return n.host + ": the program's arguments: " + shown["args"].(string)
			}
			pids[shown["pid"].(float64)] = true
		}
		return ""
	})
	if len(pids) != 3 {
		t.Errorf("%d programs for 3 nodes: %v", len(pids), pids)
	}
	var got []string
	for i := 0; i < 6; i++ {
		got = append(got, lineAnswer(t, nodes[i%3].host, port, "next"))
	}
	if s := strings.Join(got, ""); s != "abcabc" {
		t.Errorf("answers over the nodes = %s, want abcabc", s)
	}
	eventually(t, "every node's requests in the journal of each", func() string {
		for _, n := range nodes {
			var shown struct {
				NumberOfRequests int              `json:"numberOfRequests"`
				Requests         []map[string]any `json:"requests"`
			}
			_, body := get(n.admin + fmt.Sprintf("/imposters/%d", port))
			if json.Unmarshal([]byte(body), &shown) != nil || shown.NumberOfRequests != 6 || len(shown.Requests) != 6 {
				return n.host + ": " + body
			}
		}
		return ""
	})
}

// lineAnswer sends one line to the line protocol's imposter on host and returns its answer.
func lineAnswer(t *testing.T, host string, port int, line string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(deadline))
	if _, err := fmt.Fprintln(c, line); err != nil {
		t.Fatal(err)
	}
	answer, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s:%d: %v", host, port, err)
	}
	return strings.TrimSuffix(answer, "\n")
}
