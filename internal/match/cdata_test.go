package match

import "testing"

// TestCDATAAsText: a "<![" that does not open a CDATA section (a lowercased "<![cdata[") is
// text to xmldom, up to the next tag, and what it holds markup: cdataAsText escapes it so that
// encoding/xml reads the same, and leaves everything else as it is.
func TestCDATAAsText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`<r><a>1</a></r>`, `<r><a>1</a></r>`},
		{`<r><![CDATA[X]]></r>`, `<r><![CDATA[X]]></r>`},
		{`<r><![cdata[x y]]></r>`, `<r>&lt;![cdata[x y]]&gt;</r>`},
		{`<r><![cdata[<c>z</c>]]><![CDATA[K]]><![x</r>`, `<r>&lt;![cdata[<c>z</c>]]&gt;<![CDATA[K]]>&lt;![x</r>`},
		{`<r><![CDATA[unclosed`, `<r><![CDATA[unclosed`},
	} {
		if got := cdataAsText(tc.in); got != tc.want {
			t.Errorf("cdataAsText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
