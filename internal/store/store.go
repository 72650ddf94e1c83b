// Package store keeps what the admin API acknowledges and, with Redis, what several mockd nodes
// share. Memory keeps imposter definitions in the process only (the default), Dir persists
// them in a directory (--datadir) and Redis shares them, and the stubs' state, between nodes
// (--store redis://…). The packages that use a store define the interfaces they need (admin,
// imposter, script); app picks the implementation.
package store

import (
	"context"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
)

// Imposter is one imposter's definition as a store keeps it.
type Imposter struct {
	Port int
	// ID names this incarnation of the imposter: deleting it and creating another on the
	// same port gives a new ID, and with it new state (cycles, counts, journal).
	ID string
	// Render renders the definition (replayable, as GET /imposters/:port?replayable=true) and
	// the IDs of its stubs, in order, from one state of the stubs. A stub keeps its ID (and
	// its state) while it stays in the imposter, however the stubs around it change. Stores
	// that keep no definitions never call it.
	Render func() (def *config.Object, stubIDs []string)
	// Next, when set, reads where each stub of the last Render is in its response cycle (the
	// requests it answered, repeats counted), in order: --datadir saves them with the
	// definition, so that a restart goes on from there as Mountebank's does (it saves each
	// stub's nextIndex). Stores that keep the positions elsewhere (Redis) never call it.
	Next func() []uint64
}

// Change is one change of the imposters the admin API made.
type Change struct {
	// Put holds the imposters the change created or changed.
	Put []Imposter
	// Deleted holds the ports of the imposters it removed.
	Deleted []int
	// Replace says the change replaced every imposter: Put is then all of them.
	Replace bool
}

// Empty reports whether the change changed nothing.
func (c *Change) Empty() bool { return len(c.Put) == 0 && len(c.Deleted) == 0 && !c.Replace }

// Memory keeps imposter definitions in the process only: the running imposters are the state,
// and Save only counts versions (the admin API does not diff its own changes for it: see
// admin.New). It is mockd's store without --datadir or --store. Its methods are safe for
// concurrent use.
type Memory struct {
	version atomic.Int64
}

// NewMemory returns a Memory store at version 0.
func NewMemory() *Memory { return &Memory{} }

// Save counts the change and returns the new version; it cannot fail.
func (m *Memory) Save(_ context.Context, _ Change) (int64, error) {
	return m.version.Add(1), nil
}

// Version returns the number of changes saved.
func (m *Memory) Version() int64 { return m.version.Load() }
