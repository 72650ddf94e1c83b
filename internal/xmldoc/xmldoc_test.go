package xmldoc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/antchfx/xmlquery"
)

// dump writes every node reachable from doc, its siblings included, with all the fields XPath
// evaluation can read.
func dump(doc *xmlquery.Node) string {
	if doc == nil {
		return "<nil>"
	}
	var b strings.Builder
	for n := doc; n != nil; n = n.NextSibling {
		dumpNode(&b, n, 0)
	}
	return b.String()
}

func dumpNode(b *strings.Builder, n *xmlquery.Node, depth int) {
	fmt.Fprintf(b, "%s%d %q prefix=%q ns=%q", strings.Repeat("  ", depth), n.Type, n.Data, n.Prefix, n.NamespaceURI)
	for _, a := range n.Attr {
		fmt.Fprintf(b, " [%q:%q=%q ns=%q]", a.Name.Space, a.Name.Local, a.Value, a.NamespaceURI)
	}
	if n.ProcInst != nil {
		fmt.Fprintf(b, " pi=%q/%q", n.ProcInst.Target, n.ProcInst.Inst)
	}
	b.WriteByte('\n')
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Parent != n {
			fmt.Fprintf(b, "%s!parent\n", strings.Repeat("  ", depth+1))
		}
		dumpNode(b, c, depth+1)
	}
	if n.FirstChild != nil && n.LastChild.NextSibling != nil {
		b.WriteString("!last\n")
	}
}

func TestParseMatchesLibrary(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool // the scanner, not the library, builds it
	}{
		{"bench body", `<order><customer><id>cust-001</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`, true},
		{"declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n<a>1</a>\n", true},
		{"declaration single quotes", `<?xml version='1.0' standalone='yes'?><a/>`, true},
		{"leading space and comment", " \n<!-- c --><a>x</a><!--after-->", true},
		{"entities", `<a t="&lt;&amp;&#65;&#x42;">&quot;&apos;&gt;&#233;</a>`, true},
		{"cdata", `<a>x<![CDATA[<raw> & ]]>y<![CDATA[]]></a>`, true},
		{"self closing and space", "<a >\n\t<b x = 'q' y=\"2\"/>\n</a >", true},
		{"unicode text", `<a>héllo 日本</a>`, true},
		{"two roots", `<a/><b/>`, true},
		{"namespaces", `<s:Envelope xmlns:s="urn:x"><s:Body><m xmlns="urn:y">1</m></s:Body></s:Envelope>`, false},
		{"doctype", `<!DOCTYPE a><a/>`, false},
		{"processing instruction", `<a><?pi x?></a>`, false},
		{"carriage return", "<a>\r\n</a>", false},
		{"unknown entity", `<a>&nbsp;</a>`, false},
		{"unclosed", `<a><b></a>`, false},
		{"no element", `<!-- only -->`, false},
		{"empty", ``, false},
		{"not xml", `{"a":1}`, false},
		{"bad comment", `<a><!-- a -- b --></a>`, false},
		{"version 1.1", `<?xml version="1.1"?><a/>`, false},
		{"latin1", `<?xml version="1.0" encoding="ISO-8859-1"?><a>x</a>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fast := parseFast(tt.in)
			if fast != tt.fast {
				t.Errorf("scanner took it: %v, want %v", fast, tt.fast)
			}
			if got, want := dump(Parse(tt.in)), dump(parseLibrary(tt.in)); got != want {
				t.Errorf("tree differs from xmlquery's\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestParseFastAllocations(t *testing.T) {
	body := `<order><customer><id>cust-001</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`
	if n := testing.AllocsPerRun(100, func() { Parse(body) }); n > 3 {
		t.Errorf("Parse allocates %v times on a plain body, want at most 3", n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`<order><customer><id>cust-001</id></customer><items><item sku="x">1</item></items></order>`,
		`<?xml version="1.0" encoding="utf-8"?><a b='c'>&amp;&#x41;<![CDATA[x]]><!--c--></a>`,
		" <a/> ", `<a><b/>t<c>u</c></a>`, `<a x="1"y="2"/>`, `<a>]]></a>`, `<a>&#0;</a>`,
		`<a x="a	b"/>`, `<a x="&#10;"/>`, `<_a-b.c/>`, `<a></a><!---->`, `<a><!---></a>`,
		"\uFEFF<a/>", `<a b="1" b="2"/>`, "x<a/>y", `<a b="x>y"/>`, "<a>&#x10FFFF;&#1114112;</a>", "<a>\uFFFE</a>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc, ok := parseFast(s)
		if !ok {
			return
		}
		lib := parseLibrary(s)
		if lib == nil {
			t.Fatalf("scanner accepted what xmlquery refuses: %q", s)
		}
		if got, want := dump(doc), dump(lib); got != want {
			t.Fatalf("%q: tree differs\n got:\n%s\nwant:\n%s", s, got, want)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	body := `<order><customer><id>cust-001</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse(body)
		}
	})
	b.Run("xmlquery", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parseLibrary(body)
		}
	})
}
