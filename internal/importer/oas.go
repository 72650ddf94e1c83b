package importer

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The import reads OpenAPI documents itself, as YAML nodes (the YAML package the config reader
// already uses), rather than through a full OpenAPI library: it needs a few dozen keywords, and
// such a library, linked into the binary, is initialised and its type tables touched at every
// `mockd serve` (about 2 MiB of resident memory and 9 MB of binary for a command most runs never
// use; see issue 26). What the import reads: paths, their operations and parameters, request
// bodies, responses with their headers and media types, examples, and the schema keywords
// listed on oasNode's helpers; $ref is followed within the document and into other files
// relative to it (file.yaml#/pointer), as it may stand anywhere an object may.

// oasReader reads one document and the files its references name.
type oasReader struct {
	files map[string]*yaml.Node // root node by cleaned path
	notes []refNote             // references that cannot be followed, in the order met
	seen  map[string]bool       // notes already made, by file, line and reference
}

// refNote is a reference that cannot be followed.
type refNote struct {
	file string
	line int
	msg  string
}

// oasNode is a node of one of the reader's files, with its references followed; the zero
// oasNode stands for an absent (or unresolvable) value, and every helper accepts it.
type oasNode struct {
	n    *yaml.Node
	file string
	r    *oasReader
}

// maxRefHops bounds a chain of references ($ref to a $ref ...): longer chains are cycles.
const maxRefHops = 64

// parseOAS parses data (YAML or JSON) into its document's root node.
func parseOAS(data []byte) (*yaml.Node, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("the file is empty")
	}
	var doc yaml.Node
	err := yaml.Unmarshal(data, &doc)
	if err != nil && trimmed[0] == '{' && bytes.Contains(data, []byte(`\/`)) {
		// `\/` is a JSON escape YAML does not have.
		err = yaml.Unmarshal(bytes.ReplaceAll(data, []byte(`\/`), []byte(`/`)), &doc)
	}
	if err != nil {
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("its top level is not a mapping")
	}
	return root, nil
}

// openOAS returns the document's root, its OpenAPI version, and an error when the document is
// not OpenAPI 3.0 or 3.1.
func openOAS(file string, data []byte) (oasNode, error) {
	root, err := parseOAS(data)
	if err != nil {
		return oasNode{}, fmt.Errorf("%s: not an OpenAPI document: %w", file, err)
	}
	r := &oasReader{files: map[string]*yaml.Node{filepath.Clean(file): root}, seen: map[string]bool{}}
	doc := oasNode{n: root, file: filepath.Clean(file), r: r}
	version := doc.str("openapi")
	if version == "" {
		if v := doc.str("swagger"); v != "" {
			return oasNode{}, fmt.Errorf("%s: OpenAPI %s is not supported (3.0 and 3.1 are)", file, v)
		}
		return oasNode{}, fmt.Errorf("%s: not an OpenAPI document: it has no `openapi` version", file)
	}
	if !strings.HasPrefix(version, "3.0") && !strings.HasPrefix(version, "3.1") {
		return oasNode{}, fmt.Errorf("%s: OpenAPI %s is not supported (3.0 and 3.1 are)", file, version)
	}
	return doc, nil
}

// refNotes returns the notes on the references that could not be followed.
func (r *oasReader) refNotes() []refNote { return r.notes }

func (r *oasReader) fail(file string, at *yaml.Node, format string, args ...any) {
	line := 0
	if at != nil {
		line = at.Line
	}
	msg := fmt.Sprintf(format, args...)
	key := file + "\x00" + strconv.Itoa(line) + "\x00" + msg
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	r.notes = append(r.notes, refNote{file: file, line: line, msg: msg})
}

// load returns the root of the file at path, reading it on first use.
func (r *oasReader) load(path string) (*yaml.Node, error) {
	path = filepath.Clean(path)
	if root, ok := r.files[path]; ok {
		if root == nil {
			return nil, errors.New("it cannot be read")
		}
		return root, nil
	}
	r.files[path] = nil
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	root, err := parseOAS(data)
	if err != nil {
		return nil, err
	}
	r.files[path] = root
	return root, nil
}

// resolve follows aliases and references from n (of file) to the node they stand for. A
// circular chain is noted where it is entered.
func (r *oasReader) resolve(n *yaml.Node, file string) oasNode {
	var first *yaml.Node
	firstFile := file
	for hops := 0; n != nil; hops++ {
		for n.Kind == yaml.AliasNode && n.Alias != nil && hops < maxRefHops {
			n, hops = n.Alias, hops+1
		}
		ref := mapValue(n, "$ref")
		if ref == nil || ref.Kind != yaml.ScalarNode {
			return oasNode{n: n, file: file, r: r}
		}
		if first == nil {
			first, firstFile = ref, file
		}
		if hops >= maxRefHops {
			r.fail(firstFile, first, "$ref %q: circular reference", first.Value)
			return oasNode{}
		}
		target, targetFile, err := r.follow(ref.Value, file)
		if err != nil {
			r.fail(file, ref, "$ref %q: %v", ref.Value, err)
			return oasNode{}
		}
		n, file = target, targetFile
	}
	return oasNode{}
}

// follow finds the node ref (relative to file) names.
func (r *oasReader) follow(ref, file string) (*yaml.Node, string, error) {
	where, pointer, _ := strings.Cut(ref, "#")
	target := file
	if where != "" {
		u, err := url.Parse(where)
		if err != nil || u.Scheme != "" && len(u.Scheme) > 1 || u.Host != "" {
			return nil, "", errors.New("only references within the document and to files beside it are followed")
		}
		p := u.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), filepath.FromSlash(p))
		}
		target = filepath.Clean(p)
	}
	root, err := r.load(target)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read %s: %w", target, err)
	}
	n := root
	if pointer == "" || pointer == "/" {
		return n, target, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, "", errors.New("not a JSON pointer")
	}
	if unescaped, err := url.PathUnescape(pointer); err == nil {
		pointer = unescaped
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			next = mapValue(n, tok)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return nil, "", errors.New("no such place in " + filepath.Base(target))
		}
		n = next
	}
	return n, target, nil
}

// mapValue is the value of key in the mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// ok reports whether the node is present.
func (o oasNode) ok() bool { return o.n != nil }

// raw returns key's value as it is written (examples are values, not references).
func (o oasNode) raw(key string) *yaml.Node {
	v := mapValue(o.n, key)
	for hops := 0; v != nil && v.Kind == yaml.AliasNode && v.Alias != nil && hops < maxRefHops; hops++ {
		v = v.Alias
	}
	return v
}

// get returns key's value with its references followed.
func (o oasNode) get(key string) oasNode {
	v := mapValue(o.n, key)
	if v == nil {
		return oasNode{}
	}
	return o.r.resolve(v, o.file)
}

// has reports whether key is present.
func (o oasNode) has(key string) bool { return mapValue(o.n, key) != nil }

// str returns key's value when it is a scalar, else "".
func (o oasNode) str(key string) string {
	if v := o.raw(key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// boolean returns key's value when it is a boolean, else nil.
func (o oasNode) boolean(key string) *bool {
	if v := o.raw(key); v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		if b, err := strconv.ParseBool(strings.ToLower(v.Value)); err == nil {
			return &b
		}
	}
	return nil
}

// number returns key's value when it is a number, else nil.
func (o oasNode) number(key string) *float64 {
	if v := o.raw(key); v != nil && v.Kind == yaml.ScalarNode && (v.Tag == "!!int" || v.Tag == "!!float") {
		if f, ok := nodeValue(v).(float64); ok {
			return &f
		}
	}
	return nil
}

// pair is one key of a mapping and its value, references followed.
type pair struct {
	key string
	val oasNode
}

// pairs returns the members of the mapping in document order, references followed.
func (o oasNode) pairs() []pair {
	if o.n == nil || o.n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(o.n.Content)/2)
	for i := 0; i+1 < len(o.n.Content); i += 2 {
		out = append(out, pair{o.n.Content[i].Value, o.r.resolve(o.n.Content[i+1], o.file)})
	}
	return out
}

// size is the number of members of a mapping or items of a sequence.
func (o oasNode) size() int {
	if o.n == nil {
		return 0
	}
	switch o.n.Kind {
	case yaml.MappingNode:
		return len(o.n.Content) / 2
	case yaml.SequenceNode:
		return len(o.n.Content)
	}
	return 0
}

// items returns the items of the sequence, references followed.
func (o oasNode) items() []oasNode {
	if o.n == nil || o.n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]oasNode, 0, len(o.n.Content))
	for _, c := range o.n.Content {
		out = append(out, o.r.resolve(c, o.file))
	}
	return out
}

// rawItems returns the items of key's sequence as written (enum, examples).
func (o oasNode) rawItems(key string) []*yaml.Node {
	v := o.raw(key)
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	return v.Content
}

// stringList returns key's value as a list of strings: the items of a sequence, or one scalar.
func (o oasNode) stringList(key string) []string {
	v := o.raw(key)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.ScalarNode {
		return []string{v.Value}
	}
	var out []string
	for _, c := range v.Content {
		if c.Kind == yaml.ScalarNode {
			out = append(out, c.Value)
		}
	}
	return out
}
