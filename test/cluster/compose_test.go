package cluster

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeDir holds README's docker-compose example of several nodes behind a load balancer.
const composeDir = "../../docs/cluster"

// TestComposeExample checks the docker-compose example's structure (docker compose cannot run
// here): Redis, three mockd nodes that share it under names of their own and load a config
// mockd accepts, and nginx in front of every node for the admin port and each imposter port.
func TestComposeExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(composeDir, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image     string   `yaml:"image"`
			Command   []string `yaml:"command"`
			Volumes   []string `yaml:"volumes"`
			Ports     []string `yaml:"ports"`
			DependsOn []string `yaml:"depends_on"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	redis, ok := doc.Services["redis"]
	if !ok || !strings.HasPrefix(redis.Image, "redis:") && !strings.HasPrefix(redis.Image, "valkey/") {
		t.Fatalf("no redis service: %+v", doc.Services)
	}
	var nodes []string
	names := map[string]bool{}
	for name, s := range doc.Services {
		if !strings.HasPrefix(s.Image, "ghcr.io/mockd/mockd") {
			continue
		}
		nodes = append(nodes, name)
		flags := map[string]string{}
		for i := 1; i+1 < len(s.Command); i++ {
			if strings.HasPrefix(s.Command[i], "-") {
				flags[s.Command[i]] = s.Command[i+1]
			}
		}
		if len(s.Command) == 0 || s.Command[0] != "serve" {
			t.Errorf("%s: command %v does not start with serve", name, s.Command)
		}
		u, err := url.Parse(flags["--store"])
		if err != nil || u.Scheme != "redis" || u.Hostname() != "redis" {
			t.Errorf("%s: --store %q is not the redis service", name, flags["--store"])
		}
		if n := flags["--node-name"]; n == "" || names[n] {
			t.Errorf("%s: --node-name %q is missing or taken", name, n)
		} else {
			names[n] = true
		}
		if !contains(s.DependsOn, "redis") {
			t.Errorf("%s does not depend on redis", name)
		}
		if cfg := flags["-c"]; cfg != "" && !mounted(s.Volumes, cfg) {
			t.Errorf("%s: -c %s is not mounted", name, cfg)
		}
	}
	if len(nodes) < 3 {
		t.Fatalf("%d mockd nodes, want 3", len(nodes))
	}
	lb, ok := doc.Services["lb"]
	if !ok || !mounted(lb.Volumes, "/etc/nginx/nginx.conf") {
		t.Fatalf("no lb service with nginx.conf: %+v", lb)
	}
	conf, err := os.ReadFile(filepath.Join(composeDir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	// Every port the load balancer publishes reaches every node on that port.
	for _, p := range lb.Ports {
		port := p[strings.LastIndex(p, ":")+1:]
		if !regexp.MustCompile(`listen\s+` + port + `;`).Match(conf) {
			t.Errorf("nginx.conf does not listen on %s", port)
		}
		for _, n := range nodes {
			if !strings.Contains(string(conf), fmt.Sprintf("server %s:%s;", n, port)) {
				t.Errorf("nginx.conf does not send port %s to %s", port, n)
			}
		}
	}
	if !strings.Contains(string(conf), "events") || strings.Count(string(conf), "{") != strings.Count(string(conf), "}") {
		t.Error("nginx.conf: unbalanced braces or no events block")
	}
	// The config the nodes load is one mockd accepts.
	out, err := exec.Command(mockdBin, "validate", "-c", filepath.Join(composeDir, "stubs.yaml")).CombinedOutput()
	if err != nil {
		t.Errorf("mockd validate stubs.yaml: %v\n%s", err, out)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// mounted reports whether a volume mounts something at path, and the file it mounts exists.
func mounted(volumes []string, path string) bool {
	for _, v := range volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == path {
			if strings.HasPrefix(parts[0], "./") {
				_, err := os.Stat(filepath.Join(composeDir, parts[0]))
				return err == nil
			}
			return true
		}
	}
	return false
}

// TestComposeExampleIsValid checks the example against the Compose schema with Debian's
// docker-compose (`config` needs no Docker daemon; .ci/run installs it, and CI fails without
// it), and that README shows the file as it is.
func TestComposeExampleIsValid(t *testing.T) {
	file := filepath.Join(composeDir, "docker-compose.yml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(data)+"```\n") {
		t.Errorf("README does not show %s as it is", file)
	}
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-compose is not installed (.ci/run installs Debian's docker-compose)")
		}
		t.Skip("docker-compose is not installed: apt-get install docker-compose to check the example against the Compose schema")
	}
	cmd := exec.Command(bin, "-f", file, "config", "-q")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent") // no daemon is asked anything
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker-compose config: %v\n%s", err, out)
	}
}
