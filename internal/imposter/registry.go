package imposter

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// defaultDrainTimeout bounds how long a deleted imposter lets its requests in flight finish.
const defaultDrainTimeout = 10 * time.Second

// Registry holds the running imposters by port. Changes are serialised; reads are safe for
// concurrent use with them.
type Registry struct {
	opts Options

	change sync.Mutex // serialises Add/Delete/ReplaceAll
	mu     sync.RWMutex
	byPort map[int]*Imposter
	// starting are the imposters whose custom protocol's program is starting (Reserve), with
	// the port they were created with (0: the program announces it); not listed.
	starting map[*Imposter]int
	// listing is byPort's imposters ordered by port, replaced (under mu) on every change.
	listing atomic.Pointer[Listing]

	// draining counts the removed imposters whose requests in flight are finishing; hardStop
	// ends their wait (Shutdown's deadline).
	draining sync.WaitGroup
	hardStop context.Context
	stopNow  context.CancelFunc
}

// Listing is the running imposters ordered by port at one moment. A new Listing replaces it on
// every change, so comparing two Listings tells whether the set changed (every empty one is
// noImposters); it is never modified.
type Listing struct {
	Imposters []*Imposter
}

// noImposters is the listing of every registry without imposters (never changed, as no
// listing is).
var noImposters Listing

// NewRegistry returns an empty registry whose imposters use opts.
func NewRegistry(opts Options) *Registry {
	r := &Registry{opts: opts, byPort: map[int]*Imposter{}, starting: map[*Imposter]int{}}
	r.listing.Store(&noImposters)
	r.hardStop, r.stopNow = context.WithCancel(context.Background())
	return r
}

// Custom names the custom protocols (--protofile) its imposters may have (Options.Custom).
func (r *Registry) Custom() map[string]bool { return r.opts.Custom }

// Get returns the imposter on port, or nil.
func (r *Registry) Get(port int) *Imposter {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byPort[port]
}

// All returns the imposters ordered by port, as Mountebank lists them, in a slice the caller owns.
func (r *Registry) All() []*Imposter {
	return append([]*Imposter(nil), r.Listing().Imposters...)
}

// Listing returns the imposters ordered by port; the result must not be modified.
func (r *Registry) Listing() *Listing { return r.listing.Load() }

// relist replaces the listing after a change of byPort; r.mu must be held for writing.
func (r *Registry) relist() {
	if len(r.byPort) == 0 {
		r.listing.Store(&noImposters) // a client suite's DELETE of its one imposter: no allocation
		return
	}
	if len(r.byPort) == 1 {
		for _, im := range r.byPort {
			r.listing.Store(&im.solo) // the imposter's own: no allocation
		}
		return
	}
	list := make([]*Imposter, 0, len(r.byPort))
	for _, im := range r.byPort {
		list = append(list, im)
	}
	slices.SortFunc(list, func(a, b *Imposter) int { return a.port - b.port }) // sort.Slice allocated thrice
	r.listing.Store(&Listing{Imposters: list})
}

// Create compiles and starts one imposter; on error nothing changes.
func (r *Registry) Create(def *config.Imposter) (*Imposter, error) {
	im, err := New(def, r.opts)
	if err != nil {
		return nil, err
	}
	if err := r.Add(im); err != nil {
		return nil, err
	}
	return im, nil
}

// Add starts im (built with Build) and adds it; on error nothing changes.
func (r *Registry) Add(im *Imposter) error {
	r.change.Lock()
	defer r.change.Unlock()
	if im.port != 0 && r.held(im.port, nil) {
		return config.AddrInUse(r.bindHost(im.def), im.port)
	}
	return r.start(im)
}

// held reports whether an imposter other than im runs on port or is starting there.
func (r *Registry) held(port int, im *Imposter) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if other := r.byPort[port]; other != nil && other != im {
		return true
	}
	for other, p := range r.starting {
		if p == port && other != im {
			return true
		}
	}
	return false
}

// ErrDeletedWhileStarting is the error of an imposter's creation when the imposter was
// deleted while its program was starting (see Reserve).
var ErrDeletedWhileStarting = &config.Error{Code: config.CodeCannotStart,
	Message: "the imposter was deleted while its program was starting"}

// Reserve holds im's port (when it names one) for the start of its custom protocol's program,
// which may take long: the other changes go on meanwhile (Add, Delete, ReplaceAll…), and a
// second imposter on the port is refused as if im ran there. im is not listed until AddStarted.
// Delete of the port, DeleteAll, ReplaceAll and Put on the port abort the start (StartAborted):
// AddStarted then fails. A port held already is AddrInUse, and nothing changes.
func (r *Registry) Reserve(im *Imposter) error {
	r.change.Lock()
	defer r.change.Unlock()
	if im.port != 0 && r.held(im.port, nil) {
		return config.AddrInUse(r.bindHost(im.def), im.port)
	}
	r.mu.Lock()
	r.starting[im] = im.port
	r.mu.Unlock()
	return nil
}

// StartReserved starts im, reserved with Reserve, without holding the registry: its program
// may take long to start. On error the reservation is dropped.
func (r *Registry) StartReserved(im *Imposter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			// A start that panicked (the admin API answers 500) leaves no reservation, and
			// its end is signalled all the same: a change that aborts it would wait for ever.
			r.mu.Lock()
			delete(r.starting, im)
			r.mu.Unlock()
			im.endStart()
			panic(p)
		}
	}()
	err = im.Start()
	im.endStart()
	r.mu.Lock()
	_, reserved := r.starting[im]
	if err != nil {
		delete(r.starting, im)
		r.mu.Unlock()
		if !reserved {
			return ErrDeletedWhileStarting
		}
		return err
	}
	if reserved {
		// A program the creation named no port for has announced its own: the port is held
		// from now on, as a named one is from Reserve, until AddStarted lists it. A creation
		// on it in between had won it (AddStarted then stopped this program), and a DELETE of
		// it answered 404 and left the imposter to be listed after it.
		r.starting[im] = im.port
	}
	r.mu.Unlock()
	return nil
}

// AddStarted lists im, reserved with Reserve and started with StartReserved, on its port. When
// it was deleted meanwhile (ErrDeletedWhileStarting) or its program announced a port another
// imposter holds (AddrInUse), it is stopped and nothing changes.
func (r *Registry) AddStarted(im *Imposter) error {
	r.change.Lock()
	defer r.change.Unlock()
	r.mu.Lock()
	_, reserved := r.starting[im]
	delete(r.starting, im)
	r.mu.Unlock()
	if !reserved {
		im.Stop(context.Background())
		return ErrDeletedWhileStarting
	}
	return r.list(im)
}

// Release drops im's reservation and stops it, started or not (a creation given up between
// Reserve and AddStarted).
func (r *Registry) Release(im *Imposter) {
	r.mu.Lock()
	delete(r.starting, im)
	r.mu.Unlock()
	im.abortStart()
	im.Stop(context.Background())
}

// abortStarting aborts the starts reserved on port (every one when all is set) and returns
// them, for awaitAborted; r.mu is held for writing.
func (r *Registry) abortStarting(port int, all bool) []*Imposter {
	var aborted []*Imposter
	for im, p := range r.starting {
		if all || (p == port && port != 0) {
			delete(r.starting, im)
			im.abortStart()
			aborted = append(aborted, im)
		}
	}
	return aborted
}

// awaitAborted waits until the starts abortStarting aborted have returned and stops those
// that had started (their program announced itself just before the abort): when it returns
// their programs have exited and the ports they held are free. A change that deleted a
// starting imposter and then created one on its port (PUT /imposters, a DELETE then a POST)
// failed with EADDRINUSE while the aborted program took its time to exit. The wait is the
// program's stop, bounded as a running program's (customproto's stop timeout, then SIGKILL);
// the caller holds r.change, not r.mu (the start takes r.mu on return).
func awaitAborted(aborted []*Imposter) {
	for _, im := range aborted {
		<-im.startReturned()
		im.Stop(context.Background())
	}
}

// Put starts im in place of the imposter on its port, if any: the old one stops accepting
// first (its requests in flight finish in the background, as with Delete). When im cannot
// start the port has no imposter and the error is returned.
func (r *Registry) Put(im *Imposter) error {
	r.change.Lock()
	defer r.change.Unlock()
	r.mu.Lock()
	old := r.byPort[im.port]
	delete(r.byPort, im.port)
	aborted := r.abortStarting(im.port, false)
	r.relist()
	r.mu.Unlock()
	awaitAborted(aborted)
	if old != nil {
		r.stop(old)
	}
	return r.start(im)
}

// bindHost is the address an imposter binds to.
func (r *Registry) bindHost(def *config.Imposter) string {
	if def.Host != "" {
		return def.Host
	}
	return r.opts.Host
}

// Delete removes the imposter on port and returns it (nil when there was none). When it
// returns the imposter accepts no more connections and its port is free; the requests in
// flight finish in the background (see Shutdown).
func (r *Registry) Delete(port int) *Imposter {
	r.change.Lock()
	defer r.change.Unlock()
	r.mu.Lock()
	im := r.byPort[port]
	delete(r.byPort, port)
	aborted := r.abortStarting(port, false)
	r.relist()
	r.mu.Unlock()
	awaitAborted(aborted)
	if im != nil {
		r.stop(im)
	}
	return im
}

// stop closes im's listener and lets its requests in flight finish in the background, for up
// to the drain timeout. With none in flight (the connections were idle, or there were none) it
// finishes at once, without a goroutine and a timer (a client suite deletes an imposter after
// each test).
func (r *Registry) stop(im *Imposter) {
	ok, busy := im.closeListener()
	if !ok {
		return
	}
	if busy == 0 {
		im.drain(r.hardStop)
		return
	}
	timeout := r.opts.DrainTimeout
	if timeout <= 0 {
		timeout = defaultDrainTimeout
	}
	r.draining.Add(1)
	go func() {
		defer r.draining.Done()
		ctx, cancel := context.WithTimeout(r.hardStop, timeout)
		defer cancel()
		im.drain(ctx)
	}()
}

// DeleteAll removes every imposter, as Delete does, and returns them ordered by port.
func (r *Registry) DeleteAll() []*Imposter {
	r.change.Lock()
	defer r.change.Unlock()
	return r.deleteAllLocked()
}

func (r *Registry) deleteAllLocked() []*Imposter {
	all := r.All()
	r.mu.Lock()
	r.byPort = map[int]*Imposter{}
	aborted := r.abortStarting(0, true)
	r.relist()
	r.mu.Unlock()
	awaitAborted(aborted)
	for _, im := range all {
		r.stop(im)
	}
	return all
}

// Shutdown removes every imposter and waits until the requests in flight of every imposter
// removed so far have finished, or ctx ends: then their connections are closed.
func (r *Registry) Shutdown(ctx context.Context) []*Imposter {
	stopped := r.DeleteAll()
	done := make(chan struct{})
	go func() {
		r.draining.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		r.stopNow()
		<-done
	}
	return stopped
}

// Build compiles def into an imposter that uses the registry's options, without starting it.
func (r *Registry) Build(def *config.Imposter) (*Imposter, error) {
	return New(def, r.opts)
}

// ReplaceAll stops the running imposters and starts news (built with Build). Ports named twice
// are refused before anything changes. The new imposters on ports no running imposter holds are
// started first, so a port another process holds (EADDRINUSE) or a host that cannot be bound is
// refused while the running imposters still serve, and they stay as they were (Mountebank has
// deleted them by then). Only then are the running ones stopped and the rest started; when one of
// those cannot start (its port taken in between), the ones started are stopped and the error
// returned, and the old set is gone, as in Mountebank.
func (r *Registry) ReplaceAll(news []*Imposter) ([]*Imposter, error) {
	r.change.Lock()
	defer r.change.Unlock()
	seen := map[int]bool{}
	for _, im := range news {
		if im.port != 0 {
			if seen[im.port] {
				return nil, config.AddrInUse(r.bindHost(im.def), im.port)
			}
			seen[im.port] = true
		}
	}
	r.mu.Lock()
	held := make(map[int]bool, len(r.byPort)+len(r.starting))
	for port := range r.byPort {
		held[port] = true
	}
	for _, port := range r.starting { // their starts are aborted below (deleteAllLocked)
		held[port] = true
	}
	r.mu.Unlock()
	started := make([]*Imposter, 0, len(news))
	fail := func(err error) ([]*Imposter, error) {
		for _, s := range started {
			r.stop(s)
		}
		return nil, err
	}
	for _, im := range news {
		if im.port == 0 || !held[im.port] {
			if err := im.Start(); err != nil {
				return fail(err)
			}
			started = append(started, im)
		}
	}
	r.deleteAllLocked()
	for _, im := range news {
		if im.port != 0 && held[im.port] {
			if err := im.Start(); err != nil {
				return fail(err)
			}
			started = append(started, im)
		}
	}
	r.mu.Lock()
	for _, im := range started {
		r.byPort[im.port] = im
	}
	r.relist()
	r.mu.Unlock()
	return news, nil // every one started, in the order given
}

// start starts im and lists it on its port (the caller holds r.change).
func (r *Registry) start(im *Imposter) error {
	if err := im.Start(); err != nil {
		return err
	}
	return r.list(im)
}

// list lists im, started, on its port. Only a custom protocol's program can announce a port
// another imposter holds, or one whose program starts (a port mockd binds itself would have
// failed): that imposter stays, and im is stopped (AddrInUse).
func (r *Registry) list(im *Imposter) error {
	if r.held(im.port, im) {
		im.Stop(context.Background())
		return config.AddrInUse(r.bindHost(im.def), im.port)
	}
	r.mu.Lock()
	r.byPort[im.port] = im
	r.relist()
	r.mu.Unlock()
	return nil
}
