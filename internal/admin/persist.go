package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/store"
)

// Store keeps the imposter definitions the API acknowledges: store.Memory (the process only),
// store.Dir (--datadir) or store.Redis (--store). The API calls Save with its change lock held,
// one change at a time.
type Store interface {
	// Save stores a change and returns the store's version after it. When it returns nil the
	// change is as durable as the store makes it: the API acknowledges it then.
	Save(ctx context.Context, ch store.Change) (int64, error)
}

// readsImposters reports whether a request reads the imposters (or their requests and counts).
func readsImposters(path string) bool {
	return strings.HasPrefix(path, "/imposters") || path == "/verify"
}

// changes reports whether a request may change the imposters.
func changes(method, path string) bool {
	switch method {
	case fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodDelete, fasthttp.MethodPatch:
		// A custom protocol's program resolving a request (…/_requests) changes no definition
		// (but proxy recording, as an http proxy's does), and must not wait for a change.
		return strings.HasPrefix(path, "/imposters") && !strings.HasSuffix(path, "/explain") && !strings.Contains(path, "/_requests")
	}
	return false
}

// stubsState is an imposter as a change found it: which one, and at which revision of its
// stubs.
type stubsState struct {
	im  *imposter.Imposter
	rev uint64
}

// snapshot returns the imposters by port with the revision of their stubs.
func (a *API) snapshot() map[int]stubsState {
	list := a.reg.Listing().Imposters
	out := make(map[int]stubsState, len(list))
	for _, im := range list {
		out[im.Port()] = stubsState{im, im.StubRevision()}
	}
	return out
}

// StoredImposter returns what a store keeps of im, rendered (when the store asks) from its
// stubs as they are now: the definition (replayable) and the stubs' IDs, in order.
func StoredImposter(im *imposter.Imposter) store.Imposter {
	stubs := im.Stubs(false)
	return store.Imposter{Port: im.Port(), ID: im.ID(), Render: func() (*config.Object, []string) {
		ids := make([]string, stubs.Len())
		for i := range ids {
			ids[i] = stubs.ID(i)
		}
		return printStubs(im, stubs, PrintOptions{Replayable: true, Stored: true}), ids
	}, Next: func() []uint64 {
		next := make([]uint64, stubs.Len())
		for i := range next {
			next[i] = stubs.Next(i)
		}
		return next
	}}
}

// diff returns the change from the imposters of before to the running ones.
func (a *API) diff(before map[int]stubsState) store.Change {
	var ch store.Change
	seen := make(map[int]bool, len(before))
	for _, im := range a.reg.Listing().Imposters {
		seen[im.Port()] = true
		if b, ok := before[im.Port()]; ok && b.im == im && b.rev == im.StubRevision() {
			continue
		}
		ch.Put = append(ch.Put, StoredImposter(im))
	}
	for port := range before {
		if !seen[port] {
			ch.Deleted = append(ch.Deleted, port)
		}
	}
	return ch
}

// Close refuses the changes that come after it (503), once the one under way, if any, is made
// and saved, or ctx is done. The process calls it as it begins to shut down, before it stops the
// imposters: a PUT /imposters running beside the shutdown saw the imposters it replaced already
// stopping (gone from the listing), so it saved its own without their deletion, and a restart
// with --datadir ran both the old imposters and the new ones.
func (a *API) Close(ctx context.Context) {
	locked := make(chan struct{})
	go func() {
		a.changeMu.Lock()
		a.closing = true
		a.changeMu.Unlock()
		close(locked)
	}()
	select {
	case <-locked:
	case <-ctx.Done():
	}
}

// SaveAll stores every running imposter, replacing what the store held.
func (a *API) SaveAll(ctx context.Context) error {
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	if a.shared != nil {
		return a.saveShared(ctx, a.everything())
	}
	a.unsaved = true // a replacement
	return a.saveLocked(ctx, store.Change{})
}

// everything is the change that replaces what a store holds with the running imposters.
func (a *API) everything() store.Change {
	ch := store.Change{Replace: true}
	for _, im := range a.reg.Listing().Imposters {
		ch.Put = append(ch.Put, StoredImposter(im))
	}
	return ch
}

// saveLocked stores ch in the node's own store (not a shared one), changeMu held. After a save
// failed, the change that failed is live but not in the store, so the next save stores every
// running imposter instead of its own change: what the store holds catches up with what runs
// (disk space freed, say) at the first save that succeeds.
func (a *API) saveLocked(ctx context.Context, ch store.Change) error {
	if a.unsaved {
		ch = a.everything()
	}
	now := a.snapshot()
	ch = a.withRecorded(ch, now)
	_, err := a.opts.Store.Save(ctx, ch)
	a.unsaved = err != nil
	if err == nil {
		a.saved = now
	}
	return err
}

// withRecorded adds to ch the running imposters whose stubs changed since the store last took
// them (now against a.saved) without a change of their own: a proxy records its answers into
// its imposter's stubs between changes, and a change's diff, taken from the imposters as the
// change began, does not see them (a recording on one imposter was never saved when another
// imposter changed next). changeMu is held.
func (a *API) withRecorded(ch store.Change, now map[int]stubsState) store.Change {
	if ch.Replace || a.saved == nil {
		return ch
	}
	var put map[int]bool
	for port, s := range now {
		if a.saved[port] == s {
			continue
		}
		if put == nil {
			put = make(map[int]bool, len(ch.Put))
			for _, im := range ch.Put {
				put[im.Port] = true
			}
		}
		if !put[port] {
			ch.Put = append(ch.Put, StoredImposter(s.im))
		}
	}
	return ch
}

// Change runs change, a change of the running imposters made outside the API (a config file
// reloaded by serve --watch or SIGHUP), as the API runs its own: under the same change lock, so
// that it and an admin write cannot interleave, applied to the imposters as a shared store holds
// them, and stored before Change returns. With a shared store that cannot be reached, change does
// not run (ran is false), as the API answers 503 to a write then. What change left is stored
// even when it failed, as after a failed admin write.
func (a *API) Change(ctx context.Context, change func() error) (ran bool, err error) {
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	if a.shared != nil {
		if err := a.syncLocked(ctx); err != nil {
			return false, err
		}
	}
	before := a.snapshot()
	err = change()
	ch := a.diff(before)
	if ch.Empty() {
		return true, err
	}
	var serr error
	if a.shared != nil {
		serr = a.saveShared(ctx, ch)
	} else {
		serr = a.saveLocked(ctx, ch)
	}
	if serr != nil {
		serr = fmt.Errorf("cannot store the change: %w", serr)
	}
	return true, errors.Join(err, serr)
}

// saveAfter stores what a change left, whether it succeeded or not (a failed PUT /imposters
// still removed the old imposters), before the answer goes out. When storing fails the client
// gets a 500 instead of its answer: the change happened but is not durable.
func (a *API) saveAfter(ctx *fasthttp.RequestCtx, before map[int]stubsState) {
	ch := a.diff(before)
	if a.shared != nil {
		ch = a.withForgotten(ch)
		if ch.Empty() {
			return
		}
		if err := a.saveShared(ctx, ch); err != nil {
			a.log.Error("cannot store the change", "err", err)
			ctx.Response.Reset()
			if unavailable(err) {
				a.sendErrors(ctx, changeNotStored(err))
			} else {
				a.sendErrors(ctx, &apiError{status: 500, errs: []*config.Error{{Code: "cannot persist", Message: err.Error()}}})
			}
		}
		return
	}
	if ch.Empty() {
		return
	}
	if err := a.saveLocked(ctx, ch); err != nil {
		a.log.Error("cannot persist imposters", "err", err)
		ctx.Response.Reset()
		a.sendErrors(ctx, &apiError{status: 500, errs: []*config.Error{{Code: "cannot persist", Message: err.Error()}}})
	}
}
