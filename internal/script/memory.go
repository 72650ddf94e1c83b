package script

import (
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// DefaultMemoryLimit is how much a script call may make the heap grow when Options.MemoryLimit
// is zero.
const DefaultMemoryLimit = 256 << 20

// maxBufferBytes bounds one buffer or typed array a script makes when calls have no memory limit
// (node's buffer.constants.MAX_LENGTH before Node 22).
const maxBufferBytes = 4 << 30

// maxBytes is the largest buffer or typed array one script operation may make: no more than a
// call may take (a larger one would be interrupted once made, if the process survived making it).
func (e *Engine) maxBytes() int64 {
	if e.memLimit > 0 {
		return e.memLimit
	}
	return maxBufferBytes
}

// maxElements is how many elements a conversion of a script's array may go through (as the
// prelude's guards: 16 bytes a goja value).
func (rt *runtime) maxElements() int {
	if rt.memMax > 0 {
		return int(rt.memMax / 16)
	}
	return maxBufferBytes / 16
}

// errMemory is the value a runtime is interrupted with when its call makes the heap grow past
// the limit.
type errMemory struct{ limit int64 }

func (e errMemory) Error() string {
	return fmt.Sprintf("script used more than %d MiB of memory (--script-memory)", e.limit>>20)
}

// memWatch enforces the memory limit of script calls. goja cannot say what one runtime
// allocates, so while calls run it samples the process's heap every tick: a call during which
// the heap grew past the limit is suspect, and once a garbage collection confirms that the live
// heap grew that much, it is interrupted. (A call running beside the culprit can be interrupted
// with it.) A runtime interrupted so is dropped, and its memory given back to the system.
type memWatch struct {
	every time.Duration

	mu      sync.Mutex
	running map[*runtime]memCall
	wake    chan struct{}
	free    chan struct{} // a runtime was dropped: give its memory back

	heap     atomic.Int64 // heap objects at the last sample
	live     atomic.Int64 // live heap after the last garbage collection, at the last sample
	lastGC   time.Time    // the last collection the watch forced (watch goroutine only)
	interval time.Duration

	// Runtimes dropped for running out of memory whose memory is not given back yet: gone is
	// closed once one is collected. Calls wait while owed is set (see dropped).
	dropMu sync.Mutex
	gone   []chan struct{}
	owed   atomic.Pointer[chan struct{}]
}

// settle waits until the memory of the runtimes dropped for running out of it is given back.
func (m *memWatch) settle() {
	if ch := m.owed.Load(); ch != nil {
		<-*ch
	}
}

// memCall is a running call: which one (see watch.call), its limit and the live heap when it
// began.
type memCall struct {
	call  uint64
	limit int64
	base  int64
}

var (
	memWatchOnce sync.Once
	memWatchInst *memWatch
)

// theMemWatch returns the process's memWatch, starting it on first use.
func theMemWatch() *memWatch {
	memWatchOnce.Do(func() {
		m := &memWatch{every: 10 * time.Millisecond, interval: 100 * time.Millisecond,
			running: map[*runtime]memCall{}, wake: make(chan struct{}, 1), free: make(chan struct{}, 1)}
		m.sample()
		go m.run()
		memWatchInst = m
	})
	return memWatchInst
}

var memSamples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}

// sample reads the heap now.
func (m *memWatch) sample() (objects, live int64) {
	s := make([]metrics.Sample, len(memSamples))
	copy(s, memSamples)
	metrics.Read(s)
	objects, live = int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
	m.heap.Store(objects)
	m.live.Store(live)
	return objects, live
}

// begin registers the call rt begins (its watch.call is current), whose heap may grow by limit.
func (m *memWatch) begin(rt *runtime, call uint64, limit int64) {
	m.mu.Lock()
	m.running[rt] = memCall{call: call, limit: limit, base: m.live.Load()}
	first := len(m.running) == 1
	m.mu.Unlock()
	if first {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// end unregisters rt's call.
func (m *memWatch) end(rt *runtime) {
	m.mu.Lock()
	delete(m.running, rt)
	m.mu.Unlock()
}

func (m *memWatch) run() {
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		m.mu.Lock()
		idle := len(m.running) == 0
		m.mu.Unlock()
		if idle {
			select {
			case <-m.wake:
			case <-m.free:
				m.giveBack()
				continue
			}
		}
		select {
		case <-t.C:
			m.check()
		case <-m.free:
			m.giveBack()
		}
	}
}

// giveBackWait bounds how long giveBack waits for the dropped runtimes to be collected (one
// still referenced from elsewhere is given back by a later collection).
const giveBackWait = 250 * time.Millisecond

// giveBack returns the memory of the dropped runtimes to the system once they are collected
// (until the call that dropped one has returned, its stack holds it), then lets the calls
// waiting in settle begin. It runs on the watch's goroutine, outside check, which holds the
// runtimes it suspects.
func (m *memWatch) giveBack() {
	m.dropMu.Lock()
	gone := m.gone
	m.gone = nil
	m.dropMu.Unlock()
	deadline := time.Now().Add(giveBackWait)
	for _, g := range gone {
		for collected := false; !collected && time.Now().Before(deadline); {
			goruntime.GC()
			select {
			case <-g:
				collected = true
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// Twice: what a collection already under way when the runtime was dropped still marked
	// live is freed by the next one.
	debug.FreeOSMemory()
	debug.FreeOSMemory()
	m.sample() // calls that begin now measure from the heap without the dropped runtime
	m.dropMu.Lock()
	if len(m.gone) == 0 { // else another was dropped meanwhile: its giveBack opens the way
		if ch := m.owed.Swap(nil); ch != nil {
			close(*ch)
		}
	}
	m.dropMu.Unlock()
}

// check samples the heap and interrupts the calls during which the live heap grew past the
// limit.
func (m *memWatch) check() {
	objects, live := m.sample()
	type suspect struct {
		rt *runtime
		c  memCall
	}
	var suspects []suspect
	m.mu.Lock()
	for rt, c := range m.running {
		// A call that began while garbage (say, a runtime dropped a moment ago) still counted
		// as live measures from the lower heap once a collection has freed it; otherwise that
		// garbage would widen its allowance.
		if live < c.base {
			c.base = live
			m.running[rt] = c
		}
		if objects-c.base > c.limit {
			suspects = append(suspects, suspect{rt, c})
		}
	}
	m.mu.Unlock()
	if len(suspects) == 0 {
		return
	}
	// Garbage counts in objects: only the live heap after a collection tells. Collect when
	// the heap is far above what the calls began with, at most once per interval.
	if time.Since(m.lastGC) >= m.interval {
		for _, s := range suspects {
			if objects-s.c.base > 2*s.c.limit {
				goruntime.GC()
				m.lastGC = time.Now()
				_, live = m.sample()
				break
			}
		}
	}
	for _, s := range suspects {
		if live-s.c.base > s.c.limit {
			s.rt.interruptCall(s.c.call, errMemory{s.c.limit})
		}
	}
}

// outOfMemory stops the running call with the memory limit's error, as the watch does, and at
// once: what the call made is more than the limit allows (a string longer than the limit it
// returned, which the watch may have had no time to see), so the runtime is dropped after it.
// It panics with the interrupt (a *goja.InterruptedError), or, outside a call, with a
// RangeError.
func (rt *runtime) outOfMemory() {
	w := &rt.watch
	w.mu.Lock()
	call := w.call
	w.mu.Unlock()
	rt.interruptCall(call, errMemory{rt.memMax})
	if stop, ok := goja.AssertFunction(rt.arrayToJSON); ok && rt.stopping.Load() {
		if _, err := stop(rt.vm.NewArray()); err != nil {
			panic(err)
		}
	}
	panic(rt.vm.NewGoError(errMemory{rt.memMax}))
}

// dropped tells the watch that rt, whose call ran out of memory, is dropped: its memory is
// given back once it is collected (see giveBack), and the calls that begin meanwhile wait for
// that. One operation can leave the heap far past the limit before anything can look (goja
// makes s + s at once: a string doubled to 512 MiB under the 256 MiB limit took the heap to
// 1 GB), and a call that began beside that garbage (the same script, requested again) doubled
// its own string on top of it: 2 GB. It must be called before the next call can take rt's
// place (the imposter's lock, the pool's count).
func (m *memWatch) dropped(rt *runtime) {
	gone := make(chan struct{})
	goruntime.AddCleanup(rt, func(ch chan struct{}) { close(ch) }, gone)
	m.dropMu.Lock()
	m.gone = append(m.gone, gone)
	if m.owed.Load() == nil {
		ch := make(chan struct{})
		m.owed.Store(&ch)
	}
	m.dropMu.Unlock()
	select {
	case m.free <- struct{}{}:
	default:
	}
}

// objectToJSON gives Object.prototype a toJSON accessor, so that goja's JSON.stringify, a Go
// loop neither limit can interrupt, looks at each object it writes whether the call is being
// stopped: JSON.stringify of an object graph that names its objects twice at each level
// (o = {a: o, b: o}, forty times over) wrote 2^40 objects, 3 GB, for minutes past the time
// limit. The getter is Go and answers undefined, as the missing property did, without an
// allocation; while an interrupt is pending (stopping) it answers stopper, a function whose
// call runs the interpreter, which lets the interrupt through. (Arrays have the prelude's
// toJSON, which stopper is.) The setter makes an assigned toJSON the object's own property, as
// an assignment would without the accessor. What a script can see: 'toJSON' in {} is true,
// and Object.prototype lists it among its own property names; ({}).toJSON is undefined.
//
// native.jsonGuard, the replacer the prelude's JSON.stringify passes where the script gave no
// function, does the same for objects of no prototype, which have no toJSON to look up: it
// answers each value as given, and while an interrupt is pending an object whose one property
// has stopper as getter.
func objectToJSON(vm *goja.Runtime, native *goja.Object, stopping *atomic.Bool, stopper goja.Value) {
	trap := vm.NewObject()
	_ = trap.DefineAccessorProperty("stopping", stopper, nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	_ = native.Set("jsonGuard", func(call goja.FunctionCall) goja.Value {
		if stopping.Load() {
			return trap
		}
		return call.Argument(1)
	})
	get := vm.ToValue(func(goja.FunctionCall) goja.Value {
		if stopping.Load() {
			return stopper
		}
		return goja.Undefined()
	})
	set := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if o, ok := call.This.(*goja.Object); ok {
			_ = o.DefineDataProperty("toJSON", call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		}
		return goja.Undefined()
	})
	proto := vm.Get("Object").(*goja.Object).Get("prototype").(*goja.Object)
	_ = proto.DefineAccessorProperty("toJSON", get, set, goja.FLAG_TRUE, goja.FLAG_FALSE)
}
