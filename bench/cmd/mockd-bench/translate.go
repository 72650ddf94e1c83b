package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// errNA is a scenario a peer cannot express; the report marks it n/a with the reason.
type errNA struct{ why string }

func (e *errNA) Error() string { return e.why }

func na(format string, args ...any) error { return &errNA{fmt.Sprintf(format, args...)} }

func isNA(err error) (string, bool) {
	var n *errNA
	if errors.As(err, &n) {
		return n.why, true
	}
	return "", false
}

// reqMatch is what one Mountebank stub's predicates ask of a request, in the forms WireMock and
// MockServer can both express; every field set must match.
type reqMatch struct {
	method         string
	path, pathRe   string // equals, or a regular expression (RE2 and Java agree on the ones used)
	headers, query map[string]string
	body           *bodyMatch
}

// bodyMatch is one condition on the body (MockServer allows only one per expectation).
type bodyMatch struct {
	kind   string         // "json-equals" (fields of an object), "json-contains", "jsonpath", "xpath", "not-contains"
	json   map[string]any // json-equals
	field  string         // json-contains: the top-level field; jsonpath, xpath: the selector
	value  string
	substr string // not-contains
}

// stubResponse is a Mountebank "is" response with the behaviors the peers share.
type stubResponse struct {
	status   int
	headers  map[string]string
	body     string
	wait     *int // milliseconds
	template bool // the body and headers are Handlebars templates
}

// translateStub reads one Mountebank stub of the bench's scenarios.
func translateStub(st any) (*reqMatch, *stubResponse, error) {
	obj, _ := st.(map[string]any)
	m := &reqMatch{headers: map[string]string{}, query: map[string]string{}}
	preds, _ := obj["predicates"].([]any)
	for _, p := range preds {
		if err := m.add(p.(map[string]any)); err != nil {
			return nil, nil, err
		}
	}
	responses, _ := obj["responses"].([]any)
	if len(responses) != 1 {
		return nil, nil, na("%d responses per stub", len(responses))
	}
	r := responses[0].(map[string]any)
	if _, ok := r["inject"]; ok {
		return nil, nil, na("JavaScript inject responses")
	}
	if _, ok := r["proxy"]; ok {
		return nil, nil, na("proxy responses (the proxy scenarios set up each peer's own recorder)")
	}
	is, ok := r["is"].(map[string]any)
	if !ok {
		return nil, nil, na("a response other than is")
	}
	if _, ok := is["data"]; ok {
		return nil, nil, na("tcp")
	}
	out := &stubResponse{status: is["statusCode"].(int), headers: map[string]string{}}
	out.body, _ = is["body"].(string)
	out.template, _ = is["template"].(bool)
	if h, ok := is["headers"].(map[string]any); ok {
		for k, v := range h {
			out.headers[k] = v.(string)
		}
	}
	if b, ok := r["_behaviors"].(map[string]any); ok {
		for k, v := range b {
			switch k {
			case "wait":
				ms, ok := v.(int)
				if !ok {
					return nil, nil, na("a wait function")
				}
				out.wait = &ms
			case "decorate":
				return nil, nil, na("JavaScript decorate behaviors")
			default:
				return nil, nil, na("the %s behavior", k)
			}
		}
	}
	return m, out, nil
}

// add adds one predicate (AND with what is there).
func (m *reqMatch) add(p map[string]any) error {
	for op, v := range p {
		switch op {
		case "jsonpath", "xpath", "caseSensitive":
			continue // parameters, read with their operator
		case "and":
			for _, c := range v.([]any) {
				if err := m.add(c.(map[string]any)); err != nil {
					return err
				}
			}
		case "or":
			var alts []string
			for _, c := range v.([]any) {
				re, ok := pathRegex(c.(map[string]any))
				if !ok {
					return na("or over fields other than the path")
				}
				alts = append(alts, re)
			}
			m.pathRe = "^(" + strings.Join(alts, "|") + ")$"
		case "not":
			c := v.(map[string]any)
			if cv, ok := c["contains"].(map[string]any); ok && len(cv) == 1 && m.body == nil {
				if s, ok := cv["body"].(string); ok {
					m.body = &bodyMatch{kind: "not-contains", substr: s}
					continue
				}
			}
			return na("not over anything but a body substring")
		case "equals", "contains", "matches", "startsWith":
			if err := m.field(op, v.(map[string]any), p); err != nil {
				return err
			}
		default:
			return na("the %s predicate", op)
		}
	}
	return nil
}

func (m *reqMatch) field(op string, fields, pred map[string]any) error {
	for f, v := range fields {
		switch {
		case f == "method" && op == "equals":
			m.method = v.(string)
		case f == "path" && op == "equals":
			m.path = v.(string)
		case f == "path" && op == "matches":
			m.pathRe = v.(string)
		case f == "headers" && op == "equals":
			for k, hv := range v.(map[string]any) {
				m.headers[k] = hv.(string)
			}
		case f == "query" && op == "equals":
			for k, qv := range v.(map[string]any) {
				m.query[k] = qv.(string)
			}
		case f == "body" && m.body == nil:
			switch bv := v.(type) {
			case map[string]any:
				if op == "equals" {
					m.body = &bodyMatch{kind: "json-equals", json: bv}
				} else if op == "contains" && len(bv) == 1 {
					for k, s := range bv {
						m.body = &bodyMatch{kind: "json-contains", field: k, value: s.(string)}
					}
				} else {
					return na("%s on a JSON body", op)
				}
			case string:
				sel, jp := pred["jsonpath"].(map[string]any)
				xsel, xp := pred["xpath"].(map[string]any)
				switch {
				case op == "equals" && jp:
					m.body = &bodyMatch{kind: "jsonpath", field: sel["selector"].(string), value: bv}
				case op == "equals" && xp:
					m.body = &bodyMatch{kind: "xpath", field: xsel["selector"].(string), value: bv}
				default:
					return na("%s on a body string", op)
				}
			}
		default:
			return na("%s on %s", op, f)
		}
	}
	return nil
}

// pathRegex is a path predicate as a regular expression fragment.
func pathRegex(p map[string]any) (string, bool) {
	if len(p) != 1 {
		return "", false
	}
	for op, v := range p {
		f, ok := v.(map[string]any)
		if !ok || len(f) != 1 {
			return "", false
		}
		path, ok := f["path"].(string)
		if !ok {
			return "", false
		}
		switch op {
		case "equals":
			return regexp.QuoteMeta(path), true
		case "startsWith":
			return regexp.QuoteMeta(path) + ".*", true
		case "matches":
			return path, true
		}
	}
	return "", false
}

// wiremockXPathText makes a selector of elements select their text: WireMock hands its nested
// matcher an element as the element's XML (`<id>cust-000</id>`), where Mountebank compares the
// element's text. A selector of attributes, of text or of a function's value is left as it is.
func wiremockXPathText(sel string) string {
	if strings.HasSuffix(sel, ")") || strings.HasPrefix(sel[strings.LastIndex(sel, "/")+1:], "@") {
		return sel
	}
	return sel + "/text()"
}

// wiremockMappings translates s's stubs into WireMock stub mappings. Priorities keep
// Mountebank's first-match order (WireMock otherwise tries the newest mapping first).
func wiremockMappings(stubs []any) ([]any, error) {
	out := make([]any, 0, len(stubs))
	for i, st := range stubs {
		m, r, err := translateStub(st)
		if err != nil {
			return nil, err
		}
		req := map[string]any{"method": "ANY"}
		if m.method != "" {
			req["method"] = m.method
		}
		switch {
		case m.pathRe != "":
			req["urlPathPattern"] = m.pathRe
		case m.path != "":
			req["urlPath"] = m.path
		}
		if len(m.headers) > 0 {
			h := map[string]any{}
			for k, v := range m.headers {
				h[k] = map[string]any{"equalTo": v, "caseInsensitive": true}
			}
			req["headers"] = h
		}
		if len(m.query) > 0 {
			q := map[string]any{}
			for k, v := range m.query {
				q[k] = map[string]any{"equalTo": v, "caseInsensitive": true}
			}
			req["queryParameters"] = q
		}
		if b := m.body; b != nil {
			var bp map[string]any
			switch b.kind {
			case "json-equals":
				bp = map[string]any{"equalToJson": b.json, "ignoreExtraElements": true}
			case "json-contains":
				bp = map[string]any{"matchesJsonPath": map[string]any{"expression": "$." + b.field, "contains": b.value}}
			case "jsonpath":
				bp = map[string]any{"matchesJsonPath": map[string]any{"expression": b.field, "equalTo": b.value}}
			case "xpath":
				bp = map[string]any{"matchesXPath": map[string]any{"expression": wiremockXPathText(b.field), "equalTo": b.value}}
			case "not-contains":
				bp = map[string]any{"doesNotContain": b.substr}
			}
			req["bodyPatterns"] = []any{bp}
		}
		resp := map[string]any{"status": r.status, "body": r.body}
		if len(r.headers) > 0 {
			resp["headers"] = r.headers
		}
		if r.wait != nil {
			resp["fixedDelayMilliseconds"] = *r.wait
		}
		if r.template {
			resp["transformers"] = []any{"response-template"}
		}
		out = append(out, map[string]any{"priority": i + 1, "request": req, "response": resp})
	}
	return out, nil
}

// mockserverExpectations translates s's stubs into MockServer expectations, in Mountebank's
// first-match order (MockServer tries higher priorities first).
func mockserverExpectations(stubs []any) ([]any, error) {
	out := make([]any, 0, len(stubs))
	for i, st := range stubs {
		m, r, err := translateStub(st)
		if err != nil {
			return nil, err
		}
		if r.template {
			return nil, na("Handlebars templates (its own are Velocity, Mustache or JavaScript)")
		}
		req := map[string]any{}
		if m.method != "" {
			req["method"] = m.method
		}
		switch {
		case m.pathRe != "":
			req["path"] = m.pathRe // MockServer matches a path as a string, then as a regex
		case m.path != "":
			req["path"] = m.path
		}
		if len(m.headers) > 0 {
			h := map[string]any{}
			for k, v := range m.headers {
				h[k] = []any{v}
			}
			req["headers"] = h
		}
		if len(m.query) > 0 {
			q := map[string]any{}
			for k, v := range m.query {
				q[k] = []any{v}
			}
			req["queryStringParameters"] = q
		}
		if b := m.body; b != nil {
			switch b.kind {
			case "json-equals":
				req["body"] = map[string]any{"type": "JSON", "json": b.json, "matchType": "ONLY_MATCHING_FIELDS"}
			case "json-contains":
				req["body"] = map[string]any{"type": "JSON_PATH", "jsonPath": fmt.Sprintf("$[?(@.%s =~ /.*%s.*/)]", b.field, regexp.QuoteMeta(b.value))}
			case "jsonpath":
				parent, field := splitLast(b.field, ".")
				req["body"] = map[string]any{"type": "JSON_PATH", "jsonPath": fmt.Sprintf("%s[?(@.%s == '%s')]", parent, field, b.value)}
			case "xpath":
				req["body"] = map[string]any{"type": "XPATH", "xpath": fmt.Sprintf("%s[.='%s']", b.field, b.value)}
			case "not-contains":
				req["body"] = map[string]any{"type": "STRING", "string": b.substr, "subString": true, "not": true}
			}
		}
		h := map[string]any{}
		for k, v := range r.headers {
			h[k] = []any{v}
		}
		resp := map[string]any{"statusCode": r.status, "headers": h, "body": r.body}
		if r.wait != nil {
			resp["delay"] = map[string]any{"timeUnit": "MILLISECONDS", "value": *r.wait}
		}
		out = append(out, map[string]any{"id": fmt.Sprintf("bench-%d", i), "priority": len(stubs) - i, "httpRequest": req, "httpResponse": resp})
	}
	return out, nil
}

func splitLast(s, sep string) (string, string) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+len(sep):]
}
