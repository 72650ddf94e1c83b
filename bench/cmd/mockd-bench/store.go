package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// The mockd-store engine is mockd with --store on a redis-server the harness starts once per
// run (Debian's redis-server, from PATH), pinned with the load generator: Redis stands for a
// store on another machine, and the engine's core stays its own. Each launch uses a key prefix
// of its own, so every round starts from an empty store, as the other engines start empty.

// prepareMockdStore is prepareMockd, then a redis-server on a free loopback port.
func prepareMockdStore(h *harness, e *engine) error {
	if err := prepareMockd(h, e); err != nil {
		return err
	}
	if h.redis != nil {
		return nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return errors.New("redis-server is not installed (apt-get install -y redis-server)")
	}
	port, err := h.port(23000, 23999)
	if err != nil {
		return err
	}
	p, err := startProc(h.opts.loadCPU, filepath.Join(h.runDir, "redis.log"), h.runDir, bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", h.runDir)
	if err != nil {
		return err
	}
	if err := waitTCP(p, "127.0.0.1:"+strconv.Itoa(port), 10*time.Second); err != nil {
		p.stop()
		return fmt.Errorf("redis-server did not start: %w", err)
	}
	h.redis, h.redisPort = p, port
	e.version += ", --store on " + firstLine(output(bin, "--version"))
	return nil
}

// mockdStoreArgs are mockd's, with --store on a key prefix no launch used before.
func mockdStoreArgs(h *harness, e *engine, l launch) []string {
	h.storeLaunches++
	url := fmt.Sprintf("redis://127.0.0.1:%d/0?prefix=bench-%s-%d", h.redisPort, h.stamp, h.storeLaunches)
	return append(mockdArgs(h, e, l), "--store", url, "--node-name", "bench")
}
