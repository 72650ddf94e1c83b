package match

import (
	"errors"
	"regexp/syntax"
	"strings"

	"github.com/antchfx/xpath"
	"github.com/ohler55/ojg/jp"
)

// CheckRegex compiles a JavaScript regular expression as matches, except and copy run it, for
// validation; the error says what is wrong.
func CheckRegex(src string, ignoreCase bool) error {
	_, err := compileJSRegex(src, ignoreCase)
	var se *syntax.Error
	if errors.As(err, &se) {
		return errors.New(string(se.Code)) // not the translated pattern RE2 quotes
	}
	return err
}

// CheckXPath compiles an xpath selector with its namespace prefixes as predicates do. A prefix
// ns does not bind is allowed (xpath.js fails on it only once a document has elements); a
// selector whose result is a string is not (predicates need nodes, a number or a boolean).
func CheckXPath(selector string, ns map[string]string) error {
	x, err := xpath.CompileWithNS(selector, ns)
	if err != nil && strings.HasPrefix(err.Error(), "prefix ") {
		x, err = compileUnbound(selector, ns)
	}
	if err != nil {
		return err
	}
	if _, isString := safeEval(x, emptyDoc()).(string); isString {
		return errors.New("it gives a string; a predicate's xpath must select nodes, a number or a boolean")
	}
	return nil
}

// CheckJSONPath parses a jsonpath selector (one that does not parse selects nothing).
func CheckJSONPath(selector string) error {
	_, err := jp.ParseString(selector)
	return err
}
