package match

import (
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
	always             []int32
	all                bool // nothing indexed: scan every stub
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

func buildIndex(stubs [][]*pred) index {
	x := index{
		pathCS: map[string][]int32{}, pathCI: map[string][]int32{},
		methodCS: map[string][]int32{}, methodCI: map[string][]int32{},
	}
	n := 0
	for i, ps := range stubs {
		l, ok := indexable(ps)
		if !ok {
			x.always = append(x.always, int32(i))
			continue
		}
		n++
		var m map[string][]int32
		switch {
		case l.field == fPath && l.ci:
			m = x.pathCI
		case l.field == fPath:
			m = x.pathCS
		case l.ci:
			m = x.methodCI
		default:
			m = x.methodCS
		}
		m[l.value] = append(m[l.value], int32(i))
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
	lists := [5][]int32{
		x.pathCS[path],
		lookupLower(x.pathCI, path, buf[:]),
		x.methodCS[method],
		lookupLower(x.methodCI, method, buf[:]),
		x.always,
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
