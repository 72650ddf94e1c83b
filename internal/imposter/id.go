package imposter

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
)

// lastID is the last ID newID gave. It starts at a random number, so that the IDs of
// different processes (the nodes sharing a store) do not meet: each takes one at a time from
// its own place in a 64-bit space.
var lastID atomic.Uint64

func init() {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	lastID.Store(binary.LittleEndian.Uint64(b[:]))
}

// newID returns an ID for an imposter or a stub, unique within the process and, with
// overwhelming likelihood, across the nodes sharing a store.
func newID() uint64 { return lastID.Add(1) }

// serials counts the imposters made (see Serial).
var serials atomic.Uint64

// Serial tells this Imposter apart from every other one the process made: unlike ID, which
// a store may give to another (Adopt), and unlike the pointer, which a later imposter may
// reuse once this one is collected.
func (im *Imposter) Serial() uint64 { return im.serial }

// formatID renders an ID as stores keep it.
func formatID(id uint64) string { return strconv.FormatUint(id, 16) }

// ID names this incarnation of the imposter (see store.Imposter.ID).
func (im *Imposter) ID() string { return formatID(im.id) }

// parseID reads an ID formatID wrote; ok is false for anything else.
func parseID(s string) (uint64, bool) {
	id, err := strconv.ParseUint(s, 16, 64)
	return id, err == nil && s != ""
}

// Adopt gives an imposter that has not started the IDs a store keeps for it (see Stored): its
// own and its stubs', in order. IDs that cannot be read, or are missing, are left as they were.
func (im *Imposter) Adopt(id string, stubIDs []string) {
	if n, ok := parseID(id); ok {
		im.id = n
	}
	for i, s := range im.tbl.Load().stubs {
		if i >= len(stubIDs) {
			break
		}
		if n, ok := parseID(stubIDs[i]); ok {
			s.id = n
		}
	}
}

// ApplyStubs makes defs, with their IDs from a store, the imposter's stubs, as another node
// changed them. A stub whose ID the imposter has already keeps its state (response cycle, hits,
// matches): the same object when its definition is the same, else a new stub that carries the
// state on (a proxyAlways recording appended a response). On error nothing changes.
func (im *Imposter) ApplyStubs(defs []*config.Object, stubIDs []string) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := map[uint64]*stub{}
	for _, s := range im.tbl.Load().stubs {
		old[s.id] = s
	}
	stubs := make([]*stub, 0, len(defs))
	trees := make([]*config.Object, 0, len(defs))
	for i, d := range defs {
		var id uint64
		if i < len(stubIDs) {
			id, _ = parseID(stubIDs[i])
		}
		if o := old[id]; o != nil && id != 0 {
			if o.text() == string(config.MarshalJSON(d, 0)) {
				stubs, trees = append(stubs, o), append(trees, nil)
				continue
			}
		}
		s, err := im.newStub(d)
		if err != nil {
			return err
		}
		if o := old[id]; o != nil && id != 0 {
			s.carry(o)
		}
		if id != 0 {
			s.id = id
		}
		stubs, trees = append(stubs, s), append(trees, d)
	}
	return im.swap(stubs, trees)
}

// carry takes over the state of o, the stub s replaces.
func (s *stub) carry(o *stub) {
	s.next.Store(o.next.Load())
	s.hits.Store(o.hits.Load())
	if a := o.aux.Load(); a != nil {
		a.mu.Lock()
		if a.matches != nil {
			s.more().matches = append([]config.Value(nil), a.matches...)
		}
		a.mu.Unlock()
	}
}
