package jsvalue

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The implementations jsvalue replaced, as they were (config.JSString with config.AppendNumber,
// match's toNumber, config.ParseIntPrefix, the tcp imposter's decodeUTF8), for the differential
// tests below: the new ones must give the same answers wherever the old ones were right, and
// differ only where node says they were wrong (TestNode checks those answers).

func oldAppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	b := strconv.AppendFloat(nil, f, 'e', -1, 64)
	for i := 0; i < len(b); i++ {
		if b[i] == 'e' && i+2 < len(b) {
			exp := b[i+2:]
			for len(exp) > 1 && exp[0] == '0' {
				exp = exp[1:]
			}
			dst = append(dst, b[:i+2]...)
			return append(dst, exp...)
		}
	}
	return append(dst, b...)
}

func oldConfigJSString(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return string(oldAppendNumber(nil, t))
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			if e != nil {
				parts[i] = oldConfigJSString(e)
			}
		}
		return strings.Join(parts, ",")
	default:
		return "[object Object]"
	}
}

func oldMatchToNumber(v any) float64 {
	switch t := v.(type) {
	case nil:
		return 0
	case bool:
		if t {
			return 1
		}
		return 0
	case float64:
		return t
	case string:
		s := strings.TrimFunc(t, IsSpace)
		if s == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "_xXpP") {
			return f
		}
		if len(s) > 2 && s[0] == '0' && (s[1]|0x20) == 'x' {
			if n, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
				return float64(n)
			}
		}
		switch s {
		case "Infinity", "+Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
	}
	return math.NaN()
}

func oldParseIntPrefix(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	return n, err == nil
}

func oldTCPDecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

func TestDifferentialString(t *testing.T) {
	// config's String had no undefined and wrote Infinity as Go does; otherwise it was right.
	var oldWrong func(v any) bool
	oldWrong = func(v any) bool {
		switch t := v.(type) {
		case Undefined:
			return true
		case float64:
			return math.IsInf(t, 0)
		case []any:
			for _, e := range t {
				if oldWrong(e) {
					return true
				}
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	values := []any{}
	for _, c := range valueCases {
		if _, ok := c.v.(constant); !ok {
			values = append(values, c.v)
		}
	}
	for range 5000 {
		values = append(values, math.Float64frombits(rng.Uint64()), float64(rng.IntN(1e9))/math.Pow(10, float64(rng.IntN(25))))
	}
	for _, v := range values {
		got, old := String(v), oldConfigJSString(v)
		if got != old && !oldWrong(v) {
			t.Errorf("String(%#v) = %q, config.JSString gave %q", v, got, old)
		}
	}
}

func TestDifferentialNumber(t *testing.T) {
	// Where the old ToNumber was wrong (node: Number("inf") is NaN, Number("0o17") 15,
	// Number("1e400") Infinity; undefined and arrays convert).
	oldWrong := map[string]bool{"inf": true, "nan": true, "0o17": true, "0b101": true, "1e400": true, "1e-400": true}
	inputs := []any{Undef}
	for _, c := range valueCases {
		if s, ok := c.v.(string); ok {
			inputs = append(inputs, s)
		}
	}
	for _, s := range []string{"1", "-1", "+1", "1.5e3", "0x", "0xZZ", "0XfF", " 7\t", "\u3000 8", "Infinity ", "+Infinity", "1e", "e1", "--1", "0.0.0", "١٢"} {
		inputs = append(inputs, s)
	}
	for _, v := range inputs {
		got, old := Number(v), oldMatchToNumber(v)
		same := got == old || math.IsNaN(got) && math.IsNaN(old)
		if s, _ := v.(string); !same && !oldWrong[s] && !IsUndefined(v) {
			t.Errorf("Number(%q) = %v, match's toNumber gave %v", v, got, old)
		}
	}
}

func TestDifferentialParseInt(t *testing.T) {
	// The old parseInt trimmed ASCII space only and read no 0x.
	for _, c := range parseIntCases {
		n, ok := ParseInt(c.in)
		on, ook := oldParseIntPrefix(c.in)
		oldWrong := strings.ContainsAny(c.in, "xX\u00a0\ufeff")
		if (n != on || ok != ook) && !oldWrong {
			t.Errorf("ParseInt(%q) = %d, %v; config.ParseIntPrefix gave %d, %v", c.in, n, ok, on, ook)
		}
	}
}

func TestDifferentialDecodeUTF8(t *testing.T) {
	// The tcp imposter's decoder replaced byte by byte; it was right wherever no invalid
	// sequence is a truncated start of a valid one (then both give one U+FFFD a byte).
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range randomBytes(rng, 20000) {
		got, old := DecodeUTF8(b), oldTCPDecodeUTF8(b)
		if got == old {
			continue
		}
		if utf8.RuneCountInString(got) >= utf8.RuneCountInString(old) {
			t.Errorf("DecodeUTF8(% x) = %+q, the tcp decoder gave %+q: only fewer U+FFFD may differ", b, got, old)
		}
	}
}

// TestDifferentialAppendNumberIntegers: the integers AppendNumber writes as their digits are
// written as AppendFloat's shortest form wrote them, around 2^53 (where the digits and the
// shortest form part) and at random magnitudes up to 1e21, negative too.
func TestDifferentialAppendNumberIntegers(t *testing.T) {
	values := []float64{1, -1, 200, 404, 1e15, 1<<53 - 1, 1 << 53, 1<<53 + 2, -(1<<53 - 1), -(1 << 53), 1e20, 1e21 - 65536, 0.5, 1.5, -2.5, 1e-6, 4503599627370495.5}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		f := math.Trunc(math.Ldexp(rng.Float64(), rng.IntN(70)))
		if rng.IntN(2) == 0 {
			f = -f
		}
		values = append(values, f, f+0.25)
	}
	for _, f := range values {
		if got, old := string(AppendNumber(nil, f)), string(oldAppendNumber(nil, f)); got != old {
			t.Errorf("AppendNumber(%v) = %s, was %s", f, got, old)
		}
	}
}
