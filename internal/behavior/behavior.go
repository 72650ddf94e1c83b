// Package behavior compiles Mountebank's response behaviors (wait, copy, lookup, decorate,
// shellTransform) and applies them to a response, in order, as Mountebank 2.9.1's behaviors.js
// does. `repeat` is not a behavior here: the imposter reads it with config.Repeat.
package behavior

import (
	"context"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// Options configure Compile.
type Options struct {
	// Timeout bounds one shellTransform command; the command is killed when it runs out.
	// Zero means script.DefaultTimeout. (Scripts are bounded by the script.Engine's limit.)
	Timeout time.Duration
	// MaxOutput bounds what a shellTransform command writes to its standard output (and to its
	// standard error): past it the command is killed and the request fails. Zero means
	// DefaultMaxOutput.
	MaxOutput int
	// Logger receives Mountebank's behavior log lines (missing CSV files, shell stderr…).
	// Nil means slog.Default().
	Logger *slog.Logger
	// Files says which files a lookup may read; nil = any regular file (DefaultMaxFileSize).
	Files *Files
}

// Compiled is a response's behaviors, compiled once. It is immutable and safe for concurrent use.
type Compiled struct {
	steps []step
	log   *slog.Logger
	// memo is the owner's: see Memo.
	memo atomic.Value
	// decorates and keeps are what Decorates returns, counted once by Compile.
	decorates int
	keeps     bool
}

// Memo is a slot the response that owns c keeps what it learns from the answers c builds in
// (the imposter keeps the header lines it compiled, for answers whose headers come out alike):
// Compiled has it so that a response without behaviors pays nothing for it. c is nil-safe:
// nil has no slot.
func (c *Compiled) Memo() *atomic.Value {
	if c == nil {
		return nil
	}
	return &c.memo
}

// KeepsInput reports whether Apply leaves the response it is given as it was: every step is a
// wait or a decorate (a decorate reads its input through a script's view and returns a new
// object). The caller may then pass a response it shares, uncopied.
func (c *Compiled) KeepsInput() bool {
	for _, s := range c.steps {
		switch s.(type) {
		case *waitStep, *decorateStep:
		default:
			return false
		}
	}
	return true
}

// Defers reports whether Apply has a wait or a shellTransform step, which Mountebank finishes in
// a later turn of its event loop (a timer, a child process): a tcp client that has shut its
// side of the connection by then gets no answer from Mountebank, whose socket has ended. c is
// nil-safe.
func (c *Compiled) Defers() bool {
	if c == nil {
		return false
	}
	for _, s := range c.steps {
		switch s.(type) {
		case *waitStep, *shellStep:
			return true
		}
	}
	return false
}

// Decorates returns the number of decorate steps, the only steps that give a script the
// request, when every step is a wait or a decorate (KeepsInput); ok is false otherwise (a copy,
// lookup or shellTransform reads the request without a script).
func (c *Compiled) Decorates() (n int, ok bool) {
	if c == nil {
		return 0, true
	}
	return c.decorates, c.keeps
}

// Constant reports whether Apply gives the same response for every request, given the same
// response: every step is a decorate whose function reads nothing but config.response (see
// script.Scope.DecorateConstant). A wait is not (it delays every answer), nor is any other step.
func (c *Compiled) Constant(scope *script.Scope) bool {
	if c.Len() == 0 || scope == nil {
		return false
	}
	for _, s := range c.steps {
		d, ok := s.(*decorateStep)
		if !ok || !scope.DecorateConstant(d.source) {
			return false
		}
	}
	return true
}

// countDecorates is Decorates, counted over the steps.
func (c *Compiled) countDecorates() (n int, ok bool) {
	for _, s := range c.steps {
		switch s.(type) {
		case *decorateStep:
			n++
		case *waitStep:
		default:
			return 0, false
		}
	}
	return n, true
}

// step is one compiled behavior.
type step interface {
	apply(ctx context.Context, a *applyState) error
}

// applyState is what the steps of one Apply share.
type applyState struct {
	req      *request.Request
	recorded *config.Object // the request as Mountebank's behaviors see it, made on first use
	resp     *config.Object
	scope    *script.Scope
	log      *slog.Logger
}

func (a *applyState) request() *config.Object {
	if a.recorded == nil {
		a.recorded = script.Request(a.req)
	}
	return a.recorded
}

// Compile compiles a response's "behaviors" array (after config has upcast the old
// `_behaviors` object). Behaviors run in array order and, within one object, in key order;
// unknown keys are ignored as Mountebank ignores them. Regexes, XPath and JSONPath selectors are
// compiled here; CSV files are read when a request needs them, as in Mountebank. Problems
// Mountebank only reports when a request comes (an invalid regex or XPath) are kept and returned
// by Apply; Compile fails only for a lookup file opts.Files refuses (a *config.Error).
func Compile(behaviors []any, opts Options) (*Compiled, error) {
	c := &Compiled{log: opts.Logger}
	if c.log == nil {
		c.log = slog.Default()
	}
	opts.Logger = c.log
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = script.DefaultTimeout
	}
	maxOutput := opts.MaxOutput
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	for _, b := range behaviors {
		obj := config.AsObject(b)
		if obj == nil {
			continue
		}
		for _, m := range obj.Members {
			var s step
			switch m.Key {
			case "wait":
				s = compileWait(m.Value)
			case "copy":
				s = compileCopy(config.AsObject(m.Value))
			case "lookup":
				var err *config.Error
				if s, err = compileLookup(config.AsObject(m.Value), opts); err != nil {
					return nil, err
				}
			case "decorate":
				s = &decorateStep{source: jsvalue.String(m.Value)}
			case "shellTransform":
				s = &shellStep{command: jsvalue.String(m.Value), timeout: timeout, maxOutput: maxOutput}
			}
			if s != nil {
				c.steps = append(c.steps, s)
			}
		}
	}
	c.decorates, c.keeps = c.countDecorates()
	return c, nil
}

// Len returns the number of behaviors that do something; 0 means Apply returns resp as is.
func (c *Compiled) Len() int {
	if c == nil {
		return 0
	}
	return len(c.steps)
}

// Apply runs the behaviors on resp, a response object the caller owns (Mountebank clones `is`
// for every request), and returns the resulting response, which may be resp changed in place or a
// new object. scope runs decorate and wait functions and holds the imposter's state; it may be
// nil when no behavior needs JavaScript. ctx cancels waits and shell commands. Errors are
// *config.Error values in Mountebank's shapes, or *ShellError for a failed shellTransform.
func (c *Compiled) Apply(ctx context.Context, r *request.Request, resp *config.Object, scope *script.Scope) (*config.Object, error) {
	if c.Len() == 0 {
		return resp, nil
	}
	if d, ok := c.steps[0].(*decorateStep); ok && len(c.steps) == 1 {
		// The common case, called directly: a stays on the stack (through the step
		// interface it would be allocated for every request).
		a := applyState{req: r, resp: resp, scope: scope, log: c.log}
		if err := d.apply(ctx, &a); err != nil {
			return nil, err
		}
		return a.resp, nil
	}
	a := &applyState{req: r, resp: resp, scope: scope, log: c.log}
	for _, s := range c.steps {
		if err := s.apply(ctx, a); err != nil {
			return nil, err
		}
	}
	return a.resp, nil
}

// waitStep is the wait behavior: a number of milliseconds or a JavaScript function.
type waitStep struct {
	ms     float64
	source string // the function, when the value is not a number
}

func compileWait(v config.Value) step {
	// Mountebank: parseInt(millisecondsOrFn); NaN means a function to evaluate.
	if ms, ok := parseInt(v); ok {
		if !(ms > 0) {
			return nil // waits for nothing (see apply): the response takes the plain path
		}
		return &waitStep{ms: ms}
	}
	return &waitStep{ms: math.NaN(), source: jsvalue.String(v)}
}

func (s *waitStep) apply(ctx context.Context, a *applyState) error {
	ms := s.ms
	if math.IsNaN(ms) {
		if a.scope == nil {
			return &config.Error{Code: config.CodeInvalidInjection, Message: script.MsgWait}
		}
		var err error
		if ms, err = a.scope.Wait(s.source); err != nil {
			return err
		}
	}
	// A wait of 0 (or less, or a function's NaN) sends at once: WireMock and MockServer do not
	// wait for a delay of 0, and a user who writes 0 asks for none. Mountebank's setTimeout
	// waits at least 1 ms for it; nothing but the time tells the two apart.
	if !(ms > 0) {
		return nil
	}
	// As setTimeout: less than 1 ms waits 1 ms, and past 2^31-1 it overflows to 1 ms.
	if ms < 1 || ms > math.MaxInt32 {
		ms = 1
	}
	t := time.NewTimer(time.Duration(ms * float64(time.Millisecond)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// decorateStep is the decorate behavior.
type decorateStep struct{ source string }

func (s *decorateStep) apply(ctx context.Context, a *applyState) error {
	if a.scope == nil {
		return &config.Error{Code: config.CodeInvalidInjection, Message: script.MsgDecorate}
	}
	out, err := a.scope.Decorate(ctx, s.source, a.req, a.resp)
	if err != nil {
		return err
	}
	a.resp = out
	return nil
}

// parseInt is JavaScript's parseInt(String(v)) for the values a wait can hold.
func parseInt(v config.Value) (float64, bool) {
	n, ok := jsvalue.ParseInt(jsvalue.String(v))
	return float64(n), ok
}
