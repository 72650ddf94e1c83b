package imposter

import "github.com/mockd/mockd/internal/config"

// Stubs is an imposter's stub table at one moment, with what was counted, as its JSON shows
// them (the admin API prints an imposter from it, and stores it). It is a value, safe for
// concurrent use; the stubs may change after it was taken, it does not.
type Stubs struct {
	t       *table
	counted tally
}

// Stubs returns the stubs as they are now. With counts, the request count and each stub's hits
// are read too: with a shared store, every node's, which asks the store once.
func (im *Imposter) Stubs(counts bool) Stubs {
	s := Stubs{t: im.tbl.Load(), counted: tally{im: im}}
	if counts {
		s.counted = im.tally()
	}
	return s
}

// Len is the number of stubs.
func (s Stubs) Len() int { return len(s.t.stubs) }

// Def is stub i as configured, decoded from the stub's text (see JSON) or copied for each
// call: the caller may change it.
func (s Stubs) Def(i int) *config.Object {
	st := s.t.stubs[i]
	if st.def != nil {
		return config.Clone(st.tree()).(*config.Object)
	}
	return st.definition()
}

// JSON is stub i as configured, in the compact JSON text config.AppendJSON renders of Def(i).
func (s Stubs) JSON(i int) string { return s.t.stubs[i].text() }

// AppendJSON appends JSON(i) to dst.
func (s Stubs) AppendJSON(dst []byte, i int) []byte { return s.t.stubs[i].appendText(dst) }

// AppendReplayableJSON appends stub i's JSON as `replayable` shows it, when it is a stub a
// proxy records answers into (see stub.appendReplayable): each response's is without its
// _proxyResponseTime, and with removeProxies no proxy response; shown is false when no
// response is left (the stub not shown). ok is false for another stub: nothing is appended.
func (s Stubs) AppendReplayableJSON(dst []byte, i int, removeProxies bool) (out []byte, shown, ok bool) {
	return s.t.stubs[i].appendReplayable(dst, removeProxies)
}

// Packed is stub i's JSON packed (see config.PackJSON), as the stub keeps it; false for a stub
// kept as a tree (one a proxy recorded).
func (s Stubs) Packed(i int) (string, bool) {
	st := s.t.stubs[i]
	return st.raw, st.def == nil
}

// Next is where stub i is in its response cycle now: the requests it answered, repeats counted
// (see SetNext).
func (s Stubs) Next(i int) uint64 { return s.t.stubs[i].next.Load() }

// SetNext puts the imposter's stubs where next says in their response cycles (a saved
// imposter started again: see Stubs.Next), the first len(next) of them; before it serves.
func (im *Imposter) SetNext(next []uint64) {
	t := im.tbl.Load()
	for i := range min(len(next), len(t.stubs)) {
		t.stubs[i].next.Store(next[i])
	}
}

// ID is stub i's ID (see store.Imposter).
func (s Stubs) ID(i int) string { return formatID(s.t.stubs[i].id) }

// Hits is how many requests stub i answered (counted when s was taken with counts).
func (s Stubs) Hits(i int) uint64 { return s.counted.hits(s.t.stubs[i]) }

// Matches is a copy of the matches --debug kept for stub i; nil when there are none.
func (s Stubs) Matches(i int) []config.Value {
	a := s.t.stubs[i].aux.Load()
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.matches) == 0 {
		return nil
	}
	return config.Clone(a.matches).([]any)
}

// Requests is the imposter's request count (counted when s was taken with counts).
func (s Stubs) Requests() int64 { return s.counted.requests() }
