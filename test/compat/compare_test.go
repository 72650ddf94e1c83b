package compat

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// engineCtx is what normalisation needs to know about the engine that
// produced an answer.
type engineCtx struct {
	adminPort int
	vars      vars
}

// skippedHeaders differ between any two HTTP servers (or between mockd and
// Mountebank by design, like Connection) and are never compared.
var skippedHeaders = map[string]bool{
	"date":              true,
	"connection":        true,
	"keep-alive":        true,
	"transfer-encoding": true,
}

// answer is the normalised, comparable form of an exchange: a tree of
// status, headers (lower-case names) and body (parsed JSON or a string).
type answer map[string]any

// MarshalJSON writes status, headers and body in that order, for golden
// files that read like an HTTP answer.
func (a answer) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	for _, k := range []string{"error", "status", "reason", "headers", "body"} {
		v, ok := a[k]
		if !ok {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		fmt.Fprintf(&buf, "%q:", k)
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// normalise turns an exchange into an answer. jsonBody says whether the
// body is compared as parsed JSON (then Content-Length is dropped, since
// formatting may differ) or byte for byte.
func normalise(ex exchange, st step, ctx engineCtx, jsonBody bool) answer {
	if ex.Err != "" {
		return answer{"error": ex.Err}
	}
	a := answer{"status": json.Number(strconv.Itoa(ex.Status))}
	if st.HTTP != nil && st.HTTP.Reason {
		a["reason"] = ex.Reason
	}

	hs := map[string]any{}
	for _, h := range ex.Headers {
		name := strings.ToLower(h.Name)
		if skippedHeaders[name] || ((jsonBody || st.BodyLines != "") && name == "content-length") {
			continue
		}
		v := ctx.normaliseString(h.Value)
		switch prev := hs[name].(type) {
		case nil:
			hs[name] = v
		case string:
			hs[name] = []any{prev, v}
		case []any:
			hs[name] = append(prev, v)
		}
	}
	a["headers"] = hs

	var body any
	if jsonBody {
		body = ctx.normaliseJSON(mustParseJSON(ex.Body), "")
		if st.isConfigGet() {
			if m, ok := body.(map[string]any); ok {
				if _, ok := m["version"]; ok {
					m["version"] = "<mountebank version>"
				}
				if _, ok := m["process"]; ok {
					m["process"] = "<process details>"
				}
				if opts, ok := m["options"].(map[string]any); ok {
					if _, ok := opts["port"]; ok {
						opts["port"] = "<admin port>"
					}
				}
			}
		}
	} else {
		text := bodyText(ex.Body)
		if st.BodyLines != "" {
			text = matchingLines(text, st.BodyLines)
		}
		body = ctx.normaliseString(text)
	}
	a["body"] = body

	for _, p := range st.Ignore {
		path, _ := parsePath(p)
		ignorePath(a, path)
	}
	return a
}

// matchingLines keeps the lines of text that match the regular expression re, sorted (servers
// list metric families in different orders).
func matchingLines(text, re string) string {
	r := regexp.MustCompile(re)
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if r.MatchString(line) {
			keep = append(keep, line)
		}
	}
	sort.Strings(keep)
	return strings.Join(keep, "\n")
}

// withHeaderCase renames the answer's header keys back to the case the
// engine sent, for golden files that show what went over the wire.
func withHeaderCase(a answer, ex exchange) answer {
	hs, ok := a["headers"].(map[string]any)
	if !ok {
		return a
	}
	named := make(map[string]any, len(hs))
	for _, h := range ex.Headers {
		l := strings.ToLower(h.Name)
		if v, ok := hs[l]; ok {
			named[h.Name] = v
			delete(hs, l)
		}
	}
	for k, v := range hs {
		named[k] = v
	}
	a["headers"] = named
	return a
}

func (st step) isConfigGet() bool {
	if st.Admin == nil || st.Admin.Method != "GET" {
		return false
	}
	p, _, _ := strings.Cut(st.Admin.Path, "?")
	return p == "/config"
}

// isJSON reports whether a body is a JSON document (an empty body is not).
func isJSON(b []byte) bool {
	return len(bytes.TrimSpace(b)) > 0 && json.Valid(b)
}

func mustParseJSON(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "<unparsable JSON: " + err.Error() + ">"
	}
	return v
}

// bodyText shows a body as text, or as base64 when it is not UTF-8.
func bodyText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}

var ipv4Mapped = regexp.MustCompile(`^::ffff:`)

// normaliseString hides the admin port (hrefs, Location) and captured values.
func (ctx engineCtx) normaliseString(s string) string {
	p := strconv.Itoa(ctx.adminPort)
	s = strings.ReplaceAll(s, "127.0.0.1:"+p, "localhost:<admin port>")
	s = strings.ReplaceAll(s, "localhost:"+p, "localhost:<admin port>")
	names := make([]string, 0, len(ctx.vars))
	for n := range ctx.vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		val := ctx.vars[n]
		if len(val) < 4 {
			continue // too short to replace safely
		}
		re := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(val) + `($|[^0-9])`)
		s = re.ReplaceAllString(s, "${1}$${"+n+"}${2}")
	}
	return s
}

// normaliseJSON walks a parsed body. key is the object key v sits under.
func (ctx engineCtx) normaliseJSON(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = ctx.normaliseJSON(x, k)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = ctx.normaliseJSON(x, key)
		}
		return t
	case string:
		switch key {
		case "timestamp":
			return "<timestamp>"
		case "ip":
			return ipv4Mapped.ReplaceAllString(t, "")
		case "requestFrom":
			host := ipv4Mapped.ReplaceAllString(t, "")
			if i := strings.LastIndexByte(host, ':'); i >= 0 {
				host = host[:i]
			}
			return host + ":<client port>"
		}
		return ctx.normaliseString(t)
	case json.Number:
		if key == "processingTime" {
			return "<processing time>"
		}
		for n, val := range ctx.vars {
			if len(val) >= 4 && t.String() == val {
				return "${" + n + "}"
			}
		}
		return t
	default:
		return v
	}
}

// pathSeg is a map key or an array index (-1 for [*]).
type pathSeg struct {
	key   string
	index int
	isIdx bool
}

var segRe = regexp.MustCompile(`^([^\[\]]*)((?:\[(?:\d+|\*)\])*)$`)
var idxRe = regexp.MustCompile(`\[(\d+|\*)\]`)

// parsePath reads "body.requests[0].headers.Host" or "headers.date".
func parsePath(p string) ([]pathSeg, error) {
	var out []pathSeg
	for i, part := range strings.Split(p, ".") {
		m := segRe.FindStringSubmatch(part)
		if m == nil || (m[1] == "" && m[2] == "") {
			return nil, fmt.Errorf("bad path segment %q", part)
		}
		if m[1] != "" {
			k := m[1]
			if i == 1 && out[0].key == "headers" {
				k = strings.ToLower(k)
			}
			out = append(out, pathSeg{key: k})
		}
		for _, im := range idxRe.FindAllStringSubmatch(m[2], -1) {
			if im[1] == "*" {
				out = append(out, pathSeg{index: -1, isIdx: true})
			} else {
				n, _ := strconv.Atoi(im[1])
				out = append(out, pathSeg{index: n, isIdx: true})
			}
		}
	}
	if len(out) == 0 || out[0].isIdx || (out[0].key != "status" && out[0].key != "headers" && out[0].key != "body") {
		return nil, fmt.Errorf("path must start with status, headers or body")
	}
	return out, nil
}

const ignored = "<ignored>"

// ignorePath replaces what path points at with a marker (array elements)
// or removes it (object keys), on one side; applied to both it hides the
// difference but keeps the surrounding shape compared.
func ignorePath(root any, path []pathSeg) {
	var walk func(v any, path []pathSeg) any
	walk = func(v any, path []pathSeg) any {
		seg, last := path[0], len(path) == 1
		switch t := v.(type) {
		case answer:
			return walk(map[string]any(t), path)
		case map[string]any:
			if seg.isIdx {
				return v
			}
			x, ok := t[seg.key]
			if !ok {
				return v
			}
			if last {
				delete(t, seg.key)
			} else {
				t[seg.key] = walk(x, path[1:])
			}
		case []any:
			if !seg.isIdx {
				return v
			}
			for i := range t {
				if seg.index >= 0 && i != seg.index {
					continue
				}
				if last {
					t[i] = ignored
				} else {
					t[i] = walk(t[i], path[1:])
				}
			}
		}
		return v
	}
	walk(root, path)
}

// maxDiffLines bounds the differences reported for one step.
const maxDiffLines = 12

// diff lists the differences between two answers as "path: mb=… mockd=…".
func diff(mb, mockd any) []string {
	var out []string
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		if len(out) >= maxDiffLines {
			return
		}
		if aa, ok := a.(answer); ok {
			a = map[string]any(aa)
		}
		if bb, ok := b.(answer); ok {
			b = map[string]any(bb)
		}
		switch at := a.(type) {
		case map[string]any:
			bt, ok := b.(map[string]any)
			if !ok {
				break
			}
			keys := map[string]bool{}
			for k := range at {
				keys[k] = true
			}
			for k := range bt {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			if path == "" {
				// status first: when it differs, it explains the rest
				rank := map[string]int{"status": 0, "error": 1, "headers": 2, "body": 3}
				sort.SliceStable(sorted, func(i, j int) bool { return rank[sorted[i]] < rank[sorted[j]] })
			}
			for _, k := range sorted {
				av, aok := at[k]
				bv, bok := bt[k]
				p := joinPath(path, k)
				switch {
				case !aok:
					out = append(out, fmt.Sprintf("%s: mb=(absent) mockd=%s", p, show(bv)))
				case !bok:
					out = append(out, fmt.Sprintf("%s: mb=%s mockd=(absent)", p, show(av)))
				default:
					walk(p, av, bv)
				}
			}
			return
		case []any:
			bt, ok := b.([]any)
			if !ok {
				break
			}
			if len(at) != len(bt) {
				out = append(out, fmt.Sprintf("%s: mb has %d elements, mockd has %d: mb=%s mockd=%s",
					path, len(at), len(bt), show(at), show(bt)))
				return
			}
			for i := range at {
				walk(fmt.Sprintf("%s[%d]", path, i), at[i], bt[i])
			}
			return
		case json.Number:
			if bt, ok := b.(json.Number); ok && numbersEqual(at, bt) {
				return
			}
		default:
			if a == b {
				return
			}
		}
		out = append(out, fmt.Sprintf("%s: mb=%s mockd=%s", path, show(a), show(b)))
	}
	walk("", mb, mockd)
	return out
}

func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	af, err1 := a.Float64()
	bf, err2 := b.Float64()
	return err1 == nil && err2 == nil && af == bf
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[] ") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	return path + "." + key
}

// show renders a value compactly for a diff line.
func show(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// reconcileContentLength drops Content-Length from both answers when only
// one has it: one engine framed the body with chunked encoding, the other
// with a length, and the body comparison already covers the bytes.
func reconcileContentLength(a, b answer) {
	ha, _ := a["headers"].(map[string]any)
	hb, _ := b["headers"].(map[string]any)
	if ha == nil || hb == nil {
		return
	}
	_, ina := ha["content-length"]
	_, inb := hb["content-length"]
	if ina != inb {
		delete(ha, "content-length")
		delete(hb, "content-length")
	}
}

// headerCaseWarnings lists header names both sides sent with different case.
func headerCaseWarnings(mb, mockd exchange) []string {
	names := map[string]string{}
	for _, h := range mb.Headers {
		names[strings.ToLower(h.Name)] = h.Name
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range mockd.Headers {
		l := strings.ToLower(h.Name)
		if m, ok := names[l]; ok && m != h.Name && !seen[l] {
			seen[l] = true
			out = append(out, fmt.Sprintf("header name case differs: mb=%q mockd=%q", m, h.Name))
		}
	}
	return out
}

// keyOrders maps each object in a JSON document (by path) to its keys in
// document order. Mountebank orders fields deliberately (see its
// imposterPrinter); order is not compared, only warned about.
func keyOrders(b []byte) map[string][]string {
	out := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			keys := []string{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				keys = append(keys, k)
				if err := walk(joinPath(path, k)); err != nil {
					return err
				}
			}
			out[path] = keys
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if walk("") != nil {
		return nil
	}
	return out
}

// keyOrderWarnings lists objects whose shared keys come in another order.
func keyOrderWarnings(mb, mockd []byte) []string {
	a, b := keyOrders(mb), keyOrders(mockd)
	paths := make([]string, 0, len(a))
	for p := range a {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		kb, ok := b[p]
		if !ok {
			continue
		}
		inB := map[string]bool{}
		for _, k := range kb {
			inB[k] = true
		}
		inA := map[string]bool{}
		var sa, sb []string
		for _, k := range a[p] {
			inA[k] = true
			if inB[k] {
				sa = append(sa, k)
			}
		}
		for _, k := range kb {
			if inA[k] {
				sb = append(sb, k)
			}
		}
		if !reflect.DeepEqual(sa, sb) {
			name := p
			if name == "" {
				name = "(top level)"
			}
			out = append(out, fmt.Sprintf("key order differs at body %s: mb %v, mockd %v", name, sa, sb))
		}
	}
	return out
}
