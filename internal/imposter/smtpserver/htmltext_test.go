package smtpserver

import (
	"strings"
	"testing"
)

// TestHTMLToText: what html-to-text 9 (Mountebank 2.9.1's mailparser) made of these.
func TestHTMLToText(t *testing.T) {
	dashes := strings.Repeat("-", 80)
	for _, tc := range []struct{ in, want string }{
		{"<p>a</p><br>b", "a\n\n\nb"},
		{"<h1>a</h1><br>b", "A\n\n\nb"},
		{"<p>a<br></p>b", "a\n\n\nb"},
		{"<div><p>a</p></div><br>b", "a\n\n\nb"},
		{"<b><p>a</p><br>b</b>", "a\n\n\nb"},
		{"<p>a</p><b><br></b>b", "a\n\n\nb"},
		{"<h4><br/><p>w</p></h4>", "\n\n\nW"},
		{"<i><h4>x</h4>y</i><h1>z</h1>", "X\n\ny\n\n\nZ"},
		{"<p><p>a</p>b", "a\n\nb"},
		{"a<ul><li>b</li><li>c</li></ul>d", "a\n * b\n * c\n\nd"},
		{"<p>a</p><ul><li>b</li></ul><p>e</p>", "a\n\n * b\n\ne"},
		{`<ol start="9"><li>x</li><li>y <b>z</b></li><li>w</li></ol>`, " 9.  x\n 10. y z\n 11. w"},
		{"<ul><li>a<ul><li>n1</li><li>n2</li></ul></li><li>b</li></ul>", " * a\n   * n1\n   * n2\n * b"},
		{"<ul> <li>a</li> x <li>c<br>d</li></ul>", " * a\n   x\n * c\n   d"},
		{"<ul></ul>x", "x"},
		{"<ul><li><li>a</li></li></ul>", " * \n * a"},
		{"<ol><li><p>para</p></li></ol>", " 1. para"},
		{"</p>x", "\n\nx"},
		{"a</br>b", "a\nb"},
		{"<p>a<div>b</div>c</p>d", "a\n\nb\nc\n\n\n\nd"},
		{"<p>a<b><p>c</p></b>", "a\n\nc"},
		{`<p>Hi <a href="http://x/y">there</a>, see <a href="mailto:a@b.c">a@b.c</a> and <a href="#top">top</a></p>`,
			"Hi there [http://x/y], see a@b.c [a@b.c] and top"},
		{"<html><head><title>T</title></head><body><h2>Stra\u00dfe</h2>ok</body></html>", "STRASSE\n\nok"},
		// tables (blocks, cells inline: no tables option), pre, blockquote, hr, img
		{"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>x", "abc\n\nx"},
		{"<table>\n<tr>\n<td>a</td>\n<td>b</td>\n</tr>\n</table>", "a b"},
		{"<pre>  a\n   b  </pre><p>x</p>", "  a\n   b  \n\nx"},
		{"<pre><b>x</b>\ty<br>z</pre>", "x\ty\nz"},
		{"<pre>a<p>b</p>c</pre>", "a\n\nbc"},
		{"<pre><a href=\"http://x\">t</a></pre>", "thttp://x"},
		{"<blockquote><p>q</p><p>r</p></blockquote>", "> q\n> \n> r"},
		{"<blockquote>a<blockquote>b</blockquote></blockquote>", "> a\n> \n> > b"},
		{"x<hr>y", "x\n\n" + dashes + "\n\ny"},
		{"<ul><li><hr></li></ul>", " * " + dashes},
		{"<img alt=\"A\" src=\"s.png\"> <img src=\"t.png\"><img alt=\"only\">", "A [s.png] [t.png]only"},
		{"<h2><pre>ab</pre></h2>", "ab"},
	} {
		got, ok := htmlToText(tc.in)
		if !ok || got != tc.want {
			t.Errorf("%q: %q (%v), want %q", tc.in, got, ok, tc.want)
		}
	}
}
