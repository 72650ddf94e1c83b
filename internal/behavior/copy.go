package behavior

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"github.com/dlclark/regexp2/v2"
	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonpath"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/xmldoc"
)

// selector is a compiled `using` block, one type per method: regexSelector, xpathSelector,
// jsonpathSelector; failedSelector for a selector Mountebank fails on when a request uses it,
// and noSelector for a method it does not know (nothing is selected).
type selector interface {
	// values returns what the selector selects from a request field, as Mountebank's
	// getMatches: for a regex the whole match then its groups; for xpath and jsonpath every
	// selected value.
	values(from config.Value) ([]config.Value, error)
}

type (
	regexSelector struct {
		re   *regexp.Regexp
		ecma *regexp2.Regexp // set instead of re for a regex RE2 cannot run (lookaround, backreferences)
	}
	xpathSelector    struct{ expr *xpath.Expr }
	jsonpathSelector struct{ expr jp.Expr } // nil: the selector does not parse, nothing is selected
	failedSelector   struct{ err error }
	// failedXPath is a malformed xpath selector: it fails only on a document, as Mountebank's
	// xmldom gives none for an empty or non-string source and xpath.select then selects nothing.
	failedXPath struct{ err error }
	noSelector  struct{}
)

func compileSelector(using *config.Object) selector {
	method, _ := get(using, "method").(string)
	sel := jsvalue.String(get(using, "selector"))
	switch method {
	case "regex":
		opts := config.AsObject(get(using, "options"))
		flags := ""
		if jsvalue.Truthy(get(opts, "ignoreCase")) {
			flags += "i"
		}
		if jsvalue.Truthy(get(opts, "multiline")) {
			flags += "m"
		}
		// The pattern is JavaScript's (no u flag): translated to RE2 with the same meaning ('.',
		// \s, $, case folding, [^], identity escapes), as predicates translate theirs.
		if len(sel) > match.MaxRegexLen {
			return failedSelector{&config.Error{Message: fmt.Sprintf("Invalid regular expression: the pattern is %d characters long, more than mockd compiles (%d)", len(sel), match.MaxRegexLen)}}
		}
		expr, err := match.TranslateRegex(sel, strings.Contains(flags, "i"), strings.Contains(flags, "m"))
		if err == nil {
			var re *regexp.Regexp
			if re, err = regexp.Compile(expr); err == nil {
				return regexSelector{re: re}
			}
		}
		if ecma := compileECMAScript(sel, flags); ecma != nil {
			return regexSelector{ecma: ecma}
		}
		return failedSelector{&config.Error{Message: "Invalid regular expression: /" + sel + "/" + flags + ": " + regexReason(err)}}
	case "xpath":
		ns := map[string]string{}
		if nsObj := config.AsObject(get(using, "ns")); nsObj != nil {
			for _, m := range nsObj.Members {
				ns[m.Key] = jsvalue.String(m.Value)
			}
		}
		xp, err := xpath.CompileWithNS(sel, ns)
		if err != nil {
			return failedXPath{&config.Error{Code: config.CodeBadData, Message: "malformed xpath predicate selector", Source: sel}}
		}
		return xpathSelector{xp}
	case "jsonpath":
		// JSONPath-plus throws on a selector it cannot parse, and Mountebank then selects nothing.
		expr, _ := jsonpath.Parse(sel)
		return jsonpathSelector{expr}
	}
	return noSelector{}
}

// MatchTimeout bounds one match of a copy regex the ECMAScript engine runs: past it the regex
// selects nothing.
var MatchTimeout = time.Second

// compileECMAScript compiles a pattern RE2 refuses with the ECMAScript engine goja uses (flags
// i and m), or returns nil when it is not a valid JavaScript pattern either.
func compileECMAScript(src, flags string) *regexp2.Regexp {
	opts := regexp2.ECMAScript
	if strings.Contains(flags, "i") {
		opts |= regexp2.IgnoreCase
	}
	if strings.Contains(flags, "m") {
		opts |= regexp2.Multiline
	}
	re, err := regexp2.Compile(src, opts)
	if err != nil {
		return nil
	}
	re.MatchTimeout = MatchTimeout
	return re
}

// ecmaValues is values for a regex the ECMAScript engine runs: the whole match then its
// groups, undefined for a group that took no part.
func ecmaValues(re *regexp2.Regexp, text string) []config.Value {
	m, err := re.FindStringMatch(text)
	if err != nil || m == nil {
		return nil
	}
	groups := m.Groups()
	vals := make([]config.Value, len(groups))
	for i, g := range groups {
		if len(g.Captures) == 0 {
			vals[i] = jsvalue.Undef
		} else {
			vals[i] = g.String()
		}
	}
	return vals
}

func regexReason(err error) string {
	var re *syntax.Error
	if errors.As(err, &re) {
		return string(re.Code)
	}
	return err.Error()
}

func (s failedSelector) values(config.Value) ([]config.Value, error) { return nil, s.err }

func (s failedXPath) values(from config.Value) ([]config.Value, error) {
	if text, ok := from.(string); !ok || text == "" {
		return nil, nil
	}
	return nil, s.err
}

func (noSelector) values(config.Value) ([]config.Value, error) { return nil, nil }

func (s xpathSelector) values(from config.Value) ([]config.Value, error) {
	return xpathValues(s.expr, from)
}

// errXPathString is the TypeError Mountebank's xpath.select throws for a selector whose value
// is a string (`name(/*)`, `normalize-space(//k)`): it maps over the result as over nodes.
var errXPathString = &config.Error{Raw: config.NewObject(
	"message", "result.map is not a function", "name", "TypeError")}

func (s jsonpathSelector) values(from config.Value) ([]config.Value, error) {
	return jsonpathValues(s.expr, from), nil
}

func (s regexSelector) values(from config.Value) ([]config.Value, error) {
	text := jsvalue.String(from) // RegExp.exec coerces its argument to a string
	if s.ecma != nil {
		return ecmaValues(s.ecma, text), nil
	}
	loc := s.re.FindStringSubmatchIndex(text)
	if loc == nil {
		return nil, nil
	}
	vals := make([]config.Value, len(loc)/2)
	for i := range vals {
		if loc[2*i] < 0 {
			vals[i] = jsvalue.Undef
		} else {
			vals[i] = text[loc[2*i]:loc[2*i+1]]
		}
	}
	return vals, nil
}

// xpathValues follows Mountebank's xpath.select: a text node gives its text, an attribute its
// value, an element the data of its first child ("undefined" when that is not text).
func xpathValues(expr *xpath.Expr, from config.Value) ([]config.Value, error) {
	if expr == nil {
		return nil, nil
	}
	if jsvalue.IsUndefined(from) {
		return nil, nil
	}
	doc := xmldoc.Parse(jsvalue.String(from))
	if doc == nil {
		return nil, nil
	}
	var out []config.Value
	var err error
	func() {
		defer func() { _ = recover() }() // a selector the library cannot evaluate selects nothing
		res := expr.Evaluate(xmlquery.CreateXPathNavigator(doc))
		if _, isString := res.(string); isString {
			err = errXPathString
			return
		}
		iter, ok := res.(*xpath.NodeIterator)
		if !ok {
			return // numbers and booleans have no length: no match
		}
		for iter.MoveNext() {
			n := iter.Current().(*xmlquery.NodeNavigator).Current()
			out = append(out, nodeValue(n, iter.Current()))
		}
	}()
	return out, err
}

func nodeValue(n *xmlquery.Node, nav xpath.NodeNavigator) config.Value {
	if nav.NodeType() == xpath.AttributeNode {
		return nav.Value()
	}
	switch n.Type {
	case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode:
		return n.Data
	}
	if c := n.FirstChild; c != nil {
		switch c.Type {
		case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode:
			return c.Data
		}
	}
	return "undefined"
}

// jsonpathValues follows Mountebank's jsonpath.select: the field is parsed as JSON unless it is
// already an object, and every selected value is returned.
func jsonpathValues(expr jp.Expr, from config.Value) []config.Value {
	if expr == nil {
		return nil
	}
	var data config.Value
	switch t := from.(type) {
	case *config.Object, []any:
		data = t
	case jsvalue.Undefined:
		return nil
	default:
		v, err := config.ParseJSON([]byte(jsvalue.String(from)))
		if err != nil {
			return nil
		}
		data = v
	}
	return jsonpath.Select(expr, data)
}

// field is a compiled `from`: the request field a copy or lookup reads, as Mountebank's getFrom
// selects it: a name matched case-insensitively, or a one-key object naming a field and a key
// inside it (which may again be such an object).
type field struct {
	keys []string // the one-key objects' keys, outermost first: exact member names
	name string   // the name at the end, lowercased
	// notText: the name at the end is a number, a boolean or null, which has no toLowerCase:
	// Mountebank's getKeyIgnoringCase throws as soon as the object it looks in has a key.
	notText *config.Error
}

func compileField(from config.Value) field {
	var f field
	for {
		fo := config.AsObject(from)
		if fo == nil {
			break
		}
		if fo.Len() == 0 {
			f.keys = append(f.keys, "undefined") // obj[Object.keys({})[0]]
			from = nil
			continue
		}
		f.keys = append(f.keys, fo.Members[0].Key)
		from = fo.Members[0].Value
	}
	f.name = strings.ToLower(jsvalue.String(from))
	switch from.(type) {
	case float64, bool:
		f.notText = &config.Error{Raw: config.NewObject("message", "expectedKey.toLowerCase is not a function", "name", "TypeError")}
	case nil:
		if len(f.keys) > 0 {
			f.notText = &config.Error{Raw: config.NewObject("message", "Cannot read properties of null (reading 'toLowerCase')", "name", "TypeError")}
		}
	}
	return f
}

// get selects the field from obj, the request as behaviors see it; an array gives its first
// element. The error is Mountebank's TypeError for a name that is not text (notText).
func (f *field) get(obj config.Value) (config.Value, error) {
	for _, k := range f.keys {
		if jsvalue.IsUndefined(obj) || obj == nil {
			return jsvalue.Undef, nil // (null[key] throws in Mountebank; selecting nothing is the safe reading)
		}
		obj = member(obj, k)
	}
	if jsvalue.IsUndefined(obj) || obj == nil {
		return jsvalue.Undef, nil
	}
	if f.notText != nil {
		if o, isObj := obj.(*config.Object); isObj && o.Len() > 0 {
			return nil, f.notText
		}
		if s, isStr := obj.(string); isStr && s != "" {
			return nil, f.notText
		}
		if arr, isArr := obj.([]any); isArr && len(arr) > 0 {
			return nil, f.notText
		}
	}
	var result config.Value = jsvalue.Undef
	switch t := obj.(type) {
	case *config.Object:
		for _, m := range t.Members {
			if strings.ToLower(m.Key) == f.name {
				result = m.Value
				break
			}
		}
	case string:
		if i, err := strconv.Atoi(f.name); err == nil && i >= 0 && i < len(t) && strconv.Itoa(i) == f.name {
			result = t[i : i+1]
		}
	}
	if arr, ok := result.([]any); ok {
		if len(arr) == 0 {
			return jsvalue.Undef, nil
		}
		return arr[0], nil
	}
	return result, nil
}

// member is obj[key] for an object, undefined otherwise.
func member(obj config.Value, key string) config.Value {
	if o, ok := obj.(*config.Object); ok {
		if v, has := o.Get(key); has {
			return v
		}
	}
	return jsvalue.Undef
}

// copyStep is the copy behavior.
type copyStep struct {
	from field
	into string
	sel  selector
}

func compileCopy(cfg *config.Object) step {
	return &copyStep{
		from: compileField(get(cfg, "from")),
		into: jsvalue.String(get(cfg, "into")),
		sel:  compileSelector(config.AsObject(get(cfg, "using"))),
	}
}

func (s *copyStep) apply(_ context.Context, a *applyState) error {
	from, err := s.from.get(a.request())
	if err != nil {
		return err
	}
	query := a.query()
	if stringsQuery(s.sel, from, query) {
		return errPrimitive
	}
	vals, err := s.sel.values(from)
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if query != nil {
		for _, v := range vals {
			if v == config.Value(query) {
				return errPrimitive
			}
		}
	}
	// Each value's text is made when a field first names it: `$..*` can select thousands of
	// values nested in each other, and writing them all out is quadratic in the body.
	repl := make([]string, len(vals))
	made := make([]bool, len(vals))
	text := func(i int) string {
		if !made[i] {
			repl[i], made[i] = joinText(vals[i]), true
		}
		return repl[i]
	}
	replaceIn(a.resp, func(field string) string {
		if !strings.Contains(field, s.into) {
			return field
		}
		for i := range vals {
			if token := s.into + "[" + strconv.Itoa(i) + "]"; strings.Contains(field, token) {
				field = replaceAll(field, token, text(i))
			}
		}
		return replaceAll(field, s.into, text(0))
	})
	return nil
}

// query is the request's query object. It has no prototype in Mountebank (querystring.parse):
// turning it into a string throws (errPrimitive), as a regex does with it (RegExp.exec) and as
// putting it in place of a token or comparing it as a lookup key does (a jsonpath `$`
// selects it).
func (a *applyState) query() *config.Object {
	q, _ := member(a.request(), "query").(*config.Object)
	return q
}

// stringsQuery reports whether sel turns from into a string and from is the query object.
func stringsQuery(sel selector, from config.Value, query *config.Object) bool {
	_, isRegex := sel.(regexSelector)
	return isRegex && query != nil && from == config.Value(query)
}

// errPrimitive is node's TypeError for String() of an object without a prototype.
var errPrimitive = &config.Error{Raw: config.NewObject(
	"message", "Cannot convert object to primitive value", "name", "TypeError")}

// joinText is what str.split(token).join(value) puts in place of the token: String(value), or
// "," when value is undefined (join's default separator).
func joinText(v config.Value) string {
	if jsvalue.IsUndefined(v) {
		return ","
	}
	return jsvalue.String(v)
}

// replaceAll is str.split(old).join(new), which for an empty old puts new between characters.
func replaceAll(s, old, repl string) string {
	if old == repl {
		return s
	}
	if old == "" {
		runes := strings.Split(s, "")
		return strings.Join(runes, repl)
	}
	return strings.ReplaceAll(s, old, repl)
}

// replaceIn applies replacer to every string value and every key in v, recursively, as
// Mountebank's globalObjectReplace does (a renamed key moves to the end of its object).
func replaceIn(v config.Value, replacer func(string) string) {
	switch t := v.(type) {
	case *config.Object:
		if t == nil {
			return
		}
		type rename struct{ from, to string }
		var renames []rename
		for i := range t.Members {
			m := &t.Members[i]
			switch mv := m.Value.(type) {
			case string:
				m.Value = replacer(mv)
			case *config.Object, []any:
				replaceIn(mv, replacer)
			}
			if nk := replacer(m.Key); nk != m.Key {
				renames = append(renames, rename{m.Key, nk})
			}
		}
		for _, r := range renames {
			val, _ := t.Get(r.from)
			t.Set(r.to, val)
			t.Delete(r.from)
		}
	case []any:
		for i, e := range t {
			switch ev := e.(type) {
			case string:
				t[i] = replacer(ev)
			case *config.Object, []any:
				replaceIn(ev, replacer)
			}
		}
	}
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}
