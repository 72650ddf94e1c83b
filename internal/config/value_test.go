package config

import (
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
