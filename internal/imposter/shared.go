package imposter

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/script"
)

// Shared keeps the state an imposter shares with the same imposter on the other nodes of a
// store (--store): its stubs' response cycles, its counts and its journal. Without one (nil)
// all of it stays in the process, in the imposter's own counters, which is the fastest way.
type Shared interface {
	// Imposter returns the shared state of the imposter incarnation id (see Imposter.ID).
	Imposter(id string) SharedImposter
	// Node names this node in the entries it records.
	Node() string
	// ScriptState reports whether the imposters' scripts keep their state in the store
	// (--store-script-state): the SharedImposter then implements script.SharedState.
	ScriptState() bool
}

// SharedImposter is one imposter's shared state. Its methods are safe for concurrent use, and
// those called on the request path fail at once, without waiting, while the store is lost.
type SharedImposter interface {
	// Next advances the response cycle of the stub with id by one, for every node, and
	// returns the count before the advance. An error says the store cannot be reached: the
	// caller counts on its own meanwhile.
	Next(stubID string) (uint64, error)
	// Record stores a recorded request (see sharedEntry) in the imposter's journal, which
	// keeps the latest JournalSize, and returns once it is stored.
	Record(entry []byte) error
	// Journal returns the stored requests in the order they were stored; only the n latest
	// when n > 0.
	Journal(ctx context.Context, n int) ([][]byte, error)
	// WriteCounts stores this node's counts by field: its totals since the imposter started
	// (never reset, so that a write that comes late is still right).
	WriteCounts(ctx context.Context, counts map[string]uint64) error
	// Counts returns the counts of every node but this one since the requests were last
	// cleared, summed by field, and the base of this node's: its counts when they were.
	Counts(ctx context.Context) (others, base map[string]uint64, err error)
	// Clear drops the journal and makes every node count from zero: each node's counts
	// become its base. counts are this node's counts now.
	Clear(ctx context.Context, counts map[string]uint64) error

	// The imposter's scenario states, shared by the nodes: a scenario the store holds no
	// state for is in StartedState. Only stubs that name a scenario state ask for them.

	// MoveScenario moves the scenario name from the state from to the state to, atomically
	// across the nodes (of concurrent moves from one state, exactly one succeeds), and reports
	// whether it did.
	MoveScenario(name, from, to string) (bool, error)
	// ScenarioState returns the scenario's state.
	ScenarioState(name string) (string, error)
	// ScenarioStates returns the states the store holds, by scenario name.
	ScenarioStates(ctx context.Context) (map[string]string, error)
	// SetScenario puts the scenario in state.
	SetScenario(ctx context.Context, name, state string) error
	// ResetScenarios puts the scenarios named (every one when none is) back in StartedState.
	ResetScenarios(ctx context.Context, names ...string) error
}

// The count fields of WriteCounts: requests, no-matches, and each stub's hits by stub ID.
const (
	fieldRequests = "requests"
	fieldNoMatch  = "nomatch"
	fieldHits     = "hits:"
)

// sharedEntry is a recorded request as the shared journal keeps it.
type sharedEntry struct {
	At      int64           `json:"at"` // Unix nanoseconds, when the request arrived
	Stub    int             `json:"stub"`
	Node    string          `json:"node"`
	Request json.RawMessage `json:"request"`
}

// sharedTimeout bounds the store operations an admin read makes.
const sharedTimeout = 2 * time.Second

// recordShared stores a recorded request (in Mountebank's recorded shape) in the shared
// journal; a lost store keeps it in this node's journal alone.
func (im *Imposter) recordShared(req *config.Object, at time.Time, stub int) {
	data, err := json.Marshal(sharedEntry{At: at.UnixNano(), Stub: stub, Node: im.opts.Shared.Node(), Request: config.MarshalJSON(req, 0)})
	if err == nil {
		_ = im.shared.Record(data)
	}
}

// nextShared is stub s's next response, counted across the nodes; a lost store falls back to
// the stub's own count.
func (im *Imposter) nextShared(s *stub) response {
	n, err := im.shared.Next(formatID(s.id))
	if err != nil {
		return s.nextResponse()
	}
	s.next.Store(n + 1) // where the local count goes on from if the store is lost
	return s.at(n)
}

// sharedRequests returns the shared journal's requests, oldest first by arrival (only the n
// latest when n > 0), or ok false when the store cannot be read.
func (im *Imposter) sharedRequests(n int) (out []RecordedRequest, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	list, err := im.shared.Journal(ctx, n)
	if err != nil {
		return nil, false
	}
	t := im.tbl.Load()
	tcp := im.def.Protocol == "tcp"
	out = make([]RecordedRequest, 0, len(list))
	for _, data := range list {
		var e sharedEntry
		if json.Unmarshal(data, &e) != nil {
			continue
		}
		v, err := config.ParseJSON(e.Request)
		req := config.AsObject(v)
		if err != nil || req == nil {
			continue
		}
		r := RecordedRequest{At: time.Unix(0, e.At), Request: req, Stub: e.Stub, tcp: tcp}
		if e.Stub < 0 {
			r.tbl = t // explained against the stubs as they are now
		}
		out = append(out, r)
	}
	// Nodes store their requests a little later than they arrive: arrival order is by time.
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, true
}

// tally is what an imposter counted: with a shared store, across every node since the
// requests were last cleared.
type tally struct {
	im           *Imposter
	others, base map[string]uint64 // see SharedImposter.Counts; nil without a shared store
}

// tally reads the other nodes' counts, when the imposter shares them; a lost store counts
// this node's alone.
func (im *Imposter) tally() tally {
	t := tally{im: im}
	if im.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		t.others, t.base, _ = im.shared.Counts(ctx)
	}
	return t
}

// count is field's count across the nodes: this node's (local) above its base, and the others'.
func (t tally) count(field string, local uint64) uint64 {
	if t.others == nil {
		return local
	}
	if b := t.base[field]; b <= local {
		local -= b
	} else {
		local = 0
	}
	return local + t.others[field]
}

func (t tally) requests() int64 {
	return int64(t.count(fieldRequests, uint64(t.im.numRequests.Load())))
}

func (t tally) noMatches() int64 {
	return int64(t.count(fieldNoMatch, uint64(t.im.noMatches.Load())))
}

func (t tally) hits(s *stub) uint64 {
	if t.others == nil {
		return s.hits.Load()
	}
	return t.count(fieldHits+formatID(s.id), s.hits.Load())
}

// counts returns what the imposter counted on this node, by WriteCounts field; with changed
// set, only the fields that changed since the last successful write (see written).
func (im *Imposter) counts(changed bool) map[string]uint64 {
	out := map[string]uint64{}
	add := func(field string, n uint64, last *uint64) {
		if !changed || n != *last {
			out[field] = n
		}
	}
	im.countMu.Lock()
	defer im.countMu.Unlock()
	add(fieldRequests, uint64(im.numRequests.Load()), &im.writtenRequests)
	add(fieldNoMatch, uint64(im.noMatches.Load()), &im.writtenNoMatch)
	for _, s := range im.tbl.Load().stubs {
		add(fieldHits+formatID(s.id), s.hits.Load(), &s.more().written)
	}
	return out
}

// written notes that counts (from counts) are stored.
func (im *Imposter) written(counts map[string]uint64) {
	im.countMu.Lock()
	defer im.countMu.Unlock()
	if n, ok := counts[fieldRequests]; ok {
		im.writtenRequests = n
	}
	if n, ok := counts[fieldNoMatch]; ok {
		im.writtenNoMatch = n
	}
	for _, s := range im.tbl.Load().stubs {
		if n, ok := counts[fieldHits+formatID(s.id)]; ok {
			s.more().written = n
		}
	}
}

// FlushCounts stores what the imposter counted on this node since it last did, when it shares
// its state; with all, every count again (after the store was lost, or asked for).
func (im *Imposter) FlushCounts(ctx context.Context, all bool) error {
	if im.shared == nil {
		return nil
	}
	counts := im.counts(!all)
	if len(counts) == 0 {
		return nil
	}
	if err := im.shared.WriteCounts(ctx, counts); err != nil {
		return err
	}
	im.written(counts)
	return nil
}

// sharedRevision makes every Revision differ while the imposter shares its state: other nodes
// change what it shows, so its rendering is never reused.
func (im *Imposter) sharedRevision() uint64 {
	if im.shared == nil {
		return 0
	}
	return im.renders.Add(1)
}

// shareScriptState makes the imposter's scripts keep their state in the shared store, when it
// keeps it (--store-script-state); Start calls it once the imposter has its shared state.
func (im *Imposter) shareScriptState() {
	if im.js == nil || im.shared == nil || !im.opts.Shared.ScriptState() {
		return
	}
	if st, ok := im.shared.(script.SharedState); ok {
		im.js.ShareState(st)
	}
}
