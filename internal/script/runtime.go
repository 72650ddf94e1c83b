package script

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// maxCallStack bounds JavaScript recursion (V8 allows about ten thousand frames).
const maxCallStack = 10000

// runtime is one goja runtime and what lives in it for one Scope. It is used by one goroutine at
// a time (the Scope's mutex holds it).
type runtime struct {
	vm            *goja.Runtime
	log           *slog.Logger
	imposterState *goja.Object // config.state, imposterState
	injectState   *goja.Object // the deprecated positional `state` of inject responses
	logger        *goja.Object // config.logger
	fns           map[*goja.Program]goja.Callable
	// recent holds the last functions looked up, by source: most calls skip the lookup of
	// the source's program in the Engine's cache.
	recent     [4]recentFn
	nextRecent int

	cfgKeys []cfgKeys // config key lists by request shape

	gen    uint64        // counts the calls (see lazy.gen)
	probed *lazy         // see lazyOf
	args   [5]goja.Value // the arguments of a call, without an allocation per call

	timers    []*jsTimer
	nextTimer int64
	ioc       *ioCall // the running call's network I/O, if it started any (loop.go)

	watch    watch // the time limit of calls
	deadline time.Time
	limit    time.Duration

	// JSON.parse and JSON.stringify, for a state shared through a store (see shared.go).
	jsonParse, jsonStringify goja.Callable
	// arrayToJSON is the prelude's Array.prototype.toJSON (it bounds JSON.stringify's arrays),
	// which fromJS leaves out.
	arrayToJSON *goja.Object
	// stopping is set while an interrupt of the running call is pending (see objectToJSON).
	stopping atomic.Bool

	// rawUint8Array is goja's own Uint8Array constructor and bufferProto Buffer.prototype, set
	// by installNode: newBuffer makes a Buffer of bytes mockd gives a script (a tcp packet)
	// without the size checks of the constructors scripts call (see guardSource).
	rawUint8Array goja.Constructor
	bufferProto   *goja.Object

	mem    *memWatch // watches the memory of calls; nil = no limit
	memMax int64     // how much the heap may grow during a call
	// convLeft is how many more characters of strings the conversion in progress (fromJS) may
	// take before it fails as out of memory.
	convLeft int64
	pooled   bool          // the runtime belongs to its Scope's pool (see stateless.go)
	config   *configObject // a pooled runtime's config argument, reused by each call (see newConfig)
	// For a pooled runtime, under its Scope's poolMu: when its running call was given it, and
	// when it last came back.
	started, idleSince time.Time
	// nodeArgs is set until installNode has run (see needNode).
	nodeArgs *nodeArgs

	// What cancelOn arranged for the running call, for cancelOff.
	notifier   doneNotifier
	cancelStop func() bool
	spoiled    atomic.Bool // a call ran out of memory: the runtime is dropped after it
}

type recentFn struct {
	source string
	fn     goja.Callable
}

// jsTimer is one pending setTimeout/setInterval/setImmediate.
type jsTimer struct {
	id       int64
	when     time.Time
	every    time.Duration // > 0 for setInterval
	fn       goja.Callable
	args     []goja.Value
	canceled bool
}

// errTimeout is the value a runtime is interrupted with when a call runs out of time.
type errTimeout struct{ limit time.Duration }

func (e errTimeout) Error() string { return fmt.Sprintf("script timed out after %s", e.limit) }

func (e *Engine) newRuntime(log *slog.Logger) *runtime {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	rt := &runtime{vm: vm, log: log, fns: map[*goja.Program]goja.Callable{}}
	if e.memLimit > 0 {
		rt.mem, rt.memMax = theMemWatch(), e.memLimit
	}
	rt.imposterState = vm.NewObject()
	rt.injectState = vm.NewObject()
	rt.watch.timer = time.AfterFunc(time.Hour, rt.watchFired)
	rt.watch.timer.Stop()

	rt.logger = vm.NewObject()
	for _, level := range []string{"debug", "info", "warn", "error"} {
		lv := level
		_ = rt.logger.Set(lv, func(call goja.FunctionCall) goja.Value {
			rt.emit(lv, formatArgs(rt, call.Arguments))
			return goja.Undefined()
		})
	}

	g := vm.GlobalObject()
	_ = g.Set("setTimeout", rt.setTimer(false))
	_ = g.Set("setInterval", rt.setTimer(true))
	_ = g.Set("setImmediate", func(call goja.FunctionCall) goja.Value {
		args := append([]goja.Value{call.Argument(0), vm.ToValue(0)}, call.Arguments[min(1, len(call.Arguments)):]...)
		return rt.setTimer(false)(goja.FunctionCall{Arguments: args})
	})
	clear := func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		for _, t := range rt.timers {
			if t.id == id {
				t.canceled = true
			}
		}
		return goja.Undefined()
	}
	_ = g.Set("clearTimeout", clear)
	_ = g.Set("clearInterval", clear)
	_ = g.Set("clearImmediate", clear)

	env := vm.NewObject()
	for k, v := range e.env {
		_ = env.Set(k, v)
	}
	native := vm.NewObject()
	_ = native.Set("env", env)
	_ = native.Set("maxBytes", e.maxBytes())
	if rt.memMax > 0 {
		_ = native.Set("outOfMemory", func(goja.FunctionCall) goja.Value { rt.outOfMemory(); return nil })
		_ = native.Set("jsonValues", jsonValues)
	}
	if e.maxString > 0 {
		_ = native.Set("maxString", e.maxString)
	}
	if e.longString > 0 {
		_ = native.Set("longString", e.longString)
	}
	if e.chunkElements > 0 {
		_ = native.Set("chunkElements", e.chunkElements)
	}
	_ = native.Set("format", func(call goja.FunctionCall) goja.Value { return vm.ToValue(formatArgs(rt, call.Arguments)) })
	_ = native.Set("inspect", func(call goja.FunctionCall) goja.Value { return vm.ToValue(inspect(rt, call.Argument(0))) })
	_ = native.Set("log", func(level, msg string) {
		switch level {
		case "log", "trace":
			level = "info"
		}
		rt.emit(level, msg)
	})
	_ = native.Set("cwd", func() string { d, _ := os.Getwd(); return d })
	_ = native.Set("isEncoding", func(enc string) bool { _, ok := encodeString("", enc); return ok })
	_ = native.Set("encode", func(s, enc string) goja.ArrayBuffer {
		b, ok := encodeString(s, enc)
		if !ok {
			panic(vm.NewTypeError("Unknown encoding: " + enc))
		}
		return vm.NewArrayBuffer(b)
	})
	_ = native.Set("decode", func(v goja.Value, enc string) string {
		b, _ := v.Export().([]byte)
		s, ok := decodeBytes(b, enc)
		if !ok {
			panic(vm.NewTypeError("Unknown encoding: " + enc))
		}
		return s
	})
	_ = native.Set("hash", func(alg string, v goja.Value) goja.ArrayBuffer {
		b, _ := v.Export().([]byte)
		var h hash.Hash
		switch strings.ToLower(alg) {
		case "md5":
			h = md5.New()
		case "sha1":
			h = sha1.New()
		case "sha256":
			h = sha256.New()
		case "sha512":
			h = sha512.New()
		default:
			panic(vm.NewGoError(fmt.Errorf("Digest method not supported")))
		}
		h.Write(b)
		return vm.NewArrayBuffer(h.Sum(nil))
	})
	_ = native.Set("randomBytes", func(n int) goja.ArrayBuffer {
		if n < 0 || n > 1<<20 {
			panic(vm.NewTypeError("The value of \"size\" is out of range."))
		}
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return vm.NewArrayBuffer(b)
	})
	_ = native.Set("randomUUID", func() string {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	})
	_ = native.Set("qsParse", func(s string) goja.Value {
		o := vm.NewObject()
		for _, part := range strings.Split(s, "&") {
			if part == "" {
				continue
			}
			k, v, _ := strings.Cut(part, "=")
			k, v = qsUnescape(k), qsUnescape(v)
			switch cur := o.Get(k); {
			case cur == nil:
				_ = o.Set(k, v)
			case cur.ExportType() != nil && cur.ExportType().Kind() == 23: // slice
				_ = o.Set(k, vm.NewArray(append(cur.Export().([]any), v)...))
			default:
				_ = o.Set(k, vm.NewArray(cur, v))
			}
		}
		return o
	})
	_ = native.Set("qsStringify", func(v goja.Value) string {
		o, ok := v.(*goja.Object)
		if !ok {
			return ""
		}
		var parts []string
		for _, k := range o.Keys() {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(o.Get(k).String()))
		}
		return strings.Join(parts, "&")
	})

	prelude, err := vm.RunProgram(e.preludeProgram())
	if err != nil {
		panic("BUG: script prelude: " + err.Error())
	}
	fn, _ := goja.AssertFunction(prelude)
	modules, err := fn(goja.Undefined(), g, native)
	if err != nil {
		panic("BUG: script prelude: " + err.Error())
	}
	rt.arrayToJSON, _ = native.Get("arrayToJSON").(*goja.Object)
	objectToJSON(vm, native, &rt.stopping, rt.arrayToJSON)
	rt.nodeArgs = &nodeArgs{g, native, modules}
	return rt
}

// nodeArgs is what installNode needs, kept until a call needs it (see needNode).
type nodeArgs struct {
	g, native *goja.Object
	modules   goja.Value
}

// needNode installs node's additions (installNode) in rt before a call that may use them. They
// are about 180 KB of small objects (Buffer's methods, events, timers, util.inspect) in each
// runtime, which every garbage collection marks: most scripts use none of them (bench/'s inject
// scenario spent 6% of its instructions marking them), so a runtime gets them only when the first
// function that may is called on it (see program.needsNode).
func (rt *runtime) needNode() {
	if a := rt.nodeArgs; a != nil {
		rt.nodeArgs = nil
		rt.installNode(a.g, a.native, a.modules)
	}
}

func mustFunc(v goja.Value) goja.Callable {
	fn, ok := goja.AssertFunction(v)
	if !ok {
		panic("BUG: script prelude: helper is not a function")
	}
	return fn
}

func qsUnescape(s string) string {
	u, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return u
}

func (rt *runtime) emit(level, msg string) {
	switch level {
	case "debug":
		rt.log.Debug(msg)
	case "warn":
		rt.log.Warn(msg)
	case "error":
		rt.log.Error(msg)
	default:
		rt.log.Info(msg)
	}
}

func (rt *runtime) setTimer(repeat bool) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(rt.vm.NewTypeError("The \"callback\" argument must be of type function"))
		}
		ms := call.Argument(1).ToFloat()
		if !(ms >= 1) || ms > 2147483647 {
			ms = 1
		}
		d := time.Duration(ms * float64(time.Millisecond))
		rt.nextTimer++
		t := &jsTimer{id: rt.nextTimer, when: time.Now().Add(d), fn: fn}
		if len(call.Arguments) > 2 {
			t.args = append([]goja.Value(nil), call.Arguments[2:]...)
		}
		if repeat {
			t.every = d
		}
		rt.timers = append(rt.timers, t)
		return rt.vm.ToValue(t.id)
	}
}

// watch enforces the time limit of a runtime's calls with one timer that is left set between
// calls (setting and stopping a timer for every call would cost more than a short script). When
// it fires it interrupts the call that ran past its deadline, sets itself again for a call that
// has time left, and stays unset while no call runs.
type watch struct {
	mu       sync.Mutex
	timer    *time.Timer
	set      bool      // the timer is set (or firing)
	fireAt   time.Time // when it was set to fire
	running  bool      // a call runs
	deadline time.Time // the running call's
	limit    time.Duration
	call     uint64 // counts the calls, so that a late cancellation spares the next one
	// canceledBy is the context the running call is canceled by, where it tells the runtime
	// itself (see cancelOn).
	canceledBy context.Context
}

func (rt *runtime) watchFired() {
	w := &rt.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		w.set = false
		return
	}
	if left := time.Until(w.deadline); left > 0 {
		w.fireAt = w.deadline
		w.timer.Reset(left)
		return
	}
	w.set = false
	interrupt(rt.vm, &rt.stopping, errTimeout{w.limit})
}

// begin arms the time limit of one call.
func (rt *runtime) begin(limit time.Duration) {
	if rt.mem != nil {
		rt.mem.settle() // before the call's time starts
	}
	rt.gen++
	rt.deadline = time.Now().Add(limit)
	rt.limit = limit
	w := &rt.watch
	w.mu.Lock()
	w.running, w.deadline, w.limit = true, rt.deadline, limit
	w.call++
	call := w.call
	if !w.set || rt.deadline.Before(w.fireAt) {
		// Otherwise it fires no later than this call's deadline, and then sets itself again
		// for the time left.
		w.set, w.fireAt = true, rt.deadline
		w.timer.Reset(limit)
	}
	w.mu.Unlock()
	if rt.mem != nil {
		rt.mem.begin(rt, call, rt.memMax)
	}
}

// interruptCall interrupts the running call with v if it is still the call numbered call (see
// watch.call): a late interruption spares the next call.
func (rt *runtime) interruptCall(call uint64, v any) {
	w := &rt.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running && w.call == call {
		if _, ok := v.(errMemory); ok {
			rt.spoiled.Store(true)
		}
		interrupt(rt.vm, &rt.stopping, v)
	}
}

// interrupt stops the running call with v. The interrupt comes before stopping: what looks at
// stopping (objectToJSON's getters, jsonGuard, fromJS) counts on the next instruction to throw.
// The other way round, a stringify that saw stopping in between went on: jsonGuard's trap met
// itself inside the trap, and the call answered "Converting circular structure to JSON"
// instead of the limit's error.
func interrupt(vm *goja.Runtime, stopping *atomic.Bool, v any) {
	vm.Interrupt(v)
	stopping.Store(true)
}

// errCanceled is the value a runtime is interrupted with when the request it serves is
// canceled (its client went away).
type errCanceled struct{}

func (errCanceled) Error() string {
	return "the request was canceled: its client closed the connection"
}

// doneNotifier is a context that tells a receiver when it ends, without an allocation or a
// goroutine per call (netconn's connection context; see netconn.NotifyDone).
type doneNotifier interface {
	NotifyDone(r interface{ ContextDone(context.Context) }) bool
	StopNotifyDone(r interface{ ContextDone(context.Context) }) bool
}

// cancelOn interrupts the call in progress (begun by begin) when ctx ends, until cancelOff,
// which must be called before end.
func (rt *runtime) cancelOn(ctx context.Context) {
	if ctx == nil {
		return
	}
	w := &rt.watch
	if n, ok := ctx.(doneNotifier); ok {
		w.mu.Lock()
		w.canceledBy = ctx
		w.mu.Unlock()
		rt.notifier = n
		if !n.NotifyDone(rt) {
			rt.notifier = nil
			rt.ContextDone(ctx) // ended already
		}
		return
	}
	if ctx.Done() == nil {
		return
	}
	w.mu.Lock()
	call := w.call
	w.mu.Unlock()
	rt.cancelStop = context.AfterFunc(ctx, func() { rt.interruptCall(call, errCanceled{}) })
}

// cancelOff undoes cancelOn.
func (rt *runtime) cancelOff() {
	if rt.notifier != nil {
		rt.notifier.StopNotifyDone(rt)
		rt.notifier = nil
	}
	if rt.cancelStop != nil {
		rt.cancelStop()
		rt.cancelStop = nil
	}
	w := &rt.watch
	w.mu.Lock()
	w.canceledBy = nil
	w.mu.Unlock()
}

// ContextDone interrupts the running call when ctx is the context it is canceled by (see
// cancelOn): a late notice spares the next call, which has its own or none.
func (rt *runtime) ContextDone(ctx context.Context) {
	w := &rt.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running && w.canceledBy == ctx {
		interrupt(rt.vm, &rt.stopping, errCanceled{})
	}
}

// end disarms the time limit, clears a pending interrupt and drops the timers the call left.
func (rt *runtime) end() {
	w := &rt.watch
	w.mu.Lock()
	w.running = false // from now on the watch interrupts nothing
	w.mu.Unlock()
	if rt.mem != nil {
		rt.mem.end(rt)
	}
	rt.stopIO()
	if rt.config != nil {
		rt.config.clear() // holds nothing of this call until the next
	}
	rt.vm.ClearInterrupt()
	rt.stopping.Store(false)
	clear(rt.timers)
	rt.timers = rt.timers[:0]
}

// discard lets go of a runtime that will not run again: its time limit's timer, left set
// between calls, would keep it (and whatever its last call allocated) alive until it fires.
func (rt *runtime) discard() {
	w := &rt.watch
	w.mu.Lock()
	w.timer.Stop()
	w.set = false
	w.mu.Unlock()
}

// formatArgs renders arguments as Node's util.format does, for the common directives.
func formatArgs(rt *runtime, args []goja.Value) string {
	if len(args) == 0 {
		return ""
	}
	var b strings.Builder
	rest := args
	if s, ok := args[0].Export().(string); ok && strings.IndexByte(s, '%') >= 0 {
		rest = args[1:]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c != '%' || i+1 == len(s) {
				b.WriteByte(c)
				continue
			}
			d := s[i+1]
			switch d {
			case '%':
				b.WriteByte('%')
				i++
			case 's', 'd', 'i', 'f', 'j', 'o', 'O':
				i++
				if len(rest) == 0 {
					b.WriteByte('%')
					b.WriteByte(d)
					continue
				}
				a := rest[0]
				rest = rest[1:]
				switch d {
				case 's':
					if _, isObj := a.(*goja.Object); isObj {
						b.WriteString(inspect(rt, a))
					} else {
						b.WriteString(a.String())
					}
				case 'd', 'f':
					b.WriteString(jsvalue.FormatNumber(a.ToFloat()))
				case 'i':
					b.WriteString(jsvalue.FormatNumber(float64(a.ToInteger())))
				default:
					b.WriteString(inspect(rt, a))
				}
			default:
				b.WriteByte(c)
			}
		}
	} else {
		b.WriteString(display(rt, args[0]))
		rest = args[1:]
	}
	for _, a := range rest {
		b.WriteByte(' ')
		b.WriteString(display(rt, a))
	}
	return b.String()
}

func display(rt *runtime, v goja.Value) string {
	if _, isObj := v.(*goja.Object); isObj {
		return inspect(rt, v)
	}
	return v.String()
}

// inspect renders v compactly as JSON (undefined as "undefined").
func inspect(rt *runtime, v goja.Value) string {
	var c config.Value
	var ok bool
	if rt.vm.Try(func() { c, ok = fromJS(rt, v, 0) }) != nil {
		return "null" // a toJSON that throws (the limits' interrupts go on up)
	}
	if !ok {
		if v == nil || goja.IsUndefined(v) {
			return "undefined"
		}
		return v.String()
	}
	return string(config.MarshalJSON(c, 0))
}

// encodeString converts s to bytes in one of Node's Buffer encodings.
func encodeString(s, enc string) ([]byte, bool) {
	switch strings.ToLower(enc) {
	case "utf8", "utf-8":
		return []byte(s), true
	case "base64", "base64url":
		return config.DecodeBase64(s), true
	case "hex":
		n := len(s) / 2 * 2
		out := make([]byte, 0, n/2)
		for i := 0; i+1 < n; i += 2 {
			b, err := hex.DecodeString(s[i : i+2])
			if err != nil {
				break
			}
			out = append(out, b[0])
		}
		return out, true
	case "latin1", "binary", "ascii":
		out := make([]byte, 0, len(s))
		for _, r := range s {
			out = append(out, byte(r))
		}
		return out, true
	case "ucs2", "ucs-2", "utf16le", "utf-16le":
		out := make([]byte, 0, 2*len(s))
		for _, r := range s {
			if r > 0xffff {
				r -= 0x10000
				hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
				out = append(out, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
				continue
			}
			out = append(out, byte(r), byte(r>>8))
		}
		return out, true
	}
	return nil, false
}

// decodeBytes converts b to a string in one of Node's Buffer encodings.
func decodeBytes(b []byte, enc string) (string, bool) {
	switch strings.ToLower(enc) {
	case "utf8", "utf-8":
		return strings.ToValidUTF8(string(b), "\uFFFD"), true
	case "base64":
		return base64.StdEncoding.EncodeToString(b), true
	case "base64url":
		return base64.RawURLEncoding.EncodeToString(b), true
	case "hex":
		return hex.EncodeToString(b), true
	case "latin1", "binary":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), true
	case "ascii":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c & 0x7f)
		}
		return string(r), true
	case "ucs2", "ucs-2", "utf16le", "utf-16le":
		var sb strings.Builder
		for i := 0; i+1 < len(b); i += 2 {
			u := rune(b[i]) | rune(b[i+1])<<8
			if u >= 0xd800 && u < 0xdc00 && i+3 < len(b) {
				lo := rune(b[i+2]) | rune(b[i+3])<<8
				if lo >= 0xdc00 && lo < 0xe000 {
					sb.WriteRune(0x10000 + (u-0xd800)<<10 + (lo - 0xdc00))
					i += 2
					continue
				}
			}
			if !utf8.ValidRune(u) {
				u = utf8.RuneError
			}
			sb.WriteRune(u)
		}
		return sb.String(), true
	}
	return "", false
}
