package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// setupRun is one round of a setup scenario on one engine.
type setupRun struct {
	CreateS    float64 `json:"create_s"`     // creating the stubs through the admin API, until the last one answers
	StartS     float64 `json:"start_s"`      // starting a process from a config file, until the last stub answers
	RSSEmpty   int64   `json:"rss_empty_kb"` // before the stubs were created
	RSSCreated int64   `json:"rss_created_kb"`
	RSSStarted int64   `json:"rss_started_kb"`
}

// setupTimeout bounds creating or starting with one scenario's stubs.
const setupTimeout = 5 * time.Minute

// runSetup runs one round of a setup scenario: on one process, the stubs are created through
// the admin API; on another, the process starts from a config file holding them. Both times run
// until the last stub gives its answer; resident memory is read a second later.
func (h *harness) runSetup(e *engine, s *scenario, r *result, round int, client *http.Client) {
	var run setupRun
	fail := func(status, format string, args ...any) {
		r.Status, r.Note = status, fmt.Sprintf(format, args...)
		var err error
		for _, a := range args {
			if e, ok := a.(error); ok {
				err = e
			}
		}
		if errors.Is(err, errTooSlow) || (err != nil && strings.Contains(err.Error(), "Client.Timeout")) {
			r.Status = "too slow"
		}
		h.logf("%s/%s: %s %s", r.Engine, s.Name, r.Status, r.Note)
	}
	stubs := s.Stubs()

	// Through the API.
	p, l, err := h.startEngine(e, launch{stubs: len(stubs)})
	if err != nil {
		fail("invalid", "%v", err)
		return
	}
	impPort, err := h.port(22000, 22998)
	if err != nil {
		p.stop()
		fail("invalid", "%v", err)
		return
	}
	time.Sleep(time.Second)
	run.RSSEmpty = rssKB(p.pid())
	t0 := time.Now()
	target, err := h.createStubs(e, s, stubs, l, impPort, client)
	if err == nil {
		err = waitAnswer(target, t0.Add(setupTimeout))
	}
	run.CreateS = time.Since(t0).Seconds()
	if err == nil {
		time.Sleep(time.Second)
		run.RSSCreated = rssKB(p.pid())
	}
	p.stop()
	if err != nil {
		fail("invalid", "create through the API: %v", err)
		return
	}

	// From a config file.
	impPort, err = h.port(22000, 22998)
	if err != nil {
		fail("invalid", "%v", err)
		return
	}
	cfg, err := h.writeConfig(e, s, stubs, impPort)
	if err != nil {
		fail("invalid", "config file: %v", err)
		return
	}
	t0 = time.Now()
	p, l, err = h.startEngine(e, launch{config: cfg, stubs: len(stubs)})
	if err != nil {
		fail("invalid", "start from a config file: %v", err)
		return
	}
	defer p.stop()
	target = h.setupTarget(e, s, l, impPort)
	if err := waitAnswer(target, t0.Add(setupTimeout)); err != nil {
		fail("invalid", "start from a config file: %v", err)
		return
	}
	run.StartS = time.Since(t0).Seconds()
	time.Sleep(time.Second)
	run.RSSStarted = rssKB(p.pid())
	r.Setups = append(r.Setups, &run)
	h.logf("%s/%s round %d/%d: created in %.2fs (RSS %d → %d KiB), started from a file in %.2fs (RSS %d KiB)",
		r.Engine, s.Name, round+1, h.roundsFor(r.Engine), run.CreateS, run.RSSEmpty, run.RSSCreated, run.StartS, run.RSSStarted)
}

// setupTarget is where the setup scenario's check request goes.
func (h *harness) setupTarget(e *engine, s *scenario, l launch, impPort int) peerLoad {
	t := peerLoad{addr: fmt.Sprintf("127.0.0.1:%d", impPort), req: s.Req, want: s.Want}
	if e.api != "mb" {
		t.addr = fmt.Sprintf("127.0.0.1:%d", l.admin)
	}
	return t
}

// createStubs creates stubs through e's admin API.
func (h *harness) createStubs(e *engine, s *scenario, stubs []any, l launch, impPort int, client *http.Client) (peerLoad, error) {
	target := h.setupTarget(e, s, l, impPort)
	if e.api == "mb" {
		doc, _ := json.Marshal(setupImposter(s, stubs, impPort))
		_, err := peerCall(client, "POST", fmt.Sprintf("http://127.0.0.1:%d/imposters", l.admin), doc, 201)
		return target, err
	}
	docs, err := h.peerDocs(e, stubs)
	if err != nil {
		return target, err
	}
	base := "http://" + target.addr
	if e.api == "wiremock" {
		_, err = peerCall(client, "POST", base+"/__admin/mappings/import", docs, 200)
	} else {
		_, err = peerCall(client, "PUT", base+"/mockserver/expectation", docs, 201)
	}
	return target, err
}

func setupImposter(s *scenario, stubs []any, port int) map[string]any {
	return map[string]any{"protocol": "http", "port": port, "host": "127.0.0.1", "name": "bench-" + s.Name, "stubs": stubs}
}

// writeConfig writes stubs as e starts from them: Mountebank's config file, a WireMock root
// directory with one mappings file, or MockServer's initialization JSON.
func (h *harness) writeConfig(e *engine, s *scenario, stubs []any, impPort int) (string, error) {
	var doc []byte
	var err error
	path := filepath.Join(h.runDir, e.api+"-"+s.Name+".json")
	switch e.api {
	case "mb":
		doc, err = json.Marshal(map[string]any{"imposters": []any{setupImposter(s, stubs, impPort)}})
	case "wiremock":
		root := filepath.Join(h.runDir, "wiremock-"+s.Name)
		if err := os.MkdirAll(filepath.Join(root, "mappings"), 0o755); err != nil {
			return "", err
		}
		path = filepath.Join(root, "mappings", "stubs.json")
		doc, err = h.peerDocs(e, stubs)
	default:
		doc, err = h.peerDocs(e, stubs)
	}
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		return "", err
	}
	if e.api == "wiremock" {
		return filepath.Dir(filepath.Dir(path)), nil
	}
	return path, nil
}

// waitAnswer polls the target with its request until the expected answer comes or deadline.
func waitAnswer(t peerLoad, deadline time.Time) error {
	var last error
	for time.Now().Before(deadline) {
		c, err := checkOnce(t.addr, "http", t.req, t.want)
		switch {
		case err != nil:
			last = err
		case c.OK:
			return nil
		default:
			last = fmt.Errorf("got %d %q", c.Status, truncate(c.Body, 80))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%w: %v", errTooSlow, last)
}

// errTooSlow is a setup that did not finish within setupTimeout.
var errTooSlow = fmt.Errorf("no right answer within %s", setupTimeout)

// settleSetup sums up a setup scenario's rounds: the median of each time, and the memory of
// the rounds those medians come from.
func settleSetup(r *result) {
	if r.Status != "" {
		return
	}
	if len(r.Setups) == 0 {
		r.Status, r.Note = "invalid", "interrupted"
		return
	}
	byCreate := append([]*setupRun(nil), r.Setups...)
	sort.Slice(byCreate, func(i, j int) bool { return byCreate[i].CreateS < byCreate[j].CreateS })
	byStart := append([]*setupRun(nil), r.Setups...)
	sort.Slice(byStart, func(i, j int) bool { return byStart[i].StartS < byStart[j].StartS })
	c, st := byCreate[len(byCreate)/2], byStart[len(byStart)/2]
	r.Setup = &setupRun{CreateS: c.CreateS, RSSEmpty: c.RSSEmpty, RSSCreated: c.RSSCreated, StartS: st.StartS, RSSStarted: st.RSSStarted}
	r.RSSLoaded, r.RSSEnd = c.RSSCreated, st.RSSStarted
	r.Status = "ok"
}

// perStub is the resident memory the created stubs added, per stub, in bytes.
func (s *setupRun) perStub(n int) float64 {
	return float64(s.RSSCreated-s.RSSEmpty) * 1024 / float64(n)
}

// measurePairs runs the admin-pairs scenario: the pairs generator, pinned like the load
// generator, creates and deletes one stub after the other, the imposter on impPort (0: a free
// port).
func (h *harness) measurePairs(e *engine, s *scenario, r *result, admin, impPort, pid, round int) {
	if impPort == 0 {
		var err error
		if impPort, err = h.port(22000, 22998); err != nil {
			r.Status, r.Note = "invalid", err.Error()
			return
		}
	}
	api := e.api
	if e.ceiling {
		// The bare server answers the pairs as Mountebank's API would (ceiling-sockets also
		// opens and closes a listening socket on impPort).
		api = "mb"
	}
	one := func(d time.Duration) (*loadResult, error) {
		return runSelf(h.ctx, h.opts.loadCPU, d, d+2*h.opts.timeout+30*time.Second, "pairs", "-api", api,
			"-admin", fmt.Sprintf("127.0.0.1:%d", admin), "-port", strconv.Itoa(impPort), "-d", d.String(), "-timeout", h.opts.timeout.String())
	}
	h.warmAndRun(r, e, s, pid, rssKB(pid), round, one)
}

// pairsImposterPort is the imposter port the pairs client names to the ceiling, which opens none
// (ceiling-sockets listens on a free one).
const pairsImposterPort = 22999

// pairsEcho is the JSON Mountebank's API answers both requests of a pair with (the imposter
// created, then deleted): what the ceiling answers them with, so that it sends as many bytes.
func pairsEcho(admin, port int) string {
	self := fmt.Sprintf("http://127.0.0.1:%d/imposters/%d", admin, port)
	return fmt.Sprintf(`{
  "protocol": "http",
  "port": %d,
  "numberOfRequests": 0,
  "recordRequests": false,
  "requests": [],
  "stubs": [
    {
      "predicates": [
        {
          "equals": {
            "method": "GET",
            "path": "/health"
          }
        }
      ],
      "responses": [
        {
          "is": {
            "statusCode": 200,
            "body": "ok"
          }
        }
      ],
      "_links": {
        "self": {
          "href": "%s/stubs/0"
        }
      }
    }
  ],
  "_links": {
    "self": {
      "href": "%s"
    },
    "stubs": {
      "href": "%s/stubs"
    }
  }
}`, port, self, self, self)
}

// maxPairs bounds one pairs run by count, besides its duration.
const maxPairs = 1_000_000

// pairsMain is the "pairs" subcommand: for -d, one create-then-delete pair after the other
// against an admin API, as a client suite does around each test, each answer checked. It
// prints a loadResult whose requests are pairs.
func pairsMain(args []string) error {
	fs := flag.NewFlagSet("pairs", flag.ContinueOnError)
	api := fs.String("api", "mb", "mb, wiremock or mockserver")
	admin := fs.String("admin", "", "admin API host:port")
	port := fs.Int("port", 0, "the imposter's port (mb)")
	dur := fs.Duration("d", 5*time.Second, "duration")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base := "http://" + *admin
	stub := `{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}`
	var create, remove [3]string // method, URL, body
	var createStatus, removeStatus int
	switch *api {
	case "mb":
		create = [3]string{"POST", base + "/imposters", fmt.Sprintf(`{"protocol":"http","port":%d,"host":"127.0.0.1","stubs":[%s]}`, *port, stub)}
		remove = [3]string{"DELETE", fmt.Sprintf("%s/imposters/%d", base, *port), ""}
		createStatus, removeStatus = 201, 200
	case "wiremock":
		const id = "00000000-0000-4000-8000-000000000026"
		create = [3]string{"POST", base + "/__admin/mappings", `{"id":"` + id + `","request":{"method":"GET","urlPath":"/health"},"response":{"status":200,"body":"ok"}}`}
		remove = [3]string{"DELETE", base + "/__admin/mappings/" + id, ""}
		createStatus, removeStatus = 201, 200
	case "mockserver":
		create = [3]string{"PUT", base + "/mockserver/expectation", `[{"id":"bench-pair","httpRequest":{"method":"GET","path":"/health"},"httpResponse":{"statusCode":200,"body":"ok"}}]`}
		remove = [3]string{"PUT", base + "/mockserver/clear", `{"id":"bench-pair"}`}
		createStatus, removeStatus = 201, 200
	default:
		return fmt.Errorf("-api %q: want mb, wiremock or mockserver", *api)
	}
	conn, err := newPairConn(*admin, *timeout)
	if err != nil {
		return err
	}
	defer conn.close()
	createReq, removeReq := pairRequest(create, *admin), pairRequest(remove, *admin)
	do := func(req []byte, want int) error {
		status, err := conn.roundTrip(req)
		if err != nil {
			return err
		}
		if status != want {
			return errWrongStatus
		}
		return nil
	}
	var res loadResult
	var hist histogram
	end := time.Now().Add(*dur)
	for n := 0; n < maxPairs && time.Now().Before(end); n++ {
		t0 := time.Now()
		err := do(createReq, createStatus)
		if err == nil {
			err = do(removeReq, removeStatus)
		}
		switch {
		case errors.Is(err, errWrongStatus):
			res.StatusErr++
		case errors.Is(err, errPairTimeout):
			res.TimeoutErr++
		case err != nil:
			res.ReadErr++
		case time.Now().Before(end):
			res.Requests++
			hist.record(time.Since(t0).Microseconds())
		}
	}
	res.DurationUS = dur.Microseconds()
	res.P50US, res.P99US, res.MaxUS = hist.percentile(50), hist.percentile(99), float64(hist.max)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	return nil
}

var (
	errWrongStatus = errors.New("unexpected status")
	errPairTimeout = errors.New("timed out")
)

// pairRequest is the request c (method, URL, body) on the wire, with the headers net/http's
// client sends (which the pairs client used until it wrote its requests itself), in its order.
func pairRequest(c [3]string, host string) []byte {
	method, target, body := c[0], c[1], c[2]
	target = strings.TrimPrefix(target, "http://"+host)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Go-http-client/1.1\r\n", method, target, host)
	if body != "" || method == "POST" || method == "PUT" || method == "PATCH" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	if body != "" {
		b.WriteString("Content-Type: application/json\r\n")
	}
	b.WriteString("Accept-Encoding: gzip\r\n\r\n")
	b.WriteString(body)
	return []byte(b.String())
}
