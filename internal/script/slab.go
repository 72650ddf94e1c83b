package script

import (
	"sync"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// A Slab holds the objects native calls make for one request's response (object literals and
// the copies a decorate changes), so they cost no allocation: the caller attaches it to the
// request (Attach) before the calls, and releases it once the response they built is written
// and nothing refers to those objects any more (their strings are not the slab's: they stay
// valid). Objects past its room are allocated as usual.
type Slab struct {
	objs [6]config.Object
	mems [24]config.Member
	no   int
	nm   int
	// native counts the calls for the request that the native evaluator answered (see Native).
	native int
}

var slabPool = sync.Pool{New: func() any { return new(Slab) }}

// slabKey is the request memo key a Slab is attached under (see request.Memo).
const slabKey uint64 = 0x736c61625f736c62

// AttachSlab takes a Slab from the pool and attaches it to r for the native calls made for r.
func AttachSlab(r *request.Request) *Slab {
	s := slabPool.Get().(*Slab)
	r.SetMemo(slabKey, s)
	return s
}

// Release empties s and returns it to the pool: nothing may use an object it held afterwards.
func (s *Slab) Release() {
	clear(s.objs[:s.no])
	clear(s.mems[:s.nm])
	s.no, s.nm, s.native = 0, 0, 0
	slabPool.Put(s)
}

// Native is the number of Response and Decorate calls for the slab's request that the native
// evaluator answered since the slab was attached. A call it answered kept nothing of the
// request once it returned: what it made from the request is in the response it returned
// (whose objects are the slab's), and no runtime, state or logger saw the request. A call goja
// ran (the function is not of the native subset, or the evaluator gave up) is not counted: a
// runtime may keep the request's strings (in its state, or as values it still refers to), so a
// caller that compares Native with the calls it made knows whether any did.
func (s *Slab) Native() int { return s.native }

// countNative counts a call the native evaluator answered for r (see Native).
func countNative(r *request.Request) {
	if s := slabOf(r); s != nil {
		s.native++
	}
}

func slabOf(r *request.Request) *Slab {
	if r == nil {
		return nil
	}
	v, ok := r.Memo(slabKey)
	if !ok {
		return nil
	}
	s, _ := v.(*Slab)
	return s
}

// object returns an empty object with room for n members, from s when it has room (s may be nil).
func (s *Slab) object(n int) *config.Object {
	if s == nil || s.no == len(s.objs) || s.nm+n > len(s.mems) {
		return newObject(n)
	}
	o := &s.objs[s.no]
	s.no++
	o.Members = s.mems[s.nm : s.nm : s.nm+n]
	s.nm += n
	return o
}
