// Package schema holds the JSON Schema of mockd's config files (YAML and Mountebank JSON), for
// editors (yaml-language-server, VS Code) and for `mockd schema`, which prints it.
//
// The schema describes what mockd's YAML loader accepts: the same keys, with unknown keys
// refused. Mountebank JSON files may carry keys Mountebank ignores; mockd loads them anyway.
// schema_test.go checks the schema and the loader against one corpus of good and bad configs.
package schema

import _ "embed"

// JSON is the schema (draft-07), as in mockd.schema.json.
//
//go:embed mockd.schema.json
var JSON []byte
