package match

// This file is the speed layer's evaluation of compiled predicates (compile.go). A fast node is
// evaluated here by reading the request in place: request strings are compared without being
// copied, the keys a predicate names are read from a JSON body's text without parsing it
// (jsonscan.go), and what a body parses or selects to is computed once per request. Whenever a
// fast node meets a request value it does not specialise (an array, an object, a number an
// operator would throw on, a body that is not a JSON object), it answers unsure and the
// reference evaluates the predicate instead, as it evaluates every other node: deleting any
// fast path only sends more predicates to the reference.

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/antchfx/xpath"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonscan"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// verdict is a fast node's answer for one request.
type verdict uint8

const (
	no verdict = iota
	yes
	unsure // the reference decides
)

func verdictOf(ok bool) verdict {
	if ok {
		return yes
	}
	return no
}

// evalCtx evaluates predicates of one Set against one request.
type evalCtx struct {
	set *Set
	r   *request.Request
	cur *pred // the fast node being evaluated

	// scans counts the body scans scanFields made for this request: past maxBodyScans the
	// body is parsed once (memoized) instead.
	scans   int
	scanned scannedObj
	parsed  bool // the body was parsed: reading it from the parse beats scanning it again

	// ref is the request as the reference sees it, made for the first node it evaluates.
	ref *refView
}

// refView is what the reference needs to evaluate predicates against one request.
type refView struct {
	ev  evaluator
	obj *config.Object
}

var ctxPool = sync.Pool{New: func() any { return &evalCtx{} }}

func acquireCtx(s *Set, r *request.Request) *evalCtx {
	c := ctxPool.Get().(*evalCtx)
	c.set, c.r = s, r
	return c
}

func releaseCtx(c *evalCtx) {
	*c = evalCtx{}
	ctxPool.Put(c)
}

// stub evaluates the predicates of one stub: all must match.
func (c *evalCtx) stub(ps []*pred) (bool, error) {
	for _, p := range ps {
		ok, err := c.eval(p)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// eval evaluates one node: not, or and and combine their children as predicates.js does; a fast
// node answers unless it is unsure; the reference answers the rest.
func (c *evalCtx) eval(p *pred) (bool, error) {
	if c.set.referenceOnly || c.r.Object != nil {
		return c.reference(p)
	}
	switch p.op {
	case opNot:
		ok, err := c.eval(p.more.sub[0])
		return !ok && err == nil, err
	case opOr:
		for _, s := range p.subs() {
			ok, err := c.eval(s)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case opAnd:
		for _, s := range p.subs() {
			ok, err := c.eval(s)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}
	if p.fast {
		switch c.fast(p) {
		case yes:
			return true, nil
		case no:
			return false, nil
		}
	}
	return c.reference(p)
}

// reference evaluates p with the reference evaluator.
func (c *evalCtx) reference(p *pred) (bool, error) {
	if c.ref == nil {
		c.ref = &refView{
			ev:  evaluator{binary: c.set.binary, injector: c.set.injector, live: c.r},
			obj: requestObject(c.r),
		}
	}
	res := c.ref.ev.evaluate(p.source(), c.ref.obj)
	if res.Err != nil {
		return false, res.Err
	}
	return res.Matched, nil
}

// fast evaluates a fast node: every field of the expected object must be satisfied. Fields of
// operators that may raise an error are compared in the reference's order and the first
// unsure field makes the node unsure; for the others any failing field decides.
func (c *evalCtx) fast(p *pred) verdict {
	if p.op == opDeepEquals && c.r.BodyMissing {
		return unsure // forceStrings throws on the undefined body
	}
	c.cur = p
	sure := true
	for i, k := range p.exp.keys {
		var v verdict
		switch e := p.exp.vals[i].(type) {
		case *eleaf:
			v = c.leafField(k, e)
		case *earr:
			v = c.bodyCanonEquals(p.more.canon[i]) // deepEquals of the body (fastShape)
		case *eobj:
			switch {
			case k == fieldNames[fBody] && p.op == opDeepEquals:
				v = c.bodyCanonEquals(p.more.canon[i])
			case k == fieldNames[fBody]:
				v = c.bodyFields(e)
			case p.op == opDeepEquals:
				v = c.kvDeepEquals(k, e)
			default:
				v = c.kvFields(k, e)
			}
		}
		switch v {
		case no:
			return no
		case unsure:
			if p.op.raises() {
				return unsure
			}
			sure = false
		}
	}
	if !sure {
		return unsure
	}
	return yes
}

// leafField compares a string field of the request (or the body, or what a selector selects
// from it) with a scalar.
func (c *evalCtx) leafField(k string, e *eleaf) verdict {
	f, present := c.lookup(k)
	if !present {
		if c.cur.op == opDeepEquals {
			return no // stringify(undefined) is no string's
		}
		return c.leafString(e, "") // testPredicate reads undefined as ""
	}
	pp := c.cur.pp
	switch {
	case f == fBody && c.r.BodyMissing:
		return c.leafString(e, "") // undefined
	case f == fBody && pp.sel != nil:
		return c.leafValue(e, c.selected())
	case pp.binary && !pp.except && f == fData && (c.cur.op == opEquals || c.cur.op == opDeepEquals):
		if v, sure := c.binaryDataEquals(e); sure {
			return v
		}
		return c.leafString(e, c.exceptPiped(f))
	case pp.except || pp.binary:
		return c.leafString(e, c.exceptPiped(f))
	}
	return c.leafRaw(e, c.rawString(f))
}

// binaryDataEquals is equals (or deepEquals) of a binary tcp request's data with a string,
// decided from the payload's bytes when they tell (sure), without making its text
// (BinaryText: UTF-8 checked, lowercased) nor reading its base64. The text of bytes equal to
// the expected value's is that value's; a payload of ASCII is its own text, which lowercases
// byte by byte (equalLowerASCII). A payload with a byte above 0x7f before any difference
// (whose text, with U+FFFD for invalid UTF-8, may lowercase to another length: U+212A is "k")
// is not sure.
func (c *evalCtx) binaryDataEquals(e *eleaf) (v verdict, sure bool) {
	raw, ok := c.r.BinaryData()
	if !ok {
		return no, false
	}
	if e.v == nil {
		return no, true // toString(null) is no string
	}
	if !c.cur.pp.valLower {
		if string(raw) == e.s {
			return yes, true
		}
		return no, false
	}
	eq, sure := equalLowerASCII(unsafe.String(unsafe.SliceData(raw), len(raw)), e.s)
	return verdictOf(eq), sure
}

// exceptPiped is a request string as a pipe with except or in binary mode makes it:
// base64-decoded in binary mode, lowercased unless case sensitive, then stripped of what except
// matches (the reference's normalize and exceptTransform; the pattern compiled at Compile). The
// body's is memoized on the request.
func (c *evalCtx) exceptPiped(f fieldID) string {
	pp := c.cur.pp
	if f == fBody {
		if v, ok := c.r.Memo(pp.textID); ok {
			return v.(string)
		}
	}
	s, made := "", false
	if pp.binary && f == fData {
		s, made = c.r.BinaryText(pp.valLower) // the payload as received, not Data decoded again
	}
	if !made {
		s = c.rawString(f)
		if pp.binary {
			s = decodeBase64(s)
		}
		if pp.valLower {
			s = jsvalue.ToLower(s)
		}
	}
	s, _ = exceptJS(s, pp.params)
	if f == fBody {
		c.r.SetMemo(pp.textID, s)
	}
	return s
}

// kvFields compares query, headers or form with an object of scalars.
func (c *evalCtx) kvFields(k string, e *eobj) verdict {
	f, present := c.lookup(k)
	if !present {
		return no // predicateSatisfied(expected, undefined)
	}
	kv := c.kvOf(f)
	for i, key := range e.keys {
		raw, n := kv.rawOne(key)
		if n > 1 {
			return unsure // an array of values
		}
		if v := c.leafRaw(e.vals[i].(*eleaf), raw); v != yes {
			return v
		}
	}
	return yes
}

// kvDeepEquals compares query, headers or form with an object of strings as deepEquals does:
// the same keys, each given once with the same value (a key given twice is an array, which
// stringifies unlike any string).
func (c *evalCtx) kvDeepEquals(k string, e *eobj) verdict {
	f, present := c.lookup(k)
	if !present {
		return no
	}
	kv := c.kvOf(f)
	for i, key := range e.keys {
		raw, n := kv.rawOne(key)
		if n != 1 || c.leafRaw(e.vals[i].(*eleaf), raw) != yes {
			return no
		}
	}
	return verdictOf(kv.distinctKeys() == len(e.keys))
}

// bodyCanonEquals is deepEquals of the body with an object or array: whether the body,
// parsed by tryJSON, made strings and normalized, stringifies to canon (computed once per
// request, with the reference's functions).
func (c *evalCtx) bodyCanonEquals(canon string) verdict {
	if _, present := c.lookup(fieldNames[fBody]); !present {
		return no // stringify(undefined)
	}
	pp := c.cur.pp
	s, ok := c.r.Memo(pp.canonID)
	if !ok {
		v, err := forceStringsJS(c.bodyJSON())
		if err == nil {
			v, err = (&evaluator{binary: c.set.binary}).normalize(v, pp.params, false)
		}
		if err != nil {
			s = nil
		} else {
			s = string(appendCanon(nil, v))
		}
		c.r.SetMemo(pp.canonID, s)
	}
	if s == nil {
		return unsure
	}
	return verdictOf(s.(string) == canon)
}

// bodyFields compares the keys of a JSON body with an object of scalars: read from the body's
// text when the scanner can, else from the body parsed (once per request).
func (c *evalCtx) bodyFields(e *eobj) verdict {
	if _, present := c.lookup(fieldNames[fBody]); !present || c.r.BodyMissing || c.r.Body == "" {
		return no // predicateSatisfied(expected, undefined or "")
	}
	if so := c.scanFields(e.keys); so != nil {
		for i, k := range e.keys {
			var v verdict
			l, isLeaf := e.vals[i].(*eleaf)
			switch kind := so.kind[i]; {
			case kind == scannedComplex:
				var a any
				if a, v = c.scannedObject(so, i, k); v == yes {
					v = c.valueTest(e.vals[i], a)
				}
			case isLeaf && kind == scannedRaw:
				if c.cur.pp.valLower && c.cur.op.raises() {
					v = c.leafString(l, so.lower(i)) // lowercased once for every stub
				} else {
					v = c.leafRaw(l, so.strs[i])
				}
			case isLeaf && kind == scannedNum:
				v = c.leafValue(l, so.nums[i])
			case isLeaf:
				v = c.leafValue(l, so.vals[i])
			default: // an object or an array expected of a scalar
				a := so.vals[i]
				switch kind {
				case scannedRaw:
					a = so.strs[i]
				case scannedNum:
					a = so.nums[i]
				}
				v = c.valueTest(e.vals[i], a)
			}
			if v != yes {
				return v
			}
		}
		return yes
	}
	for i, k := range e.keys {
		a, v := c.bodyValue(k)
		if v == yes {
			v = c.valueTest(e.vals[i], a)
		}
		if v != yes {
			return v
		}
	}
	return yes
}

// scannedObject is the object or array a scan found for key i: its text parsed alone, when that
// is what tryJSON parses of it (the scan met no escape, and the pipe lowercases keys and values
// alike, so lowercasing the text lowercases both), else read from the parsed body.
func (c *evalCtx) scannedObject(so *scannedObj, i int, k string) (any, verdict) {
	pp := c.cur.pp
	if so.parsed[i] {
		return so.vals[i], yes // parsed for an earlier stub
	}
	if text := c.r.Body[so.spans[i][0]:so.spans[i][1]]; pp.keyLower == pp.valLower && utf8.ValidString(text) {
		if pp.valLower {
			text = jsvalue.ToLower(text)
		}
		if v, ok := request.ParseJSON(text); ok {
			so.vals[i], so.parsed[i] = v, true
			return v, yes
		}
	}
	return c.bodyValue(k)
}

// valueTest is one field of predicateSatisfied: an expected scalar, object or array against a
// value of the parsed body. An actual array is searched: every expected element must satisfy
// some element of it (an expected array), or the expected value some element (otherwise).
func (c *evalCtx) valueTest(e, a any) verdict {
	arr, isArr := a.([]any)
	switch e := e.(type) {
	case *earr:
		if !isArr {
			return unsure // the array's indexes are read from the value
		}
		sure := true
		for _, ee := range e.elems {
			switch c.someTest(ee, arr) {
			case no:
				return no
			case unsure:
				if c.cur.op.raises() {
					return unsure
				}
				sure = false
			}
		}
		if !sure {
			return unsure
		}
		return yes
	case *eleaf:
		if isArr {
			if c.cur.exists && jsvalue.Truthy(e.v) {
				return yes
			}
			return c.someTest(e, arr)
		}
		return c.leafValue(e, a)
	case *eobj:
		if isArr {
			if c.cur.exists {
				return yes // an object is truthy
			}
			return c.someTest(e, arr)
		}
		return c.objectValue(e, a)
	}
	return unsure
}

// someTest is whether some element of arr satisfies testPredicate with e.
func (c *evalCtx) someTest(e any, arr []any) verdict {
	sure := true
	for _, x := range arr {
		var v verdict
		switch e := e.(type) {
		case *eleaf:
			v = c.leafValue(e, x)
		case *eobj:
			v = c.objectValue(e, x)
		default:
			v = unsure // an array in an array
		}
		switch v {
		case yes:
			return yes
		case unsure:
			if c.cur.op.raises() {
				return unsure // the reference may throw on this element before it meets a match
			}
			sure = false
		}
	}
	if !sure {
		return unsure
	}
	return no
}

// objectValue is predicateSatisfied of an expected object and a value of the parsed body: an
// object must have every field; a falsy value has none; a string (which tryJSON parses
// again), an array (whose elements are searched) and other scalars are unsure.
func (c *evalCtx) objectValue(e *eobj, a any) verdict {
	if !jsvalue.Truthy(a) {
		return no
	}
	switch a.(type) {
	case *config.Object, map[string]any:
		for i, k := range e.keys {
			if v := c.valueTest(e.vals[i], member(a, k)); v != yes {
				return v
			}
		}
		return yes
	}
	return unsure
}

// bodyValue is the value of key k of the body as tryJSON makes it, when the body is a JSON
// object or not JSON at all (a string, whose keys other than its indexes and length read as
// undefined); unsure for an array or a scalar.
func (c *evalCtx) bodyValue(k string) (any, verdict) {
	switch t := c.bodyParsed().(type) {
	case *config.Object, map[string]any:
		return member(t, k), yes
	case string:
		if _, isIndex := jsvalue.ArrayIndex(k); isIndex || k == "length" {
			return nil, unsure
		}
		return jsvalue.Undef, yes
	}
	return nil, unsure
}

// member is o[k] for an object of the parsed body, or undefined.
func member(o any, k string) any {
	if m, isMap := o.(map[string]any); isMap {
		if v, found := m[k]; found {
			return v
		}
		return jsvalue.Undef
	}
	return prop(o, k)
}

// bodyParsed is the body as tryJSON makes it: the request's own parse of its text when tryJSON
// would transform nothing of it (the pipe lowercases nothing, or the text has no capital, no
// escape and no byte past ASCII, so every key and string is its own lowercase), else the
// reference's tryJSON (bodyJSON).
func (c *evalCtx) bodyParsed() any {
	pp := c.cur.pp
	if (!pp.keyLower && !pp.valLower) || lowerASCII(c.r.Body) {
		c.parsed = true
		if v, ok := c.r.JSON(); ok {
			return v
		}
		return c.r.Body // not JSON: tryJSON gives the text itself
	}
	return c.bodyJSON()
}

// lowerASCII reports whether s is ASCII without capital letters or escapes.
func lowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// bodyJSON is the reference's tryJSON of the body as the current pipe makes its text: parsed,
// keys and strings transformed; memoized on the request.
func (c *evalCtx) bodyJSON() any {
	pp := c.cur.pp
	c.parsed = true
	if v, ok := c.r.Memo(pp.jsonID); ok {
		return v
	}
	v := (&evaluator{}).tryJSONUncached(c.pipedBody(), pp.params)
	c.r.SetMemo(pp.jsonID, v)
	return v
}

// pipedBody is the body as the current pipe makes it (lowercased unless case sensitive),
// memoized on the request.
func (c *evalCtx) pipedBody() string {
	pp := c.cur.pp
	if !pp.valLower {
		return c.r.Body
	}
	if v, ok := c.r.Memo(pp.textID); ok {
		return v.(string)
	}
	s := jsvalue.ToLower(c.r.Body)
	c.r.SetMemo(pp.textID, s)
	return s
}

// leafRaw compares a request string, as the current pipe makes it, with a scalar.
func (c *evalCtx) leafRaw(e *eleaf, raw string) verdict {
	if !c.cur.pp.valLower {
		return c.leafString(e, raw)
	}
	switch c.cur.op {
	case opEquals, opDeepEquals:
		return verdictOf(e.v != nil && jsvalue.EqualLower(raw, e.s))
	case opExists, opMatches:
		// Lowercasing leaves a string empty or not (and matches never lowercases).
		return c.leafString(e, raw)
	}
	return c.leafString(e, jsvalue.ToLower(raw))
}

// leafString is the operator's function of an expected scalar and an actual string.
func (c *evalCtx) leafString(e *eleaf, t string) verdict {
	switch c.cur.op {
	case opEquals, opDeepEquals:
		return verdictOf(e.v != nil && e.s == t) // toString(null) is no string
	case opExists:
		return verdictOf((t != "") == jsvalue.Truthy(e.v))
	case opMatches:
		return verdictOf(e.re.MatchString(t))
	case opContains:
		return verdictOf(strings.Contains(t, e.s))
	case opStartsWith:
		return verdictOf(strings.HasPrefix(t, e.s))
	}
	return verdictOf(strings.HasSuffix(t, e.s)) // endsWith: e is a string (fastShape)
}

// leafValue is the operator's function of an expected scalar and an actual value read from a
// body (strings as the pipe makes them); unsure for arrays, objects, and values the operator
// would throw on.
func (c *evalCtx) leafValue(e *eleaf, a any) verdict {
	switch t := a.(type) {
	case string:
		return c.leafString(e, t)
	case jsvalue.Undefined:
		return c.leafString(e, "")
	case float64, bool, nil:
		switch c.cur.op {
		case opEquals:
			switch t := t.(type) {
			case float64:
				// String(x) is injective on numbers up to 0 === -0.
				return verdictOf(e.num == t) // NaN when s is no number's
			case bool:
				return verdictOf(e.v != nil && e.s == strconv.FormatBool(t))
			}
			return verdictOf(e.v == nil) // null === null
		case opExists:
			return verdictOf(jsvalue.Truthy(e.v)) // defined, and not ""
		}
	}
	return unsure
}

// Request fields, in the order httpRequest.js creates them.
type fieldID uint8

const (
	fRequestFrom fieldID = iota
	fMethod
	fPath
	fQuery
	fHeaders
	fBody
	fIP
	fForm
	fData
)

var fieldNames = [...]string{"requestFrom", "method", "path", "query", "headers", "body", "ip", "form", "data"}
var fieldNamesLower = [...]string{"requestfrom", "method", "path", "query", "headers", "body", "ip", "form", "data"}

var (
	httpFields     = []fieldID{fRequestFrom, fMethod, fPath, fQuery, fHeaders, fBody, fIP}
	httpFormFields = []fieldID{fRequestFrom, fMethod, fPath, fQuery, fHeaders, fBody, fIP, fForm}
	tcpFields      = []fieldID{fRequestFrom, fIP, fData}
)

// lookup returns the field of the request named k as the current pipe names keys.
func (c *evalCtx) lookup(k string) (fieldID, bool) {
	fields := httpFields
	switch {
	case c.r.TCP:
		fields = tcpFields
	case c.r.HasForm:
		fields = httpFormFields
	}
	names := &fieldNames
	if c.cur.pp.keyLower {
		names = &fieldNamesLower
	}
	for _, f := range fields {
		if names[f] == k {
			return f, true
		}
	}
	return 0, false
}

// rawString returns the untransformed value of a string field ("" for a missing body, which
// testPredicate reads as "").
func (c *evalCtx) rawString(f fieldID) string {
	r := c.r
	switch f {
	case fRequestFrom:
		return r.RequestFrom()
	case fMethod:
		return r.Method
	case fPath:
		return r.Path
	case fIP:
		return r.IP()
	case fData:
		return r.Data()
	case fBody:
		if r.BodyMissing {
			return ""
		}
		return r.Body
	}
	return ""
}

// kvOf returns the view of query, headers or form.
func (c *evalCtx) kvOf(f fieldID) kvObj {
	switch f {
	case fQuery:
		return kvObj{c: c, kvs: c.r.Query}
	case fHeaders:
		return kvObj{c: c, kvs: c.r.HeaderList(), header: true}
	}
	return kvObj{c: c, kvs: c.r.Form}
}

// kvObj is query, headers or form as predicates see them: an object of the values of each
// name (an array for a name given several times), its keys maybe lowercased.
type kvObj struct {
	c      *evalCtx
	kvs    []request.KV
	header bool // combine repeated names as headersMap.ofRaw does
}

func (o *kvObj) matches(name, k string) bool {
	if !o.c.cur.pp.keyLower {
		return name == k
	}
	return jsvalue.EqualLower(name, k)
}

// distinctKeys counts the keys of the object: the request's names, as the pipe makes them.
func (o *kvObj) distinctKeys() int {
	n := 0
outer:
	for i, kv := range o.kvs {
		for _, prev := range o.kvs[:i] {
			if o.sameKey(prev.Name, kv.Name) {
				continue outer
			}
		}
		n++
	}
	return n
}

// sameKey reports whether two names are one key of the object.
func (o *kvObj) sameKey(a, b string) bool {
	switch {
	case !o.c.cur.pp.keyLower:
		return a == b
	case isASCII(a) && isASCII(b):
		return strings.EqualFold(a, b)
	}
	return jsvalue.ToLower(a) == jsvalue.ToLower(b)
}

// winner returns the raw name whose value obj[k] has: among names that normalize to k, the
// one first seen last (JavaScript assigns in key order).
func (o *kvObj) winner(k string) (string, bool) {
	var cand string
	found := false
	var seen [4]string
	seenList := seen[:0]
outer:
	for _, kv := range o.kvs {
		if !o.matches(kv.Name, k) {
			continue
		}
		if found && kv.Name == cand {
			continue
		}
		for _, s := range seenList {
			if s == kv.Name {
				continue outer
			}
		}
		seenList = append(seenList, kv.Name)
		cand, found = kv.Name, true
	}
	return cand, found
}

// rawOne is obj[k] untransformed, for a key the request gives once: its value and n = 1. n is
// 0 when the key is absent (obj[k] is undefined) and 2 when it is repeated (an array).
func (o *kvObj) rawOne(k string) (string, int) {
	name, ok := o.winner(k)
	if !ok {
		return "", 0
	}
	return o.one(name)
}

// one returns the value of raw name when the request gives it once, with n = 1 (headers skip
// leading empty values); n is 0 when the name is absent and 2 when it is repeated.
func (o *kvObj) one(name string) (string, int) {
	var first string
	n := 0
	for _, kv := range o.kvs {
		if kv.Name != name {
			continue
		}
		switch {
		case n == 0:
			first, n = kv.Value, 1
		case o.header && first == "":
			first = kv.Value
		default:
			return "", 2
		}
	}
	return first, n
}

// maxBodyScans is how many times one request's body is scanned for fields before it is
// parsed: a scan costs a small fraction of a parse into maps, many scans do not.
const maxBodyScans = 4

// scannedObj is the JSON body as an object, holding only the values of the keys one predicate
// asks for (scanFields).
type scannedObj struct {
	keys  []string
	vals  []any
	buf   [8]any
	spans [8][2]int
	// A string or number is kept unboxed: strs[i] is a string as the body has it, nums[i] a
	// number; an object or an array is not read (scannedComplex).
	kind [8]uint8
	strs [8]string
	nums [8]float64
	// lows[i] is strs[i] lowercased, when lowered[i]; an object or array is in vals[i] once
	// parsed[i].
	lows            [8]string
	lowered, parsed [8]bool
	// The pipe's keyLower the values were read with: the next predicate asking for the same
	// keys alike gets them without a scan. With tried set and ok false, keys and keyLower name
	// the last scan, which was unsure.
	tried, ok, keyLower bool
}

const (
	scannedBoxed   uint8 = iota // in vals: true, false, null, or undefined (no such key)
	scannedRaw                  // in strs
	scannedNum                  // in nums
	scannedComplex              // an object or an array
)

// lower returns string i lowercased, lowering it once for all the stubs that read it.
func (o *scannedObj) lower(i int) string {
	if !o.lowered[i] {
		o.lows[i], o.lowered[i] = jsvalue.ToLower(o.strs[i]), true
	}
	return o.lows[i]
}

// read reports whether o's last scan was of keys as pp reads them, whether or not it could
// read them.
func (o *scannedObj) read(keys []string, pp *pipe) bool {
	if !o.tried || o.keyLower != pp.keyLower || len(o.keys) != len(keys) {
		return false
	}
	for i, k := range keys {
		if o.keys[i] != k {
			return false
		}
	}
	return true
}

// scanFields returns the current body with only the values of keys read (jsonscan.Fields), or
// nil when the body must be parsed: the pipe is not plain, there are more than 8 keys, the
// body was parsed already or scanned too often, or the scan is unsure. The result is valid
// until the next call.
func (c *evalCtx) scanFields(keys []string) *scannedObj {
	pp := c.cur.pp
	so := &c.scanned
	if !pp.simple || c.set.noScan {
		return nil
	}
	if so.read(keys, pp) {
		if so.ok {
			return so // stubs asking for the same keys: one scan serves them all
		}
		return nil // this scan was unsure already
	}
	if len(keys) > len(so.buf) || c.scans >= maxBodyScans || c.parsed {
		return nil
	}
	c.scans++
	so.tried, so.ok, so.keys, so.keyLower = true, false, keys, pp.keyLower
	spans := so.spans[:len(keys)]
	if !jsonscan.Fields(c.r.Body, keys, pp.keyLower, spans) {
		return nil
	}
	so.vals = so.buf[:len(keys)]
	for i, sp := range spans {
		so.kind[i], so.lowered[i], so.parsed[i] = scannedBoxed, false, false
		if sp[0] < 0 {
			so.vals[i] = jsvalue.Undef
			continue
		}
		text := c.r.Body[sp[0]:sp[1]]
		switch c0 := text[0]; {
		case c0 == '"':
			str, ok := scannedString(text)
			if !ok {
				return nil
			}
			so.kind[i], so.strs[i] = scannedRaw, str
		case c0 == '-' || '0' <= c0 && c0 <= '9':
			f, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil
			}
			so.kind[i], so.nums[i] = scannedNum, f
		case c0 == 't':
			so.vals[i] = true
		case c0 == 'f':
			so.vals[i] = false
		case c0 == 'n':
			so.vals[i] = nil
		default:
			so.kind[i] = scannedComplex
		}
	}
	so.ok = true
	return so
}

// scannedString returns the content of a JSON string jsonscan.Path or jsonscan.Fields found
// (they find none with escapes); ok is false when it is not UTF-8, which the parse would
// decode differently. (A request body from the wire is UTF-8 already.)
func scannedString(text string) (string, bool) {
	s := text[1 : len(text)-1]
	return s, utf8.ValidString(s)
}

// selected is what the current pipe's selector selects from the body (as the pipe makes its
// text), memoized on the request for the stubs sharing the selector.
func (c *evalCtx) selected() any {
	pp := c.cur.pp
	if v, ok := c.r.Memo(pp.selID); ok {
		return v
	}
	text := c.pipedBody()
	var v any
	switch {
	case pp.sel.xml && text == "":
		v = jsvalue.Undef // xmldom makes no document of nothing
	case pp.sel.xml:
		x := pp.sel.xpPool.Get().(*xpath.Expr)
		v = xpathSelect(x, parseXML(text))
		pp.sel.xpPool.Put(x)
	default:
		var ok bool
		if v, ok = c.scanSelect(text); !ok {
			v = jsonPathSelect(pp.sel, c.bodyJSON(), len(text))
		}
	}
	c.r.SetMemo(pp.selID, v)
	return v
}

// scanSelect is the selection of a names-only jsonpath selector ($.a.b) read straight from the
// JSON text (jsonscan.Path); ok is false when the text needs the full parse.
func (c *evalCtx) scanSelect(s string) (v any, ok bool) {
	pp := c.cur.pp
	sel := pp.sel
	if c.set.noScan || sel.jpKeys == nil || sel.jpLength != nil {
		return nil, false
	}
	start, end, res := jsonscan.Path(s, sel.jpKeys, pp.keyLower)
	switch res {
	case jsonscan.Missing:
		return jsvalue.Undef, true
	case jsonscan.Unsure:
		return nil, false
	}
	text := s[start:end]
	switch c0 := text[0]; {
	case c0 == '"':
		return scannedString(text)
	case c0 == 't':
		return true, true
	case c0 == 'f':
		return false, true
	case c0 == 'n':
		return nil, true
	case c0 == '{' || c0 == '[':
		if pp.keyLower && !pp.valLower {
			return nil, false // tryJSON lowercases the keys of the text it did not lowercase
		}
		p, ok := request.ParseJSON(text)
		if a, isArr := p.([]any); isArr {
			p = sortJS(a) // orderIndependent sorts a selected array
		}
		return p, ok
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err == nil
}
