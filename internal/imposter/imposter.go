// Package imposter runs imposters: one listener per port, a compiled stub table that is swapped
// atomically on change, response cycling with repeat, and the request journal.
package imposter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/request"
)

// Options are the server-wide settings every imposter shares.
type Options struct {
	// Host is the address imposters bind to when their definition names none ("" = all interfaces).
	Host string
	// Debug records each stub's matches (Mountebank's --debug).
	Debug bool
	// Mock records requests on every imposter (Mountebank's --mock).
	Mock bool
	// AllowInjection permits JavaScript and shell in stubs.
	AllowInjection bool
	// JournalSize bounds the recorded requests kept per imposter (oldest dropped first); 0 = 100,000.
	JournalSize int
	// JournalBytes bounds the approximate bytes of recorded requests per imposter; 0 = 256 MiB.
	JournalBytes int
	// AllowIP, when set, decides which clients an imposter answers; others are disconnected.
	AllowIP func(net.IP) bool
	// MaxBodySize bounds request bodies; 0 = 64 MiB.
	MaxBodySize int
	// Logger receives operational messages; nil = slog.Default().
	Logger *slog.Logger
}

// stub is one stub with its run-time state. A stub keeps its state (response cycle, matches)
// for as long as it stays in the imposter, however the stubs around it change.
type stub struct {
	def       *config.Object // as configured (upcast), without matches
	responses []*response    // repeat-expanded
	next      atomic.Uint64

	mu      sync.Mutex
	matches []config.Value
}

func (s *stub) nextResponse() *response {
	i := s.next.Add(1) - 1
	return s.responses[i%uint64(len(s.responses))]
}

// table is an immutable snapshot of an imposter's stubs and their compiled predicates.
type table struct {
	stubs []*stub
	set   *match.Set
}

// Imposter is one running imposter. Its methods are safe for concurrent use.
type Imposter struct {
	opts     Options
	def      *config.Imposter
	port     int
	encoding string

	ln     net.Listener
	server *fasthttp.Server
	done   chan struct{}
	// plainIPv4 reports IPv4 clients as a.b.c.d (node does when bound to an IPv4 address)
	// rather than ::ffff:a.b.c.d.
	plainIPv4 bool

	tbl         atomic.Pointer[table]
	mu          sync.Mutex // serialises stub changes
	numRequests atomic.Int64
	journal     journal
	defaultResp *response
	log         *slog.Logger
}

// New compiles def into an imposter that is not yet listening. The returned error is a
// *config.Error carrying Mountebank's code.
func New(def *config.Imposter, opts Options) (*Imposter, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	im := &Imposter{opts: opts, def: def, port: def.Port, encoding: "utf8", log: opts.Logger}
	if def.Mode == "binary" {
		im.encoding = "base64"
	}
	im.defaultResp = compileResponse(config.NewObject("is", &config.Object{}), def.DefaultResponse, true)
	im.journal.init(opts.JournalSize, opts.JournalBytes)
	stubs := make([]*stub, 0, len(def.Stubs))
	for _, d := range def.Stubs {
		s, err := im.newStub(d)
		if err != nil {
			return nil, err
		}
		stubs = append(stubs, s)
	}
	t, err := im.compile(stubs)
	if err != nil {
		return nil, err
	}
	im.tbl.Store(t)
	return im, nil
}

func (im *Imposter) newStub(def *config.Object) (*stub, error) {
	s := &stub{def: def}
	list, _ := get(def, "responses").([]any)
	for _, rv := range list {
		r := config.AsObject(rv)
		if r == nil {
			return nil, &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: rv}
		}
		if err := checkResponse(r); err != nil {
			return nil, err
		}
		cr := compileResponse(r, im.def.DefaultResponse, true)
		for n := config.Repeat(r); n > 0; n-- {
			s.responses = append(s.responses, cr)
		}
	}
	if len(s.responses) == 0 {
		return nil, &config.Error{Code: config.CodeBadData, Message: "'responses' must be a non-empty array", Source: def}
	}
	return s, nil
}

// compile builds a table for stubs, turning predicate errors into Mountebank's errors.
func (im *Imposter) compile(stubs []*stub) (*table, error) {
	preds := make([][]any, len(stubs))
	for i, s := range stubs {
		switch p := get(s.def, "predicates").(type) {
		case []any:
			preds[i] = config.Plain(p).([]any)
		case nil:
		default:
			preds[i] = nil
		}
	}
	set, err := match.Compile(preds, match.Options{Binary: im.encoding == "base64"})
	if err != nil {
		var me *match.Error
		if errors.As(err, &me) {
			return nil, &config.Error{Code: me.Code, Message: me.Message, Source: config.FromPlain(me.Source)}
		}
		return nil, &config.Error{Code: config.CodeBadData, Message: err.Error()}
	}
	return &table{stubs: stubs, set: set}, nil
}

// Port returns the port the imposter listens on (assigned once started).
func (im *Imposter) Port() int { return im.port }

// Protocol returns the imposter's protocol.
func (im *Imposter) Protocol() string { return im.def.Protocol }

// Name returns the imposter's name ("" when unnamed).
func (im *Imposter) Name() string { return im.def.Name }

// Start binds the imposter's port and starts serving. A port in use is a "resource conflict"
// *config.Error, as in Mountebank.
func (im *Imposter) Start() error {
	host := im.def.Host
	if host == "" {
		host = im.opts.Host
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(im.port)))
	if err != nil {
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			return config.AddrInUse(host, im.port)
		case errors.Is(err, syscall.EACCES):
			return &config.Error{Code: config.CodeInsufficient, Message: "Run mb in superuser mode if you want access"}
		default:
			return &config.Error{Code: config.CodeCannotStart, Message: err.Error()}
		}
	}
	im.ln = ln
	addr := ln.Addr().(*net.TCPAddr)
	im.port = addr.Port
	im.plainIPv4 = addr.IP.To4() != nil && !addr.IP.IsUnspecified()
	im.def.Port = im.port
	maxBody := im.opts.MaxBodySize
	if maxBody <= 0 {
		maxBody = 64 << 20
	}
	im.server = &fasthttp.Server{
		Handler:                       im.handle,
		Name:                          "",
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		MaxRequestBodySize:            maxBody,
		ReadBufferSize:                16 << 10,
		IdleTimeout:                   2 * time.Minute,
	}
	im.log = im.opts.Logger.With("imposter", im.scope())
	im.server.Logger = fasthttpLogger{im.log}
	im.done = make(chan struct{})
	go func() {
		defer close(im.done)
		if err := im.server.Serve(ln); err != nil {
			im.log.Error("imposter stopped serving", "err", err)
		}
	}()
	im.log.Info("Open for business...")
	return nil
}

func (im *Imposter) scope() string {
	s := im.def.Protocol + ":" + strconv.Itoa(im.port)
	if im.def.Name != "" {
		s += " " + im.def.Name
	}
	return s
}

// Stop closes the listener and every connection, waiting up to the context's deadline for
// requests in flight.
func (im *Imposter) Stop(ctx context.Context) {
	if im.server == nil {
		return
	}
	_ = im.server.ShutdownWithContext(ctx)
	<-im.done
	im.log.Info("Ciao for now")
}

// NumberOfRequests returns how many requests the imposter has received.
func (im *Imposter) NumberOfRequests() int64 { return im.numRequests.Load() }

// Definition returns the imposter's definition. Callers must not modify it.
func (im *Imposter) Definition() *config.Imposter { return im.def }

// StubCount returns the number of stubs.
func (im *Imposter) StubCount() int { return len(im.tbl.Load().stubs) }

// ReplaceStubs validates and compiles defs and swaps them in; on error nothing changes.
// When keep is true, stubs whose definition is unchanged keep their state.
func (im *Imposter) ReplaceStubs(defs []*config.Object) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	stubs := make([]*stub, 0, len(defs))
	for _, d := range defs {
		s, err := im.newStub(d)
		if err != nil {
			return err
		}
		stubs = append(stubs, s)
	}
	return im.swap(stubs)
}

// InsertStub inserts def before index (index = StubCount() appends).
func (im *Imposter) InsertStub(def *config.Object, index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	s, err := im.newStub(def)
	if err != nil {
		return err
	}
	old := im.tbl.Load().stubs
	if index < 0 || index > len(old) {
		return &config.Error{Code: config.CodeBadData, Message: "'index' must be between 0 and the length of the stubs array"}
	}
	stubs := make([]*stub, 0, len(old)+1)
	stubs = append(stubs, old[:index]...)
	stubs = append(stubs, s)
	stubs = append(stubs, old[index:]...)
	return im.swap(stubs)
}

// ReplaceStub replaces the stub at index with def.
func (im *Imposter) ReplaceStub(def *config.Object, index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	if index < 0 || index >= len(old) {
		return &config.Error{Code: config.CodeNoSuchResource, Message: fmt.Sprintf("no stub at index %d", index)}
	}
	s, err := im.newStub(def)
	if err != nil {
		return err
	}
	stubs := append([]*stub(nil), old...)
	stubs[index] = s
	return im.swap(stubs)
}

// DeleteStub removes the stub at index.
func (im *Imposter) DeleteStub(index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	if index < 0 || index >= len(old) {
		return &config.Error{Code: config.CodeNoSuchResource, Message: fmt.Sprintf("no stub at index %d", index)}
	}
	stubs := make([]*stub, 0, len(old)-1)
	stubs = append(stubs, old[:index]...)
	stubs = append(stubs, old[index+1:]...)
	return im.swap(stubs)
}

// CheckStubs compiles defs without changing anything, returning the error an update would give.
func (im *Imposter) CheckStubs(defs []*config.Object) error {
	stubs := make([]*stub, 0, len(defs))
	for _, d := range defs {
		s, err := im.newStub(d)
		if err != nil {
			return err
		}
		stubs = append(stubs, s)
	}
	_, err := im.compile(stubs)
	return err
}

func (im *Imposter) swap(stubs []*stub) error {
	t, err := im.compile(stubs)
	if err != nil {
		return err
	}
	im.tbl.Store(t)
	im.def.Stubs = make([]*config.Object, len(stubs))
	for i, s := range stubs {
		im.def.Stubs[i] = s.def
	}
	return nil
}

// ClearRequests drops the recorded requests and resets the request count.
func (im *Imposter) ClearRequests() {
	im.journal.clear()
	im.numRequests.Store(0)
}

// handle serves one HTTP request. A panic becomes a 500 for this request only.
func (im *Imposter) handle(ctx *fasthttp.RequestCtx) {
	defer func() {
		if p := recover(); p != nil {
			im.log.Error("panic while serving a request", "panic", p, "stack", string(debug.Stack()))
			ctx.Response.Reset()
			writeError(ctx, &config.Error{Code: "internal error", Message: fmt.Sprint(p)})
		}
	}()
	if im.opts.AllowIP != nil && !im.opts.AllowIP(ctx.RemoteIP()) {
		im.log.Warn("Blocking incoming connection from " + ctx.RemoteIP().String() + ". Turn off --localOnly or add to --ipWhitelist to allow")
		_ = ctx.Conn().Close()
		return
	}
	req := request.Acquire()
	defer request.Release(req)
	request.FromHTTPListen(ctx, req, im.plainIPv4)

	im.numRequests.Add(1)
	record := im.def.RecordRequests || im.opts.Mock
	var recorded *config.Object
	if record || im.opts.Debug {
		recorded = recordedRequest(req)
	}
	if record {
		im.journal.add(recorded, time.Now())
	}

	t := im.tbl.Load()
	idx, err := t.set.Find(req)
	if err != nil {
		var me *match.Error
		if errors.As(err, &me) {
			writeError(ctx, &config.Error{Code: me.Code, Message: me.Message, Source: config.FromPlain(me.Source)})
		} else {
			writeError(ctx, &config.Error{Code: config.CodeBadData, Message: err.Error()})
		}
		return
	}
	var resp *response
	var st *stub
	if idx >= 0 {
		st = t.stubs[idx]
		resp = st.nextResponse()
	} else {
		resp = im.defaultResp
	}
	if resp.statusErr != nil {
		writeError(ctx, &config.Error{Code: "ERR_HTTP_INVALID_STATUS_CODE", Message: resp.statusErr.Error()})
		return
	}
	im.write(ctx, req, resp)
	if st != nil && im.opts.Debug {
		st.recordMatch(recorded, resp)
	}
}

func (im *Imposter) write(ctx *fasthttp.RequestCtx, req *request.Request, resp *response) {
	ctx.SetStatusCode(resp.status)
	h := &ctx.Response.Header
	for _, hd := range resp.headers {
		h.Add(hd.name, hd.value)
	}
	if im.def.AllowCORS && req.Method == "OPTIONS" {
		acrh, _ := req.Header("Access-Control-Request-Headers")
		acrm, _ := req.Header("Access-Control-Request-Method")
		origin, _ := req.Header("Origin")
		if acrh != "" && acrm != "" && origin != "" {
			setCORS(h, resp, "Access-Control-Allow-Headers", acrh)
			setCORS(h, resp, "Access-Control-Allow-Methods", acrm)
			setCORS(h, resp, "Access-Control-Allow-Origin", origin)
		}
	}
	if resp.hasConnection {
		// fasthttp honours Connection: close only through its own flag.
		if v := h.Peek("Connection"); string(v) == "close" {
			ctx.SetConnectionClose()
		}
	}
	ctx.Response.SetBodyRaw(resp.body)
}

// setCORS sets a CORS header, replacing a configured one of the same name in any case.
func setCORS(h *fasthttp.ResponseHeader, resp *response, name, value string) {
	for _, hd := range resp.headers {
		if strings.EqualFold(hd.name, name) {
			h.Del(hd.name)
			h.Set(hd.name, value)
			return
		}
	}
	h.Set(name, value)
}

// writeError answers a request that failed inside the imposter as Mountebank does: a 500 with
// its error body.
func writeError(ctx *fasthttp.RequestCtx, e *config.Error) {
	ctx.SetStatusCode(fasthttp.StatusInternalServerError)
	ctx.Response.Header.Set("content-type", "application/json")
	ctx.Response.SetBodyRaw(ErrorBody([]*config.Error{e}, 0))
}

// ErrorBody renders Mountebank's {"errors":[...]} document with the given indent.
func ErrorBody(errs []*config.Error, indent int) []byte {
	list := make([]any, 0, len(errs))
	for _, e := range errs {
		list = append(list, e.Render())
	}
	return config.MarshalJSON(config.NewObject("errors", list), indent)
}

func (s *stub) recordMatch(req *config.Object, resp *response) {
	m := config.NewObject(
		"timestamp", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"request", req,
		"response", resp.is,
		"responseConfig", resp.config,
		"processingTime", 0.0,
	)
	s.mu.Lock()
	s.matches = append(s.matches, m)
	s.mu.Unlock()
}

type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l != nil {
		f.l.Debug(fmt.Sprintf(format, args...))
	}
}
