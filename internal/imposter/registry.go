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
	// listing is byPort's imposters ordered by port, replaced (under mu) on every change.
	listing atomic.Pointer[Listing]

	// draining counts the removed imposters whose requests in flight are finishing; hardStop
	// ends their wait (Shutdown's deadline).
	draining sync.WaitGroup
	hardStop context.Context
	stopNow  context.CancelFunc
}

// Listing is the running imposters ordered by port at one moment. A new Listing replaces it on
// every change, so comparing two Listings tells whether the set changed; it is never modified.
type Listing struct {
	Imposters []*Imposter
}

// NewRegistry returns an empty registry whose imposters use opts.
func NewRegistry(opts Options) *Registry {
	r := &Registry{opts: opts, byPort: map[int]*Imposter{}}
	r.listing.Store(&Listing{})
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
	if im.port != 0 && r.Get(im.port) != nil {
		return config.AddrInUse(r.bindHost(im.def), im.port)
	}
	return r.start(im)
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
	r.relist()
	r.mu.Unlock()
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
	r.relist()
	r.mu.Unlock()
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
	r.relist()
	r.mu.Unlock()
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
	held := make(map[int]bool, len(r.byPort))
	for port := range r.byPort {
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
	r.mu.Lock()
	if other := r.byPort[im.port]; other != nil && other != im {
		// Only a custom protocol's program can announce a port another imposter holds (a
		// port mockd binds itself would have failed): that imposter stays.
		r.mu.Unlock()
		im.Stop(context.Background())
		return config.AddrInUse(r.bindHost(im.def), im.port)
	}
	r.byPort[im.port] = im
	r.relist()
	r.mu.Unlock()
	return nil
}
