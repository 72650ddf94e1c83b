package jsvalue

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// point3 is 0.1+0.2 computed in float64 (a constant expression would be exact).
var point1, point2 = 0.1, 0.2
var point3 = point1 + point2

// constant is a Valuer, as match's compiled constants are.
type constant struct{ v any }

func (c constant) JSValue() any { return c.v }

// valueCases: js is the JavaScript expression for v; str, num and truthy are what Node 20 gives
// for String(js), String(Number(js)) and Boolean(js) (TestNode checks them again when node is on
// the PATH).
var valueCases = []struct {
	js     string
	v      any
	str    string
	num    string
	truthy bool
}{
	{"undefined", Undef, "undefined", "NaN", false},
	{"null", nil, "null", "0", false},
	{"true", true, "true", "1", true},
	{"false", false, "false", "0", false},
	{"0", 0.0, "0", "0", false},
	{"-0", math.Copysign(0, -1), "0", "0", false},
	{"NaN", math.NaN(), "NaN", "NaN", false},
	{"Infinity", math.Inf(1), "Infinity", "Infinity", true},
	{"-Infinity", math.Inf(-1), "-Infinity", "-Infinity", true},
	{"42", 42.0, "42", "42", true},
	{"-7.5", -7.5, "-7.5", "-7.5", true},
	{"1e21", 1e21, "1e+21", "1e+21", true},
	{"123456789012345680000", 123456789012345680000.0, "123456789012345680000", "123456789012345680000", true},
	{"1e-7", 1e-7, "1e-7", "1e-7", true},
	{"0.000001", 0.000001, "0.000001", "0.000001", true},
	{"-1.5e-300", -1.5e-300, "-1.5e-300", "-1.5e-300", true},
	{"5e-324", 5e-324, "5e-324", "5e-324", true},
	{"1.7976931348623157e308", math.MaxFloat64, "1.7976931348623157e+308", "1.7976931348623157e+308", true},
	{"0.1+0.2", point3, "0.30000000000000004", "0.30000000000000004", true},
	{"4294967296", 4294967296.0, "4294967296", "4294967296", true},
	{`""`, "", "", "0", false},
	{`" "`, " ", " ", "0", true},
	{`"0"`, "0", "0", "0", true},
	{`"false"`, "false", "false", "NaN", true},
	{`" 12 "`, " 12 ", " 12 ", "12", true},
	{`"\u00a012\u2028"`, "\u00a012\u2028", "\u00a012\u2028", "12", true},
	{`"0x1F"`, "0x1F", "0x1F", "31", true},
	{`"0o17"`, "0o17", "0o17", "15", true},
	{`"0b101"`, "0b101", "0b101", "5", true},
	{`"-0x10"`, "-0x10", "-0x10", "NaN", true},
	{`"0x1p3"`, "0x1p3", "0x1p3", "NaN", true},
	{`"1_000"`, "1_000", "1_000", "NaN", true},
	{`"inf"`, "inf", "inf", "NaN", true},
	{`"nan"`, "nan", "nan", "NaN", true},
	{`"Infinity"`, "Infinity", "Infinity", "Infinity", true},
	{`"-Infinity"`, "-Infinity", "-Infinity", "-Infinity", true},
	{`"1e400"`, "1e400", "1e400", "Infinity", true},
	{`"1e-400"`, "1e-400", "1e-400", "0", true},
	{`".5"`, ".5", ".5", "0.5", true},
	{`"5."`, "5.", "5.", "5", true},
	{`"12abc"`, "12abc", "12abc", "NaN", true},
	{"[]", []any{}, "", "0", true},
	{"[7]", []any{7.0}, "7", "7", true},
	{"[1,null,[2,undefined],true]", []any{1.0, nil, []any{2.0, Undef}, true}, "1,,2,,true", "NaN", true},
	{`[{}, "x"]`, []any{map[string]any{}, "x"}, "[object Object],x", "NaN", true},
	{"({a:1})", map[string]any{"a": 1.0}, "[object Object]", "NaN", true},
	{"[5]", constant{[]any{constant{5.0}}}, "5", "5", true},
	{"[null, 1]", constant{[]any{constant{nil}, 1.0}}, ",1", "NaN", true},
	{`""`, constant{""}, "", "0", false},
}

func TestValues(t *testing.T) {
	for _, c := range valueCases {
		if got := String(c.v); got != c.str {
			t.Errorf("String(%s) = %q, want %q", c.js, got, c.str)
		}
		if got := FormatNumber(Number(c.v)); got != c.num {
			t.Errorf("Number(%s) = %s, want %s", c.js, got, c.num)
		}
		if got := Truthy(c.v); got != c.truthy {
			t.Errorf("Boolean(%s) = %v, want %v", c.js, got, c.truthy)
		}
	}
}

var parseIntCases = []struct {
	in string
	n  int64
	ok bool
}{
	{"12", 12, true}, {"  -3px", -3, true}, {"+7", 7, true}, {"\u00a09", 9, true}, {"\ufeff4", 4, true},
	{"0x10", 16, true}, {"-0x1f", -31, true}, {"0x", 0, false}, {"0xg", 0, false}, {"1e3", 1, true}, {"", 0, false}, {"abc", 0, false}, {"-", 0, false}, {" + 1", 0, false},
}

func TestParseInt(t *testing.T) {
	for _, c := range parseIntCases {
		if n, ok := ParseInt(c.in); n != c.n || ok != c.ok {
			t.Errorf("ParseInt(%q) = %d, %v, want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}

var stringCases = []string{"", "abc", "ABC Straße", "İstanbul", "ΟΔΟΣ", "Σ", "ΑΣ.", "a\u0301Σ", "😀x", "é", "\uffff", "Ǆ", "ǅ"}

func TestStrings16(t *testing.T) {
	tests := []struct {
		s     string
		len16 int
		lower string
	}{
		{"", 0, ""}, {"abc", 3, "abc"}, {"ABC Straße", 10, "abc straße"}, {"İstanbul", 8, "i̇stanbul"},
		{"ΟΔΟΣ", 4, "οδος"}, {"Σ", 1, "σ"}, {"😀x", 3, "😀x"},
	}
	for _, tt := range tests {
		if got := Len16(tt.s); got != tt.len16 {
			t.Errorf("Len16(%q) = %d, want %d", tt.s, got, tt.len16)
		}
		if got := ToLower(tt.s); got != tt.lower {
			t.Errorf("ToLower(%q) = %q, want %q", tt.s, got, tt.lower)
		}
	}
	if ch, ok := CharAt16("a😀b", 3); !ok || ch != "b" {
		t.Errorf(`CharAt16("a😀b", 3) = %q, %v, want "b", true`, ch, ok)
	}
	if ch, ok := CharAt16("a😀b", 1); !ok || ch != "\uFFFD" {
		t.Errorf(`CharAt16("a😀b", 1) = %q, %v, want a lone surrogate (U+FFFD), true`, ch, ok)
	}
	if _, ok := CharAt16("ab", 2); ok {
		t.Errorf(`CharAt16("ab", 2): found, want out of range`)
	}
	// U+FFFF is one code unit, U+1F600 starts with the surrogate D83D: JavaScript orders them
	// the other way round from code points.
	if !Less16("😀", "\uffff") || Less16("\uffff", "😀") {
		t.Errorf(`Less16: want "😀" < "\uffff" as JavaScript compares code units`)
	}
}

func TestLess16(t *testing.T) {
	for _, tt := range []struct{ a, b string }{ // a < b in JavaScript
		{"", "a"},
		{"a", "b"},
		{"ab", "b"},
		{"Z", "a"},
		{"é", "ë"},           // differ in the second byte of the same lead byte
		{"xé", "xë"},         // and after a common prefix
		{"ā", "😀"},           // two bytes against four
		{"\u4e00", "\u4e01"}, // differ in the third byte
		{"😀", "\uffff"},      // surrogate D83D < FFFF
		{"😀", "😁"},           // differ in the fourth byte
		{"a\u00e9", "a\u00e9b"},
	} {
		if !Less16(tt.a, tt.b) {
			t.Errorf("Less16(%q, %q) = false, want true", tt.a, tt.b)
		}
		if Less16(tt.b, tt.a) {
			t.Errorf("Less16(%q, %q) = true, want false", tt.b, tt.a)
		}
	}
}

var decodeCases = []struct{ in, want string }{
	{"plain", "plain"},
	{"h\xe9", "h\ufffd"},
	{"\xff\xfeok", "\ufffd\ufffdok"},
	{"☃", "☃"},
	{"\xe2\x82A", "\ufffdA"},                         // a truncated sequence is one U+FFFD
	{"\xe0\x80A", "\ufffd\ufffdA"},                   // E0 80 cannot start anything valid
	{"\xf0\x9f\x98", "\ufffd"},                       // truncated at the end
	{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},           // a surrogate
	{"\xc0\xaf", "\ufffd\ufffd"},                     // overlong
	{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"}, // past U+10FFFF
	{"\xf0\x9fA\xf0\x9f\x98\x80", "\ufffdA😀"},
}

func TestDecodeUTF8(t *testing.T) {
	for _, tt := range decodeCases {
		if got := DecodeUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("DecodeUTF8(% x) = %+q, want %+q", tt.in, got, tt.want)
		}
		if got := DecodeUTF8(tt.in); got != tt.want {
			t.Errorf("DecodeUTF8(string % x) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

// referenceDecode is the WHATWG rule built another way, from the standard library: at an invalid
// byte, skip the longest start of a sequence utf8.FullRune still calls incomplete.
func referenceDecode(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[:n])
			b = b[n:]
			continue
		}
		skip := 1
		for k := 2; k <= 3 && k <= len(b); k++ {
			if !utf8.FullRune(b[:k]) {
				skip = k
			}
		}
		sb.WriteRune(utf8.RuneError)
		b = b[skip:]
	}
	return sb.String()
}

func FuzzDecodeUTF8(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := DecodeUTF8(b)
		if !utf8.ValidString(got) {
			t.Fatalf("DecodeUTF8(% x) = %+q: not valid UTF-8", b, got)
		}
		if want := referenceDecode(b); got != want {
			t.Fatalf("DecodeUTF8(% x) = %+q, want %+q", b, got, want)
		}
		if utf8.Valid(b) && got != string(b) {
			t.Fatalf("DecodeUTF8(% x) changed valid UTF-8 into %+q", b, got)
		}
	})
}

// randomBytes returns byte strings rich in UTF-8 lead and continuation bytes.
func randomBytes(rng *rand.Rand, n int) [][]byte {
	alphabet := []byte{'a', 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, rng.IntN(7))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		out[i] = b
	}
	return out
}

// TestNode checks the tables above and random inputs against node itself.
func TestNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on the PATH")
	}
	rng := rand.New(rand.NewPCG(21, 21))
	var js strings.Builder
	js.WriteString("const out = [];\n")
	for _, c := range valueCases {
		if _, ok := c.v.(constant); ok {
			continue
		}
		js.WriteString("{ const v = " + c.js + "; out.push([String(v), String(Number(v)), Boolean(v)]); }\n")
	}
	floats := make([]float64, 500)
	for i := range floats {
		switch i % 3 {
		case 0:
			floats[i] = math.Float64frombits(rng.Uint64())
		case 1:
			floats[i] = float64(rng.IntN(1e6)) / math.Pow(10, float64(rng.IntN(12)))
		default:
			floats[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
		}
		if math.IsNaN(floats[i]) || math.IsInf(floats[i], 0) {
			floats[i] = 1
		}
		js.WriteString("out.push(String(" + strconv.FormatFloat(floats[i], 'g', -1, 64) + "));\n")
	}
	for _, c := range parseIntCases {
		q, _ := json.Marshal(c.in)
		js.WriteString("out.push(String(parseInt(" + string(q) + ")));\n")
	}
	for _, s := range stringCases {
		q, _ := json.Marshal(s)
		js.WriteString("out.push([" + string(q) + ".length, " + string(q) + ".toLowerCase()]);\n")
	}
	bytesCases := randomBytes(rng, 2000)
	for _, b := range bytesCases {
		js.WriteString("out.push(Buffer.from('" + hex.EncodeToString(b) + "', 'hex').toString('utf8'));\n")
	}
	js.WriteString("console.log(JSON.stringify(out));\n")
	cmd := exec.Command(node, "-")
	cmd.Stdin = strings.NewReader(js.String())
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var answers []json.RawMessage
	if err := json.Unmarshal(got, &answers); err != nil {
		t.Fatalf("node's answer: %v", err)
	}
	next := func(dst any) {
		if len(answers) == 0 {
			t.Fatal("node gave fewer answers than asked")
		}
		if err := json.Unmarshal(answers[0], dst); err != nil {
			t.Fatalf("node's answer %s: %v", answers[0], err)
		}
		answers = answers[1:]
	}
	for _, c := range valueCases {
		if _, ok := c.v.(constant); ok {
			continue
		}
		var a [3]any
		next(&a)
		if a[0] != c.str || a[1] != c.num || a[2] != c.truthy {
			t.Errorf("node says %s is %q, Number %s, Boolean %v; the table says %q, %s, %v", c.js, a[0], a[1], a[2], c.str, c.num, c.truthy)
		}
	}
	for _, f := range floats {
		var s string
		next(&s)
		if got := FormatNumber(f); got != s {
			t.Errorf("FormatNumber(%v) = %s, node says %s", f, got, s)
		}
	}
	for _, c := range parseIntCases {
		var s string
		next(&s)
		want := "NaN"
		if c.ok {
			want = strconv.FormatInt(c.n, 10)
		}
		if s != want {
			t.Errorf("parseInt(%q): node says %s, the table says %s", c.in, s, want)
		}
	}
	for _, s := range stringCases {
		var a [2]any
		next(&a)
		if n := Len16(s); float64(n) != a[0] {
			t.Errorf("Len16(%q) = %d, node says %v", s, n, a[0])
		}
		if l := ToLower(s); l != a[1] {
			t.Errorf("ToLower(%q) = %q, node says %q", s, l, a[1])
		}
	}
	for _, b := range bytesCases {
		var s string
		next(&s)
		if got := DecodeUTF8(b); got != s {
			t.Errorf("DecodeUTF8(% x) = %+q, node says %+q", b, got, s)
		}
	}
}

// BenchmarkDecodeUTF8Body is a 1 MiB ASCII request body (bench/'s body-1mib-request), the
// common case: it must cost a check and a copy, not a loop over every byte.
func BenchmarkDecodeUTF8Body(b *testing.B) {
	body := []byte(strings.Repeat(`{"name":"mockd","tags":[1,2,3]},`, 1<<15))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_ = DecodeUTF8(body)
	}
}

// BenchmarkValidBody is the check alone on the same body: what a large request body the
// request view does not copy (request.FromHTTPView) still costs.
func BenchmarkValidBody(b *testing.B) {
	body := []byte(strings.Repeat(`{"name":"mockd","tags":[1,2,3]},`, 1<<15))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(body) {
			b.Fatal("not valid")
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		in   []any
		want string
	}{
		{nil, ""},
		{[]any{nil, Undef}, ","},
		{[]any{1.0, "a", true, []any{2.0, []any{nil, "b"}}, map[string]any{}}, "1,a,true,2,,b,[object Object]"},
		{[]any{constant{[]any{"c", 3.0}}, constant{nil}}, "c,3,"},
		{[]any{[]any{}, []any{[]any{}}}, ","},
	} {
		if got := Join(tt.in); got != tt.want {
			t.Errorf("Join(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestValidString: the ASCII loop and the standard library's check agree at every length and
// place of a byte past ASCII.
func TestValidString(t *testing.T) {
	for n := 0; n < 80; n++ { // past two of the 32-byte steps, and the 8-byte ones after them
		for at := -1; at < n; at++ {
			for _, bad := range []string{"é", "\xff", "\xe2\x82", "€"} {
				b := []byte(strings.Repeat("a", n))
				if at >= 0 {
					b = append(b[:at], append([]byte(bad), b[at:]...)...)
				}
				if got, want := ValidString(string(b)), utf8.Valid(b); got != want || Valid(b) != want {
					t.Errorf("ValidString(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

func FuzzValidString(f *testing.F) {
	f.Add("abcdefgh\xe2\x82\xac")
	f.Add("\xffabcdefghijklmno")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidString(s), utf8.ValidString(s); got != want || Valid([]byte(s)) != want {
			t.Fatalf("ValidString(%q) = %v, want %v", s, got, want)
		}
	})
}
