package match

// This file is a plain evaluator of Mountebank 2.9.1's predicates, written to be read next to
// models/predicates.js: each function names the one it mirrors, values are JavaScript values
// (undef, nil, bool, float64, string, []any and *config.Object for objects, whose keys keep
// their order), and nothing is precompiled, indexed or scanned. It is the reference Find is
// held to (reference_test.go runs Mountebank's own cases and fuzz inputs through both), and it
// says why a predicate failed, which Explain reports.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Reference evaluates the stubs of one imposter with Mountebank's semantics, slowly and
// plainly. It is immutable and safe for concurrent use.
type Reference struct {
	stubs    [][]config.Value // each stub's predicates, as configured
	binary   bool
	injector Injector
}

// NewReference returns the reference evaluator of stubs, each the "predicates" array of one
// stub as configured (nil or not an array: no predicates). Options are those of Compile.
func NewReference(stubs []config.Value, opts Options) *Reference {
	r := &Reference{stubs: make([][]config.Value, len(stubs)), binary: opts.Binary, injector: opts.Injector}
	for i, s := range stubs {
		r.stubs[i], _ = s.([]any)
	}
	return r
}

// Len is the number of stubs.
func (r *Reference) Len() int { return len(r.stubs) }

// Find is Set.Find evaluated plainly: the index of the first stub whose predicates all match,
// or -1, or the error Mountebank raises. It runs inject predicates.
func (r *Reference) Find(req *request.Request) (int, error) {
	ev := &evaluator{binary: r.binary, injector: r.injector, live: req}
	obj := requestObject(req)
	for i, preds := range r.stubs {
		res := ev.stub(preds, obj)
		if res.Err != nil {
			return -1, res.Err
		}
		if res.Matched {
			return i, nil
		}
	}
	return -1, nil
}

// evaluator holds what predicates.js passes along with every call: the imposter's encoding and
// what runs injections. explain makes it evaluate every predicate of a stub and every field of
// a predicate's expected object (the results are still those of Mountebank's short-circuiting
// every and some), and not run inject predicates, whose scripts may change state.
type evaluator struct {
	binary   bool
	injector Injector
	live     *request.Request // the request inject predicates see; nil when explaining JSON
	explain  bool
	// normalized memoizes normalize(request) per set of parameters, and parsed tryJSON per
	// text and parameters: they are pure functions, and most stubs of an imposter share their
	// parameters.
	normalized map[paramsKey]normalizedRequest
	parsed     map[tryJSONKey]any
}

type tryJSONKey struct {
	text                                    string
	keyLower, valLower, hasExcept, exceptIC bool
	except                                  string
}

type normalizedRequest struct {
	v   any
	err error
}

// normalizeRequest is normalize(request, params, withSelectors), memoized.
func (ev *evaluator) normalizeRequest(req any, p params) (any, error) {
	key := p.key()
	if n, ok := ev.normalized[key]; ok {
		return n.v, n.err
	}
	v, err := req, error(nil)
	if p.force {
		v, err = forceStringsJS(req) // deepEquals
	}
	if err == nil {
		v, err = ev.normalize(v, p, true)
	}
	if ev.normalized == nil {
		ev.normalized = map[paramsKey]normalizedRequest{}
	}
	ev.normalized[key] = normalizedRequest{v, err}
	return v, err
}

// operators are predicates.js's predicates, in the order it defines them.
var operators = []string{"equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists", "not", "or", "and", "inject"}

// stub is imposter.js's filter: every predicate must match.
func (ev *evaluator) stub(preds []config.Value, req any) *StubResult {
	res := &StubResult{}
	failed, unknown := false, false
	for _, p := range preds {
		pr := ev.evaluate(p, req)
		res.Predicates = append(res.Predicates, pr)
		sat, total := pr.count()
		res.Satisfied += sat
		res.Total += total
		switch {
		case failed:
			// Mountebank stops at the first failure: nothing after it counts.
		case pr.Err != nil:
			res.Err = pr.Err
			failed = true
		case pr.NotRun:
			unknown = true
		case !pr.Matched:
			failed = true
		}
		if failed && !ev.explain {
			break
		}
	}
	res.Matched = !failed && !unknown
	res.NotRun = !failed && unknown
	return res
}

// evaluate is predicates.js evaluate: the first key of the predicate that names an operator
// decides what it does.
func (ev *evaluator) evaluate(predicate, req any) *PredicateResult {
	res := &PredicateResult{Predicate: predicate}
	keys, err := keysOf(predicate)
	if err != nil {
		res.Err = err
		return res
	}
	for _, k := range keys {
		if slices.Contains(operators, k) {
			res.Operator = k
			break
		}
	}
	pred := asObject(predicate)
	switch res.Operator {
	case "":
		res.Err = validationError("missing predicate", predicate)
	case "not":
		ev.not(res, pred, req)
	case "or", "and":
		ev.combine(res, pred, req)
	case "inject":
		ev.inject(res, pred, req)
	case "deepEquals":
		ev.deepEquals(res, pred, req)
	default:
		ev.create(res, pred, req)
	}
	return res
}

// not is predicates.js not.
func (ev *evaluator) not(res *PredicateResult, pred *config.Object, req any) {
	sub := ev.evaluate(prop(pred, "not"), req)
	res.Children = []*PredicateResult{sub}
	res.Err, res.NotRun = sub.Err, sub.NotRun
	res.Matched = !sub.Matched && !sub.NotRun && sub.Err == nil
	if !res.Matched && res.Err == nil && !res.NotRun {
		res.Failure = &Failure{Operator: "not", Message: "the predicate under not matched"}
	}
}

// combine is predicates.js or (some sub-predicate matches) and and (every one does).
func (ev *evaluator) combine(res *PredicateResult, pred *config.Object, req any) {
	op := res.Operator
	method := map[string]string{"or": "some", "and": "every"}[op]
	list, isArray := prop(pred, op).([]any)
	if !isArray {
		if prop(pred, op) == nil {
			res.Err = typeError(fmt.Sprintf("Cannot read properties of null (reading '%s')", method))
		} else {
			res.Err = typeError(fmt.Sprintf("predicate.%s.%s is not a function", op, method))
		}
		return
	}
	unknown := false
	var causes []*Failure
	for _, p := range list {
		sub := ev.evaluate(p, req)
		res.Children = append(res.Children, sub)
		switch {
		case sub.Err != nil:
			res.Err = sub.Err
			return
		case sub.NotRun:
			unknown = true
		case op == "or" && sub.Matched:
			res.Matched = true
			return
		case op == "and" && !sub.Matched:
			res.Failure = sub.Failure
			return
		case !sub.Matched:
			causes = append(causes, sub.Failure)
		}
	}
	switch {
	case unknown:
		res.NotRun = true
	case op == "and":
		res.Matched = true
	default:
		res.Failure = &Failure{Operator: "or", Message: "no alternative matched", Causes: causes}
	}
}

// inject is predicates.js inject. Explaining never runs a script: it may change state.
func (ev *evaluator) inject(res *PredicateResult, pred *config.Object, req any) {
	if prop(req, "isDryRun") == true {
		res.Matched = true
		return
	}
	if ev.explain || ev.live == nil {
		res.NotRun = true
		res.Failure = &Failure{Operator: "inject", Message: "inject predicates are not run to explain a request"}
		return
	}
	src, isString := prop(pred, "inject").(string)
	if !isString {
		src = jsString(prop(pred, "inject"))
	}
	if ev.injector == nil {
		res.Err = &Error{Code: "invalid injection", Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag", Source: src, Stub: -1}
		return
	}
	ok, err := ev.injector.Predicate(src, ev.live)
	res.Matched, res.Err = ok, err
	if !ok && err == nil {
		res.Failure = &Failure{Operator: "inject", Message: "the function returned a falsy value"}
	}
}

// params are the predicate parameters normalize and tryJSON read: caseSensitive,
// keyCaseSensitive, except, jsonpath, xpath and exists, as the predicate (or, for matches, the
// clone predicates.js makes of it) gives them.
type params struct {
	keyLower   bool   // object keys are lowercased
	valLower   bool   // strings are lowercased
	except     string // the pattern except removes, when hasExcept
	hasExcept  bool
	exceptIC   bool // except ignores case
	jsonpath   any  // the jsonpath parameter, when truthy
	xpath      any  // the xpath parameter, when truthy (and jsonpath is not)
	selLower   bool // the jsonpath selector is lowercased
	xpLower    bool // the xpath selector and namespaces are lowercased
	exists     bool // predicateConfig.exists is truthy
	force      bool // deepEquals: selections are made of forceStrings(tryJSON(text))
	ignoreCase bool // matches: the regular expression ignores case
}

// paramsKey identifies what normalize does to the request with some parameters.
type paramsKey struct {
	keyLower, valLower, hasExcept, exceptIC, selLower, xpLower, force bool
	except, selector                                                  string
}

func (p params) key() paramsKey {
	k := paramsKey{p.keyLower, p.valLower, p.hasExcept, p.exceptIC, p.selLower, p.xpLower, p.force, p.except, ""}
	if p.jsonpath != nil {
		k.selector = "jsonpath:" + string(config.MarshalJSON(jsonValue(p.jsonpath), 0))
	} else if p.xpath != nil {
		k.selector = "xpath:" + string(config.MarshalJSON(jsonValue(p.xpath), 0))
	}
	return k
}

func paramsOf(pred *config.Object, op string) params {
	cs := jsvalue.Truthy(prop(pred, "caseSensitive"))
	var p params
	if op == "matches" {
		// clone = merge(predicate, {caseSensitive: true, keyCaseSensitive: caseSensitive})
		p.keyLower, p.valLower, p.exceptIC, p.selLower, p.xpLower, p.ignoreCase = !cs, false, false, !cs, false, !cs
	} else {
		// normalize sets keyCaseSensitive to caseSensitive when it is undefined.
		kcs := prop(pred, "keyCaseSensitive")
		if jsvalue.IsUndefined(kcs) {
			kcs = prop(pred, "caseSensitive")
		}
		p.keyLower = kcs == false || !cs
		p.valLower, p.exceptIC, p.selLower, p.xpLower = !cs, !cs, !jsvalue.Truthy(kcs), !cs
	}
	if ex := prop(pred, "except"); jsvalue.Truthy(ex) {
		p.except, p.hasExcept = jsString(ex), true
	}
	if jp := prop(pred, "jsonpath"); jsvalue.Truthy(jp) {
		p.jsonpath = jp
	} else if xp := prop(pred, "xpath"); jsvalue.Truthy(xp) {
		p.xpath = xp
	}
	p.exists = jsvalue.Truthy(prop(pred, "exists"))
	p.force = op == "deepEquals"
	return p
}

// create is predicates.js create: equals, contains, startsWith, endsWith, matches and exists
// compare the normalized expected object with the normalized request, field by field.
func (ev *evaluator) create(res *PredicateResult, pred *config.Object, req any) {
	op := res.Operator
	p := paramsOf(pred, op)
	expParams := p
	if op == "matches" {
		expParams.hasExcept = false // noexcept: the pattern itself is never stripped
	}
	expected, err := ev.normalize(prop(pred, op), expParams, false)
	if err != nil {
		res.Err = err
		return
	}
	actual, err := ev.normalizeRequest(req, p)
	if err != nil {
		res.Err = err
		return
	}
	if op == "matches" && ev.binary {
		res.Err = validationError("the matches predicate is not allowed in binary mode", nil)
		return
	}
	fn := func(e, a any) (bool, error) { return operate(op, e, a, p) }
	ev.fields(res, expected, actual, func(k string) (bool, *Failure, error) {
		return ev.field(expected, actual, k, k, p, fn)
	})
	if res.Failure != nil {
		res.Failure.Operator = op
	}
}

// fields is the top of predicateSatisfied: every field of expected must be satisfied. When
// explaining, every field is looked at and counted; the result is still that of every().
func (ev *evaluator) fields(res *PredicateResult, expected, actual any, check func(k string) (bool, *Failure, error)) {
	keys, err := keysOf(expected)
	if err != nil {
		res.Err = err
		return
	}
	res.Total = len(keys)
	failed := false
	for _, k := range keys {
		ok, f, err := check(k)
		switch {
		case err != nil && !failed:
			res.Err = err
			failed = true
		case err == nil && ok:
			res.Satisfied++
		case err == nil && !failed:
			res.Failure = f
			failed = true
		}
		if failed && !ev.explain {
			break
		}
	}
	res.Matched = !failed
}

// satisfied is predicates.js predicateSatisfied below the top: actual has every field of
// expected. path names actual in the request, for the failure.
func (ev *evaluator) satisfied(expected, actual any, path string, p params, fn opFn) (bool, *Failure, error) {
	if !jsvalue.Truthy(actual) {
		return false, &Failure{Field: path, Expected: expected, Actual: actual}, nil
	}
	if s, isString := actual.(string); isString {
		// Support predicates that reach into fields encoded in JSON strings (e.g. HTTP bodies)
		actual = ev.tryJSON(s, p)
	}
	keys, err := keysOf(expected)
	if err != nil {
		return false, nil, err
	}
	if actual == nil && len(keys) > 0 {
		// The text was JSON null ("null" as a body, header or query value): the first read of a
		// field, actual[fieldName], throws.
		return false, nil, typeError(fmt.Sprintf("Cannot read properties of null (reading '%s')", keys[0]))
	}
	for _, k := range keys {
		ok, f, err := ev.field(expected, actual, k, joinField(path, k), p, fn)
		if err != nil || !ok {
			return false, f, err
		}
	}
	return true, nil, nil
}

type opFn func(expected, actual any) (bool, error)

// field is the callback of predicateSatisfied's every(): whether actual satisfies expected's
// field k. Arrays on either side are matched as Mountebank does: every expected element in
// some actual one, or the expected value in some element of the actual array.
func (ev *evaluator) field(expected, actual any, k, path string, p params, fn opFn) (bool, *Failure, error) {
	e, a := prop(expected, k), prop(actual, k)
	ea, eIsArray := e.([]any)
	aa, aIsArray := a.([]any)
	failure := func(ok bool, err error, actual any) (bool, *Failure, error) {
		if ok || err != nil {
			return ok, nil, err
		}
		return false, &Failure{Field: path, Expected: e, Actual: actual}, nil
	}
	switch {
	case eIsArray && aIsArray: // allExpectedArrayValuesMatchActualArray
		for _, ee := range ea {
			ok, err := ev.some(ee, aa, path, p, fn)
			if err != nil || !ok {
				return failure(false, err, a)
			}
		}
		return true, nil, nil
	case aIsArray: // onlyActualIsArray
		if p.exists && jsvalue.Truthy(e) {
			return true, nil, nil
		}
		ok, err := ev.some(e, aa, path, p, fn)
		return failure(ok, err, a)
	case !eIsArray && jsvalue.IsUndefined(a) && isArray(actual): // expectedLeftOffArraySyntaxButActualIsArrayOfObjects
		ok, err := ev.some(expected, actual.([]any), path, p, fn)
		return failure(ok, err, actual)
	case isObject(e):
		return ev.satisfied(e, a, path, p, fn)
	}
	return ev.test(e, a, path, p, fn)
}

// some is expectedMatchesAtLeastOneValueInActualArray.
func (ev *evaluator) some(expected any, actual []any, path string, p params, fn opFn) (bool, error) {
	for _, a := range actual {
		ok, _, err := ev.test(expected, a, path, p, fn)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// test is predicates.js testPredicate.
func (ev *evaluator) test(expected, actual any, path string, p params, fn opFn) (bool, *Failure, error) {
	missing := jsvalue.IsUndefined(actual)
	if missing {
		actual = ""
	}
	var ok bool
	var f *Failure
	var err error
	if isObject(expected) {
		ok, f, err = ev.satisfied(expected, actual, path, p, fn)
	} else {
		ok, err = fn(expected, actual)
	}
	if ok || err != nil {
		return ok, nil, err
	}
	if f == nil {
		f = &Failure{Field: path, Expected: expected, Actual: actual}
	}
	if missing && f.Field == path {
		f.Actual = jsvalue.Undef
	}
	return false, f, nil
}

// operate is the predicate function of each operator of create, given an expected scalar.
func operate(op string, e, a any, p params) (bool, error) {
	switch op {
	case "equals": // toString(expected) === toString(actual)
		es, eIsString := jsToString(e).(string)
		as, aIsString := jsToString(a).(string)
		if eIsString || aIsString {
			return eIsString && aIsString && es == as, nil
		}
		return e == nil && a == nil, nil
	case "exists":
		if jsvalue.Truthy(e) {
			return a != "", nil
		}
		return a == "", nil
	case "matches": // new RegExp(expected, options).test(actual)
		re, err := compileJSRegex(jsString(e), p.ignoreCase)
		if err != nil {
			return false, regexError(jsString(e), err)
		}
		return re.MatchString(jsString(a)), nil
	}
	return indexOf(op, e, a)
}

// jsToString is predicates.js toString: value.toString() for anything but null and undefined.
func jsToString(v any) any {
	switch v.(type) {
	case nil, jsvalue.Undefined:
		return v
	}
	return jsString(v)
}

// indexOf runs contains (actual.indexOf(expected) >= 0), startsWith (=== 0) and endsWith
// (actual.indexOf(expected, actual.length - expected.length) >= 0), on a string or an array.
func indexOf(op string, e, a any) (bool, error) {
	if a == nil {
		return false, typeError("Cannot read properties of null (reading 'indexOf')")
	}
	var eLen any = jsvalue.Undef // expected.length
	switch t := e.(type) {
	case nil:
		if op == "endsWith" {
			return false, typeError("Cannot read properties of null (reading 'length')")
		}
	case string:
		eLen = float64(jsvalue.Len16(t))
	}
	switch t := a.(type) {
	case string:
		es := jsString(e)
		switch {
		case op == "startsWith":
			return strings.HasPrefix(t, es), nil
		case op == "endsWith" && !jsvalue.IsUndefined(eLen):
			return strings.HasSuffix(t, es), nil
		}
		return strings.Contains(t, es), nil // endsWith from NaN searches from 0
	case []any:
		from := 0
		if l, isNum := eLen.(float64); op == "endsWith" && isNum {
			from = len(t) - int(l)
			if from < 0 {
				from = max(from+len(t), 0)
			}
		}
		for i := from; i < len(t); i++ {
			if strictEquals(e, t[i]) {
				return op != "startsWith" || i == 0, nil
			}
		}
		return false, nil
	}
	return false, typeError("actual.indexOf is not a function")
}

// deepEquals is predicates.js deepEquals: each field of the expected object and of the request
// stringify the same, after both are made strings.
func (ev *evaluator) deepEquals(res *PredicateResult, pred *config.Object, req any) {
	p := paramsOf(pred, "deepEquals")
	exp, err := forceStringsJS(prop(pred, "deepEquals"))
	if err == nil {
		exp, err = ev.normalize(exp, p, false)
	}
	var act any
	if err == nil {
		// forceStrings(request) is normalized with p.force set, which keys it apart.
		act, err = ev.normalizeRequest(req, p)
	}
	if err != nil {
		res.Err = err
		return
	}
	ev.fields(res, exp, act, func(k string) (bool, *Failure, error) {
		e, a := prop(exp, k), prop(act, k)
		if s, isString := a.(string); isString && isObject(e) {
			possibleJSON, err := forceStringsJS(ev.tryJSON(s, p))
			if err == nil {
				a, err = ev.normalize(possibleJSON, p, false)
			}
			if err != nil {
				return false, nil, err
			}
		}
		if string(appendCanon(nil, e)) == string(appendCanon(nil, a)) {
			return true, nil, nil
		}
		return false, &Failure{Operator: "deepEquals", Field: k, Expected: e, Actual: a}, nil
	})
}

// normalize is predicates.js normalize: object keys maybe lowercased, and strings base64-decoded
// (binary mode), lowercased, stripped by except and, for the request (withSelectors), replaced
// by what the jsonpath or xpath selector picks from them; arrays are sorted.
func (ev *evaluator) normalize(v any, p params, withSelectors bool) (any, error) {
	var sel func(string) (any, error)
	if withSelectors {
		var err error
		if sel, err = ev.selectTransform(p); err != nil {
			return nil, err
		}
	}
	return transformJS(v, p.keyLower, func(s string) (any, error) {
		in := s
		if ev.binary {
			s = decodeBase64(s)
		}
		if p.valLower {
			s = jsvalue.ToLower(s)
		}
		s, err := exceptJS(s, p)
		if err != nil || sel == nil {
			if err == nil && s == in {
				return unchanged{}, nil
			}
			return s, err
		}
		return sel(s)
	}, true)
}

// unchanged is what transformJS's str returns for a string it leaves as it is: the value is
// then kept, not boxed again (an expected path kept a second copy of its box per stub).
type unchanged struct{}

// exceptJS is exceptTransform: text.replace(new RegExp(except, flags), "").
func exceptJS(s string, p params) (string, error) {
	if !p.hasExcept {
		return s, nil
	}
	re, err := compileJSRegex(p.except, p.exceptIC)
	if err != nil {
		return "", regexError(p.except, err)
	}
	return re.ReplaceAllString(s, ""), nil
}

// tryJSON is predicates.js tryJSON: text parsed as JSON with keys and strings transformed (but
// arrays not sorted), or the text itself.
func (ev *evaluator) tryJSON(text string, p params) any {
	key := tryJSONKey{text, p.keyLower, p.valLower, p.hasExcept, p.exceptIC, p.except}
	if v, ok := ev.parsed[key]; ok {
		return v
	}
	if ev.parsed == nil {
		ev.parsed = map[tryJSONKey]any{}
	}
	v := ev.tryJSONUncached(text, p)
	ev.parsed[key] = v
	return v
}

func (ev *evaluator) tryJSONUncached(text string, p params) any {
	v, err := config.ParseJSON([]byte(text))
	if err != nil {
		return text
	}
	out, err := transformJS(v, p.keyLower, func(s string) (any, error) {
		if p.valLower {
			s = jsvalue.ToLower(s)
		}
		return exceptJS(s, p)
	}, false)
	if err != nil {
		return text // tryJSON catches whatever its transforms throw
	}
	return out
}

// selectTransform is predicates.js selectTransform: the function that replaces each request
// string by what the predicate's jsonpath or xpath selects from it, or nil.
func (ev *evaluator) selectTransform(p params) (func(string) (any, error), error) {
	switch {
	case p.jsonpath != nil:
		selector := prop(p.jsonpath, "selector")
		if p.selLower {
			s, err := lowerJS(selector, "cloned.jsonpath.selector")
			if err != nil {
				return nil, err
			}
			selector = s
		}
		src, _ := selector.(string) // JSONPath(undefined or a number) selects nothing
		sel := newJSONPathSelector(src)
		if _, isString := selector.(string); !isString {
			sel.jpOK = false
		}
		return func(text string) (any, error) {
			possibleJSON := ev.tryJSON(text, p)
			if p.force {
				possibleJSON, _ = forceStringsJS(possibleJSON) // parsed JSON holds no undefined
			}
			if ev.binary {
				return nil, validationError("the jsonpath predicate parameter is not allowed in binary mode", nil)
			}
			return config.FromPlain(jsonPathSelect(sel, possibleJSON, len(text))), nil
		}, nil
	case p.xpath != nil:
		selector, ns := prop(p.xpath, "selector"), map[string]string{}
		nsv := prop(p.xpath, "ns")
		if err := lowerNSList(nsv, p.xpLower, ns); err != nil {
			return nil, err
		}
		if nsObj := asObject(nsv); nsObj != nil {
			for _, k := range jsKeys(nsObj) {
				v, _ := nsObj.Get(k)
				if p.xpLower {
					l, err := lowerJS(v, "text")
					if err != nil {
						return nil, err
					}
					v = l
				}
				ns[k] = jsString(v)
			}
		}
		if p.xpLower {
			s, err := lowerJS(selector, "cloned.xpath.selector")
			if err != nil {
				return nil, err
			}
			selector = s
		}
		return func(text string) (any, error) {
			if ev.binary {
				return nil, validationError("the xpath predicate parameter is not allowed in binary mode", nil)
			}
			return xpathJS(selector, ns, text)
		}, nil
	}
	return nil, nil
}

// xpathJS is xpath.js select followed by predicates.js select and orderIndependent.
func xpathJS(selector any, ns map[string]string, text string) (any, error) {
	if text == "" {
		return jsvalue.Undef, nil // xmldom makes no document of nothing
	}
	doc := parseXML(text)
	src, isString := selector.(string)
	if !isString {
		return nil, validationError("malformed xpath predicate selector", selector)
	}
	x, err := xpath.CompileWithNS(src, ns)
	if err != nil && strings.HasPrefix(err.Error(), "prefix ") {
		// xpath.js fails on an unbound prefix only once it meets an element.
		if hasElement(doc) {
			return nil, validationError("malformed xpath predicate selector", src)
		}
		x, err = compileUnbound(src, ns)
	}
	if err != nil {
		return nil, validationError("malformed xpath predicate selector", src)
	}
	if _, isString := safeEval(x, doc).(string); isString {
		return nil, typeError("result.map is not a function")
	}
	return xpathSelect(x, doc), nil
}

func hasElement(doc *xmlquery.Node) bool {
	for n := doc.FirstChild; n != nil; n = n.NextSibling {
		if n.Type == xmlquery.ElementNode {
			return true
		}
	}
	return false
}

// lowerJS is text.toLowerCase() on a value that may not be a string; name is how the
// expression reads in JavaScript's error.
// lowerNSList is transformObject(ns, lowercase) for an xpath's ns that is a string or an
// array (an object is read by the caller): without caseSensitive, Mountebank lowercases each
// of Object.keys(ns)'s values in place, which throws a TypeError for a non-empty string (its
// characters are read-only) and for an element that is not a string. The array's strings are
// prefixes named by their index, as there.
func lowerNSList(ns any, lower bool, into map[string]string) error {
	switch t := ns.(type) {
	case string:
		if lower && t != "" {
			return typeError("Cannot assign to read only property '0' of string '" + t + "'")
		}
	case []any:
		for i, v := range t {
			if lower {
				l, err := lowerJS(v, "text")
				if err != nil {
					return err
				}
				v = l
			}
			into[strconv.Itoa(i)] = jsString(v)
		}
	}
	return nil
}

func lowerJS(v any, name string) (any, error) {
	switch t := v.(type) {
	case string:
		return jsvalue.ToLower(t), nil
	case jsvalue.Undefined:
		return nil, typeError("Cannot read properties of undefined (reading 'toLowerCase')")
	case nil:
		return nil, typeError("Cannot read properties of null (reading 'toLowerCase')")
	}
	return nil, typeError(name + ".toLowerCase is not a function")
}

// transformJS is predicates.js transformAll: keys maybe lowercased, str applied to strings,
// arrays sorted when sortArrays. It returns new values.
func transformJS(v any, keyLower bool, str func(string) (any, error), sortArrays bool) (any, error) {
	switch t := v.(type) {
	case string:
		x, err := str(t)
		if _, same := x.(unchanged); same {
			return v, err
		}
		return x, err
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			x, err := transformJS(e, keyLower, str, sortArrays)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		if sortArrays {
			out = sortJS(out)
		}
		return out, nil
	case *config.Object:
		if t == nil {
			return v, nil
		}
		out := &config.Object{Members: make([]config.Member, 0, len(t.Members))}
		b := config.Builder{O: out}
		for _, m := range jsMembers(t) {
			k := m.Key
			x, err := transformJS(m.Value, keyLower, str, sortArrays)
			if err != nil {
				return nil, err
			}
			if keyLower {
				k = jsvalue.ToLower(k)
			}
			b.Set(k, x) // a key lowercased onto an earlier one replaces its value in place
		}
		return out, nil
	}
	return v, nil
}

// forceStringsJS is predicates.js forceStrings: every scalar made its string, null "null".
func forceStringsJS(v any) (any, error) {
	switch t := v.(type) {
	case nil:
		return "null", nil
	case jsvalue.Undefined:
		return nil, typeError("Cannot read properties of undefined (reading 'toString')")
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			x, err := forceStringsJS(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *config.Object:
		out := &config.Object{Members: make([]config.Member, 0, len(t.Members))}
		for _, m := range jsMembers(t) {
			x, err := forceStringsJS(m.Value)
			if err != nil {
				return nil, err
			}
			out.Members = append(out.Members, config.Member{Key: m.Key, Value: x})
		}
		return out, nil
	}
	return jsString(v), nil
}

// keysOf is Object.keys: an object's keys in JavaScript's order, an array's or a string's
// indexes, nothing for a number or a boolean.
func keysOf(v any) ([]string, error) {
	switch t := v.(type) {
	case nil, jsvalue.Undefined:
		return nil, typeError("Cannot convert undefined or null to object")
	case *config.Object:
		return jsKeys(t), nil
	case []any:
		return indexKeys(len(t)), nil
	case string:
		return indexKeys(jsvalue.Len16(t)), nil
	}
	return nil, nil
}

func indexKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	return keys
}

// jsKeys returns an object's keys in JavaScript's property order: array indexes ascending,
// then the others in the order they were added.
func jsKeys(o *config.Object) []string {
	keys := make([]string, 0, len(o.Members))
	indexes := 0
	for _, m := range o.Members {
		if _, ok := jsvalue.ArrayIndex(m.Key); ok {
			keys = append(keys, m.Key)
			indexes++
		}
	}
	if indexes == 0 {
		for _, m := range o.Members {
			keys = append(keys, m.Key)
		}
		return keys
	}
	jsKeyOrder(keys)
	for _, m := range o.Members {
		if _, ok := jsvalue.ArrayIndex(m.Key); !ok {
			keys = append(keys, m.Key)
		}
	}
	return keys
}

// jsMembers returns an object's members in JavaScript's property order (see jsKeys): its own
// Members when no key is an array index.
func jsMembers(o *config.Object) []config.Member {
	for _, m := range o.Members {
		if _, isIndex := jsvalue.ArrayIndex(m.Key); isIndex {
			keys := jsKeys(o)
			out := make([]config.Member, len(keys))
			for i, k := range keys {
				v, _ := o.Get(k)
				out[i] = config.Member{Key: k, Value: v}
			}
			return out
		}
	}
	return o.Members
}

// prop is v[k] for the values predicates read (own properties only).
func prop(v any, k string) any {
	switch t := v.(type) {
	case *config.Object:
		if x, ok := t.Get(k); ok {
			return x
		}
	case []any, string:
		return elementOf(t, k)
	}
	return jsvalue.Undef
}

func asObject(v any) *config.Object {
	o, _ := v.(*config.Object)
	return o
}

// joinField is the path of field k under path, as a Failure names it. It stops growing past
// maxFieldPath bytes, ending in ".…": a body nested 10,000 deep tested against an object
// (an `equals`, `exists` of a field the arrays lack) made a path a level longer at each level,
// 100 MB copied for each array so nested (82 s and 770 MB for a 1 MB body of 50).
func joinField(path, k string) string {
	if path == "" {
		return k
	}
	if len(path)+1+len(k) > maxFieldPath {
		if strings.HasSuffix(path, cutField) {
			return path
		}
		return path + cutField
	}
	return path + "." + k
}

// maxFieldPath bounds a Failure's Field (see joinField); cutField ends one cut so.
const (
	maxFieldPath = 256
	cutField     = ".…"
)

// requestObject is the request as Mountebank's http and tcp servers give it to predicates
// (httpRequest.js, tcpRequest.js): query and form as querystring.parse makes them, headers as
// headersMap.ofRaw does, body undefined when it could not be decoded.
func requestObject(r *request.Request) *config.Object {
	if r.Object != nil { // a custom protocol's request, as its program sent it
		return r.Object
	}
	if r.TCP {
		return config.NewObject("requestFrom", r.RequestFrom(), "ip", r.IP(), "data", r.Data())
	}
	o := config.NewObject("requestFrom", r.RequestFrom(), "method", r.Method, "path", r.Path,
		"query", request.GroupQuery(r.Query), "headers", request.GroupHeaders(r.HeaderList()))
	if r.BodyMissing {
		o.Set("body", jsvalue.Undef)
	} else {
		o.Set("body", r.Body)
	}
	o.Set("ip", r.IP())
	if r.HasForm {
		o.Set("form", request.GroupQuery(r.Form))
	}
	return o
}

// dryRunRequest is the request Mountebank's dry-run validation evaluates predicates against:
// the protocol's testRequest (baseHttpServer.js, tcpServer.js) with isDryRun set.
func dryRunRequest(tcp bool) *config.Object {
	if tcp {
		return config.NewObject("data", "test", "isDryRun", true)
	}
	return config.NewObject("requestFrom", "", "method", "GET", "path", "/", "query", &config.Object{},
		"headers", &config.Object{}, "form", &config.Object{}, "body", "", "isDryRun", true)
}
