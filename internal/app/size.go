package app

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a flag value counting bytes, written as a number with an optional unit: B, KB,
// MB, GB (powers of 1000), KiB, MiB, GiB (powers of 1024), or K, M, G (read as KiB, MiB, GiB).
type ByteSize int

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// Set reads text as a size.
func (s *ByteSize) Set(text string) error {
	t := strings.ToLower(strings.TrimSpace(text))
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*float64(factor) > min(1<<62, math.MaxInt) {
		return fmt.Errorf("%q is not a size (such as 65536, 512KiB, 64MiB or 1GiB)", text)
	}
	*s = ByteSize(n * float64(factor))
	return nil
}

// String writes the size in the largest binary unit that divides it.
func (s *ByteSize) String() string {
	n := int64(*s)
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.factor && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Type names the flag's value in --help.
func (s *ByteSize) Type() string { return "size" }
