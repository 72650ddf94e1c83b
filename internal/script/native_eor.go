package script

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// A tcp imposter's endOfRequestResolver runs for every packet, and the usual one only reads a
// length prefix and compares it with the length received: on goja that call costs ~25k
// instructions (a runtime taken from the pool, a Buffer made of the packet, the call), several
// times the rest of the request. compileEOR accepts a resolver of binary mode (requestData a
// Buffer) that only does arithmetic on the Buffer's bytes, and evaluates it as Go:
//
//   - statements: var/let/const declarations with an initializer at the top level of the body,
//     return, if/else (their branches blocks without declarations), empty statements; an
//     arrow function's expression body;
//   - expressions: number, boolean and null literals, `undefined`, the first parameter and the
//     locals; requestData.length, requestData[expr], and requestData's node methods
//     readUInt8/readInt8/read(U)Int16BE/LE/read(U)Int32BE/LE (readUint… too) called with no
//     argument or one; the operators + - * / % & | ^ << >> >>> == != === !== < <= > >= && ||
//     ?? ?: and the unary ! - + ~.
//
// Its values are undefined, null, booleans and numbers, whose operators JavaScript defines
// without calling anything, and the call reads only its own argument, so evaluating it outside
// the runtime is unobservable. What would throw on goja (a read outside the Buffer, an offset
// not an integer), or reads a property the subset does not model (an index that is not a
// number) makes the Go evaluation give up, and the call runs on goja as any other, which
// throws and logs as Mountebank does. So a native resolver answers what goja would or
// nothing; the differential tests and FuzzNativeEndOfRequest check that.

// eorFn is a compiled resolver; immutable and safe for concurrent use.
type eorFn struct {
	nslots int
	body   []estmt
	ret    eexpr // the expression returned, when body is only its return statement
}

// maxEORSlots bounds a resolver's locals: its evaluation keeps them on the stack.
const maxEORSlots = 16

// evalue is a value of the subset.
type evalue struct {
	k ekind
	f float64 // a number, or a boolean's 0 or 1
}

type ekind uint8

const (
	eUndef ekind = iota
	eNull
	eBool
	eNum
)

// ectx is one evaluation: the Buffer's bytes and the locals. It is passed by value, so that
// an evaluation of a resolver without locals allocates nothing (a pointer given to the nodes'
// interface methods would escape).
type ectx struct {
	data  []byte
	slots []evalue
}

// slotPool holds the locals of evaluations of resolvers that have some.
var slotPool = sync.Pool{New: func() any { return new([maxEORSlots]evalue) }}

type estmt interface {
	// exec runs the statement: ret when it returned v; ok false to give up.
	exec(c ectx) (v evalue, ret, ok bool)
}

type eexpr interface {
	eval(c ectx) (evalue, bool)
}

// run evaluates the resolver for data, the request's bytes: whether it is a whole request
// (the truthiness of what it returned); ok false when it must run on goja instead.
func (f *eorFn) run(data []byte) (done, ok bool) {
	c := ectx{data: data}
	if f.ret != nil {
		v, ok := f.ret.eval(c)
		return ok && truthy(v), ok
	}
	if f.nslots > 0 {
		slots := slotPool.Get().(*[maxEORSlots]evalue)
		defer slotPool.Put(slots)
		c.slots = slots[:f.nslots]
	}
	v, _, ok := execAll(c, f.body)
	if !ok {
		return false, false
	}
	return truthy(v), true
}

func execAll(c ectx, body []estmt) (evalue, bool, bool) {
	for _, s := range body {
		if v, ret, ok := s.exec(c); !ok || ret {
			return v, ret, ok
		}
	}
	return evalue{}, false, true
}

type eDecl struct {
	slot int
	e    eexpr
}

func (s *eDecl) exec(c ectx) (evalue, bool, bool) {
	v, ok := s.e.eval(c)
	c.slots[s.slot] = v
	return evalue{}, false, ok
}

type eReturn struct{ e eexpr } // e nil: return;

func (s *eReturn) exec(c ectx) (evalue, bool, bool) {
	if s.e == nil {
		return evalue{}, true, true
	}
	v, ok := s.e.eval(c)
	return v, true, ok
}

type eIf struct {
	cond      eexpr
	then, els []estmt
}

func (s *eIf) exec(c ectx) (evalue, bool, bool) {
	v, ok := s.cond.eval(c)
	if !ok {
		return evalue{}, false, false
	}
	if truthy(v) {
		return execAll(c, s.then)
	}
	return execAll(c, s.els)
}

type eConst struct{ v evalue }

func (e *eConst) eval(ectx) (evalue, bool) { return e.v, true }

type eSlot struct{ slot int }

func (e *eSlot) eval(c ectx) (evalue, bool) { return c.slots[e.slot], true }

type eLength struct{}

func (*eLength) eval(c ectx) (evalue, bool) { return num(float64(len(c.data))), true }

// eIndex is requestData[i]: a byte, or undefined for a number that is not an index of the
// Buffer (a typed array has no other numeric properties). Any other key gives up.
type eIndex struct{ i eexpr }

func (e *eIndex) eval(c ectx) (evalue, bool) {
	i, ok := e.i.eval(c)
	if !ok || i.k != eNum {
		return evalue{}, false
	}
	if i.f >= 0 && i.f < float64(len(c.data)) && i.f == math.Trunc(i.f) {
		return num(float64(c.data[int(i.f)])), true
	}
	return evalue{}, true
}

// eRead is requestData.readXxx(offset): node's checkOffset throws for an offset that is not
// an integer number within the Buffer (an absent one is 0), which gives up here.
type eRead struct {
	size           int // bytes: 1, 2 or 4
	signed, little bool
	off            eexpr // nil: no argument
}

func (e *eRead) eval(c ectx) (evalue, bool) {
	o := 0.0
	if e.off != nil {
		v, ok := e.off.eval(c)
		if !ok || v.k != eNum && v.k != eUndef {
			return evalue{}, false
		}
		if v.k == eNum {
			o = v.f
		}
	}
	if o != math.Trunc(o) || o < 0 || o > float64(len(c.data)-e.size) {
		return evalue{}, false
	}
	b := c.data[int(o):]
	var u uint32
	switch {
	case e.size == 1:
		u = uint32(b[0])
		if e.signed {
			return num(float64(int8(b[0]))), true
		}
	case e.size == 2 && e.little:
		u = uint32(binary.LittleEndian.Uint16(b))
		if e.signed {
			return num(float64(int16(u))), true
		}
	case e.size == 2:
		u = uint32(binary.BigEndian.Uint16(b))
		if e.signed {
			return num(float64(int16(u))), true
		}
	case e.little:
		u = binary.LittleEndian.Uint32(b)
	default:
		u = binary.BigEndian.Uint32(b)
	}
	if e.signed {
		return num(float64(int32(u))), true
	}
	return num(float64(u)), true
}

type eUnary struct {
	op token.Token
	x  eexpr
}

func (e *eUnary) eval(c ectx) (evalue, bool) {
	v, ok := e.x.eval(c)
	if !ok {
		return evalue{}, false
	}
	switch e.op {
	case token.NOT:
		return boolean(!truthy(v)), true
	case token.MINUS:
		return num(-toNumber(v)), true
	case token.PLUS:
		return num(toNumber(v)), true
	default: // token.BITWISE_NOT
		return num(float64(^toInt32(toNumber(v)))), true
	}
}

type eLogical struct {
	op   token.Token // &&, || or ??
	l, r eexpr
}

func (e *eLogical) eval(c ectx) (evalue, bool) {
	l, ok := e.l.eval(c)
	if !ok {
		return evalue{}, false
	}
	switch e.op {
	case token.LOGICAL_AND:
		if !truthy(l) {
			return l, true
		}
	case token.LOGICAL_OR:
		if truthy(l) {
			return l, true
		}
	default: // token.COALESCE
		if l.k != eUndef && l.k != eNull {
			return l, true
		}
	}
	return e.r.eval(c)
}

type eCond struct{ test, yes, no eexpr }

func (e *eCond) eval(c ectx) (evalue, bool) {
	t, ok := e.test.eval(c)
	if !ok {
		return evalue{}, false
	}
	if truthy(t) {
		return e.yes.eval(c)
	}
	return e.no.eval(c)
}

type eBinary struct {
	op   token.Token
	l, r eexpr
}

func (e *eBinary) eval(c ectx) (evalue, bool) {
	l, ok := e.l.eval(c)
	if !ok {
		return evalue{}, false
	}
	r, ok := e.r.eval(c)
	if !ok {
		return evalue{}, false
	}
	switch e.op {
	case token.STRICT_EQUAL:
		return boolean(strictEquals(l, r)), true
	case token.STRICT_NOT_EQUAL:
		return boolean(!strictEquals(l, r)), true
	case token.EQUAL:
		return boolean(looseEquals(l, r)), true
	case token.NOT_EQUAL:
		return boolean(!looseEquals(l, r)), true
	}
	// Every other operator converts both sides to numbers: neither is a string or an object.
	a, b := toNumber(l), toNumber(r)
	switch e.op {
	case token.PLUS:
		return num(a + b), true
	case token.MINUS:
		return num(a - b), true
	case token.MULTIPLY:
		return num(a * b), true
	case token.SLASH:
		if b == 0 {
			// The only operator whose result tells 0 from -0, which goja does not always
			// tell apart as JavaScript does (0 * -5 is 0 there): given up.
			return evalue{}, false
		}
		return num(a / b), true
	case token.REMAINDER:
		return num(math.Mod(a, b)), true
	case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
		return boolean(compareNum(e.op, a, b)), true
	case token.AND:
		return num(float64(toInt32(a) & toInt32(b))), true
	case token.OR:
		return num(float64(toInt32(a) | toInt32(b))), true
	case token.EXCLUSIVE_OR:
		return num(float64(toInt32(a) ^ toInt32(b))), true
	case token.SHIFT_LEFT:
		return num(float64(toInt32(a) << (toUint32(b) & 31))), true
	case token.SHIFT_RIGHT:
		return num(float64(toInt32(a) >> (toUint32(b) & 31))), true
	default: // token.UNSIGNED_SHIFT_RIGHT
		return num(float64(toUint32(a) >> (toUint32(b) & 31))), true
	}
}

func num(f float64) evalue { return evalue{k: eNum, f: f} }

func boolean(b bool) evalue {
	if b {
		return evalue{k: eBool, f: 1}
	}
	return evalue{k: eBool}
}

// truthy is ToBoolean.
func truthy(v evalue) bool {
	switch v.k {
	case eBool:
		return v.f != 0
	case eNum:
		return v.f != 0 && !math.IsNaN(v.f)
	}
	return false
}

// toNumber is ToNumber of a value of the subset.
func toNumber(v evalue) float64 {
	switch v.k {
	case eUndef:
		return math.NaN()
	case eNull:
		return 0
	}
	return v.f
}

// toInt32 is ToInt32 as goja computes it: JavaScript's for a number of magnitude below 2^63,
// whatever Go's conversion to int64 makes of a larger one (0 on amd64, where node gives the
// number modulo 2^32).
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int32(int64(f))
}

// toUint32 is ToUint32 as goja computes it (see toInt32).
func toUint32(f float64) uint32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return uint32(int64(f))
}

func strictEquals(l, r evalue) bool {
	if l.k != r.k {
		return false
	}
	if l.k == eUndef || l.k == eNull {
		return true
	}
	return l.f == r.f // NaN is not itself; 0 is -0
}

// looseEquals is == between values of the subset: null and undefined equal each other and
// nothing else; a boolean compares as a number.
func looseEquals(l, r evalue) bool {
	ln, rn := l.k == eUndef || l.k == eNull, r.k == eUndef || r.k == eNull
	if ln || rn {
		return ln && rn
	}
	return l.f == r.f
}

// readMethods are the Buffer methods eRead models, by name.
var readMethods = map[string]eRead{
	"readUInt8": {size: 1}, "readUint8": {size: 1}, "readInt8": {size: 1, signed: true},
	"readUInt16BE": {size: 2}, "readUint16BE": {size: 2}, "readUInt16LE": {size: 2, little: true}, "readUint16LE": {size: 2, little: true},
	"readInt16BE": {size: 2, signed: true}, "readInt16LE": {size: 2, signed: true, little: true},
	"readUInt32BE": {size: 4}, "readUint32BE": {size: 4}, "readUInt32LE": {size: 4, little: true}, "readUint32LE": {size: 4, little: true},
	"readInt32BE": {size: 4, signed: true}, "readInt32LE": {size: 4, signed: true, little: true},
}

// eorCompiler compiles one resolver: the names in scope.
type eorCompiler struct {
	data   unistring.String   // the first parameter; "" when there is none
	params []unistring.String // every parameter (the others may not be read)
	locals map[unistring.String]int
}

// compileEOR compiles source, an endOfRequestResolver, or returns nil when it uses more than
// the subset.
func compileEOR(source string) *eorFn {
	params, body, _, ok := parseFunction(source) // a function's own name is not in the subset: reading it gives up
	if !ok {
		return nil
	}
	c := &eorCompiler{locals: map[unistring.String]int{}}
	if params != nil {
		if params.Rest != nil {
			return nil
		}
		for i, p := range params.List {
			id, ok := p.Target.(*ast.Identifier)
			if !ok || p.Initializer != nil {
				return nil
			}
			for _, q := range c.params {
				if q == id.Name {
					return nil // a repeated name: the later parameter is the one read
				}
			}
			c.params = append(c.params, id.Name)
			if i == 0 {
				c.data = id.Name
			}
		}
	}
	stmts, ok := c.stmts(body, true)
	if !ok {
		return nil
	}
	fn := &eorFn{nslots: len(c.locals), body: stmts}
	if len(stmts) == 1 && fn.nslots == 0 {
		if r, ok := stmts[0].(*eReturn); ok && r.e != nil {
			fn.ret = r.e
		}
	}
	return fn
}

func (c *eorCompiler) stmts(list []ast.Statement, top bool) ([]estmt, bool) {
	var out []estmt
	for _, s := range list {
		switch s := s.(type) {
		case *ast.EmptyStatement:
		case *ast.ReturnStatement:
			if s.Argument == nil {
				out = append(out, &eReturn{})
				continue
			}
			e, ok := c.expr(s.Argument)
			if !ok {
				return nil, false
			}
			out = append(out, &eReturn{e})
		case *ast.VariableStatement:
			if !top || !c.declare(s.List, &out) {
				return nil, false
			}
		case *ast.LexicalDeclaration:
			if !top || !c.declare(s.List, &out) {
				return nil, false
			}
		case *ast.IfStatement:
			cond, ok := c.expr(s.Test)
			if !ok {
				return nil, false
			}
			then, ok := c.branch(s.Consequent)
			if !ok {
				return nil, false
			}
			var els []estmt
			if s.Alternate != nil {
				if els, ok = c.branch(s.Alternate); !ok {
					return nil, false
				}
			}
			out = append(out, &eIf{cond: cond, then: then, els: els})
		case *ast.BlockStatement:
			b, ok := c.stmts(s.List, false)
			if !ok {
				return nil, false
			}
			out = append(out, b...)
		default:
			return nil, false
		}
	}
	return out, true
}

// branch compiles an if's branch: a statement or a block, without declarations.
func (c *eorCompiler) branch(s ast.Statement) ([]estmt, bool) {
	if b, ok := s.(*ast.BlockStatement); ok {
		return c.stmts(b.List, false)
	}
	return c.stmts([]ast.Statement{s}, false)
}

// declare compiles declarations, each with an initializer and a name not in scope yet (so a
// name used before its declaration, or declared twice, is outside the subset).
func (c *eorCompiler) declare(list []*ast.Binding, out *[]estmt) bool {
	for _, b := range list {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || b.Initializer == nil || c.known(id.Name) || id.Name == "undefined" || len(c.locals) >= maxEORSlots {
			return false
		}
		e, ok := c.expr(b.Initializer)
		if !ok {
			return false
		}
		slot := len(c.locals)
		c.locals[id.Name] = slot
		*out = append(*out, &eDecl{slot: slot, e: e})
	}
	return true
}

func (c *eorCompiler) known(name unistring.String) bool {
	if _, ok := c.locals[name]; ok {
		return true
	}
	for _, p := range c.params {
		if p == name {
			return true
		}
	}
	return false
}

// isData reports whether e names the Buffer (the first parameter).
func (c *eorCompiler) isData(e ast.Expression) bool {
	id, ok := e.(*ast.Identifier)
	return ok && c.data != "" && id.Name == c.data
}

// expr compiles e, its subtrees rewritten where they can be (see lowerEOR).
func (c *eorCompiler) expr(e ast.Expression) (eexpr, bool) {
	x, ok := c.node(e)
	if !ok {
		return nil, false
	}
	return lowerEOR(x), true
}

func (c *eorCompiler) node(e ast.Expression) (eexpr, bool) {
	switch e := e.(type) {
	case *ast.NumberLiteral:
		switch v := e.Value.(type) {
		case int64:
			return &eConst{num(float64(v))}, true
		case float64:
			return &eConst{num(v)}, true
		}
		return nil, false // a BigInt
	case *ast.BooleanLiteral:
		return &eConst{boolean(e.Value)}, true
	case *ast.NullLiteral:
		return &eConst{evalue{k: eNull}}, true
	case *ast.Identifier:
		if slot, ok := c.locals[e.Name]; ok {
			return &eSlot{slot}, true
		}
		if e.Name == "undefined" && !c.known(e.Name) {
			return &eConst{evalue{}}, true // not writable: always undefined
		}
		return nil, false // the Buffer alone, another parameter, a global
	case *ast.DotExpression:
		if c.isData(e.Left) && e.Identifier.Name == "length" {
			return &eLength{}, true
		}
		return nil, false
	case *ast.BracketExpression:
		if !c.isData(e.Left) {
			return nil, false
		}
		i, ok := c.expr(e.Member)
		if !ok {
			return nil, false
		}
		return &eIndex{i}, true
	case *ast.CallExpression:
		dot, ok := e.Callee.(*ast.DotExpression)
		if !ok || !c.isData(dot.Left) || len(e.ArgumentList) > 1 {
			return nil, false
		}
		r, ok := readMethods[dot.Identifier.Name.String()]
		if !ok {
			return nil, false
		}
		if len(e.ArgumentList) == 1 {
			if r.off, ok = c.expr(e.ArgumentList[0]); !ok {
				return nil, false
			}
		}
		return &r, true
	case *ast.UnaryExpression:
		switch e.Operator {
		case token.NOT, token.MINUS, token.PLUS, token.BITWISE_NOT:
		default:
			return nil, false
		}
		if e.Postfix {
			return nil, false
		}
		x, ok := c.expr(e.Operand)
		if !ok {
			return nil, false
		}
		return &eUnary{e.Operator, x}, true
	case *ast.ConditionalExpression:
		t, ok1 := c.expr(e.Test)
		y, ok2 := c.expr(e.Consequent)
		n, ok3 := c.expr(e.Alternate)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		return &eCond{t, y, n}, true
	case *ast.BinaryExpression:
		l, ok := c.expr(e.Left)
		if !ok {
			return nil, false
		}
		r, ok := c.expr(e.Right)
		if !ok {
			return nil, false
		}
		switch e.Operator {
		case token.LOGICAL_AND, token.LOGICAL_OR, token.COALESCE:
			return &eLogical{e.Operator, l, r}, true
		case token.PLUS, token.MINUS, token.MULTIPLY, token.SLASH, token.REMAINDER,
			token.AND, token.OR, token.EXCLUSIVE_OR, token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT,
			token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL,
			token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
			return &eBinary{e.Operator, l, r}, true
		}
		return nil, false
	}
	return nil, false
}
