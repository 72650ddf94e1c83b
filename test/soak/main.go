// Command soak runs mockd for a long time at about 80% of the rate it can sustain, on a mix of
// plain, JSON, recorded, scripted and proxied requests, and reports its resident memory and
// goroutines every minute. It passes when no request failed and the resident memory at the end
// (the median of the last three reports) is less than 5% above what it was at the end of the
// warm-up (the first 5 minutes): a leak grows steadily, the GC's noise does not.
//
//	make soak                      # an hour (PRODUCT.md), the README's figures
//	make soak SOAK_DURATION=2m     # a quick check (warm-up: the first half)
//	go run ./test/soak -help       # every knob
//
// Everything listens on 127.0.0.1; each phase is bounded in time and in requests (-max-requests).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	duration := flag.Duration("duration", envDuration("SOAK_DURATION", 60*time.Minute), "how long to run at the soak rate (also $SOAK_DURATION)")
	warmup := flag.Duration("warmup", 0, "the start of the run whose growth does not count (default: 5m, or half a run shorter than 10m)")
	every := flag.Duration("every", time.Minute, "how often to report")
	measure := flag.Duration("measure", 20*time.Second, "how long to measure the saturation rate")
	share := flag.Float64("share", 0.8, "the share of the measured saturation rate to run at")
	workers := flag.Int("workers", 32, "concurrent connections")
	limit := flag.Int64("max-requests", 200_000_000, "the most requests each phase sends (an hour at 55,000 requests/s)")
	bin := flag.String("mockd", "", "the mockd binary (default: build ./cmd/mockd)")
	flag.Parse()
	if *warmup == 0 {
		*warmup = defaultWarmup(*duration)
	}
	if err := run(*bin, plan{*duration, *warmup, *every, *measure, *share, *workers, *limit}); err != nil {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("soak: PASS")
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// plan is what a run does.
type plan struct {
	duration, warmup, every, measure time.Duration
	share                            float64
	workers                          int
	limit                            int64
}

// config is the soak's imposters: the origin the proxy forwards to, and one imposter per kind
// of traffic. Ports are filled in.
const config = `imposters:
  - port: %[1]d
    protocol: http
    name: origin
    stubs:
      - responses: [{is: {statusCode: 200, headers: {Content-Type: application/json}, body: {origin: true}}}]
  - port: %[2]d
    protocol: http
    name: mixed
    stubs:
      - predicates: [{equals: {method: GET, path: /plain}}]
        responses: [{is: {statusCode: 200, body: plain}}]
      - predicates: [{equals: {method: POST, path: /json, body: {user: {id: 42}}}}]
        responses: [{is: {statusCode: 201, headers: {Content-Type: application/json}, body: {created: true}}}]
      - predicates: [{matches: {path: "^/jsonpath/"}}, {equals: {body: "42"}, jsonpath: {selector: "$.user.id"}}]
        responses: [{is: {statusCode: 200, body: found}}]
      - predicates: [{equals: {path: /inject}}]
        responses: [{inject: "function (config) { return { statusCode: 200, body: 'hello ' + config.request.query.name }; }"}]
      - predicates: [{equals: {path: /state}}]
        responses: [{inject: "function (config) { config.state.n = (config.state.n || 0) + 1; return { body: String(config.state.n) }; }"}]
      - predicates: [{equals: {path: /decorate}}]
        responses:
          - is: {statusCode: 200, body: decorated}
            behaviors: [{decorate: "function (config, response) { response.headers = response.headers || {}; response.headers['X-Seen'] = String(config.request.path.length); }"}]
      - predicates: [{startsWith: {path: /proxy}}]
        responses: [{proxy: {to: "http://127.0.0.1:%[1]d", mode: proxyTransparent}}]
  - port: %[3]d
    protocol: http
    name: recorded
    recordRequests: true
    stubs:
      - responses: [{is: {statusCode: 200, body: recorded}}]
`

// request is one kind of request of the mix.
type request struct {
	method, path, body string
	status             int
}

func mix(mixed, recorded int) []request {
	m := "http://127.0.0.1:" + strconv.Itoa(mixed)
	r := "http://127.0.0.1:" + strconv.Itoa(recorded)
	return []request{
		{"GET", m + "/plain", "", 200},
		{"POST", m + "/json", `{"user":{"id":42},"items":[1,2,3]}`, 201},
		{"POST", m + "/jsonpath/x", `{"user":{"id":42,"name":"ann"}}`, 200},
		{"GET", m + "/inject?name=soak", "", 200},
		{"GET", m + "/state", "", 200},
		{"GET", m + "/decorate", "", 200},
		{"GET", m + "/proxy/a", "", 200},
		{"POST", r + "/recorded", `{"event":"soak","n":1}`, 200},
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func run(bin string, p plan) error {
	dir, err := os.MkdirTemp("", "mockd-soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "mockd")
		build := exec.Command("go", "build", "-o", bin, "./cmd/mockd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("cannot build mockd (run from the repository's root): %w", err)
		}
	}
	var ports [4]int // origin, mixed, recorded, admin
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	cfg := filepath.Join(dir, "soak.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, ports[0], ports[1], ports[2])), 0o644); err != nil {
		return err
	}
	admin := ports[3]
	cmd := exec.Command(bin, "serve", "--port", strconv.Itoa(admin), "--host", "127.0.0.1", "--allowInjection", "--loglevel", "warn",
		"--journal-size", "10000", // full within the warm-up: then each recorded request drops the oldest
		"-c", cfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	go func() { // warnings and errors
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Println("mockd:", sc.Text())
		}
	}()
	requests := mix(ports[1], ports[2])
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: p.workers, MaxConnsPerHost: p.workers}}
	if err := waitReady(client, requests[0]); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	fmt.Printf("soak: %d CPUs, load average %s at the start\n", runtime.NumCPU(), loadAverage())

	l := &load{client: client, requests: requests, limit: p.limit}
	fmt.Printf("soak: measuring the saturation rate with %d connections for %s\n", p.workers, p.measure)
	start := time.Now()
	l.run(p.workers, p.measure)
	saturation := float64(l.done.Load()) / time.Since(start).Seconds()
	if l.failed.Load() > 0 {
		return fmt.Errorf("%d of %d requests failed while measuring the saturation rate; the first: %v", l.failed.Load(), l.done.Load(), l.firstErr())
	}
	rate := saturation * p.share
	fmt.Printf("soak: saturation %.0f requests/s; running at %.0f requests/s (%.0f%%) for %s, reporting every %s, warm-up %s\n",
		saturation, rate, p.share*100, p.duration, p.every, p.warmup)
	fmt.Println("minute  requests/s  failed  RSS MiB  goroutines")

	l = &load{client: client, requests: requests, limit: p.limit}
	stop, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		l.runUntil(p.workers, rate, stop)
	}()
	var samples []sample
	start = time.Now()
	last, lastDone := start, int64(0)
	for elapsed := p.every; elapsed <= p.duration; elapsed += p.every {
		select {
		case <-time.After(time.Until(start.Add(elapsed))):
		case <-finished:
			fmt.Printf("soak: stopped after %d requests (-max-requests)\n", l.done.Load())
		}
		done, now := l.done.Load(), time.Now()
		s := sample{at: min(elapsed, now.Sub(start)), rate: float64(done-lastDone) / now.Sub(last).Seconds(), failed: l.failed.Load(),
			rss: rss(pid), goroutines: goroutines(client, admin)}
		last, lastDone = now, done
		samples = append(samples, s)
		fmt.Printf("%6.1f  %10.0f  %6d  %7.1f  %10d\n", s.at.Minutes(), s.rate, s.failed, float64(s.rss)/(1<<20), s.goroutines)
		if isClosed(finished) {
			break
		}
	}
	close(stop)
	<-finished
	fmt.Printf("soak: %d requests, load average %s at the end\n", l.done.Load(), loadAverage())
	sum, err := summarize(samples, p.warmup)
	if err != nil {
		return err
	}
	fmt.Printf("soak: saturation %.0f requests/s, target %.0f; the median rate after the warm-up is %.0f%% of the saturation rate\n",
		saturation, rate, sum.medianRate/saturation*100)
	fmt.Println("soak:", sum)
	return sum.verdict(l.done.Load(), l.failed.Load(), l.firstErr())
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, as /proc/loadavg says.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// load sends the mix round-robin from a number of connections, paced or as fast as it can, up
// to limit requests.
type load struct {
	client   *http.Client
	requests []request
	limit    int64
	sent     atomic.Int64
	done     atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	err      error // the first failure
}

func (l *load) firstErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *load) fail(err error) {
	l.failed.Add(1)
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

// run sends as fast as the connections go, for d.
func (l *load) run(workers int, d time.Duration) {
	stop := make(chan struct{})
	t := time.AfterFunc(d, func() { close(stop) })
	defer t.Stop()
	l.runUntil(workers, 0, stop)
}

// runUntil sends rate requests a second (0: as fast as the connections go) until stop is
// closed or the limit is reached.
func (l *load) runUntil(workers int, rate float64, stop <-chan struct{}) {
	var p *pacer
	if rate > 0 {
		p = newPacer(rate, time.Now())
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var timer *time.Timer
			for {
				if p != nil {
					if d := time.Until(p.reserve(time.Now())); d > 0 {
						if timer == nil {
							timer = time.NewTimer(d)
						} else {
							timer.Reset(d)
						}
						select {
						case <-stop:
							return
						case <-timer.C:
						}
					}
				}
				if isClosed(stop) {
					return
				}
				n := l.sent.Add(1)
				if n > l.limit {
					return
				}
				l.one(l.requests[n%int64(len(l.requests))])
			}
		}()
	}
	wg.Wait()
}

// pacer hands out the times requests are sent at, rate a second, by the clock. A schedule more
// than maxOwed behind (mockd did not keep up, or this process was not scheduled) is moved up:
// what a stall costs is made up for, but never more than maxOwed's worth at once.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

const maxOwed = time.Second

func newPacer(rate float64, now time.Time) *pacer {
	return &pacer{interval: time.Duration(float64(time.Second) / rate), next: now}
}

// reserve returns the time the next request is due at (it may have passed).
func (p *pacer) reserve(now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if early := now.Add(-maxOwed); p.next.Before(early) {
		p.next = early
	}
	at := p.next
	p.next = p.next.Add(p.interval)
	return at
}

func (l *load) one(r request) {
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, r.path, body)
	if err != nil {
		l.fail(err)
		return
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		l.fail(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	l.done.Add(1)
	if resp.StatusCode != r.status {
		l.fail(fmt.Errorf("%s %s: status %d, want %d", r.method, r.path, resp.StatusCode, r.status))
	}
}

func waitReady(c *http.Client, r request) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := c.Get(r.path); err == nil {
			_ = resp.Body.Close()
			return nil
		}
	}
	return errors.New("mockd did not come up")
}

// rss returns process pid's resident memory; 0 when /proc does not tell.
func rss(pid int) int64 {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	return vmRSS(string(data))
}

// goroutines reads go_goroutines from mockd's metrics; -1 when they do not tell.
func goroutines(c *http.Client, admin int) int {
	resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(admin) + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	return goroutinesIn(resp.Body)
}
