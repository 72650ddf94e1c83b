package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// origin is a tiny http server on loopback that a proxy imposter forwards to.
type origin struct {
	URL  string
	srv  *http.Server
	hits atomic.Int64

	mu    sync.Mutex
	hosts []string
	query []string
}

func startOrigin(t *testing.T, gz, bin []byte) *origin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &origin{URL: "http://" + ln.Addr().String()}
	o.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := o.hits.Add(1)
		o.mu.Lock()
		o.hosts = append(o.hosts, r.Host)
		o.query = append(o.query, r.URL.RawQuery)
		o.mu.Unlock()
		switch r.URL.Path {
		case "/gz":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(gz)
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(bin)
		case "/count":
			fmt.Fprintf(w, "call %d", n)
		default:
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), body)
		}
	})}
	go func() { _ = o.srv.Serve(ln) }()
	t.Cleanup(o.stop)
	return o
}

func (o *origin) stop() { _ = o.srv.Close() }

// rawClient does not ask for or undo compression, so bodies compare byte for byte.
var rawClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true}}

func rawGet(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := rawClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func createProxyImposter(t *testing.T, s *server, body string) string {
	t.Helper()
	status, _, out := do(t, "POST", s.Admin+"/imposters", body, "Content-Type", "application/json")
	if status != 201 {
		t.Fatalf("POST /imposters = %d %s", status, out)
	}
	var got struct{ Port int }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", got.Port)
}

// TestProxyOnceRecordsAndReplaysByteForByte records gzip, binary and text answers, then replays
// them with the origin stopped.
func TestProxyOnceRecordsAndReplaysByteForByte(t *testing.T) {
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	_, _ = zw.Write([]byte(strings.Repeat("compressed text ", 100)))
	_ = zw.Close()
	bin := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(bin)
	o := startOrigin(t, zbuf.Bytes(), bin)
	s := start(t)
	imp := createProxyImposter(t, s, `{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"`+o.URL+`","predicateGenerators":[{"matches":{"path":true,"query":true}}]}}]}]}`)

	want := map[string][]byte{"/gz": zbuf.Bytes(), "/bin": bin}
	for path, body := range want {
		resp, got := rawGet(t, imp+path)
		if !bytes.Equal(got, body) {
			t.Fatalf("GET %s through the proxy: %d bytes differ from the origin's %d", path, len(got), len(body))
		}
		if te := resp.TransferEncoding; len(te) > 0 {
			t.Errorf("GET %s: Transfer-Encoding %v, want none", path, te)
		}
	}
	_, text := rawGet(t, imp+"/svc?WSDL")
	if string(text) != "GET /svc?WSDL " {
		t.Errorf("GET /svc?WSDL = %q, want %q", text, "GET /svc?WSDL ")
	}
	o.mu.Lock()
	host, query := o.hosts[len(o.hosts)-1], o.query[len(o.query)-1]
	o.mu.Unlock()
	if host != strings.TrimPrefix(o.URL, "http://") || query != "WSDL" {
		t.Errorf("origin saw host %q query %q, want %q and %q", host, query, strings.TrimPrefix(o.URL, "http://"), "WSDL")
	}

	o.stop()
	hits := o.hits.Load()
	for path, body := range want {
		_, got := rawGet(t, imp+path)
		if !bytes.Equal(got, body) {
			t.Errorf("replayed GET %s: %d bytes differ from the recorded %d", path, len(got), len(body))
		}
	}
	if _, got := rawGet(t, imp+"/svc?WSDL"); string(got) != "GET /svc?WSDL " {
		t.Errorf("replayed GET /svc?WSDL = %q", got)
	}
	if o.hits.Load() != hits {
		t.Errorf("the origin was called after it stopped")
	}
	resp, got := rawGet(t, imp+"/not-recorded")
	if resp.StatusCode != 500 || !strings.Contains(string(got), "invalid proxy") {
		t.Errorf("unrecorded path with the origin down = %d %s, want 500 invalid proxy", resp.StatusCode, got)
	}
}

// TestProxyAlwaysGroupsResponses checks that proxyAlways keeps calling the origin and records
// every answer in one stub per generated predicate set, replayed in order once the proxy is gone.
func TestProxyAlwaysGroupsResponses(t *testing.T) {
	o := startOrigin(t, nil, nil)
	s := start(t)
	imp := createProxyImposter(t, s, `{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"`+o.URL+`","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true}}]}}]}]}`)
	for i := 1; i <= 3; i++ {
		if _, got := rawGet(t, imp+"/count"); string(got) != fmt.Sprintf("call %d", i) {
			t.Fatalf("call %d through proxyAlways = %q", i, got)
		}
	}
	port := imp[strings.LastIndex(imp, ":")+1:]
	_, _, saved := do(t, "GET", s.Admin+"/imposters/"+port+"?replayable=true&removeProxies=true", "")
	var def struct {
		Stubs []struct {
			Responses []map[string]any `json:"responses"`
		} `json:"stubs"`
	}
	if err := json.Unmarshal([]byte(saved), &def); err != nil {
		t.Fatal(err)
	}
	if len(def.Stubs) != 1 || len(def.Stubs[0].Responses) != 3 {
		t.Fatalf("saved stubs = %s, want one stub with 3 responses", saved)
	}
	if strings.Contains(saved, "_proxyResponseTime") {
		t.Errorf("replayable output keeps _proxyResponseTime: %s", saved)
	}
	o.stop()
	_, _, _ = do(t, "DELETE", s.Admin+"/imposters/"+port, "")
	replay := createProxyImposter(t, s, saved)
	for i := 1; i <= 3; i++ {
		if _, got := rawGet(t, replay+"/count"); string(got) != fmt.Sprintf("call %d", i) {
			t.Errorf("replayed call %d = %q", i, got)
		}
	}
}

// TestProxyAlwaysRecordsManyKeys records 1,500 distinct keys through proxyAlways (a new stub
// each, compiled and indexed apart from those before it), some keys twice and a stub added
// through the API in the middle, then checks the imposter shows the stubs in Mountebank's order
// with their answers, and that the saved stubs replay each key.
func TestProxyAlwaysRecordsManyKeys(t *testing.T) {
	o := startOrigin(t, nil, nil)
	s := start(t)
	imp := createProxyImposter(t, s, `{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"`+o.URL+
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true,"query":true}}]}}]}]}`)
	port := imp[strings.LastIndex(imp, ":")+1:]
	type recorded struct {
		uri     string // "" for the stub added through the API
		answers int
	}
	var want []recorded
	get := func(uri string) {
		t.Helper()
		if _, got := rawGet(t, imp+uri); string(got) != "GET "+uri+" " {
			t.Fatalf("GET %s through proxyAlways = %q", uri, got)
		}
		for i := range want {
			if want[i].uri == uri {
				want[i].answers++
				return
			}
		}
		want = append(want, recorded{uri, 1})
	}
	const keys = 1500
	for i := range keys {
		get(fmt.Sprintf("/items/%d?page=%d", i, i%3))
		if i%250 == 0 {
			get(fmt.Sprintf("/items/%d?page=%d", i/2, i/2%3)) // a key recorded before
		}
		if i == 700 {
			status, _, out := do(t, "POST", s.Admin+"/imposters/"+port+"/stubs",
				`{"stub":{"predicates":[{"equals":{"path":"/api"}}],"responses":[{"is":{"body":"api"}}]}}`)
			if status != 200 {
				t.Fatalf("POST stubs = %d %s", status, out)
			}
			want = append(want, recorded{"", 1})
		}
	}
	_, _, shown := do(t, "GET", s.Admin+"/imposters/"+port, "")
	var def struct {
		Stubs []struct {
			Predicates []map[string]map[string]any `json:"predicates"`
			Responses  []struct {
				Is struct {
					Body string `json:"body"`
				} `json:"is"`
			} `json:"responses"`
		} `json:"stubs"`
	}
	if err := json.Unmarshal([]byte(shown), &def); err != nil {
		t.Fatal(err)
	}
	if len(def.Stubs) != 1+len(want) {
		t.Fatalf("%d stubs, want %d", len(def.Stubs), 1+len(want))
	}
	for i, w := range want {
		st := def.Stubs[1+i]
		if len(st.Responses) != w.answers {
			t.Fatalf("stub %d (%s) has %d responses, want %d", 1+i, w.uri, len(st.Responses), w.answers)
		}
		if w.uri == "" {
			continue
		}
		if len(st.Predicates) != 3 || fmt.Sprint(st.Predicates[1]["deepEquals"]["path"]) != strings.SplitN(w.uri, "?", 2)[0] ||
			st.Responses[0].Is.Body != "GET "+w.uri+" " {
			t.Fatalf("stub %d = %v %v, want the key %s", 1+i, st.Predicates, st.Responses[0].Is.Body, w.uri)
		}
	}
	// The saved stubs, without the proxy, replay each key with the origin stopped.
	_, _, saved := do(t, "GET", s.Admin+"/imposters/"+port+"?replayable=true&removeProxies=true", "")
	o.stop()
	_, _, _ = do(t, "DELETE", s.Admin+"/imposters/"+port, "")
	replay := createProxyImposter(t, s, saved)
	for _, w := range want {
		if w.uri == "" {
			continue
		}
		if _, got := rawGet(t, replay+w.uri); string(got) != "GET "+w.uri+" " {
			t.Fatalf("replayed GET %s = %q", w.uri, got)
		}
	}
	if _, got := rawGet(t, replay+"/api"); string(got) != "api" {
		t.Errorf("replayed /api = %q", got)
	}
}
