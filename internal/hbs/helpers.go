package hbs

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
)

// helpers are the helpers templates may call: Handlebars' own, handlebars.java's string and
// conditional helpers, and WireMock's.
var helpers map[string]helperFunc

func init() {
	helpers = map[string]helperFunc{
		// Handlebars.
		"if":     func(c *call) (any, error) { return c.cond(Truthy(c.arg(0))) },
		"unless": func(c *call) (any, error) { return c.cond(!Truthy(c.arg(0))) },
		"each":   eachHelper,
		"with":   withHelper,
		"lookup": lookupHelper,
		"log":    func(*call) (any, error) { return nil, nil },
		// Conditionals (handlebars.java).
		"eq":  func(c *call) (any, error) { return c.cond(equal(c.arg(0), c.arg(1))) },
		"neq": func(c *call) (any, error) { return c.cond(!equal(c.arg(0), c.arg(1))) },
		"gt":  compare(func(n int) bool { return n > 0 }),
		"gte": compare(func(n int) bool { return n >= 0 }),
		"lt":  compare(func(n int) bool { return n < 0 }),
		"lte": compare(func(n int) bool { return n <= 0 }),
		"and": func(c *call) (any, error) {
			ok := len(c.args) > 0
			for _, a := range c.args {
				ok = ok && Truthy(a)
			}
			return c.cond(ok)
		},
		"or": func(c *call) (any, error) {
			ok := false
			for _, a := range c.args {
				ok = ok || Truthy(a)
			}
			return c.cond(ok)
		},
		"not": func(c *call) (any, error) { return c.cond(!Truthy(c.arg(0))) },
		// Strings (handlebars.java).
		"capitalize":      func(c *call) (any, error) { return capitalize(c.str(0), true), nil },
		"capitalizeFirst": func(c *call) (any, error) { return capitalize(c.str(0), false), nil },
		"lower":           func(c *call) (any, error) { return strings.ToLower(c.str(0)), nil },
		"upper":           func(c *call) (any, error) { return strings.ToUpper(c.str(0)), nil },
		"replace":         func(c *call) (any, error) { return strings.ReplaceAll(c.str(0), c.str(1), c.str(2)), nil },
		"defaultIfEmpty": func(c *call) (any, error) {
			if Truthy(c.arg(0)) {
				return c.arg(0), nil
			}
			return c.arg(1), nil
		},
		"substring": substringHelper,
		"abbreviate": func(c *call) (any, error) {
			s, n := []rune(c.str(0)), int(number(c.arg(1)))
			if n >= 4 && len(s) > n {
				return string(s[:n-3]) + "...", nil
			}
			return string(s), nil
		},
		"yesno": func(c *call) (any, error) {
			if Truthy(c.arg(0)) {
				return c.optStr("yes", "yes"), nil
			}
			return c.optStr("no", "no"), nil
		},
		"join": joinHelper,
		// WireMock.
		"trim": func(c *call) (any, error) {
			s, err := c.input()
			return strings.TrimSpace(s), err
		},
		"size":   sizeHelper,
		"math":   mathHelper,
		"maths":  mathHelper,
		"range":  rangeHelper,
		"array":  func(c *call) (any, error) { return append([]any{}, c.args...), nil },
		"isOdd":  parity(1, "odd"),
		"isEven": parity(0, "even"),
		"stripes": func(c *call) (any, error) {
			if int64(number(c.arg(0)))%2 == 0 {
				return c.arg(1), nil
			}
			return c.arg(2), nil
		},
		"contains": func(c *call) (any, error) {
			ok := false
			switch t := c.arg(0).(type) {
			case []any:
				for _, e := range t {
					ok = ok || Text(e) == c.str(1)
				}
			case Multi:
				for _, e := range t {
					ok = ok || e == c.str(1)
				}
			default:
				ok = strings.Contains(Text(t), c.str(1))
			}
			return c.cond(ok)
		},
		"matches": func(c *call) (any, error) {
			re, err := compileRegex(c.str(1))
			if err != nil {
				return nil, err
			}
			return c.cond(re.MatchString(c.str(0)))
		},
		"regexExtract": regexExtractHelper,
		"base64":       base64Helper,
		"urlEncode":    urlEncodeHelper,
		"jsonPath":     jsonPathHelper,
		"xPath":        xPathHelper,
		"soapXPath":    soapXPathHelper,
		"parseJson":    parseJSONHelper,
		"toJson": func(c *call) (any, error) {
			return SafeString(jacksonJSON(nil, toValue(c.arg(0)), 0)), nil
		},
		"formatJson": formatJSONHelper,
		"assign": func(c *call) (any, error) {
			s, err := c.capture()
			c.setVar(c.str(0), s)
			return nil, err
		},
		"val":           valHelper,
		"randomValue":   randomValueHelper,
		"randomInt":     randomIntHelper,
		"randomDecimal": randomDecimalHelper,
		"pickRandom":    pickRandomHelper,
		"arrayJoin":     arrayJoinHelper,
		"hostname": func(*call) (any, error) {
			h, _ := os.Hostname()
			return h, nil
		},
		"formData":  formDataHelper,
		"now":       nowHelper,
		"date":      dateHelper,
		"parseDate": parseDateHelper,
	}
}

func eachHelper(c *call) (any, error) {
	if c.blk == nil {
		return nil, errors.New("each must be a block: {{#each …}}")
	}
	st, b := c.st, c.blk
	iterate := func(n int, get func(i int) (key, val any)) error {
		for i := 0; i < n; i++ {
			k, v := get(i)
			f := st.child(c.f, v, b, v, k)
			f.iter, f.index, f.key, f.first, f.last = true, i, k, i == 0, i == n-1
			if err := st.nodes(b.body, f); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	switch t := c.arg(0).(type) {
	case []any:
		if len(t) == 0 {
			return nil, c.inverse()
		}
		err = iterate(len(t), func(i int) (any, any) { return float64(i), t[i] })
	case Multi:
		if len(t) == 0 {
			return nil, c.inverse()
		}
		err = iterate(len(t), func(i int) (any, any) { return float64(i), t[i] })
	case *config.Object:
		if t == nil || t.Len() == 0 {
			return nil, c.inverse()
		}
		err = iterate(t.Len(), func(i int) (any, any) { return t.Members[i].Key, t.Members[i].Value })
	case map[string]any:
		if len(t) == 0 {
			return nil, c.inverse()
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		err = iterate(len(keys), func(i int) (any, any) { return keys[i], t[keys[i]] })
	case entrier:
		es := t.entries()
		if len(es) == 0 {
			return nil, c.inverse()
		}
		err = iterate(len(es), func(i int) (any, any) { return es[i].key, es[i].val })
	default:
		return nil, c.inverse()
	}
	return nil, err
}

func withHelper(c *call) (any, error) {
	if !Truthy(c.arg(0)) {
		return nil, c.inverse()
	}
	return nil, c.fn(c.arg(0), c.arg(0))
}

// equal compares as handlebars.java's eq: numbers by value, everything else by text.
func equal(a, b any) bool {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return x == y
		}
	}
	if _, ok := a.(Multi); ok {
		return false // WireMock: a one-or-many value must be indexed to compare
	}
	return Text(a) == Text(b) && (a == nil) == (b == nil)
}

func compare(ok func(int) bool) helperFunc {
	return func(c *call) (any, error) {
		a, b := c.arg(0), c.arg(1)
		x, errX := toNumber(a)
		y, errY := toNumber(b)
		n := 0
		if errX == nil && errY == nil {
			switch {
			case x < y:
				n = -1
			case x > y:
				n = 1
			}
		} else {
			n = strings.Compare(Text(a), Text(b))
		}
		return c.cond(ok(n))
	}
}

// parity is handlebars.java's isOdd/isEven: the word (or the second argument) when the number
// has that parity, nothing otherwise.
func parity(rest int64, word string) helperFunc {
	return func(c *call) (any, error) {
		n, err := toNumber(c.arg(0))
		if r := int64(n) % 2; err != nil || r != rest && r != -rest {
			return nil, nil
		}
		if len(c.args) > 1 {
			return c.arg(1), nil
		}
		return word, nil
	}
}

// lookupHelper looks key up in a value; a key with dots that names no member is followed as a
// path (lookup request.query 'ids[].1').
func lookupHelper(c *call) (any, error) {
	key := c.str(1)
	if v, ok := member(c.arg(0), key); ok {
		return v, nil
	}
	v := c.arg(0)
	for _, seg := range strings.Split(key, ".") {
		var ok bool
		if v, ok = member(v, seg); !ok {
			return nil, nil
		}
	}
	return v, nil
}

// toNumber reads a number or numeric text.
func toNumber(v any) (float64, error) {
	switch t := v.(type) {
	case float64:
		return t, nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	}
	s := strings.TrimSpace(Text(v))
	return strconv.ParseFloat(s, 64)
}

func number(v any) float64 {
	f, _ := toNumber(v)
	return f
}

func capitalize(s string, everyWord bool) string {
	out := []rune(s)
	start := true
	for i, r := range out {
		if start && unicode.IsLetter(r) {
			out[i] = unicode.ToUpper(r)
			if !everyWord {
				break
			}
		}
		start = unicode.IsSpace(r)
	}
	return string(out)
}

func substringHelper(c *call) (any, error) {
	s := []rune(c.str(0))
	start := int(number(c.arg(1)))
	end := len(s)
	if len(c.args) > 2 {
		end = int(number(c.arg(2)))
	}
	start, end = max(0, min(start, len(s))), max(0, min(end, len(s)))
	if start > end {
		return "", nil
	}
	return string(s[start:end]), nil
}

func joinHelper(c *call) (any, error) {
	if len(c.args) < 2 {
		return "", nil
	}
	sep := c.str(len(c.args) - 1)
	var parts []string
	for _, a := range c.args[:len(c.args)-1] {
		switch t := a.(type) {
		case []any:
			for _, e := range t {
				parts = append(parts, Text(e))
			}
		case Multi:
			parts = append(parts, t...)
		default:
			parts = append(parts, Text(t))
		}
	}
	return strings.Join(parts, sep), nil
}

func sizeHelper(c *call) (any, error) {
	switch t := c.arg(0).(type) {
	case []any:
		return float64(len(t)), nil
	case Multi:
		return float64(len(t)), nil
	case *config.Object:
		return float64(t.Len()), nil
	case map[string]any:
		return float64(len(t)), nil
	case entrier:
		return float64(len(t.entries())), nil
	}
	return float64(utf8.RuneCountInString(c.str(0))), nil
}

// mathHelper is WireMock's math: integers stay integers (division rounds half up), anything
// else is a decimal.
func mathHelper(c *call) (any, error) {
	if len(c.args) != 3 {
		return nil, errors.New("math needs two operands and an operator, e.g. {{math 3 '+' 2}}")
	}
	a, errA := toNumber(c.arg(0))
	b, errB := toNumber(c.arg(2))
	if errA != nil {
		a = 0
	}
	if errB != nil {
		b = 0
	}
	ints := a == math.Trunc(a) && b == math.Trunc(b)
	switch op := c.str(1); op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*", "x":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, errors.New("math: division by zero")
		}
		if ints {
			return math.Round(a / b), nil
		}
		return a / b, nil
	case "%":
		if b == 0 {
			return nil, errors.New("math: division by zero")
		}
		return math.Mod(a, b), nil
	default:
		return nil, fmt.Errorf("math: %s is not a valid mathematical operator", op)
	}
}

// maxRange bounds range and randomValue lengths.
const maxRange = 100000

func rangeHelper(c *call) (any, error) {
	lo, hi := int(number(c.arg(0))), int(number(c.arg(1)))
	if len(c.args) < 2 {
		lo, hi = 0, lo
	}
	if hi-lo > maxRange {
		return nil, fmt.Errorf("range: more than %d numbers", maxRange)
	}
	out := []any{}
	for i := lo; i <= hi; i++ {
		out = append(out, float64(i))
	}
	return out, nil
}

// maxRegexLen is match.MaxRegexLen (RE2 takes about 230 MB to compile a 1 MiB pattern).
const maxRegexLen = 1 << 20

func compileRegex(p string) (*regexp.Regexp, error) {
	if len(p) > maxRegexLen {
		return nil, fmt.Errorf("invalid regular expression: the pattern is %d characters long, more than mockd compiles (%d)", len(p), maxRegexLen)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", p, err)
	}
	return re, nil
}

func regexExtractHelper(c *call) (any, error) {
	re, err := compileRegex(c.str(1))
	if err != nil {
		return nil, err
	}
	m := re.FindStringSubmatch(c.str(0))
	if m == nil {
		if d, ok := c.opt("default"); ok {
			return d, nil
		}
		return nil, fmt.Errorf("regexExtract: nothing matches %q", c.str(1))
	}
	if len(c.args) > 2 {
		groups := make([]any, 0, len(m)-1)
		for _, g := range m[1:] {
			groups = append(groups, g)
		}
		c.setVar(c.str(2), groups)
		return nil, nil
	}
	return m[0], nil
}

func base64Helper(c *call) (any, error) {
	s, err := c.input()
	if err != nil {
		return nil, err
	}
	if Truthy(c.hash["decode"]) {
		dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			dec, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(s))
		}
		if err != nil {
			return nil, fmt.Errorf("base64: cannot decode: %w", err)
		}
		return string(dec), nil
	}
	if v, ok := c.opt("padding"); ok && !Truthy(v) {
		return base64.RawStdEncoding.EncodeToString([]byte(s)), nil
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

func urlEncodeHelper(c *call) (any, error) {
	s, err := c.input()
	if err != nil {
		return nil, err
	}
	if Truthy(c.hash["decode"]) {
		return url.QueryUnescape(s)
	}
	return url.QueryEscape(s), nil
}

// jsonPathHelper selects from JSON text (or a parsed value) with a JSONPath: one match gives
// the value, several a list; an object or list renders as JSON.
func jsonPathHelper(c *call) (any, error) {
	path, err := compileJSONPath(c.str(1))
	if err != nil {
		return nil, err
	}
	doc := c.arg(0)
	if text, isText := doc.(string); isText {
		if v, missing, ok := c.st.scanBody(text, path); ok {
			if missing {
				return c.hash["default"], nil
			}
			return v, nil
		}
	}
	if path.wildcard {
		return c.orderedJSONPath(path, doc)
	}
	textLen := 0
	var plain any
	if _, ok := doc.(string); ok || doc == nil {
		text := Text(doc)
		textLen = len(text)
		if v, ok := c.st.requestJSON(text); ok {
			plain = v // the request's body, parsed once for every helper and predicate reading it
		} else {
			v, err := config.ParseJSON([]byte(text))
			if err != nil {
				return c.hash["default"], nil
			}
			plain = config.Plain(v)
		}
	} else {
		plain = config.Plain(toValue(doc))
	}
	if val, found, walked := path.walk(plain); walked {
		if !found || val == nil {
			return c.hash["default"], nil
		}
		return fromPlainValue(val), nil
	}
	got := path.expr.Get(plain)
	if len(got) == 0 || len(got) == 1 && got[0] == nil {
		return c.hash["default"], nil
	}
	if len(got) > 1 && !withinBudget(got, 4<<20+2*textLen) {
		return nil, errSelectionTooLarge
	}
	if len(got) == 1 && !path.wildcard {
		return fromPlainValue(got[0]), nil
	}
	out := make([]any, len(got))
	for i, g := range got {
		out[i] = fromPlainValue(g)
	}
	return out, nil
}

// orderedJSONPath is jsonPath's list of the values a path with wildcards, filters or recursive
// descent selects, in the document's order (orderedSelect).
func (c *call) orderedJSONPath(path *jsonPath, doc any) (any, error) {
	var v config.Value
	textLen := 0
	if _, ok := doc.(string); ok || doc == nil {
		text := Text(doc)
		textLen = len(text)
		var err error
		if v, err = config.ParseJSON([]byte(text)); err != nil {
			return c.hash["default"], nil
		}
	} else {
		v = toValue(doc)
	}
	got := orderedSelect(path.expr, v)
	if len(got) == 0 || len(got) == 1 && got[0] == nil {
		return c.hash["default"], nil
	}
	if len(got) > 1 && !withinBudget(got, 4<<20+2*textLen) {
		return nil, errSelectionTooLarge
	}
	out := make([]any, len(got))
	for i, g := range got {
		out[i] = fromPlainValue(config.Plain(g))
	}
	return out, nil
}

// jsonPath is a jsonPath helper's expression, compiled once (see compileJSONPath).
type jsonPath struct {
	expr     jp.Expr
	names    []string // the names of $.a.b, a path of names only without wildcards, else nil
	wildcard bool
}

// walk is what expr.Get(v) selects for a path of names, walked directly through objects:
// found says whether it selects val. walked is false where p is not such a path or the walk
// meets something other than an object (ojg then decides).
func (p *jsonPath) walk(v any) (val any, found, walked bool) {
	if p.names == nil || !walkNames {
		return nil, false, false
	}
	for _, k := range p.names {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, false, false
		}
		if v, found = m[k]; !found {
			return nil, false, true
		}
	}
	return v, true, true
}

// walkNames is false only in a test comparing walk with ojg.
var walkNames = true

// jsonPaths caches compiled jsonPath expressions: a template names the same few on every
// request. At most maxJSONPaths are kept, each of at most maxJSONPathLen bytes (past that, an
// expression, e.g. one built from the request, is compiled each time).
var jsonPaths struct {
	sync.Map
	n atomic.Int64
}

const (
	maxJSONPaths   = 4096
	maxJSONPathLen = 512
)

func compileJSONPath(src string) (*jsonPath, error) {
	if v, ok := jsonPaths.Load(src); ok {
		return v.(*jsonPath), nil
	}
	// Kept past the request: src may be the request's memory (a path the request names), which
	// serves the next request once this one's answer is written (request.Recycle).
	src = strings.Clone(src)
	expr, err := jp.ParseString(src)
	if err != nil {
		return nil, fmt.Errorf("jsonPath: invalid expression %q: %w", src, err)
	}
	p := &jsonPath{expr: expr, wildcard: isWildcard(src)}
	if len(expr) >= 2 && !p.wildcard {
		if _, isRoot := expr[0].(jp.Root); isRoot {
			p.names = make([]string, 0, len(expr)-1)
			for _, f := range expr[1:] {
				ch, isChild := f.(jp.Child)
				if !isChild {
					p.names = nil
					break
				}
				p.names = append(p.names, string(ch))
			}
		}
	}
	if len(src) <= maxJSONPathLen && jsonPaths.n.Add(1) <= maxJSONPaths {
		jsonPaths.Store(src, p)
	}
	return p, nil
}

// errSelectionTooLarge: recursive descent ($..a) picks every level of a nested value, each
// holding the levels below: a 60 KB body nested 10,000 deep selects 300 MB.
var errSelectionTooLarge = errors.New("jsonPath: the values selected are too large (more than 4 MiB and twice the text they are selected from)")

// withinBudget says whether the values, written out, would take at most budget bytes (about a
// byte for each value and separator, the length of each string and key). Values not nested in
// each other take about the length of the text they come from; it counts no further than budget.
func withinBudget(vals []any, budget int) bool {
	var count func(v any) bool
	count = func(v any) bool {
		budget--
		switch t := v.(type) {
		case string:
			budget -= len(t)
		case []any:
			for _, e := range t {
				if !count(e) {
					return false
				}
			}
		case map[string]any:
			for k, e := range t {
				budget -= len(k)
				if !count(e) {
					return false
				}
			}
		case *config.Object:
			if t == nil {
				break
			}
			for _, m := range t.Members {
				budget -= len(m.Key)
				if !count(m.Value) {
					return false
				}
			}
		}
		return budget >= 0
	}
	for _, v := range vals {
		if !count(v) {
			return false
		}
	}
	return true
}

func isWildcard(p string) bool { return strings.ContainsAny(p, "*?") || strings.Contains(p, "..") }

// fromPlainValue turns a JSON value decoded by ojg into a template value (objects keep their
// keys sorted: the order ojg gives is not the document's).
func fromPlainValue(v any) any {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case int:
		return float64(t)
	case map[string]any, []any:
		return fromPlain(normalizeNumbers(t))
	}
	return v
}

func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case int:
		return float64(t)
	case map[string]any:
		for k, e := range t {
			if n := normalizeNumbers(e); isInt(e) {
				t[k] = n // written only when it changes: v may be the request's parsed body
			}
		}
	case []any:
		for i, e := range t {
			if n := normalizeNumbers(e); isInt(e) {
				t[i] = n
			}
		}
	}
	return v
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64:
		return true
	}
	return false
}

// toValue converts a template value to a config value (for toJson and jsonPath).
func toValue(v any) config.Value {
	switch t := v.(type) {
	case *config.Object:
		return t
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = toValue(e)
		}
		return out
	case entrier:
		o := &config.Object{}
		for _, e := range t.entries() {
			o.Set(e.key, toValue(e.val))
		}
		return o
	case Multi:
		if len(t) == 1 {
			return t[0]
		}
		return fromPlain(t)
	case stringer:
		return t.text()
	}
	return fromPlain(v)
}

// xmlNode is an element xPath selected: it renders as its XML and has name, text and
// attributes.
type xmlNode struct{ n *xmlquery.Node }

func (x xmlNode) text() string {
	if x.n.Type == xmlquery.TextNode || x.n.Type == xmlquery.AttributeNode {
		return x.n.InnerText()
	}
	return x.n.OutputXML(true)
}

func (x xmlNode) member(key string) (any, bool) {
	switch key {
	case "name":
		return x.n.Data, true
	case "text":
		return x.n.InnerText(), true
	case "attributes":
		o := &config.Object{}
		for _, a := range x.n.Attr {
			o.Set(a.Name.Local, a.Value)
		}
		return o, true
	}
	return nil, false
}

func xPathHelper(c *call) (any, error) { return xpathSelect(c, c.str(1)) }

// soapXPathHelper is xPath under /Envelope/Body of a SOAP document, names matched by local name.
func soapXPathHelper(c *call) (any, error) {
	p := c.str(1)
	var b strings.Builder
	b.WriteString("/*[local-name()='Envelope']/*[local-name()='Body']")
	for _, step := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		switch {
		case step == "" || strings.Contains(step, "(") || strings.HasPrefix(step, "@"):
			b.WriteString("/" + step)
		default:
			b.WriteString("/*[local-name()='" + step + "']")
		}
	}
	return xpathSelect(c, b.String())
}

func xpathSelect(c *call, p string) (any, error) {
	expr, err := xpath.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("xPath: invalid expression %q: %w", p, err)
	}
	doc, err := xmlquery.Parse(strings.NewReader(c.str(0)))
	if err != nil {
		return c.hash["default"], nil
	}
	var out []any
	switch r := expr.Evaluate(xmlquery.CreateXPathNavigator(doc)).(type) {
	case *xpath.NodeIterator:
		for r.MoveNext() {
			out = append(out, xmlNode{r.Current().(*xmlquery.NodeNavigator).Current()})
		}
	case float64:
		return r, nil
	case string:
		return r, nil
	case bool:
		return r, nil
	}
	switch len(out) {
	case 0:
		return c.hash["default"], nil
	case 1:
		return SafeString(out[0].(xmlNode).text()), nil
	}
	return out, nil
}

func parseJSONHelper(c *call) (any, error) {
	var text, name string
	var err error
	switch {
	case c.blk != nil:
		text, err = c.capture()
		name = c.str(0)
	default:
		text = c.str(0)
		name = c.str(1)
	}
	if err != nil {
		return nil, err
	}
	v, perr := config.ParseJSON([]byte(text))
	if perr != nil {
		return nil, fmt.Errorf("parseJson: %w", perr)
	}
	if name != "" {
		c.setVar(name, v)
		return nil, nil
	}
	return v, nil
}

func formatJSONHelper(c *call) (any, error) {
	s, err := c.input()
	if err != nil {
		return nil, err
	}
	v, perr := config.ParseJSON([]byte(s))
	if perr != nil {
		return nil, fmt.Errorf("formatJson: %w", perr)
	}
	if c.optStr("format", "pretty") == "compact" {
		return SafeString(config.MarshalJSON(v, 0)), nil
	}
	return SafeString(jacksonJSON(nil, v, 0)), nil
}

// jacksonJSON renders v as Jackson's default pretty printer does (WireMock's toJson and
// formatJson): objects one member a line with "key" : value, arrays on one line as [ a, b ].
func jacksonJSON(dst []byte, v config.Value, level int) []byte {
	switch t := v.(type) {
	case *config.Object:
		if t == nil || t.Len() == 0 {
			return append(dst, "{ }"...)
		}
		dst = append(dst, '{')
		for i, m := range t.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '\n')
			dst = append(dst, strings.Repeat("  ", level+1)...)
			dst = config.AppendString(dst, m.Key)
			dst = append(dst, " : "...)
			dst = jacksonJSON(dst, m.Value, level+1)
		}
		dst = append(dst, '\n')
		dst = append(dst, strings.Repeat("  ", level)...)
		return append(dst, '}')
	case []any:
		if len(t) == 0 {
			return append(dst, "[ ]"...)
		}
		dst = append(dst, "[ "...)
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = jacksonJSON(dst, e, level)
		}
		return append(dst, " ]"...)
	}
	return config.AppendJSON(dst, v, 0)
}

func valHelper(c *call) (any, error) {
	v := c.arg(0)
	if v == nil {
		if d, ok := c.opt("or"); ok {
			v = d
		} else if d, ok := c.opt("default"); ok {
			v = d
		}
	}
	if name, ok := c.opt("assign"); ok {
		c.setVar(Text(name), v)
		return nil, nil
	}
	return v, nil
}

const (
	alphabetic   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	numeric      = "0123456789"
	hexadecimal  = "0123456789abcdef"
	alphanumeric = alphabetic + numeric
	symbols      = alphanumeric + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
)

func randomValueHelper(c *call) (any, error) {
	typ := strings.ToUpper(c.optStr("type", "ALPHANUMERIC"))
	if typ == "UUID" {
		return uuid(), nil
	}
	n := int(number(c.hash["length"]))
	if _, ok := c.opt("length"); !ok {
		n = 36
	}
	if n < 0 || n > maxRange {
		return nil, fmt.Errorf("randomValue: length %d out of range", n)
	}
	var set string
	switch typ {
	case "ALPHANUMERIC":
		set = alphanumeric
	case "ALPHABETIC":
		set = alphabetic
	case "NUMERIC":
		set = numeric
	case "ALPHANUMERIC_AND_SYMBOLS":
		set = symbols
	case "HEXADECIMAL":
		set = hexadecimal
	default:
		return nil, fmt.Errorf("randomValue: unknown type %q", typ)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = set[rand.IntN(len(set))]
	}
	s := string(b)
	if Truthy(c.hash["uppercase"]) {
		s = strings.ToUpper(s)
	} else if typ != "ALPHANUMERIC_AND_SYMBOLS" && typ != "NUMERIC" && typ != "HEXADECIMAL" {
		// WireMock's alphabetic and alphanumeric values are lower case unless uppercase=true.
		s = strings.ToLower(s)
	}
	return s, nil
}

func randomIntHelper(c *call) (any, error) {
	lo, hi := math.MinInt32, math.MaxInt32
	if v, ok := c.opt("lower"); ok {
		lo = int(number(v))
	}
	if v, ok := c.opt("upper"); ok {
		hi = int(number(v))
	}
	if hi <= lo {
		return nil, fmt.Errorf("randomInt: upper %d must be above lower %d", hi, lo)
	}
	return float64(lo + rand.IntN(hi-lo)), nil
}

func randomDecimalHelper(c *call) (any, error) {
	lo, hi := -math.MaxFloat32, math.MaxFloat32
	if v, ok := c.opt("lower"); ok {
		lo = number(v)
	}
	if v, ok := c.opt("upper"); ok {
		hi = number(v)
	}
	if hi <= lo {
		return nil, fmt.Errorf("randomDecimal: upper %v must be above lower %v", hi, lo)
	}
	return lo + rand.Float64()*(hi-lo), nil
}

// flatten lists args, each list among them (an array, a repeated query parameter) item by item.
func flatten(args []any) []any {
	var list []any
	for _, a := range args {
		switch t := a.(type) {
		case []any:
			list = append(list, t...)
		case Multi:
			for _, e := range t {
				list = append(list, e)
			}
		default:
			list = append(list, t)
		}
	}
	return list
}

func pickRandomHelper(c *call) (any, error) {
	list := flatten(c.args)
	if len(list) == 0 {
		return nil, nil
	}
	if n, ok := c.opt("count"); ok {
		k := min(int(number(n)), len(list))
		perm := rand.Perm(len(list))
		out := make([]any, k)
		for i := range out {
			out[i] = list[perm[i]]
		}
		return out, nil
	}
	return list[rand.IntN(len(list))], nil
}

func arrayJoinHelper(c *call) (any, error) {
	sep := c.str(0)
	items := flatten(c.args[min(1, len(c.args)):])
	parts := make([]string, len(items))
	for i, it := range items {
		if c.blk != nil {
			mark := len(c.st.out)
			if err := c.fn(it, it); err != nil {
				return nil, err
			}
			parts[i] = string(c.st.out[mark:])
			c.st.out = c.st.out[:mark]
		} else {
			parts[i] = Text(it)
		}
	}
	return c.optStr("prefix", "") + strings.Join(parts, sep) + c.optStr("suffix", ""), nil
}

func formDataHelper(c *call) (any, error) {
	decode := Truthy(c.hash["urlDecode"])
	form := &config.Object{}
	values := map[string]Multi{}
	var order []string
	for _, part := range strings.Split(c.str(0), "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if decode {
			if d, err := url.QueryUnescape(k); err == nil {
				k = d
			}
			if d, err := url.QueryUnescape(v); err == nil {
				v = d
			}
		}
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] = append(values[k], v)
	}
	for _, k := range order {
		form.Set(k, values[k])
	}
	if len(c.args) > 1 {
		c.setVar(c.str(1), form)
		return nil, nil
	}
	return form, nil
}
