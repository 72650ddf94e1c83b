package admin

import (
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

// appendPrinted appends im's JSON as the admin API sends it: config.AppendJSON(printImposter(im,
// opts), 2), written by appendImposter.
func appendPrinted(dst []byte, im *imposter.Imposter, opts PrintOptions) []byte {
	stubs, reqs := printed(im, opts)
	return appendImposter(dst, im, stubs, reqs, opts, nil)
}

// printed is what appendImposter prints of im with opts: its stubs and recorded requests
// (nil when opts show none).
func printed(im *imposter.Imposter, opts PrintOptions) (imposter.Stubs, config.Value) {
	var reqs config.Value
	if !opts.List && !opts.Replayable {
		reqs = requestList(im, opts.Explain)
	}
	return im.Stubs(!opts.Replayable), reqs
}

// renderAt appends v at level as config.AppendJSONAt(dst, v, 2, level) does, handing the text
// to c as it grows when c is not nil (see config.Chunker).
func renderAt(dst []byte, v config.Value, level int, c *config.Chunker) []byte {
	if c == nil {
		return config.AppendJSONAt(dst, v, 2, level)
	}
	return config.RenderJSONAt(dst, v, 2, level, c)
}

// appendImposter appends im's JSON as the admin API sends it, config.AppendJSON(printStubs(im,
// stubs, opts), 2) byte for byte, written straight from the imposter: the members printStubs
// sets are written as it orders them, with the line breaks and spaces of an indentation of 2,
// and each stub kept as text is indented from that text (unpacked once) rather than through
// an ordered tree that is printed afterwards. reqs is requestList(im, opts.Explain), or nil
// with opts.List or opts.Replayable (which show no requests). A custom protocol's imposter,
// whose program's metadata may name any member, is printed through printStubs. With c, the
// text goes to c as it grows (after each stub, and at line breaks within a large one: see
// config.Chunker), so a large imposter is never held whole as text; it stops at c's first
// error.
func appendImposter(dst []byte, im *imposter.Imposter, stubs imposter.Stubs, reqs config.Value, opts PrintOptions, c *config.Chunker) []byte {
	if im.Custom() || im.Metadata() != nil {
		return renderAt(dst, printStubs(im, stubs, opts), 0, c)
	}
	def := im.Definition()
	dst = append(dst, "{\n  \"protocol\": "...)
	dst = config.AppendString(dst, def.Protocol)
	dst = append(dst, ",\n  \"port\": "...)
	dst = strconv.AppendInt(dst, int64(im.Port()), 10)
	if n, ok := def.Header.Get("name"); ok && jsvalue.Truthy(n) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"name\": "...), n, 2, 1)
	}
	if dr, ok := def.Header.Get("defaultResponse"); ok && jsvalue.Truthy(dr) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"defaultResponse\": "...), dr, 2, 1)
	}
	if !opts.Replayable {
		dst = jsvalue.AppendNumber(append(dst, ",\n  \"numberOfRequests\": "...), float64(stubs.Requests()))
	}
	if !opts.List {
		dst = strconv.AppendBool(append(dst, ",\n  \"recordRequests\": "...), def.RecordRequests)
		if def.Protocol == "tcp" {
			dst = config.AppendString(append(dst, ",\n  \"mode\": "...), def.Mode)
		}
		if def.Protocol == "https" {
			md := &config.Object{Members: make([]config.Member, 0, 6)}
			httpsMetadata(md, def.Header)
			for _, m := range md.Members {
				dst = append(dst, ",\n  "...)
				dst = append(config.AppendString(dst, m.Key), ": "...)
				dst = config.AppendJSONAt(dst, m.Value, 2, 1)
			}
		}
	}
	if v, ok := def.Header.Get("endOfRequestResolver"); ok && jsvalue.Truthy(v) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"endOfRequestResolver\": "...), v, 2, 1)
	}
	self := opts.BaseURL + "/imposters/" + strconv.Itoa(im.Port())
	if opts.List {
		return append(appendLinks(append(dst, ",\n  \"_links\": "...), self, true), "\n}"...)
	}
	if !opts.Replayable {
		dst = renderAt(append(dst, ",\n  \"requests\": "...), reqs, 1, c)
	}
	dst = append(dst, ",\n  \"stubs\": ["...)
	n := 0
	buf := stubTexts.Get().(*[]byte)
	for i := range stubs.Len() {
		if c != nil {
			if dst = c.Flush(dst); c.Err != nil {
				break
			}
		}
		// A recorded stub is written for replayable as the imposter writes it, not decoded
		// and edited (see grownReplayable).
		replay, shown := false, true
		if opts.Replayable {
			*buf, shown, replay = stubs.AppendReplayableJSON((*buf)[:0], i, opts.RemoveProxies)
		}
		if !replay && c == nil {
			if h := keptStubHead(stubs, i, opts); h != nil {
				if n > 0 {
					dst = append(dst, ',')
				}
				dst = append(append(dst, "\n    "...), h.head...)
				dst = appendStubTail(dst, h.sep, stubs, i, self, opts)
				n++
				continue
			}
		}
		if !replay {
			*buf = stubs.AppendJSON((*buf)[:0], i)
		} else if !shown {
			continue
		}
		if c != nil && c.W == nil && len(dst)+len(*buf) > c.Limit {
			// Past the limit once printed (as good as sure: indented, a stub only grows,
			// unless replayable drops much of it): stopped before the stub is decoded and
			// edited, as a recording of 100,000 answers is, only to be done again streamed.
			c.Err = config.ErrOver
			break
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		mark := len(dst)
		dst = append(dst, "\n    "...)
		if replay || plainStub(*buf, opts) {
			// The text is read before buf is written again: no copy of it.
			text := unsafe.String(unsafe.SliceData(*buf), len(*buf))
			if !opts.Replayable && c == nil {
				start := len(dst)
				var sep string
				dst, sep = appendStubHead(dst, text, nil)
				keepStubHead(stubs, i, opts, dst[start:], sep)
				dst = appendStubTail(dst, sep, stubs, i, self, opts)
			} else {
				dst = appendPlainStub(dst, text, stubs, i, self, opts, c)
			}
		} else if so := editedStub(stubs, i, self, opts); so != nil {
			dst = renderAt(dst, so, 2, c)
		} else { // only proxy responses, and opts.RemoveProxies
			if n > 0 {
				mark--
			}
			dst = dst[:mark]
			continue
		}
		n++
	}
	if cap(*buf) <= 64<<10 {
		stubTexts.Put(buf)
	}
	if n == 0 {
		dst = append(dst, ']')
	} else {
		dst = append(dst, "\n  ]"...)
	}
	if !opts.Replayable {
		dst = appendLinks(append(dst, ",\n  \"_links\": "...), self, true)
	}
	return append(dst, "\n}"...)
}

// appendPlainStub appends stub i, whose compact text is text and which plainStub finds
// printed as it is, at level 2 of an imposter's JSON, with the members rawStub adds.
// With c, the text goes to c as it grows.
func appendPlainStub(dst []byte, text string, stubs imposter.Stubs, i int, self string, opts PrintOptions, c *config.Chunker) []byte {
	if opts.Replayable {
		return indentAt(dst, text, 2, c)
	}
	dst, sep := appendStubHead(dst, text, c)
	return appendStubTail(dst, sep, stubs, i, self, opts)
}

// appendStubHead appends the part of appendPlainStub's stub (not replayable) that is its text
// alone: the text indented, all but its closing brace. sep is what comes before the next
// member.
func appendStubHead(dst []byte, text string, c *config.Chunker) (out []byte, sep string) {
	if len(text) < 2 || text == "{}" {
		return append(dst, '{'), "\n      "
	}
	return indentAt(dst, text[:len(text)-1], 2, c), ",\n      "
}

// appendStubTail appends the rest of appendPlainStub's stub (not replayable) after its head:
// the members rawStub adds, and the closing brace.
func appendStubTail(dst []byte, sep string, stubs imposter.Stubs, i int, self string, opts PrintOptions) []byte {
	if m := stubs.Matches(i); m != nil {
		dst = config.AppendJSONAt(append(append(dst, sep...), "\"matches\": "...), m, 2, 3)
		sep = ",\n      "
	}
	if opts.Explain {
		dst = jsvalue.AppendNumber(append(append(dst, sep...), "\"hits\": "...), float64(stubs.Hits(i)))
		sep = ",\n      "
	}
	dst = append(append(dst, sep...), "\"_links\": {\n        \"self\": {\n          \"href\": "...)
	// self+"/stubs/"+i written as one string is self's, its closing quote moved past the
	// suffix (which needs no escape), without making the string.
	dst = config.AppendString(dst, self)
	dst = strconv.AppendInt(append(dst[:len(dst)-1], "/stubs/"...), int64(i), 10)
	return append(dst, "\"\n        }\n      }\n    }"...)
}

// appendLinks appends an imposter's _links (see links) as a member's value at level 1.
func appendLinks(dst []byte, self string, withStubs bool) []byte {
	dst = config.AppendString(append(dst, "{\n    \"self\": {\n      \"href\": "...), self)
	dst = append(dst, "\n    }"...)
	if withStubs {
		dst = config.AppendString(append(dst, ",\n    \"stubs\": {\n      \"href\": "...), self)
		dst = append(dst[:len(dst)-1], "/stubs\"\n    }"...)
	}
	return append(dst, "\n  }"...)
}

// indentAt appends text, compact JSON, indented by 2 at level (config.AppendIndentedAt), handing
// the text to c as it grows when c is not nil.
func indentAt(dst []byte, text string, level int, c *config.Chunker) []byte {
	if c == nil {
		return config.AppendIndentedAt(dst, text, 2, level)
	}
	return config.AppendIndentedTo(dst, text, 2, level, c)
}

// stubHead is a stub's head as appendStubHead wrote it (not replayable), for the stub's packed
// text with options that found the stub plain (see plainStub, which reads only the text and
// these options when not replayable). A client suite creates the same imposter around each
// of its tests, and POST /imposters answers with its stubs: each stub was unpacked, searched
// and indented again every time (admin-pairs, issue #26). The head is a function of the text
// alone, so a stub whose packed text is the one kept is written from the kept head.
type stubHead struct {
	raw           string // the stub's packed text (imposter.Stubs.Packed)
	explain       bool
	removeProxies bool
	head          string
	sep           string
}

// stubHeads keeps the last head written for each of the first few stubs of an imposter, for
// texts of up to maxStubHeadKept bytes: a few KB at most.
var stubHeads [8]atomic.Pointer[stubHead]

const maxStubHeadKept = 4 << 10

// keptStubHead returns stub i's kept head for opts (not replayable), or nil.
func keptStubHead(stubs imposter.Stubs, i int, opts PrintOptions) *stubHead {
	if i >= len(stubHeads) || opts.Replayable {
		return nil
	}
	h := stubHeads[i].Load()
	if h == nil || h.explain != opts.Explain || h.removeProxies != opts.RemoveProxies {
		return nil
	}
	if raw, ok := stubs.Packed(i); !ok || raw != h.raw {
		return nil
	}
	return h
}

// keepStubHead keeps head, written for stub i with opts (not replayable), when the stub is
// kept packed (its text is then a function of its packed text).
func keepStubHead(stubs imposter.Stubs, i int, opts PrintOptions, head []byte, sep string) {
	if i >= len(stubHeads) || opts.Replayable {
		return
	}
	raw, ok := stubs.Packed(i)
	if !ok || len(raw) > maxStubHeadKept || len(head) > 4*maxStubHeadKept {
		return
	}
	stubHeads[i].Store(&stubHead{raw: raw, explain: opts.Explain, removeProxies: opts.RemoveProxies, head: string(head), sep: sep})
}
