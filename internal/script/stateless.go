package script

import (
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// Scripts of one imposter share its state (Mountebank's imposterState, the deprecated
// positional state of inject responses, config.state), which lives in the imposter's runtime,
// so calls that may touch it run there one at a time, as Mountebank runs them. A function that
// cannot reach the state runs on a runtime of the Scope's pool instead, beside other such calls.
// Whether it can is read from its source, conservatively: see touchesState.

// callKind is a kind of script call; each passes arguments of its own.
type callKind int

const (
	kindPredicate    callKind = iota // (config, logger, imposterState)
	kindResponse                     // (config, injectState, logger, done, imposterState)
	kindDecorate                     // (config, response, logger)
	kindWait                         // ()
	kindEndOfRequest                 // (requestData, logger)
	kindGenerator                    // (config), config without state
)

// stateArg is the first argument of each kind that holds state; a function that declares that
// many parameters may reach it. -1: none does.
var stateArg = [...]int{
	kindPredicate:    2,
	kindResponse:     1,
	kindDecorate:     -1,
	kindWait:         -1,
	kindEndOfRequest: -1,
	kindGenerator:    -1,
}

// loggerArg is the argument of each kind that is the logger, whose methods format with
// util.inspect (installNode); -1: none is, 0: every call needs node (requestData may be a Buffer).
var loggerArg = [...]int{
	kindPredicate:    1,
	kindResponse:     2,
	kindDecorate:     2,
	kindWait:         -1,
	kindEndOfRequest: 0,
	kindGenerator:    -1,
}

// freeInfo is what the analysis of a function's source found.
type freeInfo struct {
	analysed bool
	params   int  // declared parameters
	touches  bool // the body may reach state, whatever the parameters
	node     bool // the function may use what installNode adds, whatever the parameters
}

// needsNode reports whether a call of this kind to the function may use what installNode adds
// (see runtime.needNode): it names one of nodeNames, reaches the global object or a property by
// a computed name, or declares the parameter the logger is passed as.
func (f freeInfo) needsNode(kind callKind) bool {
	if !f.analysed || f.node {
		return true
	}
	n := loggerArg[kind]
	return n >= 0 && f.params > n
}

// readsArg reports whether a call to the function may read its argument number n
// (from 0): through a parameter, or through arguments, eval and the like (which touches counts).
func (f freeInfo) readsArg(n int) bool {
	return !f.analysed || f.touches || f.params > n
}

// stateless reports whether a call of this kind to the function cannot reach the imposter's
// state (nor anything else that outlives the call, such as the global object).
func (f freeInfo) stateless(kind callKind) bool {
	if !f.analysed || f.touches {
		return false
	}
	n := stateArg[kind]
	return n < 0 || f.params <= n
}

// stateNames are identifiers and property names through which a function may reach state or the
// global object.
var stateNames = map[string]bool{
	"state": true, "imposterState": true, "injectState": true,
	"arguments": true, "eval": true, "Function": true, "globalThis": true, "global": true,
	"constructor": true, "__proto__": true, "prototype": true, "Reflect": true, "Proxy": true,
}

// analyse reads the function expression source as Mountebank evaluates it.
func analyse(source string) freeInfo {
	prog, err := parser.ParseFile(nil, "", "("+source+"\n)", 0)
	if err != nil || len(prog.Body) != 1 {
		return freeInfo{}
	}
	stmt, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return freeInfo{}
	}
	var params *ast.ParameterList
	var body any
	switch fn := stmt.Expression.(type) {
	case *ast.FunctionLiteral:
		params, body = fn.ParameterList, fn.Body
	case *ast.ArrowFunctionLiteral:
		params, body = fn.ParameterList, fn.Body
	default:
		return freeInfo{}
	}
	info := freeInfo{analysed: true, node: mentionsNode(stmt.Expression)}
	if params == nil {
		return info
	}
	info.params = len(params.List)
	if params.Rest != nil {
		return freeInfo{} // receives every argument
	}
	// The first parameter is config (or the request, in the old forms): it may be read
	// through a property other than state, and must not escape as a whole (passed on,
	// spread, enumerated), which would expose config.state.
	first := ""
	for i, b := range params.List {
		if id, ok := b.Target.(*ast.Identifier); ok && i == 0 {
			first = string(id.Name)
		} else if touchesState(b.Target, "") {
			info.touches = true
		}
		if b.Initializer != nil && touchesState(b.Initializer, first) {
			info.touches = true
		}
	}
	if touchesState(body, first) || changesGlobal(stmt.Expression) {
		info.touches = true
	}
	return info
}

// safeGlobals are global names whose values are primitives: using them as values reaches nothing.
var safeGlobals = map[string]bool{"undefined": true, "NaN": true, "Infinity": true}

// changesGlobal walks a function and reports whether it may change something global (a builtin
// such as JSON or Math, which a runtime keeps from call to call, as Node keeps it for every later
// script): it writes through a name the function does not declare (JSON.x = 1, Math.x++,
// delete JSON.x), or hands such a name on as a value (Object.assign(JSON, ...), const j = JSON),
// other than to read a member of it, call it, or test it with typeof or instanceof. Names are
// told apart by text only: a name declared anywhere in the function counts as declared
// everywhere in it.
func changesGlobal(fn any) bool {
	declared := map[string]bool{}
	found := false
	walkAST(fn, &found, func(n any, _ func(reflect.Value)) bool {
		switch t := n.(type) {
		case *ast.Binding:
			boundNames(t.Target, declared)
		case *ast.ParameterList:
			boundNames(t.Rest, declared)
		case *ast.CatchStatement:
			boundNames(t.Parameter, declared)
		case *ast.ForDeclaration:
			boundNames(t.Target, declared)
		case *ast.FunctionLiteral:
			boundNames(t.Name, declared)
		case *ast.ClassLiteral:
			boundNames(t.Name, declared)
		}
		return false
	})
	free := func(e ast.Expression) bool {
		id, ok := e.(*ast.Identifier)
		return ok && !declared[string(id.Name)] && !safeGlobals[string(id.Name)]
	}
	walkAST(fn, &found, func(n any, walk func(reflect.Value)) bool {
		switch t := n.(type) {
		case *ast.Identifier: // used as a value
			found = free(t)
			return true
		case *ast.DotExpression:
			if _, isID := t.Left.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Left))
			}
			return true
		case *ast.PrivateDotExpression:
			if _, isID := t.Left.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Left))
			}
			return true
		case *ast.BracketExpression:
			if _, isID := t.Left.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Left))
			}
			walk(reflect.ValueOf(t.Member))
			return true
		case *ast.CallExpression:
			if _, isID := t.Callee.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Callee))
			}
			walk(reflect.ValueOf(t.ArgumentList))
			return true
		case *ast.NewExpression:
			if _, isID := t.Callee.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Callee))
			}
			walk(reflect.ValueOf(t.ArgumentList))
			return true
		case *ast.AssignExpression:
			if writesThrough(t.Left, free) {
				found = true
				return true
			}
			return false
		case *ast.UnaryExpression:
			switch t.Operator {
			case token.INCREMENT, token.DECREMENT, token.DELETE:
				if writesThrough(t.Operand, free) {
					found = true
					return true
				}
			case token.TYPEOF:
				if _, isID := t.Operand.(*ast.Identifier); isID {
					return true
				}
			}
			return false
		case *ast.BinaryExpression:
			if _, isID := t.Right.(*ast.Identifier); isID && t.Operator == token.INSTANCEOF {
				walk(reflect.ValueOf(t.Left))
				return true
			}
			return false
		case *ast.Binding:
			walk(reflect.ValueOf(t.Initializer)) // the target declares
			if _, isID := t.Target.(*ast.Identifier); !isID {
				walk(reflect.ValueOf(t.Target)) // a pattern's defaults and computed keys
			}
			return true
		case *ast.PropertyKeyed:
			if t.Computed {
				walk(reflect.ValueOf(t.Key))
			}
			walk(reflect.ValueOf(t.Value))
			return true
		case *ast.PropertyShort:
			found = free(&t.Name) // {JSON} hands JSON on
			walk(reflect.ValueOf(t.Initializer))
			return true
		case *ast.LabelledStatement:
			walk(reflect.ValueOf(t.Statement))
			return true
		case *ast.BranchStatement, *ast.MetaProperty:
			return true
		case *ast.FunctionLiteral:
			walk(reflect.ValueOf(t.ParameterList))
			walk(reflect.ValueOf(t.Body))
			return true
		case *ast.ClassLiteral:
			walk(reflect.ValueOf(t.SuperClass))
			walk(reflect.ValueOf(t.Body))
			return true
		}
		return false
	})
	return found
}

// writesThrough reports whether the target of an assignment, ++, -- or delete is a member of
// (a member of...) a free name, or a pattern with such a member in it.
func writesThrough(target ast.Expression, free func(ast.Expression) bool) bool {
	switch t := target.(type) {
	case *ast.DotExpression:
		return free(t.Left) || writesThrough(t.Left, free)
	case *ast.BracketExpression:
		return free(t.Left) || writesThrough(t.Left, free)
	case *ast.PrivateDotExpression:
		return free(t.Left) || writesThrough(t.Left, free)
	case *ast.ObjectPattern, *ast.ArrayPattern:
		found := false
		walkAST(t, &found, func(n any, _ func(reflect.Value)) bool {
			switch m := n.(type) {
			case *ast.DotExpression, *ast.BracketExpression, *ast.PrivateDotExpression:
				found = writesThrough(m.(ast.Expression), free)
				return true
			}
			return false
		})
		return found
	}
	return false
}

// boundNames adds the names a binding target (a name or a pattern) declares to names.
func boundNames(target any, names map[string]bool) {
	switch t := target.(type) {
	case *ast.Identifier:
		if t != nil {
			names[string(t.Name)] = true
		}
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch q := p.(type) {
			case *ast.PropertyShort:
				names[string(q.Name.Name)] = true
			case *ast.PropertyKeyed:
				boundNames(q.Value, names)
			}
		}
		boundNames(t.Rest, names)
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			boundNames(e, names)
		}
		boundNames(t.Rest, names)
	case *ast.AssignExpression: // a default: the name is on the left
		boundNames(t.Left, names)
	}
}

// touchesState walks an AST node and reports whether it may reach state: it names one of
// stateNames (as an identifier, a property or a string), uses `this`, or uses the identifier
// cfg other than to read one of its properties by name.
func touchesState(node any, cfg string) bool {
	found := false
	walkAST(node, &found, func(n any, walk func(reflect.Value)) bool { return visit(n, cfg, &found, walk) })
	return found
}

// walkAST walks an AST node's exported fields depth first until *found. judge sees each node
// (a pointer to its struct) and reports whether it handled it, so that its fields need no walk.
func walkAST(node any, found *bool, judge func(n any, walk func(reflect.Value)) bool) {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if *found || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.CanAddr() && judge(v.Addr().Interface(), walk) {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(node))
}

// visit judges one node. It returns true when it handled the node (its children need no walk).
func visit(n any, cfg string, found *bool, walk func(reflect.Value)) bool {
	switch t := n.(type) {
	case *ast.Identifier:
		if stateNames[string(t.Name)] || (cfg != "" && string(t.Name) == cfg) {
			*found = true
		}
		return true
	case *ast.ThisExpression, *ast.SuperExpression, *ast.WithStatement:
		*found = true
		return true
	case *ast.StringLiteral:
		if stateNames[string(t.Value)] {
			*found = true
		}
		return true
	case *ast.DotExpression:
		if stateNames[string(t.Identifier.Name)] {
			*found = true
			return true
		}
		if id, ok := t.Left.(*ast.Identifier); ok && cfg != "" && string(id.Name) == cfg {
			return true // config.request and the like
		}
		walk(reflect.ValueOf(t.Left))
		return true
	case *ast.BracketExpression:
		if id, ok := t.Left.(*ast.Identifier); ok && cfg != "" && string(id.Name) == cfg {
			if s, isStr := t.Member.(*ast.StringLiteral); isStr && !stateNames[string(s.Value)] || numericKey(t.Member, cfg) {
				return true
			}
			*found = true // config[anything computed] may be config.state
			return true
		}
		return false
	case *ast.PropertyKeyed:
		if t.Computed {
			walk(reflect.ValueOf(t.Key))
		} else if s, ok := t.Key.(*ast.StringLiteral); ok && stateNames[string(s.Value)] {
			*found = true
			return true
		}
		walk(reflect.ValueOf(t.Value))
		return true
	case *ast.PropertyShort:
		if stateNames[string(t.Name.Name)] || (cfg != "" && string(t.Name.Name) == cfg) {
			*found = true
			return true
		}
		walk(reflect.ValueOf(t.Initializer))
		return true
	}
	return false
}

// numericKey reports whether e, a computed key of cfg (the first parameter), is always a
// number, so it names no state nor anything past the object (constructor, __proto__): a
// number literal, or arithmetic other than + (which may join strings) of numbers, cfg.length
// and cfg[numeric key] (an endOfRequestResolver's requestData[requestData.length - 1]).
func numericKey(e ast.Expression, cfg string) bool {
	isCfg := func(x ast.Expression) bool {
		id, ok := x.(*ast.Identifier)
		return ok && string(id.Name) == cfg
	}
	switch t := e.(type) {
	case *ast.NumberLiteral:
		return true
	case *ast.DotExpression:
		return isCfg(t.Left) && t.Identifier.Name == "length"
	case *ast.BracketExpression:
		return isCfg(t.Left) && numericKey(t.Member, cfg)
	case *ast.UnaryExpression:
		switch t.Operator {
		case token.MINUS, token.PLUS, token.BITWISE_NOT:
			return !t.Postfix && numericKey(t.Operand, cfg)
		}
	case *ast.BinaryExpression:
		switch t.Operator {
		case token.MINUS, token.MULTIPLY, token.SLASH, token.REMAINDER, token.AND, token.OR, token.EXCLUSIVE_OR,
			token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT:
			return numericKey(t.Left, cfg) && numericKey(t.Right, cfg)
		}
	}
	return false
}

// nodeNames are names through which a function may use what installNode adds: the globals and
// properties it adds or changes (TestNodeNames checks them against a runtime before and after,
// with isNodeName's read and write prefixes for Buffer's methods) and the ways to the global
// object or to anything else. (Read from a runtime here, they would keep node's compiled
// prelude alive in every process, which is what needNode saves.)
var nodeNames = func() map[string]bool {
	names := map[string]bool{}
	for _, n := range []string{
		// what installNode adds or changes
		"alloc", "allocUnsafe", "allocUnsafeSlow", "compare", "concat", "copy", "debug", "dir",
		"equals", "error", "fill", "from", "includes", "indexOf", "info", "inspect", "lastIndexOf",
		"log", "poolSize", "setImmediate", "setInterval", "setTimeout", "toLocaleString", "trace", "warn",
		// and the names that lead there
		"require", "Buffer", "logger", "console", "process", "util", "format",
		"clearTimeout", "clearInterval", "clearImmediate",
		"Object", "getPrototypeOf", "getOwnPropertyNames", "getOwnPropertyDescriptor", "getOwnPropertyDescriptors",
		// the constructors and methods whose size node.go's prelude bounds, and the ways to them
		"ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
		"Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "constructor",
		"Array", "Reflect", "Function", "apply", "construct", "split", "copyWithin", "every", "filter", "find",
		"findIndex", "findLast", "findLastIndex", "flat", "flatMap", "forEach", "map", "reduce", "reduceRight",
		"reverse", "shift", "slice", "some", "sort", "splice", "toReversed", "toSorted", "toSpliced", "unshift", "with",
	} {
		names[n] = true
	}
	for n := range stateNames {
		switch n {
		case "state", "imposterState", "injectState":
		default:
			names[n] = true // the ways to the global object or anything else
		}
	}
	return names
}()

// isNodeName reports whether a function that names n may use what installNode adds.
func isNodeName(n string) bool {
	return nodeNames[n] || strings.HasPrefix(n, "read") || strings.HasPrefix(n, "write")
}

// mentionsNode walks a function's AST and reports whether it may use what installNode adds:
// it names one of nodeNames (as an identifier, a property or a string), uses this, with, or a
// member or a property of a pattern by a computed name other than a literal.
func mentionsNode(node any) bool {
	found := false
	walkAST(node, &found, func(n any, _ func(reflect.Value)) bool {
		switch t := n.(type) {
		case *ast.Identifier:
			found = isNodeName(string(t.Name))
			return true
		case *ast.StringLiteral:
			found = isNodeName(string(t.Value))
			return true
		case *ast.ThisExpression, *ast.SuperExpression, *ast.WithStatement:
			found = true
			return true
		case *ast.BracketExpression:
			switch t.Member.(type) {
			case *ast.StringLiteral, *ast.NumberLiteral:
			default:
				found = true
				return true
			}
		case *ast.PropertyKeyed:
			// a pattern reads by a computed key as a member does: const {['constr' + 'uctor']: F}
			// = () => 0 reached Function, then the global object, unguarded
			if t.Computed {
				switch t.Key.(type) {
				case *ast.StringLiteral, *ast.NumberLiteral:
				default:
					found = true
					return true
				}
			}
		}
		return false
	})
	return found
}
