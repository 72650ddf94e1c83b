// Package imposter runs imposters: one listener per port, a compiled stub table that is swapped
// atomically on change, response cycling with repeat, and the request journal.
package imposter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/proxy"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// Options are the server-wide settings every imposter shares.
type Options struct {
	// Host is the address imposters bind to when their definition names none ("" = all interfaces).
	Host string
	// Debug records each stub's matches (Mountebank's --debug).
	Debug bool
	// Mock records requests on every imposter (Mountebank's --mock).
	Mock bool
	// JournalSize bounds the recorded requests kept per imposter (oldest dropped first); 0 = 100,000.
	JournalSize int
	// JournalBytes bounds the approximate bytes of recorded requests per imposter; 0 = 256 MiB.
	JournalBytes int
	// AllowIP, when set, decides which clients an imposter answers; others are disconnected.
	AllowIP func(net.IP) bool
	// Script runs JavaScript (inject predicates and responses, decorate, wait functions); nil
	// means no scripts can run.
	Script *script.Engine
	// Metrics receives per-imposter request counts and durations; nil = none.
	Metrics *metrics.Registry
	// MaxBodySize bounds request bodies; 0 = 64 MiB.
	MaxBodySize int
	// IdleTimeout closes a connection that waits longer for its next (or first) request, and
	// bounds the wait for a tcp proxy's origin; 0 = 2 minutes.
	IdleTimeout time.Duration
	// DrainTimeout bounds how long a deleted imposter lets its requests in flight finish;
	// 0 = 10 s.
	DrainTimeout time.Duration
	// HeaderTimeout bounds the time an http request takes to arrive, from its first byte until
	// it is read in full; 0 = no limit.
	HeaderTimeout time.Duration
	// Poller is how the connections of http, https and tcp imposters wait for data; "" =
	// netconn.PollerFIFO.
	Poller netconn.Poller
	// Files says which files stubs may name (a lookup's CSV); nil = any regular file.
	Files *behavior.Files
	// Logger receives operational messages; nil = slog.Default().
	Logger *slog.Logger
	// Shared, when set, keeps the stubs' response cycles, the counts and the journal with the
	// other nodes of a store (--store); nil keeps them in the process.
	Shared Shared
	// Protocols are the protocols imposters can serve, by name (see package servers); an
	// imposter of another protocol compiles but does not start.
	Protocols map[string]Protocol
	// Custom names the protocols a program serves (--protofile): their responses are JSON
	// objects handed to the program (ResolveCustom), whatever their name.
	Custom map[string]bool
}

// stub is one stub with its run-time state. A stub keeps its state (response cycle, matches)
// for as long as it stays in the imposter, however the stubs around it change.
type stub struct {
	id uint64 // see newID
	// The stub as configured (upcast), without matches, is only echoed back (GET, save,
	// --debug), never read by key on the request path. It is kept as packed text (raw: what
	// config.AppendJSON(def, 0) writes, packed by config.PackJSON), decoded when read: the
	// ordered tree took ~0.5 KiB more a plain stub. def keeps the tree instead, for the stubs a
	// proxy records, whose responses proxyAlways appends to (see recordProxied); exactly one
	// of the two is set.
	def       *config.Object
	raw       string
	responses []response // repeat-expanded, unless rep counts them
	// rep, when not nil, holds how often each of responses comes in the cycle: a stub whose
	// repeats are large keeps each response once rather than repeat times (repeat 1e9 made a
	// slice of a billion entries, more memory than the machine had).
	rep  *repeats
	next atomic.Uint64
	// hits counts the requests the stub answered, always (GET /verify, expect).
	hits   atomic.Uint64
	expect *config.Expect // nil: none
	// aux is what few stubs have (see more): nil until needed, to keep a stub 96 B.
	aux  atomic.Pointer[stubAux]
	scen *stubScenario // nil when the stub names no scenario state
	// grow, when not nil, holds the responses of a stub proxyAlways records (see growing):
	// def's "responses" and responses are then read through it, never directly.
	grow *growing
}

// growing is the responses of a stub proxyAlways appends its answers to, appended in place:
// an answer was a new stub (its definition's members, its lists and the imposter's stub list
// and table copied), about half the allocations of a proxyAlways request. Entries below n are
// never written again; an append writes the entry at n (in the lists' spare room, or in new
// lists, twice as long, with the entries before it copied) and then stores n + 1, so a
// reader that loads n and then the lists sees n entries, all written. Appends are serialised
// by the imposter's mu.
type growing struct {
	n     atomic.Int64
	lists atomic.Pointer[grownLists]
	at    int // the index of the "responses" member of the stub's def
}

// grownLists are a growing stub's responses, each once (a recorded response has no repeat),
// the lists as long as they can be (never resliced: entries from n on are room).
type grownLists struct {
	configured []any      // the definition's; nil for a pendingResponse (see responses)
	compiled   []response // as compiled (or pendingResponse)
}

// newGrownLists returns lists with configured and compiled (of the same length) and room for
// as many more and four.
func newGrownLists(configured []any, compiled []response) *grownLists {
	l := &grownLists{configured: make([]any, 2*len(configured)+4), compiled: make([]response, 2*len(compiled)+4)}
	copy(l.configured, configured)
	copy(l.compiled, compiled)
	return l
}

// startGrowing makes s, not yet visible to any other goroutine, a growing stub; false when
// it cannot be one (its def has no responses list, or a response that does not come once).
func (s *stub) startGrowing() bool {
	if s.grow != nil {
		return true
	}
	if s.def == nil || s.rep != nil {
		return false
	}
	at := -1
	for i, m := range s.def.Members {
		if m.Key == "responses" {
			at = i
		}
	}
	if at < 0 {
		return false
	}
	list, _ := s.def.Members[at].Value.([]any)
	if len(list) != len(s.responses) {
		return false
	}
	for _, rv := range list {
		if o := config.AsObject(rv); o == nil || config.Repeat(o) != 1 { // a 0 or false comes once
			return false
		}
	}
	g := &growing{at: at}
	g.lists.Store(newGrownLists(list, s.responses))
	g.n.Store(int64(len(list)))
	s.grow, s.responses = g, nil
	s.def.Members[at].Value = nil // read through grow alone
	return true
}

// grown returns the entries of g, with no room to append to in place.
func (g *growing) grown() ([]any, []response) {
	n := g.n.Load()
	l := g.lists.Load()
	return l.configured[:n:n], l.compiled[:n:n]
}

// responses returns the definition's list of g's responses: the entries of grown, with a
// pendingResponse's (nil there) decoded from its text. The list is shared when it has none.
func (g *growing) responses() []any {
	configured, compiled := g.grown()
	var out []any
	for i, c := range configured {
		switch {
		case c == nil:
			if out == nil {
				out = make([]any, len(configured))
				copy(out, configured[:i])
			}
			out[i] = compiled[i].(*pendingResponse).tree()
		case out != nil:
			out[i] = c
		}
	}
	if out == nil {
		return configured
	}
	return out
}

// add appends a response, configured as cfg (nil for a pendingResponse, which keeps its
// own) and compiled as r (the imposter's mu held).
func (g *growing) add(cfg config.Value, r response) {
	n := g.n.Load()
	l := g.lists.Load()
	if int(n) == len(l.configured) {
		l = newGrownLists(l.configured, l.compiled)
		g.lists.Store(l) // before n: a reader of n's entries finds them in either lists
	}
	l.configured[n], l.compiled[n] = cfg, r
	g.n.Store(n + 1)
}

// list returns s's responses and their repeats (see stub).
func (s *stub) list() ([]response, *repeats) {
	if s.grow != nil {
		_, compiled := s.grow.grown()
		return compiled, nil
	}
	return s.responses, s.rep
}

// tree returns s's def, with a growing stub's responses as they are now: a shallow copy then.
func (s *stub) tree() *config.Object {
	if s.grow == nil {
		return s.def
	}
	o := &config.Object{Members: append([]config.Member(nil), s.def.Members...)}
	o.Members[s.grow.at].Value = s.grow.responses()
	return o
}

// stubAux is what a stub has with --debug or a shared store only.
type stubAux struct {
	mu sync.Mutex
	// matches are the stub's --debug matches (under mu).
	matches []config.Value
	// written is the hits a shared store has (under the imposter's countMu).
	written uint64
}

// more returns s's stubAux, made on first use.
func (s *stub) more() *stubAux {
	if a := s.aux.Load(); a != nil {
		return a
	}
	s.aux.CompareAndSwap(nil, &stubAux{})
	return s.aux.Load()
}

// predicates returns the stub's predicates ([]any, or nil), as match compiles them.
func (s *stub) predicates() config.Value { return s.field("predicates") }

// definition returns the stub as configured: the tree it keeps, or its text decoded, which
// the caller may change.
func (s *stub) definition() *config.Object {
	if s.def != nil {
		return s.tree()
	}
	return s.decode("")
}

// decode parses the stub's text; with a key, only when the text may have it as a key (nil
// when it cannot).
func (s *stub) decode(key string) *config.Object {
	buf := stubTexts.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= 64<<10 {
			stubTexts.Put(buf)
		}
	}()
	*buf = config.AppendUnpackedJSON((*buf)[:0], s.raw)
	if key != "" && !mentions(*buf, key) {
		return nil
	}
	v, err := config.ParseJSON(*buf) // which keeps nothing of buf
	if err != nil {
		panic("BUG: a stub's text does not parse: " + err.Error())
	}
	return v.(*config.Object)
}

// field returns the value of the stub's key as configured (nil when absent). A stub kept as
// text is decoded only when the key may be in it.
func (s *stub) field(key string) config.Value {
	if s.grow != nil && key == "responses" {
		return s.grow.responses()
	}
	if s.def != nil {
		return get(s.def, key)
	}
	if o := s.decode(key); o != nil {
		return get(o, key)
	}
	return nil
}

// mentions reports whether JSON text may have key as a key: whether it has it as a string.
func mentions(text []byte, key string) bool {
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(key))
		if j < 0 {
			return false
		}
		i += j
		if i > 0 && text[i-1] == '"' && i+len(key) < len(text) && text[i+len(key)] == '"' {
			return true
		}
		i++
	}
}

// text returns the stub as configured in its compact JSON text.
func (s *stub) text() string {
	buf := stubTexts.Get().(*[]byte)
	*buf = s.appendText((*buf)[:0])
	text := string(*buf)
	if cap(*buf) <= 64<<10 {
		stubTexts.Put(buf)
	}
	return text
}

// appendText appends the stub as configured in its compact JSON text.
func (s *stub) appendText(dst []byte) []byte {
	if s.grow != nil {
		dst, _ = s.appendGrown(dst, false, false)
		return dst
	}
	if s.def != nil {
		return config.AppendJSON(dst, s.tree(), 0)
	}
	return config.AppendUnpackedJSON(dst, s.raw)
}

// appendReplayable appends a stub a proxy grows (a recorded stub) as `replayable` shows it
// (see appendGrown). shown is false when removeProxies leaves no response (the stub is not
// shown: nothing appended); ok is false for another stub (nothing appended).
func (s *stub) appendReplayable(dst []byte, removeProxies bool) (out []byte, shown, ok bool) {
	if s.grow == nil {
		return dst, false, false
	}
	out, shown = s.appendGrown(dst, true, removeProxies)
	return out, shown, true
}

// appendGrown appends a stub a proxy grows: config.AppendJSON of its definition with its
// responses grown, each recorded answer's text written straight into dst (see
// pendingResponse.appendText), not decoded nor held as a string of its own: 100,000 of them are
// written at once. With replayable, as `replayable` shows it: each response's is without its
// _proxyResponseTime and, with removeProxies, no proxy response; shown is false (nothing
// appended) when that leaves no response.
func (s *stub) appendGrown(dst []byte, replayable, removeProxies bool) (out []byte, shown bool) {
	configured, compiled := s.grow.grown()
	mark := len(dst)
	dst = append(dst, '{')
	for j, m := range s.def.Members {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(config.AppendString(dst, m.Key), ':')
		if j != s.grow.at {
			dst = config.AppendJSON(dst, m.Value, 0)
			continue
		}
		dst = append(dst, '[')
		n := 0
		for i, c := range configured {
			if c != nil && removeProxies && config.AsObject(c).Has("proxy") {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			switch {
			case c == nil:
				dst = compiled[i].(*pendingResponse).appendText(dst, !replayable)
			case replayable:
				dst = config.AppendJSON(dst, withoutProxyTime(c), 0)
			default:
				dst = config.AppendJSON(dst, c, 0)
			}
		}
		if n == 0 && removeProxies {
			return dst[:mark], false
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), true
}

// withoutProxyTime is response r with its is's _proxyResponseTime removed, as `replayable`
// shows it: r itself when it has none, else a copy (r is not changed).
func withoutProxyTime(r config.Value) config.Value {
	o := config.AsObject(r)
	isv, _ := o.Get("is")
	is := config.AsObject(isv)
	if is == nil || !is.Has("_proxyResponseTime") {
		return r
	}
	c := &config.Object{Members: make([]config.Member, 0, len(is.Members)-1)}
	for _, m := range is.Members {
		if m.Key != "_proxyResponseTime" {
			c.Members = append(c.Members, m)
		}
	}
	out := &config.Object{Members: append([]config.Member(nil), o.Members...)}
	for k := range out.Members {
		if out.Members[k].Key == "is" {
			out.Members[k].Value = c
		}
	}
	return out
}

func (s *stub) nextResponse() response {
	return s.at(s.next.Add(1) - 1)
}

// at is the response at place i of s's cycle (i counted from the first request, wrapping).
func (s *stub) at(i uint64) response {
	var r response
	responses, rep := s.list()
	if rep == nil {
		r = responses[i%uint64(len(responses))]
	} else {
		ends := rep.ends
		n := ends[len(ends)-1]
		if a := rep.after; a != nil && i >= n {
			if len(a.responses) == 0 { // every response was 0 or false: an empty is
				return responses[0]
			}
			return a.at(i - n)
		}
		i %= n
		k := sort.Search(len(ends), func(j int) bool { return ends[j] > i })
		r = responses[k]
	}
	if p, ok := r.(*pendingResponse); ok { // recorded by proxyAlways, compiled when first used
		return p.compiled()
	}
	return r
}

// cycle is the length of s's response cycle, repeats included.
func (s *stub) cycle() uint64 {
	responses, rep := s.list()
	if rep == nil {
		return uint64(len(responses))
	}
	return rep.ends[len(rep.ends)-1]
}

// start is the place in s's cycle where its k-th entry of responses comes first.
func (s *stub) start(k int) uint64 {
	if s.rep == nil || k == 0 {
		return uint64(k)
	}
	return s.rep.ends[k-1]
}

// repeats counts a stub's responses: ends[k] is the place in the cycle after responses[k]'s
// last turn (a running sum of their repeats).
type repeats struct {
	ends []uint64
	// after, when not nil, is the cycle that follows the first turn through this one for
	// good: a stub whose responses list 0 or false (see dropOnce).
	after *stub
}

// expandedRepeats is the most places a stub's cycle takes as an entry each: past it, or for a
// response repeated more than maxExpandedRepeat times, the stub counts them (repeats).
const (
	expandedRepeats   = 4096
	maxExpandedRepeat = 64
)

// appendRepeated adds r to s's cycle n times.
func (s *stub) appendRepeated(r response, n int) {
	if s.rep == nil && n <= maxExpandedRepeat && len(s.responses)+n <= expandedRepeats {
		for ; n > 0; n-- {
			s.responses = append(s.responses, r)
		}
		return
	}
	s.counted()
	var end uint64
	if len(s.rep.ends) > 0 {
		end = s.rep.ends[len(s.rep.ends)-1]
	}
	s.responses = append(s.responses, r)
	s.rep.ends = append(s.rep.ends, end+uint64(n))
	if a := s.rep.after; a != nil { // proxyAlways: the cycle after the first turn has it too
		a.appendRepeated(r, n)
	}
}

// counted turns s's cycle from expanded to counted, where it is not already: each entry so
// far comes once.
func (s *stub) counted() {
	if s.rep != nil {
		return
	}
	ends := make([]uint64, len(s.responses), len(s.responses)+1)
	for i := range ends {
		ends[i] = uint64(i + 1)
	}
	s.rep = &repeats{ends: ends}
}

// dropOnce makes the entries of s's cycle at places once (each a 0 or false of its responses,
// answered as an empty is) come in its first turn only, as Mountebank serves them: its stub
// shifts each response off its list and pushes it back unless it is falsy, and answers an
// empty list with an empty is. The cycle becomes counted, and after holds the rest.
func (s *stub) dropOnce(once []int) {
	s.counted()
	after := &stub{}
	var prev uint64
	for k, end := range s.rep.ends {
		if len(once) > 0 && once[0] == k {
			once = once[1:]
		} else {
			after.appendRepeated(s.responses[k], int(end-prev))
		}
		prev = end
	}
	s.rep.after = after
}

// table is an immutable snapshot of an imposter's stubs and their compiled predicates.
type table struct {
	stubs []*stub
	set   *match.Set
	ref   *lazyReference // the same predicates, for explaining a no-match
	// scenarios is set when a stub names a scenario state: matching then checks it.
	scenarios bool
	// bodyUnread is set when nothing of the table reads a request's body: no predicate (see
	// match.Set.ReadsBody), and every response, the default one's included, answers without
	// reading the request (readsNoRequest). See UnreadBody.
	bodyUnread bool
}

// lazyReference is the reference evaluator of a table's predicates, made when first asked
// for (explaining a no-match): it reads the predicates as configured, which the stubs keep as
// text.
type lazyReference struct {
	once  sync.Once
	ref   *match.Reference
	stubs []*stub
	opts  match.Options
}

// reference returns the reference evaluator of t's predicates.
func (t *table) reference() *match.Reference {
	r := t.ref
	r.once.Do(func() {
		ordered := make([]config.Value, len(r.stubs))
		for i, s := range r.stubs {
			ordered[i] = s.predicates()
		}
		r.ref = match.NewReference(ordered, r.opts)
		r.stubs = nil
	})
	return r.ref
}

// resolve counts and records req, finds the first matching stub and returns the response to
// send: the stub's next response, or the imposter's default response when no stub matches
// (st is nil then). why explains a no-match when the debug log or --debug asks for it. It is
// the protocol-neutral part of serving a request, with the stubs of table t (the imposter's
// current one, or the one a request whose body was read past was pinned to: ResolveUnread).
func (im *Imposter) resolve(t *table, req *request.Request) (st *stub, resp response, recorded *config.Object, why *match.Explanation, err *config.Error) {
	im.numRequests.Add(1)
	m := im.metrics
	var start metrics.Instant
	if m != nil {
		m.Requests.Inc()
		start = metrics.Now()
	}
	record := im.Records()
	debugLog := im.enabled(slog.LevelDebug)
	if im.opts.Debug || debugLog {
		recorded = recordedRequest(req)
	}
	if debugLog {
		im.logLine(slog.LevelDebug, req.RequestFrom()+" => "+string(config.MarshalJSON(recorded, 0)))
	}
	var at time.Time
	if record {
		at = time.Now()
	}
	idx, ferr := t.set.Find(req)
	if ferr == nil && idx >= 0 && t.scenarios {
		idx, ferr = t.scenarioMatch(idx, func(i int) (bool, error) { return t.set.Match(i, req) })
	}
	if idx < 0 {
		im.noMatches.Add(1)
	}
	if idx < 0 && ferr == nil {
		if im.enabled(slog.LevelInfo) {
			im.logLine(slog.LevelInfo, "no predicate match, using default response")
		}
		if debugLog || im.opts.Debug {
			why = t.reference().ExplainRequest(req)
			if debugLog {
				im.logLine(slog.LevelDebug, "no stub matched; "+why.Text())
			}
		}
	}
	if record { // with the stub that answers, once it is known
		stub := idx
		if ferr != nil {
			stub = StubError
		}
		if req.Object != nil {
			im.journal.addObject(req.Object, at, stub, t, why)
		} else {
			im.journal.addRequest(req, at, stub, t, why)
		}
		im.changes.Add(1)
		if im.shared != nil {
			shown := recorded
			if shown == nil {
				shown = recordedRequest(req)
			}
			im.recordShared(shown, at, stub)
		}
	}
	if ferr != nil {
		var ce *config.Error
		if errors.As(ferr, &ce) {
			return nil, nil, recorded, nil, ce // from an inject predicate
		}
		var me *match.Error
		if errors.As(ferr, &me) {
			e := &config.Error{Code: me.Code, Message: me.Message, Source: config.FromPlain(me.Source)}
			if me.Code == "" {
				// What predicates.js throws at run time: Mountebank answers its message and
				// name (and node's stack, which names Mountebank's files; left out here).
				name := "TypeError"
				if strings.HasPrefix(me.Message, "Invalid regular expression") {
					name = "SyntaxError"
				}
				e.Raw = config.NewObject("message", me.Message, "name", name)
			}
			return nil, nil, recorded, nil, e
		}
		return nil, nil, recorded, nil, &config.Error{Code: config.CodeBadData, Message: ferr.Error()}
	}
	if m != nil {
		m.MatchDuration.Observe(start.Since())
	}
	if idx < 0 {
		if m != nil {
			m.NoMatch.Inc()
		}
		if debugLog {
			im.logLine(slog.LevelDebug, "generating response from "+string(config.MarshalJSON(im.defaultResp.config, 0)))
		}
		return nil, im.defaultResp, recorded, why, nil
	}
	st = t.stubs[idx]
	st.hits.Add(1)
	if debugLog {
		preds := st.predicates()
		if preds == nil {
			preds = &config.Object{}
		}
		im.logLine(slog.LevelDebug, "using predicate match: "+string(config.MarshalJSON(preds, 0)))
	}
	if im.shared != nil && st.cycle() > 1 {
		resp = im.nextShared(st) // one response: nothing to share, nothing asked of the store
	} else {
		resp = st.nextResponse()
	}
	if debugLog {
		im.logLine(slog.LevelDebug, "generating response from "+string(config.MarshalJSON(resp.base().config, 0)))
	}
	return st, resp, recorded, nil, nil
}

// Imposter is one running imposter. Its methods are safe for concurrent use.
type Imposter struct {
	opts     Options
	def      *config.Imposter
	port     int
	encoding string

	ln     net.Listener
	server Server
	custom *customState // a custom protocol's program and its pending proxies; nil otherwise
	// abort is closed (under abortMu, made on first use) when the imposter is deleted while
	// its program starts (Registry.Reserve): the start gives up.
	abortMu sync.Mutex
	abort   chan struct{}
	// startEnded is closed (under abortMu, made on first use) once a start reserved with
	// Registry.Reserve has returned: an aborted program has exited by then (see awaitAborted).
	startEnded chan struct{}
	// served is done when Serve has returned, once serving is serveStarted (one Add for it
	// as Start succeeds: a WaitGroup, not a channel, costs the imposter no allocation).
	served  sync.WaitGroup
	serving atomic.Int32 // serveDeferred, serveStarted or serveNever
	closing atomic.Bool
	// plainIPv4 reports IPv4 clients as a.b.c.d (node does when bound to an IPv4 address)
	// rather than ::ffff:a.b.c.d.
	plainIPv4 bool

	id     uint64 // see newID
	serial uint64 // see Serial
	tbl    atomic.Pointer[table]
	// scen holds the scenarios stubs name, across stub changes.
	scen scenarios
	// stubRev counts the changes of the stub table (see StubRevision).
	stubRev atomic.Uint64
	// scripted is set for good once a table has an inject predicate: a script may keep the
	// strings of any request it sees, so no request's memory is recycled.
	scripted atomic.Bool
	mu       sync.Mutex // serialises stub changes
	// texts files the stubs of a table by their predicates' stable texts, for proxyAlways to
	// find the stub it appends an answer to (under mu; see recordedAfter).
	texts recordedTexts
	// pendings are where keptResponse takes the next pendingResponse from (under mu).
	pendings    []pendingResponse
	numRequests atomic.Int64
	// noMatches counts the requests no stub answered (the default response or an error),
	// since the last ClearRequests.
	noMatches atomic.Int64
	journal   journal
	// changes counts, after the fact, every change JSON shows other than numRequests: stubs,
	// recorded requests and matches. With numRequests it is the Revision printers key on.
	changes atomic.Uint64
	// With a shared store (Options.Shared): this imposter's state there, the counts it has
	// (under countMu; the stubs' are in each stub) and a count of renderings.
	shared          SharedImposter
	countMu         sync.Mutex
	writtenRequests uint64
	writtenNoMatch  uint64
	renders         atomic.Uint64
	defaultResp     *isResponse // an empty `is`, defaultResponse filling it in
	defaults        *defaults   // http(s): the defaultResponse's fields
	// defaultCORS: an http(s) imposter with allowCORS and a defaultResponse with headers keeps
	// here what its last preflight answered with those headers (see DefaultCORS); nil otherwise.
	defaultCORS *DefaultCORS

	log *slog.Logger
	// logInfo and logDebug say whether log takes info and debug lines (its level is fixed).
	logInfo, logDebug bool
	metrics           *metrics.Imposter // nil when metrics are off
	js                *script.Scope     // the imposter's script state; nil without a script engine
	tcpDefault        tcpData           // tcp only: the data of defaultResponse
	headerLists       headerLists       // the header lines its responses share
	// solo is the registry's listing while this imposter is its only one (see relist): set
	// in New, never changed. A client suite's imposter of a test is most often alone.
	solo     Listing
	soloList [1]*Imposter
	// starter starts serving on the listener's first connection (netconn.StartOnConn): a
	// pointer into the imposter, where the method value im.startServing was an allocation.
	starter serveStarter
}

// serveStarter is an imposter's netconn.Starter.
type serveStarter struct{ im *Imposter }

// StartServing starts the imposter's accept loop (Imposter.startServing).
func (s *serveStarter) StartServing() { s.im.startServing() }

// New compiles def into an imposter that is not yet listening. The returned error is a
// *config.Error carrying Mountebank's code.
func New(def *config.Imposter, opts Options) (*Imposter, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	im := &Imposter{opts: opts, def: def, port: def.Port, encoding: "utf8", id: newID(), serial: serials.Add(1)}
	im.soloList[0] = im
	im.starter.im = im
	im.solo.Imposters = im.soloList[:]
	im.setLog(opts.Logger)
	if opts.Script != nil {
		im.js = opts.Script.NewScope(opts.Logger)
	}
	if def.Mode == "binary" {
		im.encoding = "base64"
	}
	if def.Protocol == "tcp" {
		im.tcpDefault = tcpDefaultOf(def.DefaultResponse, im.Binary())
	}
	if def.DefaultResponse == nil {
		im.defaults, im.defaultResp = noDefaults, noDefaultResp()
	} else {
		im.defaults = defaultsOf(def.DefaultResponse)
		im.defaultResp = newIsResponse(config.NewObject("is", &config.Object{}), im.defaults)
		if def.AllowCORS && (def.Protocol == "http" || def.Protocol == "https") && config.AsObject(im.defaults.headers) != nil {
			im.defaultCORS = &DefaultCORS{}
		}
	}
	im.journal.init(opts.JournalSize, opts.JournalBytes)
	stubs, err := im.newStubs(def.Stubs)
	if err != nil {
		return nil, err
	}
	t, err := im.compile(stubs, def.Stubs)
	if err != nil {
		return nil, err
	}
	im.install(t)
	// The stubs keep their text (see stub): the trees go, and with them, for a request body's
	// imposter, the body's values the compiled stubs do not use.
	def.Stubs = nil
	if len(stubs) >= bigImposter {
		netconn.ReleaseMemorySoon()
	}
	return im, nil
}

// bigImposter is the number of stubs from which building an imposter returns the memory its
// building used to the operating system.
const bigImposter = 10000

// ValidateBehaviors checks a response's behaviors as Mountebank's behaviorsValidator does, for
// config.ParseOptions.Behaviors (the API lists their errors with a stub's others).
func ValidateBehaviors(behaviors config.Value) []*config.Error { return behavior.Validate(behaviors) }

// newStub compiles def into a stub that keeps def's text (not def: see stub).
func (im *Imposter) newStub(def *config.Object) (*stub, error) { return im.newStubAt(def, -1) }

// newStubAt is newStub of the stub at place i of a new imposter's stubs (newStubs), whose
// text is then the one kept for that place when def is the same (stubTextAt); -1 for none.
func (im *Imposter) newStubAt(def *config.Object, i int) (*stub, error) {
	s, err := im.newStubTree(def)
	if err != nil {
		return nil, err
	}
	s.raw, s.def = stubTextAt(def, i), nil
	return s, nil
}

// keptTexts are the texts of the first stubs of the last imposter created, by place, each with
// a copy of the definition it was made from: a client suite creates the same imposter around
// each test, and comparing its stubs with the kept definitions (config.SameJSON) costs less
// than rendering and packing them again. Entries are never changed once stored.
var keptTexts [maxKeptTexts]atomic.Pointer[keptText]

type keptText struct {
	def  *config.Object // a copy (config.Clone): nothing else holds it
	text string
}

// Bounds of keptTexts: the first 8 stubs of an imposter, whose texts are up to 4 KiB.
const (
	maxKeptTexts = 8
	maxKeptText  = 4 << 10
)

// stubTextAt is stubText(def) for the stub at place i of a new imposter's stubs (-1 for none):
// the text kept for that place when def is the same as the definition it was made from, else
// stubText's, kept for the place after.
func stubTextAt(def *config.Object, i int) string {
	if i < 0 || i >= maxKeptTexts {
		return stubText(def)
	}
	if k := keptTexts[i].Load(); k != nil && config.SameJSON(def, k.def) {
		return k.text
	}
	text := stubText(def)
	if len(text) <= maxKeptText {
		if c, ok := config.Clone(def).(*config.Object); ok {
			keptTexts[i].Store(&keptText{def: c, text: text})
		}
	}
	return text
}

// stubTexts are the buffers stubs are rendered into before they are copied to their size.
var stubTexts = sync.Pool{New: func() any { return new([]byte) }}

// stubText is the compact JSON text of def, packed (config.PackJSON), in a string of its size.
func stubText(def *config.Object) string {
	buf := stubTexts.Get().(*[]byte)
	*buf = config.AppendJSON((*buf)[:0], def, 0)
	// Packed over the text as it is read (never longer): packed after it, a stub of 64 MiB
	// grew the buffer by appends to twice that, 460 MB allocated in all.
	packed := config.AppendPackedJSON((*buf)[:0], *buf)
	text, kept := lastCompiled.text(packed)
	if !kept {
		text = string(packed)
	}
	if cap(*buf) <= 64<<10 {
		stubTexts.Put(buf)
	}
	return text
}

// newStubTree compiles def into a stub that keeps def (a tree).
func (im *Imposter) newStubTree(def *config.Object) (*stub, error) {
	s := &stub{def: def, id: newID(), scen: im.stubScenarioOf(def)}
	expect, errs := config.ParseExpect(get(def, "expect"), "expect")
	if len(errs) > 0 {
		return nil, errs[0]
	}
	s.expect = expect
	list, _ := get(def, "responses").([]any)
	// Mountebank validates every response's behaviors before its dry run builds any response,
	// and lists all their errors.
	var berrs config.Errors
	for _, rv := range list {
		if r := config.AsObject(rv); r != nil {
			if bv, present := r.Get("behaviors"); present {
				berrs = append(berrs, behavior.Validate(bv)...)
			}
		}
	}
	switch len(berrs) {
	case 0:
	case 1:
		return nil, berrs[0]
	default:
		return nil, berrs
	}
	var once []int // the places of s.responses that hold a 0 or false of list
	for j, rv := range list {
		if isOnce(rv) {
			// Mountebank serves a 0 or false as an empty is once, then drops it (dropOnce).
			if err := im.addResponse(s, config.NewObject("is", config.NewObject())); err != nil {
				return nil, err
			}
			s.counted()
			once = append(once, len(s.responses)-1)
			continue
		}
		if err := im.addResponse(s, rv); err != nil {
			if later := im.laterToError(err, rv, list[j+1:]); later != nil {
				return nil, stubSource(dryRunError{later}, def)
			}
			var ce *config.Error
			if errors.As(err, &ce) && ce.Path != "" {
				ce.Path = fmt.Sprintf("responses[%d].%s", j, ce.Path)
			}
			return nil, err
		}
	}
	if len(once) > 0 {
		s.dropOnce(once)
	}
	if len(s.responses) == 0 && len(list) > 0 {
		// Every response is repeated no times (`repeat: "abc"`): Mountebank's stub then has no
		// response to cycle through and answers each match with an empty `is`.
		if err := im.addResponse(s, config.NewObject("is", config.NewObject())); err != nil {
			return nil, err
		}
	}
	if len(s.responses) == 0 {
		return nil, &config.Error{Code: config.CodeBadData, Message: "'responses' must be a non-empty array", Source: def}
	}
	return s, nil
}

// laterToError returns the error of the first of a stub's later responses that is an http proxy
// whose `to` Mountebank's dry run refuses (missing, not a URL, with a path), when err, the
// error of the response rv before them, is a TypeError its dry run throws only once a proxy
// with a good `to` has answered (its predicateGenerators): the dry run resolves every response
// at once (Promise.all) and the `to` check throws before any answer comes, so that error is
// the one the API shows. Nil otherwise.
func (im *Imposter) laterToError(err error, rv config.Value, later []any) *config.Error {
	if im.def.Protocol != "http" && im.def.Protocol != "https" {
		return nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Code != "TypeError" {
		return nil
	}
	if bad, isProxy := proxyToError(rv); !isProxy || bad != nil {
		return nil
	}
	for _, lv := range later {
		if bad, _ := proxyToError(lv); bad != nil {
			return bad
		}
	}
	return nil
}

// proxyToError reports whether the response rv is a proxy, and the error Mountebank's dry run
// gives its `to` (nil when it is good).
func proxyToError(rv config.Value) (*config.Error, bool) {
	pv := get(config.AsObject(rv), "proxy")
	if !jsvalue.Truthy(pv) {
		return nil, false
	}
	po, err := proxy.Object(pv)
	if err != nil {
		return nil, false
	}
	to, present := po.Get("to")
	_, bad := proxy.ParseTo(to, present)
	return bad, true
}

// isOnce reports whether a stub's response rv is one Mountebank serves once and drops: a
// falsy value its validation lets through (0 or false; null ends its process, "" fails on
// its repeat).
func isOnce(rv config.Value) bool {
	switch t := rv.(type) {
	case bool:
		return !t
	case float64:
		return t == 0
	}
	return false
}

// addResponse compiles one of s's responses and appends it, repeat times.
func (im *Imposter) addResponse(s *stub, rv config.Value) error {
	r := config.AsObject(rv)
	if r == nil {
		if _, isList := rv.([]any); !isList && jsvalue.Truthy(rv) {
			// A number or true: Mountebank's dry run throws a TypeError resolving it, which
			// its API shows as the stub alone.
			return stubSource(dryRunError{&config.Error{Code: "TypeError", Message: "not a response", Raw: config.NewObject()}}, s.def)
		}
		return &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: rv}
	}
	cr, err := im.compileResponse(r, s.def)
	if err != nil {
		return err
	}
	if n := config.Repeat(r); n > 0 {
		s.appendRepeated(cr, n)
	}
	return nil
}

// compileResponse compiles r, a response of the stub def (a dry run's error shows def).
func (im *Imposter) compileResponse(r, def *config.Object) (response, error) {
	var cr response
	if im.opts.Custom[im.def.Protocol] {
		c, err := im.compileCustomResponse(r)
		if err != nil {
			return nil, err
		}
		cr = c
	} else if im.def.Protocol == "tcp" {
		if jsvalue.Truthy(get(config.AsObject(get(r, "is")), "template")) {
			return nil, &config.Error{Code: config.CodeBadData, Path: "is.template",
				Message: "templates apply to http and https imposters", Source: r}
		}
		tr, err := im.compileTCPResponse(r)
		if err != nil {
			if err.Source == nil && err.Message != "unrecognized response type" {
				return nil, stubSource(dryRunError{err}, def) // a proxy's
			}
			return nil, err
		}
		cr = tr
	} else {
		hr, err := im.compileHTTPResponse(r)
		if err != nil {
			return nil, stubSource(err, def)
		}
		cr = hr
	}
	return cr, nil
}

// compile builds a table for stubs, turning predicate errors into Mountebank's errors.
// The predicates are compiled as configured, keys in their order: a predicate naming several
// operators uses the first, as Mountebank's Object.keys(predicate).find does (decoding them into
// maps, as before, lost that order), and the compiled predicates share the stubs' values.
// trees, when not nil, has for stub i the definition it was just compiled from (or nil), read
// rather than the stub's text decoded again; the stubs of the current table keep their
// compiled predicates.
func (im *Imposter) compile(stubs []*stub, trees []*config.Object) (*table, error) {
	ordered := make([]config.Value, len(stubs))
	var prev *table
	var reuse []int
	if t := im.tbl.Load(); t != nil && len(t.stubs) > 0 {
		prev, reuse = t, make([]int, len(stubs))
		at := make(map[*stub]int, len(t.stubs))
		for i, s := range t.stubs {
			at[s] = i
		}
		for i, s := range stubs {
			if j, ok := at[s]; ok && (i >= len(trees) || trees[i] == nil) {
				reuse[i] = j
			} else {
				reuse[i] = -1
			}
		}
	}
	for i, s := range stubs {
		switch {
		case reuse != nil && reuse[i] >= 0:
		case i < len(trees) && trees[i] != nil:
			ordered[i] = get(trees[i], "predicates")
		default:
			ordered[i] = s.predicates()
		}
	}
	opts := im.matchOptions()
	var prevSet *match.Set
	if prev != nil {
		prevSet = prev.set
	}
	var set *match.Set
	if prev == nil {
		set = lastCompiled.find(stubs, opts)
	}
	if set == nil {
		var err error
		if set, err = match.CompileReusing(ordered, prevSet, reuse, opts); err != nil {
			return nil, predicateErrors(err, stubs)
		}
		if prev == nil {
			lastCompiled.keep(stubs, opts, set)
		}
	}
	t := &table{stubs: stubs, set: set, ref: &lazyReference{stubs: stubs, opts: opts}}
	t.bodyUnread = !set.ReadsBody() && im.defaultResp != nil && readsNoRequest(im.defaultResp)
	for _, s := range stubs {
		t.scenarios = t.scenarios || s.scen != nil
		t.bodyUnread = t.bodyUnread && s.readsNoRequest()
	}
	return t, nil
}

// matchOptions are the options the imposter's predicates are compiled with.
func (im *Imposter) matchOptions() match.Options {
	opts := match.Options{Binary: im.encoding == "base64", TCP: im.def.Protocol == "tcp"}
	if im.js != nil {
		opts.Injector = im.js
	}
	return opts
}

// swapAppended is swap for stubs that are the current table's with more after them, which
// proxyAlways makes as it records a new stub: only those are compiled and filed
// (match.Extend), and what the table says of its stubs is the current one's and theirs.
// Recording a new stub cost proxyAlways the time of compiling every stub again (68 ms a new
// key at 15,000 stubs). Other changes swap: a Set Extend made looks for a request in an index
// for each few stubs appended (a few tens of ns each), which a proxy recording seldom asks
// (its catch-all stub comes first), and a change through the API compiles the whole table.
func (im *Imposter) swapAppended(stubs []*stub) error {
	t := im.tbl.Load()
	if t == nil || len(t.stubs) == 0 || len(stubs) <= len(t.stubs) ||
		// The same array (recordProxied appends in place): the same stubs, as no table's
		// stubs change.
		&t.stubs[0] != &stubs[0] && !slices.Equal(t.stubs, stubs[:len(t.stubs)]) {
		return im.swap(stubs, nil)
	}
	n0 := len(t.stubs)
	more := make([]config.Value, len(stubs)-n0)
	for i, s := range stubs[n0:] {
		more[i] = s.predicates()
	}
	opts := im.matchOptions()
	set, err := match.Extend(t.set, more, opts)
	if err != nil {
		return predicateErrors(err, stubs)
	}
	nt := &table{stubs: stubs, set: set, ref: &lazyReference{stubs: stubs, opts: opts}, scenarios: t.scenarios}
	nt.bodyUnread = t.bodyUnread && !set.ReadsBody()
	for _, s := range stubs[n0:] {
		nt.scenarios = nt.scenarios || s.scen != nil
		nt.bodyUnread = nt.bodyUnread && s.readsNoRequest()
	}
	im.install(nt)
	return nil
}

// readsNoRequest reports whether every response of s answers without reading the request (see
// the function readsNoRequest). The responses of a stub proxyAlways records grow without a new
// table: they count as reading it.
func (s *stub) readsNoRequest() bool {
	if s.grow != nil {
		return false
	}
	for {
		for _, r := range s.responses {
			if !readsNoRequest(r) {
				return false
			}
		}
		if s.rep == nil || s.rep.after == nil {
			return true
		}
		s = s.rep.after // the cycle after the first turn
	}
}

// lastCompiled is the predicates last compiled for a new imposter's stubs (a small one's),
// by the stubs' text: a client suite creates the same imposter around each test, whose
// predicates then compile once. A match.Set is immutable; with no inject predicate (those run
// in the imposter's own scope), one compiled from the same stubs, with the same mode and
// protocol, is the same.
var lastCompiled compiledCache

type compiledCache struct {
	last atomic.Pointer[compiledSet]
}

type compiledSet struct {
	texts       []string // the stubs' text (stub.raw), in order
	binary, tcp bool
	set         *match.Set // without an injector
}

// Bounds of the imposters lastCompiled keeps: a client suite's imposters are small.
const (
	maxCompiledStubs = 16
	maxCompiledText  = 16 << 10
)

// find returns the predicates of stubs compiled with opts, if they are the last kept.
func (c *compiledCache) find(stubs []*stub, opts match.Options) *match.Set {
	e := c.last.Load()
	if e == nil || len(e.texts) != len(stubs) || e.binary != opts.Binary || e.tcp != opts.TCP {
		return nil
	}
	for i, s := range stubs {
		if s.raw == "" || s.raw != e.texts[i] {
			return nil
		}
	}
	// The kept set has no inject predicate (keep), so no injector is ever asked for: the set is
	// shared as it is (a copy with the imposter's injector was 312 bytes for each imposter).
	return e.set
}

// text returns the kept stub text equal to packed, if there is one: a client suite's new
// imposter of the last one's stubs shares their texts rather than copying them (one
// allocation a stub), and find compares them by their pointers.
func (c *compiledCache) text(packed []byte) (string, bool) {
	if e := c.last.Load(); e != nil {
		for _, t := range e.texts {
			if len(t) == len(packed) && t == string(packed) {
				return t, true
			}
		}
	}
	return "", false
}

// keep makes set, compiled from stubs with opts, the last kept, unless it has an inject
// predicate or stubs are not a small imposter's texts.
func (c *compiledCache) keep(stubs []*stub, opts match.Options, set *match.Set) {
	if set.Scripted() || len(stubs) == 0 || len(stubs) > maxCompiledStubs {
		return
	}
	texts := make([]string, len(stubs))
	n := 0
	for i, s := range stubs {
		if s.raw == "" {
			return
		}
		n += len(s.raw)
		texts[i] = s.raw
	}
	if n > maxCompiledText {
		return
	}
	c.last.Store(&compiledSet{texts: texts, binary: opts.Binary, tcp: opts.TCP, set: set.WithInjector(nil)})
}

// predicateErrors turns match's errors into Mountebank's: an error without a source names the
// stub's JSON text, and a JavaScript error Mountebank reports without a code shows only that.
func predicateErrors(err error, stubs []*stub) error {
	var list match.Errors
	var one *match.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = match.Errors{one}
	default:
		return &config.Error{Code: config.CodeBadData, Message: err.Error()}
	}
	out := make(config.Errors, 0, len(list))
	for _, me := range list {
		ce := &config.Error{Code: me.Code, Message: me.Message, Source: config.FromPlain(me.Source)}
		if me.Stub >= 0 && me.Stub < len(stubs) {
			ce.Path = "stubs[" + strconv.Itoa(me.Stub) + "].predicates"
			if !jsvalue.Truthy(me.Source) {
				// reason.source || JSON.stringify(stub): a falsy source ("" for the predicate
				// "") names the stub too.
				ce.Source = stubs[me.Stub].text()
			}
		}
		if me.Code == "" {
			ce.Raw = config.NewObject("source", ce.Source)
		}
		out = append(out, ce)
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}

// Port returns the port the imposter listens on (assigned once started).
func (im *Imposter) Port() int { return im.port }

// Start binds the imposter's port and starts serving. A port in use is a "resource conflict"
// *config.Error, as in Mountebank.
func (im *Imposter) Start() error {
	protocol, ok := im.opts.Protocols[im.def.Protocol]
	if !ok {
		return &config.Error{Code: config.CodeBadData, Message: fmt.Sprintf("the %s protocol is not yet supported", im.def.Protocol)}
	}
	prepared, err := protocol(im.def)
	if err != nil {
		return err
	}
	host := im.def.Host
	if host == "" {
		host = im.opts.Host
	}
	poller := im.opts.Poller
	if !prepared.FIFO {
		poller = netconn.PollerGo // tcp and smtp: a goroutine per connection on the runtime's poller
	}
	var ln net.Listener
	if prepared.Start != nil {
		ext, err := prepared.Start(im)
		if err != nil {
			return err
		}
		if err := im.setEncoding(ext.Encoding); err != nil {
			_ = ext.Listener.Close() // stops the program
			return err
		}
		im.custom = &customState{ext: ext, pending: map[string]*pendingProxy{}}
		ln = ext.Listener
	} else if ln, err = netconn.ListenTCP(host, im.port, poller); err != nil {
		var dnsErr *net.DNSError
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			return config.AddrInUse(host, im.port)
		case errors.Is(err, syscall.EADDRNOTAVAIL):
			return config.ListenFailed("EADDRNOTAVAIL", -99, host, im.port)
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			return config.LookupFailed("ENOTFOUND", -3008, host)
		case errors.As(err, &dnsErr):
			return config.LookupFailed("EAI_AGAIN", -3001, host)
		case errors.Is(err, syscall.EACCES):
			return &config.Error{Code: config.CodeInsufficient, Message: "Run mb in superuser mode if you want access"}
		default:
			return &config.Error{Code: config.CodeCannotStart, Message: err.Error()}
		}
	}
	// With the FIFO poller, busy connections are served in the order their requests arrived
	// (see netconn).
	addr := ln.Addr().(*net.TCPAddr)
	im.port = addr.Port
	label := im.scopeLabel()
	im.setLog(logs.Scoped(im.opts.Logger, label[1:len(label)-2]))
	im.ln = netconn.NewRetryListener(ln, im.log)
	im.plainIPv4 = addr.IP.To4() != nil && !addr.IP.IsUnspecified()
	im.def.Port = im.port
	if im.js != nil {
		im.js.SetLogger(im.log) // scripts log under the imposter's scope, as in Mountebank
	}
	im.metrics = im.opts.Metrics.ForImposter(label)
	if im.opts.Shared != nil {
		im.shared = im.opts.Shared.Imposter(im.ID()) // the ID is final now (see Adopt)
		im.shareScriptState()
	}
	im.server = prepared.New(im)
	proxy.Serving(im.port, true) // a proxy to it may loop back (see proxy.MaxHops); closeListener undoes it
	im.served.Add(1)             // before the server may start: closeListener waits for it once it has
	// The server's accept loop starts with the first connection (FIFO listeners): an imposter
	// a client suite creates and deletes without connecting to it costs no goroutine, and its
	// DELETE does not wait for one to end.
	if !netconn.StartOnConn(ln, &im.starter) {
		im.startServing()
	}
	// (logs.Parts: no look-up of the caller, as slog.Logger.Info makes, for each imposter a
	// client suite starts and stops around a test.)
	logs.Parts(im.log, slog.LevelInfo, "Open for business...")
	return nil
}

// StartAborted returns a channel closed once the imposter was deleted while its custom
// protocol's program was starting (see Registry.Reserve): the start stops waiting for the
// program, stops it, and fails.
func (im *Imposter) StartAborted() <-chan struct{} {
	im.abortMu.Lock()
	defer im.abortMu.Unlock()
	if im.abort == nil {
		im.abort = make(chan struct{})
	}
	return im.abort
}

// abortStart closes StartAborted's channel (once).
func (im *Imposter) abortStart() {
	im.abortMu.Lock()
	defer im.abortMu.Unlock()
	if im.abort == nil {
		im.abort = make(chan struct{})
	}
	select {
	case <-im.abort:
	default:
		close(im.abort)
	}
}

// endStart closes startEnded's channel (once): the reserved start has returned.
func (im *Imposter) endStart() {
	im.abortMu.Lock()
	defer im.abortMu.Unlock()
	if im.startEnded == nil {
		im.startEnded = make(chan struct{})
	}
	select {
	case <-im.startEnded:
	default:
		close(im.startEnded)
	}
}

// startReturned returns startEnded's channel.
func (im *Imposter) startReturned() <-chan struct{} {
	im.abortMu.Lock()
	defer im.abortMu.Unlock()
	if im.startEnded == nil {
		im.startEnded = make(chan struct{})
	}
	return im.startEnded
}

// setEncoding switches the imposter to the encoding a custom protocol's program announced
// (Mountebank's server.encoding): "base64" compiles the stubs' predicates again for binary
// requests, as a tcp imposter's mode binary does (data base64-decoded before it is compared;
// matches, jsonpath and xpath refused when evaluated). Anything else keeps utf8. It runs before
// the imposter serves its first request.
func (im *Imposter) setEncoding(encoding string) error {
	if encoding != "base64" || im.encoding == "base64" {
		return nil
	}
	old := im.tbl.Load()
	var stubs []*stub
	if old != nil {
		stubs = old.stubs
	}
	im.encoding = "base64"
	im.tbl.Store(nil) // nothing of the utf8 predicates is reused
	t, err := im.compile(stubs, nil)
	if err != nil {
		im.encoding = "utf8"
		im.tbl.Store(old)
		return err
	}
	im.tbl.Store(t)
	return nil
}

// States of Imposter.serving.
const (
	serveDeferred int32 = iota // Serve waits for the first connection
	serveStarted               // Serve runs (or ran) on a goroutine of its own
	serveNever                 // the listener closed before any connection: Serve never runs
)

// startServing runs the server's Serve on a goroutine of its own, unless it runs already or
// the listener was closed first. It does not block.
func (im *Imposter) startServing() {
	if !im.serving.CompareAndSwap(serveDeferred, serveStarted) {
		return
	}
	go func() {
		defer im.served.Done()
		defer func() {
			if p := recover(); p != nil {
				im.log.Error("panic in imposter server", "panic", p, "stack", string(debug.Stack()))
			}
		}()
		if err := im.server.Serve(im.ln); err != nil {
			im.log.Error("imposter stopped serving", "err", err)
		}
	}()
}

// scopeLabel is the imposter's scope in brackets, a space after ("[http:4545 name] "): the
// label of its metrics, whose inside (the scope, "http:4545 name") its log lines name. One
// string for both: a client suite starts an imposter per test, and the scope's pieces were
// put together three times.
func (im *Imposter) scopeLabel() string {
	var buf [64]byte
	b := append(buf[:0], '[')
	b = append(b, im.def.Protocol...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(im.port), 10)
	if im.def.Name != "" {
		b = append(b, ' ')
		b = append(b, im.def.Name...)
	}
	return string(append(b, "] "...))
}

// Stop stops accepting, lets requests in flight finish until ctx ends, then closes every
// connection. tcp and smtp connections are closed at once, as Mountebank destroys them.
func (im *Imposter) Stop(ctx context.Context) {
	if ok, _ := im.closeListener(); ok {
		im.drain(ctx)
	}
}

// closeListener stops accepting and closes the connections that wait for a next request: when
// it returns the port is free again, and no request sent after it returns is answered by this
// imposter (a client's keep-alive connection to it is closed, not served). It reports false when
// the imposter never started or was closed before, and how many connections may still be busy.
func (im *Imposter) closeListener() (ok bool, busy int) {
	if im.server == nil || !im.closing.CompareAndSwap(false, true) {
		return false, 0
	}
	// Closing the listener ends the server's accept loop, whether or not it has begun.
	_ = im.ln.Close()
	proxy.Serving(im.port, false)
	if im.serving.CompareAndSwap(serveDeferred, serveNever) {
		return true, 0 // no connection was ever accepted, and none will be
	}
	im.served.Wait()
	return true, im.server.CloseIdle()
}

// drain lets the requests in flight finish until ctx ends, then closes every connection; it
// follows closeListener.
func (im *Imposter) drain(ctx context.Context) {
	if im.serving.Load() == serveStarted {
		_ = im.server.Shutdown(ctx)
	}
	im.metrics.Remove()
	logs.Parts(im.log, slog.LevelInfo, "Ciao for now")
}

// NumberOfRequests returns how many requests the imposter has received.
// With a shared store, on every node.
func (im *Imposter) NumberOfRequests() int64 { return im.tally().requests() }

// NoMatchCount returns how many of the requests counted by NumberOfRequests no stub matched
// (those answered by the default response, and those whose predicates raised an error).
// With a shared store, on every node.
func (im *Imposter) NoMatchCount() int64 { return im.tally().noMatches() }

// StubDefinitions returns the stubs' definitions in order, as configured. Callers must not
// modify them. Each is decoded from the stub's text (but a stub a proxy recorded, kept as a
// tree): Stubs reads one at a time.
func (im *Imposter) StubDefinitions() []*config.Object {
	stubs := im.tbl.Load().stubs
	out := make([]*config.Object, len(stubs))
	for i, s := range stubs {
		out[i] = s.definition()
	}
	return out
}

// AppendStubsJSON appends the stubs as configured, in order, as the compact JSON array
// config.AppendJSON renders of StubDefinitions, without decoding them.
func (im *Imposter) AppendStubsJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, s := range im.tbl.Load().stubs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = s.appendText(dst)
	}
	return append(dst, ']')
}

// Definition returns the imposter's definition. Callers must not modify it.
func (im *Imposter) Definition() *config.Imposter { return im.def }

// StubCount returns the number of stubs.
func (im *Imposter) StubCount() int { return len(im.tbl.Load().stubs) }

// ReplaceStubs validates and compiles defs and swaps them in; on error nothing changes.
// When keep is true, stubs whose definition is unchanged keep their state.
func (im *Imposter) ReplaceStubs(defs []*config.Object) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	stubs, err := im.newStubs(defs)
	if err != nil {
		return err
	}
	return im.swap(stubs, defs)
}

// newStubs compiles defs. When some do not compile, the error lists each one's error as
// Mountebank's validator lists them, last stub first (it concatenates the stubs' lists in
// reverse); an error that is not Mountebank's (403 insufficient access) is returned alone.
// Predicates are compiled later (compile), and only when every stub's responses did.
func (im *Imposter) newStubs(defs []*config.Object) ([]*stub, error) {
	stubs := make([]*stub, 0, len(defs))
	var failed []error // by stub, nil for one that compiled
	for i, d := range defs {
		s, err := im.newStubAt(d, i)
		if err != nil {
			var ce *config.Error
			if errors.As(err, &ce) && ce.Path != "" {
				ce.Path = fmt.Sprintf("stubs[%d].%s", i, ce.Path)
			}
			if failed == nil {
				failed = make([]error, len(defs))
			}
			failed[i] = err
			continue
		}
		stubs = append(stubs, s)
	}
	if failed == nil {
		return stubs, nil
	}
	var list config.Errors
	for i := len(failed) - 1; i >= 0; i-- {
		if failed[i] == nil {
			continue
		}
		var many config.Errors
		var one *config.Error
		switch {
		case errors.As(failed[i], &many):
			list = append(list, many...)
		case errors.As(failed[i], &one) && one.Code != config.CodeInsufficient:
			list = append(list, one)
		default:
			return nil, firstError(failed)
		}
	}
	if len(list) == 1 {
		return nil, list[0]
	}
	return nil, list
}

// firstError is the first error of errs that is not nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// InsertStub inserts def before index (index = StubCount() appends).
func (im *Imposter) InsertStub(def *config.Object, index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	s, err := im.newStub(def)
	if err != nil {
		return err
	}
	old := im.tbl.Load().stubs
	if index < 0 || index > len(old) {
		return &config.Error{Code: config.CodeBadData, Message: "'index' must be between 0 and the length of the stubs array"}
	}
	stubs := make([]*stub, 0, len(old)+1)
	stubs = append(stubs, old[:index]...)
	stubs = append(stubs, s)
	stubs = append(stubs, old[index:]...)
	trees := make([]*config.Object, len(stubs))
	trees[index] = def
	return im.swap(stubs, trees)
}

// ReplaceStub replaces the stub at index with def.
func (im *Imposter) ReplaceStub(def *config.Object, index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	if index < 0 || index >= len(old) {
		return &config.Error{Code: config.CodeNoSuchResource, Message: fmt.Sprintf("no stub at index %d", index)}
	}
	s, err := im.newStub(def)
	if err != nil {
		return err
	}
	stubs := append([]*stub(nil), old...)
	stubs[index] = s
	trees := make([]*config.Object, len(stubs))
	trees[index] = def
	return im.swap(stubs, trees)
}

// DeleteStub removes the stub at index.
func (im *Imposter) DeleteStub(index int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	if index < 0 || index >= len(old) {
		return &config.Error{Code: config.CodeNoSuchResource, Message: fmt.Sprintf("no stub at index %d", index)}
	}
	stubs := make([]*stub, 0, len(old)-1)
	stubs = append(stubs, old[:index]...)
	stubs = append(stubs, old[index+1:]...)
	return im.swap(stubs, nil)
}

// CheckStubs compiles defs without changing anything, returning the error an update would give.
func (im *Imposter) CheckStubs(defs []*config.Object) error {
	stubs, err := im.newStubs(defs)
	if err != nil {
		return err
	}
	_, err = im.compile(stubs, defs)
	return err
}

// install makes t the stub table requests are matched against.
func (im *Imposter) install(t *table) {
	if t.set.Scripted() {
		// Set before t is visible: whoever loads t sees it.
		im.scripted.Store(true)
	}
	im.tbl.Store(t)
	im.stubRev.Add(1)
	im.changes.Add(1)
}

// StubRevision returns a count of the changes of the imposter's stubs: it changes whenever a
// stub is added, replaced or removed, through the API or by a proxy recording a response.
func (im *Imposter) StubRevision() uint64 { return im.stubRev.Load() }

// swap compiles stubs (trees as compile has them) and makes them the imposter's.
func (im *Imposter) swap(stubs []*stub, trees []*config.Object) error {
	t, err := im.compile(stubs, trees)
	if err != nil {
		return err
	}
	im.install(t)
	return nil
}

// ClearRequests drops the recorded requests and resets the request count, and with them what
// verification counts: each stub's hits and the unmatched requests. With a shared store it
// clears them on every node (this node's counts go on, from the base the store keeps), and
// fails when the store cannot be reached.
func (im *Imposter) ClearRequests(ctx context.Context) error {
	if im.shared != nil {
		counts := im.counts(false)
		if err := im.shared.Clear(ctx, counts); err != nil {
			return err
		}
		im.written(counts)
		im.journal.clear()
		im.changes.Add(1)
		return nil
	}
	im.journal.clear()
	im.numRequests.Store(0)
	im.noMatches.Store(0)
	for _, s := range im.tbl.Load().stubs {
		s.hits.Store(0)
	}
	im.changes.Add(1)
	return nil
}

// matchedConfig is a response's configuration as a match shows it: Mountebank sets a proxy's
// mode to proxyOnce, on the copy it answers with, when it is missing or not one it knows.
func matchedConfig(cfg *config.Object) *config.Object {
	p, _ := cfg.Get("proxy")
	proxy, ok := p.(*config.Object)
	if !ok {
		return cfg
	}
	switch mode, _ := proxy.Get("mode"); mode {
	case "proxyOnce", "proxyAlways", "proxyTransparent":
		return cfg
	}
	c, _ := config.Clone(cfg).(*config.Object)
	cp, _ := c.Get("proxy")
	cp.(*config.Object).Set("mode", "proxyOnce")
	return c
}

// recordMatch keeps a match of stub s for the imposter's JSON (--debug).
// is is the `is` object of the response sent, resp the configured response.
func (im *Imposter) recordMatch(s *stub, req *config.Object, is *config.Object, resp response) {
	s.recordMatch(req, is, resp)
	im.changes.Add(1)
}

func (s *stub) recordMatch(req *config.Object, is *config.Object, resp response) {
	m := config.NewObject(
		"timestamp", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"request", req,
		"response", is,
		"responseConfig", matchedConfig(resp.base().config),
		"processingTime", 0.0,
	)
	a := s.more()
	a.mu.Lock()
	a.matches = append(a.matches, m)
	a.mu.Unlock()
}
