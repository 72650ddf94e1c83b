package hbs

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/request"
)

// Model is what a response template sees: {{request.…}} (WireMock's request model) for one
// request to an imposter. It is built on demand: only the parts a template names are computed.
type Model struct {
	Request *request.Request
	// Port is the imposter's port (request.port).
	Port int
	// Scheme is "http" or "https".
	Scheme string
	req    requestModel // request's model, made with the Model (req.m is set on first use)
}

func (m *Model) member(key string) (any, bool) {
	if key != "request" {
		return nil, false
	}
	if m.req.m == nil {
		m.req.m = m
	}
	return &m.req, true
}

type requestModel struct {
	m  *Model
	id string
}

func (r *requestModel) member(key string) (any, bool) {
	req := r.m.Request
	switch key {
	case "id":
		if r.id == "" {
			r.id = uuid()
		}
		return r.id, true
	case "method":
		return req.Method, true
	case "path":
		return pathModel(req.Path), true
	case "pathSegments":
		return segments(req.Path), true
	case "url":
		return requestURL(req), true
	case "query":
		return queryModel(req.Query), true
	case "headers":
		return headerModel{req}, true
	case "cookies":
		return cookies(req), true
	case "body":
		return req.Body, true
	case "bodyAsBase64":
		return base64.StdEncoding.EncodeToString([]byte(req.Body)), true
	case "port":
		return float64(r.m.Port), true
	case "scheme":
		return r.m.Scheme, true
	case "host":
		return r.host(), true
	case "baseUrl":
		return r.m.Scheme + "://" + r.host() + ":" + strconv.Itoa(r.m.Port), true
	case "clientIp":
		return req.IP(), true
	}
	return nil, false
}

func (r *requestModel) text() string { return "" }

func (r *requestModel) host() string {
	h, _ := r.m.Request.Header("Host")
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	return h
}

// pathModel is the request path: it renders whole and is indexed by segment (path.[1]).
type pathModel string

func (p pathModel) text() string { return string(p) }

func (p pathModel) member(key string) (any, bool) {
	if s, ok := pathSegment(string(p), key); ok {
		return s, true
	}
	return nil, false
}

func segments(path string) []any {
	trimmed := strings.Trim(path, "/")
	if trimmed == "" {
		return []any{}
	}
	parts := strings.Split(trimmed, "/")
	out := make([]any, len(parts))
	for i, s := range parts {
		out[i] = s
	}
	return out
}

func requestURL(req *request.Request) string {
	if len(req.Query) == 0 {
		return req.Path
	}
	var b strings.Builder
	b.WriteString(req.Path)
	for i, kv := range req.Query {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv.Name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv.Value))
	}
	return b.String()
}

// queryModel is the query: each name gives its values as a Multi.
type queryModel []request.KV

func (q queryModel) member(key string) (any, bool) {
	var vals Multi
	for _, kv := range q {
		if kv.Name == key {
			vals = append(vals, kv.Value)
		}
	}
	return vals, vals != nil
}

func (q queryModel) text() string { return "" }

// plain returns the query as an ordered object of Multis (for each and toJson).
func (q queryModel) entries() []entry {
	var out []entry
	for _, kv := range q {
		found := false
		for i := range out {
			if out[i].key == kv.Name {
				out[i].val = append(out[i].val.(Multi), kv.Value)
				found = true
			}
		}
		if !found {
			out = append(out, entry{kv.Name, Multi{kv.Value}})
		}
	}
	return out
}

// headerModel is the headers, looked up case-insensitively.
type headerModel struct{ req *request.Request }

func (h headerModel) member(key string) (any, bool) {
	var vals Multi
	for _, kv := range h.req.HeaderList() {
		if request.EqualFoldASCII(kv.Name, key) {
			vals = append(vals, kv.Value)
		}
	}
	return vals, vals != nil
}

func (h headerModel) text() string { return "" }

func (h headerModel) entries() []entry {
	var out []entry
	for _, kv := range h.req.HeaderList() {
		found := false
		for i := range out {
			if request.EqualFoldASCII(out[i].key, kv.Name) {
				out[i].val = append(out[i].val.(Multi), kv.Value)
				found = true
			}
		}
		if !found {
			out = append(out, entry{kv.Name, Multi{kv.Value}})
		}
	}
	return out
}

// entry is one member of an ordered model (query, headers, cookies) for each and toJson.
type entry struct {
	key string
	val any
}

// entrier is a model that can list its members in order.
type entrier interface {
	entries() []entry
}

type cookieModel []entry

func (c cookieModel) member(key string) (any, bool) {
	for _, e := range c {
		if e.key == key {
			return e.val, true
		}
	}
	return nil, false
}

func (c cookieModel) entries() []entry { return c }

func (c cookieModel) text() string { return "" }

func cookies(req *request.Request) cookieModel {
	var out cookieModel
	for _, kv := range req.HeaderList() {
		if !request.EqualFoldASCII(kv.Name, "Cookie") {
			continue
		}
		for _, part := range strings.Split(kv.Value, ";") {
			name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
			if name == "" {
				continue
			}
			found := false
			for i := range out {
				if out[i].key == name {
					out[i].val = append(out[i].val.(Multi), val)
					found = true
				}
			}
			if !found {
				out = append(out, entry{name, Multi{val}})
			}
		}
	}
	return out
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
