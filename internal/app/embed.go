package app

import (
	"fmt"
	"io/fs"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/customproto"
)

// Document is a config file's text held in memory; see config.Document.
type Document = config.Document

// LoadConfig reads config files, directories and globs (Mountebank JSON rendered as EJS, as
// `mockd serve -c` does) followed by in-memory documents, for Options.Config. It is what
// pkg/mockdtest uses to load configs given as text or Go values.
func LoadConfig(files []string, docs []Document) (*config.Config, error) {
	return config.LoadDocuments(files, docs, config.LoadOptions{Render: RenderEJS, ServerKeys: ServerKeys()})
}

// LoadProtofile reads the custom protocols of a protofile for Options.CustomProtocols, for an
// embedder (pkg/mockdtest), which asked for the file: unlike `mockd start`, a missing file is
// an error too.
func LoadProtofile(path string) ([]customproto.Spec, error) {
	specs, err := customproto.Load(path)
	if err == nil && specs == nil {
		err = fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("protofile %s: %w", path, err)
	}
	return specs, nil
}

// CustomProtocol is one protofile entry, {name: {"createCommand": createCommand}}, for
// Options.CustomProtocols.
func CustomProtocol(name, createCommand string) customproto.Spec {
	return customproto.Spec{Name: name, CreateCommand: createCommand}
}
