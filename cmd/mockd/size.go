package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag value counting bytes, written as a number with an optional unit: B, KB,
// MB, GB (powers of 1000), KiB, MiB, GiB (powers of 1024), or K, M, G (read as KiB, MiB, GiB).
type byteSize int64

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

func (s *byteSize) Set(text string) error {
	t := strings.ToLower(strings.TrimSpace(text))
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*float64(factor) > 1<<62 {
		return fmt.Errorf("%q is not a size (such as 65536, 512KiB, 64MiB or 1GiB)", text)
	}
	*s = byteSize(n * float64(factor))
	return nil
}

func (s *byteSize) String() string {
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

func (s *byteSize) Type() string { return "size" }
