package customproto

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Options are what every custom protocol's program is told, as Mountebank tells it.
type Options struct {
	// CallbackURLTemplate returns http://HOST:PORT/imposters/:port/_requests, the admin API's
	// (known once the admin port is bound).
	CallbackURLTemplate func() string
	// LogLevel is mockd's log level (debug, info, warn, error).
	LogLevel string
	// AllowInjection is --allowInjection.
	AllowInjection bool
	// Host is --host: a creation request that names no host gets it, as in Mountebank.
	Host string
	// StartTimeout bounds the wait for the program's first line on stdout; 0 = 60 s.
	// Mountebank waits for ever (and its API with it); mockd fails the creation instead.
	StartTimeout time.Duration
	// StopTimeout is how long a stopped program has to exit after SIGTERM before it is
	// killed; 0 = 5 s.
	StopTimeout time.Duration
}

// Protocol returns the imposter.Protocol of spec: its imposters are served by spec's program.
func Protocol(spec Spec, opts *Options) imposter.Protocol {
	return func(*config.Imposter) (imposter.Prepared, error) {
		return imposter.Prepared{
			New:   func(*imposter.Imposter) imposter.Server { return idle{} },
			Start: func(im *imposter.Imposter) (*imposter.External, error) { return start(spec, opts, im) },
		}, nil
	}
}

// idle is the server of an imposter its program serves: nothing to accept (its listener's
// Accept returns once the imposter stops).
type idle struct{}

func (idle) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil
		}
		_ = c.Close()
	}
}
func (idle) CloseIdle() int                 { return 0 }
func (idle) Shutdown(context.Context) error { return nil }

// commonFields are the creation request's fields Mountebank does not pass on as custom ones.
var commonFields = map[string]bool{"protocol": true, "port": true, "name": true, "recordRequests": true, "stubs": true, "defaultResponse": true}

// Arguments returns the JSON argument Mountebank appends to the command: port,
// callbackURLTemplate, loglevel and allowInjection, merged with the creation request's other
// fields (helpers.merge: an object or array value becomes an object of its keys), then
// defaultResponse when the request has one.
func Arguments(def *config.Imposter, opts *Options) []byte {
	args := &config.Object{}
	if v, ok := def.Header.Get("port"); ok && !jsvalue.IsUndefined(v) {
		if def.Port > 0 {
			v = float64(def.Port)
		}
		args.Set("port", v)
	}
	args.Set("callbackURLTemplate", opts.CallbackURLTemplate())
	args.Set("loglevel", orDefault(opts.LogLevel, "info"))
	args.Set("allowInjection", opts.AllowInjection)
	custom := &config.Object{}
	for _, m := range def.Header.Members {
		if !commonFields[m.Key] {
			custom.Set(m.Key, m.Value)
		}
	}
	if opts.Host != "" && !custom.Has("host") {
		custom.Set("host", opts.Host)
	}
	merged := merge(args, custom).(*config.Object)
	if v, ok := def.Header.Get("defaultResponse"); ok && !jsvalue.IsUndefined(v) {
		merged.Set("defaultResponse", v)
	}
	return config.MarshalJSON(merged, 0)
}

// merge is Mountebank's helpers.merge(defaults, overrides).
func merge(defaults config.Value, overrides config.Value) config.Value {
	out := &config.Object{}
	switch d := defaults.(type) {
	case *config.Object:
		out = config.Clone(d).(*config.Object)
	case []any:
		for i, v := range d {
			out.Set(strconv.Itoa(i), config.Clone(v))
		}
	}
	each := func(k string, v config.Value) {
		switch v.(type) {
		case *config.Object, []any:
			prev, _ := out.Get(k)
			if !jsvalue.Truthy(prev) {
				prev = &config.Object{}
			}
			out.Set(k, merge(prev, v))
		default:
			out.Set(k, v)
		}
	}
	switch o := overrides.(type) {
	case *config.Object:
		for _, m := range o.Members {
			each(m.Key, m.Value)
		}
	case []any:
		for i, v := range o {
			each(strconv.Itoa(i), v)
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// process is one running program.
type process struct {
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the program has exited and been waited for
	code     int           // exit code, -1 when killed by a signal (after exited)
	mu       sync.Mutex
	stopping bool
	log      *slog.Logger // under mu: the imposter's, once its port is known
	stopWait time.Duration
}

// startResult is the program's first line, or why it never came.
type startResult struct {
	line string
	err  error
}

// start runs spec's program for im and waits for its first line on stdout (Mountebank's
// readiness rule): that line, if JSON, is the metadata, whose port (if any) is the imposter's.
func start(spec Spec, opts *Options, im *imposter.Imposter) (*imposter.External, error) {
	def := im.Definition()
	settings := im.Settings()
	logger := settings.Logger
	if logger == nil {
		logger = slog.Default()
	}
	name, args := splitCommand(spec.CreateCommand)
	args = append(args, string(Arguments(def, opts)))
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, &config.Error{Code: config.CodeCannotStart, Message: err.Error()}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, &config.Error{Code: config.CodeCannotStart, Message: err.Error()}
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, spawnError(spec, name, args, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{}), stopWait: orDuration(opts.StopTimeout, 5*time.Second),
		log: logger.With("imposter", def.Protocol+":"+strconv.Itoa(def.Port))}
	first := make(chan startResult, 1)
	var once sync.Once
	report := func(r startResult) { once.Do(func() { first <- r }) }
	go p.readStdout(outR, func(line string) { report(startResult{line: line}) })
	go p.readStderr(errR)
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.exited)
		report(startResult{err: exitError(spec, p.code)})
		p.mu.Lock()
		stopping, log := p.stopping, p.log
		p.mu.Unlock()
		if !stopping {
			log.Error("Uh oh! I've crashed! Expect subsequent requests to fail.")
		}
	}()
	timer := time.NewTimer(orDuration(opts.StartTimeout, 60*time.Second))
	defer timer.Stop()
	var r startResult
	select {
	case r = <-first:
	case <-timer.C:
		r.err = &config.Error{Code: config.CodeCannotStart, Source: spec.CreateCommand,
			Message: fmt.Sprintf("%q start command wrote no line on stdout in %s", spec.Name, orDuration(opts.StartTimeout, 60*time.Second))}
	case <-im.StartAborted(): // deleted meanwhile (imposter.Registry.Reserve)
		r.err = imposter.ErrDeletedWhileStarting
	}
	if r.err != nil {
		p.stop()
		return nil, r.err
	}
	metadata := &config.Object{}
	if v, err := config.ParseJSON([]byte(r.line)); err == nil {
		if o := config.AsObject(v); o != nil {
			metadata = config.Clone(o).(*config.Object)
		}
	}
	port := def.Port
	if v, ok := metadata.Get("port"); ok && jsvalue.Truthy(v) {
		port = portOf(v)
		metadata.Delete("port")
	}
	// Mountebank's encoding of the imposter (base64: binary predicates), not shown.
	encoding, _ := metadata.Get("encoding")
	metadata.Delete("encoding")
	if port <= 0 || port > 65535 {
		p.stop()
		return nil, &config.Error{Code: config.CodeCannotStart, Source: spec.CreateCommand,
			Message: fmt.Sprintf("%q start command announced no port: the creation request names none, and the program's first line is not {\"port\": …}", spec.Name)}
	}
	scope := def.Protocol + ":" + strconv.Itoa(port)
	if def.Name != "" {
		scope += " " + def.Name
	}
	p.mu.Lock()
	p.log = logger.With("imposter", scope)
	p.mu.Unlock()
	var md *config.Object
	if metadata.Len() > 0 {
		md = metadata
	}
	callback := strings.ReplaceAll(opts.CallbackURLTemplate(), ":port", strconv.Itoa(port))
	return &imposter.External{
		Listener:    &listener{p: p, addr: &net.TCPAddr{IP: net.IPv4zero, Port: port}, closed: make(chan struct{})},
		Metadata:    md,
		CallbackURL: callback,
		Encoding:    jsvalue.String(encoding),
	}, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// portOf reads the port a program announced: a number, or a string of one.
func portOf(v config.Value) int {
	switch t := v.(type) {
	case float64:
		if t == float64(int(t)) {
			return int(t)
		}
	case string:
		if n, err := strconv.Atoi(t); err == nil {
			return n
		}
	}
	return -1
}

// exitError is Mountebank's error for a program that exited before its first line.
func exitError(spec Spec, code int) error {
	shown := "null" // node's code for a program a signal ended
	if code >= 0 {
		shown = strconv.Itoa(code)
	}
	return &config.Error{Code: config.CodeCannotStart, Source: spec.CreateCommand,
		Message: fmt.Sprintf("%q start command failed (exit code %s)", spec.Name, shown)}
}

// spawnError is Mountebank's error for a program that cannot be run, with node's spawn error
// as its details.
func spawnError(spec Spec, name string, args []string, err error) error {
	code, errno := "UNKNOWN", -1.0
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		code, errno = "ENOENT", -2
	case errors.Is(err, fs.ErrPermission):
		code, errno = "EACCES", -13
	}
	spawnargs := make([]any, len(args))
	for i, a := range args {
		spawnargs[i] = a
	}
	details := config.NewObject("errno", errno, "code", code, "syscall", "spawn "+name, "path", name, "spawnargs", spawnargs)
	msg := fmt.Sprintf("Invalid configuration for protocol %q: cannot run %q", spec.Name, spec.CreateCommand)
	return &config.Error{Code: config.CodeCannotStart, Message: msg, Raw: config.NewObject(
		"code", config.CodeCannotStart, "message", msg, "source", spec.CreateCommand, "details", details)}
}

// logLevels are the levels a program's stdout line may start with to be logged.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

var lineBreak = regexp.MustCompile(`\r?\n`)

// readStdout reads the program's stdout in chunks, as node's 'data' events: each chunk,
// trimmed, is split into lines; the first line is the program's start line (ready), and a line
// "LEVEL message" is logged at that level.
func (p *process) readStdout(r *os.File, ready func(string)) {
	defer r.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			for _, line := range lineBreak.Split(strings.TrimSpace(string(buf[:n])), -1) {
				ready(line)
				p.logLine(line)
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *process) logLine(line string) {
	i := strings.IndexByte(line, ' ')
	if i <= 0 {
		return
	}
	level, ok := logLevels[line[:i]]
	if !ok {
		return
	}
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	log.Log(context.Background(), level, strings.TrimSpace(line[i+1:]))
}

// readStderr logs what the program writes on stderr as errors, a chunk a line.
func (p *process) readStderr(r *os.File) {
	defer r.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.mu.Lock()
			log := p.log
			p.mu.Unlock()
			log.Error(string(buf[:n]))
		}
		if err != nil {
			return
		}
	}
}

// stop ends the program (SIGTERM, as Mountebank's kill(); SIGKILL when it has not exited
// after stopWait) and returns once it has exited.
func (p *process) stop() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.exited:
		return
	default:
	}
	terminate(p.cmd.Process)
	t := time.NewTimer(p.stopWait)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		kill(p.cmd.Process)
		<-p.exited
	}
}

// listener stands for the program in the imposter core: Close stops it.
type listener struct {
	p      *process
	addr   net.Addr
	once   sync.Once
	closed chan struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	<-l.closed
	return nil, net.ErrClosed
}

func (l *listener) Close() error {
	l.once.Do(func() {
		l.p.stop()
		close(l.closed)
	})
	return nil
}

func (l *listener) Addr() net.Addr { return l.addr }
