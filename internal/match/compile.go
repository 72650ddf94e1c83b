package match

// This file compiles predicates for the speed layer. Every predicate becomes a node: a fast node
// when its shape is one eval.go specialises (fastShape says which), otherwise a reference node,
// which Find hands to the reference evaluator (reference.go). The expected values of fast
// nodes are what the reference's normalize makes of them, computed once here, so the speed
// layer only specialises how the request side is read.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonpath"
	"github.com/mockd/mockd/internal/jsvalue"
)

type opKind uint8

const (
	opEquals opKind = iota
	opDeepEquals
	opContains
	opStartsWith
	opEndsWith
	opMatches
	opExists
	opNot
	opOr
	opAnd
	opInject
	opNone // a predicate the reference alone evaluates: it names no operator, or or/and is not given an array
)

// opNames are predicates.js's operators, in the order it defines them (operators above).
var opNames = [...]string{"equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists", "not", "or", "and", "inject"}

// raises reports whether the operator can raise an error from a field of the request:
// contains, startsWith and endsWith call actual.indexOf, which a number, a boolean or null
// has not. The other operators compare fields in any order with the same result.
func (op opKind) raises() bool { return op == opContains || op == opStartsWith || op == opEndsWith }

// pred is one compiled predicate (32 B: 100,000 plain stubs have as many).
type pred struct {
	pp *pipe
	// exp is the expected object as the reference's normalize makes it, with the fields of
	// operators that raise no error put cheapest first; nil when it is not an object.
	exp  *eobj
	more *predMore // what few predicates have; nil for the others
	op   opKind
	// fast is set when eval.go evaluates the predicate itself (see fastShape); it may still
	// defer one request to the reference.
	fast bool
	// exists is the predicate's exists parameter, truthy: any array satisfies a field then.
	exists bool
}

// predMore is what only some predicates have, kept apart so that a plain predicate is small.
type predMore struct {
	// src is the predicate as configured: what the reference evaluates for a reference node,
	// and for a fast node it is unsure of. The nodes that are never unsure (see sure) keep
	// none, nor the tree of their configured predicate.
	src config.Value
	// canon is, for deepEquals, the stringification of each field of exp.
	canon []string
	sub   []*pred // not (one), or, and
}

// subs returns the predicates not, or and and combine.
func (p *pred) subs() []*pred {
	if p.more == nil {
		return nil
	}
	return p.more.sub
}

// pipe is how a predicate transforms request strings (normalize in predicates.js): base64
// decode, lowercase, except, then a selector. Fast nodes have no except and no base64.
type pipe struct {
	keyLower bool
	valLower bool
	except   bool
	binary   bool
	sel      *selector // a jsonpath or xpath selector fast nodes can apply, or nil
	selOther bool      // a selector fast nodes do not apply
	simple   bool      // no binary, except or selector
	textID   uint64    // memo keys of the body's text as the pipe makes it,
	jsonID   uint64    // that text parsed,
	canonID  uint64    // its stringification for deepEquals,
	selID    uint64    // and what the selector selects from it
	params   params    // as the reference has them
}

type selector struct {
	xml      bool
	jpExpr   jp.Expr
	jpOK     bool
	jpLength jp.Expr   // jpExpr without a final .length step
	jpKeys   []string  // jpExpr's names when it is $ and names only ($.a.b), else nil
	xpPool   sync.Pool // compiled *xpath.Expr: an Expr keeps evaluation state, one per goroutine
	xpOK     bool      // the xpath compiled
	srcText  string
}

// eleaf is a scalar expected value (string, float64, bool or nil).
type eleaf struct {
	v  any
	s  string // String(v)
	re *jsRegexp
	// num is the number whose String is s, or NaN when there is none (equal to no number, as
	// NaN's own String, "NaN", is equal to none): 48 B rather than 64 with a flag.
	num float64
}

// JSValue is the constant's value, so jsvalue reads an *eleaf as that value.
func (l *eleaf) JSValue() any { return l.v }

// eobj is an expected object.
type eobj struct {
	keys []string
	vals []any // *eleaf, *eobj or *earr
}

// earr is an expected array.
type earr struct{ elems []any }

var _ jsvalue.Valuer = (*eleaf)(nil)

var memoIDs sync.Map // string -> uint64
var memoNext atomic.Uint64

func memoID(key string) uint64 {
	if v, ok := memoIDs.Load(key); ok {
		return v.(uint64)
	}
	v, _ := memoIDs.LoadOrStore(key, memoNext.Add(1))
	return v.(uint64)
}

// pipeIDs returns the memo IDs of the text, JSON and canonical views of the pipe of p. Those of
// a pipe without except (almost all) are kept by their flags: a client suite's imposter per test
// made six strings to find them again.
func pipeIDs(binary bool, p params) (text, json, canon uint64) {
	if p.except != "" {
		return newPipeIDs(binary, p)
	}
	i := 0
	for bit, on := range [...]bool{binary, p.valLower, p.exceptIC, p.keyLower} {
		if on {
			i |= 1 << bit
		}
	}
	if ids := plainPipeIDs[i].Load(); ids != nil {
		return ids[0], ids[1], ids[2]
	}
	text, json, canon = newPipeIDs(binary, p)
	plainPipeIDs[i].Store(&[3]uint64{text, json, canon}) // memoID gives every racer the same
	return text, json, canon
}

// plainPipeIDs are pipeIDs' for an except of "", by binary, valLower, exceptIC and keyLower
// (bits 0 to 3).
var plainPipeIDs [16]atomic.Pointer[[3]uint64]

func newPipeIDs(binary bool, p params) (text, json, canon uint64) {
	t := fmt.Sprintf("%t|%t|%t|%q", binary, p.valLower, p.exceptIC, p.except)
	return memoID("text|" + t), memoID(fmt.Sprintf("json|%s|%t", t, p.keyLower)), memoID(fmt.Sprintf("canon|%s|%t", t, p.keyLower))
}

type compiler struct {
	ev  *evaluator // the reference, which normalizes expected values
	err *Error     // the first compile-time error of the current stub
	// scripted is set once any predicate is an inject.
	scripted bool
	// pipes and leaves share what the predicates of a set compile to alike, both immutable
	// once made: the pipe of the same parameters without a selector, and the leaf of the same
	// expected string (not a regular expression). An imposter of 100,000 stubs on method and
	// path otherwise kept 100,000 copies of one pipe and of the method's leaf.
	pipes  map[params]*pipe
	leaves map[string]*eleaf
	// keyLists shares the key lists of expected objects (never changed once made: cheapFirst
	// orders a copy), by the keys joined with NULs.
	keyLists   map[string][]string
	keyBuf     []byte
	keyScratch []string
}

// compilers holds compilers between compiles: an imposter's compile is short and its maps of
// shared pipes, leaves and key lists are garbage after it (an admin POST/DELETE pair made
// them every time). A compiler that shared more than maxPooledShares is dropped, not kept.
var compilers = sync.Pool{New: func() any { return &compiler{ev: &evaluator{}} }}

const maxPooledShares = 64

// getCompiler returns a compiler with nothing shared yet, for predicates that are binary or not.
func getCompiler(binary bool) *compiler {
	cc := compilers.Get().(*compiler)
	cc.ev.binary = binary
	return cc
}

// release forgets what cc shared (the compiled predicates keep their pipes, leaves and key
// lists; cc keeps none of them) and returns it to the pool. cc is not used after.
func (cc *compiler) release() {
	if len(cc.pipes) > maxPooledShares || len(cc.leaves) > maxPooledShares || len(cc.keyLists) > maxPooledShares ||
		len(cc.ev.normalized) > maxPooledShares || len(cc.ev.parsed) > maxPooledShares ||
		cap(cc.keyBuf) > 4096 || cap(cc.keyScratch) > maxPooledShares {
		return
	}
	clear(cc.pipes)
	clear(cc.leaves)
	clear(cc.keyLists)
	clear(cc.keyScratch[:cap(cc.keyScratch)])
	clear(cc.ev.normalized)
	clear(cc.ev.parsed)
	*cc = compiler{ev: cc.ev, pipes: cc.pipes, leaves: cc.leaves, keyLists: cc.keyLists,
		keyBuf: cc.keyBuf[:0], keyScratch: cc.keyScratch[:0]}
	*cc.ev = evaluator{normalized: cc.ev.normalized, parsed: cc.ev.parsed}
	compilers.Put(cc)
}

// keys returns jsKeys(o), the same slice for the same keys in the same order.
func (cc *compiler) keys(o *config.Object) []string {
	b := cc.keyBuf[:0]
	for _, m := range o.Members {
		if _, isIndex := jsvalue.ArrayIndex(m.Key); isIndex {
			return jsKeys(o) // which puts them first
		}
		b = append(append(b, m.Key...), 0)
	}
	cc.keyBuf = b
	if ks, ok := cc.keyLists[string(b)]; ok && sameKeys(ks, o) {
		return ks
	}
	keys := jsKeys(o)
	if cc.keyLists == nil {
		cc.keyLists = map[string][]string{}
	}
	if len(cc.keyLists) < maxSharedLeaves {
		cc.keyLists[string(b)] = keys
	}
	return keys
}

// shareKeys returns the shared list equal to keys, or keys.
func (cc *compiler) shareKeys(keys []string) []string {
	b := cc.keyBuf[:0]
	for _, k := range keys {
		b = append(append(b, k...), 0)
	}
	cc.keyBuf = b
	if ks, ok := cc.keyLists[string(b)]; ok && slices.Equal(ks, keys) {
		return ks
	}
	keys = slices.Clip(slices.Clone(keys)) // keys may be a scratch list
	if cc.keyLists == nil {
		cc.keyLists = map[string][]string{}
	}
	if len(cc.keyLists) < maxSharedLeaves {
		cc.keyLists[string(b)] = keys
	}
	return keys
}

// sameKeys reports whether keys are o's keys in order (a key with a NUL could join alike).
func sameKeys(keys []string, o *config.Object) bool {
	if len(keys) != len(o.Members) {
		return false
	}
	for i, m := range o.Members {
		if keys[i] != m.Key {
			return false
		}
	}
	return true
}

// pipe returns the pipe of p, shared by the predicates of the same parameters when they name
// no selector (a selector's parameters are values, not comparable; its pipe is one's own).
func (cc *compiler) pipe(p params) *pipe {
	if p.jsonpath != nil || p.xpath != nil {
		return newPipe(p, cc.ev.binary)
	}
	if pp, ok := cc.pipes[p]; ok {
		return pp
	}
	pp := newPipe(p, cc.ev.binary)
	if cc.pipes == nil {
		cc.pipes = map[params]*pipe{}
	}
	cc.pipes[p] = pp
	return pp
}

// plainExpected is cc.toE(normalize(v, p)) for an expected object of strings under keys that
// are no array indexes, through a pipe that at most lowercases them (no except, not binary),
// made without the normalized object (100,000 of them were garbage); nil for any other v.
func (cc *compiler) plainExpected(v any, p params) *eobj {
	o := asObject(v)
	if o == nil || p.hasExcept || cc.ev.binary {
		return nil
	}
	for _, m := range o.Members {
		if _, isString := m.Value.(string); !isString {
			return nil
		}
		if _, isIndex := jsvalue.ArrayIndex(m.Key); isIndex {
			return nil
		}
	}
	keys := cc.keyScratch[:0]
	vals := make([]any, 0, len(o.Members))
	for _, m := range o.Members {
		k, s := m.Key, m.Value.(string)
		if p.keyLower {
			k = jsvalue.ToLower(k)
		}
		var l *eleaf
		if p.valLower {
			if low := jsvalue.ToLower(s); low != s {
				l = cc.leaf(low, nil)
			}
		}
		if l == nil {
			l = cc.leaf(s, m.Value) // the configured value, boxed already
		}
		if i := slices.Index(keys, k); i >= 0 {
			vals[i] = l // a key lowercased onto an earlier one replaces its value in place
			continue
		}
		keys, vals = append(keys, k), append(vals, l)
	}
	cc.keyScratch = keys
	return &eobj{keys: cc.shareKeys(keys), vals: vals}
}

// leaf is toE of string s, shared by value; boxed is s as a value when the caller has it.
func (cc *compiler) leaf(s string, boxed any) *eleaf {
	if l, ok := cc.leaves[s]; ok {
		return l
	}
	if boxed == nil {
		boxed = s
	}
	l := newLeaf(boxed, nil)
	if cc.leaves == nil {
		cc.leaves = map[string]*eleaf{}
	}
	if len(cc.leaves) < maxSharedLeaves {
		cc.leaves[s] = l
	}
	return l
}

// maxSharedLeaves bounds the leaves a compiler shares: the values many stubs repeat come first.
const maxSharedLeaves = 1024

func (cc *compiler) fail(e *Error) {
	if cc.err == nil {
		cc.err = e
	}
}

// pred compiles one predicate, as configured (its keys in their order).
func (cc *compiler) pred(v config.Value) *pred {
	p := cc.node(v)
	if v != nil && !p.sure() {
		if p.more == nil {
			p.more = &predMore{}
		}
		p.more.src = v
	}
	return p
}

// node compiles predicate v but for its source (see predMore.src).
func (cc *compiler) node(v config.Value) *pred {
	p := &pred{op: opNone}
	o := asObject(v)
	if o == nil {
		return p
	}
	for _, m := range o.Members { // jsKeys's order but for array indexes, which name no operator
		if i := slices.Index(opNames[:], m.Key); i >= 0 {
			p.op = opKind(i)
			break
		}
	}
	switch p.op {
	case opNone:
		return p
	case opNot:
		p.more = &predMore{sub: []*pred{cc.pred(prop(o, "not"))}}
		return p
	case opOr, opAnd:
		list, isArray := prop(o, opNames[p.op]).([]any)
		if !isArray {
			p.op = opNone // predicate.or.some is not a function: the reference raises it
			return p
		}
		more := &predMore{}
		for _, s := range list {
			more.sub = append(more.sub, cc.pred(s))
		}
		p.more = more
		return p
	case opInject:
		cc.scripted = true
		return p
	}
	params := paramsOf(o, opNames[p.op])
	if params.hasExcept {
		if _, err := compileJSRegex(params.except, params.exceptIC); err != nil {
			cc.fail(regexError(params.except, err))
			return p
		}
	}
	if p.op == opEquals {
		if exp := cc.plainExpected(prop(o, "equals"), params); exp != nil {
			p.pp = cc.pipe(params)
			p.exists = params.exists
			p.exp = exp
			cheapFirst(p.exp)
			p.fast = p.fastShape()
			return p
		}
	}
	var expected any
	var err error
	switch p.op {
	case opDeepEquals:
		expected, err = forceStringsJS(prop(o, "deepEquals"))
		if err == nil {
			expected, err = cc.ev.normalize(expected, params, false)
		}
	case opMatches:
		noexcept := params
		noexcept.hasExcept = false
		expected, err = cc.ev.normalize(prop(o, "matches"), noexcept, false)
	default:
		expected, err = cc.ev.normalize(prop(o, opNames[p.op]), params, false)
	}
	if err != nil {
		return p // the reference raises it
	}
	var re func(string) *jsRegexp
	if p.op == opMatches {
		// Mountebank compiles each pattern as it meets it; mockd refuses an invalid one at once.
		re = func(src string) *jsRegexp {
			r, err := compileJSRegex(src, params.ignoreCase)
			if err != nil {
				cc.fail(regexError(src, err))
			}
			return r
		}
	}
	p.pp = cc.pipe(params)
	p.exists = params.exists
	if exp, isObj := cc.toE(expected, re).(*eobj); isObj {
		p.exp = exp
		if !p.op.raises() {
			cheapFirst(p.exp)
		}
		if p.op == opDeepEquals {
			more := &predMore{}
			for _, k := range p.exp.keys {
				more.canon = append(more.canon, string(appendCanon(nil, prop(expected, k))))
			}
			p.more = more
		}
		p.fast = p.fastShape()
	}
	return p
}

// readsBody reports whether p may read the request's body or form (see Set.ReadsBody).
func (p *pred) readsBody() bool {
	switch p.op {
	case opNot, opOr, opAnd:
		return slices.ContainsFunc(p.subs(), (*pred).readsBody)
	case opInject, opNone:
		return true
	}
	if p.exp == nil || p.pp == nil || p.pp.params.jsonpath != nil || p.pp.params.xpath != nil {
		return true
	}
	for _, k := range p.exp.keys {
		if strings.EqualFold(k, "body") || strings.EqualFold(k, "form") {
			return true
		}
	}
	return false
}

// sure reports whether the fast node p answers every request itself, never unsure: an equals
// of strings on the request's string fields (method, path…) through a pipe that at most
// lowercases. It needs no source then (source makes one for the reference, which tests ask).
func (p *pred) sure() bool {
	if p.op != opEquals || !p.fast || p.exists || p.pp == nil || !p.pp.simple || p.exp == nil ||
		p.more != nil && (p.more.canon != nil || p.more.sub != nil) {
		return false
	}
	for i, k := range p.exp.keys {
		l, isLeaf := p.exp.vals[i].(*eleaf)
		if !isLeaf || !stringField(k) || l.re != nil {
			return false
		}
		if _, isString := l.v.(string); !isString {
			return false
		}
	}
	return true
}

// source returns the predicate as configured for the reference to evaluate, or, for a sure
// node, a predicate the reference evaluates alike: its expected object as compiled (keys and
// values as normalize makes them, which normalizing again leaves alone) with its case
// parameters.
func (p *pred) source() config.Value {
	if p.more != nil && p.more.src != nil || !p.sure() {
		if p.more == nil {
			return nil
		}
		return p.more.src
	}
	exp := &config.Object{Members: make([]config.Member, len(p.exp.keys))}
	for i, k := range p.exp.keys {
		exp.Members[i] = config.Member{Key: k, Value: p.exp.vals[i].(*eleaf).v}
	}
	return config.NewObject("equals", exp, "caseSensitive", !p.pp.valLower, "keyCaseSensitive", !p.pp.keyLower)
}

// Request fields by kind: strings, key-value lists, and the body (a string that may hold JSON).
func stringField(k string) bool {
	switch k {
	case "method", "path", "requestfrom", "requestFrom", "ip", "data":
		return true
	}
	return false
}

func kvField(k string) bool { return k == "query" || k == "headers" || k == "form" }

// fastShape reports whether eval.go evaluates p itself: an operator comparing fields through
// a pipe without base64, whose expected object names only request fields, with
//   - a scalar for a string field (method, path, requestFrom, ip, data, body),
//   - an object of scalars for query, headers and form,
//   - an object of scalars, objects and arrays of them for the body (no selector), or for deepEquals
//     any object or array,
//     which it compares by its stringification (predMore.canon),
//
// where except allows scalars only, deepEquals compares strings only (forceStrings made them),
// contains, startsWith and
// endsWith compare strings only, and a selector (jsonpath or xpath) is only applied to the
// body (the expected object then names the body only).
func (p *pred) fastShape() bool {
	pp := p.pp
	if pp.selOther {
		return false
	}
	if pp.binary {
		return p.fastBinary()
	}
	if pp.sel != nil && (len(p.exp.keys) != 1 || p.exp.keys[0] != "body" || p.op == opDeepEquals) {
		return false
	}
	for i, k := range p.exp.keys {
		switch e := p.exp.vals[i].(type) {
		case *eleaf:
			if !stringField(k) && k != "body" {
				return false
			}
			if _, isString := e.v.(string); !isString && (p.op.raises() || p.op == opDeepEquals) {
				return false
			}
		case *eobj, *earr:
			if pp.except {
				return false // except is applied to request strings compared whole only
			}
			if p.op == opDeepEquals && k == "body" && pp.sel == nil {
				continue // compared whole, by its stringification
			}
			o, isObj := e.(*eobj)
			if !isObj || pp.sel != nil || (!kvField(k) && k != "body") || (p.op == opDeepEquals && !kvField(k)) {
				return false
			}
			if !fastObject(o, p.op.raises(), k == "body") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// fastBinary reports whether eval.go evaluates p of a binary-mode imposter (a tcp imposter with
// mode binary, whose request data is base64): equals, contains, startsWith or endsWith with
// strings for string fields, which it compares after the pipe base64-decodes the request's
// (exceptPiped), as the reference's normalize does.
func (p *pred) fastBinary() bool {
	switch p.op {
	case opEquals, opContains, opStartsWith, opEndsWith:
	default:
		return false
	}
	return p.exp.stringsOnStringFields()
}

// stringsOnStringFields reports whether every key of e names a string field of the request
// (method, path…) and expects a string.
func (e *eobj) stringsOnStringFields() bool {
	for i, k := range e.keys {
		l, isLeaf := e.vals[i].(*eleaf)
		if !isLeaf || !stringField(k) {
			return false
		}
		if _, isString := l.v.(string); !isString {
			return false
		}
	}
	return true
}

// fastObject reports whether fast nodes compare o, an object of scalars (strings for the
// operators that raise), or for the body also of objects and arrays of them.
func fastObject(o *eobj, raises, nested bool) bool {
	for _, v := range o.vals {
		switch t := v.(type) {
		case *eleaf:
			if _, isString := t.v.(string); !isString && raises {
				return false
			}
		case *eobj:
			if !nested || !fastObject(t, raises, nested) {
				return false
			}
		case *earr:
			if !nested {
				return false
			}
			for _, x := range t.elems {
				if _, isArr := x.(*earr); isArr || !fastObject(&eobj{vals: []any{x}}, raises, nested) {
					return false // an array in an array is left to the reference
				}
			}
		default:
			return false
		}
	}
	return true
}

// cheapFirst orders the top-level fields so plain request strings are compared before
// objects and bodies. Only for operators that raise no error from a field: for those the order
// decides only which of two failing fields is looked at.
func cheapFirst(o *eobj) {
	rank := func(k string) int {
		switch strings.ToLower(k) {
		case "method", "path", "requestfrom", "ip", "data":
			return 0
		case "query", "headers", "form":
			return 1
		case "body":
			return 2
		}
		return 3
	}
	if slices.IsSortedFunc(o.keys, func(a, b string) int { return rank(a) - rank(b) }) {
		return // most are: nothing to allocate
	}
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank(o.keys[a]) - rank(o.keys[b]) })
	keys := make([]string, len(o.keys))
	vals := make([]any, len(o.vals))
	for i, j := range idx {
		keys[i], vals[i] = o.keys[j], o.vals[j]
	}
	o.keys, o.vals = keys, vals
}

// newPipe is the transformation of request strings the reference's params describe, with the
// selector compiled when fast nodes can apply it: a jsonpath or xpath selector that compiled,
// binds every prefix it uses and selects nodes, a number or a boolean, through a pipe without
// except or base64.
func newPipe(p params, binary bool) *pipe {
	pp := &pipe{keyLower: p.keyLower, valLower: p.valLower, except: p.hasExcept, binary: binary, params: p}
	pp.simple = !binary && !p.hasExcept && p.jsonpath == nil && p.xpath == nil
	pp.textID, pp.jsonID, pp.canonID = pipeIDs(binary, p)
	if p.jsonpath == nil && p.xpath == nil {
		return pp
	}
	pp.selOther = true
	if binary || p.hasExcept {
		return pp
	}
	if p.jsonpath != nil {
		src, isString := prop(p.jsonpath, "selector").(string)
		if !isString {
			return pp
		}
		if p.selLower {
			src = jsvalue.ToLower(src)
		}
		sel := newJSONPathSelector(src)
		if !sel.jpOK {
			return pp
		}
		pp.sel = sel
	} else {
		src, isString := prop(p.xpath, "selector").(string)
		if !isString {
			return pp
		}
		ns := map[string]string{}
		if nsObj := asObject(prop(p.xpath, "ns")); nsObj != nil {
			for _, m := range nsObj.Members {
				v, isString := m.Value.(string)
				if !isString {
					return pp
				}
				if p.xpLower {
					v = jsvalue.ToLower(v)
				}
				ns[m.Key] = v
			}
		}
		if p.xpLower {
			src = jsvalue.ToLower(src)
		}
		x, err := xpath.CompileWithNS(src, ns)
		if err != nil {
			return pp // an unbound prefix or a malformed selector: the reference raises it
		}
		if _, isString := safeEval(x, emptyDoc()).(string); isString {
			return pp
		}
		pp.sel = &selector{xml: true, xpOK: true, srcText: src}
		pp.sel.xpPool.New = func() any {
			x, _ := xpath.CompileWithNS(src, ns)
			return x
		}
		pp.sel.xpPool.Put(x)
	}
	pp.selOther = false
	pp.selID = memoID(fmt.Sprintf("sel|%t|%t|%t|%q", pp.keyLower, pp.valLower, pp.sel.xml, pp.sel.srcText) + fmt.Sprint(config.Plain(p.xpath)))
	return pp
}

// newJSONPathSelector compiles a jsonpath selector; one that does not parse selects nothing.
func newJSONPathSelector(src string) *selector {
	sel := &selector{srcText: src}
	if x, err := jsonpath.Parse(src); err == nil {
		sel.jpExpr, sel.jpOK = x, true
		if n := len(x); n > 1 {
			if ch, ok := x[n-1].(jp.Child); ok && string(ch) == "length" {
				sel.jpLength = x[:n-1]
			}
		}
		sel.jpKeys = childNames(x)
	}
	return sel
}

func compileUnbound(sel string, ns map[string]string) (*xpath.Expr, error) {
	all := make(map[string]string, len(ns)+1)
	for k, v := range ns {
		all[k] = v
	}
	for i := 0; i < 16; i++ {
		x, err := xpath.CompileWithNS(sel, all)
		if err == nil || !strings.HasPrefix(err.Error(), "prefix ") {
			return x, err
		}
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(err.Error(), "prefix "), "."), " not defined")
		all[name] = "\x00unbound:" + name
	}
	return nil, fmt.Errorf("too many unbound prefixes")
}

func emptyDoc() *xmlquery.Node { return &xmlquery.Node{Type: xmlquery.DocumentNode} }

func safeEval(x *xpath.Expr, doc *xmlquery.Node) (v any) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return x.Evaluate(newNav(doc))
}

// toE converts a normalized expected value into the tree fast nodes compare with, sharing the
// string leaves of cc's predicates (see compiler.leaves). re, when set, compiles each scalar as a
// regular expression (matches).
func (cc *compiler) toE(v any, re func(string) *jsRegexp) any {
	switch t := v.(type) {
	case []any:
		a := &earr{elems: make([]any, len(t))}
		for i, e := range t {
			a.elems[i] = cc.toE(e, re)
		}
		return a
	case *config.Object:
		if t == nil {
			break
		}
		o := &eobj{keys: cc.keys(t)}
		o.vals = make([]any, len(o.keys))
		for i, k := range o.keys {
			e, _ := t.Get(k)
			o.vals[i] = cc.toE(e, re)
		}
		return o
	case string:
		if re == nil {
			return cc.leaf(t, v)
		}
	}
	return newLeaf(v, re)
}

// newLeaf is the leaf of scalar v.
func newLeaf(v any, re func(string) *jsRegexp) *eleaf {
	l := &eleaf{v: v, s: jsString(v)}
	if v == nil {
		l.s = "null"
	}
	l.num = math.NaN()
	if f, isNum := numberFor(l.s); isNum {
		l.num = f
	}
	if re != nil {
		l.re = re(l.s)
	}
	return l
}

// numberFor returns the number whose JavaScript String is s, if any.
func numberFor(s string) (float64, bool) {
	if s == "" || len(s) > 32 {
		return 0, false
	}
	// What String gives for a number starts with a digit, "-", "Infinity" or "NaN": anything
	// else is not one, known without ParseFloat's error (which allocates).
	if c := s[0]; (c < '0' || c > '9') && c != '-' && c != 'I' && c != 'N' {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, jsvalue.FormatNumber(f) == s
}

// childNames returns the names of x when x is $ followed by names only, as $.a.b is: such a path
// selects at most one value, which walking the maps finds (see safeJPGet). Else it returns nil,
// and so for a name that also reads arrays or strings (an array index or "length": see
// jsonpath.Select).
func childNames(x jp.Expr) []string {
	if len(x) < 2 {
		return nil
	}
	if _, ok := x[0].(jp.Root); !ok {
		return nil
	}
	keys := make([]string, 0, len(x)-1)
	for _, f := range x[1:] {
		ch, ok := f.(jp.Child)
		if !ok {
			return nil
		}
		if _, isIndex := jsvalue.ArrayIndex(string(ch)); isIndex || ch == "length" {
			return nil
		}
		keys = append(keys, string(ch))
	}
	return keys
}

// fromPlain is config.FromPlain for predicates decoded into Go maps, which lost the order of
// their keys: a predicate naming several operators uses the first in predicates.js's order.
func fromPlain(v any) config.Value {
	o, isObj := config.FromPlain(v).(*config.Object)
	if !isObj || o == nil {
		return config.FromPlain(v)
	}
	return orderOperators(o)
}

func orderOperators(o *config.Object) *config.Object {
	rank := func(k string) int {
		if i := slices.Index(opNames[:], k); i >= 0 {
			return i
		}
		return len(opNames)
	}
	slices.SortStableFunc(o.Members, func(a, b config.Member) int { return rank(a.Key) - rank(b.Key) })
	for i, m := range o.Members {
		switch m.Key {
		case "not":
			if sub, ok := m.Value.(*config.Object); ok && sub != nil {
				o.Members[i].Value = orderOperators(sub)
			}
		case "or", "and":
			if list, ok := m.Value.([]any); ok {
				for j, e := range list {
					if sub, ok := e.(*config.Object); ok && sub != nil {
						list[j] = orderOperators(sub)
					}
				}
			}
		}
	}
	return o
}
