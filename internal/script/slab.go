package script

import (
	"unsafe"

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
	// strs holds the strings native calls store in objects, each boxed as a configuration
	// value that refers to its slot (see box).
	strs [6]string
	// text holds the bytes of the strings a native call makes, when AllowText allowed it.
	text   []byte
	no     int
	nm     int
	ns     int
	textOK bool
	// native counts the calls for the request that the native evaluator answered (see Native).
	native int
	// call is the state of the native calls made for the request, one after the other (see
	// takeCall): kept with the slab rather than taken from ncallPool for each call.
	call ncall
	// aux is the caller's (see Aux).
	aux any
	// attached: AttachSlab gave s to its request and Release has not emptied it since.
	attached bool
}

// maxSlabText is the room for strings a slab keeps (a larger string is allocated as usual).
const maxSlabText = 2 << 10

// slabKey is the request memo key a Slab is attached under (see request.Memo).
const slabKey uint64 = 0x736c61625f736c62

// AttachSlab attaches a Slab to r for the native calls made for r: the one r keeps (see
// request.Request.Kept), made at its first use. Requests are pooled, and their slabs with them:
// a slab costs no pool of its own.
func AttachSlab(r *request.Request) *Slab {
	kept := r.Kept()
	s, _ := (*kept).(*Slab)
	switch {
	case s == nil:
		s = new(Slab)
		*kept = s
	case s.attached:
		// The request's last use ended without Release (its answer failed, or a panic): start
		// over, without what the last use left in the slab, its call state or the caller's aux.
		s.Release()
		s.call, s.aux = ncall{}, nil
	}
	s.attached = true
	r.SetMemo(slabKey, s)
	return s
}

// Release empties s, for its request's next use: nothing may use an object it held afterwards.
func (s *Slab) Release() {
	// Element by element, not clear: see ncall.release.
	for i := 0; i < s.no; i++ {
		s.objs[i] = config.Object{}
	}
	for i := 0; i < s.nm; i++ {
		s.mems[i] = config.Member{}
	}
	for i := 0; i < s.ns; i++ {
		s.strs[i] = ""
	}
	s.text = s.text[:0]
	s.no, s.nm, s.ns, s.native, s.textOK, s.attached = 0, 0, 0, 0, false, false
}

// Aux is where the caller keeps a value of its own with s from one request to the next (the
// imposter keeps the box of a built answer there): Release leaves it as it is, so that it is
// made once for the slab rather than taken from a pool for each request. The caller empties
// what it keeps there before it releases s.
func (s *Slab) Aux() *any { return &s.aux }

// AllowText lets the native calls made for the request put the bytes of the strings they make
// in s. The caller allows it only when the call that makes them is the last of the request's
// script calls (no later script, which could keep a string, sees them), and it copies an
// answer's body s Holds before releasing s; header values are copied when written.
func (s *Slab) AllowText() { s.textOK = true }

// Holds reports whether b lies in s's memory for strings (see AllowText).
func (s *Slab) Holds(b []byte) bool {
	if s == nil || len(b) == 0 || cap(s.text) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s.text)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p < lo+uintptr(cap(s.text))
}

// join returns the strings of parts joined, in s's memory for strings when it is allowed and
// has room; ok is false otherwise.
func (s *Slab) join(parts ...string) (string, bool) {
	if s == nil || !s.textOK {
		return "", false
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 || n > maxSlabText-len(s.text) {
		return "", false
	}
	if cap(s.text) == 0 {
		s.text = make([]byte, 0, maxSlabText)
	}
	start := len(s.text)
	for _, p := range parts {
		s.text = append(s.text, p...)
	}
	return unsafe.String(&s.text[start], n), true
}

// box returns str as a configuration value, without the allocation converting a string to an
// interface makes, when s has a free slot: the value refers to the slot, which holds str until
// Release (as the slab's objects hold their members), and nothing may use it afterwards.
func (s *Slab) box(str string) config.Value {
	if s == nil || s.ns == len(s.strs) {
		return str
	}
	p := &s.strs[s.ns]
	s.ns++
	*p = str
	// An interface holding a string refers to the string's header, which the conversion
	// copies to the heap; this one refers to the slot instead.
	var v config.Value = ""
	(*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] = unsafe.Pointer(p)
	return v
}

// takeCall returns s's call state for a native call, or nil when s is nil or its state is in
// use (calls for one request run one after the other; ncall.release frees it).
func (s *Slab) takeCall() *ncall {
	if s == nil || s.call.slabs {
		return nil
	}
	s.call.slabs = true
	return &s.call
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
		return config.ObjectWithRoom(n)
	}
	o := &s.objs[s.no]
	s.no++
	o.Members = s.mems[s.nm : s.nm : s.nm+n]
	s.nm += n
	return o
}
