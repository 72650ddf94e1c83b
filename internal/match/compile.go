package match

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"

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
	opThrow // evaluating raises err
)

// opNames lists the operators in the order predicates.js defines them; a
// predicate naming several uses the first in this order (the decoded JSON has
// lost the key order JavaScript would use).
var opNames = [...]string{"equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists", "not", "or", "and", "inject"}

// pred is one compiled predicate.
type pred struct {
	op     opKind
	pp     *pipe
	exp    *eobj    // normalized expected value, as an object
	canon  []string // deepEquals: stable stringification of each exp value
	exists bool     // predicateConfig.exists is truthy
	sub    []*pred  // not (one), or, and
	src    string   // inject source
	err    *Error   // opThrow, or an error raised before comparing (expected null)
}

// pipe is how a predicate transforms request strings (normalize in
// predicates.js): base64 decode, lowercase, except, then a selector.
type pipe struct {
	keyLower bool
	valLower bool
	except   *jsRegexp
	binary   bool
	sel      *selector
	selErr   *Error // raised as soon as a request string is transformed
	force    bool   // deepEquals: forceStrings before selecting
	simple   bool   // no binary, except or selector
	textID   uint64 // memo keys for values derived from the body
	jsonID   uint64
	selID    uint64
	canonID  uint64
}

type selector struct {
	xml      bool
	jpExpr   jp.Expr
	jpOK     bool
	jpLength jp.Expr     // jpExpr without a final .length step
	jpKeys   []string    // jpExpr's names when it is $ and names only ($.a.b), else nil
	xpExpr   *xpath.Expr // compiled at Compile; evaluations take one from xpPool
	xpPool   sync.Pool   // an Expr keeps evaluation state: one per goroutine
	srcText  string
	unbound  bool // the selector uses a prefix ns does not bind
}

// eleaf is a scalar expected value (string, float64, bool or nil).
type eleaf struct {
	v     any
	s     string // String(v)
	re    *jsRegexp
	num   float64 // the number whose String is s, when isNum
	isNum bool
}

// JSValue is the constant's value, so jsvalue reads an *eleaf as that value.
func (l *eleaf) JSValue() any { return l.v }

// eobj is an expected object; keys are in Object.keys order.
type eobj struct {
	keys []string
	vals []any // *eleaf, *eobj or *earr
}

// earr is an expected array (already sorted as normalize sorts it).
type earr struct{ elems []any }

// JSValue is the array of the constants, so jsvalue reads an *earr as that array.
func (a *earr) JSValue() any { return a.elems }

var (
	_ jsvalue.Valuer = (*eleaf)(nil)
	_ jsvalue.Valuer = (*earr)(nil)
)

type compiler struct {
	binary bool
	err    *Error // first compile-time error of the current stub
	// scripted is set once any predicate is an inject.
	scripted bool
}

func (cc *compiler) fail(e *Error) {
	if cc.err == nil {
		cc.err = e
	}
}

var memoIDs sync.Map // string -> uint64
var memoNext atomic.Uint64

func memoID(key string) uint64 {
	if v, ok := memoIDs.Load(key); ok {
		return v.(uint64)
	}
	v, _ := memoIDs.LoadOrStore(key, memoNext.Add(1))
	return v.(uint64)
}

func (cc *compiler) pred(v any) *pred {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return &pred{op: opThrow, err: typeError("Cannot convert undefined or null to object")}
		}
		return &pred{op: opThrow, err: validationError("missing predicate", v)}
	}
	op := -1
	for i, name := range opNames {
		if _, ok := m[name]; ok {
			op = i
			break
		}
	}
	if op < 0 {
		return &pred{op: opThrow, err: validationError("missing predicate", v)}
	}
	p := &pred{op: opKind(op)}
	switch p.op {
	case opNot:
		p.sub = []*pred{cc.pred(m["not"])}
		return p
	case opOr, opAnd:
		name := opNames[op]
		arr, ok := m[name].([]any)
		if !ok {
			if m[name] == nil {
				return &pred{op: opThrow, err: typeError(fmt.Sprintf("Cannot read properties of null (reading '%s')", map[bool]string{true: "some", false: "every"}[p.op == opOr]))}
			}
			return &pred{op: opThrow, err: typeError(fmt.Sprintf("predicate.%s.%s is not a function", name, map[bool]string{true: "some", false: "every"}[p.op == opOr]))}
		}
		for _, s := range arr {
			p.sub = append(p.sub, cc.pred(s))
		}
		return p
	case opInject:
		cc.scripted = true
		if s, ok := m["inject"].(string); ok {
			p.src = s
		} else {
			p.src = jsString(m["inject"])
		}
		return p
	}
	p.exists = jsvalue.Truthy(m["exists"])
	p.pp = cc.pipe(m, p.op)
	expected := m[opNames[op]]

	if p.op == opDeepEquals {
		norm := cc.normalize(forceStrings(expected), p.pp.keyLower, p.pp.valLower, p.pp.except)
		p.exp = topObject(toE(norm, nil))
		if p.exp == nil {
			p.exp = &eobj{}
		}
		cheapFirst(p.exp)
		for _, v := range p.exp.vals {
			p.canon = append(p.canon, string(appendCanon(nil, eplain(v))))
		}
		return p
	}
	var norm any
	if p.op == opMatches {
		norm = cc.normalize(expected, p.pp.keyLower, false, nil)
	} else {
		norm = cc.normalize(expected, p.pp.keyLower, p.pp.valLower, p.pp.except)
	}
	var re func(string) *jsRegexp
	if p.op == opMatches {
		ic := !p.pp.valLowerCS()
		re = func(src string) *jsRegexp {
			r, err := compileJSRegex(src, ic)
			if err != nil {
				cc.fail(regexError(src, err))
				return nil
			}
			return r
		}
	}
	if norm == nil {
		p.err = typeError("Cannot convert undefined or null to object")
		p.exp = &eobj{}
		return p
	}
	p.exp = topObject(toE(norm, re))
	if p.exp == nil {
		p.exp = &eobj{}
	}
	cheapFirst(p.exp)
	return p
}

// cheapFirst orders the top-level fields so plain request strings are
// compared before objects and bodies. The JSON key order Mountebank would
// follow is lost in decoding; the order only decides which of two failing
// fields is looked at, and these operators raise no error from a field.
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
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank(o.keys[idx[a]]) < rank(o.keys[idx[b]]) })
	keys := make([]string, len(o.keys))
	vals := make([]any, len(o.vals))
	for i, j := range idx {
		keys[i], vals[i] = o.keys[j], o.vals[j]
	}
	o.keys, o.vals = keys, vals
}

// valLowerCS reports the caseSensitive flag a matches predicate was given
// (stored in keyLower: matches lowercases keys only when case-insensitive).
func (pp *pipe) valLowerCS() bool { return !pp.keyLower }

// pipe builds the transformation config of one predicate as normalize,
// selectTransform and tryJSON derive it from the predicate's parameters.
func (cc *compiler) pipe(m map[string]any, op opKind) *pipe {
	cs := jsvalue.Truthy(m["caseSensitive"])
	pp := &pipe{binary: cc.binary, force: op == opDeepEquals}
	exceptFlagsCS := cs
	var selLower, nsLower bool
	if op == opMatches {
		// matches: clone = merge(predicate, {caseSensitive: true, keyCaseSensitive: cs})
		pp.keyLower = !cs
		pp.valLower = false
		exceptFlagsCS = true
		selLower = !cs
		nsLower = false
	} else {
		kcs, present := m["keyCaseSensitive"]
		if !present {
			kcs, present = m["caseSensitive"]
			if !present {
				kcs = jsvalue.Undef
			}
		}
		pp.keyLower = kcs == false || !cs
		pp.valLower = !cs
		selLower = !jsvalue.Truthy(kcs)
		nsLower = !cs
	}
	if ex := m["except"]; jsvalue.Truthy(ex) {
		src := jsString(ex)
		re, err := compileJSRegex(src, !exceptFlagsCS)
		if err != nil {
			cc.fail(regexError(src, err))
		} else {
			pp.except = re
		}
	}
	if jpv := m["jsonpath"]; jsvalue.Truthy(jpv) {
		pp.sel = &selector{}
		sel, isStr := field(jpv, "selector").(string)
		switch {
		case !isStr && selLower:
			pp.selErr = typeError("Cannot read properties of undefined (reading 'toLowerCase')")
		case !isStr:
			// JSONPath(undefined, json) selects nothing.
		default:
			if selLower {
				sel = jsvalue.ToLower(sel)
			}
			pp.sel = newJSONPathSelector(sel)
		}
		if cc.binary {
			pp.selErr = validationError("the jsonpath predicate parameter is not allowed in binary mode", nil)
		}
	} else if xpv := m["xpath"]; jsvalue.Truthy(xpv) {
		pp.sel = &selector{xml: true}
		sel, isStr := field(xpv, "selector").(string)
		ns := map[string]string{}
		if nsv, ok := field(xpv, "ns").(map[string]any); ok {
			for k, v := range nsv {
				s, ok := v.(string)
				if !ok && nsLower {
					pp.selErr = typeError("text.toLowerCase is not a function")
				}
				if !ok {
					s = jsString(v)
				}
				if nsLower {
					s = jsvalue.ToLower(s)
				}
				ns[k] = s
			}
		}
		switch {
		case !isStr && nsLower:
			pp.selErr = typeError("Cannot read properties of undefined (reading 'toLowerCase')")
		case !isStr:
			pp.selErr = validationError("malformed xpath predicate selector", nil)
		default:
			if nsLower {
				sel = jsvalue.ToLower(sel)
			}
			pp.sel.srcText = sel
			x, err := xpath.CompileWithNS(sel, ns)
			if err != nil && strings.HasPrefix(err.Error(), "prefix ") {
				// An unbound prefix only fails once a document has elements
				// (xpath.js resolves the QName then): bind it to a namespace
				// nothing uses and raise the error at evaluation.
				x, err = compileUnbound(sel, ns)
				pp.sel.unbound = true
			}
			if err != nil {
				if pp.selErr == nil {
					pp.selErr = validationError("malformed xpath predicate selector", sel)
				}
			} else {
				pp.sel.xpExpr = x
				unbound := pp.sel.unbound
				pp.sel.xpPool.New = func() any {
					// An Expr keeps evaluation state: one per goroutine.
					if unbound {
						x, _ := compileUnbound(sel, ns)
						return x
					}
					x, _ := xpath.CompileWithNS(sel, ns)
					return x
				}
				pp.sel.xpPool.Put(x)
				if _, isString := safeEval(x, emptyDoc()).(string); isString && pp.selErr == nil {
					pp.selErr = typeError("result.map is not a function")
				}
			}
		}
		if cc.binary {
			pp.selErr = validationError("the xpath predicate parameter is not allowed in binary mode", nil)
		}
	}
	pp.simple = !pp.binary && pp.except == nil && pp.sel == nil
	exceptKey := ""
	if pp.except != nil {
		exceptKey = pp.except.String()
	}
	text := fmt.Sprintf("%t|%t|%q", pp.binary, pp.valLower, exceptKey)
	pp.textID = memoID("text|" + text)
	pp.jsonID = memoID(fmt.Sprintf("json|%s|%t", text, pp.keyLower))
	if pp.sel != nil {
		pp.selID = memoID(fmt.Sprintf("sel|%s|%t|%t|%t|%q", text, pp.keyLower, pp.force, pp.sel.xml, pp.sel.srcText) + fmt.Sprint(m["xpath"]))
	}
	pp.canonID = memoID(fmt.Sprintf("canon|%s|%t", text, pp.keyLower))
	return pp
}

// newJSONPathSelector compiles a jsonpath selector; one that does not parse selects nothing.
func newJSONPathSelector(src string) *selector {
	sel := &selector{srcText: src}
	if x, err := jp.ParseString(src); err == nil {
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

func field(v any, name string) any {
	if m, ok := v.(map[string]any); ok {
		if f, ok := m[name]; ok {
			return f
		}
	}
	return jsvalue.Undef
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

// normalize is predicates.js normalize for an expected value (no selectors):
// keys maybe lowercased, strings base64-decoded (binary), lowercased and
// stripped by except, arrays sorted.
func (cc *compiler) normalize(v any, keyLower, valLower bool, except *jsRegexp) any {
	return transformAll(v, keyLower, func(s string) string {
		if cc.binary {
			s = decodeBase64(s)
		}
		if valLower {
			s = jsvalue.ToLower(s)
		}
		if except != nil {
			s = except.ReplaceAllString(s, "")
		}
		return s
	}, true)
}

// transformAll applies keyLower to object keys and str to strings, sorting
// arrays when sortArrays is set. It returns a new value.
func transformAll(v any, keyLower bool, str func(string) string, sortArrays bool) any {
	switch t := v.(type) {
	case string:
		return str(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = transformAll(e, keyLower, str, sortArrays)
		}
		if sortArrays {
			out = sortJS(out)
		}
		return out
	case map[string]any:
		key := func(k string) string {
			if keyLower {
				return jsvalue.ToLower(k)
			}
			return k
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[key(k)] = transformAll(e, keyLower, str, sortArrays)
		}
		if len(out) < len(t) {
			// Lowercasing made keys collide: assigned in JavaScript's key order, the last wins.
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			jsKeyOrder(keys)
			for _, k := range keys {
				out[key(k)] = transformAll(t[k], keyLower, str, sortArrays)
			}
		}
		return out
	}
	return v
}

// forceStrings is predicates.js forceStrings.
func forceStrings(v any) any {
	switch t := v.(type) {
	case nil:
		return "null"
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = forceStrings(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = forceStrings(e)
		}
		return out
	case jsvalue.Undefined:
		return v
	}
	return jsString(v)
}

// toE converts a normalized plain value into the expected tree.
func toE(v any, re func(string) *jsRegexp) any {
	switch t := v.(type) {
	case []any:
		a := &earr{elems: make([]any, len(t))}
		for i, e := range t {
			a.elems[i] = toE(e, re)
		}
		return a
	case map[string]any:
		o := &eobj{keys: make([]string, 0, len(t))}
		for k := range t {
			o.keys = append(o.keys, k)
		}
		jsKeyOrder(o.keys)
		o.vals = make([]any, len(o.keys))
		for i, k := range o.keys {
			o.vals[i] = toE(t[k], re)
		}
		return o
	}
	l := &eleaf{v: v, s: jsString(v)}
	if v == nil {
		l.s = "null"
	}
	l.num, l.isNum = numberFor(l.s)
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
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, jsvalue.FormatNumber(f) == s
}

// topObject turns the top-level expected value into the object whose keys
// predicateSatisfied iterates (Object.keys of a string or array gives its
// indexes; of a number or boolean, nothing).
func topObject(v any) *eobj {
	switch t := v.(type) {
	case *eobj:
		return t
	case *earr:
		o := &eobj{}
		for i, e := range t.elems {
			o.keys = append(o.keys, fmt.Sprint(i))
			o.vals = append(o.vals, e)
		}
		return o
	case *eleaf:
		s, ok := t.v.(string)
		if !ok {
			return &eobj{}
		}
		o := &eobj{}
		for i, n := 0, jsvalue.Len16(s); i < n; i++ {
			ch, _ := jsvalue.CharAt16(s, i)
			o.keys = append(o.keys, fmt.Sprint(i))
			l := &eleaf{v: ch, s: ch}
			if t.re != nil {
				l.re, _ = compileJSRegex(ch, t.re.ic)
			}
			o.vals = append(o.vals, l)
		}
		return o
	}
	return nil
}

// eplain converts an expected tree back to plain values (for stringify).
func eplain(v any) any {
	switch t := v.(type) {
	case *eleaf:
		return t.v
	case *earr:
		out := make([]any, len(t.elems))
		for i, e := range t.elems {
			out[i] = eplain(e)
		}
		return out
	case *eobj:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			m[k] = eplain(t.vals[i])
		}
		return m
	}
	return v
}

// decodeBase64 is Buffer.from(s, 'base64').toString(): lenient about the
// alphabet (standard and URL-safe), skipping other characters, stopping at '='.
func decodeBase64(s string) string {
	out := make([]byte, 0, len(s)*3/4)
	var acc uint32
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c >= 'A' && c <= 'Z':
			v = c - 'A'
		case c >= 'a' && c <= 'z':
			v = c - 'a' + 26
		case c >= '0' && c <= '9':
			v = c - '0' + 52
		case c == '+' || c == '-':
			v = 62
		case c == '/' || c == '_':
			v = 63
		case c == '=':
			i = len(s)
			continue
		default:
			continue
		}
		acc = acc<<6 | uint32(v)
		n++
		if n == 4 {
			out = append(out, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	switch n {
	case 2:
		out = append(out, byte(acc>>4))
	case 3:
		out = append(out, byte(acc>>10), byte(acc>>2))
	}
	return jsvalue.DecodeUTF8(out)
}

// childNames returns the names of x when x is $ followed by names only, as $.a.b is: such a path
// selects at most one value, which walking the maps finds (see safeJPGet). Else it returns nil.
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
		keys = append(keys, string(ch))
	}
	return keys
}
