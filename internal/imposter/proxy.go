package imposter

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/proxy"
	"github.com/mockd/mockd/internal/request"
)

// dryRunError is an error Mountebank's dry run finds in a proxy; it gets the stub as source.
type dryRunError struct{ ce *config.Error }

func (e dryRunError) Error() string { return e.ce.Error() }

// stubSource gives a proxy's dry-run error without a source the stub's JSON text, as
// Mountebank does; other errors pass unchanged.
func stubSource(err error, def *config.Object) error {
	var dr dryRunError
	if !errors.As(err, &dr) {
		return err
	}
	if dr.ce.Source == nil {
		dr.ce.Source = string(config.MarshalJSON(def, 0))
	}
	return dr.ce
}

// proxyHTTP answers req by forwarding it to the proxy's origin, as Mountebank's proxyAndRecord
// does: the answer goes through the response's behaviors, is recorded (unless the mode is
// proxyTransparent) and is then compiled like a configured response. uri and body are the
// request's as received; rctx cancels the behaviors. contained says nothing kept req's strings
// (see Answer.contained): no behaviors ran on the answer (copy and the others put the
// request's text in it), and what was recorded is the origin's answer alone, appended to a
// recorded stub whose predicates were known (a new stub's predicates are the request's
// fields), or nothing (proxyTransparent).
func (im *Imposter) proxyHTTP(rctx context.Context, req *request.Request, uri, body []byte, st *stub, r *proxyResponse) (out *wire, contained bool, err error) {
	p := r.http
	start := time.Now()
	// An answer proxyAlways may keep (see keptResponse): the origin's bytes are kept too, and
	// served as they are when they may be (see proxy.Plain and plainWire), the recorded answer
	// then made of them only when a stub must hold its tree.
	var raw proxy.Kept
	var keep *proxy.Kept
	var plain *proxy.Plain
	var pl proxy.Plain
	// proxyAlways writes the lines of a plain answer and its record's key into pooled buffers
	// (see proxyBufs), given back by the one deferred call: with a second one, the compiler no
	// longer open-coded them (returns times defers past 15).
	var bufs *proxyBufs
	if p.Mode == proxy.ModeAlways && st != nil {
		bufs = proxyBufPool.Get().(*proxyBufs)
		defer func() {
			if plain != nil {
				bufs.lines = pl.Headers[:0]
			}
			bufs.release()
		}()
	}
	if p.Mode == proxy.ModeAlways && st != nil && r.behaviors == nil {
		keep = &raw
		// --debug keeps the answer's tree (RecordMatch); added behaviors, or a protocol's
		// program, make the recorded response one compiled as it is recorded (lazyRecord).
		if !treesOnly.Load() && !im.opts.Debug && !p.AddWait && p.AddDecorate == nil && im.lazyProtocol() {
			// The lines are written into a pooled list: one on the stack escaped (Forward
			// fills it), a new one for every answer (384 B).
			pl.Headers = bufs.lines
			plain = &pl
		}
	}
	answer, err := p.Forward(rctx, &proxy.Request{
		Method: req.Method,
		URI:    uri,
		From:   req, // its headers: a direct request's lines go on as they arrived
		Body:   body,
		Keep:   keep,
		Plain:  plain,
		Hops:   proxy.HopsOf(req.ClientAddrPort()),
		Start:  start.UnixNano(),
	})
	if err != nil {
		if p.CertErr != nil {
			im.log.Error("proxy failed", "to", p.To, "err", err, "cert", p.CertErr)
		} else {
			im.log.Error("proxy failed", "to", p.To, "err", err)
		}
		return nil, false, err
	}
	elapsed := float64(time.Since(start).Milliseconds())
	if answer == nil { // pl, served as it arrived
		if s := r.plain.Load(); s != nil && s.gen == pl.Gen && pl.Gen != 0 {
			out = s.w // compiled of an answer of the same bytes (see proxy.Plain.Gen)
		} else {
			out = plainWire(&pl, im.defaults, r.last.Load())
			r.plain.Store(&plainServed{w: out, gen: pl.Gen})
		}
	} else {
		answer.Set("_proxyResponseTime", elapsed)
		if r.behaviors != nil {
			if answer, err = r.behaviors.Apply(rctx, req, answer, im.js); err != nil {
				return nil, false, err
			}
		}
		var like []header
		if last := r.last.Load(); last != nil {
			like = last.headers
		}
		out = compileIsLike(answer, im.defaults, nil, like)
	}
	r.last.Store(out)
	// Only the answer, which Forward made of the origin's bytes, is kept (see contained).
	contained = r.behaviors == nil && !im.opts.Debug
	if p.Mode != proxy.ModeTransparent && st != nil {
		var seen *config.Object
		keys, all := p.RequestFields()
		all = all || req.Object != nil || req.TCP
		// The headers as the origin got them, which the record holds when the generators
		// read them (or may): only then are the request's lines parsed.
		var headers []request.KV
		if all || slices.Contains(keys, "headers") {
			headers = p.Headers(req.HeaderList())
		}
		// Without injected generators or a predicateOperator, the predicates are made of the
		// request fields the generators name alone: proxyAlways keeps their stable text by
		// those fields' values, and an answer whose recorded stub is there already is appended
		// to it without making them (nor the request's record) again.
		cached := !all && p.Mode == proxy.ModeAlways
		// rec is the recorded response, made of answer (when it is nil, of the kept bytes:
		// the tree Forward would have made).
		var rec *config.Object
		record := func() *config.Object {
			if rec != nil {
				return rec
			}
			if answer == nil {
				answer = raw.Answer()
				answer.Set("_proxyResponseTime", elapsed)
			}
			// Forward made the answer as it is kept (see cloneKept), and nothing else holds
			// it once compiled: it is kept as it is, unless behaviors may share it with what
			// they ran, or --debug keeps what was sent (RecordMatch), which servedInPlace
			// must not change.
			kept := answer
			if r.behaviors != nil || im.opts.Debug {
				kept = cloneKept(answer)
			}
			rec = config.ObjectWithRoom(1)
			rec.Members = append(rec.Members, config.Member{Key: "is", Value: kept})
			var extra []any
			if t, _ := get(answer, "_proxyResponseTime").(float64); p.AddWait && t != 0 {
				extra = append(extra, config.NewObject("wait", t))
			}
			if p.AddDecorate != nil {
				extra = append(extra, config.NewObject("decorate", p.AddDecorate))
			}
			if len(extra) > 0 {
				rec.Set("behaviors", extra)
			}
			return rec
		}
		var want []byte // the stable text of the predicates, when known
		var key *[]byte
		if cached { // proxyAlways: bufs is taken
			key = &bufs.key
			var direct bool
			if *key, direct = appendRecordKey((*key)[:0], req, keys, headers); !direct {
				seen = httpRecord(req, keys, headers)
				*key = appendGenKey((*key)[:0], seen)
			}
			if want = r.gen.get(*key); want != nil {
				if answer == nil {
					// Appended as its bytes alone (see keptResponse), its tree not made.
					if im.appendKept(st, want, raw, elapsed, len(out.body)) {
						return out, contained, nil
					}
				} else if im.appendRecorded(st, want, record(), out, keep) {
					return out, contained, nil
				}
			}
		}
		switch {
		case seen != nil:
		case all:
			seen = recordedRequest(req)
			seen.Set("headers", request.GroupHeaders(headers))
		default: // only what the generators read: a request's whole record took a dozen allocations
			seen = httpRecord(req, keys, headers)
		}
		contained = false // the predicates are made of the request's strings
		preds, err := proxy.PredicatesFor(seen, p.Generators, selector{}, im.generatorInjector())
		if err != nil {
			return nil, false, err
		}
		if cached && want == nil {
			want = appendStableJSON(nil, preds)
			r.gen.put(*key, want)
		}
		im.recordProxied(st, p.Mode == proxy.ModeAlways, preds, want, record(), out, keep)
	}
	return out, contained, nil
}

// plainServed is the answer plainWire made of a proxy.Plain, and the plain answer's Gen.
type plainServed struct {
	w   *wire
	gen uint64
}

// proxyBufs are the buffers proxyHTTP writes into for a proxyAlways answer: the lines of its
// proxy.Plain and its record's key (see appendRecordKey), pooled together (one pool round trip
// an answer, where there were two).
type proxyBufs struct {
	lines []request.KV
	key   []byte
}

var proxyBufPool = sync.Pool{New: func() any { return new(proxyBufs) }}

// release gives b back to the pool, its buffers emptied, unless one grew large.
func (b *proxyBufs) release() {
	if cap(b.lines) > 256 || cap(b.key) > 64<<10 {
		return
	}
	b.lines, b.key = b.lines[:0], b.key[:0]
	proxyBufPool.Put(b)
}

// treesOnly turns off serving the answers proxy.Plain describes from their bytes (plainWire):
// tests set it to compare what proxyAlways serves and records with what it did from the
// answers' trees (TestPlainAnswersAsTrees).
var treesOnly atomic.Bool

// plainWire is the answer compileIsLike makes of the answer Forward would have made of pl (a
// proxy.Plain's): the lines, but a Content-Length's (made again from the body), the body as it
// arrived, and the flags markHeaders and utf8Values set. last is the answer served before
// (nil for none): lines equal to its (an origin mostly repeats itself, but for a Date a
// second) are its, shared (compiled lines are never changed), and an answer equal to it is it.
func plainWire(pl *proxy.Plain, def *defaults, last *wire) *wire {
	var like []header
	if last != nil {
		like = last.headers
	}
	// same says the lines are like's, with the flags like's have: utf8Values clears every
	// wide flag of a text answer's lines (its body is not empty); a binary one's are set for
	// values past ASCII.
	same := last != nil
	n, hasConnection, hasLength := 0, false, false
	for _, h := range pl.Headers {
		// The names as commonly spelled first: the proxy gives those as constants (compared
		// at once), and EqualFold was ~200 instructions an answer.
		switch {
		case len(h.Name) == len("connection") && (h.Name == "Connection" || strings.EqualFold(h.Name, "connection")):
			hasConnection = true
		case isContentLength(h.Name):
			hasLength = true
			continue
		}
		if same && (n >= len(like) || like[n].name != h.Name || like[n].value != h.Value || like[n].wide ||
			pl.Binary && !isASCII(h.Value)) {
			same = false
		}
		n++
	}
	same = same && n == len(like) && hasLength
	if same && last.compiled && last.status == int32(pl.Status) && last.fail == nil && !last.binaryNotText &&
		last.hasConnection == hasConnection && last.hasContentLength == hasLength && bytes.Equal(last.body, pl.Body) {
		return last
	}
	var out *wire
	if same {
		out = wireWithRoom(-1)
		out.headers = like
	} else {
		out = wireWithRoom(n)
		for _, h := range pl.Headers {
			if isContentLength(h.Name) {
				continue
			}
			out.headers = append(out.headers, header{name: h.Name, value: h.Value})
		}
		markHeaders(out.headers, like)
	}
	out.compiled = true
	out.status = int32(pl.Status)
	out.hasConnection, out.hasContentLength = hasConnection, hasLength
	out.body = pl.Body
	if !same && hasLength {
		mode := modeText
		if pl.Binary {
			mode = modeBinary
		}
		out.utf8Values(mode, def)
	}
	return out
}

// isContentLength reports whether name is Content-Length's in any case.
func isContentLength(name string) bool {
	return len(name) == len("content-length") && (name == "Content-Length" || strings.EqualFold(name, "content-length"))
}

// The _mode values of a proxied answer, made once (a string put in an interface is an
// allocation).
var (
	modeText   config.Value = "text"
	modeBinary config.Value = "binary"
)

// predCache keeps the stable texts of the predicates a proxy's generators made (see
// appendStableJSON), by the generators' request fields (see appendGenKey). It is safe for
// concurrent use.
type predCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// maxGenTexts bounds a predCache: full, it starts again empty. maxGenEntry bounds what one
// entry keeps (its key and text): the predicates of a request that names its body may be as
// large as the body (up to --max-body), and 256 of those would be kept twice over what the
// recorded stubs hold; such a request's predicates are made for every answer instead.
const (
	maxGenTexts = 256
	maxGenEntry = 8 << 10
)

// get returns the text kept for key, nil when none is.
func (c *predCache) get(key []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[string(key)] // looked up without a conversion
}

// put keeps text for key.
func (c *predCache) put(key, text []byte) {
	if len(key)+len(text) > maxGenEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxGenTexts {
		c.m = make(map[string][]byte)
	}
	c.m[string(key)] = text
}

// appendRecordKey appends a key of the fields keys of the record httpRecord makes of r (with
// headers): the fields' values as received, each text with its length, so that two requests of
// the same key have the same record. direct is false when a field is one it does not write
// (requestFrom and ip, which httpRecord makes): appendGenKey of the record is the key then.
func appendRecordKey(dst []byte, r *request.Request, keys []string, headers []request.KV) (key []byte, direct bool) {
	text := func(dst []byte, s string) []byte {
		dst = strconv.AppendInt(dst, int64(len(s)), 10)
		return append(append(dst, ':'), s...)
	}
	list := func(dst []byte, kvs []request.KV) []byte {
		dst = append(strconv.AppendInt(dst, int64(len(kvs)), 10), ':')
		for _, kv := range kvs {
			dst = text(text(dst, kv.Name), kv.Value)
		}
		return dst
	}
	for _, k := range keys {
		switch k {
		case "method":
			dst = text(append(dst, 'm'), r.Method)
		case "path":
			dst = text(append(dst, 'p'), r.Path)
		case "query":
			dst = list(append(dst, 'q'), r.Query)
		case "headers":
			dst = list(append(dst, 'h'), headers)
		case "body":
			if r.BodyMissing {
				dst = append(dst, 'B')
			} else {
				dst = text(append(dst, 'b'), r.Body)
			}
		case "form":
			if r.HasForm {
				dst = list(append(dst, 'f'), r.Form)
			} else {
				dst = append(dst, 'F')
			}
		case "requestFrom", "ip":
			return dst, false
		} // any other: not in the record, the same for every request
	}
	return dst, true
}

// appendGenKey appends a text of v that differs for any two values that differ (the same for
// equal ones): a type letter for each value, and each string and key with its length, as it
// is (JSON text would write the invalid UTF-8 of two different strings the same way).
func appendGenKey(dst []byte, v config.Value) []byte {
	switch t := v.(type) {
	case string:
		dst = strconv.AppendInt(append(dst, 's'), int64(len(t)), 10)
		return append(append(dst, ':'), t...)
	case *config.Object:
		if t == nil {
			return append(dst, 'n')
		}
		dst = strconv.AppendInt(append(dst, 'o'), int64(len(t.Members)), 10)
		for _, m := range t.Members {
			dst = appendGenKey(dst, m.Key)
			dst = appendGenKey(dst, m.Value)
		}
		return dst
	case []any:
		dst = strconv.AppendInt(append(dst, 'a'), int64(len(t)), 10)
		for _, e := range t {
			dst = appendGenKey(dst, e)
		}
		return dst
	case float64:
		return strconv.AppendFloat(append(dst, 'f'), t, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(append(dst, 'b'), t)
	case nil:
		return append(dst, 'n')
	}
	// Not a value a request's record has: a text of its own, never another's key.
	return append(config.AppendJSON(append(dst, 'x'), v, 0), 0)
}

// cloneKept is config.Clone of is, an answer a proxy keeps: each object is made in one
// allocation with its members (newObject), and the headers with room for one more
// (servedInPlace may add one): fewer objects for the garbage collector to mark on every
// cycle, for as long as the imposter lives.
func cloneKept(is *config.Object) *config.Object {
	c := config.ObjectWithRoom(len(is.Members))
	for _, m := range is.Members {
		room := 0
		if m.Key == "headers" {
			room = 1
		}
		c.Members = append(c.Members, config.Member{Key: m.Key, Value: cloneCompact(m.Value, room)})
	}
	return c
}

// cloneCompact is config.Clone with objects made by newObject, v's own with room for room
// more members.
func cloneCompact(v config.Value, room int) config.Value {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return t
		}
		c := config.ObjectWithRoom(len(t.Members) + room)
		for _, m := range t.Members {
			c.Members = append(c.Members, config.Member{Key: m.Key, Value: cloneCompact(m.Value, 0)})
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = cloneCompact(e, 0)
		}
		return c
	}
	return v
}

// generatorInjector returns what runs injected predicateGenerators; nil without scripting.
func (im *Imposter) generatorInjector() proxy.Injector {
	if im.js == nil {
		return nil
	}
	return im.js
}

// dryRunInjectedGenerators runs p's injected predicateGenerators on the request of Mountebank's
// dry run, as Mountebank does when it creates the stub (its dry run records the fake proxy's
// answer, which makes the predicates): one that throws, or does not return an array, refuses
// the stub with its invalid injection error.
func (im *Imposter) dryRunInjectedGenerators(p *proxy.Proxy) error {
	inj := im.generatorInjector()
	if inj == nil {
		return nil
	}
	var injected []*config.Object
	for _, g := range p.Generators {
		if jsvalue.Truthy(get(g, "inject")) {
			injected = append(injected, g)
		}
	}
	if len(injected) == 0 {
		return nil
	}
	_, err := proxy.PredicatesFor(proxy.HTTPTestRequest(), injected, selector{}, inj)
	var ce *config.Error
	if errors.As(err, &ce) && ce.Raw == nil {
		// The API shows the error as Mountebank's dry run throws it: code, message, and the
		// injection's source and data beside them.
		return &config.Error{Code: ce.Code, Message: ce.Message, Raw: ownFields(ce)}
	}
	return err
}

// selector evaluates jsonpath and xpath for predicateGenerators with the behaviors' engines.
type selector struct{}

func (selector) JSONPath(sel string, field config.Value) []config.Value {
	return behavior.SelectJSONPath(sel, field)
}

func (selector) XPath(sel string, ns *config.Object, field config.Value) []config.Value {
	return behavior.SelectXPath(sel, ns, field)
}

var _ proxy.Selector = selector{}

// recordProxied saves a response a proxy recorded, as Mountebank's responseResolver does:
// proxyOnce inserts a stub with preds just before the proxy stub st; proxyAlways appends resp
// to the first stub after st whose predicates equal preds, or adds such a stub at the end.
// It does nothing when st is no longer in the imposter. served, when not nil, is resp's `is`
// as it was compiled to be sent (servedInPlace reads its body's length).
// want, when not nil, is the stable text of preds (appendStableJSON). raw, when not nil and
// Ok, is the origin's answer that resp's `is` was made of (see keptResponse).
func (im *Imposter) recordProxied(st *stub, always bool, preds []any, want []byte, resp *config.Object, served *wire, raw *proxy.Kept) {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	index := slices.Index(old, st)
	if index < 0 {
		return // the proxy stub was removed meanwhile
	}
	if always {
		if want == nil {
			// Written into a buffer kept for the next answer: stableJSON made a sorted copy
			// of the tree and a string for every answer.
			buf := stableTexts.Get().(*[]byte)
			defer func() {
				if cap(*buf) <= 64<<10 { // not the buffer of a large body's
					stableTexts.Put(buf)
				}
			}()
			*buf = appendStableJSON((*buf)[:0], preds)
			want = *buf
		}
		if im.appendTo(old, index, want, resp, served, raw) {
			return
		}
		index = len(old)
	}
	def := config.NewObject("predicates", preds, "responses", []any{resp})
	ns, err := im.newStubTree(def)
	if err != nil {
		im.log.Error("cannot record proxy response", "err", err)
		return
	}
	if always {
		ns.startGrowing() // the next answers are appended to it in place
	}
	if index == len(old) {
		// Appended in old's array when it has room (a table sees only its own length of it,
		// and the next recording appends to the table installed), else in one twice as long:
		// a copy of every stub for each new one made recording quadratic.
		err = im.swapAppended(append(roomForOne(old), ns))
	} else {
		stubs := make([]*stub, 0, len(old)+1)
		stubs = append(stubs, old[:index]...)
		stubs = append(stubs, ns)
		stubs = append(stubs, old[index:]...)
		err = im.swap(stubs, nil)
	}
	if err != nil {
		im.log.Error("cannot record proxy response", "err", err)
	}
}

// appendKept appends keptResponse(raw, elapsed, served), a kept answer of the proxyAlways stub
// st, to the first stub after st whose predicates' stable text is want when that stub grows in
// place (see growing), as appendTo does; false when there is none, or it does not grow
// (appendTo then takes the answer's tree).
func (im *Imposter) appendKept(st *stub, want []byte, raw proxy.Kept, elapsed float64, served int) bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	index := slices.Index(old, st)
	if index < 0 {
		return false
	}
	i := im.recordedAfter(old, index, want)
	if i < 0 || old[i].grow == nil {
		return false
	}
	old[i].grow.add(nil, im.keptResponse(raw, elapsed, served))
	im.stubRev.Add(1) // after the fact, as install counts a new table
	im.changes.Add(1)
	return true
}

// recordedAfter returns the index of the first stub of old after old[index] whose predicates'
// stable text is want (im.mu held); -1 when there is none.
func (im *Imposter) recordedAfter(old []*stub, index int, want []byte) int {
	x := &im.texts
	x.file(old)
	if index+1 < len(x.texts) && x.texts[index+1] == string(want) {
		// The stub after the proxy's (its one key's when it has recorded one): compared
		// before the text is hashed for the map (~260 instructions of a ~100 byte text).
		return index + 1
	}
	p, ok := x.ends[string(want)] // looked up without a conversion
	if !ok {
		return -1
	}
	i := p[0]
	for i >= 0 && int(i) <= index {
		i = x.next[i]
	}
	return int(i)
}

// appendRecorded appends resp, an answer of the proxyAlways stub st, to the first stub after
// st whose predicates' stable text is want, as recordProxied does; false when there is none
// (or st is no longer in the imposter): the predicates are then made and recordProxied called.
func (im *Imposter) appendRecorded(st *stub, want []byte, resp *config.Object, served *wire, raw *proxy.Kept) bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	old := im.tbl.Load().stubs
	index := slices.Index(old, st)
	return index >= 0 && im.appendTo(old, index, want, resp, served, raw)
}

// recordedTexts files the stubs of a table by the stable text of their predicates (see
// appendStableJSON), for proxyAlways to find the stub it appends an answer to (recordedAfter)
// without comparing the text of every stub after its own: that made each answer's cost grow
// with the stubs recorded before it (0.2 ms an answer at 15,000). It is kept under Imposter.mu.
type recordedTexts struct {
	stubs []*stub // the stubs filed: a table's
	// ends has for a text the first and the last stub with it, next for stub i the next stub
	// after it with its text (-1: none), texts stub i's text.
	ends  map[string][2]int32
	next  []int32
	texts []string
}

// file makes x file stubs, a table's: only the stubs after those it files when stubs are those
// with more after them in the same array (recordProxied appends in place), else all again
// (their texts kept from x's stubs when they are the same).
func (x *recordedTexts) file(stubs []*stub) {
	if len(x.stubs) > 0 && len(stubs) >= len(x.stubs) && &x.stubs[0] == &stubs[0] {
		x.add(stubs, len(x.stubs))
		return
	}
	var had map[*stub]string
	if len(x.stubs) > 0 {
		had = make(map[*stub]string, len(x.stubs))
		for i, s := range x.stubs {
			had[s] = x.texts[i]
		}
	}
	*x = recordedTexts{ends: make(map[string][2]int32, len(stubs)), next: make([]int32, 0, len(stubs)), texts: make([]string, 0, len(stubs))}
	for i, s := range stubs {
		t, ok := had[s]
		if !ok {
			t = predText(s)
		}
		x.put(i, t)
	}
	x.stubs = stubs
}

// add files stubs[from:], the stubs after those x files.
func (x *recordedTexts) add(stubs []*stub, from int) {
	for i := from; i < len(stubs); i++ {
		x.put(i, predText(stubs[i]))
	}
	x.stubs = stubs
}

// predText returns the stable text of s's predicates.
func predText(s *stub) string {
	preds := s.predicates()
	if preds == nil {
		preds = []any{}
	}
	return string(appendStableJSON(nil, preds))
}

// put files stub i, after those filed, under text t.
func (x *recordedTexts) put(i int, t string) {
	x.texts = append(x.texts, t)
	x.next = append(x.next, -1)
	e, ok := x.ends[t]
	if ok {
		x.next[e[1]] = int32(i)
		e[1] = int32(i)
	} else {
		e = [2]int32{int32(i), int32(i)}
	}
	x.ends[t] = e
}

// appendTo is recordProxied's append of resp to the first stub of old after the proxy stub
// old[index] whose predicates' stable text is want (im.mu held); false when there is none.
// The texts are compared, as Mountebank compares predicates (stableJSON made a sorted copy of
// both trees and two strings for every answer: a third of proxyAlways's allocations); each
// stub's is written once and kept (recordedTexts).
func (im *Imposter) appendTo(old []*stub, index int, want []byte, resp *config.Object, served *wire, raw *proxy.Kept) bool {
	if i := im.recordedAfter(old, index, want); i >= 0 {
		// Only the new response is compiled, and the predicates are unchanged, so the
		// compiled table is kept: recording was linear in what the stub had recorded
		// already, and proxyAlways under load slowed down with every answer.
		lazy := im.lazyRecord(resp)
		var pending *pendingResponse
		switch {
		case lazy && raw != nil && raw.Ok():
			// Kept as the origin's bytes: servedInPlace is done when it is read.
			is := config.AsObject(resp.Members[0].Value)
			t, _ := get(is, "_proxyResponseTime").(float64)
			pending = im.keptResponse(*raw, t, len(served.body))
		case lazy:
			servedInPlace(resp, im.defaults, served)
			pending = newPendingResponse(im, resp)
		default:
			servedInPlace(resp, im.defaults, served)
		}
		o := old[i]
		if o.grow != nil && config.Repeat(resp) == 1 { // a recorded response comes once
			// A stub proxyAlways recorded takes the answer in place (see growing).
			if pending != nil {
				// Kept as its text alone (see pendingResponse): nothing of it is in the
				// definition's list, which decodes it when read.
				o.grow.add(nil, pending)
			} else {
				cr, err := im.compileResponse(resp, o.tree())
				if err != nil {
					im.log.Error("cannot record proxy response", "err", err)
					return true
				}
				o.grow.add(resp, cr)
			}
			im.stubRev.Add(1) // after the fact, as install counts a new table
			im.changes.Add(1)
			return true
		}
		// Any other stub (one configured with the same predicates) is replaced by a stub
		// that keeps its tree (newStubTree) and grows from then on.
		odef := o.definition()
		def := &config.Object{Members: append([]config.Member(nil), odef.Members...)}
		list, _ := get(odef, "responses").([]any)
		def.Set("responses", append(roomForOne(list), resp))
		responses, rep := o.list()
		// The lists grow in place (roomForOne) when they have room: a reader of o sees only
		// its own length.
		ns := &stub{def: def, responses: roomForOne(responses), expect: o.expect, scen: o.scen}
		if rep != nil { // its own count list, grown as responses is
			ns.rep = &repeats{ends: roomForOne(rep.ends)}
			if a := rep.after; a != nil {
				ns.rep.after = &stub{responses: roomForOne(a.responses)}
				if a.rep != nil {
					ns.rep.after.rep = &repeats{ends: roomForOne(a.rep.ends)}
				}
			}
		}
		if pending != nil {
			ns.appendRepeated(pending, 1)
		} else if err := im.addResponse(ns, resp); err != nil {
			im.log.Error("cannot record proxy response", "err", err)
			return true
		}
		ns.startGrowing()
		ns.carry(o) // the stub keeps its place in the cycle, its hits, matches and ID
		ns.id = o.id
		stubs := append([]*stub(nil), old...)
		stubs[i] = ns
		t := *im.tbl.Load() // the same predicates: the compiled set and its reference stay
		t.stubs = stubs
		im.install(&t)
		im.texts.stubs = stubs // the same texts
		return true
	}
	return false
}

// roomForOne returns s with room for one more element: s when it has it, else a copy of it
// with twice its length as capacity. A recorded stub's lists grow by one answer at a time for
// as long as its imposter lives, and append grows a long slice by a quarter: each element
// was allocated and copied about four times over (~170 of the ~1.4 KB a proxyAlways request
// allocates), against about twice when doubled.
func roomForOne[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	out := make([]T, len(s), 2*len(s)+4)
	copy(out, s)
	return out
}

// lazyRecord reports whether resp, a response proxyAlways appends to a stub, may be compiled
// when the stub first answers with it rather than now: an http imposter's plain `is` (no
// behaviors), whose compiling cannot fail. Behind the proxy stub that recorded it, a recorded
// stub seldom answers; compiling every answer as it was recorded took the time of a second
// answer, and kept its wire form as well as its tree.
func (im *Imposter) lazyRecord(resp *config.Object) bool {
	if !im.lazyProtocol() {
		return false
	}
	if len(resp.Members) != 1 || resp.Members[0].Key != "is" {
		return false
	}
	is := config.AsObject(resp.Members[0].Value)
	if is == nil {
		return false
	}
	_, template := is.Get("template") // a decorate may have set one, which may not compile
	return !template
}

// lazyProtocol says the imposter's recorded responses may be compiled when first read (see
// lazyRecord): http(s), not a protocol's program.
func (im *Imposter) lazyProtocol() bool {
	return (im.def.Protocol == "http" || im.def.Protocol == "https") && !im.opts.Custom[im.def.Protocol]
}

// pendingResponse is a response proxyAlways recorded, compiled when its stub first answers
// with it (see lazyRecord). It keeps the response as its compact JSON text (AppendJSON), one
// block the garbage collector does not look into, rather than its tree (about four objects
// of pointers, for every answer recorded, that every collection marked for as long as the
// imposter lived: a third of a proxyAlways request's instructions). The definition's list
// holds nil in its place (see growing.responses), and decodes the text when it is read. It is
// safe for concurrent use.
type pendingResponse struct {
	im   *Imposter
	text string // the JSON text; "" when kept is
	// kept is the origin's answer that the response's `is` was made of (see keptResponse),
	// with the _proxyResponseTime it took and the length of the body served.
	kept    proxy.Kept
	elapsed float64
	served  int
	once    sync.Once
	r       response
}

// keptResponse returns the response whose `is` is the answer Forward made of raw, with
// elapsed its _proxyResponseTime, before servedInPlace (a response lazyRecord accepts), kept
// as raw: the tree is made again when read (see tree). served is the length of the body served
// of it. It is taken from a block of pendingSlab of them (im.mu held): proxyAlways keeps one
// for every answer, and each had been an allocation of its own.
func (im *Imposter) keptResponse(raw proxy.Kept, elapsed float64, served int) *pendingResponse {
	if len(im.pendings) == 0 {
		im.pendings = make([]pendingResponse, pendingSlab)
	}
	p := &im.pendings[0]
	im.pendings = im.pendings[1:]
	p.im, p.kept, p.elapsed, p.served = im, raw, elapsed, served
	return p
}

// pendingSlab is how many pendingResponses keptResponse allocates at once.
const pendingSlab = 64

// jsonText returns the response's compact JSON text.
func (p *pendingResponse) jsonText() string {
	if !p.kept.Ok() {
		return p.text
	}
	return string(p.appendText(nil, true))
}

// appendText appends the response's compact JSON text to dst, with its is's
// _proxyResponseTime or (withTime false) without it, as `replayable` shows it.
func (p *pendingResponse) appendText(dst []byte, withTime bool) []byte {
	if !p.kept.Ok() {
		if withTime {
			return append(dst, p.text...)
		}
		return config.AppendJSON(dst, withoutProxyTime(p.tree()), 0)
	}
	is := p.kept.Answer()
	if withTime {
		is.Set("_proxyResponseTime", p.elapsed)
	}
	resp := config.ObjectWithRoom(1)
	resp.Members = append(resp.Members, config.Member{Key: "is", Value: is})
	servedHeaders(resp, func(*config.Object) int { return p.served })
	return config.AppendJSON(dst, resp, 0)
}

// recordTexts are the buffers newPendingResponse writes a response's text into.
var recordTexts = sync.Pool{New: func() any { return new([]byte) }}

// newPendingResponse returns resp, a response lazyRecord accepts, kept as its text.
func newPendingResponse(im *Imposter, resp *config.Object) *pendingResponse {
	buf := recordTexts.Get().(*[]byte)
	*buf = config.AppendJSON((*buf)[:0], resp, 0)
	p := &pendingResponse{im: im, text: string(*buf)}
	if cap(*buf) <= 64<<10 {
		recordTexts.Put(buf)
	}
	return p
}

// tree returns the response as configured, decoded from its text: the caller may change it.
// A kept answer's is its text's too, as when the text was kept: the text of a tree
// does not always give that tree back (a JSON body's 1e400 is written null).
func (p *pendingResponse) tree() *config.Object {
	v, err := config.ParseJSONText(p.jsonText())
	if err != nil {
		panic("BUG: a recorded response's text does not parse: " + err.Error())
	}
	return v.(*config.Object)
}

// compiled returns the response compiled.
func (p *pendingResponse) compiled() response {
	p.once.Do(func() {
		r, err := p.im.compileHTTPResponse(p.tree())
		if err != nil { // lazyRecord says it cannot fail
			panic("BUG: a recorded response does not compile: " + err.Error())
		}
		p.r, p.im = r, nil
	})
	return p.r
}

func (p *pendingResponse) base() *respBase { return p.compiled().base() }

var _ response = (*pendingResponse)(nil)

// servedInPlace changes the headers of resp, a proxyAlways response appended to a stub that
// had recorded before, as Mountebank's postProcess changes the response it serves: Mountebank
// appends that very object to the stub (a new stub gets a copy), so what it then shows has
// `Connection: close` added when no Connection header was there, and a Content-Length header
// set to the number of bytes of the body as sent: served's body when served is not nil (the
// response was compiled to be sent already), else the response compiled again.
func servedInPlace(resp *config.Object, def *defaults, served *wire) {
	servedHeaders(resp, func(is *config.Object) int {
		if served == nil {
			served = compileIs(is, def, nil)
		}
		return len(served.body)
	})
}

// servedHeaders is servedInPlace, with bodyLen giving the length of the body of is (resp's
// `is`, its headers changed) as sent.
func servedHeaders(resp *config.Object, bodyLen func(is *config.Object) int) {
	is := config.AsObject(get(resp, "is"))
	ho, _ := get(is, "headers").(*config.Object)
	if ho == nil {
		return
	}
	connection, length := -1, -1
	for i, m := range ho.Members {
		// The lengths first, as compileHeaders compares them: no letter of either name has a
		// fold of another length (only k and s do), so a name of another length is not it.
		switch {
		case connection < 0 && len(m.Key) == len("connection") && strings.EqualFold(m.Key, "connection"):
			connection = i
		case length < 0 && len(m.Key) == len("content-length") && strings.EqualFold(m.Key, "content-length"):
			length = i
		}
	}
	if connection < 0 {
		if cap(ho.Members) == len(ho.Members) {
			// The list is kept with every recorded answer: made to its size, not grown to
			// twice it (cloneKept leaves room for this one).
			members := make([]config.Member, len(ho.Members), len(ho.Members)+1)
			copy(members, ho.Members)
			ho.Members = members
		}
		ho.Members = append(ho.Members, config.Member{Key: "Connection", Value: "close"})
	}
	if length >= 0 {
		switch b := get(is, "body").(type) {
		case float64, bool:
			if jsvalue.Truthy(b) {
				return // Buffer.byteLength throws on a number or true: the header is left as it was
			}
		}
		ho.Members[length].Value = float64(bodyLen(is))
	}
}

// stableTexts are the buffers recordProxied writes the stable texts of predicates into.
var stableTexts = sync.Pool{New: func() any { return new([]byte) }}

// appendStableJSON appends the compact JSON text of v as safe-stable-stringify renders it
// (object keys sorted, equal keys in their order), which Mountebank uses to compare
// predicates. It writes the sorted text directly: nothing is copied or allocated for an
// object of up to 16 members.
func appendStableJSON(dst []byte, v config.Value) []byte {
	switch t := v.(type) {
	case *config.Object:
		if t == nil || len(t.Members) == 0 {
			return config.AppendJSON(dst, v, 0)
		}
		var small [16]int
		order := small[:0]
		if len(t.Members) > len(small) {
			order = make([]int, 0, len(t.Members))
		}
		for i := range t.Members { // an insertion sort: stable, and objects here are small
			j := len(order)
			order = append(order, i)
			for ; j > 0 && t.Members[order[j-1]].Key > t.Members[i].Key; j-- {
				order[j] = order[j-1]
			}
			order[j] = i
		}
		dst = append(dst, '{')
		for n, i := range order {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(config.AppendString(dst, t.Members[i].Key), ':')
			dst = appendStableJSON(dst, t.Members[i].Value)
		}
		return append(dst, '}')
	case []any:
		if len(t) == 0 {
			return config.AppendJSON(dst, v, 0)
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendStableJSON(dst, e)
		}
		return append(dst, ']')
	}
	return config.AppendJSON(dst, v, 0)
}
