package match

// This file is what predicates.js's select functions call: jsonpath.js (jsonpath-plus) and
// xpath.js (xpath over xmldom), followed by select and orderIndependent. Both layers select with
// these functions: the reference for every predicate with a selector, the speed layer for the
// selectors of its fast nodes.

import (
	"strings"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonpath"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/xmldoc"
)

// jsonPathSelect is jsonpath.js select followed by predicates.js select and orderIndependent:
// what the selector picks from v, the text tryJSON parsed (and forceStrings made strings of),
// in jsonpath-plus's order (the order orderIndependent's sort starts from, which decides where
// predicates.js's comparator orders values inconsistently).
// textLen is the length of that text (see selectionBudget).
func jsonPathSelect(sel *selector, v any, textLen int) any {
	if !sel.jpOK {
		return jsvalue.Undef
	}
	if !isObject(v) {
		// JSON.parse(possibleJSON)
		p, err := config.ParseJSON([]byte(jsString(v)))
		if err != nil {
			return jsvalue.Undef
		}
		v = p
	}
	if !jsvalue.Truthy(v) {
		return jsvalue.Undef
	}
	res := safeJPGet(sel, v)
	switch len(res) {
	case 0:
		return jsvalue.Undef
	case 1:
		// orderIndependent sorts the selection when it is itself an array.
		if a, ok := res[0].([]any); ok {
			return config.Plain(sortJS(a))
		}
		return config.Plain(res[0])
	}
	// Several values: recursive descent can pick values nested in each other, so they are
	// bounded before anything is made of them.
	out, ok := sortWithin(res, selectionBudget(textLen))
	if !ok {
		return jsvalue.Undef
	}
	return config.Plain(out)
}

// safeJPGet is what the selector selects from v (a configuration value, or parsed JSON), as
// configuration values in jsonpath-plus's order.
func safeJPGet(sel *selector, v any) (res []any) {
	if m, isMap := v.(map[string]any); isMap {
		v = config.FromPlain(m)
	}
	defer func() {
		if recover() != nil {
			res = nil
		}
	}()
	if sel.jpLength != nil {
		// jsonpath-plus reads "length" as an own property of arrays and strings.
		for _, x := range jsonpath.Select(sel.jpLength, v) {
			switch t := x.(type) {
			case []any:
				res = append(res, float64(len(t)))
			case string:
				res = append(res, float64(jsvalue.Len16(t)))
			case *config.Object:
				if l, ok := t.Get("length"); ok {
					res = append(res, l)
				}
			}
		}
		return res
	}
	if sel.jpKeys != nil {
		// What the selector selects on parsed JSON (objects, arrays and scalars), without
		// walking it: a name selects only in an object that has it.
		for _, k := range sel.jpKeys {
			o, isObj := v.(*config.Object)
			if !isObj || o == nil {
				return nil
			}
			if v, isObj = o.Get(k); !isObj {
				return nil
			}
		}
		return []any{v}
	}
	return jsonpath.Select(sel.jpExpr, v)
}

// xpathSelect is xpath.js select followed by predicates.js select and orderIndependent, for a
// selector that compiled and does not give a string: a number, a boolean, the value of the one
// node selected, the sorted values of several, or undefined.
func xpathSelect(x *xpath.Expr, doc *xmlquery.Node) any {
	res := safeEval(x, doc)
	switch t := res.(type) {
	case float64, bool:
		return t
	case *xpath.NodeIterator:
		var vals []any
		for t.MoveNext() {
			vals = append(vals, xpathNodeValue(t.Current()))
		}
		switch len(vals) {
		case 0:
			return jsvalue.Undef
		case 1:
			return vals[0]
		}
		return sortJS(vals)
	}
	return jsvalue.Undef
}

func parseXML(s string) *xmlquery.Node {
	if doc := xmldoc.Parse(cdataAsText(s)); doc != nil {
		return doc
	}
	return emptyDoc()
}

// cdataAsText rewrites each "<![" that does not open a CDATA section as xmldom reads it: a
// "<![cdata[" (in a body lowercased for a predicate without caseSensitive, most often) is not
// markup there, so its "<" and what follows up to the next tag are text (one text node), and
// what is inside is parsed as markup. The "<" becomes "&lt;", and the next "]]>", which
// encoding/xml refuses in text, "]]&gt;". Any other text is returned as it is.
func cdataAsText(s string) string {
	i := strings.Index(s, "<![")
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		if strings.HasPrefix(s, "<![CDATA[") {
			end := strings.Index(s, "]]>")
			if end < 0 {
				b.WriteString(s)
				return b.String()
			}
			b.WriteString(s[:end+3])
			s = s[end+3:]
		} else {
			b.WriteString("&lt;")
			s = s[1:]
			if end := strings.Index(s, "]]>"); end >= 0 {
				b.WriteString(s[:end])
				b.WriteString("]]&gt;")
				s = s[end+3:]
			}
		}
		i = strings.Index(s, "<![")
	}
	b.WriteString(s)
	return b.String()
}

// xpathNodeValue is xpath.js nodeValue.
func xpathNodeValue(nav xpath.NodeNavigator) any {
	if nav.NodeType() == xpath.AttributeNode {
		return nav.Value()
	}
	var node *xmlquery.Node
	switch n := nav.(type) {
	case *nsNav:
		node = n.Current()
	case *xmlquery.NodeNavigator:
		node = n.Current()
	default:
		return nav.Value()
	}
	switch node.Type {
	case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode, xmlquery.ProcessingInstruction, xmlquery.DeclarationNode:
		// a node with a value of its own
	default:
		node = node.FirstChild // an element's value is its first child's
	}
	if s, ok := nodeData(node); ok {
		return s
	}
	return "undefined"
}

// nodeData is the value of a text, CDATA, comment or processing-instruction node.
func nodeData(n *xmlquery.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch n.Type {
	case xmlquery.TextNode, xmlquery.CharDataNode, xmlquery.CommentNode:
		return n.Data, true
	case xmlquery.ProcessingInstruction, xmlquery.DeclarationNode:
		if n.ProcInst != nil {
			return n.ProcInst.Inst, true
		}
	}
	return "", false
}
