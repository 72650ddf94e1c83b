// Package xmldoc parses XML bodies into the xmlquery trees that XPath selectors run on.
//
// xmlquery.Parse goes through encoding/xml, which allocates for every token and name; on a small
// body that parse is most of an XPath predicate's cost. Parse first tries a direct scanner that
// builds the same tree from a plain subset of XML: elements and attributes without namespace
// prefixes, text with the predefined and numeric character references, CDATA sections, comments
// and a leading <?xml?> declaration. Anything outside that subset (a DOCTYPE, a prefix or xmlns,
// a processing instruction, a carriage return, an odd character, any syntax error) is handed to
// xmlquery.Parse unchanged, so the result, and what counts as an error, is always xmlquery's. The
// fuzz test FuzzParse holds the scanner to that: whatever it accepts must give xmlquery's tree.
package xmldoc

import (
	"encoding/xml"
	"strings"
	"unicode/utf8"

	"github.com/antchfx/xmlquery"
)

// Parse returns the document s holds, as xmlquery.Parse builds it, or nil when xmlquery refuses s.
// The tree's strings may share memory with s.
func Parse(s string) *xmlquery.Node {
	if doc, ok := parseFast(s); ok {
		return doc
	}
	return parseLibrary(s)
}

// parseLibrary is xmlquery.Parse, with a panic in the library taken as a refusal.
func parseLibrary(s string) (doc *xmlquery.Node) {
	defer func() {
		if recover() != nil {
			doc = nil
		}
	}()
	doc, err := xmlquery.Parse(strings.NewReader(s))
	if err != nil {
		return nil
	}
	return doc
}

// scanner builds a tree from s. Its nodes come from chunks allocated together, never grown, so
// pointers into them stay valid.
type scanner struct {
	s     string
	i     int
	nodes []xmlquery.Node
	attrs []xmlquery.Attr
	doc   *xmlquery.Node
	cur   *xmlquery.Node // the open element new nodes go into; doc at the top
	decl  bool           // a declaration node (written or implied) is in the tree
	root  bool           // an element has been seen
}

// parseFast builds the tree of s when s stays inside the subset the scanner knows; ok is false
// otherwise, and the caller falls back to xmlquery.
func parseFast(s string) (doc *xmlquery.Node, ok bool) {
	if strings.IndexByte(s, '\r') >= 0 {
		return nil, false // encoding/xml rewrites line ends; leave that to it
	}
	// Nodes are sized from a count rather than grown: a '<' not starting an end tag opens at
	// most one node, and text lies only in the gaps between markup that are not empty ("><").
	// Markup inside comments can make that short; node() then adds a chunk.
	lt := strings.Count(s, "<")
	est := lt - strings.Count(s, "</") + lt + 1 - strings.Count(s, "><") + 2 // + document, declaration
	p := scanner{s: s}
	p.nodes = make([]xmlquery.Node, 0, min(max(est, 4), 256))
	p.attrs = make([]xmlquery.Attr, 0, min(strings.Count(s, "=")+1, 256)) // + the implied version
	p.doc = p.node()
	p.doc.Type = xmlquery.DocumentNode
	p.cur = p.doc
	if strings.HasPrefix(s, "<?xml") {
		if !p.declaration() {
			return nil, false
		}
	}
	for p.i < len(s) {
		if s[p.i] != '<' {
			if !p.text() {
				return nil, false
			}
			continue
		}
		if !p.markup() {
			return nil, false
		}
	}
	if p.cur != p.doc || !p.root {
		return nil, false // unclosed element, or no element at all
	}
	return p.doc, true
}

func (p *scanner) node() *xmlquery.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]xmlquery.Node, 0, 32)
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	return &p.nodes[len(p.nodes)-1]
}

// place puts a text, comment or CDATA node where xmlquery's parser puts it: into the open
// element, or, at the top before any declaration, beside the document node (xmlquery's level
// bookkeeping does that, which hides such nodes from XPath).
func (p *scanner) place(n *xmlquery.Node) {
	if p.cur == p.doc && !p.decl {
		xmlquery.AddSibling(p.doc, n)
		return
	}
	xmlquery.AddChild(p.cur, n)
}

// declaration reads a leading <?xml ...?> in the one plain shape the scanner accepts:
// space-separated name="value" pairs, version 1.0 and UTF-8 if given.
func (p *scanner) declaration() bool {
	end := strings.Index(p.s, "?>")
	if end < 0 {
		return false
	}
	inst := p.s[len("<?xml"):end]
	if inst == "" || inst[0] != ' ' {
		return false
	}
	n := p.node()
	n.Type = xmlquery.DeclarationNode
	n.Data = "xml"
	first := len(p.attrs)
	for _, pair := range strings.Split(inst[1:], " ") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || k == "" || len(v) < 2 || (v[0] != '"' && v[0] != '\'') || v[len(v)-1] != v[0] {
			return false
		}
		v = v[1 : len(v)-1]
		if !plainValue(v) {
			return false
		}
		switch k {
		case "version":
			if v != "1.0" {
				return false
			}
		case "encoding":
			if !strings.EqualFold(v, "utf-8") {
				return false
			}
		case "standalone":
		default:
			return false
		}
		for _, a := range n.Attr {
			if a.Name.Local == k {
				return false // xmlquery keeps the first; not worth copying that
			}
		}
		p.attrs = append(p.attrs, xmlquery.Attr{Name: xmlName(k), Value: v})
		n.Attr = p.attrs[first:len(p.attrs):len(p.attrs)]
	}
	xmlquery.AddChild(p.doc, n)
	p.decl = true
	p.i = end + 2
	return true
}

// plainValue reports whether a declaration value is made only of characters that leave the
// library's pair splitting and quote trimming nothing to do differently.
func plainValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isNameByte(c) {
			return false
		}
	}
	return true
}

// text reads character data up to the next '<'.
func (p *scanner) text() bool {
	start := p.i
	end := strings.IndexByte(p.s[start:], '<')
	if end < 0 {
		end = len(p.s)
	} else {
		end += start
	}
	raw := p.s[start:end]
	if strings.Contains(raw, "]]>") {
		return false // encoding/xml refuses it in text
	}
	data, ok := decode(raw, false)
	if !ok {
		return false
	}
	p.i = end
	n := p.node()
	n.Type = xmlquery.TextNode
	n.Data = data
	p.place(n)
	return true
}

// markup reads what starts with '<' at p.i.
func (p *scanner) markup() bool {
	s := p.s
	rest := s[p.i+1:]
	switch {
	case strings.HasPrefix(rest, "/"):
		return p.endTag()
	case strings.HasPrefix(rest, "!--"):
		// encoding/xml ends a comment at the first "--", which must be followed by '>'.
		body := p.i + len("<!--")
		k := strings.Index(s[body:], "--")
		if k < 0 || body+k+2 >= len(s) || s[body+k+2] != '>' {
			return false
		}
		return p.section(xmlquery.CommentNode, body, body+k, body+k+3)
	case strings.HasPrefix(rest, "![CDATA["):
		body := p.i + len("<![CDATA[")
		k := strings.Index(s[body:], "]]>")
		if k < 0 {
			return false
		}
		return p.section(xmlquery.CharDataNode, body, body+k, body+k+3)
	}
	return p.startTag()
}

// section adds a comment or CDATA node holding s[from:to] verbatim and moves past it to next.
func (p *scanner) section(t xmlquery.NodeType, from, to, next int) bool {
	data := p.s[from:to]
	if !plainChars(data) {
		return false
	}
	n := p.node()
	n.Type = t
	n.Data = data
	p.place(n)
	p.i = next
	return true
}

func (p *scanner) startTag() bool {
	s := p.s
	i := p.i + 1
	name, i := scanName(s, i)
	if name == "" {
		return false
	}
	el := p.node()
	el.Type = xmlquery.ElementNode
	el.Data = name
	first := len(p.attrs)
	for {
		j := skipSpace(s, i)
		if j >= len(s) {
			return false
		}
		if s[j] == '>' || s[j] == '/' {
			i = j
			break
		}
		if j == i {
			return false // attributes must be set apart by space
		}
		var a string
		a, j = scanName(s, j)
		if a == "" || a == "xmlns" {
			return false
		}
		j = skipSpace(s, j)
		if j >= len(s) || s[j] != '=' {
			return false
		}
		j = skipSpace(s, j+1)
		if j >= len(s) || (s[j] != '"' && s[j] != '\'') {
			return false
		}
		q := strings.IndexByte(s[j+1:], s[j])
		if q < 0 {
			return false
		}
		raw := s[j+1 : j+1+q]
		if strings.IndexByte(raw, '<') >= 0 {
			return false
		}
		v, ok := decode(raw, true)
		if !ok {
			return false
		}
		p.attrs = append(p.attrs, xmlquery.Attr{Name: xmlName(a), Value: v})
		i = j + 1 + q + 1
	}
	if len(p.attrs) > first {
		el.Attr = p.attrs[first:len(p.attrs):len(p.attrs)]
	}
	selfClosing := s[i] == '/'
	if selfClosing {
		if i+1 >= len(s) || s[i+1] != '>' {
			return false
		}
		i++
	}
	p.i = i + 1
	if !p.decl {
		// xmlquery gives a document without a declaration an implied <?xml version="1.0"?>.
		d := p.node()
		d.Type = xmlquery.DeclarationNode
		d.Data = "xml"
		p.attrs = append(p.attrs, xmlquery.Attr{Name: xmlName("version"), Value: "1.0"})
		d.Attr = p.attrs[len(p.attrs)-1 : len(p.attrs) : len(p.attrs)]
		xmlquery.AddChild(p.doc, d)
		p.decl = true
	}
	p.root = true
	xmlquery.AddChild(p.cur, el)
	if !selfClosing {
		p.cur = el
	}
	return true
}

func (p *scanner) endTag() bool {
	s := p.s
	name, i := scanName(s, p.i+2)
	if name == "" || p.cur == p.doc || name != p.cur.Data {
		return false
	}
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '>' {
		return false
	}
	p.cur = p.cur.Parent
	p.i = i + 1
	return true
}

// scanName reads an ASCII XML name without a prefix at s[i:]; name is "" when there is none.
func scanName(s string, i int) (name string, end int) {
	if i >= len(s) {
		return "", i
	}
	if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return "", i
	}
	j := i + 1
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	if j < len(s) && (s[j] == ':' || s[j] >= utf8.RuneSelf) {
		return "", i // a prefixed or non-ASCII name: the library's
	}
	return s[i:j], j
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}

func xmlName(local string) xml.Name { return xml.Name{Local: local} }

// plainChars reports whether every character of s is one XML allows and the scanner passes
// through unchanged: tab, newline, or a valid code point from U+0020 outside U+FFFE and U+FFFF.
func plainChars(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !xmlRune(r, size) {
			return false
		}
		i += size
	}
	return true
}

func xmlRune(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= utf8.MaxRune || r == '\t' || r == '\n'
}

// decode resolves the character references in raw text; ok is false for any reference other
// than the five predefined ones and a numeric one to an allowed character, and for any
// character plainChars refuses.
func decode(raw string, attr bool) (string, bool) {
	amp := strings.IndexByte(raw, '&')
	if amp < 0 {
		return raw, plainChars(raw)
	}
	if !plainChars(raw[:amp]) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw))
	b.WriteString(raw[:amp])
	rest := raw[amp:]
	for rest != "" {
		if rest[0] != '&' {
			k := strings.IndexByte(rest, '&')
			if k < 0 {
				k = len(rest)
			}
			if !plainChars(rest[:k]) {
				return "", false
			}
			b.WriteString(rest[:k])
			rest = rest[k:]
			continue
		}
		semi := strings.IndexByte(rest, ';')
		if semi < 0 {
			return "", false
		}
		ref := rest[1:semi]
		switch ref {
		case "lt":
			b.WriteByte('<')
		case "gt":
			b.WriteByte('>')
		case "amp":
			b.WriteByte('&')
		case "apos":
			b.WriteByte('\'')
		case "quot":
			b.WriteByte('"')
		default:
			r, ok := charRef(ref)
			if !ok || (attr && (r == '\t' || r == '\n')) {
				return "", false
			}
			b.WriteRune(r)
		}
		rest = rest[semi+1:]
	}
	return b.String(), true
}

// charRef reads "#123" or "#x7B" as the character it names, when that is one plainChars allows.
func charRef(ref string) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	digits, base := ref[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if digits == "" || len(digits) > 8 {
		return 0, false
	}
	var n rune
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		n = n*rune(base) + d
	}
	if !xmlRune(n, 2) {
		return 0, false
	}
	return n, true
}
