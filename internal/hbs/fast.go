package hbs

import (
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/jsonscan"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Fast paths for what most templates name: {{request.…}} fields written straight from the
// request, and jsonPath of the body's $.a.b read from its text. Each answers exactly what the
// general route (the model's values looked up, boxed, then written) answers, or defers to it
// (TestFastPaths, FuzzFastPaths compare the two).

// fastPaths is false only in tests comparing the fast paths with the general route.
var fastPaths = true

// reqField is a mustache of the request model render writes without building the model's
// values: request.method, .path, .body, .path.[n], .query.name and .headers.name.
type reqField struct {
	// 0: not such a mustache; 'm'ethod, 'p'ath, 'b'ody, path 'i'ndex, 'q'uery, 'h'eader, or
	// 'j': {{jsonPath request.body '$.a.b'}}, the selection of a path of names from the body
	kind byte
	arg  string
	path *jsonPath // 'j': the path compiled
	// 'i': arg as a segment's index when it is one from the start (0, 1, +2, 03), else -1;
	// 'h': 1 when arg is a name request.PlainHeaderName accepts, else 0
	idx int
}

// requestField is the reqField of the expression of a mustache, if it is one.
func requestField(e *sexpr) reqField {
	if e.helper != nil && e.name == "jsonPath" && len(e.params) == 2 && len(e.hash) == 0 &&
		e.params[0].field.kind == 'b' && e.params[1].path == nil && e.params[1].sub == nil {
		// The helper's text is the body, its path a literal of names only (scanBody's).
		if lit, isString := e.params[1].lit.(string); isString {
			if p, err := compileJSONPath(lit); err == nil && p.names != nil {
				return reqField{kind: 'j', path: p}
			}
		}
		return reqField{}
	}
	if e.helper != nil || len(e.params) > 0 || len(e.hash) > 0 || e.head == nil || e.head.path == nil {
		return reqField{}
	}
	return pathField(e.head.path)
}

// pathField is the reqField p names, if it names one.
func pathField(p *path) reqField {
	if p.data || p.this || p.up > 0 || len(p.segments) < 2 || p.segments[0] != "request" {
		return reqField{}
	}
	s := p.segments[1:]
	switch {
	case len(s) == 1 && s[0] == "method":
		return reqField{kind: 'm'}
	case len(s) == 1 && s[0] == "path":
		return reqField{kind: 'p'}
	case len(s) == 1 && s[0] == "body":
		return reqField{kind: 'b'}
	case len(s) == 2 && s[0] == "path":
		idx, err := strconv.Atoi(s[1])
		if err != nil || idx < 0 {
			idx = -1
		}
		return reqField{kind: 'i', arg: s[1], idx: idx}
	case len(s) == 2 && s[0] == "query":
		return reqField{kind: 'q', arg: s[1]}
	case len(s) == 2 && s[0] == "headers":
		plain := 0
		if request.PlainHeaderName(s[1]) {
			plain = 1
		}
		return reqField{kind: 'h', arg: s[1], idx: plain}
	}
	return reqField{}
}

// field writes n's request field when n is one and f is the template's top frame, where
// "request" can name nothing but the model's request (no block parameter, no enclosing
// context): the text lookup and write would give. It reports false where they must run.
func (st *state) field(n *mustacheNode, f *frame) bool {
	if n.field.kind == 0 || f != &st.top || !fastPaths {
		return false
	}
	m, isModel := st.root.(*Model)
	if !isModel || m.Request == nil {
		return false
	}
	s, ok := fieldText(&n.field, m.Request)
	if !ok {
		return false
	}
	if n.escape {
		st.out = appendEscaped(st.out, s)
	} else {
		st.out = append(st.out, s...)
	}
	return true
}

// fieldText is the text of the request field f of r, as lookup and write give it for a
// mustache at the template's top level; false where they must run (a jsonPath selection
// scanBody leaves to the parse).
func fieldText(f *reqField, r *request.Request) (string, bool) {
	switch f.kind {
	case 'm':
		return r.Method, true
	case 'p':
		return r.Path, true
	case 'b':
		return r.Body, true
	case 'i':
		if f.idx >= 0 {
			return pathSegmentAt(r.Path, f.idx), true
		}
		s, _ := pathSegment(r.Path, f.arg)
		return s, true
	case 'q':
		for _, kv := range r.Query {
			if kv.Name == f.arg {
				return kv.Value, true
			}
		}
		return "", true
	case 'h':
		if f.idx > 0 { // the name is plain (pathField)
			s, _ := r.PlainHeader(f.arg)
			return s, true
		}
		s, _ := r.Header(f.arg)
		return s, true
	case 'j':
		// What jsonPath answers (scanBody) written as write writes it, without boxing it;
		// a selection scanBody leaves to the parse goes the general route.
		if r.Body == "" || r.BodyMissing {
			return "", false
		}
		val, kind, ok := scanRequestBody(r.Body, f.path)
		switch {
		case !ok:
			return "", false
		case kind == 'n':
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return "", false
			}
			return formatNumber(f), true
		case kind == 'm':
			return "", true
		}
		return val, true // a string's text, or true or false
	}
	return "", false
}

// step is one step of a template's plan: text, then (unless m is nil) a mustache of a
// request field.
type step struct {
	text string
	m    *mustacheNode
}

// planOf is the plan of a template of nodes, nil unless each is text or a mustache of a
// request field (reqField): at the top level, such a template reads nothing but the request.
func planOf(nodes []node) []step {
	plan := make([]step, 0, len(nodes))
	for _, n := range nodes {
		switch n := n.(type) {
		case *textNode:
			plan = append(plan, step{text: n.text})
		case *mustacheNode:
			if n.field.kind == 0 {
				return nil
			}
			if last := len(plan) - 1; last >= 0 && plan[last].m == nil {
				plan[last].m = n // the text before it
			} else {
				plan = append(plan, step{m: n})
			}
		default:
			return nil
		}
	}
	return plan
}

// runPlan renders a template's plan for m (whose Request is set) as nodes renders its nodes:
// text and request fields written in one loop; from the first field fieldText cannot give (a
// jsonPath the scan leaves to the parse) on, runPlanGeneral goes on. (The loop holds nothing
// else: what more it held was stored and loaded around each of its calls.)
func (st *state) runPlan(plan []step, dst []byte, m *Model) ([]byte, error) {
	r := m.Request
	out := dst
	for i := range plan {
		s := &plan[i]
		out = append(out, s.text...)
		if s.m == nil {
			continue
		}
		v, ok := fieldText(&s.m.field, r)
		if !ok {
			return st.runPlanGeneral(plan, i, out, m)
		}
		if s.m.escape {
			// appendEscaped's short case, without its call: a field's few bytes copied as
			// they are checked into the room the buffer has; the rest (a byte to escape, a
			// long value, no room) by appendEscaped.
			j := 0
			if n := len(out); len(v) <= 16 && cap(out)-n >= len(v) {
				d := out[n : n+len(v)]
				for j < len(d) && !escaped[v[j]] {
					d[j] = v[j]
					j++
				}
				out = out[:n+j]
			}
			if j < len(v) {
				out = appendEscaped(out, v[j:])
			}
		} else {
			out = append(out, v...)
		}
		if len(out) > maxOutput {
			return out, errTooLarge
		}
	}
	return out, nil
}

// runPlanGeneral is runPlan from plan[i] on, whose text out ends with and whose field
// fieldText could not give: that field, and any other fieldText cannot give, evaluated by
// the general route (planGeneral), the state then left as render leaves it.
func (st *state) runPlanGeneral(plan []step, i int, out []byte, m *Model) ([]byte, error) {
	r := m.Request
	var err error
	for first := true; i < len(plan); i, first = i+1, false {
		s := &plan[i]
		var v string
		ok := false
		if !first {
			out = append(out, s.text...)
			if s.m == nil {
				continue
			}
			v, ok = fieldText(&s.m.field, r)
		}
		if !ok {
			if out, err = st.planGeneral(s.m, out, m); err != nil {
				break
			}
		} else if s.m.escape {
			out = appendEscaped(out, v)
		} else {
			out = append(out, v...)
		}
		if len(out) > maxOutput {
			err = errTooLarge
			break
		}
	}
	// As render leaves the state.
	clear(st.vars)
	st.out, st.root, st.top = nil, nil, frame{}
	return out, err
}

// planGeneral writes n, a step of runPlan for m, by the general route: evaluated from the
// template's top frame and written, after out.
func (st *state) planGeneral(n *mustacheNode, out []byte, m *Model) ([]byte, error) {
	if st.root != m {
		st.root, st.top = m, frame{ctx: m}
	}
	st.out = out
	v, err := st.eval(n.expr, &st.top, nil)
	if err == nil {
		st.write(v, n.escape)
	}
	return st.out, err
}

// fieldValue is the value of o, a helper's argument, when it is request.method or
// request.body looked up from the template's top frame (as in field): the text lookup
// would give, without walking the model. It reports false where lookup must run.
func (st *state) fieldValue(o *operand, f *frame) (any, bool) {
	if (o.field.kind != 'b' && o.field.kind != 'm') || f != &st.top || !fastPaths {
		return nil, false
	}
	m, isModel := st.root.(*Model)
	if !isModel || m.Request == nil {
		return nil, false
	}
	if o.field.kind == 'b' {
		return m.Request.Body, true
	}
	return m.Request.Method, true
}

// pathSegmentAt is pathSegment's segment for an index from the start (listIndex of a key that
// is a number not below 0), or "" when the path has no such segment.
//
// One pass over the path's bytes up to the segment's end: a path's segments are a few bytes,
// which an IndexByte call for each '/' cost more than.
func pathSegmentAt(path string, i int) string {
	trimmed := trimSlashes(path)
	start := 0
	for k := 0; k < len(trimmed); k++ {
		if trimmed[k] == '/' {
			if i == 0 {
				return trimmed[start:k]
			}
			i--
			start = k + 1
		}
	}
	if i > 0 {
		return ""
	}
	return trimmed[start:]
}

// trimSlashes is strings.Trim(path, "/").
func trimSlashes(path string) string {
	for len(path) > 0 && path[0] == '/' {
		path = path[1:]
	}
	for len(path) > 0 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	return path
}

// pathSegment is segments(path)[listIndex(key)] without splitting the path.
func pathSegment(path, key string) (string, bool) {
	trimmed := strings.Trim(path, "/")
	n := 0
	if trimmed != "" {
		n = strings.Count(trimmed, "/") + 1
	}
	i, ok := listIndex(key, n)
	if !ok {
		return "", false
	}
	for ; i > 0; i-- {
		trimmed = trimmed[strings.IndexByte(trimmed, '/')+1:]
	}
	if j := strings.IndexByte(trimmed, '/'); j >= 0 {
		trimmed = trimmed[:j]
	}
	return trimmed, true
}

// scanBody is what path (of names: $.a.b) selects from text when text is the request's body
// and the selection is a string, number or boolean read straight from the text (jsonscan.Path);
// missing is set when the body has no such value (or null), for which the helper answers its
// default. ok is false where the full parse must decide (text is not the body, not plainly
// JSON, or the value is an object or array, which the helper gives with sorted keys).
func (st *state) scanBody(text string, path *jsonPath) (v any, missing, ok bool) {
	val, kind, ok := st.scanValue(text, path)
	if !ok {
		return nil, false, false
	}
	switch kind {
	case 'm':
		return nil, true, true
	case 's':
		return val, false, true
	case 'b':
		return val == "true", false, true
	}
	f, err := strconv.ParseFloat(val, 64) // at most 15 digits, no exponent: exact
	return f, false, err == nil
}

// scanValue is scanBody's selection as text, not boxed: kind 'm' for missing (or null), 's'
// for a string (val its text), 'b' for a boolean (val "true" or "false"), 'n' for a number
// (val its text); ok as scanBody's.
func (st *state) scanValue(text string, path *jsonPath) (val string, kind byte, ok bool) {
	if path.names == nil || !fastPaths {
		return "", 0, false
	}
	m, isModel := st.root.(*Model)
	if !isModel || m.Request == nil || text == "" || text != m.Request.Body || m.Request.BodyMissing {
		return "", 0, false
	}
	return scanRequestBody(text, path)
}

// scanRequestBody is scanValue's selection from text, the request's body (not empty, not
// missing).
func scanRequestBody(text string, path *jsonPath) (val string, kind byte, ok bool) {
	if path.names == nil {
		return "", 0, false
	}
	start, end, res := jsonscan.Path(text, path.names, false)
	switch res {
	case jsonscan.Missing:
		return "", 'm', true
	case jsonscan.Unsure:
		return "", 0, false
	}
	val = text[start:end]
	switch c0 := val[0]; {
	case c0 == '"':
		s := val[1 : len(val)-1]
		return s, 's', jsvalue.ValidString(s) // no escapes (jsonscan): the text is the string
	case c0 == 't':
		return "true", 'b', true
	case c0 == 'f':
		return "false", 'b', true
	case c0 == 'n':
		return "", 'm', true
	case c0 == '-' || '0' <= c0 && c0 <= '9':
		return val, 'n', true
	}
	return "", 0, false
}
