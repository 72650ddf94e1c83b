package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// model is the part of the imposters the crash test checks: each port's name and stub bodies.
type model map[int]modelImposter

type modelImposter struct {
	Name  string
	Stubs []string
}

func (m model) clone() model {
	out := model{}
	for p, im := range m {
		out[p] = modelImposter{Name: im.Name, Stubs: append([]string{}, im.Stubs...)}
	}
	return out
}

func (m model) String() string {
	ports := make([]int, 0, len(m))
	for p := range m {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%d %s %v; ", p, m[p].Name, m[p].Stubs)
	}
	return b.String()
}

// fetchModel reads GET /imposters?replayable=true into a model.
func fetchModel(t *testing.T, admin string) model {
	t.Helper()
	m, err := fetchModelErr(admin)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fetchModelErr(admin string) (model, error) {
	resp, err := client.Get(admin + "/imposters?replayable=true")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	body := string(raw)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /imposters: %d %s", resp.StatusCode, body)
	}
	var doc struct {
		Imposters []struct {
			Port  int    `json:"port"`
			Name  string `json:"name"`
			Stubs []struct {
				Responses []struct {
					Is struct {
						Body string `json:"body"`
					} `json:"is"`
				} `json:"responses"`
			} `json:"stubs"`
		} `json:"imposters"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("GET /imposters: %w\n%s", err, body)
	}
	m := model{}
	for _, im := range doc.Imposters {
		stubs := []string{}
		for _, s := range im.Stubs {
			stubs = append(stubs, s.Responses[0].Is.Body)
		}
		m[im.Port] = modelImposter{Name: im.Name, Stubs: stubs}
	}
	return m, nil
}

// change is one admin request and the model it leads to when acknowledged.
type change struct {
	method, path, body string
	after              model
}

func stubJSON(body string) string {
	return fmt.Sprintf(`{"responses":[{"is":{"body":%q}}]}`, body)
}

func imposterJSON(port int, im modelImposter) string {
	stubs := make([]string, len(im.Stubs))
	for i, s := range im.Stubs {
		stubs[i] = stubJSON(s)
	}
	return fmt.Sprintf(`{"protocol":"http","port":%d,"name":%q,"stubs":[%s]}`, port, im.Name, strings.Join(stubs, ","))
}

// randomChange picks an admin change that is valid in state m.
func randomChange(rng *rand.Rand, m model, ports []int, seq *int) change {
	label := func() string { *seq++; return fmt.Sprintf("v%d", *seq) }
	newImposter := func() modelImposter {
		im := modelImposter{Name: label(), Stubs: []string{}}
		for n := rng.Intn(4); n > 0; n-- {
			im.Stubs = append(im.Stubs, label())
		}
		return im
	}
	var existing, free []int
	for _, p := range ports {
		if _, ok := m[p]; ok {
			existing = append(existing, p)
		} else {
			free = append(free, p)
		}
	}
	after := m.clone()
	op := rng.Intn(10)
	if len(existing) == 0 {
		op = 0
	}
	switch {
	case op <= 1 && len(free) > 0: // create
		p := free[rng.Intn(len(free))]
		im := newImposter()
		after[p] = im
		return change{"POST", "/imposters", imposterJSON(p, im), after}
	case op == 2: // replace all
		after = model{}
		var list []string
		for _, p := range ports {
			if rng.Intn(2) == 0 {
				im := newImposter()
				after[p] = im
				list = append(list, imposterJSON(p, im))
			}
		}
		return change{"PUT", "/imposters", `{"imposters":[` + strings.Join(list, ",") + `]}`, after}
	case op == 3 && rng.Intn(3) == 0: // delete all
		return change{"DELETE", "/imposters", "", model{}}
	}
	p := existing[rng.Intn(len(existing))]
	im := after[p]
	n := len(im.Stubs)
	switch {
	case op == 3:
		delete(after, p)
		return change{"DELETE", fmt.Sprintf("/imposters/%d", p), "", after}
	case op <= 5 || n == 0: // add a stub
		i, b := rng.Intn(n+1), label()
		im.Stubs = append(im.Stubs[:i], append([]string{b}, im.Stubs[i:]...)...)
		after[p] = im
		return change{"POST", fmt.Sprintf("/imposters/%d/stubs", p), fmt.Sprintf(`{"index":%d,"stub":%s}`, i, stubJSON(b)), after}
	case op == 6: // replace every stub
		im = newImposter()
		im.Name = after[p].Name
		after[p] = im
		stubs := make([]string, len(im.Stubs))
		for i, s := range im.Stubs {
			stubs[i] = stubJSON(s)
		}
		return change{"PUT", fmt.Sprintf("/imposters/%d/stubs", p), `{"stubs":[` + strings.Join(stubs, ",") + `]}`, after}
	case op == 7: // replace one stub
		i, b := rng.Intn(n), label()
		im.Stubs[i] = b
		after[p] = im
		return change{"PUT", fmt.Sprintf("/imposters/%d/stubs/%d", p, i), stubJSON(b), after}
	default: // delete one stub
		i := rng.Intn(n)
		im.Stubs = append(im.Stubs[:i], im.Stubs[i+1:]...)
		after[p] = im
		return change{"DELETE", fmt.Sprintf("/imposters/%d/stubs/%d", p, i), "", after}
	}
}

// TestDatadirSurvivesKill makes random admin changes, kills mockd with SIGKILL at a random
// moment and restarts it on the same --datadir, several times: each restart must bring back the
// last acknowledged state, or the state with the change in flight applied.
func TestDatadirSurvivesKill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ports := make([]int, 5)
	for i := range ports {
		ports[i] = listenFree(t)
	}
	httpc := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	seq, changes := 0, 0
	var acked model
	for round := 0; round < 12 && time.Now().Before(deadline); round++ {
		s := start(t, "--datadir", dir)
		got := fetchModel(t, s.Admin)
		if acked != nil && !reflect.DeepEqual(got, acked) {
			t.Fatalf("round %d: after restart the imposters are\n  %v\nwant the acknowledged\n  %v", round, got, acked)
		}
		acked = got

		var mu sync.Mutex
		var inflight model
		unknown := false // the state the server was left in is not known (a refused change, then a kill)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				c := randomChange(rng, acked, ports, &seq)
				inflight = c.after
				mu.Unlock()
				req, _ := http.NewRequest(c.method, s.Admin+c.path, strings.NewReader(c.body))
				resp, err := httpc.Do(req)
				if err != nil {
					return // killed
				}
				resp.Body.Close()
				mu.Lock()
				switch resp.StatusCode {
				case 200, 201:
					acked, inflight = c.after, nil
					changes++
				default:
					// A port taken by another process: take the server's word for the state.
					inflight = nil
					mu.Unlock()
					m, err := fetchModelErr(s.Admin)
					mu.Lock()
					if err != nil {
						unknown = true
						mu.Unlock()
						return
					}
					acked = m
				}
				mu.Unlock()
			}
		}()
		time.Sleep(time.Duration(50+rng.Intn(400)) * time.Millisecond)
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-s.exited
		close(stop)
		<-done

		// Check now, against both acceptable states, then continue from what came back.
		s2 := start(t, "--datadir", dir)
		got = fetchModel(t, s2.Admin)
		mu.Lock()
		ok := unknown || reflect.DeepEqual(got, acked) || inflight != nil && reflect.DeepEqual(got, inflight)
		if !ok {
			t.Fatalf("round %d: after kill -9 the imposters are\n  %v\nwant the acknowledged\n  %v\nor with the change in flight\n  %v", round, got, acked, inflight)
		}
		acked = got
		mu.Unlock()
		s2.stop()
	}
	if changes < 20 {
		t.Errorf("only %d changes were acknowledged; the test exercised too little", changes)
	}
	t.Logf("%d acknowledged changes", changes)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "imposters.json" {
			t.Errorf("after a clean restart the data directory still holds %s", e.Name())
		}
	}
}

// TestDatadirConfigfileWins checks that --configfile replaces what the data directory held, as
// Mountebank's start does (it PUTs the file's imposters), and that this is saved.
func TestDatadirConfigfileWins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p1, p2 := listenFree(t), listenFree(t)
	s := start(t, "--datadir", dir)
	if code, _, body := do(t, "POST", s.Admin+"/imposters", imposterJSON(p1, modelImposter{Name: "old", Stubs: []string{"a"}})); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	s.stop()
	cfg := write(t, t.TempDir(), "imposters.json", `{"imposters":[`+imposterJSON(p2, modelImposter{Name: "new", Stubs: []string{"b"}})+`]}`)
	s = start(t, "--datadir", dir, "--configfile", cfg)
	want := model{p2: {Name: "new", Stubs: []string{"b"}}}
	if got := fetchModel(t, s.Admin); !reflect.DeepEqual(got, want) {
		t.Fatalf("with --configfile: %v, want %v", got, want)
	}
	s.stop()
	s = start(t, "--datadir", dir)
	if got := fetchModel(t, s.Admin); !reflect.DeepEqual(got, want) {
		t.Fatalf("restarted without --configfile: %v, want %v", got, want)
	}
	code, _, _ := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", p2), "")
	if code != 200 {
		t.Errorf("restored imposter answered %d, want 200", code)
	}
}

// TestSaveAndReplay runs `mockd save` and `mockd replay` against a running mockd.
func TestSaveAndReplay(t *testing.T) {
	s := start(t)
	adminPort := s.Admin[strings.LastIndexByte(s.Admin, ':')+1:]
	p := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"responses":[{"is":{"body":"kept"}}]},
		{"responses":[{"proxy":{"to":"http://127.0.0.1:1"}}]}]}`, p)
	if code, _, body := do(t, "POST", s.Admin+"/imposters", imp); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(mockdBin, args...).CombinedOutput()
		return string(out), err
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		file  string
		extra []string
		query string
	}{
		{"all.json", nil, ""},
		{"noproxies.json", []string{"--removeProxies"}, "&removeProxies=true"},
	} {
		file := filepath.Join(dir, tc.file)
		args := append([]string{"save", "--port", adminPort, "--host", "127.0.0.1", "--savefile", file}, tc.extra...)
		if out, err := run(args...); err != nil {
			t.Fatalf("mockd %v: %v\n%s", args, err, out)
		}
		saved, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, _, want := do(t, "GET", s.Admin+"/imposters?replayable=true"+tc.query, "")
		if string(saved) != want {
			t.Errorf("%s:\n%s\nwant GET /imposters?replayable=true%s:\n%s", tc.file, saved, tc.query, want)
		}
	}
	if out, err := run("replay", "--port", adminPort, "--host", "127.0.0.1"); err != nil {
		t.Fatalf("mockd replay: %v\n%s", err, out)
	}
	_, _, after := do(t, "GET", s.Admin+"/imposters?replayable=true", "")
	saved, _ := os.ReadFile(filepath.Join(dir, "noproxies.json"))
	if after != string(saved) {
		t.Errorf("after replay:\n%s\nwant the imposters without proxies:\n%s", after, saved)
	}
	if code, _, body := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", p), ""); code != 200 || body != "kept" {
		t.Errorf("imposter after replay answered %d %q", code, body)
	}

	out, err := run("save", "--port", strconv.Itoa(listenFree(t)), "--savefile", filepath.Join(dir, "x.json"))
	if err == nil || !strings.Contains(out, "no mockd (or Mountebank) is running on http://localhost:") {
		t.Errorf("save without a server: err=%v output=%q; want exit 1 naming the missing server", err, out)
	}
}

// SIGTERM while a PUT /imposters replaces the imposters: after a restart on the same --datadir
// the imposters are the old ones or the new ones, as the PUT's answer said (200: the new ones;
// 503 or no answer: the old ones). Before, a PUT running beside the shutdown saw the imposter
// it replaced already stopping, saved the new ones without its deletion, and the restart ran
// both (a restart "exact" to neither state). The delays only vary where the signal lands.
func TestSIGTERMDuringAPutKeepsOneState(t *testing.T) {
	dir := t.TempDir()
	oldPort := listenFree(t)
	var b strings.Builder
	newPorts := map[int]bool{}
	b.WriteString(`{"imposters":[`)
	for i := 0; i < 40; i++ {
		port := listenFree(t)
		newPorts[port] = true
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"protocol":"http","port":%d,"name":"new","stubs":[`, port)
		for j := 0; j < 300; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"predicates":[{"equals":{"path":"/p%d"}}],"responses":[{"is":{"body":"%s"}}]}`, j, strings.Repeat("y", 100))
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	replacement := b.String()
	for _, delay := range []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		s := start(t, "--datadir", dir)
		old := fmt.Sprintf(`{"imposters":[{"protocol":"http","port":%d,"name":"old"}]}`, oldPort)
		if status, _, body := do(t, "PUT", s.Admin+"/imposters", old); status != 200 {
			t.Fatalf("PUT the old imposter: %d %s", status, body)
		}
		put := make(chan int, 1)
		go func() {
			status, _, _, err := mockdproc.Do("PUT", s.Admin+"/imposters", replacement)
			if err != nil {
				status = 0
			}
			put <- status
		}()
		time.Sleep(delay)
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		status := <-put
		if code := s.exitCode(time.Minute); code != 0 {
			t.Fatalf("exit code %d after SIGTERM", code)
		}
		s = start(t, "--datadir", dir)
		got := fetchModel(t, s.Admin)
		switch {
		case status == 200:
			if len(got) != len(newPorts) {
				t.Errorf("delay %v: the PUT answered 200, the restart runs %d imposters; want the 40 new ones", delay, len(got))
			}
			for port := range got {
				if !newPorts[port] {
					t.Errorf("delay %v: the PUT answered 200, the restart runs %d (%s)", delay, port, got[port].Name)
				}
			}
		default:
			if len(got) != 1 || got[oldPort].Name != "old" {
				t.Errorf("delay %v: the PUT answered %d, the restart runs %d imposters; want the old one alone", delay, status, len(got))
			}
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		s.exitCode(time.Minute)
	}
}

// TestDatadirSavesRecordingsWithTheNextChange: what a proxy records is saved in --datadir with
// the next acknowledged change, whichever imposter it changes (README). The change's diff was
// taken from the imposters as that change began, so a recording made before it on another
// imposter was never seen as changed, and a restart lost it.
func TestDatadirSavesRecordingsWithTheNextChange(t *testing.T) {
	dir := t.TempDir()
	s := start(t, "--datadir", dir)
	origin, proxied, other := listenFree(t), listenFree(t), listenFree(t)
	for _, imp := range []string{
		fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":"from the origin"}}]}]}`, origin),
		fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"proxy":{"to":"http://127.0.0.1:%d","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`, proxied, origin),
	} {
		if code, _, body := do(t, "POST", s.Admin+"/imposters", imp); code != 201 {
			t.Fatalf("POST: %d %s", code, body)
		}
	}
	if code, _, body := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/recorded", proxied), ""); code != 200 || body != "from the origin" {
		t.Fatalf("proxied request: %d %q", code, body)
	}
	// The next change is another imposter's.
	if code, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"http","port":%d}`, other)); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "imposters.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Imposters []struct {
			Port  int `json:"port"`
			Stubs []struct {
				Responses []struct {
					Is *struct {
						Body string `json:"body"`
					} `json:"is"`
				} `json:"responses"`
			} `json:"stubs"`
		} `json:"imposters"`
	}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatalf("imposters.json: %v\n%s", err, raw)
	}
	ports, recorded := map[int]bool{}, false
	for _, im := range saved.Imposters {
		ports[im.Port] = true
		if im.Port != proxied {
			continue
		}
		for _, st := range im.Stubs {
			for _, r := range st.Responses {
				if r.Is != nil && r.Is.Body == "from the origin" {
					recorded = true
				}
			}
		}
	}
	if !ports[origin] || !ports[proxied] || !ports[other] {
		t.Fatalf("imposters.json holds ports %v, want %d, %d and %d", ports, origin, proxied, other)
	}
	if !recorded {
		t.Errorf("imposters.json does not hold the answer imposter %d recorded before the next change:\n%s", proxied, raw)
	}
}
