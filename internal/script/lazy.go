package script

import (
	"reflect"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// lazy is a JavaScript object whose property values are made from Go only when a script reads
// them. Setting a property on a goja object from Go costs a panic guard and a map insert each,
// so building the whole request for every call would dominate a short script; with lazy objects
// a call costs what the script touches. To scripts a lazy object is an ordinary object: keys
// keep their order, properties can be added, changed and deleted, and JSON.stringify, Object.keys
// and for-in see the same as for a plain object.
type lazy struct {
	rt   *runtime
	keys []string
	own  bool         // keys may be changed in place (else copy on write)
	vals []goja.Value // nil until made or set
	src  lazySource
}

// lazySource makes the values of a lazy object.
type lazySource interface {
	// js makes the value of key for a script.
	js(rt *runtime, key string) goja.Value
	// goValue returns the value of key as configuration, for keys a script did not touch.
	goValue(key string) config.Value
}

var lazyType = reflect.TypeOf((*lazy)(nil))

func (rt *runtime) newLazy(keys []string, src lazySource) (*lazy, *goja.Object) {
	l := &lazy{rt: rt, keys: keys, vals: make([]goja.Value, len(keys), len(keys)+2), src: src}
	return l, rt.vm.NewDynamicObject(l)
}

func (l *lazy) index(key string) int {
	for i, k := range l.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Get implements goja.DynamicObject.
func (l *lazy) Get(key string) goja.Value {
	i := l.index(key)
	if i < 0 {
		return nil
	}
	if l.vals[i] == nil {
		l.vals[i] = l.src.js(l.rt, key)
	}
	return l.vals[i]
}

// Set implements goja.DynamicObject.
func (l *lazy) Set(key string, v goja.Value) bool {
	if i := l.index(key); i >= 0 {
		l.vals[i] = v
		return true
	}
	if !l.own {
		l.keys = append(make([]string, 0, len(l.keys)+2), l.keys...)
		l.own = true
	}
	l.keys = append(l.keys, key)
	l.vals = append(l.vals, v)
	return true
}

// Has implements goja.DynamicObject.
func (l *lazy) Has(key string) bool { return l.index(key) >= 0 }

// Delete implements goja.DynamicObject.
func (l *lazy) Delete(key string) bool {
	i := l.index(key)
	if i < 0 {
		return true
	}
	if !l.own {
		l.keys = append([]string(nil), l.keys...)
		l.own = true
	}
	l.keys = append(l.keys[:i], l.keys[i+1:]...)
	l.vals = append(l.vals[:i], l.vals[i+1:]...)
	return true
}

// Keys implements goja.DynamicObject.
func (l *lazy) Keys() []string { return append([]string(nil), l.keys...) }

// export converts l to configuration, taking untouched values straight from its source.
func (l *lazy) export(depth int) *config.Object {
	o := &config.Object{Members: make([]config.Member, 0, len(l.keys))}
	for i, k := range l.keys {
		var v config.Value
		if l.vals[i] == nil {
			v = l.src.goValue(k)
		} else {
			var ok bool
			if v, ok = fromJS(l.rt.vm, l.vals[i], depth+1); !ok {
				continue
			}
		}
		o.Members = append(o.Members, config.Member{Key: k, Value: v})
	}
	return o
}

// Key lists of the request shapes, shared by every lazy request until a script changes one.
var (
	httpKeys           = []string{"requestFrom", "method", "path", "query", "headers", "body", "ip"}
	httpKeysNoBody     = []string{"requestFrom", "method", "path", "query", "headers", "ip"}
	httpKeysForm       = []string{"requestFrom", "method", "path", "query", "headers", "body", "ip", "form"}
	httpKeysFormNoBody = []string{"requestFrom", "method", "path", "query", "headers", "ip", "form"}
	tcpKeys            = []string{"requestFrom", "ip", "data"}
)

func requestKeys(r *request.Request) []string {
	switch {
	case r.TCP:
		return tcpKeys
	case r.HasForm && r.BodyMissing:
		return httpKeysFormNoBody
	case r.HasForm:
		return httpKeysForm
	case r.BodyMissing:
		return httpKeysNoBody
	default:
		return httpKeys
	}
}

// requestSource makes the request Mountebank's scripts see: the http request of httpRequest.js
// (requestFrom, method, path, query, headers, body, ip, form for url-encoded bodies) or the tcp
// request of tcpRequest.js (requestFrom, ip, data).
// It holds its own copy of the request: scripts may keep the request in state beyond the call,
// and the caller's Request is pooled and reused.
type requestSource struct{ r *request.Request }

// detach copies what a script can see of r into a new Request that shares nothing reusable with
// it (strings are immutable; the name/value lists are copied into one allocation).
func detach(r *request.Request) *request.Request {
	c := &request.Request{Method: r.Method, Path: r.Path, Body: r.Body, BodyMissing: r.BodyMissing,
		HasForm: r.HasForm, Data: r.Data, TCP: r.TCP}
	c.CopyClient(r)
	headers := r.HeaderList()
	n := len(r.Query) + len(headers) + len(r.Form)
	if n == 0 {
		return c
	}
	kvs := make([]request.KV, 0, n)
	kvs = append(kvs, r.Query...)
	kvs = append(kvs, headers...)
	kvs = append(kvs, r.Form...)
	q, h := len(r.Query), len(r.Query)+len(headers)
	c.Query, c.Headers, c.Form = kvs[:q:q], kvs[q:h:h], kvs[h:]
	return c
}

func (s requestSource) js(rt *runtime, key string) goja.Value {
	switch key {
	case "query":
		return rt.kvLazy(s.r.Query, false)
	case "headers":
		return rt.kvLazy(s.r.HeaderList(), true)
	case "form":
		return rt.kvLazy(s.r.Form, false)
	}
	return rt.vm.ToValue(s.goValue(key))
}

func (s requestSource) goValue(key string) config.Value {
	switch key {
	case "requestFrom":
		return s.r.RequestFrom()
	case "method":
		return s.r.Method
	case "path":
		return s.r.Path
	case "body":
		return s.r.Body
	case "ip":
		return s.r.IP()
	case "data":
		return s.r.Data
	case "query":
		return kvConfig(s.r.Query, false)
	case "headers":
		return kvConfig(s.r.HeaderList(), true)
	case "form":
		return kvConfig(s.r.Form, false)
	}
	return nil
}

// kvSource groups name/value pairs by exact name: one value stays a string, repeats become an
// array. Headers follow Mountebank's headersMap, where a repeat of an empty value replaces it.
type kvSource struct {
	kvs     []request.KV
	headers bool
}

func kvKeys(kvs []request.KV) []string {
	keys := make([]string, 0, len(kvs))
outer:
	for _, kv := range kvs {
		for _, k := range keys {
			if k == kv.Name {
				continue outer
			}
		}
		keys = append(keys, kv.Name)
	}
	return keys
}

func (rt *runtime) kvLazy(kvs []request.KV, headers bool) goja.Value {
	_, o := rt.newLazy(kvKeys(kvs), kvSource{kvs, headers})
	return o
}

func (s kvSource) values(key string) []any {
	var vals []any
	for _, kv := range s.kvs {
		if kv.Name != key {
			continue
		}
		if s.headers && len(vals) == 1 && vals[0] == "" {
			vals[0] = kv.Value
			continue
		}
		vals = append(vals, kv.Value)
	}
	return vals
}

func (s kvSource) js(rt *runtime, key string) goja.Value {
	vals := s.values(key)
	if len(vals) == 1 {
		return rt.vm.ToValue(vals[0])
	}
	return rt.vm.NewArray(vals...)
}

func (s kvSource) goValue(key string) config.Value {
	vals := s.values(key)
	if len(vals) == 1 {
		return vals[0]
	}
	return vals
}

func kvConfig(kvs []request.KV, headers bool) *config.Object {
	s := kvSource{kvs, headers}
	keys := kvKeys(kvs)
	o := &config.Object{Members: make([]config.Member, len(keys))}
	for i, k := range keys {
		o.Members[i] = config.Member{Key: k, Value: s.goValue(k)}
	}
	return o
}

// configSource is the `config` argument: fixed members (request, state, logger, callback,
// response) set when it is made, and, as Mountebank's downcastInjectionConfig does, the
// request's fields copied on top so old scripts can read config.path and the like.
type configSource struct {
	req *lazy
}

// js copies the request field: the same object for query, headers and form, the original value
// for the others (Mountebank copies them before the script runs).
func (s configSource) js(rt *runtime, key string) goja.Value {
	switch key {
	case "query", "headers", "form":
		if v := s.req.Get(key); v != nil {
			return v
		}
	}
	return s.req.src.js(rt, key)
}

func (s configSource) goValue(key string) config.Value {
	switch key {
	case "query", "headers", "form":
		if i := s.req.index(key); i >= 0 && s.req.vals[i] != nil {
			v, _ := fromJS(s.req.rt.vm, s.req.vals[i], 1)
			return v
		}
	}
	return s.req.src.goValue(key)
}

// newConfig builds the config object: fixed holds the leading members in order.
func (rt *runtime) newConfig(r *request.Request, fixedKeys []string, fixed ...goja.Value) *goja.Object {
	reqLazy, reqObj := rt.newLazy(requestKeys(r), requestSource{detach(r)})
	keys := fixedKeys
	if (r.TCP && r.Data != "") || (!r.TCP && r.Method != "") {
		keys = rt.configKeys(fixedKeys, reqLazy.keys)
	}
	l, o := rt.newLazy(keys, configSource{reqLazy})
	l.vals[0] = reqObj
	copy(l.vals[1:], fixed)
	return o
}

// configKeys returns fixed followed by the request keys, cached per runtime.
func (rt *runtime) configKeys(fixed, req []string) []string {
	for _, c := range rt.cfgKeys {
		if &c.fixed[0] == &fixed[0] && &c.req[0] == &req[0] {
			return c.keys
		}
	}
	keys := append(append(make([]string, 0, len(fixed)+len(req)), fixed...), req...)
	rt.cfgKeys = append(rt.cfgKeys, cfgKeys{fixed, req, keys})
	return keys
}

type cfgKeys struct{ fixed, req, keys []string }

var (
	predicateConfigKeys = []string{"request", "state", "logger"}
	responseConfigKeys  = []string{"request", "state", "logger", "callback"}
	decorateConfigKeys  = []string{"request", "response", "logger", "state"}
)

// objectSource exposes a configuration object (a response for decorate) lazily; nested objects
// are lazy too, arrays are made whole.
type objectSource struct{ obj *config.Object }

func (s objectSource) js(rt *runtime, key string) goja.Value {
	v, _ := s.obj.Get(key)
	return rt.lazyValue(v)
}

func (s objectSource) goValue(key string) config.Value {
	v, _ := s.obj.Get(key)
	return v
}

func (rt *runtime) lazyValue(v config.Value) goja.Value {
	if o, ok := v.(*config.Object); ok && o != nil {
		_, obj := rt.newLazy(o.Keys(), objectSource{o})
		return obj
	}
	return toJS(rt.vm, v)
}

// Request returns r as Mountebank's scripts, behaviors and shell transforms see it (the recorded
// request shape: requestFrom, method, path, query, headers, body, ip and form for url-encoded
// bodies; requestFrom, ip and data for tcp). The result is a new object owned by the caller.
func Request(r *request.Request) *config.Object {
	s := requestSource{r}
	keys := requestKeys(r)
	o := &config.Object{Members: make([]config.Member, len(keys))}
	for i, k := range keys {
		o.Members[i] = config.Member{Key: k, Value: s.goValue(k)}
	}
	return o
}
