// Package importer turns other tools' mock definitions (OpenAPI documents, WireMock mappings)
// into mockd YAML. Whatever it cannot carry over is reported as a Note with where it stands in
// the source, never dropped silently.
package importer

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mockd/mockd/internal/config"
)

// Note is one thing an import could not carry over (or carried over only in part).
type Note struct {
	File    string
	Line    int // 0 when unknown
	Path    string
	Message string
}

func (n Note) String() string {
	var b strings.Builder
	b.WriteString(n.File)
	if n.Line > 0 {
		fmt.Fprintf(&b, ":%d", n.Line)
	}
	if n.Path != "" {
		b.WriteString(": ")
		b.WriteString(n.Path)
	}
	b.WriteString(": ")
	b.WriteString(n.Message)
	return b.String()
}

// Result is what an import produced: the mockd config and the notes.
type Result struct {
	Config *config.Object // {imposters: [...]}
	Notes  []Note
	// Stubs counts the stubs written.
	Stubs int
}

// YAML renders the result's config as mockd YAML, headed by a comment naming where it came from.
func (r *Result) YAML(header string) ([]byte, error) {
	body, err := config.MarshalYAML(r.Config)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	b.WriteString(string(body))
	return []byte(b.String()), nil
}

// sortNotes orders the notes by file and line (stable: notes without a line keep their order).
func (r *Result) sortNotes() {
	sort.SliceStable(r.Notes, func(i, j int) bool {
		a, b := r.Notes[i], r.Notes[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
}

// source is one file being imported, with the positions of its values for notes.
type source struct {
	file string
	pos  config.Positions
	res  *Result
}

func newSource(file string, data []byte, res *Result) *source {
	s := &source{file: file, res: res}
	// JSON is YAML: the YAML reader gives positions for either.
	if _, pos, err := config.ParseYAML(data); err == nil {
		s.pos = pos
	}
	return s
}

// note records that what stands at path was not carried over as it is.
func (s *source) note(path, format string, args ...any) {
	n := Note{File: s.file, Path: path, Message: fmt.Sprintf(format, args...)}
	if s.pos != nil {
		if line, _, ok := s.pos.Lookup(path); ok {
			n.Line = line
		}
	}
	s.res.Notes = append(s.res.Notes, n)
}

func readFile(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", file, err)
	}
	return data, nil
}

// imposterConfig wraps stubs into a one-imposter mockd config, with the defaultResponse dflt
// when it is not nil.
func imposterConfig(port int, name string, dflt *config.Object, stubs []any) *config.Object {
	imp := config.NewObject("port", float64(port), "protocol", "http")
	if name != "" {
		imp.Set("name", name)
	}
	if dflt != nil {
		imp.Set("defaultResponse", dflt)
	}
	if stubs == nil {
		stubs = []any{}
	}
	imp.Set("stubs", stubs)
	return config.NewObject("imposters", []any{imp})
}
