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
//
// A lazy object either has a source that makes its values (a request, its headers, the config
// argument) or is backed by a configuration object (a response for decorate), whose member
// objects become lazy objects in turn. A backed object that no script changed converts back to
// the object it was made from (see export).
type lazy struct {
	rt   *runtime
	keys []string     // the keys in order
	vals []goja.Value // nil until made or set
	src  lazySource   // nil when backed by obj
	own  bool         // keys may be changed in place (else copy on write)

	// For a backed object:
	// dirty is set when a script changed this object or one of its member objects, or was
	// given a value that it could change without the object knowing (an array).
	dirty  bool
	obj    *config.Object // the object it reads its values from (by key)
	parent *lazy          // the backed object it is a member of, if any
	gen    uint64         // the call that made the outermost backed object (runtime.gen)
}

// lazySource makes the values of a lazy object.
type lazySource interface {
	// js makes the value of key for a script.
	js(rt *runtime, key string) goja.Value
	// goValue returns the value of key as configuration, for keys a script did not touch.
	goValue(key string) config.Value
}

var lazyType = reflect.TypeOf((*lazy)(nil))

// Lazy objects with their values (and, when backed, keys) in the same allocation.
type (
	lazyVals8 struct {
		lazy
		vals [8]goja.Value
	}
	lazyBacked2 struct {
		lazy
		vals [2]goja.Value
		keys [2]string
	}
	lazyBacked4 struct {
		lazy
		vals [4]goja.Value
		keys [4]string
	}
	lazyBacked8 struct {
		lazy
		vals [8]goja.Value
		keys [8]string
	}
)

// newLazy returns a lazy object with the keys (shared: copied before a change) and src.
func (rt *runtime) newLazy(keys []string, src lazySource) (*lazy, *goja.Object) {
	var l *lazy
	if n := len(keys); n <= 8 {
		p := &lazyVals8{}
		p.lazy.vals = p.vals[:n]
		l = &p.lazy
	} else {
		l = &lazy{vals: make([]goja.Value, n, n+2)}
	}
	l.rt, l.keys, l.src = rt, keys, src
	return l, rt.vm.NewDynamicObject(l)
}

// probeKey is the key lazyOf reads to find the lazy object behind a goja object.
const probeKey = "\x00mockd:lazy"

// lazyOf returns the lazy object o is, or nil, without the allocation of o.Export.
func (rt *runtime) lazyOf(o *goja.Object) *lazy {
	if o.ExportType() != lazyType {
		return nil
	}
	rt.probed = nil
	o.Get(probeKey)
	l := rt.probed
	rt.probed = nil
	return l
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
		if key == probeKey {
			l.rt.probed = l
			return goja.Undefined() // found: no lookup in the prototype
		}
		return nil
	}
	if l.vals[i] == nil {
		if l.obj != nil {
			l.vals[i] = l.member(key)
		} else {
			l.vals[i] = l.src.js(l.rt, key)
		}
	}
	return l.vals[i]
}

// Set implements goja.DynamicObject.
func (l *lazy) Set(key string, v goja.Value) bool {
	l.changed()
	if i := l.index(key); i >= 0 {
		l.vals[i] = v
		return true
	}
	l.ownKeys()
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
	l.changed()
	l.ownKeys()
	l.keys = append(l.keys[:i], l.keys[i+1:]...)
	l.vals = append(l.vals[:i], l.vals[i+1:]...)
	return true
}

// Keys implements goja.DynamicObject.
func (l *lazy) Keys() []string { return append([]string(nil), l.keys...) }

// ownKeys makes l.keys l's own, to be changed in place.
func (l *lazy) ownKeys() {
	if !l.own {
		l.keys = append(make([]string, 0, len(l.keys)+2), l.keys...)
		l.own = true
	}
}

// changed records that a script changed l, and so every backed object that holds it.
func (l *lazy) changed() {
	for p := l; p != nil && p.obj != nil && !p.dirty; p = p.parent {
		p.dirty = true
	}
}

// backed returns a lazy object backed by o: its keys are o's keys now, its values o's values
// when first read. parent is the backed object o is a member of, or nil.
func (rt *runtime) backed(o *config.Object, parent *lazy) *goja.Object {
	// The smallest size that holds o's members and one more (a script adding a header).
	var l *lazy
	switch n := len(o.Members); {
	case n < 2:
		p := &lazyBacked2{}
		p.lazy.vals, p.lazy.keys = p.vals[:n], p.keys[:0]
		l = &p.lazy
	case n < 4:
		p := &lazyBacked4{}
		p.lazy.vals, p.lazy.keys = p.vals[:n], p.keys[:0]
		l = &p.lazy
	case n <= 8:
		p := &lazyBacked8{}
		p.lazy.vals, p.lazy.keys = p.vals[:n], p.keys[:0]
		l = &p.lazy
	default:
		l = &lazy{vals: make([]goja.Value, n, n+2), keys: make([]string, 0, n+2)}
	}
	l.rt, l.own = rt, true
	for _, m := range o.Members {
		l.keys = append(l.keys, m.Key)
	}
	l.obj, l.parent, l.gen = o, parent, rt.gen
	if parent != nil {
		l.gen = parent.gen
	}
	return rt.vm.NewDynamicObject(l)
}

// member makes the value of a backed object's key: objects are backed lazy objects too, arrays
// are made whole (and, as a script may change them, count as a change of l).
func (l *lazy) member(key string) goja.Value {
	v, _ := l.obj.Get(key)
	switch t := v.(type) {
	case *config.Object:
		if t != nil {
			return l.rt.backed(t, l)
		}
	case []any:
		l.changed()
	}
	return toJS(l.rt.vm, v)
}

// goValue returns the value of a key no script has read, as configuration.
func (l *lazy) goValue(key string) config.Value {
	if l.obj == nil {
		return l.src.goValue(key)
	}
	v, _ := l.obj.Get(key)
	if l.gen != l.rt.gen {
		// Made in an earlier call (kept in the scripts' state): o may be a response the
		// imposter shares, which the caller must not receive to change.
		v = config.Clone(v)
	}
	return v
}

// export converts l to configuration, taking untouched values straight from its source. A
// backed object made in this call that no script changed is the object it was made from.
func (l *lazy) export(depth int) *config.Object {
	if l.obj != nil && !l.dirty && l.gen == l.rt.gen {
		return l.obj
	}
	o := config.ObjectWithRoom(len(l.keys))
	for i, k := range l.keys {
		var v config.Value
		if l.vals[i] == nil {
			if v = l.goValue(k); v == (omitted{}) {
				continue
			}
		} else {
			var ok bool
			if v, ok = fromJS(l.rt, l.vals[i], depth+1); !ok {
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
	if r.Object != nil { // a custom protocol's request, as its program sent it
		keys := make([]string, len(r.Object.Members))
		for i, m := range r.Object.Members {
			keys[i] = m.Key
		}
		return keys
	}
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

func (s requestSource) js(rt *runtime, key string) goja.Value {
	if s.r.Object != nil {
		return toJS(rt.vm, s.goValue(key))
	}
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

// str returns the value of key, a key whose value is a string (not query, headers or form).
func (s requestSource) str(key string) string {
	if s.r.Object != nil {
		v, _ := s.r.Object.Get(key)
		str, _ := v.(string)
		return str
	}
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
		return s.r.Data()
	}
	return ""
}

func (s requestSource) goValue(key string) config.Value {
	if s.r.Object != nil { // a copy: the script may change what it is given
		v, _ := s.r.Object.Get(key)
		return config.Clone(v)
	}
	switch key {
	case "requestFrom", "method", "path", "body", "ip", "data":
		return s.str(key)
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

// configObject is the `config` argument: fixed members (request, state, logger, callback,
// response) set when it is made, and, as Mountebank's downcastInjectionConfig does, the
// request's fields copied on top so old scripts can read config.path and the like. It holds the
// script's copy of the request (scripts may keep it in state beyond the call, and the caller's
// Request is pooled and reused); config.request is made when first read.
//
// A pooled runtime reuses one configObject, and the goja objects over it, for all its calls
// (see newConfig): their functions cannot keep the config beyond the call.
type configObject struct {
	lazy
	buf [12]goja.Value // the values: 4 fixed members and 8 request fields at most
	req request.Request
	// reqObj is config.request once made; reqLazy is its lazy object.
	reqObj  *goja.Object
	reqLazy *lazy

	// For reuse: the goja objects over c and over reqL, config.request's lazy object when
	// it has reqVals for its values (made once, on first use).
	obj, reqSelf *goja.Object
	reqL         lazy
	reqVals      [8]goja.Value

	// An inject response's callback (config.callback, the fourth argument) once made, and
	// what it was called with first.
	done   goja.Value
	called bool
	result goja.Value
}

// callback returns an inject response's callback, making it on first use.
func (c *configObject) callback() goja.Value {
	if c.done == nil {
		c.done = c.rt.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			if !c.called {
				c.called, c.result = true, call.Argument(0)
			}
			return goja.Undefined()
		})
	}
	return c.done
}

// isCalled reports whether the response was given (returned or passed to the callback).
func (c *configObject) isCalled() bool { return c.called }

// omitted is what a lazy source's goValue returns for a key whose value JSON drops (a function
// not yet made): export leaves the key out.
type omitted struct{}

// request returns config.request, making it on first use.
func (c *configObject) request() (*lazy, *goja.Object) {
	if c.reqObj == nil {
		keys := requestKeys(&c.req)
		if len(keys) > len(c.reqVals) {
			c.reqLazy, c.reqObj = c.rt.newLazy(keys, requestSource{&c.req})
			return c.reqLazy, c.reqObj
		}
		c.reqL = lazy{rt: c.rt, keys: keys, vals: c.reqVals[:len(keys)], src: requestSource{&c.req}}
		if c.reqSelf == nil {
			c.reqSelf = c.rt.vm.NewDynamicObject(&c.reqL)
		}
		c.reqLazy, c.reqObj = &c.reqL, c.reqSelf
	}
	return c.reqLazy, c.reqObj
}

// js makes config.request, or copies a request field: the same object as config.request's for
// query, headers and form, the original value for the others (Mountebank copies them before the
// script runs).
func (c *configObject) js(rt *runtime, key string) goja.Value {
	switch key {
	case "request":
		_, o := c.request()
		return o
	case "callback":
		return c.callback()
	case "query", "headers", "form":
		l, _ := c.request()
		if v := l.Get(key); v != nil {
			return v
		}
	}
	return requestSource{&c.req}.js(rt, key)
}

func (c *configObject) goValue(key string) config.Value {
	switch key {
	case "callback":
		return omitted{}
	case "request":
		if c.reqLazy == nil {
			return Request(&c.req)
		}
		return c.reqLazy.export(1)
	case "query", "headers", "form":
		if c.reqLazy != nil {
			if i := c.reqLazy.index(key); i >= 0 && c.reqLazy.vals[i] != nil {
				v, _ := fromJS(c.rt, c.reqLazy.vals[i], 1)
				return v
			}
		}
	}
	return requestSource{&c.req}.goValue(key)
}

// newConfig builds the config object: fixed holds the members after request, in order.
// A nil fixed value is made when first read (see configObject.js).
//
// A pooled runtime makes one and reuses it, cleared, for each call: the functions it runs
// cannot reach the state (see stateless.go), nor anything else that outlives their call, so
// nothing can hold the config of an earlier call (what a call returns or logs is converted to
// Go before it ends, and its timers and I/O end with it). That saves an inject call a quarter of
// the bytes it allocates. A runtime that holds the state makes one per call.
func (rt *runtime) newConfig(r *request.Request, fixedKeys []string, fixed ...goja.Value) (*goja.Object, *configObject) {
	c := rt.config // cleared by the end of the last call
	if c == nil {
		c = &configObject{}
		if rt.pooled {
			rt.config = c
		}
	}
	r.ShareInto(&c.req)
	keys := fixedKeys
	if configHasRequest(r) {
		keys = rt.configKeys(fixedKeys, requestKeys(r))
	}
	c.rt, c.keys, c.src = rt, keys, c
	if len(keys) <= len(c.buf) {
		c.vals = c.buf[:len(keys)]
	} else {
		c.vals = make([]goja.Value, len(keys))
	}
	copy(c.vals[1:], fixed)
	if c.obj == nil {
		c.obj = rt.vm.NewDynamicObject(&c.lazy)
	}
	return c.obj, c
}

// clear empties c for its next call, keeping the goja objects over it.
func (c *configObject) clear() {
	obj, reqSelf := c.obj, c.reqSelf
	*c = configObject{}
	c.obj, c.reqSelf = obj, reqSelf
}

// configHasRequest reports whether the config argument carries r's fields beside
// config.request (Mountebank copies them only from a request that has any).
func configHasRequest(r *request.Request) bool {
	if r.Object != nil {
		return r.Object.Len() > 0
	}
	return (r.TCP && r.DataLen() > 0) || (!r.TCP && r.Method != "")
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
