package match

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// index narrows the stubs a request can match. A stub whose first predicates
// are equals or deepEquals with a plain pipe (no except, selector or binary
// mode), one of them with a literal path (or, failing that, method), can only
// match requests with that normalized value; such predicates cannot throw, so
// skipping the stub never hides an error Mountebank would raise (it stops at
// the first predicate that fails). Every other stub is always a candidate.
// Candidates are merged in stub order, so the first match is exactly
// Mountebank's.
//
// An index files the stubs lo to hi-1 of its Set (all of them, but for the levels a Set
// appended to keeps: see Set.tail).
type index struct {
	lo, hi             int32
	pathCS, pathCI     litMap
	methodCS, methodCI litMap
	// ids and multi are the stub lists of the literal maps: a literal one stub requires lists
	// ids[i-lo:i-lo+1], one more require multi[k] (see litMap).
	ids     []int32
	multi   [][]int32
	groups  []*fieldGroup
	regexes []*regexGroup
	always  []int32
	all     bool // nothing indexed: scan every stub
	// pathsOnly: every stub is filed under a literal path (pathCS, pathCI), none under a
	// method, a field or a regular expression, and those always a candidate (a catch-all, a
	// proxy recording with proxyOnce) come after all of them (findByPath).
	pathsOnly bool
	// pathCSFew and pathCIFew list the entries of pathCS and pathCI when these hold at most
	// fewPaths (nil otherwise): findByPath compares the request's path with each rather than
	// hashing it for the map (a map lookup was ~0.13k instructions of a one-stub imposter's
	// request).
	pathCSFew, pathCIFew []litEntry
	// settled[i-lo] is set when the path bucket stub i is filed under says all its predicates
	// ask of the path, and what is left is at most a method to compare (see settledBy).
	settled []settled
	methods []string // the methods settled stubs compare, each once
}

// settled is a settledStub as the index keeps it: 8 B a stub (not 24), its method in
// index.methods.
type settled struct {
	method        uint32
	ok, hasMethod bool
	ci            bool
}

// litMap files stubs by a literal: i >= 0 is the one stub lo+i, -k-1 the stubs multi[k] (most
// literals of a large imposter are one stub's: 100,000 paths took a list each).
type litMap map[string]int32

// add files stub i (the highest so far) under key.
func (x *index) add(m litMap, key string, i int32) {
	v, ok := m[key]
	switch {
	case !ok:
		m[key] = i - x.lo
	case v >= 0:
		x.multi = append(x.multi, []int32{x.lo + v, i})
		m[key] = -int32(len(x.multi))
	default:
		x.multi[-v-1] = append(x.multi[-v-1], i)
	}
}

// list returns the stubs filed under key in m.
func (x *index) list(m litMap, key string) []int32 {
	v, ok := m[key]
	if !ok {
		return nil
	}
	return x.stubsOf(v)
}

// stubsOf returns the stubs of a litMap's value v.
func (x *index) stubsOf(v int32) []int32 {
	if v >= 0 {
		return x.ids[v : v+1 : v+1]
	}
	return x.multi[-v-1]
}

// litEntry is an entry of a litMap: its key and value.
type litEntry struct {
	key string
	v   int32
}

// fewPaths is how many paths an index lists (pathCSFew, pathCIFew) besides filing them in
// its maps: comparing a path with each costs less than hashing it up to about that many.
const fewPaths = 4

// fewEntries lists m's entries, or returns nil when m is empty or holds more than fewPaths.
func fewEntries(m litMap) []litEntry {
	if len(m) == 0 || len(m) > fewPaths {
		return nil
	}
	few := make([]litEntry, 0, len(m))
	for k, v := range m {
		few = append(few, litEntry{k, v})
	}
	return few
}

// listFew is list for the entries of a map that fewEntries listed.
func (x *index) listFew(few []litEntry, key string) []int32 {
	for i := range few {
		if few[i].key == key {
			return x.stubsOf(few[i].v)
		}
	}
	return nil
}

// settledStub is a stub whose predicates are equals or deepEquals, together asking for one
// non-empty literal path and at most one literal method, as plain strings (the usual one
// predicate on both, or proxyOnce's recorded method and path predicates). Being a candidate
// (its path bucket is the request's) proves the path equal, since the bucket key is the path
// transformed as the predicate transforms it; the method is compared the same way, so the
// predicates need not run.
type settledStub struct {
	ok, hasMethod, ci bool
	method            string // as transformed by its predicate's pipe
}

// settledBy returns the settledStub of a stub's predicates.
func settledBy(ps []*pred) settledStub {
	var out settledStub
	hasPath := false
	for _, p := range ps {
		if !plainEquals(p) || p.exists {
			return settledStub{}
		}
		names := &fieldNames
		if p.pp.keyLower {
			names = &fieldNamesLower
		}
		for i, k := range p.exp.keys {
			l, isLeaf := p.exp.vals[i].(*eleaf)
			if !isLeaf {
				return settledStub{}
			}
			if _, isStr := l.v.(string); !isStr {
				return settledStub{}
			}
			switch k {
			case names[fPath]:
				if l.s == "" || hasPath {
					return settledStub{}
				}
				hasPath = true
			case names[fMethod]:
				if out.hasMethod {
					return settledStub{}
				}
				out.hasMethod, out.method, out.ci = true, l.s, p.pp.valLower
			default:
				return settledStub{}
			}
		}
	}
	out.ok = hasPath
	return out
}

// plainEquals reports whether p is equals or deepEquals with a plain pipe and an expected
// object: a predicate that cannot throw.
func plainEquals(p *pred) bool {
	return (p.op == opEquals || p.op == opDeepEquals) && p.pp != nil && p.pp.simple && p.exp != nil
}

// decide reports whether settled stub st matches a request with this method, given that the
// stub is a candidate.
func (x *index) decide(st *settled, method string) bool {
	if !st.hasMethod {
		return true
	}
	want := x.methods[st.method]
	if !st.ci {
		return method == want
	}
	if eq, sure := equalLowerASCII(method, want); sure {
		return eq
	}
	return jsvalue.ToLower(method) == want
}

// equalLowerASCII reports whether s lowercased is lower, with sure false when it cannot tell
// without lowercasing s in full: s has a byte that is not ASCII before any difference. Eight
// bytes at a time (a binary tcp payload compared with a stub's, a byte at a time, cost ~14
// instructions a byte).
func equalLowerASCII(s, lower string) (eq, sure bool) {
	if len(s) != len(lower) {
		return false, isASCII(s) // (lowercasing keeps an ASCII text's length)
	}
	lower = lower[:len(s)]
	const hi = 0x8080808080808080
	word := func(s string) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8)) }
	i := 0
	for len(s) >= 8 {
		w := word(s[i:])
		if w&hi != 0 {
			break // a byte past ASCII: the bytes from this word on one at a time
		}
		// Capitals (see isLowerASCII) get their 0x20 bit.
		w |= (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & hi >> 2
		if w != word(lower[i:]) {
			return false, true
		}
		if i+8 == len(s) {
			return true, true
		}
		i = min(i+8, len(s)-8) // the last word overlaps the one before
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return false, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false, true // the bytes before are ASCII: lowercased in place
		}
	}
	return true, true
}

// isLowerASCII reports whether s is ASCII without capital letters, which lowercases to itself:
// eight bytes at a time.
func isLowerASCII(s string) bool {
	const hi = 0x8080808080808080
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
		// ASCII bytes (no high bit): b+0x3f has its high bit from 'A' on, b+0x25 from 'Z'+1
		// on, and neither carries into the next byte.
		if w&hi != 0 || (w+0x3f3f3f3f3f3f3f3f)&^(w+0x2525252525252525)&hi != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// fieldGroup indexes stubs whose first predicate is equals with a literal value on one key of
// the JSON body, the headers or the query, e.g. {"equals": {"body": {"id": 42}}} or
// {"equals": {"headers": {"X-Tenant": "a"}}}, by that value (all stubs of a group share the
// field, the key and the pipe's key and value case). Such a predicate is false unless the
// request's value under that key (as the predicate sees it: transformed by the pipe) is that
// literal, or an array containing it; a body that parses to an array makes every stub of a
// body group a candidate.
//
// A group with sel set indexes stubs whose first predicate is equals with a literal body and a
// JSONPath or XPath selector, e.g. {"equals": {"body": "cust-7"}, "jsonpath": {"selector":
// "$.customer.id"}}, by that literal (all stubs of the group share the selector and its
// options): the predicate is false unless what the selector selects is that literal, or an
// array with it.
type fieldGroup struct {
	probe *pred   // any predicate of the group: sets the pipe that reads the value
	field fieldID // fBody, fHeaders or fQuery
	key   string
	sel   bool // the body as the probe's selector selects it (key is empty)
	// keys are the body keys scanFields reads, key at keys[keyAt]: the keys the probe compares,
	// so that a candidate stub comparing the same keys finds them read already.
	keys  []string
	keyAt int
	byVal map[string][]int32
	all   []int32
}

// fieldLit is a key of the body, headers or query and the literal value a stub requires of it,
// or (sel) the literal a selector must select from the body.
type fieldLit struct {
	field      fieldID
	key, value string
	sel        bool
	bodyKeys   []string // for a body key: every key the predicate compares in the body
}

// fieldLiterals returns the keys and values of the body, headers and query the first
// predicate of a stub requires.
func fieldLiterals(ps []*pred) []fieldLit {
	if len(ps) == 0 {
		return nil
	}
	p := ps[0]
	if p.op != opEquals || p.pp == nil || p.exp == nil || p.exists {
		return nil
	}
	if !p.pp.simple {
		return selectedLiteral(p)
	}
	var out []fieldLit
	for i, k := range p.exp.keys {
		var f fieldID
		switch {
		case k == fieldNames[fBody]:
			f = fBody
		case k == fieldNames[fHeaders]:
			f = fHeaders
		case k == fieldNames[fQuery]:
			f = fQuery
		default:
			// Other fields are not indexed. (body, headers and query are their own lowercase,
			// so keyLower needs no second spelling.)
			continue
		}
		o, isObj := p.exp.vals[i].(*eobj)
		if !isObj {
			if f == fBody {
				return nil
			}
			continue
		}
		for j, fk := range o.keys {
			if _, isIndex := jsvalue.ArrayIndex(fk); isIndex || fk == "length" {
				continue
			}
			l, isLeaf := o.vals[j].(*eleaf)
			if !isLeaf || l.v == nil || l.s == "" {
				continue
			}
			lit := fieldLit{field: f, key: fk, value: l.s}
			if f == fBody {
				lit.bodyKeys = o.keys
			}
			out = append(out, lit)
		}
	}
	return out
}

// selectedLiteral returns the literal body an equals predicate with a selector requires, when
// the predicate cannot throw: the selector is one fast nodes apply (compile.go, newPipe).
func selectedLiteral(p *pred) []fieldLit {
	if p.pp.sel == nil { // a selector fast nodes apply: it raises no error
		return nil
	}
	for i, k := range p.exp.keys {
		if k != fieldNames[fBody] {
			continue
		}
		if l, isLeaf := p.exp.vals[i].(*eleaf); isLeaf && l.v != nil && l.s != "" {
			return []fieldLit{{field: fBody, value: l.s, sel: true}}
		}
	}
	return nil
}

// regexGroup indexes stubs whose first predicate is only matches on the path with a regular
// expression anchored at a literal, e.g. {"matches": {"path": "^/api/items/\\d+$"}}, by that
// literal. Such a predicate is false unless the path (as the predicate sees it) starts with the
// literal, compared as jsRegexp.MatchString compares it.
type regexGroup struct {
	fold     bool               // the literals compare case-insensitively (stored lowercased)
	byPrefix map[string][]int32 // literal -> stubs
	lengths  []int              // the distinct literal lengths, ascending
	all      []int32
}

// regexPrefix returns the anchored literal of a stub's first predicate when it is only
// matches on the path.
func regexPrefix(ps []*pred) (*jsRegexp, bool) {
	if len(ps) == 0 {
		return nil, false
	}
	p := ps[0]
	if p.op != opMatches || p.pp == nil || !p.pp.simple || p.exp == nil ||
		len(p.exp.keys) != 1 || p.exp.keys[0] != fieldNames[fPath] {
		return nil, false
	}
	l, isLeaf := p.exp.vals[0].(*eleaf)
	if !isLeaf || l.re == nil || l.re.prefix == "" {
		return nil, false
	}
	return l.re, true
}

// candidates appends to lists the stubs of g whose literal starts r's path.
func (g *regexGroup) candidates(c *evalCtx, lists [][]int32, buf []byte) [][]int32 {
	if c.r.TCP {
		return append(lists, g.all) // no path: the regexps see "undefined"
	}
	s := c.r.Path // what a plain matches predicate tests (fnRaw)
	if g.fold && !isASCII(s) {
		// Non-ASCII may fold onto an ASCII literal: let every regexp decide.
		return append(lists, g.all)
	}
	for _, n := range g.lengths {
		if len(s) < n {
			break
		}
		head := s[:n]
		if g.fold {
			b, _ := lowerKey(head, buf)
			head = unsafe.String(unsafe.SliceData(b), len(b))
		}
		if l := g.byPrefix[head]; len(l) > 0 {
			lists = append(lists, l)
		}
	}
	return lists
}

type literal struct {
	field fieldID
	value string
	ci    bool
}

// indexable returns the literal path or method a stub requires: the first literal path of
// its first predicates that cannot throw (plainEquals), or failing that their first literal
// method. A request without that value fails one of them, and Mountebank, which stops at the
// first predicate that fails, runs none after it: skipping the stub hides nothing.
func indexable(ps []*pred) (literal, bool) {
	var method literal
	hasMethod := false
	for _, p := range ps {
		if !plainEquals(p) {
			break
		}
		if l, ok := literalOf(p, fPath); ok {
			return l, true
		}
		if !hasMethod {
			method, hasMethod = literalOf(p, fMethod)
		}
	}
	return method, hasMethod
}

// literalOf returns the literal p asks of field (the last, when its object names the field
// twice).
func literalOf(p *pred, field fieldID) (literal, bool) {
	name := fieldNames[field]
	if p.pp.keyLower {
		name = fieldNamesLower[field]
	}
	var found literal
	ok := false
	for i, k := range p.exp.keys {
		if k != name {
			continue
		}
		l, isLeaf := p.exp.vals[i].(*eleaf)
		if !isLeaf || l.v == nil {
			continue
		}
		if p.op == opDeepEquals {
			if _, isStr := l.v.(string); !isStr {
				continue
			}
		}
		found, ok = literal{field: field, value: l.s, ci: p.pp.valLower}, true
	}
	return found, ok
}

// literalMap returns the map of x that indexes l.
func (x *index) literalMap(l literal) litMap {
	var m *litMap
	switch {
	case l.field == fPath && l.ci:
		m = &x.pathCI
	case l.field == fPath:
		m = &x.pathCS
	case l.ci:
		m = &x.methodCI
	default:
		m = &x.methodCS
	}
	if *m == nil { // made for the first literal filed in it: most indexes use one or two
		*m = litMap{}
	}
	return *m
}

// groupKey names the group of stubs sharing a field's key and a pipe's case rules.
func groupKey(pp *pipe, f fieldLit) string {
	if f.sel {
		return fmt.Sprintf("%t|%t|sel|%d", pp.keyLower, pp.valLower, pp.selID)
	}
	return fmt.Sprintf("%t|%t|%d|%s", pp.keyLower, pp.valLower, f.field, f.key)
}

// buildIndex files stubs lo to hi-1 of stubs: a stub whose first predicate is matches on the
// path under its regexp's literal, and any other under the literal (path, method, or a value
// of the JSON body, the headers or the query) that leaves the fewest candidates: the one
// fewest other stubs share. A field literal must be strictly more selective than a path or
// method, which cost nothing to look up.
func buildIndex(stubs [][]*pred, lo, hi int) index {
	x := index{lo: int32(lo), hi: int32(hi)}
	type options struct {
		lit    literal
		litOK  bool
		fields []fieldLit
		re     *jsRegexp
	}
	opts := make([]options, hi-lo)
	litCount := map[literal]int{}
	fieldCount := map[string]int{} // group key + "\x00" + value
	for i := lo; i < hi; i++ {
		ps := stubs[i]
		o := &opts[i-lo]
		o.lit, o.litOK = indexable(ps)
		if o.litOK {
			litCount[o.lit]++
		}
		if re, ok := regexPrefix(ps); ok {
			o.re = re
			continue
		}
		o.fields = fieldLiterals(ps)
		for _, f := range o.fields {
			fieldCount[groupKey(ps[0].pp, f)+"\x00"+f.value]++
		}
	}
	n := 0
	lastPath := -1                   // the last stub filed under a path
	methodIDs := map[string]uint32{} // index of x.methods
	groups := map[string]*fieldGroup{}
	regexes := map[bool]*regexGroup{} // by fold
	for i := lo; i < hi; i++ {
		ps := stubs[i]
		o := &opts[i-lo]
		if o.re != nil {
			g := regexes[o.re.fold]
			if g == nil {
				g = &regexGroup{fold: o.re.fold, byPrefix: map[string][]int32{}}
				regexes[o.re.fold] = g
				x.regexes = append(x.regexes, g)
			}
			key := o.re.prefix
			if g.fold {
				key = jsvalue.ToLower(key)
			}
			if len(g.byPrefix[key]) == 0 {
				g.lengths = append(g.lengths, len(key))
			}
			g.byPrefix[key] = append(g.byPrefix[key], int32(i))
			g.all = append(g.all, int32(i))
			n++
			continue
		}
		best, bestCount := -1, 0 // -1: the literal; k: o.fields[k]
		if o.litOK {
			bestCount = litCount[o.lit]
		}
		for k, f := range o.fields {
			if c := fieldCount[groupKey(ps[0].pp, f)+"\x00"+f.value]; (best == -1 && !o.litOK) || c < bestCount {
				best, bestCount = k, c
			}
		}
		switch {
		case best >= 0:
			f := o.fields[best]
			gk := groupKey(ps[0].pp, f)
			g := groups[gk]
			if g == nil {
				g = &fieldGroup{probe: ps[0], field: f.field, key: f.key, keys: []string{f.key}, sel: f.sel, byVal: map[string][]int32{}}
				if at := slices.Index(f.bodyKeys, f.key); at >= 0 && len(f.bodyKeys) <= len(scannedObj{}.buf) {
					g.keys, g.keyAt = f.bodyKeys, at
				}
				groups[gk] = g
				x.groups = append(x.groups, g)
			}
			g.byVal[f.value] = append(g.byVal[f.value], int32(i))
			g.all = append(g.all, int32(i))
		case o.litOK:
			if x.ids == nil {
				x.ids = make([]int32, hi-lo)
				for j := range x.ids {
					x.ids[j] = int32(lo + j)
				}
			}
			x.add(x.literalMap(o.lit), o.lit.value, int32(i))
			if o.lit.field == fPath {
				lastPath = i
			}
			if st := settledBy(ps); st.ok && o.lit.field == fPath {
				if x.settled == nil {
					x.settled = make([]settled, hi-lo)
				}
				x.settled[i-lo] = settled{ok: true, hasMethod: st.hasMethod, ci: st.ci}
				if st.hasMethod {
					k, known := methodIDs[st.method]
					if !known {
						k = uint32(len(x.methods))
						methodIDs[st.method] = k
						x.methods = append(x.methods, st.method)
					}
					x.settled[i-lo].method = k
				}
			}
		default:
			x.always = append(x.always, int32(i))
			continue
		}
		n++
	}
	for _, g := range x.regexes {
		slices.Sort(g.lengths)
		g.lengths = slices.Compact(g.lengths)
	}
	x.all = n == 0
	x.pathsOnly = !x.all && len(x.methodCS) == 0 && len(x.methodCI) == 0 && len(x.groups) == 0 &&
		len(x.regexes) == 0 && (len(x.always) == 0 || int(x.always[0]) > lastPath)
	if x.pathsOnly {
		x.pathCSFew, x.pathCIFew = fewEntries(x.pathCS), fewEntries(x.pathCI)
	}
	return x
}

// lowerKey returns jsvalue.ToLower(s), using buf for ASCII input to avoid allocating.
func lowerKey(s string, buf []byte) ([]byte, string) {
	if len(s) > len(buf) {
		buf = make([]byte, len(s))
	}
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return nil, jsvalue.ToLower(s)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b, ""
}

func (x *index) lookupLower(m litMap, s string, buf []byte) []int32 {
	if len(m) == 0 {
		return nil
	}
	b, str := lowerKey(s, buf)
	if b != nil {
		return x.list(m, unsafe.String(unsafe.SliceData(b), len(b))) // only looked up
	}
	return x.list(m, str)
}

// find is Find through the index; *cp is the evaluation context, taken (acquireCtx) when
// first needed if it is nil, for the caller to release.
func (x *index) find(s *Set, cp **evalCtx, r *request.Request) (int, error) {
	if x.pathsOnly && !r.TCP && (len(x.pathCI) == 0 || isLowerASCII(r.Path)) {
		return x.findByPath(s, cp, r)
	}
	c := *cp
	if x.all {
		if c == nil {
			c = acquireCtx(s, r)
			*cp = c
		}
		return s.scanTo(c, int(x.lo), int(x.hi))
	}
	var buf [256]byte
	path := r.Path
	method := r.Method
	if r.TCP {
		path, method = "", ""
	}
	var fixed [12][]int32
	lists := append(fixed[:0],
		x.list(x.pathCS, path),
		x.lookupLower(x.pathCI, path, buf[:]),
		x.list(x.methodCS, method),
		x.lookupLower(x.methodCI, method, buf[:]),
		x.always)
	if c == nil && (len(x.groups) > 0 || len(x.regexes) > 0) {
		c = acquireCtx(s, r)
		*cp = c
	}
	for _, g := range x.groups {
		lists = g.candidates(c, lists, buf[:])
	}
	for _, g := range x.regexes {
		lists = g.candidates(c, lists, buf[:])
	}
	n := len(lists)
	for {
		best := -1
		for i := 0; i < n; i++ {
			if len(lists[i]) > 0 && (best < 0 || lists[i][0] < lists[best][0]) {
				best = i
			}
		}
		if best < 0 {
			return -1, nil
		}
		if n > 8 {
			// Many lists: drop the exhausted ones.
			k := 0
			for _, l := range lists {
				if len(l) > 0 {
					lists[k] = l
					k++
				}
			}
			if k < n {
				best = -1
				lists, n = lists[:k], k
				continue
			}
		}
		i := lists[best][0]
		lists[best] = lists[best][1:]
		if x.settled != nil && x.settled[i-x.lo].ok {
			// Only its path bucket lists a settled stub, and only the request's bucket is
			// looked up: the path is equal.
			if x.decide(&x.settled[i-x.lo], method) {
				return int(i), nil
			}
			continue
		}
		if c == nil {
			c = acquireCtx(s, r)
			*cp = c
		}
		ok, err := c.stub(s.stubs[i])
		if err != nil {
			return -1, err
		}
		if ok {
			return int(i), nil
		}
	}
}

// findByPath is find for an index of paths only (pathsOnly) and a request whose path is its
// own lowercase when case-insensitive paths are filed: the candidates are the two path
// buckets, merged in stub order, then the stubs always a candidate (after all of those), with
// no lists or buffers to set up.
func (x *index) findByPath(s *Set, cp **evalCtx, r *request.Request) (int, error) {
	var cs, ci []int32
	if x.pathCSFew != nil {
		cs = x.listFew(x.pathCSFew, r.Path)
	} else if len(x.pathCS) > 0 {
		cs = x.list(x.pathCS, r.Path)
	}
	if x.pathCIFew != nil {
		ci = x.listFew(x.pathCIFew, r.Path) // the path is its own lowercase
	} else if len(x.pathCI) > 0 {
		ci = x.list(x.pathCI, r.Path)
	}
	for len(cs) > 0 || len(ci) > 0 {
		var i int32
		if len(ci) == 0 || len(cs) > 0 && cs[0] < ci[0] {
			i, cs = cs[0], cs[1:]
		} else {
			i, ci = ci[0], ci[1:]
		}
		if x.settled != nil && x.settled[i-x.lo].ok {
			if x.decide(&x.settled[i-x.lo], r.Method) {
				return int(i), nil
			}
			continue
		}
		if i, err := x.try(s, cp, r, i); i >= 0 || err != nil {
			return i, err
		}
	}
	for _, i := range x.always {
		if i, err := x.try(s, cp, r, i); i >= 0 || err != nil {
			return i, err
		}
	}
	return -1, nil
}

// try evaluates stub i for r: i when it matches, -1 otherwise.
func (x *index) try(s *Set, cp **evalCtx, r *request.Request, i int32) (int, error) {
	if *cp == nil {
		*cp = acquireCtx(s, r)
	}
	ok, err := (*cp).stub(s.stubs[i])
	if err != nil || !ok {
		return -1, err
	}
	return int(i), nil
}

// candidates appends to lists the stubs of g that r can match: those whose literal is the
// request's value under g's key (or one of its values), or every stub of g when the value is
// one the speed layer does not read (an object, an array of the body, a key repeated).
func (g *fieldGroup) candidates(c *evalCtx, lists [][]int32, buf []byte) [][]int32 {
	if c.r.TCP {
		return lists // no body, query or headers: the predicates are false
	}
	c.cur = g.probe
	defer func() { c.cur = nil }()
	if g.sel {
		// What the selector selects, as the predicate compares it (memoized for the stubs).
		return appendVals(lists, g, c.selected())
	}
	if g.field != fBody {
		f, present := c.lookup(fieldNames[g.field])
		if !present {
			return lists
		}
		kv := c.kvOf(f)
		name, found := kv.winner(g.key)
		if !found {
			return lists // undefined equals no non-empty literal
		}
		for _, v := range kv.kvs {
			if v.Name == name {
				lists = g.appendPiped(lists, v.Value, buf)
			}
		}
		return lists
	}
	if c.r.Body == "" {
		return lists // no body: the predicates are false
	}
	if so := c.scanFields(g.keys); so != nil {
		switch so.kind[g.keyAt] {
		case scannedRaw:
			return g.appendPiped(lists, so.strs[g.keyAt], buf)
		case scannedNum:
			return appendVal(lists, g, so.nums[g.keyAt])
		case scannedComplex:
			return append(lists, g.all)
		}
		return appendVal(lists, g, so.vals[g.keyAt])
	}
	v, sure := c.bodyValue(g.key)
	if sure != yes {
		return append(lists, g.all) // an array body: predicateSatisfied tries every element
	}
	return appendVals(lists, g, v)
}

// appendPiped appends the stubs of g that require raw as g's simple pipe makes it (lowercased
// unless case sensitive), without boxing it.
func (g *fieldGroup) appendPiped(lists [][]int32, raw string, buf []byte) [][]int32 {
	if !g.probe.pp.valLower {
		return appendList(lists, g.byVal[raw])
	}
	b, s := lowerKey(raw, buf)
	if b != nil {
		return appendList(lists, g.byVal[string(b)])
	}
	return appendList(lists, g.byVal[s])
}

// appendVals appends the stubs of g that require v, or any element of v when it is an array.
func appendVals(lists [][]int32, g *fieldGroup, v any) [][]int32 {
	if a, isArr := v.([]any); isArr {
		for _, e := range a {
			lists = appendVal(lists, g, e)
		}
		return lists
	}
	return appendVal(lists, g, v)
}

func appendVal(lists [][]int32, g *fieldGroup, v any) [][]int32 {
	var key string
	switch t := v.(type) {
	case nil, jsvalue.Undefined:
		return lists // null or a missing key equals no non-empty literal
	case string:
		key = t
	default:
		key = jsString(t)
	}
	return appendList(lists, g.byVal[key])
}

// appendList appends l to lists unless it is empty.
func appendList(lists [][]int32, l []int32) [][]int32 {
	if len(l) > 0 {
		lists = append(lists, l)
	}
	return lists
}
