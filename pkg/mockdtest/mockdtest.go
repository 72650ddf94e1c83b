// Package mockdtest runs mockd in-process for Go tests, the way net/http/httptest runs an HTTP
// server: New starts a mockd on 127.0.0.1 with a free admin port, loads imposters from YAML or
// Mountebank JSON (text, files or client.Imposter values), and stops it when the test ends.
//
//	func TestUsers(t *testing.T) {
//		srv := mockdtest.New(t, mockdtest.YAML(`
//	imposters:
//	  - name: users
//	    protocol: http
//	    stubs:
//	      - predicates: [{equals: {method: GET, path: /users/42}}]
//	        responses: [{is: {statusCode: 200, body: {id: 42}}}]
//	`))
//		resp, err := http.Get(srv.URL("users") + "/users/42")
//		…
//		srv.AssertCalled(t, srv.Port("users"), "GET", "/users/42", 1)
//	}
//
// Imposters without a port get a free one; find it with Port or URL by the imposter's name.
// Every imposter records its requests (as `mockd serve --mock`), so tests can read the journal
// (Requests) and assert calls (CountRequests, AssertCalled). Stubs may carry mockd's `expect`
// (times, atLeast, atMost): AssertVerified and AssertExpectations check them with GET /verify.
// Client gives the full admin API.
//
// The package is named after net/http/httptest: it is for tests, and its name says so next to
// the package it is used with (pkg/client).
package mockdtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/app"
	"github.com/mockd/mockd/pkg/client"
)

// Option configures a Server.
type Option func(*settings)

type settings struct {
	files          []string
	docs           []app.Document
	allowInjection bool
	debug          bool
	noRecording    bool
	logs           io.Writer
	protofiles     []string
	protocols      [][2]string // name, createCommand
	err            error
}

// YAML loads imposters from mockd YAML text (an `imposters:` list or a single imposter).
// Relative bodyFile paths resolve from the working directory (a test's package directory).
func YAML(text string) Option {
	return func(s *settings) { s.addDoc("yaml", []byte(text)) }
}

// JSON loads imposters from Mountebank JSON text ({"imposters": [...]} or a single imposter).
func JSON(text string) Option {
	return func(s *settings) { s.addDoc("json", []byte(text)) }
}

// Files loads config files, directories and globs, as `mockd serve -c` does.
func Files(paths ...string) Option {
	return func(s *settings) { s.files = append(s.files, paths...) }
}

// Imposters loads imposters given as Go values.
func Imposters(imps ...client.Imposter) Option {
	return func(s *settings) {
		data, err := json.Marshal(struct {
			Imposters []client.Imposter `json:"imposters"`
		}{imps})
		if err != nil {
			s.err = errors.Join(s.err, fmt.Errorf("cannot encode imposters: %w", err))
			return
		}
		s.addDoc("json", data)
	}
}

// AllowInjection lets stubs run JavaScript and shell commands (mockd's --allowInjection).
func AllowInjection() Option { return func(s *settings) { s.allowInjection = true } }

// Debug records each stub's matches (mockd's --debug).
func Debug() Option { return func(s *settings) { s.debug = true } }

// WithoutRecording leaves recording to each imposter's recordRequests instead of recording
// every request; the journal helpers then see only those imposters' requests.
func WithoutRecording() Option { return func(s *settings) { s.noRecording = true } }

// Protofile runs Mountebank's custom protocols the file names ({"name": {"createCommand":
// "program args"}}), as `mockd serve --protofile` does: an imposter of such a protocol is served
// by its program, which mockd starts when the imposter is created and stops with it (and with
// the Server). A file that is missing or not JSON fails New.
func Protofile(path string) Option {
	return func(s *settings) { s.protofiles = append(s.protofiles, path) }
}

// CustomProtocol is Protofile for one protocol given inline: the imposters of protocol name are
// served by createCommand (the program and its arguments, separated by single spaces; mockd
// appends the imposter's JSON as one more argument and runs no shell, as Mountebank does).
func CustomProtocol(name, createCommand string) Option {
	return func(s *settings) { s.protocols = append(s.protocols, [2]string{name, createCommand}) }
}

// Logs sends mockd's log lines to w (discarded by default).
func Logs(w io.Writer) Option { return func(s *settings) { s.logs = w } }

func (s *settings) addDoc(ext string, data []byte) {
	name := fmt.Sprintf("mockdtest-config-%d.%s", len(s.docs)+1, ext)
	s.docs = append(s.docs, app.Document{Name: name, Data: data})
}

// Server is an in-process mockd. Its methods are safe for concurrent use.
type Server struct {
	tb     testing.TB // nil when made by Start: failures panic
	app    *app.App
	admin  string
	client *client.Client
	once   sync.Once
}

// New starts a mockd for the test and stops it with t.Cleanup. A config error or a port that
// cannot be bound fails the test.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("mockdtest: %v", err)
	}
	s.tb = t
	t.Cleanup(s.Close)
	return s
}

// Start starts a mockd outside a test (an Example, TestMain); call Close when done. Helpers
// that cannot reach the server panic instead of failing a test.
func Start(opts ...Option) (*Server, error) {
	var st settings
	for _, o := range opts {
		o(&st)
	}
	if st.err != nil {
		return nil, st.err
	}
	appOpts := app.Options{
		Port:           0,
		Host:           "127.0.0.1",
		AllowInjection: st.allowInjection,
		Debug:          st.debug,
		Mock:           !st.noRecording,
		Console:        st.logs,
		Quiet:          st.logs == nil,
		NoMetrics:      true,
	}
	for _, path := range st.protofiles {
		specs, err := app.LoadProtofile(path)
		if err != nil {
			return nil, err
		}
		appOpts.CustomProtocols = append(appOpts.CustomProtocols, specs...)
	}
	for _, p := range st.protocols {
		appOpts.CustomProtocols = append(appOpts.CustomProtocols, app.CustomProtocol(p[0], p[1]))
	}
	if len(st.files) > 0 || len(st.docs) > 0 {
		cfg, err := app.LoadConfig(st.files, st.docs)
		if err != nil {
			return nil, err
		}
		appOpts.Config = cfg
	}
	a, err := app.New(appOpts)
	if err != nil {
		return nil, err
	}
	if err := a.Start(); err != nil {
		return nil, err
	}
	port := a.Addr().(*net.TCPAddr).Port
	admin := "http://127.0.0.1:" + strconv.Itoa(port)
	return &Server{app: a, admin: admin, client: client.New(admin)}, nil
}

// Close stops the admin API and every imposter, waiting up to 5 seconds for requests in flight.
// Calling it again does nothing.
func (s *Server) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.app.Stop(ctx)
	})
}

// AdminURL is the admin API's base URL, e.g. "http://127.0.0.1:40123".
func (s *Server) AdminURL() string { return s.admin }

// Client returns a client of the server's admin API.
func (s *Server) Client() *client.Client { return s.client }

// Imposter is a running imposter: its name, port, protocol and base URL.
type Imposter struct {
	Name     string
	Port     int
	Protocol string
	// URL is "http://127.0.0.1:PORT" (https://, tcp://, smtp:// for the other protocols).
	URL string
}

// Imposters lists the running imposters, ordered by port.
func (s *Server) Imposters() ([]Imposter, error) {
	list, err := s.client.Imposters(context.Background(), client.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]Imposter, 0, len(list))
	for _, imp := range list {
		out = append(out, Imposter{Name: imp.Name, Port: imp.Port, Protocol: imp.Protocol, URL: imposterURL(imp.Protocol, imp.Port)})
	}
	slices.SortFunc(out, func(a, b Imposter) int { return a.Port - b.Port })
	return out, nil
}

func imposterURL(protocol string, port int) string {
	return protocol + "://127.0.0.1:" + strconv.Itoa(port)
}

// Port returns the port of the imposter named name; it fails the test when there is none.
func (s *Server) Port(name string) int {
	return s.byName(name).Port
}

// URL returns the base URL of the imposter named name, e.g. "http://127.0.0.1:40124"; it fails
// the test when there is none.
func (s *Server) URL(name string) string {
	return s.byName(name).URL
}

func (s *Server) byName(name string) Imposter {
	imps, err := s.Imposters()
	if err != nil {
		s.fail("listing imposters: %v", err)
		return Imposter{}
	}
	var names []string
	for _, imp := range imps {
		if imp.Name == name {
			return imp
		}
		names = append(names, strconv.Quote(imp.Name))
	}
	s.fail("no imposter is named %q (names: %s)", name, strings.Join(names, ", "))
	return Imposter{}
}

// Requests returns the requests the imposter on port received, oldest first.
func (s *Server) Requests(port int) []client.Request {
	reqs, err := s.client.Requests(context.Background(), port)
	if err != nil {
		s.fail("reading the requests of imposter %d: %v", port, err)
	}
	return reqs
}

// CountRequests counts the requests the imposter on port received with method (any when "")
// and path (any when ""); the method compares without case, the path exactly.
func (s *Server) CountRequests(port int, method, path string) int {
	return countMatching(s.Requests(port), method, path)
}

func countMatching(reqs []client.Request, method, path string) int {
	n := 0
	for _, r := range reqs {
		if (method == "" || strings.EqualFold(r.Method, method)) && (path == "" || r.Path == path) {
			n++
		}
	}
	return n
}

// AssertCalled reports an error on t unless the imposter on port received exactly times
// requests with method and path (either "" for any), listing the requests it did receive.
func (s *Server) AssertCalled(t testing.TB, port int, method, path string, times int) {
	t.Helper()
	reqs, err := s.client.Requests(context.Background(), port)
	if err != nil {
		t.Errorf("mockdtest: reading the requests of imposter %d: %v", port, err)
		return
	}
	if n := countMatching(reqs, method, path); n != times {
		seen := make([]string, len(reqs))
		for i, r := range reqs {
			seen[i] = r.Method + " " + r.Path
		}
		t.Errorf("imposter %d received %d requests %s %s, want %d; it received: [%s]",
			port, n, orAny(method), orAny(path), times, strings.Join(seen, ", "))
	}
}

func orAny(s string) string {
	if s == "" {
		return "(any)"
	}
	return s
}

// Verify returns mockd's verdict (GET /verify): stubs whose expect was not met, stubs that
// answered nothing (unless allowUnused) and requests that matched no stub.
func (s *Server) Verify(allowUnused bool) *client.Verdict {
	v, err := s.client.Verify(context.Background(), 0, allowUnused)
	if err != nil {
		s.fail("verifying: %v", err)
	}
	return v
}

// AssertVerified reports an error on t for every stub whose expect was not met, every stub
// that answered no request and every request that matched no stub.
func (s *Server) AssertVerified(t testing.TB) {
	t.Helper()
	s.assertVerdict(t, false)
}

// AssertExpectations is AssertVerified with unused stubs allowed: only unmet expects and
// requests that matched no stub are errors.
func (s *Server) AssertExpectations(t testing.TB) {
	t.Helper()
	s.assertVerdict(t, true)
}

func (s *Server) assertVerdict(t testing.TB, allowUnused bool) {
	t.Helper()
	v, err := s.client.Verify(context.Background(), 0, allowUnused)
	if err != nil {
		t.Errorf("mockdtest: verifying: %v", err)
		return
	}
	for _, imp := range v.Imposters {
		for _, st := range imp.Stubs {
			switch {
			case st.Status == "failed":
				t.Errorf("imposter %d stub %d %s: %s", imp.Port, st.Index, st.Predicates, st.Message)
			case st.Status == "unused" && !allowUnused:
				t.Errorf("imposter %d stub %d %s: answered no request", imp.Port, st.Index, st.Predicates)
			}
		}
		for _, u := range imp.Unmatched {
			t.Errorf("imposter %d: a request matched no stub: %s\n%s", imp.Port, u.Request, u.Why)
		}
		if n := imp.UnmatchedRequests - len(imp.Unmatched); n > 0 {
			t.Errorf("imposter %d: %d requests matched no stub", imp.Port, n)
		}
	}
}

// ResetRequests empties the journal of every imposter.
func (s *Server) ResetRequests() {
	imps, err := s.Imposters()
	if err != nil {
		s.fail("listing imposters: %v", err)
		return
	}
	var errs []error
	for _, imp := range imps {
		if _, err := s.client.DeleteSavedRequests(context.Background(), imp.Port); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.fail("resetting requests: %v", err)
	}
}

func (s *Server) fail(format string, args ...any) {
	if s.tb == nil {
		panic("mockdtest: " + fmt.Sprintf(format, args...))
	}
	s.tb.Helper()
	s.tb.Fatalf("mockdtest: "+format, args...)
}
