package hbs

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mockd/mockd/internal/config"
)

// SafeString is text a helper made that {{ }} does not escape.
type SafeString string

// Multi is a value that can be one or many (a query parameter, a header): it renders as its
// first value and can be indexed (things.1, things.[-1], things.first, things.last), as
// WireMock's ListOrSingle.
type Multi []string

// getter is a value whose members are looked up by name, built on demand (the request model).
type getter interface {
	member(key string) (any, bool)
}

// stringer is a value with its own text (dates).
type stringer interface {
	text() string
}

// maxOutput bounds what one render may write.
const maxOutput = 64 << 20

var errTooLarge = errors.New("template output exceeds 64 MiB")

// maxSteps bounds the work of one render: each list of nodes it renders (a template's, or a
// block's body once for each time it is rendered: every item of an each) counts one step and
// one for each of its nodes. Output alone did not bound it: an each nested in another, each
// over 100,000 items (range, or a list in the request's body) with nothing to write, rendered
// 10^10 empty bodies, a core busy for hours after its client had gone and its imposter was
// deleted. 4M steps take about two seconds; a body of 10 nodes for each of 100,000 items takes
// 1.1M. A variable so tests can lower it.
var maxSteps = 4 << 20

var errTooLong = errors.New("template takes more than 4194304 steps (each rendering of a block's body, and each node in it)")

type state struct {
	out  []byte
	vars map[string]any // variables set by assign, val and parseJson
	root any
	// steps counts the work of the render (see maxSteps).
	steps int
	top   frame   // the template's own context: root
	free  []*call // calls done, for the next ones (see newCall)
}

// states are render states, reused from one Render to the next with their calls.
var states = sync.Pool{New: func() any { return new(state) }}

// frame is one context level: the value {{this}} names, block parameters and @data.
type frame struct {
	ctx    any
	parent *frame
	names  []string // block parameter names
	values []any
	index  int
	key    any
	first  bool
	last   bool
	iter   bool // index, key, first and last are set
}

// requestJSON is the request's body parsed (request.JSON: once a request, shared with the
// predicates that read it) when text is that body and parses; else false.
func (st *state) requestJSON(text string) (any, bool) {
	m, isModel := st.root.(*Model)
	if !isModel || m.Request == nil || text == "" || text != m.Request.Body || m.Request.BodyMissing {
		return nil, false
	}
	return m.Request.JSON()
}

// Render appends the template rendered with root (the model its names are looked up in) to dst.
func (t *Template) Render(dst []byte, root any) ([]byte, error) {
	if t.isText {
		return append(dst, t.static...), nil
	}
	st := states.Get().(*state)
	out, err := st.render(t, dst, root)
	states.Put(st)
	return out, err
}

// Renderer keeps what renders reuse (the render state, the helper calls) for a caller that
// keeps it with its own pooled work, sparing Render's trip through the pool of states. The zero
// value is ready; it is not safe for concurrent use, and keeps nothing of a render past it.
type Renderer struct{ st state }

// Render is t.Render with r's state.
func (r *Renderer) Render(t *Template, dst []byte, root any) ([]byte, error) {
	if t.isText {
		return append(dst, t.static...), nil
	}
	return r.st.render(t, dst, root)
}

func (st *state) render(t *Template, dst []byte, root any) ([]byte, error) {
	if t.plan != nil && fastPaths {
		if m, isModel := root.(*Model); isModel && m.Request != nil {
			return st.runPlan(t.plan, dst, m)
		}
	}
	st.out, st.root, st.top, st.steps = dst, root, frame{ctx: root}, 0
	err := st.nodes(t.nodes, &st.top)
	out := st.out
	clear(st.vars) // what a render holds is not kept past it
	st.out, st.root, st.top = nil, nil, frame{}
	return out, err
}

func (st *state) nodes(list []node, f *frame) error {
	if st.steps += 1 + len(list); st.steps > maxSteps {
		return errTooLong
	}
	for _, n := range list {
		switch n := n.(type) {
		case *textNode:
			st.out = append(st.out, n.text...)
		case *mustacheNode:
			if st.field(n, f) {
				break
			}
			v, err := st.eval(n.expr, f, nil)
			if err != nil {
				return err
			}
			st.write(v, n.escape)
		case *blockNode:
			if err := st.block(n, f); err != nil {
				return err
			}
		}
		if len(st.out) > maxOutput {
			return errTooLarge
		}
	}
	return nil
}

func (st *state) write(v any, escape bool) {
	if s, ok := v.(SafeString); ok {
		st.out = append(st.out, s...)
		return
	}
	switch v.(type) {
	case *config.Object, map[string]any:
		st.out = append(st.out, Text(v)...)
		return
	}
	if escape {
		st.out = appendEscaped(st.out, Text(v))
	} else {
		st.out = append(st.out, Text(v)...)
	}
}

// appendEscaped escapes s as Handlebars does for {{ }}.
func appendEscaped(dst []byte, s string) []byte {
	i := 0
	if n := len(dst); len(s) <= 16 && cap(dst)-n >= len(s) {
		// A short value with room for it (a request field into the answer's buffer): its
		// bytes are copied as they are checked, without a call to copy a few of them.
		d := dst[n : n+len(s)]
		for i < len(d) && !escaped[s[i]] {
			d[i] = s[i]
			i++
		}
		dst = dst[:n+i]
	} else {
		// The text up to the first byte to escape goes in one copy.
		for i < len(s) && !escaped[s[i]] {
			i++
		}
		dst = append(dst, s[:i]...)
	}
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case '\'':
			dst = append(dst, "&#x27;"...)
		case '`':
			dst = append(dst, "&#x60;"...)
		case '=':
			dst = append(dst, "&#x3D;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// escaped holds the bytes appendEscaped replaces.
var escaped = [256]bool{'&': true, '<': true, '>': true, '"': true, '\'': true, '`': true, '=': true}

// block renders a block: a helper's, or a value's (truthy: the body with it as context, each
// item of a list; falsy: the inverse).
func (st *state) block(b *blockNode, f *frame) error {
	if b.expr.helper != nil {
		// A block helper writes its body itself; what it returns (trim, base64…) is written as
		// it is.
		v, err := st.eval(b.expr, f, b)
		if err == nil && v != nil {
			st.write(v, false)
		}
		return err
	}
	v, err := st.operand(b.expr.head, f)
	if err != nil {
		return err
	}
	if !Truthy(v) {
		return st.nodes(b.inverse, f)
	}
	if list, ok := v.([]any); ok {
		return st.each(list, b, f)
	}
	return st.nodes(b.body, st.child(f, v, b, v))
}

// child is a new frame with ctx, binding the block's first parameter to param.
func (st *state) child(f *frame, ctx any, b *blockNode, params ...any) *frame {
	c := &frame{ctx: ctx, parent: f}
	if b != nil && len(b.params) > 0 {
		c.names = b.params
		c.values = params
	}
	return c
}

func (st *state) each(list []any, b *blockNode, f *frame) error {
	for i, item := range list {
		c := st.child(f, item, b, item, float64(i))
		c.iter, c.index, c.key, c.first, c.last = true, i, float64(i), i == 0, i == len(list)-1
		if err := st.nodes(b.body, c); err != nil {
			return err
		}
	}
	return nil
}

// eval evaluates an expression: a helper call (with blk for a block helper) or a lookup.
func (st *state) eval(e *sexpr, f *frame, blk *blockNode) (any, error) {
	if e.helper != nil {
		if e.head.path != nil && len(e.params) == 0 && len(e.hash) == 0 && blk == nil {
			// {{name}}: a block parameter of that name wins over a helper without arguments.
			if v, ok := st.blockParam(e.name, f); ok {
				return v, nil
			}
		}
		c := st.newCall(f, blk, e.name)
		defer st.done(c)
		for _, p := range e.params {
			if v, ok := st.fieldValue(p, f); ok {
				c.args = append(c.args, v)
				continue
			}
			v, err := st.operand(p, f)
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, v)
		}
		if len(e.hash) > 0 {
			if c.hash == nil {
				c.hash = make(map[string]any, len(e.hash))
			}
			for _, h := range e.hash {
				v, err := st.operand(h.val, f)
				if err != nil {
					return nil, err
				}
				c.hash[h.key] = v
			}
		}
		return e.helper(c)
	}
	return st.operand(e.head, f)
}

// newCall is a call of a helper, one done before if there is one: helpers keep neither their
// call nor its args or hash past their answer (array and flatten copy the args).
func (st *state) newCall(f *frame, blk *blockNode, name string) *call {
	var c *call
	if n := len(st.free); n > 0 {
		c, st.free = st.free[n-1], st.free[:n-1]
	} else {
		c = &call{st: st}
	}
	c.f, c.blk, c.name = f, blk, name
	return c
}

// done keeps c for the next call, emptied.
func (st *state) done(c *call) {
	clear(c.args)
	c.args = c.args[:0]
	clear(c.hash)
	c.f, c.blk = nil, nil
	st.free = append(st.free, c)
}

func (st *state) operand(o *operand, f *frame) (any, error) {
	switch {
	case o.sub != nil:
		return st.eval(o.sub, f, nil)
	case o.path != nil:
		return st.lookup(o.path, f), nil
	}
	return o.lit, nil
}

// lookup resolves a path. A first segment not found in the current context is looked up in
// the enclosing contexts and then in the template's variables, as handlebars.java (and so
// WireMock) does.
func (st *state) lookup(p *path, f *frame) any {
	var v any
	segs := p.segments
	switch {
	case p.data:
		if len(segs) == 0 {
			return nil
		}
		v = st.data(segs[0], f)
		segs = segs[1:]
	case p.up > 0:
		for i := 0; i < p.up && f.parent != nil; i++ {
			f = f.parent
		}
		v = f.ctx
	case p.this:
		v = f.ctx
	default:
		var ok bool
		if v, ok = st.lookupFirst(segs[0], f); !ok {
			return nil
		}
		segs = segs[1:]
	}
	for _, s := range segs {
		var ok bool
		if v, ok = member(v, s); !ok {
			return nil
		}
	}
	return v
}

func (st *state) blockParam(name string, f *frame) (any, bool) {
	for c := f; c != nil; c = c.parent {
		for i, n := range c.names {
			if n == name && i < len(c.values) {
				return c.values[i], true
			}
		}
	}
	return nil, false
}

func (st *state) lookupFirst(name string, f *frame) (any, bool) {
	if v, ok := st.blockParam(name, f); ok {
		return v, true
	}
	for c := f; c != nil; c = c.parent {
		if v, ok := member(c.ctx, name); ok {
			return v, true
		}
	}
	if v, ok := st.vars[name]; ok {
		return v, true
	}
	return nil, false
}

func (st *state) data(name string, f *frame) any {
	if name == "root" {
		return st.root
	}
	for c := f; c != nil; c = c.parent {
		if !c.iter {
			continue
		}
		switch name {
		case "index":
			return float64(c.index)
		case "key":
			return c.key
		case "first":
			return c.first
		case "last":
			return c.last
		}
	}
	return nil
}

// member returns the member key of v.
func member(v any, key string) (any, bool) {
	switch t := v.(type) {
	case getter:
		return t.member(key)
	case *config.Object:
		if t == nil {
			return nil, false
		}
		return t.Get(key)
	case map[string]any:
		x, ok := t[key]
		return x, ok
	case []any:
		if i, ok := listIndex(key, len(t)); ok {
			return t[i], true
		}
		switch key {
		case "size", "length":
			return float64(len(t)), true
		}
	case Multi:
		if i, ok := listIndex(key, len(t)); ok {
			return t[i], true
		}
		switch key {
		case "size", "length":
			return float64(len(t)), true
		}
	}
	return nil, false
}

// listIndex reads an index (negative from the end, first, last) of a list of n.
func listIndex(key string, n int) (int, bool) {
	switch key {
	case "first":
		return 0, n > 0
	case "last":
		return n - 1, n > 0
	}
	i, err := strconv.Atoi(key)
	if err != nil {
		return 0, false
	}
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i < n
}

// Truthy reports whether v counts as true in {{#if}}: not false, nil, "", 0 or an empty list.
func Truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case SafeString:
		return t != ""
	case float64:
		return t != 0
	case []any:
		return len(t) > 0
	case Multi:
		return len(t) > 0 && t[0] != ""
	}
	return true
}

// Text renders v as a template shows it.
func Text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case SafeString:
		return string(t)
	case float64:
		return formatNumber(t)
	case bool:
		return strconv.FormatBool(t)
	case Multi:
		if len(t) == 0 {
			return ""
		}
		return t[0]
	case []any:
		// As a Java list prints.
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = Text(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *config.Object:
		return string(config.MarshalJSON(t, 0))
	case map[string]any:
		return string(config.MarshalJSON(fromPlain(t), 0))
	case stringer:
		return t.text()
	case fmt.Stringer:
		return t.String()
	}
	return fmt.Sprint(v)
}

func formatNumber(f float64) string {
	if f == float64(int64(f)) && f < 1e18 && f > -1e18 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// fromPlain converts decoded JSON (maps with sorted keys) to a config value.
func fromPlain(v any) config.Value {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := &config.Object{Members: make([]config.Member, 0, len(keys))}
		for _, k := range keys { // unique: no Set, which scans the members before
			o.Members = append(o.Members, config.Member{Key: k, Value: fromPlain(t[k])})
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromPlain(e)
		}
		return out
	case Multi:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return out
	case SafeString:
		return string(t)
	case float64, string, bool, nil:
		return t
	}
	return Text(v)
}

// call is one helper invocation.
type call struct {
	st   *state
	f    *frame
	name string
	args []any
	hash map[string]any
	blk  *blockNode // nil for an inline call
}

type helperFunc func(c *call) (any, error)

func (c *call) arg(i int) any {
	if i < len(c.args) {
		return c.args[i]
	}
	return nil
}

func (c *call) str(i int) string { return Text(c.arg(i)) }

func (c *call) opt(key string) (any, bool) {
	v, ok := c.hash[key]
	return v, ok
}

func (c *call) optStr(key, def string) string {
	if v, ok := c.hash[key]; ok && v != nil {
		return Text(v)
	}
	return def
}

// fn renders the block's body with ctx as its context.
func (c *call) fn(ctx any, params ...any) error {
	if c.blk == nil {
		return nil
	}
	return c.st.nodes(c.blk.body, c.st.child(c.f, ctx, c.blk, params...))
}

// inverse renders the block's {{else}} part.
func (c *call) inverse() error {
	if c.blk == nil {
		return nil
	}
	return c.st.nodes(c.blk.inverse, c.f)
}

// capture renders the block's body in the current context and returns it as text.
func (c *call) capture() (string, error) {
	if c.blk == nil {
		return "", nil
	}
	mark := len(c.st.out)
	err := c.st.nodes(c.blk.body, c.st.child(c.f, c.f.ctx, nil))
	s := string(c.st.out[mark:])
	c.st.out = c.st.out[:mark]
	return s, err
}

// input is the helper's first argument or, for a block call without arguments, its rendered
// body (as trim, base64 and formatJson take either).
func (c *call) input() (string, error) {
	if len(c.args) == 0 && c.blk != nil {
		return c.capture()
	}
	return c.str(0), nil
}

// cond answers a condition: a block renders its body or else part; inline, the boolean.
func (c *call) cond(ok bool) (any, error) {
	if c.blk == nil {
		return ok, nil
	}
	if ok {
		return nil, c.fn(c.f.ctx)
	}
	return nil, c.inverse()
}

func (c *call) setVar(name string, v any) {
	if c.st.vars == nil {
		c.st.vars = map[string]any{}
	}
	c.st.vars[name] = v
}
