package admin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/store"
)

// SharedStore is a Store that other nodes save to as well (--store redis://…): the API keeps
// the imposters it runs in step with it. A store that cannot be reached fails its methods
// with an error that has an `Unavailable() bool` method.
type SharedStore interface {
	Store
	// Version returns the store's version: it grows with every change any node saves.
	Version(ctx context.Context) (int64, error)
	// Versions returns the version of every stored imposter by port, and the store's
	// version, read at one moment.
	Versions(ctx context.Context) (byPort map[int]int64, version int64, err error)
	// Load returns the stored imposters on ports; a port the store has none for is left out.
	Load(ctx context.Context, ports []int) ([]store.Stored, error)
	// Reseed replaces the stored imposters with ch when the store's version is below floor
	// (the store lost its data); it returns 0 when it did nothing.
	Reseed(ctx context.Context, floor int64, ch store.Change) (int64, error)
	// SaveAbsent stores the imposters of ch whose ports the store has none for.
	SaveAbsent(ctx context.Context, ch store.Change) (int64, error)
	// Applied records that this node runs version v.
	Applied(ctx context.Context, v int64) error
	// WaitApplied waits until every live node runs version v or later, or ctx ends.
	WaitApplied(ctx context.Context, v int64) error
	// Available reports whether the store answered its last command.
	Available() bool
	// SetUnstarted says which stored imposters this node could not start, and why (by port),
	// for its heartbeat and GET /cluster.
	SetUnstarted(map[int]string)
	// SetUnreadable says which stored imposters this node cannot read or run from their
	// entries, and why (by port), for its heartbeat and GET /cluster.
	SetUnreadable(map[int]string)
	// Self and Nodes describe this node and the live ones, for GET /cluster.
	Self() store.Node
	Nodes(ctx context.Context) ([]store.Node, error)
	// String names the store (its URL, without a password).
	String() string
}

// applyWait bounds how long an admin change waits for the other live nodes to apply it.
const applyWait = time.Second

// unavailable reports whether err says the store cannot be reached.
func unavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// storeUnavailable is the answer to a change while the shared store cannot be reached, or
// answers this node's reads with an error (a key of another type, written by hand, or a Redis
// out of memory: the message says so, not that the store is down).
func storeUnavailable(err error) *apiError {
	tail := "; the imposters keep serving, and changes are refused until the store is back"
	if !unavailable(err) {
		tail = "; the store answered with an error: the imposters keep serving, and changes are refused until it answers without one"
	}
	return &apiError{status: fasthttp.StatusServiceUnavailable, errs: []*config.Error{{Code: "store unavailable",
		Message: err.Error() + tail}}}
}

// changeNotStored is the answer to a change this node made but could not store: the store was
// lost while it was under way. The node runs the change until the store is back, then what the
// store holds, as every node does: the change is undone unless the store took it (a reply lost
// after Redis ran the script), and then every node runs it.
func changeNotStored(err error) *apiError {
	return &apiError{status: fasthttp.StatusServiceUnavailable, errs: []*config.Error{{Code: "store unavailable",
		Message: err.Error() + "; the change is not stored: this node runs it alone until the store is back, then every node runs what the store holds (with the change only if the store took it before it was lost), and changes are refused until then"}}}
}

// Sync brings the running imposters to the shared store's state: it starts, changes or
// deletes every imposter whose stored version this node has not applied. A store whose
// version went below the one this node synced to lost its data (a Redis restarted without
// persistence): the first node to see it gives it back the imposters it runs.
func (a *API) Sync(ctx context.Context) error {
	if a.shared == nil {
		return nil
	}
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	return a.syncLocked(ctx)
}

// StoreChanged is called with the shared store's version as the store learns of it (and at
// every poll): the API syncs when it runs another, when a stored imposter could not be started
// on this node (its port was taken: it is tried again), or with force, always.
func (a *API) StoreChanged(version int64, force bool) {
	if !force && version == a.synced.Load() && !a.retry.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = a.Sync(ctx) // a failure is logged (see syncLocked)
}

// catchUp syncs when the store's version is not the one this node runs, so that an answer
// shows every change acknowledged before it, whichever node made it. It fails only when the
// store cannot be reached.
func (a *API) catchUp(ctx context.Context) error {
	v, err := a.shared.Version(ctx)
	if err != nil {
		return err
	}
	if v == a.synced.Load() {
		return nil
	}
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	return a.syncLocked(ctx)
}

// reseedLocked gives the store this node's imposters back: its version v went below the one
// this node synced to last.
func (a *API) reseedLocked(ctx context.Context, v int64) error {
	last := a.synced.Load()
	ch := store.Change{Replace: true}
	for _, im := range a.reg.Listing().Imposters {
		ch.Put = append(ch.Put, StoredImposter(im))
	}
	nv, err := a.shared.Reseed(ctx, last+1, ch)
	if err != nil {
		return err
	}
	if nv > 0 {
		a.log.Warn(fmt.Sprintf("the store %s is at version %d, below the %d this node ran: it lost data, and got back this node's %d imposters", a.shared, v, last, len(ch.Put)))
		for _, im := range ch.Put {
			a.applied[im.Port] = nv
		}
	}
	return nil
}

// syncLocked is Sync with changeMu held. A failure other than a lost store (which the store
// logs) is logged when its reason is new, whichever sync met it (a poll's or an admin change's):
// a store that fails every sync the same way (a key of another type) is logged once, not at
// every poll, and the first sync that succeeds after says so.
func (a *API) syncLocked(ctx context.Context) error {
	err := a.syncStore(ctx)
	switch {
	case err != nil && !unavailable(err) && err.Error() != a.syncFailed:
		a.syncFailed = err.Error()
		a.log.Error(fmt.Sprintf("cannot sync the imposters with the store: %v; this node keeps running what it runs and tries again at every poll (logged again when the reason changes)", err))
	case err == nil && a.syncFailed != "":
		a.syncFailed = ""
		a.log.Info("the imposters are in sync with the store again")
	}
	return err
}

// syncStore is syncLocked without its logging.
func (a *API) syncStore(ctx context.Context) error {
	versions, version, err := a.shared.Versions(ctx)
	if err != nil {
		return err
	}
	if version < a.synced.Load() {
		if err := a.reseedLocked(ctx, version); err != nil {
			return err
		}
		if versions, version, err = a.shared.Versions(ctx); err != nil {
			return err
		}
	}
	var need []int
	for port, v := range versions {
		if a.applied[port] != v {
			need = append(need, port)
		}
	}
	for _, im := range a.reg.Listing().Imposters {
		if _, stored := versions[im.Port()]; !stored {
			a.reg.Delete(im.Port())
			delete(a.applied, im.Port())
		}
	}
	for port := range a.applied {
		if _, stored := versions[port]; !stored {
			delete(a.applied, port)
		}
	}
	list, err := a.shared.Load(ctx, need)
	if err != nil {
		return err
	}
	changed, badChanged := false, false
	for port := range a.unstarted {
		if _, stored := versions[port]; !stored {
			delete(a.unstarted, port)
			changed = true
		}
	}
	for port, u := range a.unreadable {
		if v, stored := versions[port]; !stored || v != u.version {
			delete(a.unreadable, port) // deleted or replaced: read again below if replaced
			badChanged = true
		}
	}
	for _, s := range list {
		why, err := a.apply(s)
		if why != "" {
			// Its entry cannot be read or run: applied as it is (not read again at every poll),
			// and the imposter this node runs on the port, if any, keeps running as it was.
			a.applied[s.Port] = s.Version
			badChanged = a.markUnreadable(s, why) || badChanged
			continue
		}
		if _, was := a.unreadable[s.Port]; was {
			delete(a.unreadable, s.Port)
			badChanged = true
		}
		if err == nil {
			a.applied[s.Port] = s.Version
			if _, was := a.unstarted[s.Port]; was {
				delete(a.unstarted, s.Port)
				changed = true
				a.log.Info(fmt.Sprintf("started imposter %d from the store", s.Port))
			}
			continue
		}
		// Its port is taken on this node: not applied, so that the next sync (the next poll)
		// tries it again. Logged when the reason is new.
		delete(a.applied, s.Port)
		if a.unstarted[s.Port] != err.Error() {
			a.unstarted[s.Port] = err.Error()
			changed = true
			a.log.Error(fmt.Sprintf("%v; this node tries again every %s (GET /cluster lists it as unstarted)", err, retryEvery))
		}
	}
	if changed {
		a.shared.SetUnstarted(maps.Clone(a.unstarted))
	}
	if badChanged {
		m := make(map[int]string, len(a.unreadable))
		for port, u := range a.unreadable {
			m[port] = u.why
		}
		a.shared.SetUnreadable(m)
	}
	a.retry.Store(len(a.unstarted) > 0)
	a.synced.Store(version)
	return a.shared.Applied(ctx, version)
}

// retryEvery is how often a node polls the store (store.pollEvery), and so tries again to start
// the stored imposters it could not.
const retryEvery = 250 * time.Millisecond

// unreadable is a stored imposter this node cannot read or run from its entry: the entry's
// version, and why.
type unreadable struct {
	version int64
	why     string
}

// markUnreadable records that the entry of s cannot be read or run, logging it when that is
// news (one line per entry, not one per poll); it reports whether the list changed.
func (a *API) markUnreadable(s store.Stored, why string) bool {
	if u, ok := a.unreadable[s.Port]; ok && u == (unreadable{s.Version, why}) {
		return false
	}
	a.unreadable[s.Port] = unreadable{s.Version, why}
	kept := "runs no imposter on that port"
	if a.reg.Get(s.Port) != nil {
		kept = "keeps running its imposter " + strconv.Itoa(s.Port) + " as it was"
	}
	a.log.Error(fmt.Sprintf("%s; this node %s until a change of the imposter through the API (POST, PUT or DELETE) replaces the entry (GET /cluster lists it as unreadable)", why, kept))
	return true
}

// apply runs a stored imposter: in place of the running one when that is the same
// incarnation (its stubs change, keeping the state of those that stay), else as a new one. It
// fails (err) when the imposter could not be started because its port is taken on this node,
// to be tried again. An entry this node cannot read, or whose definition it cannot run (a
// custom protocol without its program included), is not applied: why says why, and the
// imposter this node runs on the port, if any, is left as it was. An imposter that fails to
// start otherwise is logged and counts as applied.
func (a *API) apply(s store.Stored) (why string, err error) {
	if s.Err != nil {
		return fmt.Sprintf("cannot read imposter %d from the store: %v", s.Port, s.Err), nil
	}
	def, errs := config.ParseImposter(s.Def, a.parseOptions())
	if len(errs) > 0 {
		return fmt.Sprintf("cannot run imposter %d from the store: %s", s.Port, config.Errors(errs).Error()), nil
	}
	if def.Port != 0 && def.Port != s.Port {
		return fmt.Sprintf("cannot run imposter %d from the store: its definition says port %d", s.Port, def.Port), nil
	}
	if cur := a.reg.Get(s.Port); cur != nil && cur.ID() == s.ID {
		if err := cur.ApplyStubs(def.Stubs, s.StubIDs); err != nil {
			return fmt.Sprintf("cannot change imposter %d as stored: %v", s.Port, err), nil
		}
		return "", nil
	}
	def.Port = s.Port
	im, err := a.reg.Build(def)
	if err != nil {
		return fmt.Sprintf("cannot run imposter %d from the store: %v", s.Port, err), nil
	}
	im.Adopt(s.ID, s.StubIDs)
	if err := a.reg.Put(im); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) && ce.Code == "EADDRINUSE" {
			return "", fmt.Errorf("cannot start imposter %d from the store: %w", s.Port, err)
		}
		a.log.Error(fmt.Sprintf("cannot start imposter %d from the store: %v", s.Port, err))
	}
	return "", nil
}

// forgetUnreadable marks the stored entries this node cannot read, on port (every one for
// 0), as removed by the change under way (a DELETE of the imposter, of all imposters, a PUT
// /imposters) though this node runs no imposter there: saveAfter deletes them from the store,
// so a client can always clear an entry it cannot read. changeMu is held.
func (a *API) forgetUnreadable(port int) {
	for p := range a.unreadable {
		if port == 0 || p == port {
			a.forget = append(a.forget, p)
		}
	}
}

// withForgotten adds to ch the deletion of the entries forgetUnreadable marked, but those ch
// stores anew, and clears the marks.
func (a *API) withForgotten(ch store.Change) store.Change {
	if len(a.forget) == 0 {
		return ch
	}
	touched := make(map[int]bool, len(ch.Put)+len(ch.Deleted))
	for _, im := range ch.Put {
		touched[im.Port] = true
	}
	for _, p := range ch.Deleted {
		touched[p] = true
	}
	for _, p := range a.forget {
		if !touched[p] {
			ch.Deleted = append(ch.Deleted, p)
			touched[p] = true
		}
	}
	a.forget = nil
	return ch
}

// InitStore puts the running imposters (those of the config files) in the shared store as
// --store-init says: "replace" makes them all the store holds, "merge" adds those on ports
// the store has none for, "skip" adds none. Then the node runs what the store holds.
func (a *API) InitStore(ctx context.Context, mode string) error {
	a.changeMu.Lock()
	defer a.changeMu.Unlock()
	ch := store.Change{Replace: mode == "replace"}
	for _, im := range a.reg.Listing().Imposters {
		ch.Put = append(ch.Put, StoredImposter(im))
	}
	switch mode {
	case "replace":
		if _, err := a.shared.Save(ctx, ch); err != nil {
			return err
		}
	case "merge":
		if len(ch.Put) > 0 {
			if _, err := a.shared.SaveAbsent(ctx, ch); err != nil {
				return err
			}
		}
	}
	return a.syncLocked(ctx)
}

// saveShared stores a change made through this node and waits (up to applyWait) for the other
// live nodes to apply it. Until it is stored, the ports it touched count as not applied: a
// change the store did not take is undone by the next sync.
func (a *API) saveShared(ctx context.Context, ch store.Change) error {
	if ch.Replace {
		clear(a.applied)
	}
	for _, p := range ch.Deleted {
		delete(a.applied, p)
	}
	for _, im := range ch.Put {
		a.applied[im.Port] = -1
	}
	v, err := a.shared.Save(ctx, ch)
	if err != nil {
		return err
	}
	for _, im := range ch.Put {
		a.applied[im.Port] = v
	}
	if err := a.syncLocked(ctx); err != nil {
		return nil // stored: the answer stands, and the next sync catches up
	}
	wctx, cancel := context.WithTimeout(ctx, applyWait)
	defer cancel()
	if err := a.shared.WaitApplied(wctx, v); err != nil {
		a.log.Debug("not every node applied the change in time", "version", v, "err", err)
	}
	return nil
}

// cluster answers GET /cluster: the store and the live nodes, each with the version it runs
// and when it last synced.
func (a *API) cluster(ctx *fasthttp.RequestCtx) *apiError {
	out := &config.Object{}
	if a.shared == nil {
		out.Set("store", a.storeName())
		out.Set("available", true)
		out.Set("nodes", []any{config.NewObject("name", a.opts.Node, "address", a.opts.Address, "self", true)})
		sendFormatted(ctx, 200, out)
		return nil
	}
	self := a.shared.Self()
	out.Set("store", a.shared.String())
	out.Set("available", a.shared.Available())
	out.Set("node", self.Name)
	out.Set("version", float64(a.synced.Load()))
	nodes, err := a.shared.Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		nodes = []store.Node{self}
	}
	list := make([]any, 0, len(nodes))
	for _, n := range nodes {
		if n.Name == self.Name {
			n = self // as it is now, not at its last heartbeat
		}
		o := config.NewObject("name", n.Name, "address", n.Address, "version", float64(n.Version),
			"lastSync", stamp(n.Synced), "startedAt", stamp(n.Started), "heartbeat", stamp(n.Seen))
		for _, l := range []struct {
			name string
			m    map[string]string
		}{{"unstarted", n.Unstarted}, {"unreadable", n.Unreadable}} {
			if len(l.m) > 0 {
				u := &config.Object{}
				for _, port := range slices.Sorted(maps.Keys(l.m)) {
					u.Set(port, l.m[port])
				}
				o.Set(l.name, u)
			}
		}
		if n.Name == self.Name {
			o.Set("self", true)
		}
		list = append(list, o)
	}
	out.Set("nodes", list)
	sendFormatted(ctx, 200, out)
	return nil
}

func stamp(t time.Time) any {
	if t.IsZero() || t.Unix() <= 0 {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// storeName names a store that is not shared.
func (a *API) storeName() string {
	if n, ok := a.opts.Store.(fmt.Stringer); ok {
		return n.String()
	}
	return "memory"
}
