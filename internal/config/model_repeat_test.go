package config

import "testing"

// TestRepeat: how many times Mountebank 2.9.1 used a response before the next, for the repeat
// values its validation lets through (for (j = 0; j < repeat; j++): fractions count up).
func TestRepeat(t *testing.T) {
	for _, tc := range []struct {
		repeat Value
		want   int
	}{
		{nil, 1}, {1.0, 1}, {2.0, 2}, {1.5, 2}, {0.5, 1}, {"2", 2}, {"2.5", 3}, {" 3", 3}, {true, 1},
		{"", 1}, {"abc", 0}, {"2abc", 0}, {" ", 0}, {"0x2", 2}, {"1e1", 10}, {" 2 ", 2},
	} {
		o := NewObject("is", NewObject())
		if tc.repeat != nil {
			o.Set("repeat", tc.repeat)
		}
		if got := Repeat(o); got != tc.want {
			t.Errorf("repeat %#v: %d, want %d", tc.repeat, got, tc.want)
		}
	}
}
