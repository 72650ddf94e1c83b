package script

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Mountebank's messages for failed injections.
const (
	MsgPredicate = "invalid predicate injection"
	MsgResponse  = "invalid response injection"
	MsgDecorate  = "invalid decorator injection"
	MsgWait      = "invalid wait injection"
)

// Scope is the JavaScript world of one imposter: its runtime and the state its predicates and
// responses share across requests. It is safe for concurrent use; calls run one at a time, except
// native decorate functions (see compileNative), which touch nothing the others can see.
type Scope struct {
	e    *Engine
	log  *slog.Logger
	mu   sync.Mutex
	rt   *runtime                   // created by the first call
	last atomic.Pointer[nativeLast] // the native function last looked up

	lastProg atomic.Pointer[lastProgram] // the program enter last looked up

	// The pool of runtimes for calls that cannot reach the state (see enter).
	poolMu   sync.Mutex
	idle     []*runtime      // a stack: the last to come back is taken first
	busy     []*runtime      // running a call
	waiting  []chan struct{} // calls waiting for a runtime, woken first come first served
	made     int             // pooled runtimes in use or idle (or being made)
	creating bool            // a pooled runtime is being made
	madeAt   time.Time       // when the last one was made
	poolLog  *slog.Logger    // log, read under poolMu

	// With a shared state (see ShareState), under mu: the store, the token of the lock the
	// running call holds ("" = none), the state as loaded, and whether the store failed last.
	shared     SharedState
	token      string
	loaded     string
	sharedDown bool
}

// nativeLast is a source and its native function (nil when it has none).
type nativeLast struct {
	source string
	fn     *nativeFn
}

// native returns source's native function for a call of kind, or nil, and whether goja would
// run the call on a pooled runtime (pristine: see ncall).
func (s *Scope) native(source string, kind callKind) (*nativeFn, bool) {
	var fn *nativeFn
	if l := s.last.Load(); l != nil && l.source == source {
		fn = l.fn
	} else {
		fn = s.e.compile(source).nativeFn(source)
		s.last.Store(&nativeLast{source, fn})
	}
	if fn == nil {
		return nil, false
	}
	pristine := s.program(source).stateless(source, kind)
	// The builtin JSON it calls is the one of a pooled runtime, where no script changes it; a
	// call that goja runs on the imposter's runtime could see what another script made of it.
	if fn.global && !pristine {
		return nil, false
	}
	return fn, pristine
}

// NewScope returns a Scope with empty state. log receives the scripts' console and logger
// output; nil means the Engine's logger.
func (e *Engine) NewScope(log *slog.Logger) *Scope {
	if log == nil {
		log = e.logger
	}
	return &Scope{e: e, log: log, poolLog: log}
}

// SetLogger makes log receive the scripts' console and logger output from now on: an imposter
// knows its scope (protocol and port) only once it listens.
func (s *Scope) SetLogger(log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = log
	if s.rt != nil {
		s.rt.log = log
	}
	s.poolMu.Lock()
	s.poolLog = log // pooled runtimes take it when their next call begins
	s.poolMu.Unlock()
}

// Predicate runs an inject predicate as Mountebank's predicates.js does,
// `(fn)(config, logger, imposterState)`, and reports whether its result is truthy.
// A failure is a *config.Error with code "invalid injection".
func (s *Scope) Predicate(source string, r *request.Request) (ok bool, err error) {
	rt := s.enter(source, kindPredicate)
	defer func() {
		if lerr := s.leave(rt); lerr != nil && err == nil {
			ok, err = false, injectionError(MsgPredicate, predicateSource(source), lerr)
		}
	}()
	fn, err := s.function(rt, source)
	if err != nil {
		return false, injectionError(MsgPredicate, predicateSource(source), err)
	}
	cfg, _ := rt.newConfig(r, predicateConfigKeys, rt.imposterState, rt.logger)
	v, err := rt.call(fn, cfg, rt.logger, rt.imposterState)
	if err != nil {
		return false, injectionError(MsgPredicate, predicateSource(source), err)
	}
	return v.ToBoolean(), nil
}

// Response runs an inject response as Mountebank's responseResolver.js does,
// `(fn)(config, injectState, logger, done, imposterState)`, and returns the response object
// it returned or passed to its callback (a promise is awaited). The wait for a callback ends at
// the time limit or as soon as nothing is left that could call it. A returned primitive gives an
// empty object, as Mountebank then uses every default. ctx cancels the call and the wait.
//
// A function of the native subset (see compileNative) that returns an object it made, or a
// primitive, runs as Go, without the runtime.
func (s *Scope) Response(ctx context.Context, source string, r *request.Request) (*config.Object, error) {
	if fn, pristine := s.native(source, kindResponse); fn != nil {
		if out, ok := fn.runInject(r, pristine); ok {
			countNative(r)
			return out, nil
		}
	}
	return s.responseJS(ctx, source, r)
}

// InjectShape returns, for an inject function that returns one object literal whose members
// other than body are constants (statusCode, _mode, and headers as an object literal of
// constants; no other member), the object it returns without its body: the same for every call,
// read only, and sh, which gives the body of a call. ok is false for any other function.
func (s *Scope) InjectShape(source string) (fixed *config.Object, sh *Shaped, ok bool) {
	fn, pristine := s.native(source, kindResponse)
	if fn == nil || fn.shape == nil {
		return nil, nil, false
	}
	return fn.shape.fixed, &Shaped{fn, pristine}, true
}

// Shaped is a function InjectShape accepted, found once (the stub keeps it): what decides
// whether and how it runs natively depends on its source alone.
type Shaped struct {
	fn       *nativeFn
	pristine bool
}

// Body returns the body the object the function returns for r holds (nil for none):
// Response's result is InjectShape's object with that body. ok is false when the call must go
// through Response (the native evaluator gives up on it; goja runs it).
func (sh *Shaped) Body(r *request.Request) (body config.Value, ok bool) {
	if body, ok = sh.fn.runBody(r, sh.pristine); ok {
		countNative(r)
	}
	return body, ok
}

// responseJS is Response on goja.
func (s *Scope) responseJS(ctx context.Context, source string, r *request.Request) (answer *config.Object, err error) {
	rt := s.enter(source, kindResponse)
	defer func() {
		if lerr := s.leave(rt); lerr != nil && err == nil {
			answer, err = nil, injectionError(MsgResponse, responseSource(source), lerr)
		}
	}()
	rt.cancelOn(ctx)
	defer rt.cancelOff()
	fail := func(err error) (*config.Object, error) {
		return nil, injectionError(MsgResponse, responseSource(source), err)
	}
	fn, err := s.function(rt, source)
	if err != nil {
		return fail(err)
	}
	cfg, c := rt.newConfig(r, responseConfigKeys, rt.imposterState, rt.logger, nil)
	// The callback is made when the script reads config.callback, or at once when the function
	// may read its fourth argument: most functions return their response and never call it.
	var done goja.Value = goja.Undefined()
	if s.program(source).readsArg(source, 3) {
		done = c.callback()
	}
	v, err := rt.call(fn, cfg, rt.injectState, rt.logger, done, rt.imposterState)
	if err != nil {
		return fail(err)
	}
	if !c.called && !goja.IsUndefined(v) {
		c.called, c.result = true, v
	}
	if !c.called {
		if err := rt.runUntil(ctx, c.isCalled); err != nil {
			if errors.Is(err, errStalled) {
				err = errors.New("the injection returned undefined and can no longer call its callback")
			}
			return fail(err)
		}
	}
	result, err := rt.settle(ctx, c.result)
	if err != nil {
		return fail(err)
	}
	out, err := rt.responseFrom(result)
	if ie := (*goja.InterruptedError)(nil); errors.As(err, &ie) {
		return fail(err) // as the call's own timeout
	}
	return out, err
}

// Decorate runs a decorate behavior as Mountebank's behaviors.js does,
// `(fn)(config, response, logger)`, and returns the response it returned or, when it returned
// nothing, the response it modified. resp is not changed, but the result may share values with
// it: the caller passes its own copy (Mountebank clones `is` for every request) and uses the
// result from then on.
//
// A function of the native subset (see compileNative) runs as Go, without the runtime.
func (s *Scope) Decorate(ctx context.Context, source string, r *request.Request, resp *config.Object) (*config.Object, error) {
	if fn, pristine := s.native(source, kindDecorate); fn != nil {
		if out, ok := fn.run(r, resp, pristine); ok {
			countNative(r)
			return out, nil
		}
	}
	return s.decorateJS(ctx, source, r, resp)
}

// DecorateConstant reports whether the decorate function source gives the same response for
// every request, given the same response: it runs natively (see compileNative), whose subset
// has no clock, random numbers, I/O or state, and reads nothing of its arguments but
// config.response (not config.request, config.state, the logger). Its caller may then keep
// the answer it built for a response that is the same for every request and answer with it
// afterwards, rather than run the function again.
func (s *Scope) DecorateConstant(source string) bool {
	fn, _ := s.native(source, kindDecorate)
	return fn != nil && fn.responseOnly
}

// decorateJS is Decorate on goja.
func (s *Scope) decorateJS(ctx context.Context, source string, r *request.Request, resp *config.Object) (answer *config.Object, err error) {
	rt := s.enter(source, kindDecorate)
	defer func() {
		if lerr := s.leave(rt); lerr != nil && err == nil {
			answer, err = nil, injectionError(MsgDecorate, decorateSource(source), lerr)
		}
	}()
	rt.cancelOn(ctx)
	defer rt.cancelOff()
	fail := func(err error) (*config.Object, error) {
		return nil, injectionError(MsgDecorate, decorateSource(source), err)
	}
	fn, err := s.function(rt, source)
	if err != nil {
		return fail(err)
	}
	var jsResp goja.Value
	if resp != nil {
		jsResp = rt.backed(resp, nil)
	} else {
		jsResp = goja.Null()
	}
	cfg, _ := rt.newConfig(r, decorateConfigKeys, jsResp, rt.logger, rt.imposterState)
	v, err := rt.call(fn, cfg, jsResp, rt.logger)
	if err != nil {
		return fail(err)
	}
	if !v.ToBoolean() {
		v = jsResp
	}
	v, err = rt.settle(ctx, v)
	if err != nil {
		return fail(err)
	}
	out, err := rt.responseFrom(v)
	if ie := (*goja.InterruptedError)(nil); errors.As(err, &ie) {
		return fail(err) // as the call's own timeout
	}
	return out, err
}

// Wait runs a wait behavior function as Mountebank does, `(fn)()`, and returns its result as a
// number of milliseconds (NaN when it is not a number).
func (s *Scope) Wait(source string) (float64, error) {
	rt := s.enter(source, kindWait)
	defer s.leaveStateless(rt)
	fn, err := s.function(rt, source)
	if err != nil {
		return 0, injectionError(MsgWait, source, err)
	}
	v, err := fn(goja.Undefined())
	if err != nil {
		return 0, injectionError(MsgWait, source, err)
	}
	return v.ToFloat(), nil
}

// call calls fn with this undefined and up to 5 arguments, passed through rt.args: a variadic
// call to a goja.Callable would allocate its arguments on every call.
func (rt *runtime) call(fn goja.Callable, a0, a1, a2 goja.Value, more ...goja.Value) (goja.Value, error) {
	args := append(append(rt.args[:0], a0, a1, a2), more...)
	v, err := fn(goja.Undefined(), args...)
	clear(args) // keep nothing alive
	return v, err
}

// enter takes a runtime for one call of kind to the function source, under the engine's time
// and memory limits: the imposter's own runtime, one call at a time as Mountebank runs them,
// or, for a function that cannot reach the imposter's state (see stateless.go), a runtime of
// the pool, beside other such calls. leave must be called when the call ends.
func (s *Scope) enter(source string, kind callKind) *runtime {
	var rt *runtime
	p := s.program(source)
	if p.stateless(source, kind) {
		rt = s.pooled()
	} else {
		s.mu.Lock()
		rt = s.runtime()
		if s.shared != nil && hasState(kind) {
			s.loadShared(rt) // before the call's time starts: it may wait for another node
		}
	}
	if rt.nodeArgs != nil && p.needsNode(source, kind) {
		rt.needNode()
	}
	rt.begin(s.e.timeout)
	return rt
}

// leave ends the call enter began. A runtime whose call ran out of memory is dropped (the
// imposter's state goes with it) and its memory given back to the system. With a shared state,
// it fails when the call's changes could not be stored because its lock had expired (see
// storeShared): the call must then fail too.
func (s *Scope) leave(rt *runtime) (err error) {
	rt.end()
	spoiled := rt.spoiled.Load()
	if spoiled {
		rt.mem.dropped(rt) // before another call can take its place
	}
	var idled *runtime // a pooled runtime left unused for poolIdle, to let go
	if rt.pooled {
		now := time.Now()
		s.poolMu.Lock()
		s.busy = slices.DeleteFunc(s.busy, func(b *runtime) bool { return b == rt })
		if spoiled {
			s.made-- // a waiter makes another when its wait is up
		} else {
			rt.idleSince = now
			s.idle = append(s.idle, rt)
			// The idle runtimes are a stack (see pooled): the one at the bottom is the one
			// left unused longest.
			if len(s.idle) > 1 && now.Sub(s.idle[0].idleSince) >= poolIdle {
				idled = s.idle[0]
				s.idle = slices.Delete(s.idle, 0, 1) // (clears the slot left at the end)
				s.made--
			}
		}
		if len(s.waiting) > 0 {
			// Woken, it takes an idle runtime unless a running call took it first (as
			// sync.Mutex lets one barge in: a runtime handed to a waiter that must first be
			// scheduled would stay unused meanwhile).
			close(s.waiting[0])
			s.waiting = s.waiting[1:]
		}
		s.poolMu.Unlock()
	} else {
		if s.token != "" {
			err = s.storeShared(rt, spoiled)
		}
		if spoiled {
			s.rt = nil
		}
		s.mu.Unlock()
	}
	if idled != nil {
		idled.discard()
	}
	if spoiled {
		rt.log.Warn("a script ran out of memory: its runtime is dropped, and the imposter's script state with it")
		rt.discard()
	}
	return err
}

// program returns source's compiled program, remembering the last one looked up.
func (s *Scope) program(source string) *program {
	if l := s.lastProg.Load(); l != nil && l.source == source {
		return l.p
	}
	p := s.e.compile(source)
	s.lastProg.Store(&lastProgram{source, p})
	return p
}

// lastProgram is a source and its program.
type lastProgram struct {
	source string
	p      *program
}

// maxPool bounds the runtimes a Scope runs stateless calls on at once; more wait.
const maxPool = 16

// poolWait is how long every busy pooled runtime must have been running its call before a
// stateless call that finds none idle makes another (when GOMAXPROCS or more are made, fewer
// than maxPool). A runtime takes milliseconds to make and holds about 70 KB of small objects that
// every garbage collection marks, while most calls take microseconds: when each call that found
// every runtime busy made one, as it once did, bench/'s inject scenario (50 connections, 2 cores)
// had 16 runtimes where 2 were ever used at once, and lost a tenth of its speed to marking them.
// Calls that run longer (a loop, a wait for I/O or a timer) still have the others run beside
// them: a call that comes when every runtime has been busy that long makes one at once, and one
// that comes sooner waits until they have (or one comes back).
var poolWait = 10 * time.Millisecond // a variable for tests

// poolIdle is how long a pooled runtime may stay unused before the pool lets it go (when another
// call ends, and one runtime is always kept): a burst of slow calls that grew the pool does not
// leave runtimes behind for every garbage collection to mark.
var poolIdle = 10 * time.Second // a variable for tests

// pooled takes an idle runtime of the pool. When none is idle, it makes one if fewer are made
// than calls can run at once (GOMAXPROCS) or every busy one has run its call for poolWait, and
// otherwise waits for one to come back or for that (making one runtime at a time, at most
// maxPool).
func (s *Scope) pooled() *runtime {
	s.poolMu.Lock()
	for {
		now := time.Now()
		if n := len(s.idle); n > 0 {
			rt := s.idle[n-1] // the one used last: its memory is the likeliest to be in cache
			// (the slot is cleared: a runtime dropped after its call, for running out of
			// memory, stayed referenced from it with all it held, 512 MiB say, until another
			// runtime came back to the pool)
			s.idle[n-1] = nil
			s.idle = s.idle[:n-1]
			rt.log = s.poolLog
			rt.started = now
			s.busy = append(s.busy, rt)
			s.poolMu.Unlock()
			return rt
		}
		// The busy runtimes have all been running for poolWait at since: the youngest call's
		// start, or when the last runtime was made (calls that queued up while it was made see
		// first whether it serves them).
		since := s.madeAt
		for _, b := range s.busy {
			if b.started.After(since) {
				since = b.started
			}
		}
		deadline := since.Add(poolWait)
		if !s.creating && s.made < maxPool && (s.made < goruntime.GOMAXPROCS(0) || !now.Before(deadline)) {
			return s.makePooled()
		}
		ch := make(chan struct{})
		s.waiting = append(s.waiting, ch)
		var t *time.Timer
		var timeout <-chan time.Time
		if !s.creating && s.made < maxPool { // else makePooled or a runtime coming back wakes it
			t = time.NewTimer(deadline.Sub(now))
			timeout = t.C
		}
		s.poolMu.Unlock()
		select {
		case <-ch:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
		s.poolMu.Lock()
		if i := slices.Index(s.waiting, ch); i >= 0 {
			s.waiting = slices.Delete(s.waiting, i, i+1)
		}
	}
}

// makePooled makes a runtime for the pool; it is called with poolMu held, and unlocks it.
func (s *Scope) makePooled() *runtime {
	s.made++
	s.creating = true
	log := s.poolLog
	s.poolMu.Unlock()
	rt := s.e.newRuntime(log)
	rt.pooled = true
	s.poolMu.Lock()
	s.creating = false
	s.madeAt = time.Now()
	rt.started = s.madeAt
	s.busy = append(s.busy, rt)
	for _, ch := range s.waiting { // their waits count from now
		close(ch)
	}
	s.waiting = s.waiting[:0]
	s.poolMu.Unlock()
	return rt
}

func (s *Scope) runtime() *runtime {
	if s.rt == nil {
		s.rt = s.e.newRuntime(s.log)
	}
	return s.rt
}

// function returns the function source evaluates to in rt, evaluating it once per runtime.
func (s *Scope) function(rt *runtime, source string) (goja.Callable, error) {
	for i := range rt.recent {
		if r := &rt.recent[i]; r.fn != nil && r.source == source {
			return r.fn, nil // the same string is compared in O(1)
		}
	}
	p := s.e.compile(source)
	if p.err != nil {
		return nil, p.err
	}
	if fn, ok := rt.fns[p.prog]; ok {
		return fn, nil
	}
	v, err := rt.vm.RunProgram(p.prog)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, fmt.Errorf("%s is not a function", inspect(rt, v))
	}
	if len(rt.fns) >= programCacheLimit {
		clear(rt.fns) // as the Engine's program cache: start over rather than grow forever
		clear(rt.recent[:])
	}
	rt.fns[p.prog] = fn
	rt.recent[rt.nextRecent] = recentFn{source, fn}
	rt.nextRecent = (rt.nextRecent + 1) % len(rt.recent)
	return fn, nil
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// settle waits for v when it is a promise and returns what it resolves to.
func (rt *runtime) settle(ctx context.Context, v goja.Value) (goja.Value, error) {
	o, ok := v.(*goja.Object)
	if !ok {
		return v, nil
	}
	if o.ExportType() != promiseType {
		return v, nil
	}
	p := o.Export().(*goja.Promise)
	err := rt.runUntil(ctx, func() bool { return p.State() != goja.PromiseStatePending })
	if errors.Is(err, errStalled) {
		err = errors.New("the injection returned a promise that can no longer settle")
	}
	if err != nil {
		return nil, err
	}
	if p.State() == goja.PromiseStateRejected {
		return nil, rejected{p.Result()}
	}
	return p.Result(), nil
}

// responseFrom converts the response a script produced. null fails as Mountebank fails when it
// reads statusCode from it; any other non-object gives an empty response. A getter or toJSON
// stopped by the time or memory limit fails as the call would have: the error is the
// *goja.InterruptedError.
func (rt *runtime) responseFrom(v goja.Value) (out *config.Object, err error) {
	defer func() {
		if x := recover(); x != nil {
			ie, ok := x.(*goja.InterruptedError)
			if !ok {
				panic(x)
			}
			out, err = nil, ie
		}
	}()
	if v == nil || goja.IsNull(v) {
		return nil, &config.Error{Message: "Cannot read properties of null (reading 'statusCode')"}
	}
	if goja.IsUndefined(v) {
		return nil, &config.Error{Message: "Cannot read properties of undefined (reading 'statusCode')"}
	}
	var c config.Value
	if ex := rt.vm.Try(func() { c, _ = fromJS(rt, v, 0) }); ex != nil {
		return nil, &config.Error{Message: ex.Error()}
	}
	if o, ok := c.(*config.Object); ok {
		return o, nil
	}
	return &config.Object{}, nil
}

func predicateSource(fn string) string { return "(" + fn + ")(config, logger, imposterState);" }
func responseSource(fn string) string {
	return "(" + fn + ")(config, injectState, logger, done, imposterState);"
}
func decorateSource(fn string) string { return "(" + fn + ")(config, response, logger);" }

// injectionError builds Mountebank's InjectionError: code "invalid injection", the message, and
// in Source an object {source, data} whose members Mountebank renders beside code and message
// (data is the script error's message and is absent when the thrown value had none).
func injectionError(message, source string, err error) *config.Error {
	src := config.NewObject("source", source)
	if data, ok := errorData(err); ok {
		src.Set("data", data)
	}
	return &config.Error{Code: config.CodeInvalidInjection, Message: message, Source: src}
}

// errorData returns what Mountebank reports as error.message for a failed script.
func errorData(err error) (config.Value, bool) {
	var thrown goja.Value
	var ex *goja.Exception
	var rj rejected
	switch {
	case errors.As(err, &ex):
		thrown = ex.Value()
	case errors.As(err, &rj):
		thrown = rj.reason
	}
	if thrown != nil {
		o, ok := thrown.(*goja.Object)
		if !ok {
			return nil, false // a thrown primitive has no message
		}
		m := o.Get("message")
		if m == nil || goja.IsUndefined(m) {
			return nil, false
		}
		if s, isStr := m.Export().(string); isStr {
			return s, true
		}
		return m.String(), true
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if t, ok := ie.Value().(errTimeout); ok {
			return t.Error(), true
		}
		return fmt.Sprint(ie.Value()), true
	}
	var te errTimeout
	if errors.As(err, &te) {
		return te.Error(), true
	}
	return err.Error(), true
}

// rejected is the error of a promise a script returned that was rejected.
type rejected struct{ reason goja.Value }

func (r rejected) Error() string {
	if r.reason == nil {
		return "promise rejected"
	}
	return "promise rejected: " + r.reason.String()
}

// EndOfRequest runs a tcp imposter's endOfRequestResolver as Mountebank's tcp server does,
// `(fn)(requestData, logger)`, and reports whether the data received so far is a whole request.
// In text mode requestData is the UTF-8 text, in binary mode a Buffer. A failure is a
// *config.Error with code "invalid injection"; Mountebank then treats the data as incomplete.
func (s *Scope) EndOfRequest(source string, data []byte, binary bool) (bool, error) {
	rt := s.enter(source, kindEndOfRequest)
	defer s.leaveStateless(rt)
	src := "(" + source + ")(requestData, logger)"
	fn, err := s.function(rt, source)
	if err != nil {
		return false, injectionError("invalid end of request injection", src, err)
	}
	// Node's decoding: one U+FFFD for each invalid sequence (FF FE is two), not one a run.
	var arg goja.Value = rt.vm.ToValue(jsvalue.DecodeUTF8(data))
	if binary {
		arg = rt.newBuffer(data)
	}
	v, err := fn(goja.Undefined(), arg, rt.logger)
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			return false, limitError{injectionError("invalid end of request injection", src, err)}
		}
		return false, injectionError("invalid end of request injection", src, err)
	}
	return v.ToBoolean(), nil
}

// EndOfRequestResolver returns EndOfRequest for source and binary, to call for each packet: a
// resolver of binary mode that only reads the Buffer's length prefix (see compileEOR) runs as
// Go, without a runtime, whenever it would not throw; every other call runs on goja.
func (s *Scope) EndOfRequestResolver(source string, binary bool) func(data []byte) (bool, error) {
	p := s.e.compile(source)
	var fn *eorFn
	if binary && p.stateless(source, kindEndOfRequest) {
		fn = p.eorFn(source)
	}
	return func(data []byte) (bool, error) {
		if fn != nil {
			if done, ok := fn.run(data); ok {
				return done, nil
			}
		}
		return s.EndOfRequest(source, data, binary)
	}
}

// limitError is an end-of-request resolver's failure by the time or memory limit: ScriptLimit
// tells the tcp server (which runs the resolver again for every packet, each time for the whole
// --script-timeout) to close the connection.
type limitError struct{ err *config.Error }

func (e limitError) Error() string     { return e.err.Error() }
func (e limitError) Unwrap() error     { return e.err }
func (e limitError) ScriptLimit() bool { return true }
