package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReloadGoesThroughTheStore starts a node with a config file beside two without: a SIGHUP
// reload of the edited file reaches every node through the store, leaves alone an imposter
// another node created meanwhile, and, with Redis stopped, is refused as an admin write is,
// changing nothing.
func TestReloadGoesThroughTheStore(t *testing.T) {
	r := startRedis(t)
	admin, port, other := freePort(t), freePort(t), freePort(t)
	file := filepath.Join(t.TempDir(), "mocks.yaml")
	writeConfig := func(body string) {
		t.Helper()
		text := fmt.Sprintf("imposters:\n  - port: %d\n    protocol: http\n    stubs:\n      - responses: [{is: {body: %s}}]\n", port, body)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("one")
	nodes := []*node{
		startNode(t, "127.0.0.1", admin, r.url()),
		startNode(t, "127.0.0.2", admin, r.url()),
		startNode(t, "127.0.0.3", admin, r.url(), "-c", file),
	}
	eventually(t, "the config's imposter everywhere", func() string { return served(nodes, port, "/", "one") })

	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, other, stubBody("other")))
	writeConfig("two")
	if err := nodes[2].Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reloaded imposter everywhere", func() string { return served(nodes, port, "/", "two") })
	if msg := served(nodes, other, "/", "other"); msg != "" {
		t.Errorf("the imposter created through another node before the reload: %s", msg)
	}
	eventually(t, "the nodes agree", func() string { return agree(nodes) })

	r.stop()
	writeConfig("three")
	if err := nodes[2].Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload refused", func() string {
		if !strings.Contains(nodes[2].Output(), "refused: the running imposters are unchanged") {
			return "no refusal yet:\n" + nodes[2].Output()
		}
		return ""
	})
	if msg := served(nodes, port, "/", "two"); msg != "" {
		t.Errorf("after the refused reload: %s", msg)
	}
}
