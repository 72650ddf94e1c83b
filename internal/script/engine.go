// Package script runs Mountebank's JavaScript injection (inject predicates and responses, decorate
// and wait behaviors) on goja, under a time and a memory limit (see memory.go).
//
// Design: an Engine holds what every imposter shares: the options, a cache of compiled programs
// (a *goja.Program is immutable and shared by every runtime) and the prelude that builds the
// Node-like environment. A Scope is one imposter: it owns one goja runtime, created on its first
// script call, which holds the imposter's `state` (Mountebank's imposterState) and the deprecated
// positional `state` (Mountebank's injectState) as native JavaScript objects.
//
// Calls that may touch the state run on that runtime, one at a time (a mutex). That is what
// Mountebank does (it runs every script of every imposter one at a time on its event loop), and it
// lets state stay a live JavaScript object: scripts may keep functions, dates and shared
// references in it, and no call pays to marshal the state in and out. Calls whose function cannot
// reach the state (read from its source, see stateless.go) run on a pool of runtimes of the
// Scope instead, beside each other, so one slow script does not hold up the others. A runtime
// belongs to exactly one imposter, so nothing a script leaves behind is visible to another
// imposter; calls on different Scopes run in parallel.
//
// Decorate functions that only read the request and assign primitives to the response (the
// native subset, see native.go) run as Go, outside the runtime and its lock: on goja such a call
// costs several times more in building and reading back objects than the script's own work.
package script

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// DefaultTimeout is the time limit of one script call when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// Options configure an Engine.
type Options struct {
	// Timeout bounds one script call, including the wait for an asynchronous callback.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives console output and the scripts' logger calls. Nil means slog.Default().
	Logger *slog.Logger
	// Env is what scripts see as process.env. Nil means the process environment at New.
	Env map[string]string
	// MemoryLimit bounds how much the heap may grow during one script call (see memWatch);
	// 0 = DefaultMemoryLimit, negative = no limit.
	MemoryLimit int64

	// maxString, when positive, stands for V8's longest string (String::kMaxLength, the
	// prelude's maxString) so that tests reach the guards' bound without making half a
	// gigabyte of string.
	maxString int64
	// longString, when positive, stands for the prelude's longString (the length past which a
	// global RegExp's replace, match and split go from match to match in the prelude), so that
	// tests compare those loops with goja's own on short strings.
	longString int64
	// chunkElements, when positive, stands for the guards' chunkElements (the length past which
	// Array.from and fill go a piece at a time), so that tests reach it with small arrays.
	chunkElements int64
}

// Engine compiles and caches scripts and creates Scopes. It is safe for concurrent use.
type Engine struct {
	timeout       time.Duration
	logger        *slog.Logger
	env           map[string]string
	programs      sync.Map // source text → *program
	nprogs        atomic.Int64
	memLimit      int64 // see Options.MemoryLimit; 0 = none
	maxString     int64 // see Options.maxString; 0 = V8's
	longString    int64 // see Options.longString; 0 = the prelude's
	chunkElements int64 // see Options.chunkElements; 0 = the guards'

	// prelude is compiled when the first runtime is made (see preludeProgram), not by New: a
	// mockd whose stubs run no script does not pay for it (about 450 KiB resident at start).
	preludeOnce sync.Once
	prelude     *goja.Program
}

// program is one compiled function expression, or why it does not compile.
type program struct {
	prog *goja.Program
	err  error

	nativeOnce sync.Once
	native     *nativeFn // see nativeFn

	eorOnce sync.Once
	eor     *eorFn // see eorFn

	freeOnce sync.Once
	free     freeInfo // see stateless
}

// info returns what the analysis of p's function (whose source is source) found, reading the
// source on first use.
func (p *program) info(source string) freeInfo {
	p.freeOnce.Do(func() {
		if p.err == nil {
			p.free = analyse(source)
		}
	})
	return p.free
}

// stateless reports whether a call of kind to p's function cannot reach the imposter's state.
func (p *program) stateless(source string, kind callKind) bool {
	return p.info(source).stateless(kind)
}

// readsArg reports whether a call to p's function may read its argument number n.
func (p *program) readsArg(source string, n int) bool { return p.info(source).readsArg(n) }

// needsNode reports whether a call of kind to p's function may use what installNode adds.
func (p *program) needsNode(source string, kind callKind) bool {
	return p.info(source).needsNode(kind)
}

// nativeFn returns the native form of p's source, a decorate function, or nil when it has
// none. It compiles it on first use.
func (p *program) nativeFn(source string) *nativeFn {
	p.nativeOnce.Do(func() {
		if p.err == nil {
			p.native = compileNative(source)
		}
	})
	return p.native
}

// eorFn returns the native form of p's source, an endOfRequestResolver, or nil when it has
// none. It compiles it on first use.
func (p *program) eorFn(source string) *eorFn {
	p.eorOnce.Do(func() {
		if p.err == nil {
			p.eor = compileEOR(source)
		}
	})
	return p.eor
}

// New returns an Engine.
func New(opts Options) *Engine {
	e := &Engine{timeout: opts.Timeout, logger: opts.Logger, env: opts.Env, memLimit: opts.MemoryLimit, maxString: opts.maxString, longString: opts.longString, chunkElements: opts.chunkElements}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	switch {
	case e.memLimit == 0:
		e.memLimit = DefaultMemoryLimit
	case e.memLimit < 0:
		e.memLimit = 0
	}
	if e.logger == nil {
		e.logger = slog.Default()
	}
	if e.env == nil {
		e.env = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				e.env[k] = v
			}
		}
	}
	return e
}

// preludeProgram returns the compiled prelude, compiling it on first use.
func (e *Engine) preludeProgram() *goja.Program {
	e.preludeOnce.Do(func() { e.prelude = goja.MustCompile("prelude.js", preludeSource, true) })
	return e.prelude
}

// Timeout returns the time limit of one script call.
func (e *Engine) Timeout() time.Duration { return e.timeout }

// Check compiles source as Mountebank will evaluate it and returns the syntax error, if any.
// Mountebank accepts invalid JavaScript when a stub is created and fails at request time, so
// callers use Check only for reports such as `mockd validate`.
func (e *Engine) Check(source string) error {
	return e.compile(source).err
}

// programCacheLimit bounds the compiled programs an Engine (and each runtime's functions) keep.
const programCacheLimit = 4096

// compile returns the cached compiled form of the function expression source.
func (e *Engine) compile(source string) *program {
	if p, ok := e.programs.Load(source); ok {
		return p.(*program)
	}
	// Mountebank evaluates `(${fn})(args…)`; the parenthesised expression is what we compile.
	prog, err := goja.Compile("injection", "("+source+"\n)", true) // Mountebank evals in a strict module
	p := &program{prog: prog, err: err}
	if err != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) {
			p.err = errors.New(se.Message)
		}
	}
	actual, loaded := e.programs.LoadOrStore(source, p)
	if !loaded && e.nprogs.Add(1) > programCacheLimit {
		// Start over rather than keep the scripts of imposters long deleted.
		e.programs.Clear()
		e.nprogs.Store(0)
	}
	return actual.(*program)
}
