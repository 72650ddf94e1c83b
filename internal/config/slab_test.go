package config

import (
	"strconv"
	"strings"
	"testing"
)

// grow adds a member to every object of v and an item to every array, as Object.Set and
// append do, and returns v (an array grown is a new slice its parent now holds).
func grow(v Value, n *int) Value {
	*n++
	switch t := v.(type) {
	case *Object:
		for i := range t.Members {
			t.Members[i].Value = grow(t.Members[i].Value, n)
		}
		t.Set("added"+strconv.Itoa(*n), float64(*n))
		if len(t.Members) > 1 {
			t.Delete(t.Members[0].Key) // shifts the others within the object's own members
		}
		return t
	case []any:
		for i := range t {
			t[i] = grow(t[i], n)
		}
		return append(t, float64(*n))
	}
	return v
}

// The objects and arrays of a document share the arrays their elements are taken from (see
// slab): growing or shrinking one, as the stubs' code does, must never change another.
func TestParsedValuesDoNotShareElements(t *testing.T) {
	for _, doc := range []string{
		`{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`,
		`[{"a":1},{"b":2,"c":[1,2]},[3,4],{},[],{"d":{"e":{"f":[{"g":1,"h":2}]}}}]`,
		`{"imposters":[` + strings.Repeat(`{"port":1,"stubs":[{"responses":[{"is":{"body":"x","headers":{"a":"b"}}}]}]},`, 40) + `{}]}`,
	} {
		v, err := ParseJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		want := Clone(v) // every object and array its own
		var n, m int
		got := MarshalJSON(grow(v, &n), 0)
		if w := MarshalJSON(grow(want, &m), 0); string(got) != string(w) {
			t.Errorf("%.60s: grown in place\n%s\nwant\n%s", doc, got, w)
		}
	}
}
