package match

import (
	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
)

// nsNav makes unprefixed XPath name tests match only elements in no
// namespace, as XPath 1.0 (and Mountebank's xpath library) does: an element
// in a default namespace reports a prefix no selector can name.
type nsNav struct{ *xmlquery.NodeNavigator }

const defaultNSPrefix = "\x00default"

func newNav(doc *xmlquery.Node) *nsNav {
	return &nsNav{xmlquery.CreateXPathNavigator(doc)}
}

func (n *nsNav) Prefix() string {
	p := n.NodeNavigator.Prefix()
	if p == "" && n.NodeNavigator.NamespaceURL() != "" {
		return defaultNSPrefix
	}
	return p
}

func (n *nsNav) Copy() xpath.NodeNavigator {
	return &nsNav{n.NodeNavigator.Copy().(*xmlquery.NodeNavigator)}
}

func (n *nsNav) MoveTo(other xpath.NodeNavigator) bool {
	if o, ok := other.(*nsNav); ok {
		return n.NodeNavigator.MoveTo(o.NodeNavigator)
	}
	return n.NodeNavigator.MoveTo(other)
}
