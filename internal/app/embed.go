package app

import "github.com/mockd/mockd/internal/config"

// Document is a config file's text held in memory; see config.Document.
type Document = config.Document

// LoadConfig reads config files, directories and globs (Mountebank JSON rendered as EJS, as
// `mockd serve -c` does) followed by in-memory documents, for Options.Config. It is what
// pkg/mockdtest uses to load configs given as text or Go values.
func LoadConfig(files []string, docs []Document) (*config.Config, error) {
	return config.LoadDocuments(files, docs, config.LoadOptions{Render: RenderEJS, ServerKeys: ServerKeys()})
}
