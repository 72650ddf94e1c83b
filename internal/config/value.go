// Package config holds mockd's one model of imposters and stubs and decodes it from Mountebank JSON
// and mockd YAML.
//
// Configuration values are kept as ordered JSON values (see Value) so that everything a user sends
// comes back in the same order, as Mountebank does: `GET /imposters/:port` echoes stubs as they were
// given and `is` bodies that are JSON objects are serialised in their original key order.
package config

import "math"

// Value is one decoded JSON value: nil, bool, float64, string, []any or *Object.
// Numbers are float64, exactly as in JavaScript.
type Value = any

// Member is one key of an Object.
type Member struct {
	Key   string
	Value Value
}

// Object is a JSON object that keeps its keys in insertion order, like a JavaScript object
// with non-numeric keys. It is not safe for concurrent mutation; published objects are treated as
// immutable and cloned before change.
type Object struct {
	Members []Member
}

// NewObject returns an object with the given key/value pairs (key, value, key, value, …).
func NewObject(kv ...any) *Object {
	o := &Object{Members: make([]Member, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// ObjectWithRoom returns an empty object with room for n members, made with them in one
// allocation when n is small (at most 8): an object and its members are one object for the
// collector to mark, not two (what a recorded proxy answer or a script's answer keeps).
func ObjectWithRoom(n int) *Object {
	switch {
	case n <= 1:
		p := &struct {
			o Object
			m [1]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 2:
		p := &struct {
			o Object
			m [2]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 3:
		p := &struct {
			o Object
			m [3]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 4:
		p := &struct {
			o Object
			m [4]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 5:
		p := &struct {
			o Object
			m [5]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 6:
		p := &struct {
			o Object
			m [6]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	case n <= 8:
		p := &struct {
			o Object
			m [8]Member
		}{}
		p.o.Members = p.m[:0]
		return &p.o
	}
	return &Object{Members: make([]Member, 0, n)}
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Members)
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	for i := range o.Members {
		if o.Members[i].Key == key {
			return o.Members[i].Value, true
		}
	}
	return nil, false
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Set sets key to v, keeping the key's position when it exists and appending it otherwise.
func (o *Object) Set(key string, v Value) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{Key: key, Value: v})
}

// Builder sets the keys of an object being built, many of them at a time: past a few members it
// finds keys with a map instead of scanning (Object.Set on each of n keys scans n²/2 members; a
// request body of 200,000 keys took minutes). Members must change only through the Builder
// while it is used.
type Builder struct {
	O   *Object
	idx map[string]int
}

// builderIndexFrom is the number of members from which a Builder keeps its map.
const builderIndexFrom = 16

func (b *Builder) find(key string) int {
	if b.idx == nil {
		if len(b.O.Members) < builderIndexFrom {
			for i := range b.O.Members {
				if b.O.Members[i].Key == key {
					return i
				}
			}
			return -1
		}
		b.idx = make(map[string]int, 2*len(b.O.Members))
		for i := len(b.O.Members) - 1; i >= 0; i-- { // the first of duplicate keys, as Get
			b.idx[b.O.Members[i].Key] = i
		}
	}
	if i, ok := b.idx[key]; ok {
		return i
	}
	return -1
}

// Get is Object.Get.
func (b *Builder) Get(key string) (Value, bool) {
	if i := b.find(key); i >= 0 {
		return b.O.Members[i].Value, true
	}
	return nil, false
}

// Set is Object.Set.
func (b *Builder) Set(key string, v Value) {
	if i := b.find(key); i >= 0 {
		b.O.Members[i].Value = v
		return
	}
	b.O.Members = append(b.O.Members, Member{Key: key, Value: v})
	if b.idx != nil {
		b.idx[key] = len(b.O.Members) - 1
	}
}

// Delete removes key if present.
func (o *Object) Delete(key string) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			n := len(o.Members)
			o.Members = append(o.Members[:i], o.Members[i+1:]...)
			o.Members[:n][n-1] = Member{} // the vacated slot would keep its value alive
			return
		}
	}
}

// Keys returns the keys in order.
func (o *Object) Keys() []string {
	keys := make([]string, 0, o.Len())
	if o != nil {
		for _, m := range o.Members {
			keys = append(keys, m.Key)
		}
	}
	return keys
}

// Clone returns a deep copy of v.
func Clone(v Value) Value {
	switch t := v.(type) {
	case *Object:
		if t == nil {
			return (*Object)(nil)
		}
		c := &Object{Members: make([]Member, len(t.Members))}
		for i, m := range t.Members {
			c.Members[i] = Member{Key: m.Key, Value: Clone(m.Value)}
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = Clone(e)
		}
		return c
	default:
		return v
	}
}

// SameJSON reports whether a and b certainly render alike (AppendJSON): both of the kinds
// ParseJSON makes (nil, bool, float64, int, string, []any, *Object), the same kinds throughout,
// numbers of the same bits, members in the same order with the same keys. Any other kind is
// never the same as anything, so a true answer is never wrong; comparing is cheaper than
// rendering (a client suite's new imposter is most often the last one again).
func SameJSON(a, b Value) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case int:
		y, ok := b.(int)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x == nil || y == nil || len(x.Members) != len(y.Members) {
			return false
		}
		for i := range x.Members {
			if x.Members[i].Key != y.Members[i].Key || !SameJSON(x.Members[i].Value, y.Members[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

// Plain converts v to the plain Go form encoding/json produces (map[string]any for objects),
// for code that does not care about key order.
func Plain(v Value) any {
	switch t := v.(type) {
	case *Object:
		if t == nil {
			return nil
		}
		m := make(map[string]any, len(t.Members))
		for _, mem := range t.Members {
			m[mem.Key] = Plain(mem.Value)
		}
		return m
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = Plain(e)
		}
		return c
	default:
		return v
	}
}

// FromPlain converts a plain Go JSON value (map[string]any, []any, numbers of any Go kind…)
// into a Value. Map keys are sorted, since a Go map has no order.
func FromPlain(v any) Value {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sortStrings(keys)
		o := &Object{Members: make([]Member, 0, len(keys))}
		for _, k := range keys {
			o.Members = append(o.Members, Member{Key: k, Value: FromPlain(t[k])})
		}
		return o
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = FromPlain(e)
		}
		return c
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case float32:
		return float64(t)
	default:
		return v
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// AsObject returns v as an object, or nil when it is not one.
func AsObject(v Value) *Object {
	o, _ := v.(*Object)
	return o
}

// IsObject reports whether v is a JSON object (not an array), as Mountebank's helpers.isObject.
func IsObject(v Value) bool {
	o, ok := v.(*Object)
	return ok && o != nil
}
