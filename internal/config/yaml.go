package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mockd/mockd/internal/jsvalue"
)

// Positions maps a value's path (as Path.String gives it, e.g. "imposters[0].stubs[2]") to the
// 1-based line and column where it stands in a YAML file.
type Positions map[string][2]int

// Lookup returns the position of path or of its nearest ancestor that has one.
func (p Positions) Lookup(path string) (line, col int, ok bool) {
	for {
		if pos, found := p[path]; found {
			return pos[0], pos[1], true
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			if pos, found := p[""]; found && path != "" {
				return pos[0], pos[1], true
			}
			return 0, 0, false
		}
		path = path[:i]
	}
}

// ParseYAML decodes a YAML document into a Value, expanding environment variables in plain and
// quoted scalars (see ExpandEnv), and returns where each value stands.
func ParseYAML(data []byte) (Value, Positions, error) {
	return parseYAML(data, true)
}

// ParseYAMLKeepEnv is ParseYAML without expanding environment variables: ${NAME} and
// ${NAME:-default} stay as written (and $${NAME} reads ${NAME}), for mockd convert --keep-env.
func ParseYAMLKeepEnv(data []byte) (Value, Positions, error) {
	return parseYAML(data, false)
}

func parseYAML(data []byte, expandEnv bool) (Value, Positions, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return NewObject(), Positions{}, nil
		}
		return nil, nil, err
	}
	d := &yamlDecoder{pos: Positions{}, expandEnv: expandEnv, budget: maxAliasValues + 10*countYAMLNodes(&doc)}
	v, err := d.value(&doc, "", 0)
	if err != nil {
		return nil, nil, err
	}
	return v, d.pos, nil
}

// yamlDecoder turns yaml.v3 nodes into Values, noting where each stands.
type yamlDecoder struct {
	pos       Positions
	expandEnv bool
	budget    int // values it may still make (see maxAliasValues)
}

// maxAliasValues bounds what aliases may add to a YAML document's values: a document makes at
// most this many values plus ten for each node written in it. Each alias is expanded into a copy
// of what it names, so nine lines of aliases of aliases (the "billion laughs") made 10^9 values:
// mockd took 50 s and 3.4 GB before it started.
const maxAliasValues = 1_000_000

// countYAMLNodes counts the nodes written in a document, aliases not followed.
func countYAMLNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countYAMLNodes(k)
	}
	return c
}

func (d *yamlDecoder) value(n *yaml.Node, path string, depth int) (Value, error) {
	pos := d.pos
	if depth > 1000 {
		return nil, fmt.Errorf("line %d: nesting too deep", n.Line)
	}
	if d.budget--; d.budget < 0 {
		return nil, fmt.Errorf("line %d: aliases expand the document past %d values (an alias bomb?)", n.Line, maxAliasValues)
	}
	if n.Line > 0 {
		if _, seen := pos[path]; !seen {
			pos[path] = [2]int{n.Line, n.Column}
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return NewObject(), nil
		}
		return d.value(n.Content[0], path, depth+1)
	case yaml.AliasNode:
		return d.value(n.Alias, path, depth+1)
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := d.value(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.MappingNode:
		o := &Object{}
		seen := map[string]int{} // key -> its line, for duplicates (the last would win silently)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				merged, err := d.value(vn, path, depth+1)
				if err != nil {
					return nil, err
				}
				mergeInto(o, merged)
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be strings", k.Line)
			}
			if first, dup := seen[k.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q (first at line %d)", k.Line, k.Value, first)
			}
			seen[k.Value] = k.Line
			child := JoinPath(path, k.Value)
			if k.Line > 0 {
				pos[child] = [2]int{k.Line, k.Column}
			}
			v, err := d.value(vn, child, depth+1)
			if err != nil {
				return nil, err
			}
			o.Set(k.Value, v)
		}
		return o, nil
	case yaml.ScalarNode:
		return yamlScalar(n, d.expandEnv)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func mergeInto(o *Object, merged Value) {
	switch m := merged.(type) {
	case *Object:
		for _, mem := range m.Members {
			if !o.Has(mem.Key) {
				o.Set(mem.Key, mem.Value)
			}
		}
	case []any:
		for _, e := range m {
			mergeInto(o, e)
		}
	}
}

// JoinPath appends key to a config path ("imposters[0]" + "port" = "imposters[0].port").
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func yamlScalar(n *yaml.Node, expandEnv bool) (Value, error) {
	value := n.Value
	plain := n.Style == 0 || n.Style == yaml.TaggedStyle
	if strings.Contains(value, "$") && (n.Tag == "!!str" || plain) {
		expand := ExpandEnv
		if !expandEnv {
			expand = keepEnv
		}
		expanded, err := expand(value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if expanded != value {
			if !plain {
				return expanded, nil
			}
			// A plain scalar that was an expansion takes the type its expansion would have had.
			return resolvePlain(expanded), nil
		}
	}
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return f, nil
	case "!!binary":
		return value, nil
	default:
		return value, nil
	}
}

// resolvePlain gives a plain scalar produced by an expansion the YAML core type it spells.
func resolvePlain(s string) Value {
	switch s {
	case "", "~", "null", "Null", "NULL":
		if s == "" {
			return ""
		}
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(i)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !strings.ContainsAny(s, "xXpP_") {
		return f
	}
	return s
}

var envRef = regexp.MustCompile(`\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// ExpandEnv replaces ${NAME} with the environment variable NAME and ${NAME:-default} with NAME's
// value or, when NAME is unset or empty, default. A ${NAME} whose variable is unset is left as it is,
// because Mountebank's copy behavior uses the same ${TOKEN} syntax in responses; $${NAME} is a
// literal ${NAME}.
func ExpandEnv(s string) (string, error) {
	var out strings.Builder
	last := 0
	for _, m := range envRef.FindAllStringSubmatchIndex(s, -1) {
		out.WriteString(s[last:m[0]])
		last = m[1]
		if s[m[0]:m[1]] == "$${" {
			out.WriteString("${")
			continue
		}
		name := s[m[2]:m[3]]
		val, set := os.LookupEnv(name)
		switch {
		case m[4] >= 0: // has a default
			if val == "" {
				val = s[m[6]:m[7]]
			}
			out.WriteString(val)
		case set:
			out.WriteString(val)
		default:
			out.WriteString(s[m[0]:m[1]])
		}
	}
	out.WriteString(s[last:])
	return out.String(), nil
}

// keepEnv is ExpandEnv that expands nothing: only $${NAME} is read as ${NAME}.
func keepEnv(s string) (string, error) {
	return strings.ReplaceAll(s, "$${", "${"), nil
}

// MarshalYAML renders v as YAML, keeping key order. Strings that YAML would read as another type
// are quoted, so the result loads back to the identical value.
func MarshalYAML(v Value) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yamlNode(v)); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func yamlNode(v Value) *yaml.Node {
	switch t := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}
	case float64:
		switch {
		case math.IsInf(t, 1): // a JSON number past float64 (1e400) is Infinity, as in JavaScript
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: ".inf"}
		case math.IsInf(t, -1):
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: "-.inf"}
		case math.IsNaN(t):
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: ".nan"}
		}
		if t == math.Trunc(t) && math.Abs(t) >= 1e18 && math.Abs(t) < 1e21 {
			// JavaScript writes these as digits (1e20 is 100000000000000000000), which YAML
			// reads as an int or a float by their size, and neither tag loads back in all of
			// them: an exponent is a float to every YAML reader.
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(t, 'e', -1, 64)}
		}
		tag := "!!int"
		if t != math.Trunc(t) || math.Abs(t) >= 1e21 {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: jsvalue.FormatNumber(t)}
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}
		if strings.Contains(t, "\n") {
			n.Style = yaml.LiteralStyle
			if strings.HasSuffix(t, " ") || strings.Contains(t, " \n") || strings.Contains(t, "\t") || strings.HasPrefix(t, " ") {
				n.Style = yaml.DoubleQuotedStyle
			}
		}
		if strings.Contains(t, "${") {
			// Keep ${TOKEN} literal when the file is loaded again.
			n.Value = strings.ReplaceAll(t, "${", "$${")
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range t {
			n.Content = append(n.Content, yamlNode(e))
		}
		return n
	case *Object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if t == nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		for _, m := range t.Members {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m.Key}, yamlNode(m.Value))
		}
		return n
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}
