package behavior

import (
	"github.com/antchfx/xpath"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsonpath"
	"github.com/mockd/mockd/internal/jsvalue"
)

// SelectJSONPath returns every value selector selects from field (parsed as JSON unless it is
// already an object), as Mountebank's jsonpath.select; nil when nothing is selected or the
// selector or field does not parse.
func SelectJSONPath(selector string, field config.Value) []config.Value {
	expr, err := jsonpath.Parse(selector)
	if err != nil {
		return nil
	}
	return jsonpathValues(expr, field)
}

// SelectXPath returns every value selector (with namespace prefixes ns) selects from field
// parsed as XML, as Mountebank's xpath.select; nil when nothing is selected or the selector or
// field does not parse.
func SelectXPath(selector string, ns *config.Object, field config.Value) []config.Value {
	prefixes := map[string]string{}
	if ns != nil {
		for _, m := range ns.Members {
			prefixes[m.Key] = jsvalue.String(m.Value)
		}
	}
	expr, err := xpath.CompileWithNS(selector, prefixes)
	if err != nil {
		return nil
	}
	vals, _ := xpathValues(expr, field) // a string's TypeError selects nothing here
	return vals
}
