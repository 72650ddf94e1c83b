package match

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"

	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/xmldoc"
)

// evalCtx evaluates predicates of one Set against one request.
type evalCtx struct {
	set  *Set
	r    *request.Request
	dry  bool
	cur  *pred
	root reqObj
	kv   [3]kvObj // views of query, headers, form for the current predicate
	buf  []byte

	// bodyText is the body as the current pipe transformed it, so tryJSON
	// can recognise the body and use the per-request memo.
	bodyText string
	bodyPipe *pipe
	rawBody  any // r.Body boxed once per evaluation

	// scans counts the body scans scanFields made for this request: past maxBodyScans the
	// body is parsed once (memoized) instead.
	scans   int
	scanned scannedObj
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
	// A string or number is kept unboxed until value asks for it (kind[i] != scannedBoxed):
	// strs[i] is a string (lower: the pipe lowercases it), nums[i] a number.
	kind  [8]uint8
	strs  [8]string
	nums  [8]float64
	lower bool
	// The pipe the values were read for (its jsonID names how it transforms keys and values):
	// the next predicate asking for the same keys through such a pipe gets them without a scan.
	// With tried set and ok false, keys and jsonID name the last scan, which was unsure.
	tried, ok bool
	jsonID    uint64
}

const (
	scannedBoxed uint8 = iota // in vals
	scannedRaw                // in strs, as the body has it
	scannedText               // in strs, as the pipe makes it
	scannedNum                // in nums
)

// text returns string value i as the pipe makes it, lowercasing it at most once.
func (o *scannedObj) text(i int) string {
	if o.kind[i] == scannedRaw && o.lower {
		o.strs[i], o.kind[i] = jsvalue.ToLower(o.strs[i]), scannedText
	}
	return o.strs[i]
}

// value returns value i as tryJSON would give it.
func (o *scannedObj) value(i int) any {
	switch o.kind[i] {
	case scannedRaw, scannedText:
		o.vals[i] = o.text(i)
	case scannedNum:
		o.vals[i] = o.nums[i]
	}
	o.kind[i] = scannedBoxed
	return o.vals[i]
}

// at returns the index of key k, or -1.
func (o *scannedObj) at(k string) int {
	for i, key := range o.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// read reports whether o's last scan was of keys as pp reads them, whether or not it could
// read them.
func (o *scannedObj) read(keys []string, pp *pipe) bool {
	if !o.tried || o.jsonID != pp.jsonID || len(o.keys) != len(keys) {
		return false
	}
	for i, k := range keys {
		if o.keys[i] != k {
			return false
		}
	}
	return true
}

var ctxPool = sync.Pool{New: func() any { return &evalCtx{} }}

func acquireCtx(s *Set, r *request.Request, dry bool) *evalCtx {
	c := ctxPool.Get().(*evalCtx)
	c.set, c.r, c.dry = s, r, dry
	return c
}

func releaseCtx(c *evalCtx) {
	buf := c.buf[:0]
	*c = evalCtx{buf: buf}
	ctxPool.Put(c)
}

// bodyObject is tryJSON(s) for satisfied, which reads the keys of exp from it: for the body
// of a plain pipe, an object holding only those keys' values when scanFields can read them.
func (c *evalCtx) bodyObject(s string, exp any) any {
	if o, isObj := exp.(*eobj); isObj && c.isBodyText(s) {
		if so := c.scanFields(o.keys); so != nil {
			return so
		}
	}
	return c.tryJSON(s)
}

// scanFields returns the current body as the object tryJSON would make of it with only the
// values of keys read (scanJSONFields), or nil when the body must be parsed: the pipe is not
// plain, there are more than 8 keys, the body was parsed already or scanned too often, or the
// scan is unsure. The result is valid until the next call; the values are never changed.
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
	if len(keys) > len(so.buf) || c.scans >= maxBodyScans {
		return nil
	}
	if _, parsed := c.r.Memo(pp.jsonID); parsed {
		return nil
	}
	c.scans++
	so.tried, so.ok, so.keys, so.jsonID = true, false, keys, pp.jsonID
	spans := so.spans[:len(keys)]
	if !scanJSONFields(c.r.Body, keys, pp.keyLower, spans) {
		return nil
	}
	so.vals, so.lower = so.buf[:len(keys)], pp.valLower
	for i, sp := range spans {
		so.kind[i] = scannedBoxed
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
			continue
		case c0 == '-' || '0' <= c0 && c0 <= '9':
			f, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil
			}
			so.kind[i], so.nums[i] = scannedNum, f
			continue
		}
		v, ok := c.scannedValue(text)
		if !ok {
			return nil
		}
		so.vals[i] = v
	}
	so.ok = true
	return so
}

// scanBody is scanFields for the body field of the request under the current pipe, when the
// body is there to be read: what reading the field and isBodyText would establish, without
// making the transformed text (nil: read the field instead).
func (c *evalCtx) scanBody(keys []string) *scannedObj {
	if c.r.BodyMissing || c.r.Body == "" || c.r.TCP {
		return nil
	}
	return c.scanFields(keys)
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

func (c *evalCtx) eval(p *pred) (bool, error) {
	switch p.op {
	case opNot:
		ok, err := c.eval(p.sub[0])
		return !ok && err == nil, err
	case opOr:
		for _, s := range p.sub {
			ok, err := c.eval(s)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case opAnd:
		for _, s := range p.sub {
			ok, err := c.eval(s)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case opInject:
		if c.dry {
			return true, nil
		}
		if c.set.injector == nil {
			return false, &Error{Code: "invalid injection", Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag", Source: p.src, Stub: -1}
		}
		return c.set.injector.Predicate(p.src, c.r)
	case opThrow:
		return false, p.err
	case opDeepEquals:
		return c.deepEquals(p)
	}
	return c.create(p)
}

func (c *evalCtx) begin(p *pred) {
	c.cur = p
	c.root = reqObj{c: c}
	c.bodyPipe = nil
}

// create evaluates equals, contains, startsWith, endsWith, exists, matches.
func (c *evalCtx) create(p *pred) (bool, error) {
	if p.pp.selErr != nil {
		return false, p.pp.selErr
	}
	if p.op == opMatches && p.pp.binary {
		return false, validationError("the matches predicate is not allowed in binary mode", nil)
	}
	if p.err != nil {
		return false, p.err
	}
	c.begin(p)
	if err := c.unboundCheck(); err != nil {
		return false, err
	}
	return c.satisfied(p.exp, &c.root)
}

// satisfied is predicates.js predicateSatisfied; exp is *eobj or *earr.
func (c *evalCtx) satisfied(exp any, act any) (bool, error) {
	if !jsvalue.Truthy(act) {
		return false, nil
	}
	if s, ok := act.(string); ok {
		act = c.bodyObject(s, exp)
	}
	var keys []string
	var vals []any
	switch t := exp.(type) {
	case *eobj:
		keys, vals = t.keys, t.vals
	case *earr:
		vals = t.elems
	}
	ro, isReq := act.(*reqObj)
	kv, isKV := act.(*kvObj)
	so, isSO := act.(*scannedObj) // read for the current pipe, which is simple
	fast := (isReq || isKV) && c.cur.pp.simple
	for i, e := range vals {
		if isSO && keys != nil {
			// A string or number of the body against a scalar, before it is boxed.
			if l, isLeaf := e.(*eleaf); isLeaf {
				at := so.at(keys[i])
				kind := scannedBoxed
				if at >= 0 {
					kind = so.kind[at]
				}
				switch {
				case kind == scannedRaw && (c.cur.op == opEquals || c.cur.op == opExists || c.cur.op == opMatches):
					// These compare without a lowercased copy.
					ok, err := c.fnRaw(l, so.strs[at])
					if err != nil || !ok {
						return false, err
					}
					continue
				case kind == scannedRaw || kind == scannedText:
					ok, err := c.fnString(l, so.text(at))
					if err != nil || !ok {
						return false, err
					}
					continue
				case kind == scannedNum && c.cur.op == opEquals:
					if l.v == nil || !l.isNum || l.num != so.nums[at] {
						return false, nil
					}
					continue
				}
			}
		}
		if fast {
			switch l := e.(type) {
			case *eleaf:
				// A plain request string against a scalar: compare without
				// boxing or copying the string.
				if isKV {
					if raw, n := kv.rawOne(keys[i]); n == 1 {
						ok, err := c.fnRaw(l, raw)
						if err != nil || !ok {
							return false, err
						}
						continue
					}
				} else if f, ok := ro.lookup(keys[i]); ok {
					if raw, ok := ro.rawString(f); ok {
						ok, err := c.fnRaw(l, raw)
						if err != nil || !ok {
							return false, err
						}
						continue
					}
				}
			case *eobj:
				// Keys of the body: read them from its text without first making the text
				// as the pipe transforms it (lowercased, unless case sensitive).
				if keys[i] == fieldNames[fBody] { // its own lowercase
					if so := c.scanBody(l.keys); so != nil {
						ok, err := c.satisfied(l, so)
						if err != nil || !ok {
							return false, err
						}
						continue
					}
				}
			}
		}
		var a any
		if keys != nil {
			a = c.get(act, keys[i])
		} else {
			a = c.getIndex(act, i)
		}
		ea, eIsArr := e.(*earr)
		aa, aIsArr := a.([]any)
		var ok bool
		var err error
		switch {
		case eIsArr && aIsArr:
			ok = true
			for _, ee := range ea.elems {
				found := false
				for _, x := range aa {
					if found, err = c.test(ee, x); err != nil || found {
						break
					}
				}
				if err != nil || !found {
					ok = false
					break
				}
			}
		case !eIsArr && aIsArr:
			if c.cur.exists && jsvalue.Truthy(e) {
				ok = true
			} else {
				ok, err = c.some(e, aa)
			}
		case !eIsArr && jsvalue.IsUndefined(a) && isArray(act):
			ok, err = c.some(exp, act.([]any))
		default:
			if isObject(e) {
				if jsvalue.IsUndefined(a) {
					ok = false
				} else {
					ok, err = c.satisfied(e, a)
				}
			} else {
				ok, err = c.test(e, a)
			}
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (c *evalCtx) some(e any, arr []any) (bool, error) {
	for _, x := range arr {
		ok, err := c.test(e, x)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// test is predicates.js testPredicate.
func (c *evalCtx) test(e any, a any) (bool, error) {
	if jsvalue.IsUndefined(a) {
		a = ""
	}
	if isObject(e) {
		return c.satisfied(e, a)
	}
	return c.fn(e.(*eleaf), a)
}

// fn applies the operator to an expected scalar and an actual value.
func (c *evalCtx) fn(e *eleaf, a any) (bool, error) {
	if t, isStr := a.(string); isStr {
		return c.fnString(e, t)
	}
	switch c.cur.op {
	case opEquals:
		if e.v == nil {
			return a == nil, nil
		}
		switch t := a.(type) {
		case nil:
			return false, nil
		case float64:
			// String(x) is injective on numbers up to 0 === -0.
			return e.isNum && e.num == t, nil
		case bool:
			return e.s == "true" && t || e.s == "false" && !t, nil
		}
		return e.s == jsString(a), nil
	case opExists:
		return jsvalue.Truthy(e.v), nil // not an empty string
	case opMatches:
		if e.re == nil {
			return false, nil
		}
		return e.re.MatchString(jsString(a)), nil
	}
	// contains, startsWith, endsWith: actual.indexOf(...)
	switch t := a.(type) {
	case []any:
		from := 0
		if c.cur.op == opEndsWith {
			switch ev := e.v.(type) {
			case string:
				from = len(t) - jsvalue.Len16(ev)
				if from < 0 {
					from += len(t)
					if from < 0 {
						from = 0
					}
				}
			case nil:
				return false, typeError("Cannot read properties of null (reading 'length')")
			}
		}
		for i := from; i < len(t); i++ {
			if strictEquals(e.v, t[i]) {
				if c.cur.op == opStartsWith {
					return i == 0, nil
				}
				return true, nil
			}
		}
		return false, nil
	case nil:
		return false, typeError("Cannot read properties of null (reading 'indexOf')")
	}
	return false, typeError("actual.indexOf is not a function")
}

// fnString is fn for a string actual, which it needs no box for.
func (c *evalCtx) fnString(e *eleaf, t string) (bool, error) {
	switch c.cur.op {
	case opEquals:
		return e.v != nil && e.s == t, nil
	case opExists:
		if jsvalue.Truthy(e.v) {
			return t != "", nil
		}
		return t == "", nil
	case opMatches:
		if e.re == nil {
			return false, nil
		}
		return e.re.MatchString(t), nil
	case opContains:
		return strings.Contains(t, e.s), nil
	case opStartsWith:
		return strings.HasPrefix(t, e.s), nil
	}
	switch e.v.(type) {
	case string:
		return strings.HasSuffix(t, e.s), nil
	case nil:
		return false, typeError("Cannot read properties of null (reading 'length')")
	}
	// expected.length is undefined: indexOf from NaN, i.e. 0.
	return strings.Contains(t, e.s), nil
}

// fnRaw is fn for a request string under a simple pipe (maybe lowercased).
func (c *evalCtx) fnRaw(e *eleaf, raw string) (bool, error) {
	if !c.cur.pp.valLower {
		return c.fnString(e, raw)
	}
	switch c.cur.op {
	case opEquals:
		return e.v != nil && equalLower(raw, e.s), nil
	case opExists, opMatches:
		// Lowercasing leaves a string empty or not (and matches never lowercases).
		return c.fnString(e, raw)
	}
	return c.fnString(e, jsvalue.ToLower(raw))
}

// equalLower reports jsvalue.ToLower(s) == lower without allocating for ASCII s.
func equalLower(s, lower string) bool {
	if len(s) != len(lower) {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return jsvalue.ToLower(s) == lower
			}
		}
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return jsvalue.ToLower(s) == lower
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// deepEquals is predicates.js deepEquals.
func (c *evalCtx) deepEquals(p *pred) (bool, error) {
	if p.pp.selErr != nil {
		return false, p.pp.selErr
	}
	if c.r.BodyMissing && !c.dry {
		return false, typeError("Cannot read properties of undefined (reading 'toString')")
	}
	c.begin(p)
	if err := c.unboundCheck(); err != nil {
		return false, err
	}
	for i, k := range p.exp.keys {
		e := p.exp.vals[i]
		a := c.get(&c.root, k)
		if s, ok := a.(string); ok {
			if l, ok := e.(*eleaf); ok {
				if l.s != s {
					return false, nil
				}
				continue
			}
			if isObject(e) {
				if c.canonBody(s) != p.canon[i] {
					return false, nil
				}
				continue
			}
		}
		if jsvalue.IsUndefined(a) {
			return false, nil
		}
		c.buf = appendCanon(c.buf[:0], a)
		if string(c.buf) != p.canon[i] {
			return false, nil
		}
	}
	return true, nil
}

// canonBody is stringify(normalize(forceStrings(tryJSON(s)))) for deepEquals,
// memoized when s is the body.
func (c *evalCtx) canonBody(s string) string {
	pp := c.cur.pp
	isBody := c.isBodyText(s)
	if isBody {
		if v, ok := c.r.Memo(pp.canonID); ok {
			return v.(string)
		}
	}
	v := c.tryJSON(s)
	v = transformAll(forceStrings(v), pp.keyLower, c.strPipe, true)
	out := string(appendCanon(nil, v))
	if isBody {
		c.r.SetMemo(pp.canonID, out)
	}
	return out
}

// lowerASCII reports whether s is ASCII without capital letters or escapes, so that every
// key and string value parsed from it is its own lowercase.
func lowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// strPipe is the string transform of normalize without selectors.
func (c *evalCtx) strPipe(s string) string {
	pp := c.cur.pp
	if pp.binary {
		s = decodeBase64(s)
	}
	if pp.valLower {
		s = jsvalue.ToLower(s)
	}
	if pp.except != nil {
		s = pp.except.ReplaceAllString(s, "")
	}
	return s
}

func (c *evalCtx) isBodyText(s string) bool {
	return c.bodyPipe == c.cur.pp && len(s) == len(c.bodyText) &&
		unsafe.StringData(s) == unsafe.StringData(c.bodyText)
}

// get is actual[key] for the values predicates see.
func (c *evalCtx) get(act any, k string) any {
	switch t := act.(type) {
	case *reqObj:
		return t.get(k)
	case *kvObj:
		return t.get(k)
	case map[string]any:
		if v, ok := t[k]; ok {
			return v
		}
		return jsvalue.Undef
	case *scannedObj:
		if i := t.at(k); i >= 0 {
			return t.value(i)
		}
		return jsvalue.Undef
	case []any, string:
		return elementOf(t, k)
	}
	return jsvalue.Undef
}

func (c *evalCtx) getIndex(act any, i int) any {
	switch t := act.(type) {
	case []any:
		if i < len(t) {
			return t[i]
		}
		return jsvalue.Undef
	case string:
		if ch, ok := jsvalue.CharAt16(t, i); ok {
			return ch
		}
		return jsvalue.Undef
	case map[string]any, *kvObj, *reqObj:
		return c.get(act, itoa(i))
	}
	return jsvalue.Undef
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Request fields, in the order httpRequest.js (or the dry-run test request)
// creates them.
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
	fIsDryRun
)

var fieldNames = [...]string{"requestFrom", "method", "path", "query", "headers", "body", "ip", "form", "data", "isDryRun"}
var fieldNamesLower = [...]string{"requestfrom", "method", "path", "query", "headers", "body", "ip", "form", "data", "isdryrun"}

var (
	httpFields     = []fieldID{fRequestFrom, fMethod, fPath, fQuery, fHeaders, fBody, fIP}
	httpFormFields = []fieldID{fRequestFrom, fMethod, fPath, fQuery, fHeaders, fBody, fIP, fForm}
	httpDryFields  = []fieldID{fRequestFrom, fMethod, fPath, fQuery, fHeaders, fForm, fBody, fIsDryRun}
	tcpFields      = []fieldID{fRequestFrom, fIP, fData}
	tcpDryFields   = []fieldID{fData, fIsDryRun}
)

// reqObj is the normalized request object of the current predicate.
type reqObj struct{ c *evalCtx }

func (o *reqObj) fields() []fieldID {
	r := o.c.r
	switch {
	case r.TCP && o.c.dry:
		return tcpDryFields
	case r.TCP:
		return tcpFields
	case o.c.dry:
		return httpDryFields
	case r.HasForm:
		return httpFormFields
	}
	return httpFields
}

func (o *reqObj) lookup(k string) (fieldID, bool) {
	names := &fieldNames
	if o.c.cur.pp.keyLower {
		names = &fieldNamesLower
	}
	for _, f := range o.fields() {
		if names[f] == k {
			return f, true
		}
	}
	return 0, false
}

// rawString returns the untransformed value of a string field ("" for a
// missing body, which testPredicate reads as "").
func (o *reqObj) rawString(f fieldID) (string, bool) {
	r := o.c.r
	switch f {
	case fRequestFrom:
		return r.RequestFrom(), true
	case fMethod:
		return r.Method, true
	case fPath:
		return r.Path, true
	case fIP:
		return r.IP(), true
	case fData:
		return r.Data, true
	case fBody:
		if r.BodyMissing && !o.c.dry {
			return "", true
		}
		return r.Body, true
	}
	return "", false
}

func (o *reqObj) get(k string) any {
	f, ok := o.lookup(k)
	if !ok {
		return jsvalue.Undef
	}
	return o.value(f)
}

func (o *reqObj) value(f fieldID) any {
	c := o.c
	r := c.r
	switch f {
	case fRequestFrom:
		return c.pipeString(r.RequestFrom(), false)
	case fMethod:
		return c.pipeString(r.Method, false)
	case fPath:
		return c.pipeString(r.Path, false)
	case fIP:
		return c.pipeString(r.IP(), false)
	case fData:
		return c.pipeString(r.Data, false)
	case fBody:
		if r.BodyMissing && !c.dry {
			return jsvalue.Undef
		}
		return c.pipeString(r.Body, true)
	case fQuery:
		c.kv[0] = kvObj{c: c, kvs: r.Query}
		return &c.kv[0]
	case fHeaders:
		c.kv[1] = kvObj{c: c, kvs: r.HeaderList(), header: true}
		return &c.kv[1]
	case fForm:
		c.kv[2] = kvObj{c: c, kvs: r.Form}
		return &c.kv[2]
	case fIsDryRun:
		if c.cur.pp.force {
			return "true"
		}
		return true
	}
	return jsvalue.Undef
}

func (o *reqObj) materialize() map[string]any {
	m := map[string]any{}
	names := &fieldNames
	if o.c.cur.pp.keyLower {
		names = &fieldNamesLower
	}
	for _, f := range o.fields() {
		v := o.value(f)
		if kv, ok := v.(*kvObj); ok {
			v = kv.materialize()
		}
		m[names[f]] = v
	}
	return m
}

// kvObj is the normalized view of query, headers or form.
type kvObj struct {
	c      *evalCtx
	kvs    []request.KV
	header bool // combine repeated names as headersMap.ofRaw does
}

func (o *kvObj) norm(name string) string {
	if o.c.cur.pp.keyLower {
		return jsvalue.ToLower(name)
	}
	return name
}

func (o *kvObj) matches(name, k string) bool {
	if !o.c.cur.pp.keyLower {
		return name == k
	}
	return equalLower(name, k)
}

// winner returns the raw name whose value obj[k] has: among names that
// normalize to k, the one first seen last (JavaScript assigns in key order).
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

func (o *kvObj) get(k string) any {
	name, ok := o.winner(k)
	if !ok {
		return jsvalue.Undef
	}
	return o.valueOf(name)
}

// rawOne is get without the pipe and without boxing, for a key the request gives once: its
// value and n = 1. n is 0 when the key is absent (get is undefined) and 2 when it is repeated
// (get is an array).
func (o *kvObj) rawOne(k string) (string, int) {
	name, ok := o.winner(k)
	if !ok {
		return "", 0
	}
	return o.one(name)
}

// one returns the value of raw name when the request gives it once, with n = 1, as valueOf
// sees it (headers skip leading empty values); n is 0 when the name is absent and 2 when it
// is repeated.
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

// valueOf combines the values of one raw name (string, or array when
// repeated) and transforms them.
func (o *kvObj) valueOf(name string) any {
	if s, n := o.one(name); n == 1 {
		return o.c.pipeString(s, false)
	}
	var arr []any
	for _, kv := range o.kvs {
		// Leading empty header values are skipped, as one skips them.
		if kv.Name == name && (len(arr) > 0 || !o.header || kv.Value != "") {
			arr = append(arr, o.c.pipeString(kv.Value, false))
		}
	}
	return sortJS(arr)
}

func (o *kvObj) materialize() map[string]any {
	m := make(map[string]any, len(o.kvs))
	for _, kv := range o.kvs {
		k := o.norm(kv.Name)
		if _, done := m[k]; done {
			continue
		}
		name, _ := o.winner(k)
		m[k] = o.valueOf(name)
	}
	return m
}

// pipeString transforms one request string as normalize does:
// base64-decode, lowercase, except, then select.
func (c *evalCtx) pipeString(raw string, isBody bool) any {
	pp := c.cur.pp
	if pp.simple && !pp.valLower {
		if isBody {
			c.bodyText, c.bodyPipe = raw, pp
			if c.rawBody == nil {
				c.rawBody = raw
			}
			return c.rawBody
		}
		return raw
	}
	var s string
	if isBody {
		v, ok := c.r.Memo(pp.textID)
		if !ok {
			v = c.strPipe(raw)
			c.r.SetMemo(pp.textID, v)
		}
		s = v.(string)
		c.bodyText, c.bodyPipe = s, pp
		if pp.sel == nil {
			return v // already boxed: no allocation
		}
	} else {
		s = c.strPipe(raw)
	}
	if pp.sel == nil {
		return s
	}
	return c.selectOn(s, isBody)
}

// tryJSON is predicates.js tryJSON: s parsed as JSON with keys and string
// values transformed, or s itself.
func (c *evalCtx) tryJSON(s string) any {
	pp := c.cur.pp
	isBody := c.isBodyText(s)
	if isBody {
		if v, ok := c.r.Memo(pp.jsonID); ok {
			return v
		}
	}
	var v any
	var ok bool
	src := s // the text v is parsed from
	if isBody && pp.simple {
		// The body text is the raw body, maybe lowercased: parsing it and
		// transforming keys and values gives the same.
		v, ok = c.r.JSON()
		src = c.r.Body
	} else {
		v, ok = request.ParseJSON(s)
	}
	var out any = s
	if ok {
		out = c.transformJSON(v, src)
	}
	if isBody {
		c.r.SetMemo(pp.jsonID, out)
	}
	return out
}

// transformJSON is v, parsed from src, with keys and string values transformed as the
// predicate's options say (tryJSON).
func (c *evalCtx) transformJSON(v any, src string) any {
	pp := c.cur.pp
	if (!pp.keyLower && !pp.valLower && pp.except == nil) || (pp.except == nil && lowerASCII(src)) {
		return v // nothing to transform: lowercasing would change no key or value
	}
	return transformAll(v, pp.keyLower, func(s string) string {
		if pp.valLower {
			s = jsvalue.ToLower(s)
		}
		if pp.except != nil {
			s = pp.except.ReplaceAllString(s, "")
		}
		return s
	}, false)
}

// selectOn applies the predicate's jsonpath or xpath selector to s.
func (c *evalCtx) selectOn(s string, isBody bool) any {
	pp := c.cur.pp
	if isBody {
		if v, ok := c.r.Memo(pp.selID); ok {
			return v
		}
	}
	var out any
	if pp.sel.xml {
		out = c.selectXPath(s)
	} else {
		out = c.selectJSONPath(s)
	}
	if isBody {
		c.r.SetMemo(pp.selID, out)
	}
	return out
}

func (c *evalCtx) selectJSONPath(s string) any {
	pp := c.cur.pp
	if !pp.sel.jpOK {
		return jsvalue.Undef
	}
	if v, ok := c.scanSelect(s); ok {
		return v
	}
	v := c.tryJSON(s)
	if pp.force {
		v = forceStrings(v)
	}
	return jsonPathSelect(pp.sel, v)
}

// jsonPathSelect is jsonpath.js select followed by predicates.js select and orderIndependent:
// what the selector picks from v, the text tryJSON parsed (and forceStrings made strings of).
func jsonPathSelect(sel *selector, v any) any {
	if !sel.jpOK {
		return jsvalue.Undef
	}
	if !isObject(v) {
		// JSON.parse(possibleJSON)
		p, ok := request.ParseJSON(jsString(v))
		if !ok {
			return jsvalue.Undef
		}
		v = p
	}
	if !jsvalue.Truthy(v) {
		return jsvalue.Undef
	}
	res := safeJPGet(sel, v)
	switch len(res) {
	case 0:
		return jsvalue.Undef
	case 1:
		// orderIndependent sorts the selection when it is itself an array.
		if a, ok := res[0].([]any); ok {
			return sortJS(a)
		}
		return res[0]
	}
	return sortJS(res)
}

// scanSelect is selectJSONPath for a names-only selector ($.a.b) read straight from the JSON
// text (scanJSONPath); ok is false when the text needs the full parse.
func (c *evalCtx) scanSelect(s string) (v any, ok bool) {
	pp := c.cur.pp
	sel := pp.sel
	if c.set.noScan || sel.jpKeys == nil || sel.jpLength != nil || pp.force || pp.except != nil {
		return nil, false
	}
	start, end, res := scanJSONPath(s, sel.jpKeys, pp.keyLower)
	switch res {
	case scanMissing:
		return jsvalue.Undef, true
	case scanUnsure:
		return nil, false
	}
	v, ok = c.scannedValue(s[start:end])
	if a, isArr := v.([]any); isArr {
		v = sortJS(a) // as selectJSONPath sorts a selected array
	}
	return v, ok
}

// scannedValue converts one value scanJSONPath or scanJSONFields found to what tryJSON gives
// for it: strings lowercased as the pipe says, objects and arrays parsed and transformed.
func (c *evalCtx) scannedValue(text string) (any, bool) {
	switch c0 := text[0]; {
	case c0 == '"':
		str, ok := scannedString(text)
		if !ok {
			return nil, false
		}
		if c.cur.pp.valLower {
			str = jsvalue.ToLower(str)
		}
		return str, true
	case c0 == 't':
		return true, true
	case c0 == 'f':
		return false, true
	case c0 == 'n':
		return nil, true
	case c0 == '{' || c0 == '[':
		p, ok := request.ParseJSON(text)
		if !ok {
			return nil, false
		}
		return c.transformJSON(p, text), true
	default:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, false
		}
		return f, true
	}
}

// scannedString returns the content of a JSON string scanJSONPath or scanJSONFields found
// (they find none with escapes); ok is false when it is not UTF-8, which the parse would
// decode differently. (A request body from the wire is UTF-8 already.)
func scannedString(text string) (string, bool) {
	s := text[1 : len(text)-1]
	return s, utf8.ValidString(s)
}

func safeJPGet(sel *selector, v any) (res []any) {
	defer func() {
		if recover() != nil {
			res = nil
		}
	}()
	if sel.jpLength != nil {
		// jsonpath-plus reads "length" as an own property of arrays and strings.
		for _, x := range sel.jpLength.Get(v) {
			switch t := x.(type) {
			case []any:
				res = append(res, float64(len(t)))
			case string:
				res = append(res, float64(jsvalue.Len16(t)))
			case map[string]any:
				if l, ok := t["length"]; ok {
					res = append(res, l)
				}
			}
		}
		return res
	}
	if sel.jpKeys != nil {
		// What jp.Expr.Get selects on parsed JSON (maps, arrays and scalars), without its
		// 1 KiB evaluation stack: a name selects only in a map that has it.
		for _, k := range sel.jpKeys {
			m, isMap := v.(map[string]any)
			if !isMap {
				return nil
			}
			if v, isMap = m[k]; !isMap {
				return nil
			}
		}
		return []any{v}
	}
	return sel.jpExpr.Get(v)
}

// unboundCheck raises the error xpath.js raises for a selector with an
// unbound prefix once the (body) document has an element.
func (c *evalCtx) unboundCheck() error {
	pp := c.cur.pp
	if pp.sel == nil || !pp.sel.unbound || c.dry || c.r.TCP || c.r.BodyMissing || c.r.Body == "" {
		return nil
	}
	doc := parseXML(c.strPipe(c.r.Body))
	for n := doc.FirstChild; n != nil; n = n.NextSibling {
		if n.Type == xmlquery.ElementNode {
			return validationError("malformed xpath predicate selector", pp.sel.srcText)
		}
	}
	return nil
}

func (c *evalCtx) selectXPath(s string) any {
	pp := c.cur.pp
	if s == "" {
		return jsvalue.Undef // xmldom gives no document
	}
	x := pp.sel.xpPool.Get().(*xpath.Expr)
	defer pp.sel.xpPool.Put(x)
	return xpathSelect(x, parseXML(s))
}

// xpathSelect is xpath.js select followed by predicates.js select and orderIndependent, for a
// selector that compiled and does not give a string: a number, a boolean, the value of the one
// node selected, the sorted values of several, or undefined.
func xpathSelect(x *xpath.Expr, doc *xmlquery.Node) any {
	res := safeEval(x, doc)
	switch t := res.(type) {
	case float64, bool:
		return t
	case *xpath.NodeIterator:
		var vals []any
		for t.MoveNext() {
			vals = append(vals, xpathNodeValue(t.Current()))
		}
		switch len(vals) {
		case 0:
			return jsvalue.Undef
		case 1:
			return vals[0]
		}
		return sortJS(vals)
	}
	return jsvalue.Undef
}

func parseXML(s string) *xmlquery.Node {
	if doc := xmldoc.Parse(s); doc != nil {
		return doc
	}
	return emptyDoc()
}

// xpathNodeValue is xpath.js nodeValue.
func xpathNodeValue(nav xpath.NodeNavigator) any {
	if nav.NodeType() == xpath.AttributeNode {
		return nav.Value()
	}
	var node *xmlquery.Node
	switch n := nav.(type) {
	case *nsNav:
		node = n.Current()
	case *xmlquery.NodeNavigator:
		node = n.Current()
	default:
		return nav.Value()
	}
	switch node.Type {
	case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode, xmlquery.ProcessingInstruction, xmlquery.DeclarationNode:
		// a node with a value of its own
	default:
		node = node.FirstChild // an element's value is its first child's
	}
	if s, ok := nodeData(node); ok {
		return s
	}
	return "undefined"
}

// nodeData is the value of a text, CDATA, comment or processing-instruction node.
func nodeData(n *xmlquery.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch n.Type {
	case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode:
		return n.Data, true
	case xmlquery.ProcessingInstruction, xmlquery.DeclarationNode:
		if n.ProcInst != nil {
			return n.ProcInst.Inst, true
		}
	}
	return "", false
}
