package match

import (
	"fmt"

	"github.com/mockd/mockd/internal/request"
)

// index narrows the stubs a request can match. A stub whose first predicate
// is equals or deepEquals with a literal path (or, failing that, method)
// and a plain pipe (no except, selector or binary mode) can only match
// requests with that normalized value; such a predicate cannot throw, so
// skipping the stub never hides an error Mountebank would raise. Every other
// stub is always a candidate. Candidates are merged in stub order, so the
// first match is exactly Mountebank's.
type index struct {
	pathCS, pathCI     map[string][]int32
	methodCS, methodCI map[string][]int32
	bodies             []*bodyGroup
	always             []int32
	all                bool // nothing indexed: scan every stub
}

// bodyGroup indexes stubs whose first predicate is equals on a JSON body
// field with a literal value, e.g. {"equals": {"body": {"id": 42}}}, by
// that field (all stubs of a group share the pipe's key and value case).
// Such a predicate is false unless the body parses to an object whose field
// has that value (or an array containing it), or to an array (then every
// stub of the group is a candidate).
type bodyGroup struct {
	probe *pred // any predicate of the group: sets the pipe to parse the body
	field string
	byVal map[string][]int32
	all   []int32
}

// bodyField is a JSON body field and the literal value a stub requires of it.
type bodyField struct{ field, value string }

// bodyIndexable returns the body fields and values the first predicate of a stub requires.
func bodyIndexable(ps []*pred) []bodyField {
	if len(ps) == 0 {
		return nil
	}
	p := ps[0]
	if p.op != opEquals || p.pp == nil || !p.pp.simple || p.err != nil || p.exp == nil || p.exists {
		return nil
	}
	name := fieldNames[fBody]
	var out []bodyField
	for i, k := range p.exp.keys {
		if k != name && !(p.pp.keyLower && k == fieldNamesLower[fBody]) {
			continue
		}
		o, isObj := p.exp.vals[i].(*eobj)
		if !isObj {
			return nil
		}
		for j, fk := range o.keys {
			if _, isIndex := arrayIndex(fk); isIndex || fk == "length" {
				continue
			}
			l, isLeaf := o.vals[j].(*eleaf)
			if !isLeaf || l.v == nil || l.s == "" {
				continue
			}
			out = append(out, bodyField{fk, l.s})
		}
	}
	return out
}

type literal struct {
	field fieldID
	value string
	ci    bool
}

// indexable returns the literal path or method a stub requires.
func indexable(ps []*pred) (literal, bool) {
	if len(ps) == 0 {
		return literal{}, false
	}
	p := ps[0]
	if (p.op != opEquals && p.op != opDeepEquals) || p.pp == nil || !p.pp.simple || p.err != nil || p.exp == nil {
		return literal{}, false
	}
	var found literal
	ok := false
	for _, want := range []fieldID{fPath, fMethod} {
		name := fieldNames[want]
		if p.pp.keyLower {
			name = fieldNamesLower[want]
		}
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
			found, ok = literal{field: want, value: l.s, ci: p.pp.valLower}, true
		}
		if ok {
			return found, true
		}
	}
	return literal{}, false
}

// literalMap returns the map of x that indexes l.
func (x *index) literalMap(l literal) map[string][]int32 {
	switch {
	case l.field == fPath && l.ci:
		return x.pathCI
	case l.field == fPath:
		return x.pathCS
	case l.ci:
		return x.methodCI
	default:
		return x.methodCS
	}
}

// bodyGroupKey names the group of stubs sharing a body field and a pipe's case rules.
func bodyGroupKey(pp *pipe, field string) string {
	return fmt.Sprintf("%t|%t|%s", pp.keyLower, pp.valLower, field)
}

// buildIndex files each stub under the literal (path, method or one JSON body field) that
// leaves the fewest candidates: the one fewest other stubs share.
func buildIndex(stubs [][]*pred) index {
	x := index{
		pathCS: map[string][]int32{}, pathCI: map[string][]int32{},
		methodCS: map[string][]int32{}, methodCI: map[string][]int32{},
	}
	type options struct {
		lit    literal
		litOK  bool
		bodies []bodyField
	}
	opts := make([]options, len(stubs))
	litCount := map[literal]int{}
	bodyCount := map[string]int{} // group key + "\x00" + value
	for i, ps := range stubs {
		o := &opts[i]
		o.lit, o.litOK = indexable(ps)
		if o.litOK {
			litCount[o.lit]++
		}
		o.bodies = bodyIndexable(ps)
		for _, b := range o.bodies {
			bodyCount[bodyGroupKey(ps[0].pp, b.field)+"\x00"+b.value]++
		}
	}
	n := 0
	groups := map[string]*bodyGroup{}
	for i, ps := range stubs {
		o := &opts[i]
		best, bestCount := -1, 0 // -1: the literal; k: o.bodies[k]
		if o.litOK {
			bestCount = litCount[o.lit]
		}
		for k, b := range o.bodies {
			// A body field must be strictly more selective: a path or method needs no parsing.
			if c := bodyCount[bodyGroupKey(ps[0].pp, b.field)+"\x00"+b.value]; (best == -1 && !o.litOK) || c < bestCount {
				best, bestCount = k, c
			}
		}
		switch {
		case best >= 0:
			pp, b := ps[0].pp, o.bodies[best]
			gk := bodyGroupKey(pp, b.field)
			g := groups[gk]
			if g == nil {
				g = &bodyGroup{probe: ps[0], field: b.field, byVal: map[string][]int32{}}
				groups[gk] = g
				x.bodies = append(x.bodies, g)
			}
			g.byVal[b.value] = append(g.byVal[b.value], int32(i))
			g.all = append(g.all, int32(i))
		case o.litOK:
			m := x.literalMap(o.lit)
			m[o.lit.value] = append(m[o.lit.value], int32(i))
		default:
			x.always = append(x.always, int32(i))
			continue
		}
		n++
	}
	x.all = n == 0
	return x
}

// lowerKey returns jsLower(s), using buf for ASCII input to avoid allocating.
func lowerKey(s string, buf []byte) ([]byte, string) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return nil, jsLower(s)
		}
	}
	buf = buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf, ""
}

func lookupLower(m map[string][]int32, s string, buf []byte) []int32 {
	if len(m) == 0 {
		return nil
	}
	b, str := lowerKey(s, buf)
	if b != nil {
		return m[string(b)]
	}
	return m[str]
}

func (x *index) find(s *Set, c *evalCtx, r *request.Request) (int, error) {
	if x.all {
		return s.scan(c, 0)
	}
	var buf [256]byte
	path := r.Path
	method := r.Method
	if r.TCP {
		path, method = "", ""
	}
	var fixed [6][]int32
	lists := append(fixed[:0],
		x.pathCS[path],
		lookupLower(x.pathCI, path, buf[:]),
		x.methodCS[method],
		lookupLower(x.methodCI, method, buf[:]),
		x.always)
	for _, g := range x.bodies {
		lists = g.candidates(c, lists)
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
		ok, err := c.stub(s.stubs[i])
		if err != nil {
			return -1, err
		}
		if ok {
			return int(i), nil
		}
	}
}

// candidates appends to lists the stubs of g that r's body can match.
func (g *bodyGroup) candidates(c *evalCtx, lists [][]int32) [][]int32 {
	if c.r.TCP {
		return lists
	}
	c.begin(g.probe)
	s, ok := c.get(&c.root, fieldNames[fBody]).(string)
	if !ok {
		c.cur = nil
		return lists // no body: the predicates are false
	}
	j := c.tryJSON(s)
	c.cur = nil
	switch t := j.(type) {
	case []any:
		// An array body: predicateSatisfied tries every element.
		return append(lists, g.all)
	case map[string]any:
		v, ok := t[g.field]
		if !ok {
			return lists
		}
		if a, isArr := v.([]any); isArr {
			for _, e := range a {
				lists = appendVal(lists, g, e)
			}
			return lists
		}
		return appendVal(lists, g, v)
	}
	return lists
}

func appendVal(lists [][]int32, g *bodyGroup, v any) [][]int32 {
	var key string
	switch t := v.(type) {
	case nil:
		return lists // a JSON null equals no non-null literal
	case string:
		key = t
	default:
		key = jsString(t)
	}
	if l := g.byVal[key]; len(l) > 0 {
		lists = append(lists, l)
	}
	return lists
}
