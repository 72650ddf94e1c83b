package script

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// A native function runs as Go instead of on goja. Most decorate functions only read the
// request and the response, join strings and assign the result to the response, and many inject
// functions only return an object literal built from the request; on goja such a call costs far
// more in making the config and response objects and reading the result back than in the script
// itself. compileNative accepts a function whose body uses only:
//
//   - statements: expressions, var/let/const declarations at the top level of the body, if/else,
//     blocks without declarations, return;
//   - expressions: string, number, boolean, null and template literals, `undefined`, the
//     function's parameters and locals, member reads (a.b, a[expr]), assignment with = and += to
//     locals and to members, +, ===, !==, ==, !=, !, &&, || and ?:; object literals with plain
//     keys (not array indexes, not __proto__) and array literals, whose values, and the values
//     assigned to members, are primitives or such literals written in place (so that every object
//     the call makes has one parent, as it would have in JavaScript); and JSON.stringify(value),
//     JSON.stringify(value, null, space) with a literal space.
//
// Such a function calls nothing but the builtin JSON.stringify, cannot loop and touches no state,
// logger or global, so running it outside the imposter's runtime (and its lock and time limit)
// is unobservable. A function that names JSON runs natively only when it would run on a pooled
// runtime (see stateless.go), whose globals no script changes; a key an object lacks reads as
// undefined only then too (elsewhere a script may have given Object.prototype that key). What
// the Go evaluation is not sure to do exactly as JavaScript would at run time (reading a key
// Object.prototype has, an array or a logger; an object where a primitive is needed; a value
// that would throw; text that is not valid UTF-8; returning anything but the response or an
// object the call made) makes it give up before anything it did is visible, and the call runs
// on goja as any other. So a native function
// returns what goja would return or nothing; the differential tests check that.

// nativeFn is a compiled native function. It is immutable and safe for concurrent use.
type nativeFn struct {
	nslots int // parameters, then locals
	body   []nstmt
	global bool // it reads the global JSON
	// responseOnly: the body reads no parameter but the first's response member
	// (config.response): not the request, the state, the logger or the other arguments.
	responseOnly bool
	// shape is set for a body that is one return of an object literal whose members other
	// than body are constants (see injectShape).
	shape *shape
}

// shape is what an inject function of one `return { … }` returns, known when it is compiled:
// the object literal's members other than body, statusCode, headers (an object literal of
// constants) and _mode, are constants; only body is evaluated for each call. The object the
// literal makes has no other member.
type shape struct {
	fixed *config.Object // the object without its body: read only, shared by every call
	body  *objectMember  // nil when the literal has no body
}

// injectShape returns the shape of body, or nil.
func injectShape(body []nstmt) *shape {
	if len(body) != 1 {
		return nil
	}
	ret, ok := body[0].(returnStmt)
	if !ok {
		return nil
	}
	lit, ok := ret.e.(*objectExpr)
	if !ok || lit.repeats {
		return nil
	}
	sh := &shape{fixed: &config.Object{}}
	for i := range lit.members {
		m := &lit.members[i]
		switch m.key {
		case "body":
			sh.body = m
			continue
		case "statusCode", "_mode":
			if !m.val.isConst {
				return nil
			}
			sh.fixed.Members = append(sh.fixed.Members, config.Member{Key: m.key, Value: m.val.konst})
		case "headers":
			h, ok := m.val.e.(*objectExpr)
			if !ok || h.repeats {
				return nil
			}
			ho := &config.Object{Members: make([]config.Member, 0, len(h.members))}
			for j := range h.members {
				if !h.members[j].val.isConst {
					return nil
				}
				ho.Members = append(ho.Members, config.Member{Key: h.members[j].key, Value: h.members[j].val.konst})
			}
			sh.fixed.Members = append(sh.fixed.Members, config.Member{Key: m.key, Value: ho})
		default:
			return nil
		}
	}
	return sh
}

// runBody evaluates the body of f's shape for request r, as runInject would evaluate it: the
// value the returned object's body would hold (nil when it has none); false when the call
// must run as usual (Scope.Response).
func (f *nativeFn) runBody(r *request.Request, pristine bool) (config.Value, bool) {
	m := f.shape.body
	if m == nil {
		return nil, true
	}
	c := f.begin(r, true, pristine)
	defer c.release()
	v, ok := m.val.e.eval(c)
	if !ok {
		return nil, false
	}
	val, ok := c.store(v, &m.val)
	if !ok {
		return nil, false
	}
	if v.k == kNum && !isFinite(v.f) {
		val = nil // as finish makes it
	}
	c.finish(nil) // the objects of an object body
	return val, true
}

// parseFunction parses source, one function expression (not async, not a generator), into its
// parameters, its body (an arrow's expression body as a return statement) and its own name (bound
// in its body; "" for none). ok is false for anything else.
func parseFunction(source string) (params *ast.ParameterList, body []ast.Statement, name string, ok bool) {
	prog, err := parser.ParseFile(nil, "", "("+source+"\n)", 0)
	if err != nil || len(prog.Body) != 1 {
		return nil, nil, "", false
	}
	es, isExpr := prog.Body[0].(*ast.ExpressionStatement)
	if !isExpr {
		return nil, nil, "", false
	}
	switch f := es.Expression.(type) {
	case *ast.FunctionLiteral:
		if f.Async || f.Generator || f.Body == nil {
			return nil, nil, "", false
		}
		if f.Name != nil {
			name = f.Name.Name.String()
		}
		return f.ParameterList, f.Body.List, name, true
	case *ast.ArrowFunctionLiteral:
		if f.Async {
			return nil, nil, "", false
		}
		switch b := f.Body.(type) {
		case *ast.BlockStatement:
			return f.ParameterList, b.List, "", true
		case *ast.ExpressionBody:
			return f.ParameterList, []ast.Statement{&ast.ReturnStatement{Argument: b.Expression}}, "", true
		}
	}
	return nil, nil, "", false
}

// compileNative compiles source, a function expression, or returns nil when it uses more
// than the native subset.
func compileNative(source string) *nativeFn {
	params, body, name, ok := parseFunction(source)
	if !ok {
		return nil
	}
	c := &nativeCompiler{}
	if params == nil || params.Rest != nil {
		return nil
	}
	for _, b := range params.List {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || b.Initializer != nil || !c.declare(id.Name.String(), false) {
			return nil
		}
	}
	c.params = len(c.names)
	fn := &nativeFn{}
	for _, st := range body {
		s := c.stmt(st, true)
		if s == nil {
			return nil
		}
		fn.body = append(fn.body, s)
	}
	fn.nslots = len(c.names)
	// JSON.stringify was compiled as the global's: a local or the function's own name JSON
	// (hoisted, or declared later) would be what the body reads instead.
	if c.global && (name == "JSON" || c.lookup("JSON") >= 0) {
		return nil
	}
	fn.global = c.global
	fn.responseOnly = !c.readsArgs
	fn.shape = injectShape(fn.body)
	return fn
}

// nativeCompiler resolves names to slots while compiling.
type nativeCompiler struct {
	names  []string
	consts []bool
	global bool // JSON.stringify was compiled
	params int  // the first params names are the parameters
	// readsArgs: the body reads a parameter other than as config.response (see
	// nativeFn.responseOnly).
	readsArgs bool
}

func (c *nativeCompiler) declare(name string, isConst bool) bool {
	if c.lookup(name) >= 0 || name == "undefined" {
		return false
	}
	c.names = append(c.names, name)
	c.consts = append(c.consts, isConst)
	return true
}

func (c *nativeCompiler) lookup(name string) int { return slices.Index(c.names, name) }

// stmt compiles a statement, or returns nil. Declarations are allowed only at the top level of
// the body, where they run in source order: a name is usable after its declaration only.
func (c *nativeCompiler) stmt(st ast.Statement, top bool) nstmt {
	switch s := st.(type) {
	case *ast.ExpressionStatement:
		if e := c.expr(s.Expression); e != nil {
			return exprStmt{e}
		}
	case *ast.EmptyStatement:
		return blockStmt(nil)
	case *ast.ReturnStatement:
		if s.Argument == nil {
			return returnStmt{litExpr{}}
		}
		if e := c.expr(s.Argument); e != nil {
			return returnStmt{e}
		}
	case *ast.BlockStatement:
		var list blockStmt
		for _, inner := range s.List {
			is := c.stmt(inner, false)
			if is == nil {
				return nil
			}
			list = append(list, is)
		}
		return list
	case *ast.IfStatement:
		test := c.expr(s.Test)
		then := c.stmt(s.Consequent, false)
		if test == nil || then == nil {
			return nil
		}
		var alt nstmt = blockStmt(nil)
		if s.Alternate != nil {
			if alt = c.stmt(s.Alternate, false); alt == nil {
				return nil
			}
		}
		return ifStmt{test, then, alt}
	case *ast.VariableStatement:
		if top {
			return c.declarations(s.List, false)
		}
	case *ast.LexicalDeclaration:
		if top && (s.Token == token.LET || s.Token == token.CONST) {
			return c.declarations(s.List, s.Token == token.CONST)
		}
	}
	return nil
}

func (c *nativeCompiler) declarations(list []*ast.Binding, isConst bool) nstmt {
	var out blockStmt
	for _, b := range list {
		id, ok := b.Target.(*ast.Identifier)
		if !ok {
			return nil
		}
		var init nexpr = litExpr{}
		if b.Initializer != nil {
			// The initializer is compiled before the name exists: it cannot read it.
			if init = c.expr(b.Initializer); init == nil {
				return nil
			}
		} else if isConst {
			return nil
		}
		if !c.declare(id.Name.String(), isConst) {
			return nil
		}
		out = append(out, exprStmt{&assignLocal{slot: len(c.names) - 1, val: init}})
	}
	return out
}

func (c *nativeCompiler) expr(e ast.Expression) nexpr {
	switch x := e.(type) {
	case *ast.StringLiteral:
		if s, ok := literalString(x.Value.String()); ok {
			return litExpr{strVal(s)}
		}
	case *ast.NumberLiteral:
		switch n := x.Value.(type) {
		case int64:
			return litExpr{numVal(float64(n))}
		case float64:
			return litExpr{numVal(n)}
		}
	case *ast.BooleanLiteral:
		return litExpr{boolVal(x.Value)}
	case *ast.NullLiteral:
		return litExpr{nval{k: kNull}}
	case *ast.TemplateLiteral:
		if x.Tag != nil || len(x.Elements) != len(x.Expressions)+1 {
			return nil
		}
		t := &templateExpr{}
		for i, el := range x.Elements {
			s, ok := literalString(el.Parsed.String())
			if !el.Valid || !ok {
				return nil
			}
			t.parts = append(t.parts, s)
			if i < len(x.Expressions) {
				sub := c.expr(x.Expressions[i])
				if sub == nil {
					return nil
				}
				t.exprs = append(t.exprs, sub)
			}
		}
		return t
	case *ast.Identifier:
		name := x.Name.String()
		if i := c.lookup(name); i >= 0 {
			if i < c.params {
				c.readsArgs = true
			}
			return localExpr(i)
		}
		if name == "undefined" {
			return litExpr{}
		}
	case *ast.DotExpression:
		if id, ok := x.Left.(*ast.Identifier); ok && c.params > 0 && x.Identifier.Name == "response" && c.lookup(id.Name.String()) == 0 {
			return &memberExpr{obj: localExpr(0), name: "response", lit: true} // config.response: not a read of the arguments
		}
		if obj := c.expr(x.Left); obj != nil {
			name := x.Identifier.Name.String()
			if m, ok := obj.(*memberExpr); ok && m.lit && m.name == "request" && name != "__proto__" {
				if l, isLocal := m.obj.(localExpr); isLocal {
					return &requestFieldExpr{memberExpr: memberExpr{obj: obj, name: name, lit: true}, local: l}
				}
			}
			return &memberExpr{obj: obj, name: name, lit: true}
		}
	case *ast.BracketExpression:
		obj, key := c.expr(x.Left), c.expr(x.Member)
		if obj != nil && key != nil {
			name, lit := literalKey(key)
			return &memberExpr{obj: obj, key: key, name: name, lit: lit}
		}
	case *ast.AssignExpression:
		return c.assign(x)
	case *ast.BinaryExpression:
		l, r := c.expr(x.Left), c.expr(x.Right)
		if l == nil || r == nil {
			return nil
		}
		switch x.Operator {
		case token.PLUS, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL, token.EQUAL, token.NOT_EQUAL:
			return &binaryExpr{op: x.Operator, l: l, r: r}
		case token.LOGICAL_AND, token.LOGICAL_OR:
			return &logicalExpr{and: x.Operator == token.LOGICAL_AND, l: l, r: r}
		}
	case *ast.UnaryExpression:
		if x.Operator == token.NOT {
			if o := c.expr(x.Operand); o != nil {
				return &notExpr{o}
			}
		}
	case *ast.ConditionalExpression:
		t, a, b := c.expr(x.Test), c.expr(x.Consequent), c.expr(x.Alternate)
		if t != nil && a != nil && b != nil {
			return &condExpr{t, a, b}
		}
	case *ast.ObjectLiteral:
		return c.object(x)
	case *ast.ArrayLiteral:
		a := arrayExpr{}
		for _, el := range x.Value {
			if el == nil { // a hole
				return nil
			}
			v := c.value(el)
			if v == nil {
				return nil
			}
			a = append(a, *v)
		}
		return a
	case *ast.CallExpression:
		return c.call(x)
	}
	return nil
}

// value compiles an expression whose value is stored in an object or array.
func (c *nativeCompiler) value(e ast.Expression) *storedValue {
	x := c.expr(e)
	if x == nil {
		return nil
	}
	v := &storedValue{e: x, fresh: isFresh(x)}
	if l, ok := x.(litExpr); ok && l.v.k != kUndef && (l.v.k != kNum || isFinite(l.v.f)) {
		v.konst, v.isConst = l.v.boxed(), true // boxed once, not on every call
	}
	return v
}

// isFresh reports whether x makes a new object or array: only those may be stored in another
// (see storedValue).
func isFresh(x nexpr) bool {
	switch x.(type) {
	case *objectExpr, arrayExpr:
		return true
	}
	return false
}

func (c *nativeCompiler) object(x *ast.ObjectLiteral) nexpr {
	o := &objectExpr{}
	for _, p := range x.Value {
		var key string
		var val *storedValue
		switch p := p.(type) {
		case *ast.PropertyKeyed:
			k, ok := p.Key.(*ast.StringLiteral)
			if !ok || p.Computed || p.Kind != ast.PropertyKindValue {
				return nil
			}
			key = k.Value.String()
			val = c.value(p.Value)
		case *ast.PropertyShort:
			if p.Initializer != nil {
				return nil
			}
			key = p.Name.Name.String()
			val = c.value(&p.Name)
		default:
			return nil
		}
		if _, ok := literalString(key); !ok || val == nil || !plainKey(key) {
			return nil
		}
		for _, m := range o.members {
			o.repeats = o.repeats || m.key == key
		}
		m := objectMember{key: key, val: *val}
		var w jsonWriter
		if w.quote(key) {
			m.json = string(w.buf)
		}
		if w.reset(); val.isConst && w.value(val.konst) {
			m.jsonVal = string(w.buf)
		}
		o.members = append(o.members, m)
	}
	return o
}

// plainKey reports whether key is a key an object keeps in the order it was added: JavaScript
// puts array indexes first, and __proto__ in a literal sets the prototype.
func plainKey(key string) bool { return key != "__proto__" && !isArrayIndex(key) }

// isArrayIndex reports whether key is an array index: the canonical decimal form of an integer
// from 0 to 2^32-2.
func isArrayIndex(key string) bool {
	if key == "" || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return false
	}
	n := uint64(0)
	for i := 0; i < len(key); i++ {
		d := key[i] - '0'
		if d > 9 {
			return false
		}
		n = n*10 + uint64(d)
	}
	return n < 1<<32-1
}

// call compiles JSON.stringify(value), JSON.stringify(value, null|undefined) and
// JSON.stringify(value, null|undefined, space) for a literal space; nothing else.
func (c *nativeCompiler) call(x *ast.CallExpression) nexpr {
	callee, ok := x.Callee.(*ast.DotExpression)
	if !ok || callee.Identifier.Name != "stringify" || len(x.ArgumentList) == 0 || len(x.ArgumentList) > 3 {
		return nil
	}
	if id, ok := callee.Left.(*ast.Identifier); !ok || id.Name != "JSON" || c.lookup("JSON") >= 0 {
		return nil
	}
	for _, a := range x.ArgumentList {
		if _, spread := a.(*ast.SpreadElement); spread {
			return nil
		}
	}
	arg := c.expr(x.ArgumentList[0])
	if arg == nil {
		return nil
	}
	s := &stringifyExpr{arg: arg}
	if lit, isLit := arg.(*objectExpr); isLit {
		s.direct = true
		for i := range lit.members {
			s.direct = s.direct && readsOnly(lit.members[i].val.e)
		}
	}
	if len(x.ArgumentList) > 1 && !c.nullish(x.ArgumentList[1]) {
		return nil // a replacer
	}
	if len(x.ArgumentList) > 2 {
		switch sp := x.ArgumentList[2].(type) {
		case *ast.NumberLiteral:
			var f float64
			switch n := sp.Value.(type) {
			case int64:
				f = float64(n)
			case float64:
				f = n
			}
			if !(f > -1e9 && f < 1e9) { // int64(f) is goja's count
				return nil
			}
			s.gap = strings.Repeat(" ", max(0, min(10, int(int64(f)))))
		case *ast.StringLiteral:
			gap := sp.Value.String()
			for i := 0; i < len(gap); i++ {
				if gap[i] >= utf8.RuneSelf {
					return nil // goja cuts the gap at 10 bytes, not 10 characters
				}
			}
			s.gap = gap[:min(10, len(gap))]
		default:
			if !c.nullish(sp) {
				return nil
			}
		}
	}
	c.global = true
	return s
}

// nullish reports whether e is the literal null or undefined.
func (c *nativeCompiler) nullish(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.NullLiteral:
		return true
	case *ast.Identifier:
		return x.Name == "undefined" && c.lookup("undefined") < 0
	}
	return false
}

func (c *nativeCompiler) assign(x *ast.AssignExpression) nexpr {
	if x.Operator != token.ASSIGN && x.Operator != token.PLUS {
		return nil
	}
	sv := c.value(x.Right)
	if sv == nil {
		return nil
	}
	val := sv.e
	switch l := x.Left.(type) {
	case *ast.Identifier:
		i := c.lookup(l.Name.String())
		if i < 0 || c.consts[i] {
			return nil
		}
		if x.Operator == token.PLUS {
			val = &binaryExpr{op: token.PLUS, l: localExpr(i), r: val}
		}
		return &assignLocal{slot: i, val: val}
	case *ast.DotExpression:
		obj := c.expr(l.Left)
		if obj == nil {
			return nil
		}
		return &assignMember{memberExpr: memberExpr{obj: obj, name: l.Identifier.Name.String(), lit: true}, val: *sv, add: x.Operator == token.PLUS}
	case *ast.BracketExpression:
		obj, key := c.expr(l.Left), c.expr(l.Member)
		if obj == nil || key == nil {
			return nil
		}
		name, lit := literalKey(key)
		return &assignMember{memberExpr: memberExpr{obj: obj, key: key, name: name, lit: lit}, val: *sv, add: x.Operator == token.PLUS}
	}
	return nil
}

// literalString returns the UTF-8 text of a string literal, unless it holds a lone surrogate
// (which JavaScript keeps and UTF-8 cannot).
func literalString(s string) (string, bool) {
	for _, r := range s {
		if r == utf8.RuneError {
			return "", false
		}
	}
	return s, true
}

// Values.

type nkind uint8

const (
	kUndef nkind = iota
	kNull
	kBool
	kNum
	kStr
	kObj
)

// nval is a JavaScript value of the native subset.
type nval struct {
	k nkind
	b bool
	f float64
	s string
	o *nobj
}

func strVal(s string) nval  { return nval{k: kStr, s: s} }
func numVal(f float64) nval { return nval{k: kNum, f: f} }
func boolVal(b bool) nval   { return nval{k: kBool, b: b} }
func objVal(o *nobj) nval   { return nval{k: kObj, o: o} }

// truthy is Boolean(v). Numbers and strings are not boxed into an any: that would allocate.
func (v nval) truthy() bool {
	switch v.k {
	case kNum:
		return jsvalue.NumberTruthy(v.f)
	case kStr:
		return v.s != ""
	case kObj:
		return true
	}
	return jsvalue.Truthy(v.js())
}

// str is String(v) for a primitive. Numbers and strings are not boxed into an any.
func (v nval) str() string {
	switch v.k {
	case kNum:
		return jsvalue.FormatNumber(v.f)
	case kStr:
		return v.s
	}
	return jsvalue.String(v.js())
}

// js is v as a jsvalue value (an object as the configuration object it stands for).
func (v nval) js() any {
	switch v.k {
	case kUndef:
		return jsvalue.Undef
	case kBool:
		return v.b
	case kNum:
		return v.f
	case kStr:
		return v.s
	case kObj:
		return v.o.o
	}
	return nil
}

// boxed is a primitive other than undefined as configuration; a number that is not finite stays
// one (fromJS makes it null: see ncall.fixes).
func (v nval) boxed() config.Value {
	switch v.k {
	case kBool:
		return v.b
	case kNum:
		return v.f
	case kStr:
		return v.s
	}
	return nil
}

// validText is utf8.ValidString, deciding ASCII text (the usual path, method, body) with a
// plain loop first: ValidString's own setup costs more than the few bytes it then reads.
func validText(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:]) // what precedes is ASCII
		}
	}
	return true
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// fromConfig makes a primitive of a configuration value; false for anything else, or for text
// that is not valid UTF-8 (goja would read it with replacement characters).
func fromConfig(v config.Value) (nval, bool) {
	switch t := v.(type) {
	case nil:
		return nval{k: kNull}, true
	case string:
		return strVal(t), validText(t)
	case float64:
		return numVal(t), true
	case bool:
		return boolVal(t), true
	}
	return nval{}, false
}

// Objects.

type nobjKind uint8

const (
	objOpaque  nobjKind = iota // the logger argument: any use gives up
	objConfig                  // the config argument
	objRequest                 // config.request
	objPlain                   // request.query, .headers, .form: read only
	objResp                    // the response or an object in it, or an object the call made
	objArray                   // an array the call made: its elements are not read
)

// nobj is an object a native call sees. Objects of the response are copied on their first
// change (and their parents with them), so the caller's response is never changed. Objects the
// call made (lit) are changed in place: each is a member of at most one object (see
// storedValue), so a change through one nobj is a change of the one JavaScript object.
type nobj struct {
	kind nobjKind
	o    *config.Object
	arr  []any // for objArray
	// For objResp:
	owned  bool  // o is this call's copy, or lit
	lit    bool  // o was made by an object literal of this call (an ordinary JavaScript object)
	parent *nobj // the object o is a member of, at key; nil for the response itself
	key    string
	kids   *nobj // member objects made so far, linked by next: each key gives one object
	next   *nobj
}

// ncall is the state of one native call.
type ncall struct {
	req     *request.Request
	slots   []nval
	cfg     nobj
	root    nobj
	logger  nobj
	reqObj  nobj
	kv      [3]*nobj // query, headers, form, once read
	objs    [6]nobj  // room for member objects without an allocation
	nobjs   int
	reqKeys []string
	hasReq  bool // the config object has the request's fields
	inject  bool // an inject response's call: config has no response
	// pristine: goja would run the call on a pooled runtime, whose builtins (Object.prototype,
	// JSON) no script changes; reading a key an object lacks is then undefined.
	pristine bool

	ret   nval             // what the body returned (here: a local would escape)
	lits  []*config.Object // the objects object literals made
	fixes []fixup          // members set to a number that is not finite
	json  jsonWriter
	// slab, when the request has one, holds the objects the call makes.
	slab *Slab
	// litVals holds the member values of the object literals JSON.stringify is writing.
	litVals []litVal
	// slabs says the call state is the slab's own (Slab.takeCall), not the pool's.
	slabs bool
}

// fixup is a member set to NaN or an infinity: JavaScript reads it back as it is, and fromJS
// makes it null when the call ends.
type fixup struct {
	o   *config.Object
	key string
}

var ncallPool = sync.Pool{New: func() any { return &ncall{} }}

// run calls f with (config, response, logger) for request r and response resp (not changed)
// and returns the response as decorate returns it, or false when the call must run on goja.
func (f *nativeFn) run(r *request.Request, resp *config.Object, pristine bool) (*config.Object, bool) {
	if resp == nil {
		return nil, false
	}
	c := f.begin(r, false, pristine)
	defer c.release()
	c.root = nobj{kind: objResp, o: resp}
	if len(c.slots) > 1 {
		c.slots[1] = objVal(&c.root)
	}
	ret, ok := f.exec(c)
	switch {
	case !ok:
		return nil, false
	case ret.k == kObj && ret.o == &c.root, !ret.truthy():
		return c.finish(c.root.o), true
	case ret.k == kObj && ret.o.lit:
		return c.finish(ret.o.o), true // goja reads the returned object as the response
	}
	return nil, false
}

// runInject calls f as an inject response, with (config, injectState, logger, callback,
// imposterState) for request r, and returns the response object as Scope.Response returns it,
// or false when the call must run on goja.
func (f *nativeFn) runInject(r *request.Request, pristine bool) (*config.Object, bool) {
	c := f.begin(r, true, pristine)
	defer c.release()
	ret, ok := f.exec(c)
	switch {
	case !ok || ret.k == kUndef || ret.k == kNull:
		return nil, false // undefined waits for the callback; null fails
	case ret.k != kObj:
		return &config.Object{}, true // a primitive: every default applies
	case ret.o.lit:
		return c.finish(ret.o.o), true
	}
	return nil, false
}

// begin readies a call for request r: the first slot is config, the others the arguments
// a call passes that no native function may use (logger, state, callback) and locals.
func (f *nativeFn) begin(r *request.Request, inject, pristine bool) *ncall {
	slab := slabOf(r)
	c := slab.takeCall()
	if c == nil {
		c = ncallPool.Get().(*ncall)
	}
	c.pristine = pristine
	c.req = r
	c.slab = slab
	c.reqKeys = requestKeys(r)
	c.hasReq = configHasRequest(r)
	c.inject = inject
	if c.cfg.kind != objConfig {
		// The first call on this state. config, the logger and config.request are never
		// changed by a call (only objects of the response are: see set), nor hold anything
		// of it: they are made once, and release leaves them.
		c.cfg, c.logger, c.reqObj = nobj{kind: objConfig}, nobj{kind: objOpaque}, nobj{kind: objRequest}
	}
	if cap(c.slots) < f.nslots {
		c.slots = make([]nval, f.nslots)
	}
	c.slots = c.slots[:f.nslots]
	nargs := 3
	if inject {
		nargs = 5
	}
	for i := range c.slots {
		switch {
		case i == 0:
			c.slots[i] = objVal(&c.cfg)
		case i < nargs:
			c.slots[i] = objVal(&c.logger)
		default:
			c.slots[i] = nval{}
		}
	}
	return c
}

// exec runs f's body and returns what it returned.
func (f *nativeFn) exec(c *ncall) (nval, bool) {
	c.ret = nval{}
	for _, s := range f.body {
		done, ok := s.exec(c, &c.ret)
		if !ok {
			return nval{}, false
		}
		if done {
			break
		}
	}
	return c.ret, true
}

// finish makes the members set to numbers that are not finite null, as fromJS does, and
// returns o.
func (c *ncall) finish(o *config.Object) *config.Object {
	for _, f := range c.fixes {
		if v, ok := f.o.Get(f.key); ok {
			if n, isNum := v.(float64); isNum && !isFinite(n) {
				f.o.Set(f.key, nil)
			}
		}
	}
	return o
}

func (c *ncall) release() {
	// Element by element, not clear: a call's lists are a few entries long, and clear of a
	// type with pointers costs a runtime call (memclrHasPointers, its write barrier check,
	// memclrNoHeapPointers) of ~50 instructions each.
	for i := 0; i < len(c.slots); i++ {
		c.slots[i] = nval{}
	}
	c.kv = [3]*nobj{}
	for i := 0; i < c.nobjs; i++ {
		c.objs[i] = nobj{}
	}
	c.nobjs = 0
	c.req, c.reqKeys, c.slab = nil, nil, nil
	c.root = nobj{} // cfg, logger and reqObj stay as begin made them
	c.ret = nval{}
	for i := 0; i < len(c.lits); i++ {
		c.lits[i] = nil
	}
	for i := 0; i < len(c.fixes); i++ {
		c.fixes[i] = fixup{}
	}
	c.lits, c.fixes = c.lits[:0], c.fixes[:0]
	c.json.reset()
	if c.slabs {
		c.slabs = false
		return // the request's slab's own call (see Slab.takeCall), free again
	}
	ncallPool.Put(c)
}

func (c *ncall) newObj() *nobj {
	if c.nobjs < len(c.objs) {
		c.nobjs++
		return &c.objs[c.nobjs-1]
	}
	return &nobj{}
}

// get reads o[key].
func (c *ncall) get(o *nobj, key string) (nval, bool) {
	if key == "__proto__" {
		return nval{}, false
	}
	switch o.kind {
	case objConfig:
		switch key {
		case "request":
			return objVal(&c.reqObj), true
		case "response":
			if c.inject {
				return c.absent(key)
			}
			return objVal(&c.root), true
		case "state", "logger", "callback":
			return nval{}, false
		}
		if c.hasReq {
			return c.requestField(key)
		}
		return c.absent(key)
	case objRequest:
		return c.requestField(key)
	case objPlain:
		if v, ok := o.o.Get(key); ok {
			return fromConfig(v)
		}
		return c.absent(key)
	case objResp:
		v, ok := o.o.Get(key)
		if !ok {
			return c.absent(key)
		}
		if m, isObj := v.(*config.Object); isObj && m != nil {
			for k := o.kids; k != nil; k = k.next {
				if k.key == key {
					return objVal(k), true
				}
			}
			k := c.newObj()
			lit := o.lit || slices.Contains(c.lits, m)
			*k = nobj{kind: objResp, o: m, parent: o, key: key, next: o.kids, lit: lit, owned: lit}
			o.kids = k
			return objVal(k), true
		}
		return fromConfig(v)
	}
	return nval{}, false
}

// absent reads key from an object that does not have it: undefined, unless Object.prototype
// has it (goja then reads that), or the call's runtime could be one whose Object.prototype a
// script changed (see ncall.pristine).
func (c *ncall) absent(key string) (nval, bool) {
	if !c.pristine {
		return nval{}, false
	}
	switch key {
	case "constructor", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
		"hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "toString", "valueOf", "__proto__":
		return nval{}, false
	}
	return nval{}, true
}

// requestField reads a field of the request as Mountebank's scripts see it.
func (c *ncall) requestField(key string) (nval, bool) {
	if !slices.Contains(c.reqKeys, key) {
		return c.absent(key)
	}
	if c.req.Object != nil { // a custom protocol's request: read, never changed (see set)
		v, _ := c.req.Object.Get(key)
		return fromConfig(v)
	}
	i := -1
	switch key {
	case "query":
		i = 0
	case "headers":
		i = 1
	case "form":
		i = 2
	}
	if i < 0 {
		s := requestSource{c.req}.str(key) // not boxed: that would allocate
		return strVal(s), validText(s)
	}
	if c.kv[i] == nil {
		o := c.newObj()
		*o = nobj{kind: objPlain, o: requestSource{c.req}.goValue(key).(*config.Object)}
		c.kv[i] = o
	}
	return objVal(c.kv[i]), true
}

// set assigns v, stored as sv says, to o[key]: only objects of the response and objects the
// call made can change.
func (c *ncall) set(o *nobj, key string, v nval, sv *storedValue) bool {
	if o.kind != objResp || key == "__proto__" || (o.lit && isArrayIndex(key)) {
		return false
	}
	val, ok := c.store(v, sv)
	if !ok {
		return false
	}
	c.own(o)
	// A member object replaced lives on apart from the response.
	for p := &o.kids; *p != nil; p = &(*p).next {
		if k := *p; k.key == key {
			*p, k.parent, k.next = k.next, nil, nil
			break
		}
	}
	o.o.Set(key, val)
	if v.k == kNum && !isFinite(v.f) {
		c.fixes = append(c.fixes, fixup{o.o, key})
	}
	return true
}

// store returns v, the value of sv, as it is stored in an object: undefined is not (JSON and
// fromJS drop the member, but it keeps its place), an object only when sv made it.
func (c *ncall) store(v nval, sv *storedValue) (config.Value, bool) {
	switch {
	case sv.isConst:
		return sv.konst, true
	case v.k == kUndef:
		return nil, false
	case v.k == kObj:
		if !sv.fresh {
			return nil, false
		}
		if v.o.kind == objArray {
			return v.o.arr, true
		}
		return v.o.o, true
	case v.k == kStr:
		return c.slab.box(v.s), true // without an allocation when the request has a slab
	}
	return v.boxed(), true
}

// own makes o's object this call's copy, and its parents', before a change.
func (c *ncall) own(o *nobj) {
	if o.owned {
		return
	}
	cp := c.slab.object(len(o.o.Members) + 1)
	cp.Members = append(cp.Members, o.o.Members...)
	o.o, o.owned = cp, true
	if o.parent != nil {
		c.own(o.parent)
		o.parent.o.Set(o.key, cp)
	}
}

// Statements and expressions.

type nstmt interface {
	// exec runs the statement; done is true after a return (its value in *ret), ok false when
	// the call must run on goja.
	exec(c *ncall, ret *nval) (done, ok bool)
}

type nexpr interface {
	eval(c *ncall) (nval, bool)
}

type exprStmt struct{ e nexpr }

func (s exprStmt) exec(c *ncall, _ *nval) (bool, bool) {
	_, ok := s.e.eval(c)
	return false, ok
}

type returnStmt struct{ e nexpr }

func (s returnStmt) exec(c *ncall, ret *nval) (bool, bool) {
	v, ok := s.e.eval(c)
	*ret = v
	return true, ok
}

type blockStmt []nstmt

func (s blockStmt) exec(c *ncall, ret *nval) (bool, bool) {
	for _, st := range s {
		if done, ok := st.exec(c, ret); done || !ok {
			return done, ok
		}
	}
	return false, true
}

type ifStmt struct {
	test      nexpr
	then, alt nstmt
}

func (s ifStmt) exec(c *ncall, ret *nval) (bool, bool) {
	t, ok := s.test.eval(c)
	if !ok {
		return false, false
	}
	if t.truthy() {
		return s.then.exec(c, ret)
	}
	return s.alt.exec(c, ret)
}

type litExpr struct{ v nval }

func (e litExpr) eval(*ncall) (nval, bool) { return e.v, true }

type localExpr int

func (e localExpr) eval(c *ncall) (nval, bool) { return c.slots[e], true }

type assignLocal struct {
	slot int
	val  nexpr
}

func (e *assignLocal) eval(c *ncall) (nval, bool) {
	v, ok := e.val.eval(c)
	if ok {
		c.slots[e.slot] = v
	}
	return v, ok
}

// propertyKey is ToPropertyKey for the keys the subset reads: strings and numbers.
func propertyKey(v nval) (string, bool) {
	switch v.k {
	case kStr:
		return v.s, true
	case kNum:
		return v.str(), true
	}
	return "", false
}

// literalKey returns the property key a literal key expression (a string or number) stands for.
func literalKey(e nexpr) (string, bool) {
	if l, ok := e.(litExpr); ok {
		return propertyKey(l.v)
	}
	return "", false
}

// memberExpr reads obj[key], or obj[name] when the key is a literal.
type memberExpr struct {
	obj, key nexpr
	name     string
	lit      bool
}

// target evaluates the object and the key.
func (e *memberExpr) target(c *ncall) (*nobj, string, bool) {
	var o nval
	if l, isLocal := e.obj.(localExpr); isLocal {
		o = c.slots[l] // the usual config.…: read without a call
	} else {
		var ok bool
		if o, ok = e.obj.eval(c); !ok {
			return nil, "", false
		}
	}
	if o.k != kObj {
		return nil, "", false
	}
	if e.lit {
		return o.o, e.name, true
	}
	kv, ok := e.key.eval(c)
	if !ok {
		return nil, "", false
	}
	key, ok := propertyKey(kv)
	return o.o, key, ok
}

func (e *memberExpr) eval(c *ncall) (nval, bool) {
	o, key, ok := e.target(c)
	if !ok {
		return nval{}, false
	}
	return c.get(o, key)
}

// requestFieldExpr is local.request.name, the usual config.request.path: when the local holds
// the config argument it reads the request's field as get would through config.request,
// without evaluating the member chain; otherwise it is the memberExpr.
type requestFieldExpr struct {
	memberExpr
	local localExpr
}

func (e *requestFieldExpr) eval(c *ncall) (nval, bool) {
	if o := c.slots[e.local]; o.k == kObj && o.o.kind == objConfig {
		return c.requestField(e.name) // get(config, "request") is always config.request
	}
	return e.memberExpr.eval(c)
}

type assignMember struct {
	memberExpr
	val storedValue
	add bool // +=
}

func (e *assignMember) eval(c *ncall) (nval, bool) {
	// JavaScript evaluates the object, the key, (the old value,) then the value.
	o, key, ok := e.target(c)
	if !ok {
		return nval{}, false
	}
	var old nval
	if e.add {
		if old, ok = c.get(o, key); !ok {
			return nval{}, false
		}
	}
	v, ok := e.val.e.eval(c)
	if !ok {
		return nval{}, false
	}
	sv := &e.val
	if e.add {
		if v, ok = c.add(old, v); !ok {
			return nval{}, false
		}
		sv = &storedValue{} // the sum, not the literal
	}
	return v, c.set(o, key, v, sv)
}

// storedValue is an expression whose value is stored in an object or an array. An object is
// stored only when the expression made it (an object or array literal written in place): the
// call's objects then form trees, each with one parent, so that changing one in place is what
// JavaScript does, and the result has no object twice (goja's conversion would copy it) and no
// cycle.
type storedValue struct {
	e       nexpr
	fresh   bool         // e makes a new object or array
	konst   config.Value // e's value boxed, when e is a literal other than undefined
	isConst bool
}

// objectExpr is an object literal: an ordinary object, its keys in order.
type objectExpr struct {
	members []objectMember
	repeats bool // a key is written twice: it keeps its first place and takes the last value
}

type objectMember struct {
	key string
	val storedValue
	// json is the key as JSON.stringify writes it, quoted; jsonVal the value's JSON when it is
	// a constant primitive: written as prepared bytes, not quoted again on every call.
	json, jsonVal string
}

func (e *objectExpr) eval(c *ncall) (nval, bool) {
	o := c.slab.object(len(e.members))
	for i := range e.members {
		m := &e.members[i]
		v, ok := m.val.e.eval(c)
		if !ok {
			return nval{}, false
		}
		val, ok := c.store(v, &m.val)
		if !ok {
			return nval{}, false
		}
		if e.repeats {
			o.Set(m.key, val)
		} else {
			o.Members = append(o.Members, config.Member{Key: m.key, Value: val})
		}
		if v.k == kNum && !isFinite(v.f) {
			c.fixes = append(c.fixes, fixup{o, m.key})
		}
	}
	c.lits = append(c.lits, o)
	n := c.newObj()
	*n = nobj{kind: objResp, o: o, owned: true, lit: true}
	return objVal(n), true
}

// arrayExpr is an array literal. Its elements are never read back, so undefined and numbers
// that are not finite are stored as the null they become.
type arrayExpr []storedValue

func (e arrayExpr) eval(c *ncall) (nval, bool) {
	a := make([]any, len(e))
	for i := range e {
		v, ok := e[i].e.eval(c)
		if !ok {
			return nval{}, false
		}
		switch {
		case v.k == kUndef, v.k == kNum && !isFinite(v.f):
			a[i] = nil
		default:
			if a[i], ok = c.store(v, &e[i]); !ok {
				return nval{}, false
			}
		}
	}
	n := c.newObj()
	*n = nobj{kind: objArray, arr: a}
	return objVal(n), true
}

// stringifyExpr is JSON.stringify(arg, null, gap).
type stringifyExpr struct {
	arg nexpr
	gap string
	// direct: arg is an object literal whose member values only read (literals, locals, member
	// reads): none can use the writer, so each is written as it is evaluated (see direct).
	direct bool
}

func (e *stringifyExpr) eval(c *ncall) (nval, bool) {
	if lit, isLit := e.arg.(*objectExpr); isLit && !lit.repeats && len(lit.members) > 0 {
		if e.direct {
			return e.directLiteral(c, lit)
		}
		return e.literal(c, lit)
	}
	v, ok := e.arg.eval(c)
	if !ok {
		return nval{}, false
	}
	var val config.Value
	switch v.k {
	case kUndef:
		return nval{}, true // JSON.stringify(undefined) is undefined
	case kObj:
		switch v.o.kind {
		case objResp, objPlain:
			val = v.o.o
		case objArray:
			val = v.o.arr
		case objRequest:
			val = Request(c.req)
		default:
			return nval{}, false
		}
	default:
		val = v.boxed()
	}
	w := &c.json
	w.reset()
	w.gap = e.gap
	if !w.value(val) || len(w.buf) > maxNativeString {
		return nval{}, false
	}
	return strVal(c.text(w.buf)), true
}

// litVal is a member value of an object literal JSON.stringify writes: a primitive as it is
// (boxing it would allocate), or the value the object would hold.
type litVal struct {
	v     nval
	val   config.Value
	boxed bool
}

// readsOnly is true for an expression that only reads: a literal, a local, a member read of
// such expressions. Evaluating it never uses the JSON writer.
func readsOnly(e nexpr) bool {
	switch x := e.(type) {
	case litExpr, localExpr:
		return true
	case *requestFieldExpr:
		return readsOnly(x.obj)
	case *memberExpr:
		return readsOnly(x.obj) && (x.lit || readsOnly(x.key))
	}
	return false
}

// directLiteral is literal for a literal whose member values only read (readsOnly): each is
// written as soon as it is evaluated. What literal gives up on, it gives up on too (the
// writer's half-written text is then dropped: every use starts with reset).
func (e *stringifyExpr) directLiteral(c *ncall, lit *objectExpr) (nval, bool) {
	w := &c.json
	stepback := w.openLiteral(e.gap)
	for i := range lit.members {
		m := &lit.members[i]
		var v nval
		if m.jsonVal == "" {
			var ok bool
			if v, ok = m.val.e.eval(c); !ok {
				return nval{}, false
			}
		}
		if !w.memberKey(i, stepback+1, m) {
			return nval{}, false
		}
		switch {
		case m.jsonVal != "":
			w.buf = append(w.buf, m.jsonVal...)
		case !m.val.isConst && v.k >= kNull && v.k <= kStr:
			if !w.primitive(v) {
				return nval{}, false
			}
		default:
			val, ok := c.store(v, &m.val)
			if !ok || !w.value(val) {
				return nval{}, false
			}
		}
	}
	return c.closeLiteral(stepback)
}

// openLiteral starts writing an object literal with gap: it returns the level to step back to.
func (w *jsonWriter) openLiteral(gap string) (stepback int) {
	w.reset()
	w.gap = gap
	stepback = w.level
	w.level++
	w.buf = append(w.buf, '{')
	return stepback
}

// memberKey writes what comes before the value of the literal's i-th member m: a comma, the
// line and indent of depth inner, the key and its colon.
func (w *jsonWriter) memberKey(i, inner int, m *objectMember) bool {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	w.newline(inner)
	if m.json != "" {
		w.buf = append(w.buf, m.json...)
	} else if !w.quote(m.key) {
		return false
	}
	w.buf = append(w.buf, ':')
	if w.gap != "" {
		w.buf = append(w.buf, ' ')
	}
	return true
}

// closeLiteral ends the literal openLiteral began and returns its text.
func (c *ncall) closeLiteral(stepback int) (nval, bool) {
	w := &c.json
	w.newline(stepback)
	w.buf = append(w.buf, '}')
	w.level = stepback
	if len(w.buf) > maxNativeString {
		return nval{}, false
	}
	return strVal(c.text(w.buf)), true
}

// literal is JSON.stringify({...}): the literal's object is never seen by anything else, so
// it is written, not made. Its members are evaluated first, in order, as the object would be
// made (a member may itself call JSON.stringify, which uses the writer), and given up on as
// making it would give up; then written as the writer writes an object.
func (e *stringifyExpr) literal(c *ncall, lit *objectExpr) (nval, bool) {
	base := len(c.litVals)
	defer func() {
		for i := base; i < len(c.litVals); i++ { // not clear: see release
			c.litVals[i] = litVal{}
		}
		c.litVals = c.litVals[:base]
	}()
	for i := range lit.members {
		m := &lit.members[i]
		v, ok := m.val.e.eval(c)
		if !ok {
			return nval{}, false
		}
		if !m.val.isConst && v.k >= kNull && v.k <= kStr {
			c.litVals = append(c.litVals, litVal{v: v})
			continue
		}
		val, ok := c.store(v, &m.val)
		if !ok {
			return nval{}, false
		}
		c.litVals = append(c.litVals, litVal{val: val, boxed: true})
	}
	w := &c.json
	stepback := w.openLiteral(e.gap)
	for i := range lit.members {
		m := &lit.members[i]
		if !w.memberKey(i, stepback+1, m) {
			return nval{}, false
		}
		lv := &c.litVals[base+i]
		if m.jsonVal != "" {
			w.buf = append(w.buf, m.jsonVal...)
		} else if lv.boxed {
			if !w.value(lv.val) {
				return nval{}, false
			}
		} else if !w.primitive(lv.v) {
			return nval{}, false
		}
	}
	return c.closeLiteral(stepback)
}

// text returns b as a string, in the slab's memory for strings when the call may use it.
func (c *ncall) text(b []byte) string {
	if s, ok := c.slab.join(unsafe.String(unsafe.SliceData(b), len(b))); ok {
		return s
	}
	return string(b)
}

type templateExpr struct {
	parts []string // one more than exprs
	exprs []nexpr
}

func (e *templateExpr) eval(c *ncall) (nval, bool) {
	s := e.parts[0]
	for i, x := range e.exprs {
		v, ok := x.eval(c)
		if !ok || v.k == kObj {
			return nval{}, false
		}
		s += v.str() + e.parts[i+1]
		if len(s) > maxNativeString {
			return nval{}, false
		}
	}
	return strVal(s), true
}

// maxNativeString bounds the strings a native call makes: a body without loops can still double
// a string at each statement, and goja's memory limit, not the process's, should stop that.
const maxNativeString = 1 << 20

// add is the + operator on primitives: strings join, numbers add; anything else gives up.
func (c *ncall) add(a, b nval) (nval, bool) {
	switch {
	case a.k == kObj || b.k == kObj:
		return nval{}, false
	case a.k == kStr || b.k == kStr:
		as, bs := a.str(), b.str()
		if len(as)+len(bs) > maxNativeString {
			return nval{}, false
		}
		if as != "" && bs != "" {
			if s, ok := c.slab.join(as, bs); ok {
				return strVal(s), true
			}
		}
		return strVal(as + bs), true
	case a.k == kNum && b.k == kNum:
		return numVal(a.f + b.f), true
	}
	return nval{}, false
}

type binaryExpr struct {
	op   token.Token
	l, r nexpr
}

func (e *binaryExpr) eval(c *ncall) (nval, bool) {
	a, ok := e.l.eval(c)
	if !ok {
		return nval{}, false
	}
	b, ok := e.r.eval(c)
	if !ok {
		return nval{}, false
	}
	if e.op == token.PLUS {
		return c.add(a, b)
	}
	if a.k == kObj || b.k == kObj {
		return nval{}, false
	}
	var eq bool
	switch {
	case a.k == b.k:
		eq = strictEqual(a, b)
	case e.op == token.EQUAL || e.op == token.NOT_EQUAL:
		nullish := func(v nval) bool { return v.k == kUndef || v.k == kNull }
		if !nullish(a) && !nullish(b) {
			return nval{}, false // == converts between types: not in the subset
		}
		eq = nullish(a) && nullish(b)
	}
	if e.op == token.NOT_EQUAL || e.op == token.STRICT_NOT_EQUAL {
		eq = !eq
	}
	return boolVal(eq), true
}

// strictEqual is === for two primitives of the same kind.
func strictEqual(a, b nval) bool {
	switch a.k {
	case kBool:
		return a.b == b.b
	case kNum:
		return a.f == b.f
	case kStr:
		return a.s == b.s
	}
	return true // undefined, null
}

type logicalExpr struct {
	and  bool
	l, r nexpr
}

func (e *logicalExpr) eval(c *ncall) (nval, bool) {
	a, ok := e.l.eval(c)
	if !ok || a.truthy() != e.and {
		return a, ok
	}
	return e.r.eval(c)
}

type notExpr struct{ e nexpr }

func (e *notExpr) eval(c *ncall) (nval, bool) {
	v, ok := e.e.eval(c)
	return boolVal(!v.truthy()), ok
}

type condExpr struct{ test, a, b nexpr }

func (e *condExpr) eval(c *ncall) (nval, bool) {
	t, ok := e.test.eval(c)
	if !ok {
		return nval{}, false
	}
	if t.truthy() {
		return e.a.eval(c)
	}
	return e.b.eval(c)
}
