package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestDeleteDropsTheValue checks that Delete keeps no reference to the deleted value in the
// members' backing array: a deleted "stubs" member kept a whole imposter's stubs alive.
func TestDeleteDropsTheValue(t *testing.T) {
	for _, key := range []string{"a", "b", "c"} {
		o := NewObject("a", 1.0, "b", []any{"x"}, "c", "z")
		o.Delete(key)
		if o.Has(key) || o.Len() != 2 {
			t.Fatalf("Delete(%q): got keys %v", key, o.Keys())
		}
		if tail := o.Members[:3][2]; tail.Key != "" || tail.Value != nil {
			t.Errorf("Delete(%q): vacated slot still holds %#v", key, tail)
		}
	}
}

// TestParseJSONSharesShortStrings: an imposter of many stubs keeps one copy of each short key
// and value the stubs repeat, not one per stub. (A document of a few strings shares none: see
// shareAfter.)
func TestParseJSONSharesShortStrings(t *testing.T) {
	doc := "[" + strings.Repeat(`{"method":"GET","path":"/x"},`, shareAfter/4) + `{"method":"GET","path":"/a"},{"method":"GET","path":"/b"}]`
	v, err := ParseJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	list := v.([]any)
	a, b := list[len(list)-2].(*Object), list[len(list)-1].(*Object)
	if unsafe.StringData(a.Members[0].Key) != unsafe.StringData(b.Members[0].Key) {
		t.Error(`the key "method" is copied per object`)
	}
	va, vb := a.Members[0].Value.(string), b.Members[0].Value.(string)
	if unsafe.StringData(va) != unsafe.StringData(vb) {
		t.Error(`the value "GET" is copied per object`)
	}
	if a.Members[1].Value != "/a" || b.Members[1].Value != "/b" {
		t.Errorf("paths %v, %v", a.Members[1].Value, b.Members[1].Value)
	}
}

// TestBuilderAgreesWithObject: a Builder sets and gets as Object.Set and Object.Get do, below
// and past the size from which it keeps a map (duplicates keep the first position).
func TestBuilderAgreesWithObject(t *testing.T) {
	for _, n := range []int{3, builderIndexFrom - 1, builderIndexFrom, 100} {
		plain, built := &Object{}, &Object{}
		b := Builder{O: built}
		for i := 0; i < 3*n; i++ {
			key := fmt.Sprintf("k%d", (i*7)%n) // every key several times, out of order
			v := float64(i)
			plain.Set(key, v)
			b.Set(key, v)
			if got, ok := b.Get(key); !ok || got != v {
				t.Fatalf("n=%d: Get(%s) = %v, %v; want %v", n, key, got, ok, v)
			}
		}
		if _, ok := b.Get("absent"); ok {
			t.Errorf("n=%d: Get(absent) found", n)
		}
		if !reflect.DeepEqual(plain.Members, built.Members) {
			t.Errorf("n=%d: Builder made %v, Object.Set %v", n, built.Members, plain.Members)
		}
	}
}

// TestParseJSONManyKeys: an object of many keys, some repeated, reads as JSON.parse does (a later
// duplicate replaces the value in the first position), in time linear in its keys.
func TestParseJSONManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"z":0`)
	const n = 200000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `,"k%d":%d`, i%(n/2), i)
	}
	b.WriteString(`,"z":{"a":1,"a":2}}`)
	v, err := ParseJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	if o.Len() != n/2+1 {
		t.Fatalf("%d members, want %d", o.Len(), n/2+1)
	}
	if o.Members[0].Key != "z" || o.Members[1].Key != "k0" || o.Members[n/2].Key != fmt.Sprintf("k%d", n/2-1) {
		t.Errorf("members in the wrong order: %v %v %v", o.Members[0].Key, o.Members[1].Key, o.Members[n/2].Key)
	}
	if got, _ := o.Get("k0"); got != float64(n/2) {
		t.Errorf("k0 = %v, want the later value %d", got, n/2)
	}
	z, _ := o.Get("z")
	if a, _ := z.(*Object).Get("a"); a != 2.0 || z.(*Object).Len() != 1 {
		t.Errorf("z = %v, want {a: 2}", z)
	}
}
