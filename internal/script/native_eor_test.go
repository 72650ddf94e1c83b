package script

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The resolvers bench/ and Mountebank's users write: a 4-byte length prefix read by index or
// with readUInt32BE, with and without the header counted.
const (
	lpByIndex  = `function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }`
	lpReadUInt = `function (requestData) { return requestData.length >= 4 && requestData.length >= requestData.readUInt32BE(0) + 4; }`
)

func TestCompileEOR(t *testing.T) {
	tests := []struct {
		src    string
		native bool
	}{
		{lpByIndex, true},
		{lpReadUInt, true},
		{`function (requestData, logger) { if (requestData.length < 4) { return false; } var n = requestData.readUInt32BE(0); return requestData.length === n + 4; }`, true},
		{`(data) => data.length >= 2 && data.length - 2 >= data.readUInt16LE()`, true},
		{`d => { const len = (d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]; return d.length >= len >>> 0; }`, true},
		{`function (d) { let a = d.readInt32LE(0), b = d.readInt8(4); return a + b > 0 ? true : d[5] ?? null; }`, true},
		{`function () { return true; }`, true},
		{`function (d) { ; if (d.length) return; else { return !d.length; } }`, true},
		{`function f(d) { var f = d.length; return f > 3; }`, true},
		{`function (d) { return d.length == undefined; }`, true},
		// Outside the subset.
		{`function (d) { return d.length >= 4 + d.readUInt32BE(0, 1); }`, false}, // two arguments
		{`function (d) { return d.readFloatBE(0) > 1; }`, false},
		{`function (d) { return d.readBigUInt64BE(0) > 1n; }`, false},
		{`function (d) { return d.readUIntBE(0, 3) > 1; }`, false},
		{`function (d) { return d.toString().indexOf('\n') >= 0; }`, false},
		{`function (d) { return d.length > 'a'; }`, false}, // a string
		{`function (d) { return d; }`, false},
		{`function (d) { return d.byteLength > 4; }`, false},
		{`function (d, logger) { logger.info('x'); return true; }`, false},
		{`function (d, logger) { return logger; }`, false},
		{`function (d, d) { return d.length > 0; }`, false}, // d is the logger
		{`function (d) { return x > 0; }`, false},
		{`function (d) { return n > 0; var n = 1; }`, false},        // hoisted: used before
		{`function (d) { let n = n + 1; return n; }`, false},        // its own initializer
		{`function (d) { var n = 1; var n = 2; return n; }`, false}, // declared twice
		{`function (d) { var d = 1; return d; }`, false},
		{`function (d) { let undefined = 1; return undefined; }`, false},
		{`function (undefined) { return undefined; }`, false},
		{`function (d) { if (d.length) { var n = 1; } return true; }`, false},
		{`function (d) { let n; return true; }`, false},
		{`function (d) { var n = 1; n = 2; return n; }`, false},
		{`function (d) { return d.length ** 2; }`, false},
		{`function (d) { return typeof d; }`, false},
		{`function (d) { return d.length++; }`, false},
		{`function (d) { return (d.length, true); }`, false},
		{`function (d) { return d?.length; }`, false},
		{`function (d) { return d[0n]; }`, false},
		{`function (d) { return this.x; }`, false},
		{`function (d) { return arguments[0].length; }`, false},
		{`function (d) { 'use strict'; return true; }`, false},
		{`function (d) { while (true) {} }`, false},
		{`function (d) { return NaN; }`, false},
		{`function (...d) { return true; }`, false},
		{`function ({length}) { return length > 1; }`, false},
		{`function (d = 1) { return true; }`, false},
		{`async function (d) { return false; }`, false},
		{`async (d) => false`, false},
		{`function* (d) { return false; }`, false},
		{`function (d) { function g() {} return true; }`, false},
		{`1`, false},
		{`(d) => true; (d) => false`, false},
	}
	for _, tc := range tests {
		if fn := compileEOR(tc.src); (fn != nil) != tc.native {
			t.Errorf("compileEOR(%s) = %v, want native %v", tc.src, fn != nil, tc.native)
		}
	}
}

// TestEORLowered: the length-prefix resolvers compile to numeric nodes (see lowerEOR) where
// nothing can give up: lpByIndex to one && of two comparisons of numbers; a division or a read
// stays an evalue node.
func TestEORLowered(t *testing.T) {
	fn := compileEOR(lpByIndex)
	ret, ok := fn.body[0].(*eReturn)
	if !ok {
		t.Fatalf("body %T", fn.body[0])
	}
	and, ok := ret.e.(*eLogical)
	if !ok {
		t.Fatalf("return %T", ret.e)
	}
	l, lok := and.l.(*eCmpNum)
	r, rok := and.r.(*eCmpNum)
	if !lok || !rok {
		t.Fatalf("&& of %T and %T, want two *eCmpNum", and.l, and.r)
	}
	if sum, ok := r.r.(*numSum); !ok || sum.c != 4 || len(sum.terms) != 4 || sum.end != 4 {
		t.Errorf("the prefix sum is %#v", r.r)
	}
	if _, ok := l.l.(*numLength); !ok {
		t.Errorf("requestData.length is %T", l.l)
	}
	for _, tc := range []struct{ src, want string }{
		{`d => d[1]`, "*script.numIndexConst"},
		{`d => d[1.5]`, "*script.eConst"},
		{`d => d[d.length - 1]`, "*script.eIndex"}, // an index that is always a number, but not an argument of arithmetic
		{`d => d[d.length - 1] + 1`, "*script.eNumber"},
		{`d => d[0] / d[1]`, "*script.eBinary"},
		{`d => d.readUInt32BE(0) + 4`, "*script.eBinary"},
		{`d => d[null] + 1`, "*script.eBinary"},
		{`d => !d.length`, "*script.eUnary"},
		{`d => -d.length`, "*script.eNumber"},
	} {
		fn := compileEOR(tc.src)
		if fn == nil {
			t.Errorf("%s: not native", tc.src)
			continue
		}
		if got := fmt.Sprintf("%T", fn.body[0].(*eReturn).e); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.src, got, tc.want)
		}
	}
	// Sums numSum computes exactly in any order are one node; others stay + and * nodes.
	for _, tc := range []struct {
		src   string
		fused bool
	}{
		{`d => d[0] + d[1]`, true},
		{`d => 2 + d[1] * 256 + null + true + d[0]`, true},
		{`d => d[0] * 4294967296 + d[1] + 7`, true},
		{`d => d[0] + d[1] - 7`, false},
		{`d => d[0] * -1 + 1`, false},
		{`d => d[0] * 0.5 + 1`, false},
		{`d => d[0] * 8589934592 + 1`, false},
		{`d => d[0] + 0.1`, false},
		{`d => 1 + 2`, false},
		{`d => d[0] + d[1] + d[2] + d[3] + d[4] + d[5] + d[6] + d[7] + d[8]`, false},
		{`d => d[0] + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1`, false},
		{`d => d[0] + d.length`, false},
	} {
		fn := compileEOR(tc.src)
		e, ok := fn.body[0].(*eReturn).e.(*eNumber)
		if !ok {
			t.Errorf("%s: %T", tc.src, fn.body[0].(*eReturn).e)
			continue
		}
		if _, fused := e.n.(*numSum); fused != tc.fused {
			t.Errorf("%s: fused %v, want %v", tc.src, fused, tc.fused)
		}
	}
}

// eorInputs are the packets the resolvers are tried on: every length from 0 to 9, prefixes
// that the packet holds whole, exceeds, or falls short of, bytes with the high bit set.
func eorInputs() [][]byte {
	frame := func(n uint32, payload string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), payload...)
	}
	ins := [][]byte{nil, {}, {0}, {0, 0}, {0, 0, 0}, {0, 0, 0, 0}, {0xff}, {0x80, 0}, {0xff, 0xff, 0xff, 0xff}, {0x7f, 0xff, 0xff, 0xff, 1},
		frame(11, "GET user 42"), frame(11, "GET user"), frame(2, "abc"), frame(0, ""), frame(1<<31, "x"),
		{1, 2, 3, 4, 5, 6, 7, 8, 9}, {0x80, 0x81, 0xfe, 0xff, 0x00, 0x01, 0x7f, 0x10},
		[]byte("\x00\x00\x00\x05hello"), []byte("\x05\x00\x00\x00hello")}
	for n := range 10 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		ins = append(ins, b)
	}
	return ins
}

// checkEOR runs src natively and on goja for every input and fails when the native answer
// differs from goja's, or is given where goja fails. It returns how many calls ran natively.
func checkEOR(t *testing.T, s *Scope, src string, inputs [][]byte) int {
	t.Helper()
	if s.e.compile(src).err != nil {
		return 0 // EndOfRequestResolver runs natively only what goja compiles
	}
	fn := compileEOR(src)
	if fn == nil {
		return 0
	}
	ran := 0
	for _, in := range inputs {
		got, ok := fn.run(in)
		if !ok {
			continue
		}
		ran++
		want, err := s.EndOfRequest(src, in, true)
		if err != nil {
			t.Errorf("%s (% x): native gives %v, goja fails: %v", src, in, got, err)
			continue
		}
		if got != want {
			t.Errorf("%s (% x): native %v, goja %v", src, in, got, want)
		}
	}
	return ran
}

// TestEORMatchesGoja runs resolvers of the subset both ways; each must run natively for at
// least one input.
func TestEORMatchesGoja(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, src := range []string{
		lpByIndex,
		lpReadUInt,
		`function (requestData) { return requestData.length >= requestData.readUInt32BE(0); }`,
		`function (requestData) { return requestData.length === 4 + requestData.readUInt32BE(); }`,
		`function (requestData, logger) { if (requestData.length < 4) { return false; } var n = requestData.readUInt32BE(0); return requestData.length === n + 4; }`,
		`function (d) { if (d.length < 2) return false; const n = d.readUInt16BE(0); return d.length >= n + 2; }`,
		`(data) => data.length >= 2 && data.length - 2 >= data.readUInt16LE()`,
		`d => { const len = (d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]; return d.length >= len >>> 0; }`,
		`d => d.length >= 4 && d.length - 4 >= ((d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3])`,
		`d => d.length >= 4 && d.readInt32LE(0) + d.readInt32BE(0) + d.readUInt32LE(0) + d.readUint32BE(0) + d.readUint32LE(0) > 0`,
		`d => d.length >= 2 && d.readInt16LE(0) + d.readInt16BE(0) * 3 + d.readUint16LE(0) + d.readUint16BE(0) < 0`,
		`d => d.length >= 1 && d.readInt8(0) < 0 && d.readUInt8(0) > 127 && d.readUint8() === d[0]`,
		`function (d) { let a = d.readInt32LE(0), b = d.readInt8(4); return a + b > 0 ? true : d[5] ?? null; }`,
		`function (d) { return d[d.length - 1] === 10; }`,
		`function (d) { return d[-1] === undefined && d[1.5] === undefined && d[-0] === d[0] && d[d.length] == null; }`,
		`function (d) { return d[0] / d[1] > 1 || d[0] % d[1] === 0 || -d[0] < ~d[1]; }`,
		`function (d) { return (d[0] >> 1) + (d[1] >>> 1) + (d[2] ^ 3) + (d[3] & 7) + +!d[4] - -true; }`,
		`function (d) { return (-0 === 0) && 5 % -3 === 2 && -5 % 3 === -2 && 7 / 2 === 3.5 && 5 % 0 !== 5 % 0 && 1e308 * 10 > 1e308; }`,
		`function (d) { return ((4294967296 * 3 + 5) | 0) === 5 && (2147483648 | 0) < 0 && (-1 >>> 0) === 4294967295 && (1 << 33) === 2 && (1 << -1) < 0; }`,
		`function (d) { return ((1e21 | 0) + (-1e21 >>> 0) + (9.3e18 << 1) + (-9.3e18 >> 1) + ~1e300) === d[0]; }`, // goja's, not node's
		`function (d) { return 1 / (0 * -5) < 0 || 1 / (-5 % 5) > 0 || d[0] / d[1] > 0; }`,                         // given up when dividing by 0`
		`function (d) { return (null + 1 === 1) && (undefined + 1 !== undefined + 1) && (null == undefined) && (null !== undefined) && !(null == 0) && (true == 1) && !(true === 1) && (null >= 0); }`,
		`function (d) { return d.length ? d.length > 3 ? d[3] : null : undefined; }`,
		`function (d) { return d.length && d[0]; }`,
		`function (d) { return d.length || d[0]; }`,
		`function (d) { return d[9] ?? d.length > 1; }`,
		`function (d) { if (d.length > 5) { if (d[0]) return d[1]; } else return 0; return d.length; }`,
		`function (d) { ; { } if (d.length) return; else { return !d.length; } }`,
		`function f(d) { var f = d.length; return f > 3; }`,
		`function () { return true; }`,
		`function (d) {}`,
		`(d) => 0.1 + 0.2 === 0.3`,
		// Sums of bytes at constant offsets (numSum), and shapes left to + and * nodes.
		`d => d.length - 4 >= d[0] * 16777216 + d[1] * 65536 + d[2] * 256 + d[3]`,
		`d => d.length >= 2 + d[1] * 256 + null + true + d[0] + d[7] + d[8] * 4294967296`,
		`d => (d[0] * 4294967296 + d[1] * 4294967296 + 4294967296 + d[2] + 4294967296) % 7 === d[3] % 7 || d[4] + d[5] > 255`,
		`d => 1 / (d[0] * 0 + d[1] * 0 + 0) > 0 || d[0] * 0.5 + d[1] * -1 + 0.1 < d[2] + -d[3]`,
		`(d) => 9007199254740993 === 9007199254740992 && 0x10 === 16 && 1e3 === 1000`,
		// Given up on for some inputs (goja throws): an offset out of range or not an integer.
		`function (d) { return d.length >= 4 + d.readUInt32BE(0); }`,
		`function (d) { return d.readUInt16BE(d.length - 2) > 0; }`,
		`function (d) { return d.readUInt8(1.5) > 0 || d.readUInt8(d[0]) > 0; }`,
		`function (d) { return d.readUInt8(null) > 0 || d.readUInt8(true); }`,
		`function (d) { return d.readUInt8(undefined) >= 0; }`,
		`function (d) { return d.readUInt8(-0) >= 0; }`,
		`function (d) { return d[true] === undefined || d[null] === undefined || d[undefined] === undefined; }`,
	} {
		if compileEOR(src) == nil {
			t.Errorf("%s: not native", src)
			continue
		}
		if checkEOR(t, s, src, eorInputs()) == 0 && !strings.Contains(src, "d[true]") && !strings.Contains(src, "(null)") && !strings.Contains(src, "(1.5)") && !strings.Contains(src, "(0 * -5)") {
			t.Errorf("%s: never ran natively", src)
		}
	}
}

// TestEORResolverGivesUpToGoja: a call the native form gives up on runs on goja, whose error
// (node's RangeError) the caller sees, as before; a text-mode resolver always runs on goja.
func TestEORResolverGivesUpToGoja(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	resolve := s.EndOfRequestResolver(`function (requestData) { return requestData.length >= requestData.readUInt32BE(0) + 4 || requestData.readUInt32BE(8) > 0; }`, true)
	if done, err := resolve([]byte("\x00\x00\x00\x09abc")); err == nil || done {
		t.Errorf("a read past the end: %v, %v; want goja's error", done, err)
	} else if !strings.Contains(err.Error(), "invalid end of request injection") {
		t.Errorf("error %v", err)
	}
	if done, err := resolve([]byte("\x00\x00\x00\x01a")); err != nil || !done {
		t.Errorf("a whole frame: %v, %v", done, err)
	}
	text := s.EndOfRequestResolver(`function (d) { return d.length >= 3; }`, false)
	if done, err := text([]byte("é")); err != nil || done { // 1 character of text, 2 bytes
		t.Errorf("text mode: %v, %v; want goja's answer (false)", done, err)
	}
}

// TestEORDifferential compares native and goja answers for random resolvers of (mostly) the
// subset on random packets.
func TestEORDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 2000
	if testing.Short() {
		n = 200
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	compiled, ran := 0, 0
	for range n {
		src := randomEOR(rng)
		if compileEOR(src) != nil {
			compiled++
		}
		ran += checkEOR(t, s, src, randomPackets(rng, 6))
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d resolvers native, %d native calls", compiled, n, ran)
	if compiled < n/2 || ran < n {
		t.Errorf("%d of %d resolvers native, %d native calls: the generator no longer exercises the subset", compiled, n, ran)
	}
}

// FuzzNativeEndOfRequest compares native and goja answers for any resolver the subset accepts
// and any packet.
func FuzzNativeEndOfRequest(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		f.Add(randomEOR(rng), []byte("\x00\x00\x00\x03abc"))
	}
	f.Add(lpByIndex, []byte("\x00\x00\x00\x0bGET user 42"))
	f.Add(lpReadUInt, []byte("\x00\x00"))
	s := New(Options{Timeout: time.Minute}).NewScope(nil)
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		checkEOR(t, s, src, [][]byte{data})
	})
}

func randomPackets(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, rng.IntN(10))
		for j := range b {
			switch rng.IntN(4) {
			case 0:
				b[j] = 0
			case 1:
				b[j] = byte(rng.IntN(8))
			default:
				b[j] = byte(rng.IntN(256))
			}
		}
		out[i] = b
	}
	return out
}

// randomEOR writes a random resolver, mostly of the subset.
func randomEOR(rng *rand.Rand) string {
	g := &eorGen{rng: rng}
	var b strings.Builder
	switch rng.IntN(3) {
	case 0:
		return "(d) => " + g.expr(3)
	case 1:
		b.WriteString("function (d, logger) { ")
	default:
		b.WriteString("function (d) { ")
	}
	for range rng.IntN(3) {
		kw := g.pick("var", "let", "const")
		name := "v" + strconv.Itoa(g.locals)
		b.WriteString(kw + " " + name + " = " + g.expr(2) + "; ")
		g.locals++
	}
	if rng.IntN(3) == 0 {
		b.WriteString("if (" + g.expr(2) + ") " + g.pick("return "+g.expr(2)+";", "{ return "+g.expr(1)+"; }", "{ }") + " ")
		if rng.IntN(2) == 0 {
			b.WriteString("else return " + g.expr(2) + "; ")
		}
	}
	if rng.IntN(8) != 0 {
		b.WriteString("return " + g.expr(3) + "; ")
	}
	b.WriteString("}")
	return b.String()
}

type eorGen struct {
	rng    *rand.Rand
	locals int
}

func (g *eorGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g *eorGen) expr(depth int) string {
	if depth == 0 || g.rng.IntN(4) == 0 {
		return g.leaf()
	}
	switch g.rng.IntN(6) {
	case 0:
		return g.pick("!", "-", "+", "~") + g.expr(depth-1)
	case 1:
		return "(" + g.expr(depth-1) + " ? " + g.expr(depth-1) + " : " + g.expr(depth-1) + ")"
	case 2:
		return "(" + g.expr(depth-1) + " " + g.pick("&&", "||", "??") + " " + g.expr(depth-1) + ")"
	default:
		return "(" + g.expr(depth-1) + " " + g.pick("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", ">>>",
			"==", "!=", "===", "!==", "<", "<=", ">", ">=") + " " + g.expr(depth-1) + ")"
	}
}

func (g *eorGen) leaf() string {
	switch g.rng.IntN(12) {
	case 0, 1:
		return "d.length"
	case 2, 3:
		return "d[" + g.pick("0", "1", "2", "3", "4", "d.length - 1", "-1", "1.5", "d[0]") + "]"
	case 4:
		m := g.pick("readUInt8", "readInt8", "readUInt16BE", "readUInt16LE", "readInt16BE", "readInt16LE",
			"readUInt32BE", "readUInt32LE", "readInt32BE", "readInt32LE", "readUint32BE", "readUint16LE")
		return "d." + m + "(" + g.pick("", "0", "1", "2", "d.length - 4", "0.5", "-1", "null") + ")"
	case 5:
		if g.locals > 0 {
			return "v" + strconv.Itoa(g.rng.IntN(g.locals))
		}
		return "4"
	case 6:
		return g.pick("true", "false", "null", "undefined")
	case 7:
		return g.pick("0", "-0", "1", "4", "255", "16777216", "2147483648", "4294967296", "1e21", "0.5", "0x10")
	case 8:
		return g.pick("x", "logger", "d.byteLength", "'a'", "NaN") // outside the subset
	default:
		return g.pick("2", "3", "256", "65536")
	}
}
