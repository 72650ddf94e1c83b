package imposter

import (
	"fmt"
	"sync"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/hbs"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// templated is the compiled template of an `is` response marked `template: true`: its body and
// header values are Handlebars templates rendered with each request.
type templated struct {
	body    *tnode // nil when the body has no template
	headers *tnode // nil when no header has one
}

// tnode is one compiled value of a templated response: a literal, a string template, or an
// object or array holding templates.
type tnode struct {
	lit   config.Value
	tpl   *hbs.Template
	keys  []*tnode // object: the member names (templates too) and values
	vals  []*tnode
	items []*tnode // array
	kind  byte     // 'l'iteral, 't'emplate, 'o'bject, 'a'rray
}

// compileTemplate compiles the templates of a response's `is` object, or returns nil when it is
// not marked as a template. A template that does not compile is a "bad data" error.
func compileTemplate(r *config.Object) (*templated, *config.Error) {
	is := config.AsObject(get(r, "is"))
	tv, present := is.Get("template")
	if !present {
		return nil, nil
	}
	if on, isBool := tv.(bool); !isBool {
		return nil, &config.Error{Code: config.CodeBadData, Message: "template must be true or false", Source: r}
	} else if !on {
		return nil, nil
	}
	if get(is, "_mode") == "binary" {
		return nil, &config.Error{Code: config.CodeBadData, Message: "a template cannot be a binary (_mode: binary) response", Source: r}
	}
	t := &templated{}
	var err error
	if t.body, err = compileValue(get(is, "body"), "body"); err != nil {
		return nil, &config.Error{Code: config.CodeBadData, Message: err.Error(), Source: r}
	}
	if t.headers, err = compileValue(get(is, "headers"), "headers"); err != nil {
		return nil, &config.Error{Code: config.CodeBadData, Message: err.Error(), Source: r}
	}
	return t, nil
}

// compileValue compiles every string in v; it returns nil when none is a template.
func compileValue(v config.Value, where string) (*tnode, error) {
	n, err := compileNode(v, where)
	if err != nil || n.kind == 'l' {
		return nil, err
	}
	return n, nil
}

func compileNode(v config.Value, where string) (*tnode, error) {
	switch t := v.(type) {
	case string:
		tpl, err := hbs.Parse(t)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", where, err)
		}
		if tpl.IsStatic() {
			return &tnode{kind: 'l', lit: v}, nil
		}
		return &tnode{kind: 't', tpl: tpl}, nil
	case *config.Object:
		n := &tnode{kind: 'o'}
		dynamic := false
		for _, m := range t.Members {
			k, err := compileNode(m.Key, config.JoinPath(where, m.Key))
			if err != nil {
				return nil, err
			}
			val, err := compileNode(m.Value, config.JoinPath(where, m.Key))
			if err != nil {
				return nil, err
			}
			dynamic = dynamic || k.kind != 'l' || val.kind != 'l'
			n.keys, n.vals = append(n.keys, k), append(n.vals, val)
		}
		if !dynamic {
			return &tnode{kind: 'l', lit: v}, nil
		}
		return n, nil
	case []any:
		n := &tnode{kind: 'a'}
		dynamic := false
		for i, e := range t {
			item, err := compileNode(e, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			dynamic = dynamic || item.kind != 'l'
			n.items = append(n.items, item)
		}
		if !dynamic {
			return &tnode{kind: 'l', lit: v}, nil
		}
		return n, nil
	}
	return &tnode{kind: 'l', lit: v}, nil
}

// render renders n for a request, each template in buf's memory (its text then copied).
func (n *tnode) render(m *hbs.Model, buf *[]byte) (config.Value, error) {
	switch n.kind {
	case 't':
		out, err := n.tpl.Render((*buf)[:0], m)
		*buf = out
		return string(out), err
	case 'o':
		o := &config.Object{Members: make([]config.Member, 0, len(n.keys))}
		for i, k := range n.keys {
			kv, err := k.render(m, buf)
			if err != nil {
				return nil, err
			}
			vv, err := n.vals[i].render(m, buf)
			if err != nil {
				return nil, err
			}
			o.Set(jsvalue.String(kv), vv)
		}
		return o, nil
	case 'a':
		out := make([]any, len(n.items))
		for i, it := range n.items {
			v, err := it.render(m, buf)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return n.lit, nil
}

// render returns a copy of is with its body and headers rendered for req. A helper that fails
// (regexExtract without a match, a bad date offset…) fails the request.
func (t *templated) render(is *config.Object, req *request.Request, port int, scheme string) (*config.Object, error) {
	r := renders.Get().(*rendering)
	r.m = hbs.Model{Request: req, Port: port, Scheme: scheme}
	defer r.done()
	out := config.ObjectWithRoom(len(is.Members))
	out.Members = append(out.Members, is.Members...)
	for _, part := range []struct {
		key string
		n   *tnode
	}{{"body", t.body}, {"headers", t.headers}} {
		if part.n == nil {
			continue
		}
		v, err := part.n.render(&r.m, &r.buf)
		if err != nil {
			return nil, &config.Error{Code: config.CodeBadData, Message: "cannot render the response template: " + err.Error()}
		}
		out.Set(part.key, v)
	}
	return out, nil
}

// renderBody appends the body template (t.body, a string template) rendered for req to dst,
// as render renders it (the same model, the same error), with rd and the model m (kept with
// the caller's pooled answer, and left empty). It is the route of a response whose only
// template is its body's text (isResponse.bodyOnly): the text goes straight into the answer's
// buffer, without the response object render makes.
func (t *templated) renderBody(rd *hbs.Renderer, m *hbs.Model, dst []byte, req *request.Request, port int, scheme string) ([]byte, error) {
	*m = hbs.Model{Request: req, Port: port, Scheme: scheme}
	out, err := rd.Render(t.body.tpl, dst, m)
	*m = hbs.Model{}
	if err != nil {
		return out, &config.Error{Code: config.CodeBadData, Message: "cannot render the response template: " + err.Error()}
	}
	return out, nil
}

// bodyOnly reports whether t's only template is its body's text (no header template, the body
// a string rather than an object or array holding templates).
func (t *templated) bodyOnly() bool {
	return t != nil && t.headers == nil && t.body != nil && t.body.kind == 't'
}

// rendering is what rendering a response's templates uses and leaves: the model, and the
// buffer each template is written in before its text is copied out. Nothing rendered refers to
// either.
type rendering struct {
	m   hbs.Model
	buf []byte
}

var renders = sync.Pool{New: func() any { return new(rendering) }}

// maxKeptBuffer is the largest buffer a rendering keeps for the next one.
const maxKeptBuffer = 64 << 10

func (r *rendering) done() {
	r.m = hbs.Model{}
	if cap(r.buf) > maxKeptBuffer {
		r.buf = nil
	}
	renders.Put(r)
}
