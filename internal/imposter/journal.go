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
type journal struct {
	mu       sync.Mutex
	entries  []journalEntry
	head     int // index of the oldest entry
	n        int
	bytes    int
	maxCount int
	maxBytes int
	// buf is the chunk the next records are appended to. Records are copied, not shared, so
	// that the handler may recycle the request's memory; a chunk is garbage once no entry
	// (or request rendered from one) refers to it, and it has no pointers to scan.
	buf []byte
}

// Chunk sizes of the journal's records: the first is small (most imposters record few
// requests), each next one twice the last, up to maxRecChunk.
const (
	minRecChunk = 1 << 10
	maxRecChunk = 64 << 10
)

// journalEntry is one recorded request: an http or tcp request as the handler saw it, copied
// into the journal's chunk (rec, and the client's address not formatted yet, addr) and
// rendered into Mountebank's shape (req) the first time it is listed (recording allocates
// nothing but a new chunk now and then, not a tree of objects), or a request already in that
// shape (smtp).
type journalEntry struct {
	req  *config.Object
	rec  []byte
	addr net.Addr
	// at is the arrival time, in Unix nanoseconds: a time.Time would be one more pointer (its
	// location) for every append to write and the garbage collector to scan.
	at    int64
	bytes int
	// stub is the index of the stub that answered, NoStub or StubError. For a request no stub
	// answered, tbl is the stub table it was matched against (nil for protocols without stubs),
	// and why its explanation when it was made then (else it is made when asked for).
	stub int
	tbl  *table
	why  *match.Explanation
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
	j.add(journalEntry{at: at.UnixNano(), bytes: 64 + r.Size()}, r, stub, tbl, why)
}

// addObject records a request already in Mountebank's recorded shape.
func (j *journal) addObject(req *config.Object, at time.Time, stub int, tbl *table, why *match.Explanation) {
	j.add(journalEntry{req: req, at: at.UnixNano(), bytes: approxSize(req)}, nil, stub, tbl, why)
}

// add appends e, with the record of r when r is not nil.
func (j *journal) add(e journalEntry, r *request.Request, stub int, tbl *table, why *match.Explanation) {
	size := e.bytes
	if stub >= 0 {
		tbl = nil // only a no-match is explained
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.n > 0 && (j.n >= j.maxCount || j.bytes+size > j.maxBytes) {
		j.dropOldest()
	}
	if len(j.entries) < j.maxCount && j.n == len(j.entries) {
		// Grow lazily: most imposters record few requests.
		j.entries = append(j.entries, journalEntry{}) // len == n here: amortized growth
		if j.head != 0 {
			// Unreachable: growth only happens before the ring ever wraps.
			panic("BUG: journal grew after wrapping")
		}
	}
	idx := (j.head + j.n) % len(j.entries)
	if r != nil {
		e.rec, e.addr = j.record(r)
	}
	e.stub, e.tbl, e.why = stub, tbl, why
	j.entries[idx] = e
	j.n++
	j.bytes += size
}

// record copies r's record into the current chunk, or a new one when it has no room. The lock
// must be held.
func (j *journal) record(r *request.Request) ([]byte, net.Addr) {
	n := r.RecordLen()
	if cap(j.buf)-len(j.buf) < n {
		size := min(max(2*cap(j.buf), minRecChunk), maxRecChunk)
		j.buf = make([]byte, 0, max(size, n))
	}
	start := len(j.buf)
	var addr net.Addr
	j.buf, addr = r.AppendRecord(j.buf)
	if len(j.buf)-start != n {
		panic("BUG: a request's record is not RecordLen long")
	}
	return j.buf[start:len(j.buf):len(j.buf)], addr
}

func (j *journal) dropOldest() {
	e := &j.entries[j.head]
	j.bytes -= e.bytes
	*e = journalEntry{}
	j.head = (j.head + 1) % len(j.entries)
	j.n--
	if j.n == 0 {
		j.head = 0
	}
}

func (j *journal) clear() {
	j.mu.Lock()
	j.entries, j.head, j.n, j.bytes, j.buf = nil, 0, 0, 0, nil
	j.mu.Unlock()
}

// list returns the entries, oldest first. It holds the lock only to copy them: the requests
// are never modified once added.
func (j *journal) list() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]journalEntry, j.n)
	for i := range out {
		out[i] = j.entries[(j.head+i)%len(j.entries)].render()
	}
	return out
}

// size returns the approximate bytes of the recorded requests.
func (j *journal) size() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.bytes
}

// render puts e's request in Mountebank's recorded shape, once: later reads get the same
// object (the dashboard keeps explanations by it). The lock must be held.
func (e *journalEntry) render() journalEntry {
	if e.rec != nil {
		var r request.Request
		r.FromRecord(e.rec, e.addr)
		e.req, e.rec, e.addr = recordedRequest(&r), nil, nil
	}
	return *e
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
		out[i] = j.entries[(j.head+j.n-1-i)%len(j.entries)].render()
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
		return config.NewObject("requestFrom", r.RequestFrom(), "ip", r.IP(), "data", r.Data)
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
