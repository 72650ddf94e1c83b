package netconn

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

var (
	releasing  atomic.Bool
	releaseGen atomic.Uint64 // counts the calls of ReleaseMemorySoon
)

// releaseAfter is when ReleaseMemorySoon returns memory, after its last call (each a wait after
// the one before): at once once the change is answered, and a few times more as what it made
// stops being referenced; the last once the goroutines fasthttp served a burst of connections
// with have ended (it ends one idle for 10 s, looking every 10 s), and their stacks are free.
var releaseAfter = [...]time.Duration{250 * time.Millisecond, 750 * time.Millisecond, 3 * time.Second, 6 * time.Second, 20 * time.Second}

// ReleaseMemorySoon returns the heap's free memory to the operating system in the seconds after
// a big imposter was built, a large admin body was handled or answered, or a burst of
// connections ended, as the request or config file that made it (and the admin API's answer,
// which renders it) stop being referenced. Parsing
// and compiling 100,000 stubs allocates several times what they keep, and the runtime would
// otherwise hold on to most of it (resident about twice what is live, for as long as the
// process runs). It runs in a goroutine of its own, never on a request's path; a call while it
// runs starts its schedule again.
func ReleaseMemorySoon() {
	releaseGen.Add(1)
	if !releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			gen := releaseGen.Load()
			for _, d := range releaseAfter {
				time.Sleep(d)
				debug.FreeOSMemory()
				if releaseGen.Load() != gen {
					break
				}
			}
			if releaseGen.Load() != gen {
				continue // called again meanwhile: from the start
			}
			releasing.Store(false)
			// A call between the check and the store found it running: take it over, unless
			// that call's own goroutine already has.
			if releaseGen.Load() == gen || !releasing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}
