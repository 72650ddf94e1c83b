package imposter

import (
	"net"
	"slices"
	"sync"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/request"
)

// journal is a bounded ring of recorded requests: when either the count or the byte budget is
// exceeded the oldest requests are dropped.
//
// The ring (slots) holds no pointers: a full ring of 100,000 requests is neither scanned by the
// garbage collector nor written through its write barriers, which, while the collector marked a
// ring of pointers, cost a recorded request more than the rest of its answer. A slot's record
// is a place in one of the chunks; what does take pointers (a request already in Mountebank's
// shape, a client address that is not TCP's, what explains a no-match) is in refs, a ring
// beside it that exists once one request needs it.
type journal struct {
	mu       sync.Mutex
	slots    []slot
	refs     []slotRefs // nil, or as long as slots
	head     int        // index of the oldest entry
	n        int
	bytes    int
	maxCount int
	maxBytes int
	// chunks hold the records, oldest first: chunks[i] is chunk number chunk0+i, and its last
	// is the one the next records are appended to. Records are copied, not shared, so that the
	// handler may recycle the request's memory; a chunk is let go once the oldest entry's
	// record is in a later one (an entry rendered from a record may still point into it).
	// Chunks have no pointers to scan.
	chunks [][]byte
	chunk0 uint32
}

// Chunk sizes of the journal's records: the first is small (most imposters record few
// requests), each next one twice the last, up to maxRecChunk.
const (
	minRecChunk = 1 << 10
	maxRecChunk = 64 << 10
)

// slot is one recorded request in the ring: an http or tcp request as the handler saw it,
// copied into a chunk (the record rendered into Mountebank's shape the first time it is listed:
// recording allocates nothing but a new chunk now and then, not a tree of objects), or a
// request already in that shape (smtp), in refs.
type slot struct {
	// at is the arrival time, in Unix nanoseconds.
	at    int64
	bytes int
	// recLen is the length of the record: an int, as --max-body may let a request's body
	// pass 4 GiB.
	recLen int
	// stub is the index of the stub that answered, NoStub or StubError.
	stub int32
	// chunk is the number of the chunk the record is in (of the last chunk when the slot has
	// no record): never lower than an older slot's. The record is recLen bytes at off, which
	// is below maxRecChunk: a record goes after another only in a chunk of at most that size
	// (a longer one is made for one record alone).
	chunk uint32
	off   uint32
	// refs: refs holds what the slot points to.
	refs bool
}

// slotRefs is what a slot points to: req, a request in Mountebank's shape (rendered from the
// record, which is then not read again, or recorded in that shape); addr, the client's address
// when the record does not hold it; and for a request no stub answered, tbl, the stub table it
// was matched against (nil for protocols without stubs), and why, its explanation when it was
// made then (else it is made when asked for).
type slotRefs struct {
	req  *config.Object
	addr net.Addr
	tbl  *table
	why  *match.Explanation
}

// journalEntry is one recorded request as the journal lists it.
type journalEntry struct {
	req   *config.Object
	at    int64
	bytes int
	stub  int
	tbl   *table
	why   *match.Explanation
}

// What a recorded request's Stub holds when no stub answered it.
const (
	// NoStub: no stub matched, the default response answered (or the protocol has no stubs).
	NoStub = -1
	// StubError: matching failed (an inject predicate threw) and the request got an error.
	StubError = -2
)

func (j *journal) init(maxCount, maxBytes int) {
	if maxCount <= 0 {
		maxCount = 100000
	}
	if maxBytes <= 0 {
		maxBytes = 256 << 20
	}
	j.maxCount, j.maxBytes = maxCount, maxBytes
}

// addRequest records r: what the journal shows of it is copied, so r may be recycled after.
func (j *journal) addRequest(r *request.Request, at time.Time, stub int, tbl *table, why *match.Explanation) {
	j.add(slotRefs{tbl: tbl, why: why}, r, at.UnixNano(), 64+r.Size(), stub)
}

// addObject records a request already in Mountebank's recorded shape.
func (j *journal) addObject(req *config.Object, at time.Time, stub int, tbl *table, why *match.Explanation) {
	j.add(slotRefs{req: req, tbl: tbl, why: why}, nil, at.UnixNano(), approxSize(req), stub)
}

// add appends a slot, with the record of r when r is not nil.
func (j *journal) add(refs slotRefs, r *request.Request, at int64, size, stub int) {
	if stub >= 0 {
		refs.tbl = nil // only a no-match is explained
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.n > 0 && (j.n >= j.maxCount || j.bytes+size > j.maxBytes) {
		j.dropOldest()
	}
	if len(j.slots) < j.maxCount && j.n == len(j.slots) {
		// Grow lazily: most imposters record few requests.
		j.slots = append(j.slots, slot{}) // len == n here: amortized growth
		if j.refs != nil {
			j.refs = append(j.refs, slotRefs{})
		}
		if j.head != 0 {
			// Unreachable: growth only happens before the ring ever wraps.
			panic("BUG: journal grew after wrapping")
		}
	}
	idx := (j.head + j.n) % len(j.slots)
	s := slot{at: at, bytes: size, stub: int32(stub)}
	if r != nil {
		s.chunk, s.off, s.recLen, refs.addr = j.record(r)
	} else {
		// The last chunk: the next record is in it or in a later one.
		s.chunk = j.chunk0 + uint32(max(len(j.chunks)-1, 0))
	}
	if refs.req != nil || refs.addr != nil || refs.tbl != nil || refs.why != nil {
		if j.refs == nil {
			j.refs = make([]slotRefs, len(j.slots), cap(j.slots))
		}
		j.refs[idx] = refs
		s.refs = true
	}
	j.slots[idx] = s
	j.n++
	j.bytes += size
}

// record copies r's record into the last chunk, or a new one when it has no room, and returns
// where it is and the client's address when the record does not hold it. The lock must be
// held.
func (j *journal) record(r *request.Request) (chunk, off uint32, n int, addr net.Addr) {
	size := r.RecordLen()
	last := len(j.chunks) - 1
	if last < 0 || cap(j.chunks[last])-len(j.chunks[last]) < size {
		c := minRecChunk
		if last >= 0 {
			c = min(max(2*cap(j.chunks[last]), minRecChunk), maxRecChunk)
		}
		j.chunks = append(j.chunks, make([]byte, 0, max(c, size)))
		last++
	}
	b := j.chunks[last]
	start := len(b)
	b, addr = r.AppendRecord(b)
	if len(b)-start != size {
		panic("BUG: a request's record is not RecordLen long")
	}
	j.chunks[last] = b
	return j.chunk0 + uint32(last), uint32(start), size, addr
}

// rec returns the record of s, nil when it has none (it was rendered, or recorded in
// Mountebank's shape). The lock must be held.
func (j *journal) rec(s *slot) []byte {
	if s.recLen == 0 {
		return nil
	}
	b := j.chunks[s.chunk-j.chunk0]
	end := int(s.off) + s.recLen
	return b[s.off:end:end]
}

func (j *journal) dropOldest() {
	s := &j.slots[j.head]
	j.bytes -= s.bytes
	if s.refs {
		j.refs[j.head] = slotRefs{}
	}
	*s = slot{}
	j.head = (j.head + 1) % len(j.slots)
	j.n--
	if j.n == 0 {
		j.head = 0
	}
	// Let go of the chunks before the oldest entry's: no entry left has its record there.
	drop := len(j.chunks) - 1 // all but the last when the journal is empty
	if j.n > 0 {
		drop = min(int(j.slots[j.head].chunk-j.chunk0), drop)
	}
	if drop > 0 {
		clear(j.chunks[:drop])
		j.chunks = j.chunks[drop:]
		j.chunk0 += uint32(drop)
	}
}

func (j *journal) clear() {
	j.mu.Lock()
	j.slots, j.refs, j.head, j.n, j.bytes, j.chunks, j.chunk0 = nil, nil, 0, 0, 0, nil, 0
	j.mu.Unlock()
}

// list returns the entries, oldest first. It holds the lock only to copy them: the requests
// are never modified once added.
func (j *journal) list() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]journalEntry, j.n)
	for i := range out {
		out[i] = j.render((j.head + i) % len(j.slots))
	}
	return out
}

// size returns the approximate bytes of the recorded requests.
func (j *journal) size() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.bytes
}

// render returns the entry of slot idx, its request in Mountebank's recorded shape, rendered
// once: later reads get the same object (the dashboard keeps explanations by it). The lock must
// be held.
func (j *journal) render(idx int) journalEntry {
	s := &j.slots[idx]
	if rec := j.rec(s); rec != nil {
		if j.refs == nil {
			j.refs = make([]slotRefs, len(j.slots), cap(j.slots))
		}
		var r request.Request
		r.FromRecord(rec, j.refs[idx].addr)
		j.refs[idx].req, j.refs[idx].addr = recordedRequest(&r), nil
		s.recLen, s.refs = 0, true
	}
	e := journalEntry{at: s.at, bytes: s.bytes, stub: int(s.stub)}
	if s.refs {
		ref := &j.refs[idx]
		e.req, e.tbl, e.why = ref.req, ref.tbl, ref.why
	}
	return e
}

// latest returns up to n of the latest entries, newest first. It holds the lock only to copy
// them: the requests are never modified once added.
func (j *journal) latest(n int) []journalEntry {
	j.mu.Lock()
	if n > j.n {
		n = j.n
	}
	out := make([]journalEntry, n)
	for i := range out {
		out[i] = j.render((j.head + j.n - 1 - i) % len(j.slots))
	}
	j.mu.Unlock()
	return out
}

// RecordedRequest is one request from the journal.
type RecordedRequest struct {
	At time.Time
	// Request is in Mountebank's recorded shape, without timestamp; it must not be modified.
	Request *config.Object
	// Stub is the index of the stub that answered, or NoStub or StubError.
	Stub int

	tbl *table             // the stubs it was matched against, when no stub answered
	why *match.Explanation // its explanation, when made as it was answered
	tcp bool
}

// Explain says why no stub answered the request, against the stubs it was matched against
// (scripts are not run again); nil when a stub answered it or the protocol has no stubs.
func (r RecordedRequest) Explain() *match.Explanation {
	if r.tbl == nil || r.why != nil {
		return r.why
	}
	req, err := match.RequestFromJSON(r.Request, r.tcp)
	if err != nil {
		return nil
	}
	return r.tbl.reference().Explain(req)
}

func (im *Imposter) journalRequest(e journalEntry) RecordedRequest {
	return RecordedRequest{At: time.Unix(0, e.at), Request: e.req, Stub: e.stub, tbl: e.tbl, why: e.why, tcp: im.def.Protocol == "tcp"}
}

// RecentRequests returns up to n of the latest recorded requests, newest first; none when the
// imposter does not record requests.
func (im *Imposter) RecentRequests(n int) []RecordedRequest {
	if !im.Records() {
		return nil
	}
	if im.shared != nil {
		if list, ok := im.sharedRequests(n); ok {
			slices.Reverse(list)
			return list
		}
	}
	entries := im.journal.latest(n)
	out := make([]RecordedRequest, len(entries))
	for i, e := range entries {
		out[i] = im.journalRequest(e)
	}
	return out
}

// Recorded returns every recorded request, oldest first, and their approximate size in bytes:
// with a shared store those of every node, else (or when the store is lost) this node's.
func (im *Imposter) Recorded() ([]RecordedRequest, int) {
	size := 0
	if im.shared != nil {
		if list, ok := im.sharedRequests(0); ok {
			for _, r := range list {
				size += approxSize(r.Request)
			}
			return list, size
		}
	}
	entries := im.journal.list()
	list := make([]RecordedRequest, len(entries))
	for i, e := range entries {
		list[i] = im.journalRequest(e)
		size += e.bytes
	}
	return list, size
}

// RecordedRequests returns every recorded request, oldest first; none when the imposter does
// not record requests.
func (im *Imposter) RecordedRequests() []RecordedRequest {
	if !im.Records() {
		return nil
	}
	list, _ := im.Recorded()
	return list
}

func approxSize(o *config.Object) int {
	n := 64
	for _, m := range o.Members {
		n += len(m.Key)
		switch v := m.Value.(type) {
		case string:
			n += len(v)
		case *config.Object:
			n += approxSize(v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					n += len(s) + 8
				}
			}
		}
	}
	return n
}

// recordedRequest renders a request in Mountebank's recorded shape: requestFrom, method, path,
// query, headers (original case, repeated names as arrays), body, ip and, for url-encoded forms, form.
func recordedRequest(r *request.Request) *config.Object {
	if r.Object != nil {
		return r.Object
	}
	if r.TCP {
		return config.NewObject("requestFrom", r.RequestFrom(), "ip", r.IP(), "data", r.Data())
	}
	return httpRecord(r, nil, r.HeaderList())
}

// httpRecord is recordedRequest of an http request with headers as its headers, and only the
// fields keys names when keys is not nil (the others are not built).
func httpRecord(r *request.Request, keys []string, headers []request.KV) *config.Object {
	has := func(key string) bool { return keys == nil || slices.Contains(keys, key) }
	n := 8
	if keys != nil {
		n = len(keys)
	}
	o := &config.Object{Members: make([]config.Member, 0, n)}
	if has("requestFrom") {
		o.Set("requestFrom", r.RequestFrom())
	}
	if has("method") {
		o.Set("method", r.Method)
	}
	if has("path") {
		o.Set("path", r.Path)
	}
	if has("query") {
		o.Set("query", request.GroupQuery(r.Query))
	}
	if has("headers") {
		o.Set("headers", request.GroupHeaders(headers))
	}
	if !r.BodyMissing && has("body") {
		o.Set("body", r.Body)
	}
	if has("ip") {
		o.Set("ip", r.IP())
	}
	if r.HasForm && has("form") {
		o.Set("form", request.GroupQuery(r.Form))
	}
	return o
}

// Revision returns counters that change whenever anything the imposter's JSON shows changes:
// the request count and a count of the other changes (stubs, recorded requests and matches).
// Every change bumps them after it is made, so a rendering made after reading them is never
// older than they say.
func (im *Imposter) Revision() (requests int64, changes uint64) {
	return im.numRequests.Load(), im.changes.Load() + im.sharedRevision()
}

// Records reports whether the imposter records its requests (recordRequests, or --mock).
func (im *Imposter) Records() bool { return im.def.RecordRequests || im.opts.Mock }

// JournalBytes returns the approximate bytes of the recorded requests: what the requests of
// JSON take to render.
func (im *Imposter) JournalBytes() int { return im.journal.size() }
