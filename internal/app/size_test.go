package app

import "testing"

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		text string
	}{
		{"0", 0, "0"},
		{"65536", 65536, "64KiB"},
		{"64MiB", 64 << 20, "64MiB"},
		{"64M", 64 << 20, "64MiB"},
		{"64mb", 64_000_000, "62500KiB"},
		{"1.5GiB", 3 << 29, "1536MiB"},
		{"256 KiB", 256 << 10, "256KiB"},
		{"100B", 100, "100"},
	} {
		var s ByteSize
		if err := s.Set(tc.in); err != nil {
			t.Errorf("Set(%q): %v", tc.in, err)
			continue
		}
		if int64(s) != tc.want || s.String() != tc.text {
			t.Errorf("Set(%q) = %d (%s), want %d (%s)", tc.in, int64(s), s.String(), tc.want, tc.text)
		}
	}
	for _, bad := range []string{"", "x", "-1", "12QB", "1e30GiB"} {
		var s ByteSize
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d, want an error", bad, int64(s))
		}
	}
}
