// Package schema holds the JSON Schema of mockd's config files (YAML and Mountebank JSON), for
// editors (yaml-language-server, VS Code) and for `mockd schema`, which prints it.
//
// The schema describes what mockd's YAML loader accepts: the same keys, with unknown keys
// refused. Mountebank JSON files may carry keys Mountebank ignores; mockd loads them anyway.
// schema_test.go checks the schema and the loader against one corpus of good and bad configs.
package schema

import (
	_ "embed"
	"encoding/json"
	"errors"
	"strings"
)

// JSON is the schema (draft-07), as in mockd.schema.json.
//
//go:embed mockd.schema.json
var JSON []byte

// WithProtocols returns the schema with the custom protocols of a protofile (`mockd schema
// --protofile`): an imposter whose protocol is one of them may hold any field, as its program
// reads them, and every other imposter is held to the built-in protocols' schema (so a typo
// such as htp is still an error). With no names it is JSON.
func WithProtocols(names []string) ([]byte, error) {
	if len(names) == 0 {
		return JSON, nil
	}
	enum, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	const ref = `{"$ref": "#/definitions/imposter"}`
	const defs = `"definitions": {` + "\n"
	s := string(JSON)
	if strings.Count(s, ref) != 2 || strings.Count(s, defs) != 1 {
		return nil, errors.New("BUG: mockd.schema.json no longer refers to its imposter definition as WithProtocols expects")
	}
	s = strings.ReplaceAll(s, ref, `{"$ref": "#/definitions/imposterOrCustom"}`)
	custom := `    "imposterOrCustom": {
      "if": {"type": "object", "required": ["protocol"], "properties": {"protocol": {"enum": ` + string(enum) + `}}},
      "then": {"$ref": "#/definitions/customImposter"},
      "else": {"$ref": "#/definitions/imposter"}
    },
    "customImposter": {
      "description": "An imposter of a custom protocol of the protofile: its program reads the fields besides Mountebank's common ones.",
      "type": "object",
      "required": ["protocol"],
      "properties": {
        "protocol": {"description": "A custom protocol of the protofile.", "enum": ` + string(enum) + `},
        "port": {"description": "The imposter's port; a free one is picked when absent.", "$ref": "#/definitions/port"},
        "name": {"description": "A label shown in logs and the API.", "type": "string"},
        "recordRequests": {"description": "Keep every request in the journal (GET /imposters/:port shows them).", "type": "boolean"},
        "stubs": {"description": "Tried in order: a request gets the first stub whose predicates all match (on the fields the protocol's requests have).", "type": ["array", "null"], "items": {"type": "object"}},
        "defaultResponse": {"description": "The answer to a request no stub matches.", "type": "object"}
      }
    },
`
	s = strings.Replace(s, defs, defs+custom, 1)
	return []byte(s), nil
}
