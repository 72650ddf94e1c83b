package admin

import (
	"strconv"
	"testing"
)

// canonicalIntWas is the test canonicalInt stands for.
func canonicalIntWas(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && strconv.Itoa(n) == s
}

func TestCanonicalInt(t *testing.T) {
	for _, s := range []string{"", "0", "00", "-0", "+0", "4545", "04545", "+4545", "-4545", "-04545", "45 45",
		"4545 ", "4_545", "0x10", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-", "+", "1e3"} {
		n, ok := canonicalInt(s)
		wn, wok := canonicalIntWas(s)
		if ok != wok || (ok && n != wn) {
			t.Errorf("canonicalInt(%q) = %d, %v; want %d, %v", s, n, ok, wn, wok)
		}
	}
}

func FuzzCanonicalInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "4545", "04545", "+1", "-12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := canonicalInt(s)
		wn, wok := canonicalIntWas(s)
		if ok != wok || (ok && n != wn) {
			t.Fatalf("canonicalInt(%q) = %d, %v; want %d, %v", s, n, ok, wn, wok)
		}
	})
}

func BenchmarkCanonicalInt(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		canonicalInt("45454")
	}
}
