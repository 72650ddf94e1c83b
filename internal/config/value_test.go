package config

import "testing"

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
