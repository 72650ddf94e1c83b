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

// formatID renders an ID as stores keep it.
func formatID(id uint64) string { return strconv.FormatUint(id, 16) }

// ID names this incarnation of the imposter (see store.Imposter.ID).
func (im *Imposter) ID() string { return formatID(im.id) }

// Stored returns a function that renders what a store keeps of the imposter, from its stubs
// as they are now: the definition (replayable) and the stubs' IDs, in order.
func (im *Imposter) Stored() func() (def *config.Object, stubIDs []string) {
	t := im.tbl.Load()
	return func() (*config.Object, []string) {
		ids := make([]string, len(t.stubs))
		for i, s := range t.stubs {
			ids[i] = formatID(s.id)
		}
		return im.jsonOf(t, PrintOptions{Replayable: true}), ids
	}
}
