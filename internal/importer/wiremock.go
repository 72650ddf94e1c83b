package importer

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// WireMockOptions tune WireMock.
type WireMockOptions struct {
	// Port is the imposter's port.
	Port int
	// OutDir is the directory of the YAML written: bodyFile paths are made relative to it.
	OutDir string
}

// WireMock turns WireMock JSON stub mappings into one imposter. src is a mappings file, a
// directory of them, or a WireMock root directory (holding mappings/ and __files/). Mappings are
// ordered by priority (1 first; 5 when absent), then by file name and position, since mockd
// answers with the first matching stub.
func WireMock(src string, opts WireMockOptions) (*Result, error) {
	info, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", src, err)
	}
	files := []string{src}
	filesDir := filepath.Join(filepath.Dir(src), "__files")
	if info.IsDir() {
		dir := src
		if st, err := os.Stat(filepath.Join(src, "mappings")); err == nil && st.IsDir() {
			dir = filepath.Join(src, "mappings")
		}
		filesDir = filepath.Join(filepath.Dir(dir), "__files")
		files = nil
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", dir, err)
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .json mapping files", dir)
		}
	}
	res := &Result{}
	type mapped struct {
		priority float64
		stub     *config.Object
	}
	var all []mapped
	for _, file := range files {
		data, err := readFile(file)
		if err != nil {
			return nil, err
		}
		v, err := config.ParseJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", file, err)
		}
		w := &wiremockImport{source: newSource(file, data, res), filesDir: filesDir, outDir: opts.OutDir}
		root := config.AsObject(v)
		var list []any
		prefix := ""
		switch {
		case root == nil:
			return nil, fmt.Errorf("%s: expected a mapping object or {\"mappings\": [...]}", file)
		case root.Has("mappings"):
			list, _ = get(root, "mappings").([]any)
			prefix = "mappings"
		default:
			list = []any{root}
		}
		for i, mv := range list {
			where := prefix
			if prefix != "" {
				where = fmt.Sprintf("%s[%d]", prefix, i)
			}
			m := config.AsObject(mv)
			if m == nil {
				w.note(where, "not a mapping object: skipped")
				continue
			}
			s := w.mapping(m, where)
			if s == nil {
				continue
			}
			p, ok := get(m, "priority").(float64)
			if !ok {
				p = 5
			}
			all = append(all, mapped{p, s})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].priority < all[j].priority })
	stubs := make([]any, len(all))
	for i, m := range all {
		stubs[i] = m.stub
	}
	// WireMock answers a request no mapping matches with 404 (Mountebank with 200): a test that
	// expects that keeps passing. Every stub's is names its status, which the default would
	// otherwise fill in.
	res.Config = imposterConfig(opts.Port, "", config.NewObject("statusCode", 404.0), stubs)
	res.Stubs = len(stubs)
	res.sortNotes()
	return res, nil
}

type wiremockImport struct {
	*source
	filesDir, outDir string
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// mappingKeys are the keys of a mapping that carry nothing a mock needs.
var mappingIgnored = map[string]bool{"id": true, "uuid": true, "name": true, "persistent": true,
	"metadata": true, "insertionIndex": true, "priority": true}

// mapping converts one stub mapping; nil when it cannot be served at all.
func (w *wiremockImport) mapping(m *config.Object, where string) *config.Object {
	stub := &config.Object{}
	for _, mem := range m.Members {
		switch mem.Key {
		case "request", "response", "scenarioName", "requiredScenarioState", "newScenarioState":
		default:
			if !mappingIgnored[mem.Key] {
				w.note(config.JoinPath(where, mem.Key), "%q not carried over", mem.Key)
			}
		}
	}
	req := config.AsObject(get(m, "request"))
	if req == nil {
		req = &config.Object{}
	}
	preds := w.request(req, config.JoinPath(where, "request"))
	if len(preds) > 0 {
		stub.Set("predicates", preds)
	}
	resp := config.AsObject(get(m, "response"))
	if resp == nil {
		resp = &config.Object{}
	}
	r := w.response(resp, config.JoinPath(where, "response"))
	stub.Set("responses", []any{r})
	// mockd's scenario keys are WireMock's.
	for _, k := range []string{"scenarioName", "requiredScenarioState", "newScenarioState"} {
		if v, ok := m.Get(k); ok {
			stub.Set(k, v)
		}
	}
	return stub
}

// request converts a request pattern into Mountebank predicates (case-sensitive, as WireMock
// matches).
func (w *wiremockImport) request(req *config.Object, where string) []any {
	var preds []any
	add := func(p *config.Object) { preds = append(preds, p) }
	for _, mem := range req.Members {
		at := config.JoinPath(where, mem.Key)
		switch mem.Key {
		case "method":
			if m, _ := mem.Value.(string); m != "" && m != "ANY" {
				add(config.NewObject("equals", config.NewObject("method", m)))
			}
		case "url":
			u, _ := mem.Value.(string)
			path, query, hasQuery := strings.Cut(u, "?")
			add(config.NewObject("equals", config.NewObject("path", path), "caseSensitive", true))
			q := &config.Object{}
			if hasQuery {
				for _, kv := range strings.Split(query, "&") {
					k, v, _ := strings.Cut(kv, "=")
					if prev, ok := q.Get(k); ok {
						if arr, isArr := prev.([]any); isArr {
							q.Set(k, append(arr, v))
						} else {
							q.Set(k, []any{prev, v})
						}
					} else {
						q.Set(k, v)
					}
				}
			}
			add(config.NewObject("deepEquals", config.NewObject("query", q), "caseSensitive", true))
		case "urlPath":
			add(config.NewObject("equals", config.NewObject("path", jsText(mem.Value)), "caseSensitive", true))
		case "urlPathPattern":
			add(config.NewObject("matches", config.NewObject("path", fullMatch(jsText(mem.Value))), "caseSensitive", true))
		case "urlPattern":
			p := jsText(mem.Value)
			if strings.Contains(p, `\?`) || strings.Contains(p, "?") && !strings.Contains(p, ".?") {
				w.note(at, "urlPattern is matched against the path only (mockd matches the query separately)")
			}
			add(config.NewObject("matches", config.NewObject("path", fullMatch(p)), "caseSensitive", true))
		case "urlPathTemplate":
			add(config.NewObject("matches", config.NewObject("path", templateRegex(jsText(mem.Value))), "caseSensitive", true))
		case "queryParameters", "headers":
			field := "query"
			if mem.Key == "headers" {
				field = "headers"
			}
			params := config.AsObject(mem.Value)
			if params == nil {
				continue
			}
			for _, pm := range params.Members {
				if p := w.valuePattern(field, pm.Key, config.AsObject(pm.Value), config.JoinPath(at, pm.Key)); p != nil {
					add(p)
				}
			}
		case "basicAuthCredentials", "basicAuth":
			c := config.AsObject(mem.Value)
			cred := jsText(get(c, "username")) + ":" + jsText(get(c, "password"))
			add(config.NewObject("equals", config.NewObject("headers",
				config.NewObject("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))), "caseSensitive", true))
		case "bodyPatterns":
			list, _ := mem.Value.([]any)
			for i, bp := range list {
				if p := w.bodyPattern(config.AsObject(bp), fmt.Sprintf("%s[%d]", at, i)); p != nil {
					add(p)
				}
			}
		default:
			w.note(at, "request matching on %q not carried over", mem.Key)
		}
	}
	return preds
}

// jsText renders a value as text.
func jsText(v config.Value) string { return jsvalue.String(v) }

// fullMatch anchors a Java regular expression, which WireMock matches against the whole value.
func fullMatch(re string) string { return "^(?:" + re + ")$" }

var templateVar = regexp.MustCompile(`\{[^}/]+\}`)

// templateRegex turns a urlPathTemplate (/contacts/{id}) into a regular expression.
func templateRegex(t string) string {
	var b strings.Builder
	last := 0
	for _, m := range templateVar.FindAllStringIndex(t, -1) {
		b.WriteString(regexp.QuoteMeta(t[last:m[0]]))
		b.WriteString("[^/]+")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(t[last:]))
	return "^" + b.String() + "$"
}

// valuePattern converts one query parameter or header pattern.
func (w *wiremockImport) valuePattern(field, name string, p *config.Object, where string) *config.Object {
	if p == nil {
		w.note(where, "not a pattern object: not carried over")
		return nil
	}
	wrap := func(op string, v config.Value) *config.Object {
		pred := config.NewObject(op, config.NewObject(field, config.NewObject(name, v)))
		if !jsvalue.Truthy(get(p, "caseInsensitive")) {
			pred.Set("caseSensitive", true)
		}
		return pred
	}
	for _, mem := range p.Members {
		switch mem.Key {
		case "equalTo":
			return wrap("equals", jsText(mem.Value))
		case "contains":
			return wrap("contains", jsText(mem.Value))
		case "matches":
			return wrap("matches", fullMatch(jsText(mem.Value)))
		case "doesNotMatch":
			return config.NewObject("not", wrap("matches", fullMatch(jsText(mem.Value))))
		case "absent":
			return config.NewObject("exists", config.NewObject(field, config.NewObject(name, !jsvalue.Truthy(mem.Value))))
		case "caseInsensitive":
		default:
			w.note(config.JoinPath(where, mem.Key), "%q not carried over", mem.Key)
			return nil
		}
	}
	return nil
}

// bodyPattern converts one body pattern.
func (w *wiremockImport) bodyPattern(bp *config.Object, where string) *config.Object {
	if bp == nil {
		w.note(where, "not a pattern object: not carried over")
		return nil
	}
	cs := func(p *config.Object) *config.Object {
		if !jsvalue.Truthy(get(bp, "caseInsensitive")) {
			p.Set("caseSensitive", true)
		}
		return p
	}
	for _, mem := range bp.Members {
		at := config.JoinPath(where, mem.Key)
		switch mem.Key {
		case "equalTo":
			return cs(config.NewObject("equals", config.NewObject("body", jsText(mem.Value))))
		case "contains":
			return cs(config.NewObject("contains", config.NewObject("body", jsText(mem.Value))))
		case "matches":
			return cs(config.NewObject("matches", config.NewObject("body", fullMatch(jsText(mem.Value)))))
		case "doesNotMatch":
			return config.NewObject("not", cs(config.NewObject("matches", config.NewObject("body", fullMatch(jsText(mem.Value))))))
		case "equalToJson":
			v := mem.Value
			if s, ok := v.(string); ok {
				parsed, err := config.ParseJSON([]byte(s))
				if err != nil {
					w.note(at, "not valid JSON: not carried over")
					return nil
				}
				v = parsed
			}
			if strings.Contains(string(config.MarshalJSON(v, 0)), "${json-unit.") {
				w.note(at, "json-unit placeholders are compared as text")
			}
			if jsvalue.Truthy(get(bp, "ignoreArrayOrder")) {
				w.note(config.JoinPath(where, "ignoreArrayOrder"), "ignoreArrayOrder not carried over: arrays compare in order")
			}
			op := "deepEquals"
			if jsvalue.Truthy(get(bp, "ignoreExtraElements")) {
				op = "equals" // Mountebank's equals on a JSON body ignores extra keys
			}
			return config.NewObject(op, config.NewObject("body", v))
		case "matchesJsonPath":
			return w.selectorPattern("jsonpath", mem.Value, at)
		case "matchesXPath":
			return w.selectorPattern("xpath", mem.Value, at)
		case "caseInsensitive", "ignoreArrayOrder", "ignoreExtraElements":
		default:
			w.note(at, "body pattern %q not carried over", mem.Key)
			return nil
		}
	}
	return nil
}

// selectorPattern converts matchesJsonPath / matchesXPath: an expression that must select
// something, or an object with the expression and a pattern for what it selects.
func (w *wiremockImport) selectorPattern(kind string, v config.Value, where string) *config.Object {
	if s, ok := v.(string); ok {
		return config.NewObject("exists", config.NewObject("body", true), kind, config.NewObject("selector", s))
	}
	o := config.AsObject(v)
	if o == nil {
		w.note(where, "not carried over: expected an expression or {expression, ...}")
		return nil
	}
	sel := config.NewObject("selector", jsText(get(o, "expression")))
	if ns := config.AsObject(get(o, "xPathNamespaces")); ns != nil && kind == "xpath" {
		sel.Set("ns", ns)
	}
	for _, mem := range o.Members {
		switch mem.Key {
		case "equalTo":
			return config.NewObject("equals", config.NewObject("body", jsText(mem.Value)), kind, sel, "caseSensitive", true)
		case "contains":
			return config.NewObject("contains", config.NewObject("body", jsText(mem.Value)), kind, sel, "caseSensitive", true)
		case "matches":
			return config.NewObject("matches", config.NewObject("body", fullMatch(jsText(mem.Value))), kind, sel, "caseSensitive", true)
		case "absent":
			return config.NewObject("exists", config.NewObject("body", !jsvalue.Truthy(mem.Value)), kind, sel)
		case "expression", "xPathNamespaces":
		default:
			w.note(config.JoinPath(where, mem.Key), "%q not carried over", mem.Key)
			return nil
		}
	}
	return config.NewObject("exists", config.NewObject("body", true), kind, sel)
}

// response converts a response definition into a Mountebank response.
func (w *wiremockImport) response(r *config.Object, where string) *config.Object {
	is := &config.Object{}
	out := config.NewObject("is", is)
	var behaviors []any
	templated := false
	status := 200.0
	if s, ok := get(r, "status").(float64); ok {
		status = s
	}
	is.Set("statusCode", status)
	for _, mem := range r.Members {
		at := config.JoinPath(where, mem.Key)
		switch mem.Key {
		case "status":
		case "statusMessage":
			w.note(at, "statusMessage not carried over: mockd sends the standard reason phrase")
		case "headers":
			if h := config.AsObject(mem.Value); h != nil {
				is.Set("headers", h)
			}
		case "body":
			is.Set("body", jsText(mem.Value))
		case "jsonBody":
			is.Set("body", mem.Value)
		case "base64Body":
			is.Set("body", jsText(mem.Value))
			is.Set("_mode", "binary")
		case "bodyFileName":
			w.bodyFile(is, jsText(mem.Value), at)
		case "fixedDelayMilliseconds":
			behaviors = append(behaviors, config.NewObject("wait", mem.Value))
		case "fault":
			switch f := jsText(mem.Value); f {
			case "CONNECTION_RESET_BY_PEER", "RANDOM_DATA_THEN_CLOSE":
				out = config.NewObject("fault", f)
			case "EMPTY_RESPONSE":
				// mockd closes the connection without an answer, which is an empty response.
				out = config.NewObject("fault", "CONNECTION_RESET_BY_PEER")
			default:
				w.note(at, "fault %q not carried over", f)
			}
		case "proxyBaseUrl":
			out = config.NewObject("proxy", config.NewObject("to", jsText(mem.Value), "mode", "proxyTransparent"))
		case "transformers":
			list, _ := mem.Value.([]any)
			for _, t := range list {
				if jsText(t) == "response-template" {
					templated = true
				} else {
					w.note(at, "transformer %q not carried over", jsText(t))
				}
			}
		case "transformerParameters":
			w.note(at, "transformerParameters not carried over: templates cannot read {{parameters.…}}")
		default:
			w.note(at, "%q not carried over", mem.Key)
		}
	}
	if templated {
		if out.Has("is") {
			is.Set("template", true)
		} else {
			w.note(config.JoinPath(where, "transformers"), "response-template applies to a fault or proxy: not carried over")
		}
	}
	if len(behaviors) > 0 && !out.Has("fault") {
		out.Set("behaviors", behaviors)
	}
	return out
}

// bodyFile points the response at a file under __files, relative to the output directory.
func (w *wiremockImport) bodyFile(is *config.Object, name, where string) {
	if strings.Contains(name, "{{") {
		w.note(where, "a templated body file name is not carried over")
		return
	}
	path := filepath.Join(w.filesDir, filepath.FromSlash(name))
	if _, err := os.Stat(path); err != nil {
		w.note(where, "body file %s cannot be read: not carried over", path)
		return
	}
	abs, err1 := filepath.Abs(path)
	base, err2 := filepath.Abs(w.outDir)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(base, abs); err == nil {
			path = rel
		}
	}
	is.Set("bodyFile", filepath.ToSlash(path))
}
