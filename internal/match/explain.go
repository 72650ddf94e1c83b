package match

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Explanation is what the reference evaluator found for one request against every stub of an
// imposter: which stub matched first and, for each stub, each predicate's result and why it
// failed. Scripts are not run to explain: an inject predicate's result is unknown (NotRun).
// It is not changed once returned and may be read concurrently.
type Explanation struct {
	// Match is the index of the first stub whose predicates all matched, or -1.
	Match int
	// Stubs has one result per stub, in order.
	Stubs []*StubResult
}

// StubResult is the result of one stub's predicates.
type StubResult struct {
	Index int
	// Matched is true when every predicate matched; NotRun when none failed but an inject
	// predicate was not run, so whether the stub matches is unknown.
	Matched, NotRun bool
	// Err is the error Mountebank raises evaluating the stub (its imposter answers 500).
	Err error
	// Satisfied of Total checks passed: one per field of an operator's expected object (the
	// top-level fields: method, path, headers, body…), one per not, or, and or inject.
	Satisfied, Total int
	Predicates       []*PredicateResult
}

// PredicateResult is the result of one predicate and, for not, or and and, of the predicates
// under it.
type PredicateResult struct {
	// Operator is the predicate's operator (equals, deepEquals, contains, startsWith, endsWith,
	// matches, exists, not, or, and, inject), or "" when it names none.
	Operator string
	// Predicate is the predicate as configured.
	Predicate config.Value
	Matched   bool
	NotRun    bool
	Err       error
	// Failure says why it did not match (nil when it matched, raised an error or was not run).
	Failure *Failure
	// Satisfied of Total fields of the expected object matched (equals…exists, deepEquals).
	Satisfied, Total int
	Children         []*PredicateResult
}

// Failure is why a predicate did not match: for an operator comparing fields, the first field
// that failed, with the expected value and the request's (both as the predicate compared them:
// lowercased unless caseSensitive, selected by jsonpath or xpath); for not, or and inject, a
// message (and, for or, each alternative's failure).
type Failure struct {
	Operator string
	// Field is the path of the failing field in the request, e.g. "path", "headers.accept",
	// "body.user.id".
	Field    string
	Expected any
	// Actual is the request's value; undefined (Missing reports it) when it has none.
	Actual  any
	Message string
	Causes  []*Failure
}

// Missing reports whether the request has no value at the failing field.
func (f *Failure) Missing() bool { return jsvalue.IsUndefined(f.Actual) }

// count is what the predicate adds to its stub's Satisfied and Total.
func (p *PredicateResult) count() (satisfied, total int) {
	if p.Total > 0 && p.Err == nil {
		return p.Satisfied, p.Total
	}
	if p.Matched {
		return 1, 1
	}
	return 0, 1
}

// Failure returns why the stub did not match: the failure of its first predicate that failed
// or was not run, or nil.
func (s *StubResult) Failure() *Failure {
	for _, p := range s.Predicates {
		if p.Err != nil {
			return nil
		}
		if !p.Matched && p.Failure != nil {
			return p.Failure
		}
	}
	return nil
}

// Explain evaluates req, a request in Mountebank's JSON shape (see RequestFromJSON), against
// every stub.
func (r *Reference) Explain(req *config.Object) *Explanation {
	return r.explain(&evaluator{binary: r.binary, explain: true}, req)
}

// ExplainRequest evaluates a request mockd received against every stub.
func (r *Reference) ExplainRequest(req *request.Request) *Explanation {
	return r.explain(&evaluator{binary: r.binary, explain: true}, requestObject(req))
}

func (r *Reference) explain(ev *evaluator, req *config.Object) *Explanation {
	e := &Explanation{Match: -1, Stubs: make([]*StubResult, len(r.stubs))}
	for i, preds := range r.stubs {
		res := ev.stub(preds, req)
		res.Index = i
		e.Stubs[i] = res
		if res.Matched && e.Match < 0 {
			e.Match = i
		}
	}
	return e
}

// Nearest returns up to n stubs that did not match, those that satisfied the most checks
// first (then those that failed the fewest, then in stub order).
func (e *Explanation) Nearest(n int) []*StubResult {
	var out []*StubResult
	for _, s := range e.Stubs {
		if !s.Matched {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Satisfied != b.Satisfied {
			return a.Satisfied > b.Satisfied
		}
		return a.Total-a.Satisfied < b.Total-b.Satisfied
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// NearestCount is how many nearest stubs a no-match report names.
const NearestCount = 3

// Summary renders the nearest stubs as the JSON mockd adds to a request that matched no stub:
// {"nearest": [{"stub", "satisfied", "total", "failure" | "error"}]}.
func (e *Explanation) Summary() *config.Object {
	list := []any{}
	for _, s := range e.Nearest(NearestCount) {
		o := config.NewObject("stub", float64(s.Index), "satisfied", float64(s.Satisfied), "total", float64(s.Total))
		if s.Err != nil {
			o.Set("error", errorText(s.Err))
		} else if f := s.Failure(); f != nil {
			o.Set("failure", f.JSON())
		}
		list = append(list, o)
	}
	return config.NewObject("nearest", list)
}

// Text renders the nearest stubs on one line, for a log line or a response header.
func (e *Explanation) Text() string {
	near := e.Nearest(NearestCount)
	if len(near) == 0 {
		return "the imposter has no stubs"
	}
	var b strings.Builder
	b.WriteString("nearest: ")
	for i, s := range near {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "stub %d (%d of %d checks passed): ", s.Index, s.Satisfied, s.Total)
		switch f := s.Failure(); {
		case s.Err != nil:
			b.WriteString("error: " + errorText(s.Err))
		case f != nil:
			b.WriteString(f.Text())
		default:
			b.WriteString("no reason found")
		}
	}
	return b.String()
}

// Text renders the failure as a short sentence.
func (f *Failure) Text() string {
	if f.Field == "" {
		return f.Operator + ": " + f.Message
	}
	s := fmt.Sprintf("%s %s: expected %s", f.Operator, f.Field, shortJSON(f.Expected))
	if f.Missing() {
		return s + ", but the request has none"
	}
	return s + ", got " + shortJSON(f.Actual)
}

// JSON renders the failure: {"operator", "field", "expected", "actual" or "missing": true,
// "message", "causes"}, each when it applies.
func (f *Failure) JSON() *config.Object {
	o := config.NewObject("operator", f.Operator)
	if f.Field != "" {
		o.Set("field", f.Field)
		o.Set("expected", jsonValue(f.Expected))
		if f.Missing() {
			o.Set("missing", true)
		} else {
			o.Set("actual", jsonValue(f.Actual))
		}
	}
	if f.Message != "" {
		o.Set("message", f.Message)
	}
	if len(f.Causes) > 0 {
		causes := make([]any, 0, len(f.Causes))
		for _, c := range f.Causes {
			if c != nil {
				causes = append(causes, c.JSON())
			}
		}
		o.Set("causes", causes)
	}
	return o
}

// JSON renders the whole explanation: {"match": index or null, "stubs": [...]}, each stub
// {"index", "matched", "satisfied", "total", "notRun"?, "error"?, "predicates"} and each
// predicate {"operator", "matched", "notRun"?, "error"?, "predicate", "failure"?, "predicates"?}.
func (e *Explanation) JSON() *config.Object {
	o := config.NewObject()
	if e.Match >= 0 {
		o.Set("match", float64(e.Match))
	} else {
		o.Set("match", nil)
	}
	stubs := make([]any, len(e.Stubs))
	for i, s := range e.Stubs {
		so := config.NewObject("index", float64(s.Index), "matched", s.Matched,
			"satisfied", float64(s.Satisfied), "total", float64(s.Total))
		if s.NotRun {
			so.Set("notRun", true)
		}
		if s.Err != nil {
			so.Set("error", errorText(s.Err))
		}
		so.Set("predicates", predicatesJSON(s.Predicates))
		stubs[i] = so
	}
	o.Set("stubs", stubs)
	return o
}

func predicatesJSON(list []*PredicateResult) []any {
	out := make([]any, len(list))
	for i, p := range list {
		o := config.NewObject("operator", p.Operator, "matched", p.Matched)
		if p.NotRun {
			o.Set("notRun", true)
		}
		if p.Err != nil {
			o.Set("error", errorText(p.Err))
		}
		o.Set("predicate", jsonValue(p.Predicate))
		if p.Failure != nil && !p.Matched {
			o.Set("failure", p.Failure.JSON())
		}
		if len(p.Children) > 0 {
			o.Set("predicates", predicatesJSON(p.Children))
		}
		out[i] = o
	}
	return out
}

func errorText(err error) string {
	var me *Error
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

// jsonValue turns a JavaScript value into a config value: undefined is dropped from objects
// and is null in arrays (as JSON.stringify does).
func jsonValue(v any) config.Value {
	switch t := v.(type) {
	case jsvalue.Undefined:
		return nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = jsonValue(e)
		}
		return out
	case *config.Object:
		if t == nil {
			return nil
		}
		out := &config.Object{Members: make([]config.Member, 0, len(t.Members))}
		for _, m := range t.Members {
			if !jsvalue.IsUndefined(m.Value) {
				out.Members = append(out.Members, config.Member{Key: m.Key, Value: jsonValue(m.Value)})
			}
		}
		return out
	}
	return v
}

// shortJSON renders v as compact JSON, cut to 80 bytes.
func shortJSON(v any) string {
	s := string(config.MarshalJSON(jsonValue(v), 0))
	if len(s) > 80 {
		cut := 77
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// RequestFromJSON turns a request in Mountebank's JSON shape, as recorded requests show it,
// into the request predicates see. For http, absent fields default to GET, "/", no query,
// headers or body; a query string in path is parsed when query is absent; a body that is not
// a string is the JSON text of it; form is parsed from a url-encoded body when not given. For
// tcp, requestFrom, ip and data default to "".
func RequestFromJSON(v config.Value, tcp bool) (*config.Object, error) {
	in, ok := v.(*config.Object)
	if !ok || in == nil {
		return nil, errors.New("the request must be a JSON object")
	}
	str := func(key, def string) string {
		switch t := mustValue(in, key).(type) {
		case nil, jsvalue.Undefined:
			return def
		case string:
			return t
		default:
			return jsString(t)
		}
	}
	if tcp {
		return config.NewObject("requestFrom", str("requestFrom", ""), "ip", str("ip", ""), "data", str("data", "")), nil
	}
	path := str("path", "/")
	query := asObject(mustValue(in, "query"))
	if i := strings.IndexByte(path, '?'); i >= 0 {
		if query == nil {
			query = request.GroupQuery(request.ParseQuery(nil, path[i+1:]))
		}
		path = path[:i]
	}
	if query == nil {
		query = &config.Object{}
	}
	headers := asObject(mustValue(in, "headers"))
	if headers == nil {
		headers = &config.Object{}
	}
	body := ""
	switch t := mustValue(in, "body").(type) {
	case nil, jsvalue.Undefined:
	case string:
		body = t
	default:
		body = string(config.MarshalJSON(t, 0))
	}
	o := config.NewObject("requestFrom", str("requestFrom", ""), "method", str("method", "GET"), "path", path,
		"query", query, "headers", headers, "body", body, "ip", str("ip", ""))
	if form := asObject(mustValue(in, "form")); form != nil {
		o.Set("form", form)
	} else if body != "" && request.IsURLEncodedForm(headerValue(headers, "content-type")) {
		o.Set("form", request.GroupQuery(request.ParseQuery(nil, body)))
	}
	return o, nil
}

func mustValue(o *config.Object, key string) any {
	if v, ok := o.Get(key); ok {
		return v
	}
	return jsvalue.Undef
}

// headerValue is headersMap.get: the value of the first header named name in any case.
func headerValue(headers *config.Object, name string) string {
	for _, m := range headers.Members {
		if strings.EqualFold(m.Key, name) {
			if s, ok := m.Value.(string); ok {
				return s
			}
			return jsString(m.Value)
		}
	}
	return ""
}
