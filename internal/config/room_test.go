package config

import "testing"

// TestObjectWithRoom: an empty object with room for n members, whatever n.
func TestObjectWithRoom(t *testing.T) {
	for n := 0; n <= 12; n++ {
		o := ObjectWithRoom(n)
		if o.Len() != 0 || cap(o.Members) < n {
			t.Errorf("ObjectWithRoom(%d): %d members, room for %d", n, o.Len(), cap(o.Members))
		}
		for i := 0; i < n; i++ {
			o.Set(string(rune('a'+i)), float64(i))
		}
		if o.Len() != n {
			t.Errorf("ObjectWithRoom(%d) then %d members set: %d", n, n, o.Len())
		}
	}
}
