package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/jsvalue"
)

// Compilers compile what this package cannot itself; the caller (app) wires them to the
// packages that run them. A nil field checks nothing.
type Compilers struct {
	// Regex compiles a JavaScript regular expression.
	Regex func(src string, ignoreCase bool) error
	// XPath compiles an xpath selector with its namespace prefixes.
	XPath func(selector string, ns map[string]string) error
	// JSONPath parses a jsonpath selector.
	JSONPath func(selector string) error
	// Script parses (does not run) a JavaScript function; set only with --allowInjection.
	Script func(src string) error
}

// Problem is one thing CheckImposter found, at Path (e.g. "imposters[0].stubs[1].responses[0].is.status").
type Problem struct {
	Path    string
	Message string
	// Warning is set for what works but probably is not what was meant (a stub no request can
	// reach, a selector that selects nothing).
	Warning bool
}

// CheckImposter checks one imposter against mockd's model: every key of every object (with a
// suggestion for a misspelt one), the types and ranges of values, and that regexes, selectors
// and scripts compile; and it warns about stubs that can never match. It leaves to ParseImposter
// what that reports (protocol, port, responses, repeat numbers, expect, injection allowed).
// YAML is held to it; for Mountebank JSON, which Mountebank reads leniently, mockd validate
// reports its problems as warnings.
func CheckImposter(v Value, path string, c Compilers) []Problem {
	k := &checker{c: c}
	k.imposter(v, path)
	return k.problems
}

type checker struct {
	c        Compilers
	problems []Problem
	tcp      bool
}

func (k *checker) errorf(path, format string, args ...any) {
	k.problems = append(k.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (k *checker) warnf(path, format string, args ...any) {
	k.problems = append(k.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...), Warning: true})
}

// Keys of each object of the model.
var (
	imposterKeys = []string{"protocol", "port", "host", "name", "recordRequests", "numberOfRequests", "requests",
		"stubs", "defaultResponse", "allowCORS", "endOfRequestResolver", "mode", "key", "cert", "ca", "mutualAuth",
		"ciphers", "rejectUnauthorized", "_links"}
	isKeys                 = []string{"statusCode", "headers", "body", "bodyFile", "_mode", "data", "template"}
	proxyKeys              = []string{"to", "mode", "predicateGenerators", "addWaitBehavior", "addDecorateBehavior", "injectHeaders", "cert", "key", "passphrase"}
	predicateGeneratorKeys = []string{"matches", "caseSensitive", "except", "jsonpath", "xpath", "predicateOperator", "inject", "keyCaseSensitive", "ignore"}
	operatorKeys           = []string{"equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists", "not", "or", "and", "inject"}
	predicateParamKeys     = []string{"caseSensitive", "except", "jsonpath", "xpath", "keyCaseSensitive"}
	fieldKeys              = []string{"method", "path", "query", "headers", "body", "form", "requestFrom", "ip", "data"}
	selectorKeys           = []string{"selector", "ns"}
	behaviorKeys           = []string{"wait", "copy", "lookup", "decorate", "shellTransform"}
	oldBehaviorKeys        = []string{"wait", "repeat", "copy", "lookup", "decorate", "shellTransform"}
	copyKeys               = []string{"from", "into", "using"}
	usingKeys              = []string{"method", "selector", "ns", "options"}
	lookupKeys             = []string{"key", "fromDataSource", "into"}
	faults                 = []string{"CONNECTION_RESET_BY_PEER", "RANDOM_DATA_THEN_CLOSE"}
)

// object returns v as an object, or reports that it must be one.
func (k *checker) object(v Value, path, what string) *Object {
	o, ok := v.(*Object)
	if !ok || o == nil {
		k.errorf(path, "must be %s, not %s", what, describe(v))
		return nil
	}
	return o
}

// list returns v as an array, or reports that it must be one.
func (k *checker) list(v Value, path, what string) []any {
	a, ok := v.([]any)
	if !ok {
		k.errorf(path, "must be a list of %s, not %s", what, describe(v))
	}
	return a
}

// known reports every key of o that is not in keys, suggesting the one probably meant.
func (k *checker) known(o *Object, path string, keys []string) {
	for _, m := range o.Members {
		if !contains(keys, m.Key) {
			k.errorf(JoinPath(path, m.Key), "%s", unknownMessage(m.Key, keys))
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// unknownMessage says that key is unknown and which known key was probably meant.
func unknownMessage(key string, known []string) string {
	if s := Suggest(key, known); s != "" {
		return fmt.Sprintf("unknown field %q (did you mean %q?)", key, s)
	}
	return fmt.Sprintf("unknown field %q (expected one of: %s)", key, strings.Join(known, ", "))
}

// Suggest returns the known key a misspelt key most probably means, or "": the same word in
// another case, one that starts with the other (status, statusCode), or one at most two edits
// away (methd, method; respones, responses).
func Suggest(key string, known []string) string {
	lk := strings.ToLower(key)
	for _, k := range known {
		if strings.ToLower(k) == lk {
			return k
		}
	}
	if len(lk) >= 4 {
		for _, k := range known {
			if l := strings.ToLower(k); strings.HasPrefix(l, lk) || strings.HasPrefix(lk, l) && len(l) >= 4 {
				return k
			}
		}
	}
	limit := 1
	if len(key) >= 4 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance(lk, strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// typed reports a value of o that is not one of the JSON types named (string, number, integer,
// boolean, object, array).
func (k *checker) typed(o *Object, key, path string, types ...string) (Value, bool) {
	v, ok := o.Get(key)
	if !ok {
		return nil, false
	}
	p := JoinPath(path, key)
	for _, t := range types {
		if isType(v, t) {
			return v, true
		}
	}
	k.errorf(p, "must be %s, not %s", orList(types), describe(v))
	return v, false
}

func isType(v Value, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		o, ok := v.(*Object)
		return ok && o != nil
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func orList(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object", "array", "integer":
			words[i] = "an " + t
		case "boolean":
			words[i] = "true or false"
		default:
			words[i] = "a " + t
		}
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// enum reports a value of o that is not one of values.
func (k *checker) enum(o *Object, key, path string, values ...string) {
	v, ok := o.Get(key)
	if !ok {
		return
	}
	if s, isString := v.(string); isString && contains(values, s) {
		return
	}
	msg := fmt.Sprintf("must be one of %s, not %s", strings.Join(values, ", "), describe(v))
	if s, isString := v.(string); isString {
		if sug := Suggest(s, values); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		}
	}
	k.errorf(JoinPath(path, key), "%s", msg)
}

// script parses a JavaScript function when scripts may run (they are refused otherwise).
func (k *checker) script(v Value, path string) {
	src, ok := v.(string)
	if !ok {
		k.errorf(path, "must be a JavaScript function as a string, not %s", describe(v))
		return
	}
	if k.c.Script != nil {
		if err := k.c.Script(src); err != nil {
			k.errorf(path, "JavaScript does not parse: %v", err)
		}
	}
}

// regex compiles a regular expression.
func (k *checker) regex(v Value, path string, ignoreCase bool) {
	if k.c.Regex == nil {
		return
	}
	src := jsvalue.String(v)
	if err := k.c.Regex(src, ignoreCase); err != nil {
		k.errorf(path, "invalid regular expression /%s/: %v", src, err)
	}
}

func (k *checker) imposter(v Value, path string) {
	o := k.object(v, path, "an imposter (an object)")
	if o == nil {
		return
	}
	k.tcp = mustGet(o, "protocol") == "tcp"
	k.known(o, path, imposterKeys)
	k.typed(o, "host", path, "string")
	k.typed(o, "name", path, "string")
	for _, key := range []string{"recordRequests", "allowCORS", "mutualAuth", "rejectUnauthorized"} {
		k.typed(o, key, path, "boolean")
	}
	for _, key := range []string{"key", "cert", "ciphers"} {
		k.typed(o, key, path, "string")
	}
	if ca, ok := k.typed(o, "ca", path, "string", "array"); ok {
		k.strings(ca, JoinPath(path, "ca"))
	}
	k.enum(o, "mode", path, "text", "binary")
	if eor, ok := k.typed(o, "endOfRequestResolver", path, "object"); ok {
		p := JoinPath(path, "endOfRequestResolver")
		eo := eor.(*Object)
		k.known(eo, p, []string{"inject"})
		if src, ok := eo.Get("inject"); ok {
			k.script(src, JoinPath(p, "inject"))
		} else {
			k.errorf(p, "needs inject, a JavaScript function")
		}
	}
	if dr, ok := o.Get("defaultResponse"); ok && dr != nil {
		k.is(dr, JoinPath(path, "defaultResponse"))
	}
	if sv, ok := o.Get("stubs"); ok && sv != nil {
		stubs := k.list(sv, JoinPath(path, "stubs"), "stubs")
		for i, s := range stubs {
			k.stub(s, fmt.Sprintf("%s[%d]", JoinPath(path, "stubs"), i))
		}
		k.shadowed(stubs, JoinPath(path, "stubs"))
	}
}

// strings checks that v is a string or a list of strings.
func (k *checker) strings(v Value, path string) {
	if list, ok := v.([]any); ok {
		for i, e := range list {
			if _, isString := e.(string); !isString {
				k.errorf(fmt.Sprintf("%s[%d]", path, i), "must be a string, not %s", describe(e))
			}
		}
	}
}

func (k *checker) stub(v Value, path string) {
	o := k.object(v, path, "a stub (an object with predicates and responses)")
	if o == nil {
		return
	}
	k.known(o, path, stubKeys)
	k.typed(o, "scenarioName", path, "string")
	if pv, ok := o.Get("predicates"); ok && pv != nil {
		for i, p := range k.list(pv, JoinPath(path, "predicates"), "predicates") {
			k.predicate(p, fmt.Sprintf("%s[%d]", JoinPath(path, "predicates"), i))
		}
	}
	if rv, ok := o.Get("responses"); ok {
		responses, _ := rv.([]any)
		for i, r := range responses {
			k.response(r, fmt.Sprintf("%s[%d]", JoinPath(path, "responses"), i))
		}
	}
}

func (k *checker) predicate(v Value, path string) {
	o := k.object(v, path, "a predicate (an object such as {equals: {path: /}})")
	if o == nil {
		return
	}
	var ops []string
	unknown := false
	for _, m := range o.Members {
		switch {
		case contains(operatorKeys, m.Key):
			ops = append(ops, m.Key)
		case !contains(predicateParamKeys, m.Key):
			unknown = true
			k.errorf(JoinPath(path, m.Key), "%s", unknownMessage(m.Key, append(append([]string(nil), operatorKeys...), predicateParamKeys...)))
		}
	}
	switch len(ops) {
	case 0:
		if !unknown {
			k.errorf(path, "names no operator (one of: %s)", strings.Join(operatorKeys, ", "))
		}
		return
	case 1:
	default:
		k.warnf(path, "names %d operators (%s): only %s is used", len(ops), strings.Join(ops, ", "), ops[0])
	}
	op := ops[0]
	caseSensitive := false
	if cs, ok := k.typed(o, "caseSensitive", path, "boolean"); ok {
		caseSensitive = cs.(bool)
	}
	k.typed(o, "keyCaseSensitive", path, "boolean")
	if ex, ok := k.typed(o, "except", path, "string"); ok {
		k.regex(ex, JoinPath(path, "except"), !caseSensitive)
	}
	k.selectors(o, path)
	val := mustGet(o, op)
	p := JoinPath(path, op)
	switch op {
	case "not":
		k.predicate(val, p)
	case "or", "and":
		for i, s := range k.list(val, p, "predicates") {
			k.predicate(s, fmt.Sprintf("%s[%d]", p, i))
		}
	case "inject":
		k.script(val, p)
	default:
		fields := k.object(val, p, "an object of request fields (method, path, query, headers, body…)")
		if fields == nil {
			return
		}
		k.known(fields, p, fieldKeys)
		for _, key := range []string{"method", "path", "requestFrom", "ip", "data"} {
			k.typed(fields, key, p, "string", "boolean")
		}
		for _, key := range []string{"query", "headers", "form"} {
			k.typed(fields, key, p, "object", "boolean")
		}
		if op == "matches" {
			k.patterns(fields, p, !caseSensitive)
		}
	}
}

// patterns compiles every string under a matches predicate's fields.
func (k *checker) patterns(v Value, path string, ignoreCase bool) {
	switch t := v.(type) {
	case string:
		k.regex(t, path, ignoreCase)
	case *Object:
		for _, m := range t.Members {
			k.patterns(m.Value, JoinPath(path, m.Key), ignoreCase)
		}
	case []any:
		for i, e := range t {
			k.patterns(e, fmt.Sprintf("%s[%d]", path, i), ignoreCase)
		}
	}
}

// selectors checks a predicate's (or predicate generator's) jsonpath and xpath parameters.
func (k *checker) selectors(o *Object, path string) {
	for _, key := range []string{"jsonpath", "xpath"} {
		sv, ok := k.typed(o, key, path, "object")
		if !ok {
			continue
		}
		p := JoinPath(path, key)
		so := sv.(*Object)
		k.known(so, p, selectorKeys)
		sel, isString := mustGet(so, "selector").(string)
		if !isString {
			k.errorf(JoinPath(p, "selector"), "must be a string, not %s", describe(mustGet(so, "selector")))
			continue
		}
		ns := map[string]string{}
		if nv, ok := k.typed(so, "ns", p, "object"); ok {
			for _, m := range nv.(*Object).Members {
				s, isString := m.Value.(string)
				if !isString {
					k.errorf(JoinPath(JoinPath(p, "ns"), m.Key), "must be a namespace URI (a string), not %s", describe(m.Value))
				}
				ns[m.Key] = s
			}
		}
		k.compileSelector(key, sel, ns, JoinPath(p, "selector"))
	}
}

// compileSelector compiles an xpath selector (an error when it does not compile) or parses a
// jsonpath one (a warning: Mountebank accepts it and selects nothing).
func (k *checker) compileSelector(method, sel string, ns map[string]string, path string) {
	switch {
	case method == "xpath" && k.c.XPath != nil:
		if err := k.c.XPath(sel, ns); err != nil {
			k.errorf(path, "invalid xpath %q: %v", sel, err)
		}
	case method == "jsonpath" && k.c.JSONPath != nil:
		if err := k.c.JSONPath(sel); err != nil {
			k.warnf(path, "jsonpath %q does not parse (%v): it selects nothing", sel, err)
		}
	}
}

func (k *checker) response(v Value, path string) {
	if b, isBool := v.(bool); (isBool && !b) || v == float64(0) {
		// Mountebank serves a response of 0 or false once as an empty is, then drops it from
		// the stub's cycle (so does mockd): allowed, so that every Mountebank file mockd
		// loads converts to YAML that loads, but rarely what a hand-written file means.
		k.warnf(path, "%s is served once as an empty response, then left out of the stub's cycle (as Mountebank does)", describe(v))
		return
	}
	o := k.object(v, path, "a response (an object with is, proxy, inject or fault)")
	if o == nil {
		return
	}
	k.known(o, path, responseKeys)
	if is, ok := o.Get("is"); ok && is != nil {
		k.is(is, JoinPath(path, "is"))
	}
	if pv, ok := o.Get("proxy"); ok && pv != nil {
		k.proxy(pv, JoinPath(path, "proxy"))
	}
	if src, ok := o.Get("inject"); ok {
		k.script(src, JoinPath(path, "inject"))
	}
	k.enum(o, "fault", path, faults...)
	if rv, ok := o.Get("repeat"); ok {
		if s, isString := rv.(string); isString {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err != nil || n < 1 {
				k.errorf(JoinPath(path, "repeat"), "must be a positive integer, not %q", s)
			}
		} else if f, isNum := rv.(float64); isNum && f != math.Trunc(f) {
			k.errorf(JoinPath(path, "repeat"), "must be a positive integer, not %s", describe(rv))
		}
	}
	if bv, ok := o.Get("behaviors"); ok && bv != nil {
		for i, b := range k.list(bv, JoinPath(path, "behaviors"), "behaviors") {
			k.behavior(b, fmt.Sprintf("%s[%d]", JoinPath(path, "behaviors"), i))
		}
	}
	if bv, ok := o.Get("_behaviors"); ok && bv != nil {
		p := JoinPath(path, "_behaviors")
		if bo := k.object(bv, p, "an object of behaviors"); bo != nil {
			k.known(bo, p, oldBehaviorKeys)
			for _, m := range bo.Members {
				if m.Key == "repeat" {
					continue
				}
				if list, isList := m.Value.([]any); isList && m.Key != "shellTransform" {
					for i, e := range list {
						k.behaviorValue(m.Key, e, fmt.Sprintf("%s[%d]", JoinPath(p, m.Key), i))
					}
				} else if contains(behaviorKeys, m.Key) {
					k.behaviorValue(m.Key, m.Value, JoinPath(p, m.Key))
				}
			}
		}
	}
}

// is checks an is response (or a defaultResponse).
func (k *checker) is(v Value, path string) {
	o := k.object(v, path, "an object of response fields (statusCode, headers, body…)")
	if o == nil {
		return
	}
	k.known(o, path, isKeys)
	if sc, ok := o.Get("statusCode"); ok {
		if !validStatus(sc) {
			k.errorf(JoinPath(path, "statusCode"), "must be an HTTP status, a number from 100 to 599, not %s", describe(sc))
		}
	}
	if hv, ok := k.typed(o, "headers", path, "object"); ok {
		for _, m := range hv.(*Object).Members {
			if !isType(m.Value, "string") && !isType(m.Value, "number") && !isType(m.Value, "boolean") && !isType(m.Value, "array") {
				k.errorf(JoinPath(JoinPath(path, "headers"), m.Key), "must be a header value (a string, or a list of them), not %s", describe(m.Value))
			}
		}
	}
	k.enum(o, "_mode", path, "text", "binary")
	k.typed(o, "data", path, "string")
}

// validStatus reports whether a statusCode is an HTTP status: a whole number (or the string of
// one) from 100 to 599.
func validStatus(v Value) bool {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return false
		}
		f = float64(n)
	default:
		return false
	}
	return f == math.Trunc(f) && f >= 100 && f <= 599
}

func (k *checker) proxy(v Value, path string) {
	o := k.object(v, path, "a proxy (an object with to)")
	if o == nil {
		return
	}
	k.known(o, path, proxyKeys)
	switch to := mustGet(o, "to").(type) {
	case string:
	case *Object:
		if !k.tcp {
			k.errorf(JoinPath(path, "to"), "must be the origin's URL, e.g. http://localhost:8080, not %s", describe(to))
		}
	default:
		k.errorf(JoinPath(path, "to"), "must be the origin's URL, e.g. http://localhost:8080, not %s", describe(to))
	}
	k.enum(o, "mode", path, "proxyOnce", "proxyAlways", "proxyTransparent")
	k.typed(o, "addWaitBehavior", path, "boolean")
	if src, ok := o.Get("addDecorateBehavior"); ok {
		k.script(src, JoinPath(path, "addDecorateBehavior"))
	}
	if hv, ok := k.typed(o, "injectHeaders", path, "object"); ok {
		for _, m := range hv.(*Object).Members {
			k.typed(hv.(*Object), m.Key, JoinPath(path, "injectHeaders"), "string")
		}
	}
	for _, key := range []string{"cert", "key", "passphrase"} {
		k.typed(o, key, path, "string")
	}
	if gv, ok := o.Get("predicateGenerators"); ok && gv != nil {
		for i, g := range k.list(gv, JoinPath(path, "predicateGenerators"), "predicate generators") {
			p := fmt.Sprintf("%s[%d]", JoinPath(path, "predicateGenerators"), i)
			gen := k.object(g, p, "a predicate generator (an object such as {matches: {path: true}})")
			if gen == nil {
				continue
			}
			k.known(gen, p, predicateGeneratorKeys)
			if mv, ok := k.typed(gen, "matches", p, "object"); ok {
				k.known(mv.(*Object), JoinPath(p, "matches"), fieldKeys)
			}
			cs, _ := mustGet(gen, "caseSensitive").(bool)
			k.typed(gen, "caseSensitive", p, "boolean")
			k.typed(gen, "keyCaseSensitive", p, "boolean")
			if ex, ok := k.typed(gen, "except", p, "string"); ok {
				k.regex(ex, JoinPath(p, "except"), !cs)
			}
			k.selectors(gen, p)
			k.enum(gen, "predicateOperator", p, "equals", "deepEquals", "contains", "startsWith", "endsWith", "matches", "exists")
			k.typed(gen, "ignore", p, "object")
			if src, ok := gen.Get("inject"); ok {
				k.script(src, JoinPath(p, "inject"))
			}
		}
	}
}

// behavior checks one behavior of the behaviors list: an object with one behavior.
func (k *checker) behavior(v Value, path string) {
	o := k.object(v, path, "a behavior (an object such as {wait: 100})")
	if o == nil {
		return
	}
	var kinds []string
	for _, m := range o.Members {
		if contains(behaviorKeys, m.Key) {
			kinds = append(kinds, m.Key)
		} else {
			k.errorf(JoinPath(path, m.Key), "unknown behavior %q%s", m.Key, didYouMean(m.Key, behaviorKeys))
		}
	}
	if len(kinds) > 1 {
		k.errorf(path, "names %d behaviors (%s): give each its own object in the list", len(kinds), strings.Join(kinds, ", "))
	}
	if len(kinds) == 0 && o.Len() == 0 {
		k.errorf(path, "names no behavior (one of: %s)", strings.Join(behaviorKeys, ", "))
	}
	for _, kind := range kinds {
		v := mustGet(o, kind)
		if list, isList := v.([]any); isList && (kind == "copy" || kind == "lookup") {
			for i, e := range list {
				k.behaviorValue(kind, e, fmt.Sprintf("%s[%d]", JoinPath(path, kind), i))
			}
			continue
		}
		k.behaviorValue(kind, v, JoinPath(path, kind))
	}
}

func didYouMean(key string, known []string) string {
	if s := Suggest(key, known); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Sprintf(" (expected one of: %s)", strings.Join(known, ", "))
}

// behaviorValue checks the value of one behavior.
func (k *checker) behaviorValue(kind string, v Value, path string) {
	switch kind {
	case "wait":
		switch t := v.(type) {
		case float64:
			if t < 0 || t != math.Trunc(t) {
				k.errorf(path, "must be a whole number of milliseconds (or a JavaScript function), not %s", describe(v))
			}
		case string:
			k.script(t, path)
		default:
			k.errorf(path, "must be a number of milliseconds or a JavaScript function, not %s", describe(v))
		}
	case "decorate":
		k.script(v, path)
	case "shellTransform":
		if !isType(v, "string") && !isType(v, "array") {
			k.errorf(path, "must be a command (a string), not %s", describe(v))
		} else {
			k.strings(v, path)
		}
	case "copy":
		o := k.object(v, path, "an object with from, into and using")
		if o == nil {
			return
		}
		k.known(o, path, copyKeys)
		k.required(o, path, copyKeys...)
		k.typed(o, "from", path, "string", "object")
		k.typed(o, "into", path, "string")
		if u, ok := o.Get("using"); ok {
			k.using(u, JoinPath(path, "using"))
		}
	case "lookup":
		o := k.object(v, path, "an object with key, fromDataSource and into")
		if o == nil {
			return
		}
		k.known(o, path, lookupKeys)
		k.required(o, path, lookupKeys...)
		k.typed(o, "into", path, "string")
		if kv, ok := k.typed(o, "key", path, "object"); ok {
			p := JoinPath(path, "key")
			ko := kv.(*Object)
			k.known(ko, p, []string{"from", "using", "index"})
			k.required(ko, p, "from", "using")
			k.typed(ko, "from", p, "string", "object")
			k.typed(ko, "index", p, "integer")
			if u, ok := ko.Get("using"); ok {
				k.using(u, JoinPath(p, "using"))
			}
		}
		if dv, ok := k.typed(o, "fromDataSource", path, "object"); ok {
			p := JoinPath(path, "fromDataSource")
			do := dv.(*Object)
			k.known(do, p, []string{"csv"})
			if cv, ok := k.typed(do, "csv", p, "object"); ok {
				cp := JoinPath(p, "csv")
				co := cv.(*Object)
				k.known(co, cp, []string{"path", "keyColumn", "delimiter"})
				k.required(co, cp, "path", "keyColumn")
				for _, key := range []string{"path", "keyColumn", "delimiter"} {
					k.typed(co, key, cp, "string")
				}
			} else if !do.Has("csv") {
				k.errorf(p, "needs csv, the file to look up in")
			}
		}
	}
}

// required reports keys o lacks.
func (k *checker) required(o *Object, path string, keys ...string) {
	for _, key := range keys {
		if !o.Has(key) {
			k.errorf(path, "needs %s", key)
		}
	}
}

// using checks a copy or lookup selector and compiles it.
func (k *checker) using(v Value, path string) {
	o := k.object(v, path, "an object with method and selector")
	if o == nil {
		return
	}
	k.known(o, path, usingKeys)
	k.required(o, path, "method", "selector")
	k.enum(o, "method", path, "regex", "xpath", "jsonpath")
	sel, isString := mustGet(o, "selector").(string)
	if !isString {
		if o.Has("selector") {
			k.errorf(JoinPath(path, "selector"), "must be a string, not %s", describe(mustGet(o, "selector")))
		}
		return
	}
	p := JoinPath(path, "selector")
	switch mustGet(o, "method") {
	case "regex":
		ignoreCase := false
		if ov, ok := k.typed(o, "options", path, "object"); ok {
			opts := ov.(*Object)
			k.known(opts, JoinPath(path, "options"), []string{"ignoreCase", "multiline"})
			k.typed(opts, "ignoreCase", JoinPath(path, "options"), "boolean")
			k.typed(opts, "multiline", JoinPath(path, "options"), "boolean")
			ignoreCase = jsvalue.Truthy(mustGet(opts, "ignoreCase"))
		}
		k.regex(sel, p, ignoreCase)
	case "xpath", "jsonpath":
		ns := map[string]string{}
		if nv, ok := k.typed(o, "ns", path, "object"); ok {
			for _, m := range nv.(*Object).Members {
				ns[m.Key] = jsvalue.String(m.Value)
			}
		}
		k.compileSelector(mustGet(o, "method").(string), sel, ns, p)
	}
}

// shadowed warns about stubs that no request can reach: an earlier stub whose predicates are
// among theirs (no predicates at all, or a subset) matches every request they match.
func (k *checker) shadowed(stubs []any, path string) {
	type stubPreds struct {
		keys        []string // canonical JSON of each predicate
		ok          bool     // comparable: an object with a predicates list (or none)
		conditional bool     // matches only in a scenario state, so it shadows nothing
	}
	all := make([]stubPreds, len(stubs))
	for i, s := range stubs {
		o := AsObject(s)
		if o == nil {
			continue
		}
		pv := mustGet(o, "predicates")
		list, isList := pv.([]any)
		if pv != nil && !isList {
			continue
		}
		sp := stubPreds{ok: true, conditional: o.Has("requiredScenarioState")}
		for _, p := range list {
			if po := AsObject(p); po != nil && po.Has("inject") {
				sp.ok = false // a script may decide differently each time
			}
			sp.keys = append(sp.keys, canonical(p))
		}
		all[i] = sp
	}
	// An earlier stub i shadows j when i's keys are all among j's. Comparing every pair is
	// quadratic (100,000 stubs took half a minute), so each earlier stub is filed under the one
	// of its keys that the fewest stubs have: a stub that shadows j is filed under one of j's
	// keys, and the lists looked at stay short unless many stubs share all their keys.
	count := map[string]int{}
	for _, sp := range all {
		for _, key := range sp.keys {
			count[key]++
		}
	}
	filed := map[string][]int{} // rarest key -> the stubs filed under it, in order
	firstEmpty := -1            // the first stub without predicates, which shadows all after it
	for j := range all {
		if !all[j].ok {
			continue
		}
		shadow := firstEmpty
		for _, key := range all[j].keys {
			for _, i := range filed[key] {
				if shadow >= 0 && i > shadow {
					break
				}
				if subset(all[i].keys, all[j].keys) {
					shadow = i
					break
				}
			}
		}
		if shadow >= 0 {
			why := "has no predicates"
			if len(all[shadow].keys) > 0 {
				why = "has a subset of its predicates"
			}
			k.warnf(fmt.Sprintf("%s[%d]", path, j), "stub %d can never match: stub %d %s and comes first", j, shadow, why)
		}
		if all[j].conditional {
			continue
		}
		if len(all[j].keys) == 0 {
			if firstEmpty < 0 {
				firstEmpty = j
			}
			continue
		}
		rarest := all[j].keys[0]
		for _, key := range all[j].keys[1:] {
			if count[key] < count[rarest] {
				rarest = key
			}
		}
		filed[rarest] = append(filed[rarest], j)
	}
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	return true
}

// canonical renders v as JSON with object keys sorted, so equal predicates compare equal.
func canonical(v Value) string {
	switch t := v.(type) {
	case *Object:
		if t == nil {
			return "null"
		}
		keys := t.Keys()
		sort.Strings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for i, key := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(AppendString(nil, key))
			b.WriteByte(':')
			b.WriteString(canonical(mustGet(t, key)))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = canonical(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return string(MarshalJSON(v, 0))
}
