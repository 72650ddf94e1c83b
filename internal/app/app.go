// Package app wires mockd together: config, imposters and the admin API. It handles no signals and
// never exits the process, so tests can embed it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/admin"
	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/customproto"
	"github.com/mockd/mockd/internal/imposter/httpserver"
	"github.com/mockd/mockd/internal/imposter/servers"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/script"
	"github.com/mockd/mockd/internal/store"
	"github.com/mockd/mockd/internal/verdict"
)

// MountebankVersion is the Mountebank release whose behaviour mockd reproduces.
const MountebankVersion = "2.9.1"

// Options are everything `mockd start`/`serve` can set; BindFlags declares them as flags. Zero
// values are Mountebank's defaults except Port (the caller sets 2525 or 0).
type Options struct {
	Port int
	Host string
	// Config holds the imposters to start with (config.Load); nil = none.
	Config         *config.Config
	AllowInjection bool
	LocalOnly      bool
	IPWhitelist    []string
	Mock           bool
	Debug          bool
	LogLevel       string
	// LogFormat is "text" (Mountebank's "level: message" lines, the default) or "json" (one
	// JSON object a line, as in the log file) for the console.
	LogFormat string
	LogFile   string
	// NoLogFile hides the logs from GET /logs, as Mountebank's --nologfile does.
	NoLogFile bool
	APIKey    string
	Origin    string
	// ScriptTimeout bounds every JavaScript call and shell command; 0 = script.DefaultTimeout.
	ScriptTimeout time.Duration
	// ScriptMemory bounds how much the heap may grow during one script call; 0 =
	// script.DefaultMemoryLimit, negative = no limit.
	ScriptMemory int64
	// IdleTimeout closes connections that wait longer for their next request (imposters and
	// the admin API); 0 = 2 minutes.
	IdleTimeout time.Duration
	// JournalSize and JournalBytes bound each imposter's recorded requests (the oldest go
	// first); 0 = 100,000 requests and 256 MiB.
	JournalSize, JournalBytes int
	// HeaderTimeout bounds the time an http request (imposter or admin API) takes to arrive,
	// from its first byte until it is read in full; 0 = no limit.
	HeaderTimeout time.Duration
	// Netpoller is how the connections of http, https and tcp imposters wait for data; "" =
	// netconn.PollerFIFO (in arrival order), netconn.PollerGo = Go's runtime poller.
	Netpoller netconn.Poller
	// FileRoots are directories files named in stubs (a lookup's CSV) may be read from, besides
	// the working directory; the command adds the config files' directories. Ignored with
	// AllowInjection, which lets stubs read any file.
	FileRoots []string
	// MaxBody bounds request bodies (also after decompression), tcp requests and smtp
	// messages; 0 = 64 MiB.
	MaxBody int
	// AdminMaxBody bounds each admin API request body, and those it reads at once together;
	// 0 = DefaultAdminMaxBody.
	AdminMaxBody int
	// AdminMaxIndent bounds the indentation an admin API answer gives a JSON body it reads
	// (see admin.Options.MaxIndent); 0 = DefaultAdminMaxIndent, negative = no limit.
	AdminMaxIndent int
	// DrainTimeout bounds how long a deleted imposter lets its requests in flight finish;
	// 0 = 10 s. (Stop's context bounds it at shutdown.)
	DrainTimeout time.Duration
	// NoMetrics turns request metrics and GET /metrics off.
	NoMetrics bool
	// PidFile is only reported by GET /config; the command writes the file.
	PidFile string
	// NoParse keeps JSON config files from being rendered as EJS templates; the command that
	// loads the files reads it (config.LoadOptions.Render).
	NoParse bool
	// VerdictFile, when set, is where the command writes the verdict of GET /verify at shutdown.
	VerdictFile string
	// Console receives log lines; nil = os.Stdout.
	Console io.Writer
	// CustomProtocols are the protocols of the --protofile (customproto.Load): their imposters
	// are served by the programs it names.
	CustomProtocols []customproto.Spec
	// Protofile is the --protofile path GET /config reports; "" = protocols.json.
	Protofile string
	// Quiet discards console log lines (tests).
	Quiet bool
	// Listener, when set, is where the admin API is served instead of a listener on Host:Port
	// (tests pass fasthttputil's in-memory listener); Start takes it over and Stop closes it.
	Listener net.Listener
	// DataDir, when set, persists every imposter change there before it is acknowledged, and
	// the imposters saved there are started when Config is nil (Mountebank's --datadir).
	DataDir string
	// Store, when set (redis://host:port/db), shares the imposters and their stubs' state
	// with the other nodes that use the same store (see README "Running several nodes").
	Store string
	// StoreInit says what the imposters of Config do to the store at start: "merge" (the
	// default) adds those on ports the store has none for, "replace" makes them all the store
	// holds, "skip" leaves the store as it is (the node runs what the store holds).
	StoreInit string
	// StoreWait is how long Start waits for an unreachable store; 0 = fail at once.
	StoreWait time.Duration
	// NodeName names this node among those sharing the store; "" = the host (--host, else
	// the machine's name) and the admin port.
	NodeName string
	// StoreScriptState keeps the state of the imposters' scripts (injection `state`) in the
	// store, for every node, rather than in each node; it needs Store.
	StoreScriptState bool
}

// StoreInitModes are the values of Options.StoreInit.
var StoreInitModes = []string{"merge", "replace", "skip"}

// RenderEJS renders a Mountebank config file as an EJS template, as mb start --configfile does.
func RenderEJS(file string) (string, error) { return script.RenderEJS(file) }

// Validate loads files and compiles every imposter in them without starting anything.
func Validate(files []string, allowInjection bool) (int, error) {
	n, _, err := Check(files, allowInjection, nil)
	return n, err
}

// CheckDocument is Check of one config document held in memory (YAML or JSON by its name, as a
// file would be read), without a server block's protofile: what mockd convert checks its output
// with.
func CheckDocument(name string, data []byte, allowInjection bool) ([]string, error) {
	cfg, err := config.LoadDocuments(nil, []config.Document{{Name: name, Data: data}}, config.LoadOptions{ServerKeys: ServerKeys()})
	if err != nil {
		return nil, err
	}
	_, warnings, err := BuildImposters(imposter.NewRegistry(imposter.Options{}), cfg, allowInjection)
	return warnings, err
}

// Check is Validate that also returns the warnings: problems of Mountebank JSON files that
// Mountebank accepts (mockd YAML refuses them) and stubs that can never match. The imposters
// of the custom protocols (--protofile, else the server block's protofile) have their stubs
// compiled as a server compiles them (predicates, behaviors, scripts; responses are the
// program's objects), and no program runs.
func Check(files []string, allowInjection bool, custom []customproto.Spec) (int, []string, error) {
	cfg, err := config.LoadWith(files, config.LoadOptions{Render: RenderEJS, ServerKeys: ServerKeys()})
	if err != nil {
		return 0, nil, err
	}
	if p, ok := cfg.Server.Get("protofile"); ok && custom == nil { // the server block's, unless given
		path, _ := p.(string)
		if custom, err = LoadProtofile(path); err != nil {
			return 0, nil, fmt.Errorf("server.%w", err) // server.protofile FILE: …
		}
	}
	var names map[string]bool
	for _, s := range custom {
		if names == nil {
			names = map[string]bool{}
		}
		names[s.Name] = true
	}
	built, warnings, err := BuildImposters(imposter.NewRegistry(imposter.Options{Custom: names}), cfg, allowInjection)
	return len(built), warnings, err
}

// Compilers are what config.CheckImposter compiles regexes, selectors and scripts with.
func Compilers(allowInjection bool) config.Compilers { return compilers(allowInjection) }

func compilers(allowInjection bool) config.Compilers {
	c := config.Compilers{Regex: match.CheckRegex, XPath: match.CheckXPath, JSONPath: match.CheckJSONPath}
	if allowInjection {
		c.Script = script.New(script.Options{}).Check
	}
	return c
}

// consoleWording rewords the Mountebank error messages that name `mb` for a user who runs mockd.
// The admin API keeps Mountebank's words: clients compare them.
var consoleWording = strings.NewReplacer(
	"unless mb is run with the --allowInjection flag", "unless mockd is run with --allowInjection",
	"Run mb in superuser mode if you want access", "ports below 1024 need root (or the CAP_NET_BIND_SERVICE capability)",
	"protocol is not yet supported", "protocol is not yet supported (mockd serves http, https, tcp and smtp; a custom protocol needs the --protofile that names its program)",
)

// ForConsole returns an error message from the model, worded for the command line rather than
// for Mountebank's API.
func ForConsole(msg string) string { return consoleWording.Replace(msg) }

// App is one mockd server.
type App struct {
	opts     Options
	custom   *customproto.Options // what custom protocols' programs are told
	logs     *logs.Core
	log      *slog.Logger
	reg      *imposter.Registry
	api      *admin.API
	ln       net.Listener
	server   *fasthttp.Server
	il       *netconn.IdleListener
	done     chan struct{}
	initial  []*imposter.Imposter
	metrics  *metrics.Registry
	logClose io.Closer
	dir      *store.Dir   // nil without --datadir
	redis    *store.Redis // nil without --store
	// With --store: flushCounts stops when stopFlush closes, after drained closes (the
	// imposters have stopped), and closes flushed when done.
	stopFlush, flushed, drained chan struct{}
	stopped                     []*imposter.Imposter // what Stop stopped, for Verdict

	reloadMu sync.Mutex
	// loaded is what the config files defined at the last (re)load, by imposter key.
	loaded map[string]loadedImposter
}

// New loads and validates the configuration; nothing listens yet. A config error is returned
// with every problem, each naming file, line and field.
func New(opts Options) (*App, error) {
	level, err := logs.ParseLevel(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	jsonLines, err := logs.ParseFormat(opts.LogFormat)
	if err != nil {
		return nil, err
	}
	a := &App{opts: opts}
	var console io.Writer = os.Stdout
	if opts.Console != nil {
		console = opts.Console
	}
	if opts.Quiet {
		console = nil
	}
	var file io.Writer
	if opts.LogFile != "" {
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot open log file: %w", err)
		}
		file, a.logClose = f, f
	}
	a.logs = logs.New(logs.Options{Level: level, Console: console, JSON: jsonLines, File: file})
	a.log = slog.New(a.logs.Handler("mb:" + strconv.Itoa(opts.Port)))

	if !opts.NoMetrics {
		a.metrics = metrics.New()
	}
	var engine *script.Engine
	if opts.AllowInjection {
		engine = script.New(script.Options{Timeout: opts.ScriptTimeout, Logger: a.log, MemoryLimit: opts.ScriptMemory})
	}
	if opts.StoreScriptState && opts.Store == "" {
		a.closeFiles()
		return nil, errors.New("--store-script-state needs --store: without one, script state is kept by the node")
	}
	if opts.Store != "" {
		if err := a.openStore(); err != nil {
			a.closeFiles()
			return nil, err
		}
	}
	protocols, custom := a.protocols()
	a.reg = imposter.NewRegistry(imposter.Options{
		Protocols: protocols,
		Custom:    custom,
		Shared:    a.sharedState(),
		Script:    engine,
		Metrics:   a.metrics,
		Host:      opts.Host,
		Debug:     opts.Debug,
		Mock:      opts.Mock,
		AllowIP:   ipFilter(opts.LocalOnly, opts.IPWhitelist, loopbackIPs()),
		Logger:    a.log,

		HeaderTimeout: opts.HeaderTimeout,
		IdleTimeout:   opts.IdleTimeout,
		Poller:        opts.Netpoller,
		DrainTimeout:  opts.DrainTimeout,
		MaxBodySize:   opts.MaxBody,
		Files:         fileRules(opts),
		JournalSize:   opts.JournalSize,
		JournalBytes:  opts.JournalBytes,
	})
	cfg := opts.Config
	if opts.DataDir != "" {
		if a.dir, err = store.Open(opts.DataDir); err != nil {
			a.closeFiles()
			return nil, err
		}
		if cfg == nil {
			if cfg, err = a.dir.Load(); err != nil {
				a.closeFiles()
				return nil, err
			}
		}
	}
	if cfg != nil {
		list, warnings, err := buildImposters(a.reg, cfg, opts.AllowInjection)
		if err != nil {
			a.closeFiles()
			return nil, err
		}
		for _, b := range list {
			if a.dir != nil && opts.Config == nil {
				if next := a.dir.NextOf(b.im.Port()); next != nil {
					b.im.SetNext(next) // its response cycles go on from where they were saved
				}
			}
			a.initial = append(a.initial, b.im)
		}
		if opts.Config != nil {
			a.loaded = loadedOf(list)
		}
		for _, w := range warnings {
			a.log.Warn("config: " + w)
		}
	}
	// Built: the documents loaded are not kept (the imposters keep what they echo; 100,000
	// stubs from a file were held twice).
	a.opts.Config = nil
	return a, nil
}

// fileRules are the rules for files stubs name: any regular file with --allowInjection (which
// allows shell commands anyway), otherwise only under the working directory and FileRoots.
func fileRules(opts Options) *behavior.Files {
	if opts.AllowInjection {
		return behavior.NewFiles(nil, 0)
	}
	return behavior.NewFiles(append([]string{"."}, opts.FileRoots...), 0)
}

// BuildImposters validates and compiles every imposter of cfg with reg's options, collecting all
// problems, each located in its file, and the warnings. A YAML imposter is checked strictly
// (config.CheckImposter: every key, type, regex, selector and, with allowInjection, script); the
// same checks only warn about a Mountebank JSON imposter, which loads as Mountebank loads it.
func BuildImposters(reg *imposter.Registry, cfg *config.Config, allowInjection bool) ([]*imposter.Imposter, []string, error) {
	list, warnings, err := buildImposters(reg, cfg, allowInjection)
	if err != nil {
		return nil, warnings, err
	}
	out := make([]*imposter.Imposter, len(list))
	for i, b := range list {
		out[i] = b.im
	}
	return out, warnings, nil
}

// built is one imposter compiled from a config source.
type built struct {
	src *config.Source
	def *config.Imposter
	im  *imposter.Imposter
}

func buildImposters(reg *imposter.Registry, cfg *config.Config, allowInjection bool) ([]built, []string, error) {
	var out []built
	var problems, warnings []string
	ports := map[int]string{}
	check := compilers(allowInjection)
	for _, src := range cfg.Imposters {
		checkFailed := false
		// A custom protocol's imposter has fields and responses of its own, which only its
		// program knows: the checker, which knows mockd's protocols, does not look at it, nor
		// at an imposter of a protocol that is neither mockd's nor a near miss of one (a custom
		// protocol without its --protofile: its unknown protocol is the one problem reported).
		var problemsFound []config.Problem
		if !customProtocol(src.Value, reg.Custom()) && !unknownProtocol(src.Value, reg.Custom()) {
			problemsFound = config.CheckImposter(src.Value, src.Path, check)
		}
		for _, p := range problemsFound {
			switch {
			case p.Warning || !src.Strict():
				warnings = append(warnings, src.Locate(p.Path, p.Message))
			default:
				problems = append(problems, src.Locate(p.Path, p.Message))
				checkFailed = true
			}
		}
		// The documents are the loader's, read once: the stubs keep their values (not copies).
		def, errs := config.ParseImposter(src.Value, config.ParseOptions{AllowInjection: allowInjection, Path: src.Path, Owned: true, Custom: reg.Custom()})
		for _, e := range errs {
			msg := ForConsole(e.Message)
			if e.Path == config.JoinPath(src.Path, "protocol") {
				if hint := protocolHint(src.Value, reg.Custom()); hint != "" {
					msg = e.Message + " (did you mean " + strconv.Quote(hint) + "?)"
				}
			}
			problems = append(problems, src.Locate(e.Path, msg))
		}
		if def == nil || checkFailed {
			// A failed check says more precisely what compiling would fail on.
			continue
		}
		if def.Port != 0 {
			where := src.Locate(config.JoinPath(src.Path, "port"), "")
			if prev, dup := ports[def.Port]; dup {
				problems = append(problems, src.Locate(config.JoinPath(src.Path, "port"),
					fmt.Sprintf("port %d is already used by the imposter at %s", def.Port, strings.TrimSuffix(prev, ": "))))
			}
			ports[def.Port] = where
		}
		im, err := reg.Build(def)
		if err != nil {
			var list config.Errors
			var one *config.Error
			switch {
			case errors.As(err, &list):
			case errors.As(err, &one):
				list = config.Errors{one}
			default:
				problems = append(problems, src.Locate(src.Path, ForConsole(err.Error())))
				continue
			}
			for _, ce := range list {
				path := ce.Path
				if path == "" {
					path = "stubs"
				}
				problems = append(problems, src.Locate(config.JoinPath(src.Path, path), ForConsole(ce.Message)))
			}
			continue
		}
		out = append(out, built{src: src, def: def, im: im})
	}
	if len(problems) > 0 {
		return nil, warnings, &config.LoadError{Problems: problems}
	}
	return out, warnings, nil
}

// Start listens on the admin port and starts every configured imposter. On error everything
// started is stopped again.
func (a *App) Start() error {
	ln := a.opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort(a.opts.Host, strconv.Itoa(a.opts.Port))); err != nil {
			if errors.Is(err, errAddrInUse) || strings.Contains(err.Error(), "address already in use") {
				return fmt.Errorf("cannot start admin API: port %d is already in use", a.opts.Port)
			}
			return fmt.Errorf("cannot start admin API: %w", err)
		}
	}
	if tl, ok := ln.(*net.TCPListener); ok {
		// The runtime's poller serves the admin API, with raw reads and writes: a client
		// suite's one connection creating and deleting imposters does not wake the runtime's
		// monitor thread on every request (see netconn).
		ln = netconn.RawIOListener(tl)
	}
	a.ln = ln
	port := a.opts.Port
	if addr, ok := ln.Addr().(*net.TCPAddr); ok {
		port = addr.Port
	}
	a.log = slog.New(a.logs.Handler("mb:" + strconv.Itoa(port)))
	a.callbackURL(port)
	if a.opts.AllowInjection {
		// Mountebank's first log entry under --allowInjection; client suites read GET /logs by index.
		host := a.opts.Host
		if host == "" {
			host = "localhost"
		}
		a.log.Warn(fmt.Sprintf("Running with --allowInjection set. See http://%s:%d/docs/security for security info", host, port))
	}
	node := a.nodeName(port)
	if a.redis != nil {
		a.redis.SetNode(node, ln.Addr().String())
		if err := a.redis.Connect(context.Background(), a.opts.StoreWait); err != nil {
			_ = ln.Close()
			a.closeFiles()
			return err
		}
	}
	a.api = admin.New(a.reg, admin.Options{
		Node:           node,
		Address:        ln.Addr().String(),
		Port:           port,
		APIKey:         a.opts.APIKey,
		AllowIP:        ipFilter(a.opts.LocalOnly, a.opts.IPWhitelist, loopbackIPs()),
		AllowInjection: a.opts.AllowInjection,
		Custom:         a.reg.Custom(),
		Origin:         a.opts.Origin,
		Version:        MountebankVersion,
		PublicOptions:  a.publicOptions(port),
		Logs:           a.logEntries(),
		Metrics:        a.metrics,
		Logger:         a.log,
		Store:          a.adminStore(),
		MaxIndent:      adminMaxIndent(a.opts.AdminMaxIndent),
	})
	maxBody := a.opts.AdminMaxBody
	if maxBody <= 0 {
		maxBody = DefaultAdminMaxBody
	}
	a.server = &fasthttp.Server{
		Handler:               netconn.TrackRequests((&bodyBudget{max: maxBody}).handler(a.api.Handler)),
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		// The handler reads the bodies (bodyBudget), so that those read at once are bounded.
		StreamRequestBody:            true,
		MaxRequestBodySize:           maxBody,
		DisablePreParseMultipartForm: true,
		// A header block of up to 16 KiB, as the imposters read (node's maxHeaderSize): with
		// fasthttp's default of 4 KiB the admin API answered 431 to 1,000 small headers,
		// which Mountebank's admin API and every imposter take.
		ReadBufferSize: httpserver.MaxHeaderBytes,
		ErrorHandler:   httpserver.ErrorHandler(maxBody),
		ConnState:      netconn.IdleConnState, // with the IdleListener below
		Logger:         quietLogger{},
	}
	a.il = netconn.NewIdleListener(netconn.NewRetryListener(ln, a.log).KeepReserve(),
		netconn.ListenOptions{IdleTimeout: a.opts.IdleTimeout, HeaderTimeout: a.opts.HeaderTimeout})
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		_ = a.server.Serve(a.il)
	}()
	if len(a.initial) > 0 && (a.redis == nil || a.opts.StoreInit != "skip") {
		if _, err := a.reg.ReplaceAll(a.initial); err != nil {
			a.abort()
			var ce *config.Error
			if errors.As(err, &ce) {
				return fmt.Errorf("cannot start imposter: %s", ForConsole(ce.Message))
			}
			return fmt.Errorf("cannot start imposter: %w", err)
		}
	}
	if a.dir != nil {
		if err := a.api.SaveAll(context.Background()); err != nil {
			a.abort()
			return err
		}
	}
	if a.redis != nil {
		if err := a.api.InitStore(context.Background(), a.opts.StoreInit); err != nil {
			a.abort()
			return fmt.Errorf("cannot start from the store: %w", err)
		}
		a.redis.Run(a.api.StoreChanged)
		a.stopFlush, a.flushed, a.drained = make(chan struct{}), make(chan struct{}), make(chan struct{})
		go a.flushCounts(a.stopFlush, a.flushed)
	}
	a.log.Info(fmt.Sprintf("mountebank v%s (mockd %s) now taking orders - point your browser to http://localhost:%d/ for help",
		MountebankVersion, BuildInfo().Version, port))
	return nil
}

var errAddrInUse = errors.New("address already in use")

// adminStore is the store the admin API saves to: Redis, the data directory, or the
// process's memory.
func (a *App) adminStore() admin.Store {
	switch {
	case a.redis != nil:
		return a.redis
	case a.dir != nil:
		return a.dir
	}
	return store.NewMemory()
}

// openStore checks the --store options and opens the Redis store; it connects in Start.
func (a *App) openStore() error {
	if a.opts.DataDir != "" {
		return errors.New("--store and --datadir cannot be used together: the store keeps the imposters")
	}
	if a.opts.StoreScriptState && !a.opts.AllowInjection {
		a.log.Warn("--store-script-state does nothing without --allowInjection: no script can run")
	}
	if a.opts.StoreInit == "" {
		a.opts.StoreInit = "merge"
	} else if !slices.Contains(StoreInitModes, a.opts.StoreInit) {
		return fmt.Errorf("--store-init: %q is none of %s", a.opts.StoreInit, strings.Join(StoreInitModes, ", "))
	}
	var err error
	ropts := store.RedisOptions{URL: a.opts.Store, Logger: a.log, JournalSize: a.opts.JournalSize, ScriptState: a.opts.StoreScriptState}
	if a.metrics != nil {
		ropts.Observe = a.metrics.ObserveStore
	}
	a.redis, err = store.OpenRedis(ropts)
	return err
}

// sharedState is what the imposters share through the store; nil without --store.
func (a *App) sharedState() imposter.Shared {
	if a.redis == nil {
		return nil
	}
	return sharedState{a.redis}
}

// sharedState gives imposters their state in Redis.
type sharedState struct{ *store.Redis }

func (s sharedState) Imposter(id string) imposter.SharedImposter { return s.Redis.Imposter(id) }

var (
	_ imposter.SharedImposter = (*store.RedisImposter)(nil)
	_ script.SharedState      = (*store.RedisImposter)(nil)
)

// flushEvery is how often a node stores the counts of its imposters (hits, requests,
// no-matches) when it shares them: other nodes see them that much later.
const flushEvery = 100 * time.Millisecond

// flushCounts stores the imposters' counts every flushEvery until stop closes, then once more
// for those Stop stopped; done closes when it returns. After the store was lost it stores every
// count again, in case the store lost them.
func (a *App) flushCounts(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	seen := a.redis.Comebacks()
	flush := func(list []*imposter.Imposter, all bool) bool {
		ok := true
		for _, im := range list {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := im.FlushCounts(ctx, all); err != nil {
				ok = false
			}
			cancel()
		}
		return ok
	}
	for {
		select {
		case <-stop:
			<-a.drained
			flush(a.stopped, false)
			return
		case <-tick.C:
		}
		back := a.redis.Comebacks()
		if flush(a.reg.Listing().Imposters, back != seen) {
			seen = back
		}
	}
}

// nodeName is Options.NodeName or, by default, the host and admin port.
func (a *App) nodeName(port int) string {
	if a.opts.NodeName != "" {
		return a.opts.NodeName
	}
	host := a.opts.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// Addr returns the admin API's address once started.
func (a *App) Addr() net.Addr {
	if a.ln == nil {
		return nil
	}
	return a.ln.Addr()
}

// Registry returns the running imposters.
func (a *App) Registry() *imposter.Registry { return a.reg }

// Stop stops accepting connections on the admin port and every imposter's, lets the requests
// in flight finish until ctx ends (their connections close after the answer), then closes every
// connection that is left.
func (a *App) Stop(ctx context.Context) {
	a.shutdown(ctx)
	a.saveLast(ctx)
	a.log.Info("Adios - see you soon?")
	a.closeFiles()
}

// saveLast saves, with --datadir, the imposters Stop stopped once their requests in flight
// are over: where their stubs are in their response cycles (store.Imposter.Next), and what
// their proxies recorded since the last change, so that a restart goes on from there as
// Mountebank's does (it saves both as each request is answered). After kill -9 a restart has
// them as of the last change the API acknowledged.
func (a *App) saveLast(ctx context.Context) {
	if a.dir == nil || a.stopped == nil {
		return
	}
	ch := store.Change{Replace: true}
	for _, im := range a.stopped {
		ch.Put = append(ch.Put, admin.StoredImposter(im))
	}
	if _, err := a.dir.Save(ctx, ch); err != nil {
		a.log.Warn("cannot save the imposters as they stopped: " + err.Error())
	}
}

// abort undoes a Start that failed, saying nothing: the caller reports the error.
func (a *App) abort() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing was served that could be in flight
	a.shutdown(ctx)
	a.closeFiles()
}

func (a *App) shutdown(ctx context.Context) {
	if a.api != nil {
		a.api.Close(ctx) // the change under way is made and saved; later ones are refused
	}
	if a.redis != nil {
		a.redis.Stop() // nothing from the store may start an imposter again
		defer a.redis.Close()
		if a.stopFlush != nil {
			close(a.stopFlush)
			defer func() { <-a.flushed }() // the last counts, before Close
		}
	}
	if a.il != nil {
		_ = a.il.Close() // ends the server's accept loop, whether or not it has begun
		<-a.done
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		a.stopped = a.reg.Shutdown(ctx)
	}()
	if a.il != nil {
		_ = a.il.Shutdown(ctx)
		a.il = nil
	}
	<-drained
	if a.drained != nil {
		close(a.drained)
	}
}

// Verdict verifies the running imposters or, once stopped, those Stop stopped (GET /verify's
// answer); stubs that answered nothing fail it unless allowUnused.
func (a *App) Verdict(allowUnused bool) *verdict.Verdict {
	list := a.reg.All()
	if a.stopped != nil {
		list = a.stopped
	}
	return imposter.Verify(list, allowUnused)
}

// logEntries is what GET /logs serves: nothing with --nologfile, as Mountebank.
func (a *App) logEntries() func() []any {
	if a.opts.NoLogFile {
		return nil
	}
	return a.logs.Entries
}

// closeFiles closes the log file and releases the data directory's lock if a server that fails
// to start still holds it: the last thing a server that stops, or fails to start, does.
func (a *App) closeFiles() {
	if a.dir != nil {
		_ = a.dir.Close()
	}
	a.logs.Close()
	if a.logClose != nil {
		_ = a.logClose.Close()
		a.logClose = nil
	}
}

// publicOptions is what GET /config reports, with Mountebank's option names and defaults.
func (a *App) publicOptions(port int) *config.Object {
	// In the order mb 2.9.1 lists its options when they are not given on the command line.
	o := config.NewObject("port", float64(port))
	if a.opts.Host != "" {
		o.Set("host", a.opts.Host)
	}
	if a.opts.Mock {
		o.Set("mock", true)
	}
	o.Set("noParse", a.opts.NoParse)
	o.Set("formatter", "mountebank-formatters")
	o.Set("pidfile", orDefault(a.opts.PidFile, "mb.pid"))
	o.Set("allowInjection", a.opts.AllowInjection)
	o.Set("localOnly", a.opts.LocalOnly)
	o.Set("ipWhitelist", stringList(a.opts.IPWhitelist))
	o.Set("debug", a.opts.Debug)
	o.Set("protofile", orDefault(a.opts.Protofile, "protocols.json"))
	if a.opts.Origin != "" {
		o.Set("origin", a.opts.Origin)
	} else {
		o.Set("origin", false)
	}
	if a.opts.APIKey != "" {
		o.Set("apikey", a.opts.APIKey)
	} else {
		o.Set("apikey", nil)
	}
	consoleFormat := "%level: %message"
	if strings.EqualFold(a.opts.LogFormat, "json") {
		consoleFormat = "json"
	}
	transports := config.NewObject("console", config.NewObject("colorize", true, "format", consoleFormat))
	if a.opts.LogFile != "" {
		transports.Set("file", config.NewObject("path", a.opts.LogFile, "format", "json"))
	}
	o.Set("log", config.NewObject("level", orDefault(a.opts.LogLevel, "info"), "transports", transports))
	return o
}

func stringList(s []string) []any {
	out := make([]any, 0, len(s))
	for _, e := range s {
		out = append(out, e)
	}
	if len(out) == 0 {
		out = append(out, "*")
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// ipFilter builds Mountebank's connection check: clients from the loopback interfaces' own
// addresses (local) are always allowed, and the --ipWhitelist entries too unless --localOnly.
// It returns nil when every client is allowed.
func ipFilter(localOnly bool, whitelist []string, local []net.IP) func(net.IP) bool {
	allowed := slices.Clone(local)
	if !localOnly {
		if len(whitelist) == 0 {
			return nil
		}
		for _, entry := range whitelist {
			entry = strings.ToLower(strings.TrimSpace(entry))
			if entry == "*" {
				return nil
			}
			if i := strings.IndexByte(entry, '%'); i >= 0 {
				entry = entry[:i]
			}
			if ip := net.ParseIP(entry); ip != nil {
				allowed = append(allowed, ip)
			}
		}
	}
	return func(ip net.IP) bool {
		return slices.ContainsFunc(allowed, ip.Equal)
	}
}

// loopbackIPs returns the addresses of the machine's loopback interfaces, the ones Mountebank
// lets in whatever --localOnly and --ipWhitelist say: 127.0.0.1 and ::1 on most machines, not
// the rest of 127.0.0.0/8 (a client from 127.0.0.2 is refused, as in Mountebank).
func loopbackIPs() []net.IP {
	var ips []net.IP
	ifaces, _ := net.Interfaces()
	for _, iface := range ifaces {
		if iface.Flags&net.FlagLoopback == 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, addr := range addrs {
			if n, ok := addr.(*net.IPNet); ok {
				ips = append(ips, n.IP)
			}
		}
	}
	if len(ips) == 0 {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	return ips
}

// protocols are the protocols imposters can have: mockd's own and the custom ones
// (--protofile), which replace a built-in one of the same name, as in Mountebank.
func (a *App) protocols() (map[string]imposter.Protocol, map[string]bool) {
	protocols := servers.Protocols()
	if len(a.opts.CustomProtocols) == 0 {
		return protocols, nil
	}
	a.custom = &customproto.Options{LogLevel: orDefault(a.opts.LogLevel, "info"), AllowInjection: a.opts.AllowInjection, Host: a.opts.Host}
	a.callbackURL(a.opts.Port)
	custom := map[string]bool{}
	for _, s := range a.opts.CustomProtocols {
		protocols[s.Name] = customproto.Protocol(s, a.custom)
		custom[s.Name] = true
		if customproto.BuiltIn(s.Name) {
			a.log.Warn(customproto.Describe(s))
		} else {
			a.log.Info(customproto.Describe(s))
		}
	}
	return protocols, custom
}

// callbackURL sets the URL template custom protocols' programs call back, once the admin port
// is known: Mountebank's http://HOST:PORT/imposters/:port/_requests.
func (a *App) callbackURL(port int) {
	if a.custom == nil {
		return
	}
	host := a.opts.Host
	if host == "" {
		host = "localhost"
	}
	url := "http://" + host + ":" + strconv.Itoa(port) + "/imposters/:port/_requests" // as Mountebank writes it, an IPv6 host unbracketed
	a.custom.CallbackURLTemplate = func() string { return url }
}

// customProtocol reports whether the imposter v is of a custom protocol.
// protocolHint returns the protocol, built in or custom, that an imposter's unknown protocol
// probably means (htp: http), or "".
func protocolHint(v config.Value, custom map[string]bool) string {
	name, ok := protocolName(v)
	if !ok || name == "" {
		return ""
	}
	names := make([]string, 0, len(custom))
	for c := range custom {
		names = append(names, c)
	}
	sort.Strings(names)
	if s := config.Suggest(name, append(builtinProtocols[:len(builtinProtocols):len(builtinProtocols)], names...)); s != name {
		return s
	}
	return ""
}

// builtinProtocols are the protocols mockd serves itself.
var builtinProtocols = []string{"http", "https", "tcp", "smtp"}

// unknownProtocol reports whether an imposter names a protocol that is neither mockd's, nor
// custom, nor a near miss of mockd's: probably a custom protocol whose protofile was not given.
func unknownProtocol(v config.Value, custom map[string]bool) bool {
	name, ok := protocolName(v)
	if !ok || name == "" || custom[name] {
		return false
	}
	return config.Suggest(name, builtinProtocols) == ""
}

// protocolName is the protocol an imposter names, when it is a string.
func protocolName(v config.Value) (string, bool) {
	o := config.AsObject(v)
	if o == nil {
		return "", false
	}
	p, _ := o.Get("protocol")
	name, ok := p.(string)
	return name, ok
}

func customProtocol(v config.Value, custom map[string]bool) bool {
	if o := config.AsObject(v); o != nil && len(custom) > 0 {
		if p, ok := o.Get("protocol"); ok {
			name, _ := p.(string)
			return custom[name]
		}
	}
	return false
}
