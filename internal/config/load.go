package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source is one imposter definition read from a config file, with what is needed to say where a
// problem in it stands.
type Source struct {
	File      string
	Path      string // e.g. "imposters[0]"
	Value     Value
	positions Positions // nil for JSON files
}

// Locate prefixes msg with the file and, for YAML, the line and column of path.
func (s *Source) Locate(path, msg string) string {
	if s.positions != nil {
		if line, col, ok := s.positions.Lookup(path); ok {
			return fmt.Sprintf("%s:%d:%d: %s: %s", s.File, line, col, path, msg)
		}
	}
	if path != "" {
		return fmt.Sprintf("%s: %s: %s", s.File, path, msg)
	}
	return fmt.Sprintf("%s: %s", s.File, msg)
}

// Strict reports whether the source is mockd YAML (unknown keys are errors).
func (s *Source) Strict() bool { return s.positions != nil }

// Config is everything read from one or more config files.
type Config struct {
	Imposters []*Source
	// Server holds the keys of YAML `server:` blocks (the flag names of `mockd start`), later files winning.
	Server *Object
	// ServerFile names the file each server key came from, for error messages.
	ServerFile map[string]string
	serverKeys []string // LoadOptions.ServerKeys
}

// LoadError lists every problem found while loading config files; nothing should start when it occurs.
type LoadError struct {
	Problems []string
}

func (e *LoadError) Error() string {
	return strings.Join(e.Problems, "\n")
}

// Load reads every file, directory (its *.yaml, *.yml and *.json files, sorted) and glob named,
// and merges their imposters in order. YAML files may use ${ENV} expansion, bodyFile and a
// server block; JSON files are read as Mountebank reads them.
func Load(patterns []string) (*Config, error) {
	return LoadWith(patterns, LoadOptions{})
}

// Renderer turns a JSON config file into JSON text (Mountebank's EJS templating).
type Renderer func(file string) (string, error)

// LoadOptions say how config files are read.
type LoadOptions struct {
	// Render, when set, renders every JSON file first, as Mountebank renders --configfile files
	// as EJS templates unless --noParse.
	Render Renderer
	// ServerKeys are the keys a YAML server block may hold (the server flags, app.ServerKeys);
	// nil accepts any key.
	ServerKeys []string
}

// LoadWith is Load as opts say.
func LoadWith(patterns []string, opts LoadOptions) (*Config, error) {
	return LoadDocuments(patterns, nil, opts)
}

// Document is a config file's text held in memory (for embedding). Name decides the format
// (.yaml and .yml are mockd YAML, anything else Mountebank JSON), names it in errors, and is
// where relative bodyFile paths resolve from.
type Document struct {
	Name string
	Data []byte
}

// LoadDocuments is LoadWith followed by docs, merged in that order. Documents are never
// rendered as EJS templates.
func LoadDocuments(patterns []string, docs []Document, opts LoadOptions) (*Config, error) {
	files, err := expandPatterns(patterns)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Server: &Object{}, ServerFile: map[string]string{}, serverKeys: opts.ServerKeys}
	var problems []string
	for _, file := range files {
		problems = append(problems, cfg.loadFile(file, opts.Render)...)
	}
	for _, doc := range docs {
		v, pos, err := decode(doc.Name, doc.Data)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		problems = append(problems, cfg.add(doc.Name, v, pos)...)
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	return cfg, nil
}

// Files returns the config files patterns name (files, the config files of directories, and
// globs), in the order Load reads them.
func Files(patterns []string) ([]string, error) { return expandPatterns(patterns) }

func expandPatterns(patterns []string) ([]string, error) {
	var files []string
	var problems []string
	seen := map[string]bool{}
	addFile := func(f string) {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	for _, p := range patterns {
		matches := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: bad glob pattern: %v", p, err))
				continue
			}
			if len(m) == 0 {
				problems = append(problems, fmt.Sprintf("%s: no file matches this pattern", p))
				continue
			}
			matches = m
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: cannot read config: %v", m, unwrapPathError(err)))
				continue
			}
			if !info.IsDir() {
				addFile(m)
				continue
			}
			entries, err := os.ReadDir(m)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: cannot read directory: %v", m, unwrapPathError(err)))
				continue
			}
			var names []string
			for _, e := range entries {
				switch strings.ToLower(filepath.Ext(e.Name())) {
				case ".yaml", ".yml", ".json", ".ejs":
					if !e.IsDir() {
						names = append(names, filepath.Join(m, e.Name()))
					}
				}
			}
			sort.Strings(names)
			if len(names) == 0 {
				problems = append(problems, fmt.Sprintf("%s: directory holds no .yaml, .yml or .json file", m))
			}
			for _, n := range names {
				addFile(n)
			}
		}
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	return files, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsYAML reports whether a file name is read as mockd YAML.
func IsYAML(file string) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		return true
	}
	return false
}

// ReadFile decodes one config file to a Value: YAML (with positions) or Mountebank JSON.
func ReadFile(file string) (Value, Positions, error) {
	data, err := ReadLimited(file)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot read config: %w", file, unwrapPathError(err))
	}
	return decode(file, data)
}

// decode parses a config file's text: YAML (with positions) or Mountebank JSON, by file name.
func decode(file string, data []byte) (Value, Positions, error) {
	if IsYAML(file) {
		v, pos, err := ParseYAML(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: invalid YAML: %w", file, err)
		}
		return v, pos, nil
	}
	v, err := ParseJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: invalid JSON: %w", file, err)
	}
	return v, nil, nil
}

func (c *Config) loadFile(file string, render Renderer) []string {
	var v Value
	var pos Positions
	var err error
	if render != nil && !IsYAML(file) {
		var text string
		if text, err = render(file); err != nil {
			return []string{fmt.Sprintf("%s: cannot render EJS template: %v", file, err)}
		}
		if v, err = ParseJSON([]byte(text)); err != nil {
			err = fmt.Errorf("%s: invalid JSON after EJS rendering: %w", file, err)
		}
	} else {
		v, pos, err = ReadFile(file)
	}
	if err != nil {
		return []string{err.Error()}
	}
	return c.add(file, v, pos)
}

// add merges the imposters and server block of one decoded file; pos is nil for JSON.
func (c *Config) add(file string, v Value, pos Positions) []string {
	strict := pos != nil
	src := &Source{File: file, positions: pos}
	root, ok := v.(*Object)
	if !ok {
		return []string{src.Locate("", "expected an object with an \"imposters\" list (or a single imposter)")}
	}
	var problems []string
	var list []any
	switch {
	case root.Has("imposters"):
		l, isList := mustGet(root, "imposters").([]any)
		if !isList && mustGet(root, "imposters") != nil {
			problems = append(problems, src.Locate("imposters", "expected a list of imposters"))
		}
		list = l
		if strict {
			for _, p := range unknownKeys(root, "", []string{"imposters", "server"}) {
				problems = append(problems, src.Locate(p.Path, p.Message))
			}
		}
	case root.Has("protocol") || root.Has("port") || root.Has("stubs"):
		list = []any{root}
	case strict && root.Len() == 0:
		// An empty YAML file is an empty config.
	default:
		if !root.Has("server") {
			problems = append(problems, src.Locate("", "expected an object with an \"imposters\" list (or a single imposter)"))
		}
	}
	if server := AsObject(mustGet(root, "server")); server != nil && strict {
		if c.serverKeys != nil {
			for _, p := range unknownKeys(server, "server", c.serverKeys) {
				problems = append(problems, src.Locate(p.Path, p.Message))
			}
		}
		for _, m := range server.Members {
			c.Server.Set(m.Key, m.Value)
			c.ServerFile[m.Key] = file
		}
	}
	dir := filepath.Dir(file)
	for i, iv := range list {
		if strict {
			defaultProtocol(iv)
		}
		path := fmt.Sprintf("imposters[%d]", i)
		if len(list) == 1 && !root.Has("imposters") {
			path = ""
		}
		if strict {
			if err := resolveBodyFiles(iv, dir, path); err != nil {
				problems = append(problems, src.Locate(err.Path, err.Message))
				continue
			}
		}
		c.Imposters = append(c.Imposters, &Source{File: file, Path: path, Value: iv, positions: pos})
	}
	return problems
}

// DefaultProtocol gives every imposter of a YAML document (a list of imposters or one imposter)
// that names no protocol the protocol http, as its first key: mockd YAML's default, so that
// `- port: 4545` with stubs is an http imposter. Mountebank JSON, where the protocol is
// required, is not passed here. mockd convert writes the protocol into the JSON it makes.
func DefaultProtocol(doc Value) {
	root := AsObject(doc)
	if root == nil {
		return
	}
	if !root.Has("imposters") {
		if root.Has("port") || root.Has("stubs") {
			defaultProtocol(root)
		}
		return
	}
	list, _ := mustGet(root, "imposters").([]any)
	for _, iv := range list {
		defaultProtocol(iv)
	}
}

func defaultProtocol(imposter Value) {
	if o := AsObject(imposter); o != nil && !o.Has("protocol") {
		o.Members = append([]Member{{Key: "protocol", Value: "http"}}, o.Members...)
	}
}

// InlineBodyFiles replaces every `bodyFile` of a YAML document (a list of imposters or one
// imposter) with a `body` holding the file's text, read relative to dir: what mockd convert
// writes to Mountebank JSON, which has no bodyFile.
func InlineBodyFiles(doc Value, dir string) error {
	root := AsObject(doc)
	if root == nil {
		return nil
	}
	if !root.Has("imposters") {
		if err := resolveBodyFiles(root, dir, ""); err != nil {
			return err
		}
		return nil
	}
	list, _ := mustGet(root, "imposters").([]any)
	for i, iv := range list {
		if err := resolveBodyFiles(iv, dir, fmt.Sprintf("imposters[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// resolveBodyFiles replaces every `bodyFile` of an `is` response (and of defaultResponse) with a
// `body` holding the file's text, read relative to dir.
func resolveBodyFiles(imposter Value, dir, path string) *Error {
	obj := AsObject(imposter)
	if obj == nil {
		return nil
	}
	fix := func(is *Object, p string) *Error {
		bf, ok := is.Get("bodyFile")
		if !ok {
			return nil
		}
		name, isStr := bf.(string)
		if !isStr || name == "" {
			return &Error{Code: CodeBadData, Path: p + ".bodyFile", Message: "bodyFile must be a file name"}
		}
		if is.Has("body") {
			return &Error{Code: CodeBadData, Path: p + ".bodyFile", Message: "at most one of body and bodyFile may be set"}
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		data, err := ReadLimited(name)
		if err != nil {
			return &Error{Code: CodeBadData, Path: p + ".bodyFile", Message: fmt.Sprintf("cannot read %q: %v", name, unwrapPathError(err))}
		}
		// Keep the key's position: replace bodyFile with body in place.
		for i := range is.Members {
			if is.Members[i].Key == "bodyFile" {
				is.Members[i] = Member{Key: "body", Value: string(data)}
			}
		}
		return nil
	}
	if dr := AsObject(mustGet(obj, "defaultResponse")); dr != nil {
		if err := fix(dr, JoinPath(path, "defaultResponse")); err != nil {
			return err
		}
	}
	stubs, _ := mustGet(obj, "stubs").([]any)
	for i, s := range stubs {
		responses, _ := mustGet(AsObject(s), "responses").([]any)
		for j, r := range responses {
			if is := AsObject(mustGet(AsObject(r), "is")); is != nil {
				if err := fix(is, JoinPath(path, fmt.Sprintf("stubs[%d].responses[%d].is", i, j))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
