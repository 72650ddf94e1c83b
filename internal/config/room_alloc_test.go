//go:build !race

package config

import "testing"

// TestObjectWithRoomAllocations: up to 8 members, the object and its members are one
// allocation (one object for the collector to mark).
func TestObjectWithRoomAllocations(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8} {
		if a := testing.AllocsPerRun(100, func() { sinkObject = ObjectWithRoom(n) }); a != 1 {
			t.Errorf("ObjectWithRoom(%d): %v allocations, want 1", n, a)
		}
	}
}

var sinkObject *Object
