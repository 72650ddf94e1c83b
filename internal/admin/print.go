package admin

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

// Printing: an imposter in Mountebank's JSON shapes (its imposter printer), from what the
// imposter core exposes (its definition, Stubs, Recorded); the core prints nothing.

// PrintOptions select what an imposter's JSON shows, as Mountebank's query parameters do.
type PrintOptions struct {
	// BaseURL prefixes _links hrefs, e.g. "http://localhost:2525".
	BaseURL       string
	List          bool // the short form of GET /imposters
	Replayable    bool
	RemoveProxies bool
	// Explain adds what mockd knows beyond Mountebank's shapes (GET /imposters/:port?explain=true):
	// each stub's hits and expect verdict, and each recorded request's stub or, when it matched
	// none, its explanation.
	Explain bool
	// Stored renders what a store keeps (--datadir, --store): a custom protocol's imposter
	// keeps the creation request's own fields, which its program is started with again (on a
	// restart, on another node), rather than what the program announced (shown by the API),
	// as Mountebank's data directory keeps the creation request.
	Stored bool
}

// streamAbove is the journal size (Imposter.JournalBytes) past which an answer that shows the
// recorded requests is streamed rather than rendered whole first.
const streamAbove = 1 << 20

// renderWhole bounds an answer the admin API renders whole before it sends it (with its
// length), and the rendering of an imposter kept for the next GET: a larger answer is
// streamed (chunked), rendered a chunk at a time while it is sent (see config.Chunker). An
// answer is first rendered up to this size; past it, that text is dropped and the answer
// streamed from the start. Answers that indent deeply nested stubs, each taken under
// --admin-max-indent, grow with their number (16 stubs of 4 KB nested 2,000 deep: 129 MB);
// so does a large recording: streamed, their size does not weigh on memory.
const renderWhole = 4 << 20

// streamImposter answers with im's JSON with opts as formatted renders it, streamed (see
// renderWhole): what it shows is read now, its text rendered while it is sent.
func streamImposter(ctx *fasthttp.RequestCtx, im *imposter.Imposter, opts PrintOptions) {
	stubs, reqs := printed(im, opts)
	streamAnswer(ctx, 200, func(dst []byte, c *config.Chunker) []byte {
		return appendImposter(dst, im, stubs, reqs, opts, c)
	})
}

// printImposter renders im as Mountebank's imposter printer does, fields in its order.
func printImposter(im *imposter.Imposter, opts PrintOptions) *config.Object {
	return printStubs(im, im.Stubs(!opts.Replayable), opts) // replayable shows no counts: nothing to ask a store
}

// printedKeys are the creation request's keys printStubs renders itself (or never shows).
var printedKeys = map[string]bool{"protocol": true, "port": true, "name": true, "defaultResponse": true,
	"numberOfRequests": true, "recordRequests": true, "endOfRequestResolver": true, "requests": true,
	"stubs": true, "_links": true}

// printStubs is printImposter with the stubs of stubs.
func printStubs(im *imposter.Imposter, stubs imposter.Stubs, opts PrintOptions) *config.Object {
	def := im.Definition()
	o := &config.Object{Members: make([]config.Member, 0, printedMembers(def, opts))}
	o.Set("protocol", def.Protocol)
	o.Set("port", float64(im.Port()))
	if n, ok := def.Header.Get("name"); ok && jsvalue.Truthy(n) {
		o.Set("name", n) // as given: Mountebank prints a number as a number
	}
	if dr, ok := def.Header.Get("defaultResponse"); ok && jsvalue.Truthy(dr) {
		o.Set("defaultResponse", dr)
	}
	if !opts.Replayable {
		o.Set("numberOfRequests", float64(stubs.Requests()))
	}
	if !opts.List {
		o.Set("recordRequests", def.RecordRequests)
		if def.Protocol == "tcp" && !im.Custom() {
			o.Set("mode", def.Mode) // the tcp server's metadata
		}
		if def.Protocol == "https" && !im.Custom() {
			httpsMetadata(o, def.Header)
		}
		if opts.Stored && im.Custom() {
			for _, m := range def.Header.Members {
				if !printedKeys[m.Key] {
					o.Set(m.Key, m.Value)
				}
			}
		} else if md := im.Metadata(); md != nil { // what a custom protocol's program announced
			for _, m := range md.Members {
				o.Set(m.Key, m.Value)
			}
		}
	}
	if v, ok := def.Header.Get("endOfRequestResolver"); ok && jsvalue.Truthy(v) {
		o.Set("endOfRequestResolver", v)
	}
	self := opts.BaseURL + "/imposters/" + strconv.Itoa(im.Port())
	if opts.List {
		o.Set("_links", links(self, true))
		return o
	}
	if !opts.Replayable {
		o.Set("requests", requestList(im, opts.Explain))
	}
	list := make([]any, 0, stubs.Len())
	for i := range stubs.Len() {
		if opts.Replayable {
			// A recorded stub as the imposter writes it for replayable, not decoded and
			// edited: 100,000 recorded answers made a tree of each, copied.
			if text, shown, ok := stubs.AppendReplayableJSON(nil, i, opts.RemoveProxies); ok {
				if shown {
					list = append(list, &config.RawObject{Text: unsafe.String(unsafe.SliceData(text), len(text))}) // text is its own
				}
				continue
			}
		}
		if so := rawStub(stubs, i, self, opts); so != nil {
			list = append(list, so)
			continue
		}
		if so := editedStub(stubs, i, self, opts); so != nil {
			list = append(list, so)
		}
	}
	o.Set("stubs", list)
	if !opts.Replayable {
		o.Set("_links", links(self, true))
	}
	return o
}

// rawStub is stub i as printStubs shows it, from the stub's text (as a config.RawObject, with
// the members printStubs adds after the stub's own), when the stub's text shows that it
// has nothing printStubs would change (no proxy response nor recorded one to drop, no key
// of its own it would set): the stubs of a large imposter are printed without being decoded.
// It returns nil for the others.
func rawStub(stubs imposter.Stubs, i int, self string, opts PrintOptions) *config.RawObject {
	buf := stubTexts.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= 64<<10 {
			stubTexts.Put(buf)
		}
	}()
	*buf = stubs.AppendJSON((*buf)[:0], i)
	if !plainStub(*buf, opts) {
		return nil
	}
	text := *buf
	so := &config.RawObject{}
	if packed, ok := stubs.Packed(i); ok {
		so.Text, so.Packed = packed, true // unpacked again as it is rendered: nothing kept a stub
	} else {
		so.Text = string(text)
	}
	if !opts.Replayable {
		so.More = make([]config.Member, 0, 3) // matches, hits, _links
		if m := stubs.Matches(i); m != nil {
			so.More = append(so.More, config.Member{Key: "matches", Value: m})
		}
		if opts.Explain {
			so.More = append(so.More, config.Member{Key: "hits", Value: float64(stubs.Hits(i))})
		}
		so.More = append(so.More, config.Member{Key: "_links", Value: selfLink(self + "/stubs/" + strconv.Itoa(i))})
	}
	return so
}

// plainStub reports whether the stub whose text is text has nothing printStubs would change
// with opts (see rawStub).
func plainStub(text []byte, opts PrintOptions) bool {
	switch {
	case opts.Replayable && bytes.Contains(text, []byte(`"_proxyResponseTime"`)),
		opts.RemoveProxies && bytes.Contains(text, []byte(`"proxy"`)),
		!opts.Replayable && (bytes.Contains(text, []byte(`"matches"`)) || bytes.Contains(text, []byte(`"_links"`))),
		opts.Explain && !opts.Replayable && bytes.Contains(text, []byte(`"hits"`)):
		return false
	}
	return true
}

// editedStub is stub i as printStubs shows it, decoded and edited, or nil when opts drop it
// (RemoveProxies, and only proxy responses).
func editedStub(stubs imposter.Stubs, i int, self string, opts PrintOptions) *config.Object {
	so := stubs.Def(i) // decoded for this rendering alone: edited below
	if !opts.Replayable {
		if m := stubs.Matches(i); m != nil {
			so.Set("matches", m)
		}
	} else {
		removeProxyTimes(so)
	}
	if opts.RemoveProxies {
		if !dropProxies(so) {
			return nil
		}
	}
	if opts.Explain && !opts.Replayable {
		so.Set("hits", float64(stubs.Hits(i)))
	}
	if !opts.Replayable {
		so.Set("_links", selfLink(self+"/stubs/"+strconv.Itoa(i)))
	}
	return so
}

// stubTexts are the buffers rawStub reads stubs' text in.
var stubTexts = sync.Pool{New: func() any { return new([]byte) }}

// renderedJSON is an imposter's last formatted rendering and what it was rendered from.
type renderedJSON struct {
	requests int64
	changes  uint64
	opts     PrintOptions
	body     []byte // never written again once stored
}

// renderings keeps each imposter's last formatted rendering: clients poll GET /imposters/:port.
type renderings struct {
	mu   sync.Mutex
	last map[*imposter.Imposter]*renderedJSON
}

// formatted returns im's JSON as the admin API sends it (indented by 2), rendering it again
// only when its Revision changed since the last call with the same options; nil when it is
// larger than renderWhole (neither rendered whole nor kept: see streamImposter). The revision is
// read before rendering and every change bumps it after it is made, so a kept body is never
// older than its key. The body must not be modified.
func (a *API) formatted(im *imposter.Imposter, opts PrintOptions) []byte {
	n, c := im.Revision()
	a.rendered.mu.Lock()
	r := a.rendered.last[im]
	a.rendered.mu.Unlock()
	if r != nil && r.requests == n && r.changes == c && r.opts == opts {
		return r.body
	}
	stubs, reqs := printed(im, opts)
	ch := &config.Chunker{Limit: renderWhole}
	body := appendImposter(nil, im, stubs, reqs, opts, ch)
	a.rendered.mu.Lock()
	defer a.rendered.mu.Unlock()
	if a.rendered.last == nil {
		a.rendered.last = map[*imposter.Imposter]*renderedJSON{}
	}
	if ch.Err != nil {
		delete(a.rendered.last, im) // a large answer: streamed, never kept
		return nil
	}
	if _, known := a.rendered.last[im]; !known {
		a.rendered.forgetGone(a.reg.Listing().Imposters)
	}
	a.rendered.last[im] = &renderedJSON{requests: n, changes: c, opts: opts, body: body}
	return body
}

// forgetGone drops the renderings of imposters that are no longer running (mu held).
func (r *renderings) forgetGone(running []*imposter.Imposter) {
	if len(r.last) == 0 {
		return
	}
	alive := make(map[*imposter.Imposter]bool, len(running))
	for _, im := range running {
		alive[im] = true
	}
	for im := range r.last {
		if !alive[im] {
			delete(r.last, im)
		}
	}
}

// requestList is the recorded requests as Mountebank shows them, each with its timestamp; with
// explain, also the stub that answered each, or null and why none did. It is a config.Stream
// over the requests recorded when it was made: each is rendered as it is written (see
// config.WriteJSON), so a large journal is not held twice.
// noRequests is the requests of an imposter that records none, made once (an empty list in an
// interface was an allocation for each answer).
var noRequests config.Value = []any{}

func requestList(im *imposter.Imposter, explain bool) config.Value {
	if !im.Records() {
		return noRequests
	}
	list, size := im.Recorded()
	return &config.Stream{Bytes: size, Each: func(yield func(config.Value) bool) {
		for _, r := range list {
			// The recorded request is never modified: a copy of its member list will do.
			o := &config.Object{Members: make([]config.Member, len(r.Request.Members), len(r.Request.Members)+3)}
			copy(o.Members, r.Request.Members)
			o.Set("timestamp", r.At.UTC().Format("2006-01-02T15:04:05.000Z"))
			if explain {
				if why := r.Explain(); why != nil {
					o.Set("stub", nil)
					o.Set("explanation", why.Summary())
				} else if r.Stub >= 0 {
					o.Set("stub", float64(r.Stub))
				}
			}
			if !yield(o) {
				return
			}
		}
	}}
}

// printedMembers is how many members printStubs may set on the object of an imposter of def
// (at most: its Members are sized once rather than grown).
func printedMembers(def *config.Imposter, opts PrintOptions) int {
	n := 8 // protocol, port, numberOfRequests, recordRequests, requests, stubs, _links and one of name, defaultResponse, endOfRequestResolver
	if def.Name != "" {
		n++
	}
	switch def.Protocol {
	case "tcp":
		n++ // mode
	case "https":
		n += 6 // httpsMetadata
	}
	if opts.List {
		n = 7 // protocol, port, name, defaultResponse, numberOfRequests, endOfRequestResolver, _links
	}
	return n
}

// linkObjects are the objects of links, made at once.
type linkObjects struct {
	l, self, stubs     config.Object
	lm                 [2]config.Member
	selfHref, stubHref [1]config.Member
}

func links(self string, withStubs bool) *config.Object {
	lo := &linkObjects{}
	lo.selfHref[0] = config.Member{Key: "href", Value: self}
	lo.self.Members = lo.selfHref[:]
	lo.lm[0] = config.Member{Key: "self", Value: &lo.self}
	lo.l.Members = lo.lm[:1]
	if withStubs {
		lo.stubHref[0] = config.Member{Key: "href", Value: self + "/stubs"}
		lo.stubs.Members = lo.stubHref[:]
		lo.lm[1] = config.Member{Key: "stubs", Value: &lo.stubs}
		lo.l.Members = lo.lm[:2]
	}
	return &lo.l
}

// selfLinkObjects are the objects of selfLink, made at once.
type selfLinkObjects struct {
	l, self config.Object
	lm, hm  [1]config.Member
}

// selfLink is the _links object of a stub whose href is href.
func selfLink(href string) *config.Object {
	lo := &selfLinkObjects{}
	lo.hm[0] = config.Member{Key: "href", Value: href}
	lo.self.Members = lo.hm[:]
	lo.lm[0] = config.Member{Key: "self", Value: &lo.self}
	lo.l.Members = lo.lm[:]
	return &lo.l
}

func removeProxyTimes(stub *config.Object) {
	list, _ := get(stub, "responses").([]any)
	for _, r := range list {
		if is := config.AsObject(get(config.AsObject(r), "is")); is != nil {
			is.Delete("_proxyResponseTime")
		}
	}
}

// dropProxies removes proxy responses from stub and reports whether any response is left.
func dropProxies(stub *config.Object) bool {
	list, _ := get(stub, "responses").([]any)
	kept := make([]any, 0, len(list))
	for _, r := range list {
		if !config.AsObject(r).Has("proxy") {
			kept = append(kept, r)
		}
	}
	stub.Set("responses", kept)
	return len(kept) > 0
}

// httpsMetadata adds what Mountebank prints for an https imposter whose definition header is h
// after recordRequests: key, cert, mutualAuth, rejectUnauthorized, ca and, when set, ciphers
// (upper-cased).
func httpsMetadata(o, h *config.Object) {
	for _, field := range []string{"key", "cert"} { // as given (a list stays one), or the default
		if v := get(h, field); jsvalue.Truthy(v) {
			o.Set(field, v)
		} else {
			o.Set(field, imposter.TLSText(h, field))
		}
	}
	o.Set("mutualAuth", jsvalue.Truthy(get(h, "mutualAuth")))
	if v := get(h, "rejectUnauthorized"); jsvalue.Truthy(v) {
		o.Set("rejectUnauthorized", v)
	} else {
		o.Set("rejectUnauthorized", false)
	}
	if v := get(h, "ca"); jsvalue.Truthy(v) {
		o.Set("ca", v)
	} else {
		o.Set("ca", nil)
	}
	if v := get(h, "ciphers"); jsvalue.Truthy(v) {
		o.Set("ciphers", strings.ToUpper(jsvalue.String(v)))
	}
}
