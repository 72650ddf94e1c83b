package config

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mockd/mockd/internal/jsvalue"
)

// SyntaxError is a JSON syntax error with its 1-based line and column.
type SyntaxError struct {
	Msg          string
	Line, Column int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ParseJSON decodes data as JavaScript's JSON.parse does (a later duplicate key replaces the value
// but keeps the first position), keeping object key order.
func ParseJSON(data []byte) (Value, error) {
	sc := scratches.Get().(*scratch)
	p := jsonParser{data: data, members: sc.members[:0], items: sc.items[:0]}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err // the stacks may hold values: not reused
	}
	if cap(p.members) <= maxScratch && cap(p.items) <= maxScratch {
		sc.members, sc.items = p.members[:0], p.items[:0] // each object and array cleared its part
		scratches.Put(sc)
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("unexpected %q after the JSON value", p.data[p.pos])
	}
	return v, nil
}

const maxJSONDepth = 10000

// scratch is the stacks a parser collects members and items on, reused from parse to parse
// (a request's JSON body is parsed by the reference matcher: no allocation for them then).
type scratch struct {
	members []Member
	items   []any
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch bounds the stacks kept for the next parse.
const maxScratch = 4096

type jsonParser struct {
	data []byte
	pos  int
	// strs and boxed share the short strings a document repeats (keys, methods, content
	// types): an imposter of 100,000 stubs otherwise keeps 100,000 copies of each. A document
	// of a few strings (an imposter of one stub, a request's body) shares none: filling the
	// maps cost more than the copies they save (admin-pairs: 2.2 of the 14 KB a pair allocated).
	strs    map[string]string
	boxed   map[string]Value
	strings int // short strings read so far (see shared)
	// nums shares the boxes of the numbers a document repeats (status codes, ports), once it
	// has more than a few (numbers) numbers.
	nums    map[float64]Value
	numbers int
	// members and items are the objects' and arrays' elements while they are read: each gets
	// a slice of its exact size once complete, not what appending left (nor its garbage).
	members []Member
	items   []any
	// objs, mems and elems are what is left of the arrays the document's first objects,
	// members and array items are taken from (see slab): a one-stub imposter's body is some
	// twenty values, each object and array one allocation for itself and one for its
	// elements otherwise. slabbed counts the elements taken so far.
	objs    []Object
	mems    []Member
	elems   []any
	slabbed int
}

// A document's first maxSlabbed members and items are taken from arrays of slabSize, its
// first objects from arrays of objSlabSize (while members are): what a value kept from the
// document (a stub keeps its predicates' objects) holds alive beyond itself is bounded by
// those arrays, and a large document's other values are allocated one by one as before (the
// stubs of a large imposter each keep their own; see Owned).
const (
	slabSize    = 32
	objSlabSize = 8
	maxSlabbed  = 128
)

// slabSize is the size of the arrays elements are taken from in this document, which has
// about one element every per bytes: an array of that many, up to slabSize, from 4 on.
func (p *jsonParser) slabSize(per int) int {
	return min(max(len(p.data)/per, 4), slabSize)
}

// newObject returns a new empty object, from the document's array of objects while its
// members are taken from arrays too.
func (p *jsonParser) newObject() *Object {
	if p.slabbed >= maxSlabbed {
		return &Object{}
	}
	if len(p.objs) == 0 {
		p.objs = make([]Object, min(max(len(p.data)/40, 1), objSlabSize))
	}
	o := &p.objs[0]
	p.objs = p.objs[1:]
	return o
}

// slab returns a slice of n elements, length and capacity, from *free (a fresh array of
// slabSize when *free has too few left) while the document has taken fewer than maxSlabbed
// elements, else allocated for itself. Appending to it reallocates: it never writes over the
// elements of another.
func slab[T any](free *[]T, taken *int, n, size int) []T {
	if n > size/2 || *taken >= maxSlabbed {
		return make([]T, n)
	}
	if len(*free) < n {
		*free = make([]T, size)
	}
	*taken += n
	s := (*free)[:n:n]
	*free = (*free)[n:]
	return s
}

// Strings of up to internLen bytes are shared, the first maxInterned distinct ones of a document,
// from its (shareAfter+1)th short string on.
const (
	internLen   = 32
	maxInterned = 1024
	shareAfter  = 64
)

// shared returns b as a string, the same string for the same short bytes (once the document
// has more than shareAfter short strings).
func (p *jsonParser) shared(b []byte) string {
	if len(b) > internLen {
		return string(b)
	}
	if p.strings++; p.strings <= shareAfter {
		if len(b) <= maxWellKnown {
			if k := wellKnown.find(b); k != nil {
				return k.s
			}
		}
		return string(b)
	}
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.strs == nil {
		p.strs = make(map[string]string)
	}
	if len(p.strs) < maxInterned {
		p.strs[s] = s
	}
	return s
}

// box returns s as a Value, boxed once for each short string.
func (p *jsonParser) box(s string) Value {
	if len(s) > internLen {
		return s
	}
	if p.strings <= shareAfter {
		if len(s) <= maxWellKnown {
			if k := wellKnown.find(unsafe.Slice(unsafe.StringData(s), len(s))); k != nil { // read only
				return k.v
			}
		}
		return s
	}
	return boxOnce(&p.boxed, s)
}

// wellKnown holds, boxed once for the process, the strings most imposters repeat: Mountebank's
// keys and the common values of a small imposter's definition (a client suite POSTs one per
// test, whose few strings the document-wide sharing above does not share: each key was a
// string of its own, each value a box too). A document's first shareAfter short strings are
// looked up in it; a larger one's are shared by the document's own maps from then on.
var wellKnown = newKnownTable(strings.Fields(`protocol port host name stubs predicates responses is
		statusCode headers body equals deepEquals contains startsWith endsWith matches exists
		not or and inject caseSensitive except jsonpath xpath selector ns method path query
		data requestFrom ip form keyCaseSensitive behaviors wait decorate copy lookup
		shellTransform repeat proxy to mode predicateGenerators addWaitBehavior
		addDecorateBehavior injectHeaders cert key mutualAuth ciphers recordRequests
		defaultResponse allowCORS _mode _links href self
		endOfRequestResolver scenarioName requiredScenarioState newScenarioState fault
		expect times
		http https tcp smtp text binary proxyOnce proxyAlways proxyTransparent
		GET POST PUT DELETE PATCH HEAD OPTIONS
		Content-Type content-type application/json text/plain text/html
		localhost 127.0.0.1 0.0.0.0 :: / ok OK`))

// knownTable is a set of strings probed by their length and three of their bytes (linear
// probing, a quarter full): a lookup is a few instructions and one comparison, where a map's
// was ~145 instructions, once for each key and short string value of a document.
type knownTable [knownSlots]knownString

// knownString is one string of a knownTable, with its box.
type knownString struct {
	s string
	v Value // s, boxed once
}

const knownSlots = 512 // a power of two, at least four times the strings

func newKnownTable(list []string) *knownTable {
	t := new(knownTable)
	if len(list) > knownSlots/4 {
		panic("config: too many well-known strings")
	}
	for _, s := range list {
		if s == "" || t.find([]byte(s)) != nil {
			continue
		}
		i := knownHash([]byte(s))
		for t[i].s != "" {
			i = (i + 1) & (knownSlots - 1)
		}
		t[i] = knownString{s: s, v: s}
	}
	return t
}

// knownHash is the slot where a search for b begins.
func knownHash(b []byte) uint32 {
	n := len(b)
	if n == 0 {
		return 0
	}
	h := uint32(n) | uint32(b[0])<<8 | uint32(b[n/2])<<16 | uint32(b[n-1])<<24
	return (h * 0x9E3779B1) >> (32 - 9) // 9 bits: knownSlots
}

// find returns b's entry, or nil when b is not one of the strings.
func (t *knownTable) find(b []byte) *knownString {
	for i := knownHash(b); ; i = (i + 1) & (knownSlots - 1) {
		e := &t[i]
		if e.s == "" {
			return nil
		}
		if len(e.s) == len(b) && e.s == string(b) {
			return e
		}
	}
}

// maxWellKnown is the length of the longest wellKnown string, about.
const maxWellKnown = 24

// boxOnce returns k as a Value, the box m holds for it if any, else a new one m keeps (while m
// holds fewer than maxInterned).
func boxOnce[K comparable](m *map[K]Value, k K) Value {
	if v, ok := (*m)[k]; ok {
		return v
	}
	var v Value = k
	if *m == nil {
		*m = make(map[K]Value)
	}
	if len(*m) < maxInterned {
		(*m)[k] = v
	}
	return v
}

func (p *jsonParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < p.pos && i < len(p.data); i++ {
		if p.data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Line: line, Column: col}
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (Value, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nesting deeper than %d", maxJSONDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.box(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *jsonParser) object(depth int) (Value, error) {
	o := p.newObject()
	if p.open('}') {
		return o, nil
	}
	mark := len(p.members)
	defer func() { p.members = p.members[:mark] }()
	var idx map[string]int // the keys' positions, once the object has many
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		idx = p.set(mark, idx, key, v)
		done, err := p.next('}', "object")
		if err != nil {
			return nil, err
		}
		if done {
			o.Members = slab(&p.mems, &p.slabbed, len(p.members)-mark, p.slabSize(20))
			copy(o.Members, p.members[mark:])
			clear(p.members[mark:])
			return o, nil
		}
	}
}

// set is Object.Set on the members of the object being read, from mark on: a later duplicate
// key replaces the value but keeps the first position, as JSON.parse does. Past a few members it
// finds keys with idx (made here; pass back what it returns), not by scanning.
func (p *jsonParser) set(mark int, idx map[string]int, key string, v Value) map[string]int {
	if idx == nil && len(p.members)-mark >= builderIndexFrom {
		idx = make(map[string]int, 2*(len(p.members)-mark))
		for i := len(p.members) - 1; i >= mark; i-- {
			idx[p.members[i].Key] = i
		}
	}
	if idx != nil {
		if i, ok := idx[key]; ok {
			p.members[i].Value = v
			return idx
		}
		idx[key] = len(p.members)
		p.members = append(p.members, Member{Key: key, Value: v})
		return idx
	}
	for i := mark; i < len(p.members); i++ {
		if p.members[i].Key == key {
			p.members[i].Value = v
			return nil
		}
	}
	p.members = append(p.members, Member{Key: key, Value: v})
	return nil
}

func (p *jsonParser) array(depth int) (Value, error) {
	if p.open(']') {
		return []any{}, nil
	}
	mark := len(p.items)
	defer func() { p.items = p.items[:mark] }()
	for {
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, v)
		done, err := p.next(']', "array")
		if err != nil {
			return nil, err
		}
		if done {
			a := slab(&p.elems, &p.slabbed, len(p.items)-mark, p.slabSize(60))
			copy(a, p.items[mark:])
			clear(p.items[mark:])
			return a, nil
		}
	}
}

// boxNumber returns f as a Value, boxed once for each number of a document, up to
// maxInterned of them (but -0, which a map cannot tell from 0).
func (p *jsonParser) boxNumber(f float64) Value {
	if p.numbers++; p.numbers <= 8 || (f == 0 && math.Signbit(f)) {
		return f
	}
	return boxOnce(&p.nums, f)
}

// open steps over the opening bracket of an object or array and reports whether close ends it
// at once (stepping over that too).
func (p *jsonParser) open(close byte) bool {
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == close {
		p.pos++
		return true
	}
	return false
}

// next reads what follows a member of an object or an item of an array (what): a comma, more
// to come, or close, the end.
func (p *jsonParser) next(close byte, what string) (done bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, p.errorf("unexpected end of JSON input")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case close:
		p.pos++
		return true, nil
	}
	return false, p.errorf("expected ',' or '%c' in %s", close, what)
}

func (p *jsonParser) number() (Value, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	if err != nil {
		// Out of range: JavaScript gives ±Infinity, which JSON cannot carry back; keep the sign.
		if errors.Is(err, strconv.ErrRange) {
			return f, nil
		}
		return nil, p.errorf("invalid number")
	}
	return p.boxNumber(f), nil
}

func (p *jsonParser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	var high byte // the bytes or'ed: past 0x7f, the string may not be valid UTF-8
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.shared(p.data[start:p.pos])
			p.pos++
			if high >= utf8.RuneSelf && !utf8.ValidString(s) {
				return jsvalue.DecodeUTF8(s), nil
			}
			return s, nil
		}
		high |= c
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character in string")
		}
		p.pos++
	}
	// Sized for the rest up to the closing quote as it decodes at most (an escape decodes to
	// one byte, a \u escape to at most three): one allocation, which the string then is.
	end, shrink := p.pos, 0
	for end < len(p.data) && p.data[end] != '"' {
		if p.data[end] == '\\' {
			if end+1 < len(p.data) && p.data[end+1] == 'u' {
				shrink += 3
			} else {
				shrink++
			}
			end += 2
			continue
		}
		end++
	}
	buf := make([]byte, p.pos-start, max(min(end, len(p.data))-start-shrink, p.pos-start))
	copy(buf, p.data[start:p.pos])
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return jsvalue.DecodeUTF8(unsafe.String(unsafe.SliceData(buf), len(buf))), nil // buf is not written again
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			break
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid unicode escape")
			}
			if utf16.IsSurrogate(r) {
				if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					r2, ok := p.hex4()
					if ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							buf = utf8.AppendRune(buf, d)
							continue
						}
					}
					p.pos = save
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errorf("invalid escape '\\%c'", e)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// AppendJSON appends v serialised as JavaScript's JSON.stringify(v, null, indent) does
// (indent 0 means compact).
func AppendJSON(dst []byte, v Value, indent int) []byte {
	return appendJSON(dst, v, indent, 0)
}

// Stream is a Value rendered as an array whose elements are produced while it is written: a long
// list (an imposter's journal) is then never held twice, as values and as text. Each calls
// yield with every element in order, and stops when yield returns false. Bytes estimates the
// rendered size (see StreamBytes). AppendJSON renders a Stream as the array it produces.
type Stream struct {
	Each  func(yield func(Value) bool)
	Bytes int
}

// StreamBytes sums the Bytes of the Streams in v (in its objects and arrays): how much of v's
// text is produced while it is written.
func StreamBytes(v Value) int {
	switch t := v.(type) {
	case *Stream:
		return t.Bytes
	case *Object:
		n := 0
		if t != nil {
			for _, m := range t.Members {
				n += StreamBytes(m.Value)
			}
		}
		return n
	case []any:
		n := 0
		for _, e := range t {
			n += StreamBytes(e)
		}
		return n
	}
	return 0
}

// writeChunk is how much rendered text WriteJSON collects before it writes.
const writeChunk = 32 << 10

// ErrOver is the error a Chunker without a writer stops a rendering with once the text passed
// its Limit.
var ErrOver = errors.New("config: the rendered text passed its limit")

// A Chunker takes the text a rendering (RenderJSON, AppendIndentedTo) produces as it grows:
// with a writer, it writes it out a chunk (32 KiB) at a time, so a large value is never held
// whole as text; without one, the text is kept whole, and the rendering stops (Err is
// ErrOver) once it passed Limit bytes. A rendering stops at the first error (Err), and
// what it returns is then to be thrown away.
type Chunker struct {
	W     io.Writer
	Limit int
	Err   error
}

// Flush takes dst, the text rendered so far: it returns what the rendering goes on appending
// to (dst itself, or dst[:0] once written out).
func (c *Chunker) Flush(dst []byte) []byte {
	switch {
	case c.Err != nil:
		return dst[:0]
	case c.W == nil:
		if len(dst) > c.Limit {
			c.Err = ErrOver
			return dst[:0]
		}
		return dst
	case len(dst) < writeChunk:
		return dst
	}
	_, c.Err = c.W.Write(dst)
	return dst[:0]
}

// Finish writes out what a rendering with a writer left in dst, and reports the rendering's
// error.
func (c *Chunker) Finish(dst []byte) error {
	if c.Err == nil && c.W != nil && len(dst) > 0 {
		_, c.Err = c.W.Write(dst)
	}
	return c.Err
}

// WriteJSON writes v to w as AppendJSON renders it, a chunk at a time: the elements of its
// Streams are produced and written one after the other, and no object, list or stub kept as
// text (RawObject) is rendered whole before it is written.
func WriteJSON(w io.Writer, v Value, indent int) error {
	c := &Chunker{W: w}
	return c.Finish(RenderJSON(make([]byte, 0, writeChunk+4096), v, indent, c))
}

// RenderJSON appends v to dst as AppendJSON does, handing the text to c as it grows (see
// Chunker); it stops at c's first error.
func RenderJSON(dst []byte, v Value, indent int, c *Chunker) []byte {
	return c.Flush(c.appendValue(dst, v, indent, 0))
}

// RenderJSONAt is RenderJSON of v where it stands at level (see AppendJSONAt).
func RenderJSONAt(dst []byte, v Value, indent, level int, c *Chunker) []byte {
	return c.Flush(c.appendValue(dst, v, indent, level))
}

func (c *Chunker) appendValue(dst []byte, v Value, indent, level int) []byte {
	if c.Err != nil {
		return dst[:0]
	}
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range t {
			dst = c.element(dst, i, e, indent, level)
		}
		return closeList(dst, indent, level, ']')
	case *Stream:
		return c.stream(dst, t, indent, level)
	case *Object:
		if t == nil || len(t.Members) == 0 {
			return appendJSON(dst, v, indent, level)
		}
		dst = append(dst, '{')
		for i, m := range t.Members {
			dst = appendKey(appendSep(dst, i, indent, level), m.Key, indent)
			dst = c.Flush(c.appendValue(dst, m.Value, indent, level+1))
		}
		return closeList(dst, indent, level, '}')
	case *RawObject:
		return c.Flush(appendRawObject(dst, t, indent, level, c))
	}
	return c.Flush(appendJSON(dst, v, indent, level))
}

func (c *Chunker) element(dst []byte, i int, e Value, indent, level int) []byte {
	return c.Flush(c.appendValue(appendSep(dst, i, indent, level), e, indent, level+1))
}

func (c *Chunker) stream(dst []byte, s *Stream, indent, level int) []byte {
	n := 0
	s.Each(func(e Value) bool {
		if n == 0 {
			dst = append(dst, '[')
		}
		dst = c.element(dst, n, e, indent, level)
		n++
		return c.Err == nil
	})
	if n == 0 {
		return append(dst, "[]"...)
	}
	return closeList(dst, indent, level, ']')
}

// appendSep appends what goes before element or member i of a list at level.
func appendSep(dst []byte, i, indent, level int) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	if indent > 0 {
		dst = appendNewline(dst, indent, level+1)
	}
	return dst
}

// appendKey appends an object member's key and colon.
func appendKey(dst []byte, key string, indent int) []byte {
	dst = AppendString(dst, key)
	dst = append(dst, ':')
	if indent > 0 {
		dst = append(dst, ' ')
	}
	return dst
}

func closeList(dst []byte, indent, level int, end byte) []byte {
	if indent > 0 {
		dst = appendNewline(dst, indent, level)
	}
	return append(dst, end)
}

// MarshalJSON returns v serialised as JSON.stringify(v, null, indent).
func MarshalJSON(v Value, indent int) []byte {
	return AppendJSON(nil, v, indent)
}

const spaces = "                                                                "

func appendNewline(dst []byte, indent, level int) []byte {
	dst = append(dst, '\n')
	for n := indent * level; n > 0; {
		k := min(n, len(spaces))
		dst = append(dst, spaces[:k]...)
		n -= k
	}
	return dst
}

func appendJSON(dst []byte, v Value, indent, level int) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return append(dst, "null"...)
		}
		return jsvalue.AppendNumber(dst, t)
	case int:
		return strconv.AppendInt(dst, int64(t), 10)
	case string:
		return AppendString(dst, t)
	case []any:
		if len(t) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range t {
			dst = appendJSON(appendSep(dst, i, indent, level), e, indent, level+1)
		}
		return closeList(dst, indent, level, ']')
	case *Object:
		if t == nil {
			return append(dst, "null"...)
		}
		if len(t.Members) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i, m := range t.Members {
			dst = appendKey(appendSep(dst, i, indent, level), m.Key, indent)
			dst = appendJSON(dst, m.Value, indent, level+1)
		}
		return closeList(dst, indent, level, '}')
	case map[string]any:
		return appendJSON(dst, FromPlain(t), indent, level)
	case *RawObject:
		return appendRawObject(dst, t, indent, level, nil)
	case *Stream:
		return appendStream(dst, t, indent, level)
	default:
		return append(dst, "null"...)
	}
}

// appendStream is appendJSON of a Stream; apart, so that what its function captures (dst)
// is moved to the heap for streams only, not for every value appendJSON renders.
func appendStream(dst []byte, s *Stream, indent, level int) []byte {
	n := 0
	s.Each(func(e Value) bool {
		if n == 0 {
			dst = append(dst, '[')
		}
		dst = appendJSON(appendSep(dst, n, indent, level), e, indent, level+1)
		n++
		return true
	})
	if n == 0 {
		return append(dst, "[]"...)
	}
	return closeList(dst, indent, level, ']')
}

const hexDigits = "0123456789abcdef"

// shortEscapes are the control characters JSON.stringify escapes with a letter (\n); it escapes
// the others as \u00XX.
var shortEscapes = [0x20]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// needsEscape reports whether one of the eight bytes of w is below 0x20, '"' or '\\' (each
// test is exact as a whole: a borrow only ever follows a byte it finds).
func needsEscape(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ '"'*ones  // a zero byte where w has '"'
	b := w ^ '\\'*ones // and where it has '\\'
	return ((w-0x20*ones)&^w|(q-ones)&^q|(b-ones)&^b)&highs != 0
}

// escaped says which bytes AppendString escapes.
var escaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// AppendString appends s as a JSON string literal, escaping as JSON.stringify does.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// Eight bytes at a time while none needs an escape (a recorded proxy answer's text, its
	// header values and body, is written for every answer proxyAlways records), then a byte
	// at a time.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if needsEscape(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))) {
			break
		}
	}
	start := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !escaped[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case shortEscapes[c] != 0:
			dst = append(dst, '\\', shortEscapes[c])
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONAt appends v as AppendJSON(…, indent) writes it where it stands at level (a
// member's value at level 1 of an object written at level 0): a printer that writes an
// object's own members renders the values it does not know with it.
func AppendJSONAt(dst []byte, v Value, indent, level int) []byte {
	return appendJSON(dst, v, indent, level)
}

// AppendIndentedAt appends text, compact JSON as AppendJSON(v, 0) writes it, as
// AppendJSONAt(v, indent, level) would write v.
func AppendIndentedAt(dst []byte, text string, indent, level int) []byte {
	return appendIndented(dst, text, indent, level, nil)
}

// AppendIndentedTo is AppendIndentedAt handing the text to c as it grows (see Chunker): a
// large text is indented a chunk at a time. It stops at c's first error.
func AppendIndentedTo(dst []byte, text string, indent, level int, c *Chunker) []byte {
	return appendIndented(dst, text, indent, level, c)
}
