package smtpserver

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/mockd/mockd/internal/jsvalue"
)

// htmlToText is html-to-text 9 with its default options (wordwrap 80), as mailparser applies it
// to an html part that no text part stands for, for the HTML it follows: text, inline elements,
// blocks (p, div and the other sectioning elements, and tables, which are blocks when no
// tables option names them), headings (upper-cased), br, links (`text [href]`), lists (` * `,
// ` 1. `), pre (its text as it is), blockquote (`> ` lines), hr (80 dashes) and images (`alt
// [src]`). ok is false for HTML holding anything else (scripts, styles, wbr, lettered or Roman
// lists), whose layout it does not follow.
func htmlToText(src string) (text string, ok bool) {
	root := parseHTML(src)
	if root == nil {
		return "", false
	}
	nodes := root.children
	if body := findElement(root, "body"); body != nil {
		nodes = []*htmlNode{body}
	}
	b := &textBuilder{}
	b.stack = []*textBlock{newTextBlock(80)}
	if !b.walk(nodes) {
		return "", false
	}
	return b.stack[0].text(), true
}

// htmlNode is a node of the parsed document: an element or (tag "") a text.
type htmlNode struct {
	parent   *htmlNode
	tag      string
	attrs    map[string]string
	text     string
	children []*htmlNode
}

// parseHTML reads src into a tree as htmlparser2 does for well-formed HTML: no implied
// elements; an end tag closes up to its element, one without an open element is ignored.
func parseHTML(src string) *htmlNode {
	root := &htmlNode{tag: "#root"}
	stack := []*htmlNode{root}
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return root
		case html.TextToken:
			top := stack[len(stack)-1]
			top.children = append(top.children, &htmlNode{parent: top, text: string(z.Text())})
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if closesP[t.Data] {
				for len(stack) > 1 && stack[len(stack)-1].tag == "p" {
					stack = stack[:len(stack)-1] // htmlparser2's openImpliesClose
				}
			}
			if t.Data == "li" {
				for len(stack) > 1 && stack[len(stack)-1].tag == "li" {
					stack = stack[:len(stack)-1]
				}
			}
			n := &htmlNode{parent: stack[len(stack)-1], tag: t.Data, attrs: map[string]string{}}
			for _, a := range t.Attr {
				if _, seen := n.attrs[a.Key]; !seen {
					n.attrs[a.Key] = a.Val
				}
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			if tt == html.StartTagToken && !voidElement[t.Data] {
				stack = append(stack, n)
			}
		case html.EndTagToken:
			t := z.Token()
			found := false
			for i := len(stack) - 1; i > 0; i-- {
				if stack[i].tag == t.Data {
					stack = stack[:i]
					found = true
					break
				}
			}
			if !found && (t.Data == "p" || t.Data == "br") {
				// htmlparser2 reads a </p> without a <p> as <p></p>, and </br> as <br>.
				top := stack[len(stack)-1]
				top.children = append(top.children, &htmlNode{parent: top, tag: t.Data, attrs: map[string]string{}})
			}
		}
	}
}

// closesP are the elements whose start closes an open p (htmlparser2's openImpliesClose).
var closesP = map[string]bool{"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"address": true, "article": true, "aside": true, "blockquote": true, "details": true, "div": true, "dl": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true, "header": true, "hr": true,
	"main": true, "nav": true, "ol": true, "pre": true, "section": true, "table": true, "ul": true}

var voidElement = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

func findElement(n *htmlNode, tag string) *htmlNode {
	for _, c := range n.children {
		if c.tag == tag {
			return c
		}
		if f := findElement(c, tag); f != nil {
			return f
		}
	}
	return nil
}

// blockBreaks are the leading and trailing line breaks of the block elements html-to-text's
// default options name.
var blockBreaks = map[string][2]int{
	"article": {1, 1}, "aside": {1, 1}, "div": {1, 1}, "footer": {1, 1}, "form": {1, 1}, "header": {1, 1},
	"main": {1, 1}, "nav": {1, 1}, "section": {1, 1}, "p": {2, 2},
	"h1": {3, 2}, "h2": {3, 2}, "h3": {3, 2}, "h4": {2, 2}, "h5": {2, 2}, "h6": {2, 2},
	"table": {2, 2}, "pre": {2, 2}, "blockquote": {2, 2}, "hr": {2, 2},
}

// unfollowed are the elements whose formatting htmlToText does not follow.
var unfollowed = map[string]bool{"script": true, "style": true, "wbr": true, "template": true, "textarea": true}

// textBuilder is html-to-text's BlockTextBuilder: a stack of blocks and of word transforms.
type textBuilder struct {
	stack      []*textBlock
	transforms []func(string) string
}

func (b *textBuilder) top() *textBlock { return b.stack[len(b.stack)-1] }

func (b *textBuilder) walk(nodes []*htmlNode) bool {
	for _, n := range nodes {
		if n.tag == "" {
			b.addInline(n.text, false)
			continue
		}
		if unfollowed[n.tag] {
			return false
		}
		switch br, block := blockBreaks[n.tag]; {
		case block:
			reserved := 0
			if n.tag == "blockquote" {
				reserved = 2
			}
			nb := newTextBlock(max(20, b.top().maxLen-reserved))
			nb.pre = b.top().pre || n.tag == "pre"
			b.stack = append(b.stack, nb)
			b.top().leading = br[0]
			upper := n.tag[0] == 'h' && n.tag != "hr"
			if upper {
				b.transforms = append(b.transforms, jsUpper)
			}
			if n.tag == "hr" {
				b.addInline(strings.Repeat("-", 80), false)
			} else if !b.walk(n.children) {
				return false
			}
			if upper {
				b.transforms = b.transforms[:len(b.transforms)-1]
			}
			blk := b.stack[len(b.stack)-1]
			b.stack = b.stack[:len(b.stack)-1]
			text := blk.text()
			if n.tag == "blockquote" {
				text = "> " + strings.ReplaceAll(strings.Trim(text, "\n"), "\n", "\n> ")
			}
			b.top().addText(text, blk.leading, max(blk.stashed, br[1]))
		case n.tag == "img":
			alt, src := n.attrs["alt"], n.attrs["src"]
			switch {
			case src == "":
				b.addInline(alt, true)
			case alt == "":
				b.addInline("["+src+"]", true)
			default:
				b.addInline(alt+" ["+src+"]", true)
			}
		case n.tag == "ul" || n.tag == "ol":
			if !b.list(n) {
				return false
			}
		case n.tag == "br":
			if b.top().pre {
				b.top().raw += "\n"
			} else {
				b.top().startNewLine(1)
			}
		case n.tag == "a":
			href := strings.TrimPrefix(n.attrs["href"], "mailto:")
			if strings.HasPrefix(href, "#") {
				href = ""
			}
			if href == "" {
				if !b.walk(n.children) {
					return false
				}
				continue
			}
			var text strings.Builder
			b.transforms = append(b.transforms, func(s string) string { text.WriteString(s); return s })
			if !b.walk(n.children) {
				return false
			}
			b.transforms = b.transforms[:len(b.transforms)-1]
			if text.Len() == 0 {
				b.addInline(href, true)
			} else {
				b.addInline(" ["+href+"]", true)
			}
		default:
			if !b.walk(n.children) {
				return false
			}
		}
	}
	return true
}

// list is html-to-text's formatList: each child but white space an item, an li with the
// list's prefix (` * `, or ` 1. ` from the ol's start), items one line apart, the lines after
// an item's first indented by the prefix's length.
func (b *textBuilder) list(n *htmlNode) bool {
	nested := n.parent != nil && n.parent.tag == "li"
	next := 1
	if n.tag == "ol" {
		if v, ok := n.attrs["start"]; ok {
			f := jsvalue.Number(v)
			if f != math.Trunc(f) || math.Abs(f) > 1e9 {
				return false
			}
			next = int(f)
		}
		if t := n.attrs["type"]; t != "" && t != "1" {
			return false // letters and Roman numbers are not followed
		}
	}
	type item struct {
		node   *htmlNode
		prefix string
	}
	var items []item
	maxPrefix := 0
	for _, c := range n.children {
		if c.tag == "" && strings.TrimFunc(c.text, jsSpace) == "" {
			continue
		}
		prefix := ""
		if c.tag == "li" {
			if n.tag == "ul" {
				prefix = " * "
			} else {
				prefix = " " + strconv.Itoa(next) + ". "
				next++
			}
			if nested {
				prefix = strings.TrimLeftFunc(prefix, jsSpace)
			}
			maxPrefix = max(maxPrefix, len(prefix))
		}
		items = append(items, item{c, prefix})
	}
	if len(items) == 0 {
		return true
	}
	breaks := 2
	if nested {
		breaks = 1
	}
	lst := newTextBlock(b.top().maxLen)
	lst.leading, lst.pre = breaks, b.top().pre
	b.stack = append(b.stack, lst)
	for _, it := range items {
		width := max(len(it.prefix), maxPrefix)
		li := newTextBlock(max(20, lst.maxLen-width))
		li.pre = lst.pre
		b.stack = append(b.stack, li)
		if !b.walk([]*htmlNode{it.node}) {
			return false
		}
		b.stack = b.stack[:len(b.stack)-1]
		text := it.prefix + strings.Repeat(" ", width-len(it.prefix)) +
			strings.ReplaceAll(li.text(), "\n", "\n"+strings.Repeat(" ", width))
		lst.addText(text, li.leading, max(li.stashed, 1))
	}
	b.stack = b.stack[:len(b.stack)-1]
	if text := lst.text(); text != "" {
		b.top().addText(text, lst.leading, breaks)
	}
	return true
}

// transform applies the word transforms, innermost first.
func (b *textBuilder) transform(w string) string {
	for i := len(b.transforms) - 1; i >= 0; i-- {
		w = b.transforms[i](w)
	}
	return w
}

const htmlSpace = " \t\r\n\f\u200b"

// addInline is BlockTextBuilder.addInline: the words of str, white space collapsed.
func (b *textBuilder) addInline(str string, noTransform bool) {
	blk := b.top()
	if blk.pre {
		blk.raw += str // white space kept, words not transformed
		return
	}
	words := strings.FieldsFunc(str, func(r rune) bool { return strings.ContainsRune(htmlSpace, r) })
	if str == "" || blk.stashed > 0 && len(words) == 0 {
		return
	}
	if blk.stashed > 0 {
		blk.startNewLine(blk.stashed)
	}
	prevSpace := blk.stashedSpace
	for i, w := range words {
		if !noTransform {
			w = b.transform(w)
		}
		if i == 0 && !prevSpace && !strings.ContainsRune(htmlSpace, []rune(str)[0]) {
			blk.concatWord(w)
		} else {
			blk.pushWord(w)
		}
	}
	r := []rune(str)
	blk.stashedSpace = prevSpace && len(words) == 0 || strings.ContainsRune(htmlSpace, r[len(r)-1])
	blk.stashed = 0
}

// textBlock is a block of html-to-text's builder with its InlineTextBuilder.
type textBlock struct {
	raw              string
	lines            [][]string
	next             []string
	avail, maxLen    int
	stashedSpace     bool
	leading, stashed int
	pre              bool // in a pre: text goes to raw as it is
}

func newTextBlock(maxLen int) *textBlock {
	return &textBlock{maxLen: maxLen, avail: maxLen, leading: 1}
}

func (t *textBlock) pushWord(w string) {
	if t.avail <= 0 {
		t.startNewLine(1)
	}
	n := len([]rune(w))
	cost := n
	if len(t.next) > 0 {
		cost++
	}
	if cost <= t.avail {
		t.next = append(t.next, w)
		t.avail -= cost
		return
	}
	if len(t.next) > 0 {
		t.startNewLine(1)
	}
	t.next = append(t.next, w)
	t.avail -= n
}

func (t *textBlock) concatWord(w string) {
	if len(t.next) == 0 {
		t.pushWord(w)
		return
	}
	last := t.next[len(t.next)-1]
	t.next = t.next[:len(t.next)-1]
	cost := len([]rune(last))
	if len(t.next) > 0 {
		cost++
	}
	t.avail += cost
	t.pushWord(last + w)
}

func (t *textBlock) startNewLine(n int) {
	t.lines = append(t.lines, t.next)
	for range n - 1 {
		t.lines = append(t.lines, nil)
	}
	t.next, t.avail = nil, t.maxLen
}

func (t *textBlock) inlineEmpty() bool { return len(t.lines) == 0 && len(t.next) == 0 }

func (t *textBlock) inlineString() string {
	out := make([]string, 0, len(t.lines)+1)
	for _, l := range t.lines {
		out = append(out, strings.Join(l, " "))
	}
	out = append(out, strings.Join(t.next, " "))
	return strings.Join(out, "\n")
}

// text is getText: the block's text so far.
func (t *textBlock) text() string {
	if t.inlineEmpty() {
		return t.raw
	}
	return t.raw + t.inlineString()
}

// addText is html-to-text's addText: a finished child block's text joins this block's.
func (t *textBlock) addText(text string, leading, trailing int) {
	parent := t.text()
	lb := max(t.stashed, leading)
	t.lines, t.next, t.avail = nil, nil, t.maxLen
	if parent != "" {
		t.raw = parent + strings.Repeat("\n", lb) + text
	} else {
		t.raw = text
		t.leading = lb
	}
	t.stashed = trailing
}

// jsSpecialUpper holds the common letters whose toUpperCase in JavaScript is longer than one
// letter (Unicode's SpecialCasing), which Go's ToUpper leaves as they are.
var jsSpecialUpper = strings.NewReplacer("ß", "SS", "ﬀ", "FF", "ﬁ", "FI", "ﬂ", "FL", "ﬃ", "FFI", "ﬄ", "FFL",
	"ﬅ", "ST", "ﬆ", "ST", "ŉ", "ʼN")

// jsUpper is String.prototype.toUpperCase for the letters mail text holds.
func jsUpper(s string) string { return strings.ToUpper(jsSpecialUpper.Replace(s)) }
