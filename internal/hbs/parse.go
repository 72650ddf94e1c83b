// Package hbs renders response templates in Handlebars syntax, with the request model and the
// helpers WireMock offers (request.path.[1], jsonPath, now, randomValue, math, eq, each…), so
// WireMock stubs keep working in mockd. Templates are parsed once into a tree; rendering walks it
// with no reflection.
//
// mockd has its own implementation because the Go Handlebars library (aymerick/raymond, and its
// fork mailgun/raymond, last released in 2022) cannot parse WireMock's documented numeric path
// segments (request.query.things.1), panics on negative indexes (things.[-1]), iterates maps in
// random order, and resolves every name by reflection.
package hbs

import (
	"fmt"
	"strconv"
	"strings"
)

// node is one piece of a parsed template.
type node interface{}

type textNode struct{ text string }

type mustacheNode struct {
	expr   *sexpr
	escape bool
	field  reqField // a request field written directly (see state.field)
}

type blockNode struct {
	expr    *sexpr
	params  []string // block parameters: as |a b|
	body    []node
	inverse []node // the {{else}} part; an {{else if …}} chain is a single nested block
}

// sexpr is a call or a lookup: a path or literal, with its parameters and hash.
type sexpr struct {
	head   *operand
	params []*operand
	hash   []hashPair
	// helper is the helper head names, when it names one.
	helper helperFunc
	name   string
}

type hashPair struct {
	key string
	val *operand
}

// operand is a path, a literal or a subexpression.
type operand struct {
	path  *path
	lit   any // literal value (when path and sub are nil)
	sub   *sexpr
	field reqField // the request field path names, if any (see state.fieldValue)
}

// path is a lookup: up levels of `..`, data (@name), and the segments.
type path struct {
	up       int
	data     bool
	this     bool // starts with this or .
	segments []string
	text     string
}

// Template is a parsed template. It is immutable and safe for concurrent use.
type Template struct {
	nodes  []node
	static string // the text of a template without any tag
	isText bool
	// plan is the template as a flat list of steps when each node is text or a request field
	// written from the request (reqField): render runs it in one loop (runPlan), nil otherwise.
	plan []step
}

// Error is a template error with its position.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg) }

// token kinds of the flat list the parser builds a tree from.
const (
	tkText = iota
	tkMustache
	tkOpen
	tkElse
	tkClose
)

type token struct {
	kind       int
	text       string // text, or the closing name
	expr       *sexpr
	escape     bool
	params     []string
	stripLeft  bool
	stripRight bool
	pos        int
}

// Parse parses src. An unknown helper, an unclosed tag or a mismatched block is an error with
// the line and column where it stands.
func Parse(src string) (*Template, error) {
	p := &parser{src: src}
	toks, err := p.tokens()
	if err != nil {
		return nil, err
	}
	stripWhitespace(toks)
	nodes, rest, err := p.build(toks, "", 0)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, p.errorAt(rest[0].pos, "unexpected {{else}} or {{/%s}}", rest[0].text)
	}
	t := &Template{nodes: nodes}
	if len(nodes) == 0 {
		t.isText = true
	} else if tn, ok := nodes[0].(*textNode); ok && len(nodes) == 1 {
		t.isText, t.static = true, tn.text
	} else {
		t.plan = planOf(nodes)
	}
	return t, nil
}

// IsStatic reports whether the template has no tag (it renders to its own text, with \{{
// escapes resolved).
func (t *Template) IsStatic() bool { return t.isText }

type parser struct {
	src string
}

func (p *parser) errorAt(pos int, format string, args ...any) *Error {
	line, col := 1, 1
	for i := 0; i < pos && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// tokens splits the source into text and tags.
func (p *parser) tokens() ([]token, error) {
	var toks []token
	src := p.src
	var text strings.Builder
	textStart := 0
	flush := func() {
		if text.Len() > 0 {
			toks = append(toks, token{kind: tkText, text: text.String(), pos: textStart})
			text.Reset()
		}
	}
	i := 0
	for i < len(src) {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			if text.Len() == 0 {
				textStart = i
			}
			text.WriteString(src[i:])
			break
		}
		j += i
		if text.Len() == 0 {
			textStart = i
		}
		// \{{ is a literal {{ (and \\{{ a backslash before a tag).
		if j > 0 && src[j-1] == '\\' && !(j > 1 && src[j-2] == '\\') {
			text.WriteString(src[i : j-1])
			end := strings.Index(src[j+2:], "{{")
			if end < 0 {
				text.WriteString(src[j:])
				i = len(src)
			} else {
				k := j + 2 + end // the next {{
				if src[k-1] == '\\' && k-1 >= j+2 {
					k-- // its backslash is its own: the next round reads it
				}
				text.WriteString(src[j:k])
				i = k
			}
			continue
		}
		if j > 1 && src[j-1] == '\\' && src[j-2] == '\\' {
			text.WriteString(src[i : j-1])
		} else {
			text.WriteString(src[i:j])
		}
		flush()
		tok, next, err := p.tag(j)
		if err != nil {
			return nil, err
		}
		if tok != nil {
			toks = append(toks, *tok)
		}
		i = next
	}
	flush()
	return toks, nil
}

// tag reads the tag starting at pos ("{{"), returning the token (nil for a comment) and where
// the text after it starts.
func (p *parser) tag(pos int) (*token, int, error) {
	src := p.src
	i := pos + 2
	if strings.HasPrefix(src[i:], "!--") || strings.HasPrefix(src[i:], "~!--") {
		end := strings.Index(src[i:], "--}}")
		if end < 0 {
			end = strings.Index(src[i:], "--~}}")
			if end < 0 {
				return nil, 0, p.errorAt(pos, "unclosed comment")
			}
			return nil, i + end + 5, nil
		}
		return nil, i + end + 4, nil
	}
	triple := strings.HasPrefix(src[i:], "{")
	if triple {
		i++
	}
	tok := &token{pos: pos, escape: !triple}
	if i < len(src) && src[i] == '~' {
		tok.stripLeft = true
		i++
	}
	closer := "}}"
	if triple {
		closer = "}}}"
	}
	end := findClose(src, i, closer)
	if end < 0 {
		return nil, 0, p.errorAt(pos, "unclosed expression: no %q", closer)
	}
	inner := src[i:end]
	next := end + len(closer)
	if strings.HasSuffix(inner, "~") {
		tok.stripRight = true
		inner = inner[:len(inner)-1]
	}
	trimmed := strings.TrimSpace(inner)
	if strings.HasPrefix(trimmed, "!") {
		return nil, next, nil
	}
	var text string // the expression to parse
	block := false  // text ends with block parameters
	switch {
	case triple:
		tok.kind, text = tkMustache, trimmed
	case trimmed == "else" || trimmed == "^":
		tok.kind = tkElse
	case strings.HasPrefix(trimmed, "else ") || strings.HasPrefix(trimmed, "else\t") || strings.HasPrefix(trimmed, "else\n"):
		tok.kind, text, block = tkElse, trimmed[4:], true
	case strings.HasPrefix(trimmed, "#>") || strings.HasPrefix(trimmed, "#*"):
		return nil, 0, p.errorAt(pos, "partial blocks and decorators are not supported")
	case strings.HasPrefix(trimmed, "#"):
		tok.kind, text, block = tkOpen, trimmed[1:], true
	case strings.HasPrefix(trimmed, "/"):
		tok.kind, tok.text = tkClose, strings.TrimSpace(trimmed[1:])
		return tok, next, nil
	case strings.HasPrefix(trimmed, "^"):
		return nil, 0, p.errorAt(pos, "inverse sections ({{^name}}) are not supported: use {{#unless name}}")
	case strings.HasPrefix(trimmed, ">"):
		return nil, 0, p.errorAt(pos, "partials are not supported")
	case strings.HasPrefix(trimmed, "&"):
		tok.kind, tok.escape, text = tkMustache, false, trimmed[1:]
	default:
		tok.kind, text = tkMustache, trimmed
	}
	if tok.kind == tkElse && !block {
		return tok, next, nil
	}
	var err error
	if block {
		tok.expr, tok.params, err = p.parseBlockExpr(strings.TrimSpace(text), pos)
	} else {
		tok.expr, err = p.parseExpr(strings.TrimSpace(text), pos)
	}
	if err != nil {
		return nil, 0, err
	}
	return tok, next, nil
}

// findClose finds closer after i, skipping quoted strings.
func findClose(src string, i int, closer string) int {
	for i < len(src) {
		c := src[i]
		if c == '\'' || c == '"' {
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return -1
			}
			i += j + 2
			continue
		}
		if strings.HasPrefix(src[i:], closer) {
			return i
		}
		i++
	}
	return -1
}

// stripWhitespace applies ~: a tag's stripLeft trims the text before it, stripRight the text
// after it.
func stripWhitespace(toks []token) {
	for i := range toks {
		if toks[i].kind == tkText {
			continue
		}
		if toks[i].stripLeft && i > 0 && toks[i-1].kind == tkText {
			toks[i-1].text = strings.TrimRight(toks[i-1].text, " \t\r\n")
		}
		if toks[i].stripRight && i+1 < len(toks) && toks[i+1].kind == tkText {
			toks[i+1].text = strings.TrimLeft(toks[i+1].text, " \t\r\n")
		}
	}
}

// build turns tokens into nodes until the block named closing ends (at its {{else}} or close
// tag); it returns the nodes and the tokens from that tag on.
func (p *parser) build(toks []token, closing string, openPos int) ([]node, []token, error) {
	var nodes []node
	for len(toks) > 0 {
		t := toks[0]
		switch t.kind {
		case tkText:
			if t.text != "" {
				nodes = append(nodes, &textNode{text: t.text})
			}
			toks = toks[1:]
		case tkMustache:
			nodes = append(nodes, &mustacheNode{expr: t.expr, escape: t.escape, field: requestField(t.expr)})
			toks = toks[1:]
		case tkOpen:
			b, rest, err := p.block(t, toks[1:])
			if err != nil {
				return nil, nil, err
			}
			nodes = append(nodes, b)
			toks = rest
		case tkElse, tkClose:
			if closing == "" {
				return nil, nil, p.errorAt(t.pos, "{{%s}} without an open block", tagText(t))
			}
			return nodes, toks, nil
		}
	}
	if closing != "" {
		return nil, nil, p.errorAt(openPos, "{{#%s}} is not closed", closing)
	}
	return nodes, nil, nil
}

func tagText(t token) string {
	if t.kind == tkClose {
		return "/" + t.text
	}
	return "else"
}

// block builds the block opened by open from the tokens after it, through its close tag.
func (p *parser) block(open token, toks []token) (*blockNode, []token, error) {
	name := open.expr.name
	if name == "" && open.expr.head.path != nil {
		name = open.expr.head.path.text
	}
	if name == "" { // {{#"x"}} or {{#1}}: nothing a close tag could name
		return nil, nil, p.errorAt(open.pos, "a block opens with a helper or a path, not a literal")
	}
	b, rest, err := p.section(open, toks, name)
	if err != nil {
		return nil, nil, err
	}
	return b, rest[1:], nil
}

// section builds the body and {{else}} part of a block named name (open is its tag or an
// {{else name …}} of it, which nests as a block) and returns the tokens from its close tag on.
func (p *parser) section(open token, toks []token, name string) (*blockNode, []token, error) {
	b := &blockNode{expr: open.expr, params: open.params}
	body, rest, err := p.build(toks, name, open.pos)
	if err != nil {
		return nil, nil, err
	}
	b.body = body
	if t := rest[0]; t.kind == tkElse {
		if t.expr != nil {
			// {{else if x}}…: a nested block that the same close tag ends.
			inner, after, err := p.section(token{kind: tkOpen, expr: t.expr, params: t.params, pos: t.pos}, rest[1:], name)
			if err != nil {
				return nil, nil, err
			}
			b.inverse = []node{inner}
			return b, after, nil
		}
		if b.inverse, rest, err = p.build(rest[1:], name, open.pos); err != nil {
			return nil, nil, err
		}
		if rest[0].kind == tkElse {
			return nil, nil, p.errorAt(rest[0].pos, "a second {{else}} in {{#%s}}", name)
		}
	}
	if t := rest[0]; t.text != name {
		return nil, nil, p.errorAt(t.pos, "{{/%s}} closes {{#%s}}", t.text, name)
	}
	return b, rest, nil
}

// parseBlockExpr parses an open tag's expression and its block parameters (as |a b|).
func (p *parser) parseBlockExpr(s string, pos int) (*sexpr, []string, error) {
	var params []string
	// i+5 < len(s): the closing | is not the opening one ("x as |" has no parameter list).
	if i := strings.LastIndex(s, " as |"); i >= 0 && i+5 < len(s) && strings.HasSuffix(s, "|") {
		params = strings.Fields(s[i+5 : len(s)-1])
		s = strings.TrimSpace(s[:i])
	}
	e, err := p.parseExpr(s, pos)
	return e, params, err
}

// parseExpr parses the expression of a tag.
func (p *parser) parseExpr(s string, pos int) (*sexpr, error) {
	sc := &scanner{s: s, p: p, pos: pos}
	e, err := sc.sexpr(false)
	if err != nil {
		return nil, err
	}
	sc.space()
	if sc.i < len(sc.s) {
		return nil, p.errorAt(pos, "unexpected %q in {{%s}}", sc.s[sc.i:], s)
	}
	return e, nil
}

type scanner struct {
	s   string
	i   int
	p   *parser
	pos int
}

func (sc *scanner) errorf(format string, args ...any) error {
	return sc.p.errorAt(sc.pos, format, args...)
}

func (sc *scanner) space() {
	for sc.i < len(sc.s) && isSpace(sc.s[sc.i]) {
		sc.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// sexpr parses head params… hash… up to the end or, in a subexpression, the closing paren.
func (sc *scanner) sexpr(sub bool) (*sexpr, error) {
	sc.space()
	if sc.i >= len(sc.s) || sub && sc.s[sc.i] == ')' {
		return nil, sc.errorf("empty expression")
	}
	head, err := sc.operand()
	if err != nil {
		return nil, err
	}
	e := &sexpr{head: head}
	for {
		sc.space()
		if sc.i >= len(sc.s) || sub && sc.s[sc.i] == ')' {
			break
		}
		if key, ok := sc.hashKey(); ok {
			v, err := sc.operand()
			if err != nil {
				return nil, err
			}
			e.hash = append(e.hash, hashPair{key: key, val: v})
			continue
		}
		if len(e.hash) > 0 {
			return nil, sc.errorf("a parameter after hash arguments in %q", sc.s)
		}
		op, err := sc.operand()
		if err != nil {
			return nil, err
		}
		e.params = append(e.params, op)
	}
	if head.path != nil && !head.path.data && !head.path.this && head.path.up == 0 && len(head.path.segments) == 1 {
		e.name = head.path.segments[0]
		e.helper = helpers[e.name]
	}
	if e.helper == nil && (len(e.params) > 0 || len(e.hash) > 0) {
		if e.name != "" {
			return nil, sc.errorf("unknown helper %q", e.name)
		}
		return nil, sc.errorf("%q is not a helper: it takes no parameters", sc.s)
	}
	return e, nil
}

// hashKey reads `key=` when it comes next.
func (sc *scanner) hashKey() (string, bool) {
	j := sc.i
	for j < len(sc.s) && isIDChar(sc.s[j]) {
		j++
	}
	if j > sc.i && j < len(sc.s) && sc.s[j] == '=' {
		key := sc.s[sc.i:j]
		sc.i = j + 1
		return key, true
	}
	return "", false
}

// isIDChar reports whether c may be part of a Handlebars identifier.
func isIDChar(c byte) bool {
	if isSpace(c) {
		return false
	}
	return !strings.ContainsRune("!\"#%&'()*+,./;<=>@[\\]^`{|}~", rune(c))
}

func (sc *scanner) operand() (*operand, error) {
	sc.space()
	if sc.i >= len(sc.s) {
		return nil, sc.errorf("missing operand in %q", sc.s)
	}
	c := sc.s[sc.i]
	switch {
	case c == '(':
		sc.i++
		e, err := sc.sexpr(true)
		if err != nil {
			return nil, err
		}
		sc.space()
		if sc.i >= len(sc.s) || sc.s[sc.i] != ')' {
			return nil, sc.errorf("unclosed subexpression in %q", sc.s)
		}
		sc.i++
		return &operand{sub: e}, nil
	case c == '\'' || c == '"':
		j := strings.IndexByte(sc.s[sc.i+1:], c)
		if j < 0 {
			return nil, sc.errorf("unclosed string in %q", sc.s)
		}
		v := sc.s[sc.i+1 : sc.i+1+j]
		sc.i += j + 2
		return &operand{lit: v}, nil
	}
	// A literal is followed by white space, ')' or the end.
	end := sc.i
	for end < len(sc.s) && !isSpace(sc.s[end]) && sc.s[end] != ')' {
		end++
	}
	word := sc.s[sc.i:end]
	switch word {
	case "true", "false":
		sc.i = end
		return &operand{lit: word == "true"}, nil
	case "null", "undefined":
		sc.i = end
		return &operand{lit: nil}, nil
	}
	if isNumber(word) {
		f, _ := strconv.ParseFloat(word, 64)
		sc.i = end
		return &operand{lit: f}, nil
	}
	pth, err := sc.path()
	if err != nil {
		return nil, err
	}
	return &operand{path: pth, field: pathField(pth)}, nil
}

func isNumber(w string) bool {
	if w == "" || w == "-" {
		return false
	}
	i := 0
	if w[0] == '-' {
		i = 1
	}
	dot := false
	digits := 0
	for ; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot && digits > 0:
			dot = true
		default:
			return false
		}
	}
	return digits > 0 && w[len(w)-1] != '.'
}

// path reads a path: [@]seg(.seg)*, where a segment is an identifier, [anything], ., .. or this.
func (sc *scanner) path() (*path, error) {
	start := sc.i
	p := &path{}
	if sc.s[sc.i] == '@' {
		p.data = true
		sc.i++
	}
	first := true
	for {
		if sc.i >= len(sc.s) {
			break
		}
		var seg string
		switch {
		case strings.HasPrefix(sc.s[sc.i:], "../") && first:
			p.up++
			sc.i += 3
			continue
		case strings.HasPrefix(sc.s[sc.i:], ".."):
			if !first {
				return nil, sc.errorf("'..' in the middle of %q", sc.s)
			}
			p.up++
			sc.i += 2
			first = false
			if sc.i < len(sc.s) && (sc.s[sc.i] == '.' || sc.s[sc.i] == '/') {
				sc.i++
				continue
			}
			p.text = sc.s[start:sc.i]
			return p, nil
		case sc.s[sc.i] == '[':
			j := strings.IndexByte(sc.s[sc.i:], ']')
			if j < 0 {
				return nil, sc.errorf("unclosed [ in %q", sc.s)
			}
			seg = sc.s[sc.i+1 : sc.i+j]
			sc.i += j + 1
			p.segments = append(p.segments, seg)
		default:
			j := sc.i
			for j < len(sc.s) && isIDChar(sc.s[j]) {
				j++
			}
			if j == sc.i {
				if first && sc.s[sc.i] == '.' {
					p.this = true
					sc.i++
					p.text = sc.s[start:sc.i]
					if sc.i < len(sc.s) && sc.s[sc.i] == '/' {
						sc.i++
						first = false
						continue
					}
					return p, nil
				}
				return nil, sc.errorf("unexpected %q in %q", sc.s[sc.i:], sc.s)
			}
			seg = sc.s[sc.i:j]
			sc.i = j
			if first && seg == "this" && !p.data {
				p.this = true
			} else {
				p.segments = append(p.segments, seg)
			}
		}
		first = false
		if sc.i < len(sc.s) && (sc.s[sc.i] == '.' || sc.s[sc.i] == '/') {
			sc.i++
			continue
		}
		break
	}
	p.text = sc.s[start:sc.i]
	if !p.this && p.up == 0 && len(p.segments) == 0 {
		return nil, sc.errorf("empty path in %q", sc.s)
	}
	return p, nil
}
