package script

import (
	"math"

	"github.com/dop251/goja/token"
)

// The usual resolver is arithmetic on the Buffer's length and bytes at constant offsets
// (requestData.length >= 4 + requestData[0] * 16777216 + …): evaluated node by node as
// evalues, each node returning a kind, a number and whether to give up, it cost ~1.1k
// instructions a packet. lowerEOR rewrites, as a resolver is compiled, the subtrees that cannot
// give up and whose value is only ever used as a number into numExprs, which compute ToNumber of
// their value as a float64 and nothing else; a comparison of two such subtrees becomes one
// node. The values are the same: every operator the rewrite covers applies ToNumber to its
// operands first (which is all a numExpr keeps), and a subtree that could give up (a division, a
// read, an index that may not be a number) is left as it is. TestEORMatchesGoja,
// TestEORDifferential and FuzzNativeEndOfRequest compare the result with goja.

// numExpr is a subexpression that never gives up, evaluated as ToNumber of its value.
type numExpr interface {
	num(c ectx) float64
}

type numConst struct{ f float64 }

func (n *numConst) num(ectx) float64 { return n.f }

type numLength struct{}

func (*numLength) num(c ectx) float64 { return float64(len(c.data)) }

type numSlot struct{ slot int }

func (n *numSlot) num(c ectx) float64 { return toNumber(c.slots[n.slot]) }

// numIndexConst is requestData[k] for a constant integer k: the byte, or NaN (undefined) past
// the end.
type numIndexConst struct{ k int }

func (n *numIndexConst) num(c ectx) float64 {
	if n.k < len(c.data) {
		return float64(c.data[n.k])
	}
	return math.NaN()
}

// eval makes numIndexConst an eexpr too (requestData[0] === 10).
func (n *numIndexConst) eval(c ectx) (evalue, bool) {
	if n.k < len(c.data) {
		return num(float64(c.data[n.k])), true
	}
	return evalue{}, true
}

// numIndex is requestData[i] for an i that is always a number (eIndex gives up on others).
type numIndex struct{ i numExpr }

func (n *numIndex) num(c ectx) float64 {
	i := n.i.num(c)
	if i >= 0 && i < float64(len(c.data)) && i == math.Trunc(i) {
		return float64(c.data[int(i)])
	}
	return math.NaN()
}

// numArith is a binary arithmetic, bitwise or shift operator other than / (which may give up).
type numArith struct {
	op   token.Token
	l, r numExpr
}

func (n *numArith) num(c ectx) float64 {
	a, b := n.l.num(c), n.r.num(c)
	switch n.op {
	case token.PLUS:
		return a + b
	case token.MINUS:
		return a - b
	case token.MULTIPLY:
		return a * b
	case token.REMAINDER:
		return math.Mod(a, b)
	case token.AND:
		return float64(toInt32(a) & toInt32(b))
	case token.OR:
		return float64(toInt32(a) | toInt32(b))
	case token.EXCLUSIVE_OR:
		return float64(toInt32(a) ^ toInt32(b))
	case token.SHIFT_LEFT:
		return float64(toInt32(a) << (toUint32(b) & 31))
	case token.SHIFT_RIGHT:
		return float64(toInt32(a) >> (toUint32(b) & 31))
	default: // token.UNSIGNED_SHIFT_RIGHT
		return float64(toUint32(a) >> (toUint32(b) & 31))
	}
}

// numUnary is unary -, + or ~.
type numUnary struct {
	op token.Token
	x  numExpr
}

func (n *numUnary) num(c ectx) float64 {
	v := n.x.num(c)
	switch n.op {
	case token.MINUS:
		return -v
	case token.PLUS:
		return v
	default: // token.BITWISE_NOT
		return float64(^toInt32(v))
	}
}

// eNumber is a numExpr where an eexpr is wanted: its value is always a number.
type eNumber struct{ n numExpr }

func (e *eNumber) eval(c ectx) (evalue, bool) { return num(e.n.num(c)), true }

// eCmpNum is < <= > or >= of two numExprs.
type eCmpNum struct {
	op   token.Token
	l, r numExpr
}

func (e *eCmpNum) eval(c ectx) (evalue, bool) {
	return boolean(compareNum(e.op, e.l.num(c), e.r.num(c))), true
}

// compareNum is a < b, a <= b, a > b or a >= b (op GREATER_OR_EQUAL, or any other).
func compareNum(op token.Token, a, b float64) bool {
	switch op {
	case token.LESS:
		return a < b
	case token.LESS_OR_EQUAL:
		return a <= b
	case token.GREATER:
		return a > b
	default: // token.GREATER_OR_EQUAL
		return a >= b
	}
}

// isArith reports whether op is an operator numArith evaluates.
func isArith(op token.Token) bool {
	switch op {
	case token.PLUS, token.MINUS, token.MULTIPLY, token.REMAINDER, token.AND, token.OR, token.EXCLUSIVE_OR,
		token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT:
		return true
	}
	return false
}

func isCmp(op token.Token) bool {
	switch op {
	case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
		return true
	}
	return false
}

// alwaysNumber reports whether e, an expression numeric accepts, always has a number for
// value (not undefined, null or a boolean).
func alwaysNumber(e eexpr) bool {
	switch e := e.(type) {
	case *eConst:
		return e.v.k == eNum
	case *eLength, *eNumber:
		return true
	case *eBinary:
		return isArith(e.op)
	case *eUnary:
		return e.op != token.NOT
	}
	return false
}

// numeric returns e as a numExpr when it never gives up and the rewrite covers it.
func numeric(e eexpr) (numExpr, bool) {
	switch e := e.(type) {
	case *eNumber:
		return e.n, true
	case *eConst:
		return &numConst{toNumber(e.v)}, true
	case *eLength:
		return &numLength{}, true
	case *eSlot:
		return &numSlot{e.slot}, true
	case *numIndexConst:
		return e, true
	case *eIndex:
		if !alwaysNumber(e.i) {
			return nil, false // an index that is not a number gives up
		}
		i, ok := numeric(e.i)
		if !ok {
			return nil, false
		}
		return &numIndex{i}, true
	case *eBinary:
		if !isArith(e.op) {
			return nil, false
		}
		l, ok := numeric(e.l)
		if !ok {
			return nil, false
		}
		r, ok := numeric(e.r)
		if !ok {
			return nil, false
		}
		a := &numArith{e.op, l, r}
		if e.op == token.PLUS {
			return fuseSum(a), true
		}
		return a, true
	case *eUnary:
		if e.op == token.NOT {
			return nil, false
		}
		x, ok := numeric(e.x)
		if !ok {
			return nil, false
		}
		return &numUnary{e.op, x}, true
	}
	return nil, false
}

// lowerEOR returns e, just compiled from its children (already lowered), rewritten where it
// can be (see numExpr).
func lowerEOR(e eexpr) eexpr {
	switch t := e.(type) {
	case *eIndex:
		if k, ok := t.i.(*eConst); ok && k.v.k == eNum {
			f := k.v.f
			if f >= 0 && f == math.Trunc(f) && f < math.MaxInt32 {
				return &numIndexConst{int(f)}
			}
			return &eConst{evalue{}} // never an index: undefined
		}
	case *eBinary:
		switch {
		case isArith(t.op):
			if n, ok := numeric(t); ok {
				return &eNumber{n}
			}
		case isCmp(t.op):
			l, ok1 := numeric(t.l)
			r, ok2 := numeric(t.r)
			if ok1 && ok2 {
				return &eCmpNum{t.op, l, r}
			}
		}
	case *eUnary:
		if t.op != token.NOT {
			if n, ok := numeric(t); ok {
				return &eNumber{n}
			}
		}
	}
	return e
}

// numSum is a length prefix read by index, c + k0 * requestData[i0] + k1 * requestData[i1] + …,
// in one node: the sum of constants and of bytes at constant offsets times constants, all
// integers of at most 2^32 in magnitude (the multipliers not negative), at most maxSumTerms
// terms. Every partial sum is then an integer below 2^53, exact whatever the order, and never
// -0 (no term is), so the value is the one the + and * nodes give; a byte past the end makes it
// NaN, as undefined does.
type numSum struct {
	c      float64
	terms  []sumTerm
	end    int // 1 + the largest offset
	consts int // how many constants c adds up (when fusing)
}

type sumTerm struct {
	i int
	k float64
}

const maxSumTerms = 8

func (s *numSum) num(c ectx) float64 {
	if s.end > len(c.data) {
		return math.NaN()
	}
	sum := s.c
	for _, t := range s.terms {
		sum += t.k * float64(c.data[t.i])
	}
	return sum
}

// smallInt reports whether f is an integer of magnitude at most 2^32, and not -0.
func smallInt(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) <= 1<<32 && (f != 0 || !math.Signbit(f))
}

// add adds to s what n adds up to; false when n is not a sum numSum models.
func (s *numSum) add(n numExpr) bool {
	switch n := n.(type) {
	case *numConst:
		if !smallInt(n.f) {
			return false
		}
		s.c += n.f
		s.consts++
		return s.consts <= maxSumTerms
	case *numIndexConst:
		return s.term(n.k, 1)
	case *numSum:
		s.c += n.c
		if s.consts += n.consts; s.consts > maxSumTerms {
			return false
		}
		for _, t := range n.terms {
			if !s.term(t.i, t.k) {
				return false
			}
		}
		return true
	case *numArith:
		switch n.op {
		case token.PLUS:
			return s.add(n.l) && s.add(n.r)
		case token.MULTIPLY:
			i, k := n.l, n.r
			if _, ok := i.(*numIndexConst); !ok {
				i, k = k, i
			}
			ic, ok1 := i.(*numIndexConst)
			kc, ok2 := k.(*numConst)
			if !ok1 || !ok2 || !smallInt(kc.f) || kc.f < 0 {
				return false
			}
			return s.term(ic.k, kc.f)
		}
	}
	return false
}

func (s *numSum) term(i int, k float64) bool {
	if len(s.terms) >= maxSumTerms {
		return false
	}
	s.terms = append(s.terms, sumTerm{i, k})
	s.end = max(s.end, i+1)
	return true
}

// fuseSum returns n, a + just made, as one numSum when it is one.
func fuseSum(n *numArith) numExpr {
	s := &numSum{}
	if !s.add(n) || len(s.terms) == 0 {
		return n
	}
	return s
}
