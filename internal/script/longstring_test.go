package script

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLongStringLoopsAgreeWithNode: on a string past the prelude's longString, a global RegExp's
// replace, replaceAll, match, matchAll and split, and replaceAll of a string, go from match to
// match in the prelude (so that the limits apply between matches) rather than in one goja
// operation. With longString 1 every string of two characters or more takes those loops; each
// expression answers what node 20 answers (goja's own differs on 'aaa'.replace(/a*/g, '[$&]'):
// "[aaa]", without the empty match at the end).
func TestLongStringLoopsAgreeWithNode(t *testing.T) {
	loops := New(Options{Timeout: time.Minute, longString: 1}).NewScope(nil)
	for _, tt := range []struct{ expr, want string }{
		{`'aXbXc'.replace(/X/g, '-')`, `a-b-c`},
		{`'aXbXc'.replaceAll(/X/g, '-')`, `a-b-c`},
		{`'aaa'.replace(/a*/g, '[$&]')`, `[aaa][]`},
		{`'abc'.replace(/(?:)/g, '-')`, `-a-b-c-`},
		{`'a1b22c333'.replace(/(\d)(\d)?/g, '<$2|$1|$$|$\x60|$\'|$3|$10>')`, `a<|1|$|a|b22c333|$3|10>b<2|2|$|a1b|c333|$3|20>c<3|3|$|a1b22c|3|$3|30><|3|$|a1b22c33||$3|30>`},
		{`'2020-01-02 2021-03-04'.replace(/(?<y>\d+)-(?<m>\d+)-(?<d>\d+)/g, '$<d>/$<m>/$<y> $<x>')`, `02/01/2020  04/03/2021 `},
		{`'a1b2'.replace(/(\d)/g, function (m, d, pos, s) { return '(' + [m, d, pos, s.length, arguments.length].join(',') + ')'; })`, `a(1,1,1,4,4)b(2,2,3,4,4)`},
		{`'x2020-01y'.replace(/(?<y>\d+)-(?<m>\d+)/g, function () { const a = arguments; return JSON.stringify(a[a.length - 1]) + a[a.length - 3]; })`, `x{"y":"2020","m":"01"}1y`},
		{`'a😀b😀'.replace(/(?:)/gu, '.')`, `.a.😀.b.😀.`},
		{`'a😀b😀'.replace(/(?:)/g, '.').length`, `13`},
		{`'aaXaa'.replace(/a/gy, 'b')`, `bbXaa`},
		{`'abcabc'.replace(/b/g, 'é')`, `aécaéc`},
		{`'ééé'.replace(/é/g, 'e')`, `eee`},
		{`(function () { const r = /a/g; r.lastIndex = 2; const s = 'aaa'.replace(r, 'b'); return s + r.lastIndex; })()`, `bbb0`},
		{`(function () { const r = /a/g; return 'aaaa'.replace(r, function () { r.lastIndex = 0; return 'b'; }); })()`, `bbbb`},
		{`'no match'.replace(/z/g, 'y')`, `no match`},
		{`'abab'.replace(/(a)|(z)/g, function (m, a, z) { return String(z); })`, `undefinedbundefinedb`},
		{`'aXbXc'.replaceAll('X', '$&$&')`, `aXXbXXc`},
		{`'abc'.replaceAll('', '-')`, `-a-b-c-`},
		{`'aaaa'.replaceAll('aa', 'b')`, `bb`},
		{`'xaxa'.replaceAll('a', function (m, pos, s) { return pos + s; })`, `x1xaxax3xaxa`},
		{`'xaxa'.replaceAll('a', '$\x60|$\'|$1')`, `xx|xa|$1xxax||$1`},
		{`'xyz'.replaceAll('q', 'r')`, `xyz`},
		{`JSON.stringify('a1b22c333'.match(/\d+/g))`, `["1","22","333"]`},
		{`JSON.stringify('abc'.match(/(?:)/g))`, `["","","",""]`},
		{`JSON.stringify('a😀b'.match(/(?:)/gu))`, `["","","",""]`},
		{`JSON.stringify('abc'.match(/z/g))`, `null`},
		{`JSON.stringify('aXbX'.match(/X/))`, `["X"]`},
		{`JSON.stringify([...'a1b22'.matchAll(/(\d)(\d)?/g)].map(m => [m.index, m[0], m[1], m[2]]))`, `[[1,"1","1",null],[3,"22","2","2"]]`},
		{`'ab'.matchAll(/a/g).next().value[0]`, `a`},
		{`JSON.stringify('a,b,,c'.split(/,/))`, `["a","b","","c"]`},
		{`JSON.stringify('a,b,,c'.split(/(,)/))`, `["a",",","b",",","",",","c"]`},
		{`JSON.stringify('a,b,,c'.split(/,/, 2))`, `["a","b"]`},
		{`JSON.stringify('a,b,,c'.split(/(,)/, 4))`, `["a",",","b",","]`},
		{`JSON.stringify('a,b,,c'.split(/,/, 0))`, `[]`},
		{`JSON.stringify('abc'.split(/(?:)/))`, `["a","b","c"]`},
		{`JSON.stringify('abc'.split(/b*/))`, `["a","c"]`},
		{`JSON.stringify('a😀b'.split(/(?:)/u))`, `["a","😀","b"]`},
		{`JSON.stringify('a😀b'.split(/(?:)/).length)`, `4`},
		{`JSON.stringify(',a,'.split(/,/))`, `["","a",""]`},
		{`JSON.stringify('aXbxc'.split(/x/i))`, `["a","b","c"]`},
		{`JSON.stringify('a1b2c'.split(/(\d)|(z)/))`, `["a","1",null,"b","2",null,"c"]`},
		{`JSON.stringify('abc'.split(/$/m))`, `["abc"]`},
		{`JSON.stringify('ab\ncd'.split(/^/m))`, `["ab\n","cd"]`},
		{`JSON.stringify('abc'.split(/z/))`, `["abc"]`},
		{`JSON.stringify('a,b'.split(/,/y))`, `["a","b"]`},
		// a script that replaced the globals the loops use
		{`(function () { const R = RegExp, M = Math; RegExp = function () {}; Math = {}; try { return 'a,b'.split(R(',')).join('|') + 'aXa'.replaceAll('X', 'y') + 'aXa'.replace(R('X', 'g'), 'z'); } finally { RegExp = R; Math = M; } })()`, "a|bayaaza"},
		{`(function () { class R extends RegExp {}; return 'aXbX'.replace(new R('X', 'g'), '-'); })()`, `a-b-`},
		{`(function () { const r = /X/g; let n = 0; r.exec = function (s) { n += 1; return RegExp.prototype.exec.call(this, s); }; return 'aXbX'.replace(r, '-') + n; })()`, `a-b-3`},
	} {
		if got := evalBody(t, loops, tt.expr); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// TestLongStringMatchesAreBounded: a global RegExp's replace on a long string found all its
// matches in one Go operation, which neither limit could interrupt ('a'.repeat(1 << 24)
// .replace(/a/g, 'bb') under the defaults: 10 s and 2 GB), and built its answer whole
// however long. Now an answer past the memory limit is refused as it grows, with the limit's
// error, and the next call runs.
func TestLongStringMatchesAreBounded(t *testing.T) {
	const limit = 8 << 20
	s := New(Options{Timeout: time.Minute, MemoryLimit: limit}).NewScope(nil)
	const want = "error: script used more than 8 MiB of memory (--script-memory)"
	for _, src := range []string{
		`function () { return { body: 'ab'.repeat(1 << 16).replace(/a/g, 'x'.repeat(200)).length }; }`,
		`function () { return { body: 'ab'.repeat(1 << 16).replace(/(a)/g, '$1'.repeat(200)).length }; }`,
		`function () { return { body: 'ab'.repeat(1 << 16).replaceAll('a', 'x'.repeat(200)).length }; }`,
		`function () { return { body: 'ab'.repeat(1 << 16).replace(/a/g, () => 'x'.repeat(200)).length }; }`,
		// a few matches whose answer is just past the limit: made in one goja operation, it was
		// answered as the watch had no time to see it
		`function () { return { body: ('X' + 'a'.repeat(40000) + 'X').replace(/X/g, 'y'.repeat(4300000)).length }; }`,
		`function () { return { body: ('X' + 'a'.repeat(40000) + 'X').replaceAll('X', 'y'.repeat(4300000)).length }; }`,
	} {
		if got := respond(t, s, context.Background(), src); got != want {
			t.Errorf("%s: %.200q, want %q", src, got, want)
		}
		if got := respond(t, s, context.Background(), `function () { return { body: 'after' }; }`); got != "after" {
			t.Errorf("the call after %s: %.200q", src, got)
		}
	}
	// under the limit, the answers are goja's
	s = New(Options{Timeout: time.Minute, longString: 1 << 12}).NewScope(nil)
	got := respond(t, s, context.Background(), `function () {
		const s = 'ab,'.repeat(1 << 13);
		return { body: [s.replace(/a/g, 'xx').length, s.replaceAll('b', '$&$&').length, s.match(/b/g).length,
			s.split(/,/).length, [...s.matchAll(/a,?/g)].length, s.replace(/b(,)/g, (m, c) => c).slice(0, 6)].join(' ') };
	}`)
	if want := strings.Join([]string{"32768", "32768", "8192", "8193", "8192", "a,a,a,"}, " "); got != want {
		t.Errorf("under the limit: %.200q, want %q", got, want)
	}
}

// TestJSONParseIsBounded: JSON.parse made every value of its text in one Go operation, which
// neither limit could interrupt (16M numbers: 19 s and 860 MB under the 5 s / 256 MiB defaults).
// A text holding more values than the memory limit has room for at 32 bytes each is now refused
// with the limit's error before it is parsed, and the next call runs; a text as long of few
// values (commas and colons in its strings), or of fewer values, is parsed as before.
func TestJSONParseIsBounded(t *testing.T) {
	s := New(Options{Timeout: time.Minute, MemoryLimit: 8 << 20}).NewScope(nil)
	const want = "error: script used more than 8 MiB of memory (--script-memory)"
	for _, src := range []string{
		`function () { return { body: JSON.parse('[' + '1,'.repeat(1 << 18) + '1]').length }; }`,
		`function () { return { body: Object.keys(JSON.parse('{' + '"a":[1,2],'.repeat(1 << 17) + '"b":1}')).length }; }`,
		`function () { return { body: JSON.parse('[' + '1,'.repeat(1 << 18) + '1]', function (k, v) { return v; }).length }; }`,
	} {
		if got := respond(t, s, context.Background(), src); got != want {
			t.Errorf("%s: %.200q, want %q", src, got, want)
		}
		if got := respond(t, s, context.Background(), `function () { return { body: 'after' }; }`); got != "after" {
			t.Errorf("the call after %s: %.200q", src, got)
		}
	}
	for src, want := range map[string]string{
		`JSON.parse('"' + ',:'.repeat(1 << 18) + '\\",[\\\\"').length`:                                    "524292",
		`JSON.parse('[' + '1,'.repeat(1 << 17) + '1]').length`:                                            "131073",
		`JSON.parse('[1, "a,b", {"c": ":"}]')[2].c`:                                                       ":",
		`(function () { try { JSON.parse('[' + ','.repeat(1 << 19)); } catch (e) { return e.name; } })()`: want, // not JSON, but refused first
	} {
		if got := evalBody(t, s, src); got != want {
			t.Errorf("%s: %.200q, want %q", src, got, want)
		}
	}
}

// TestLongArrayBuiltinsGoInChunks: Array.from of an array-like and fill of an array past a
// million elements went through them in one Go loop that neither limit could interrupt
// (Array.from({length: 15 << 20}) in an inject: 45 s and 1 GB under the 5 s / 256 MiB defaults,
// now stopped at 5 s, 150 MB); they now go an element (from) or a million elements (fill) at a
// time, answering what goja answers (here past chunkElements 1000).
func TestLongArrayBuiltinsGoInChunks(t *testing.T) {
	s := New(Options{Timeout: time.Minute, chunkElements: 1000}).NewScope(nil)
	for expr, want := range map[string]string{
		`Array.from({length: 1000 + 3}).length`: "1003",
		`Array.from({length: 1000 + 3, 5: 'x'}, function (v, k) { return String(v) + k + this.a; }, {a: '!'})[5]`:                                       "x5!",
		`Array.from({length: 1000 + 3}, (v, k) => k)[1000 + 2]`:                                                                                         "1002",
		`Array.isArray(Array.from({length: 1000 + 1}))`:                                                                                                 "true",
		`(function () { const a = new Array(1000 + 5).fill(7); return a.indexOf(undefined) + ',' + a[0] + a[1000] + a[1000 + 4] + ',' + a.length; })()`: "-1,777,1005",
		`(function () { const a = new Array(2000 + 5).fill(1, -3); return a.indexOf(1) + ',' + a.lastIndexOf(1); })()`:                                  "2002,2004",
		`(function () { const a = new Array(2000 + 5).fill(1, 5, 1000 + 9); return a.indexOf(1) + ',' + a.lastIndexOf(1); })()`:                         "5,1008",
		`(function () { const a = new Array(2000 + 5).fill(1, 'x', -2.5); return a.indexOf(1) + ',' + a.lastIndexOf(1); })()`:                           "0,2002",
		`(function () { const a = new Array(1000 + 1); return a.fill(2) === a; })()`:                                                                    "true",
		`(function () { class A extends Array {}; return A.from({length: 2}) instanceof A; })()`:                                                        "true",
		`(function () { try { Array.from({length: 3}, 5); } catch (e) { return e.name; } })()`:                                                          "TypeError",
		`Array.from.length + ',' + Array.prototype.fill.length`:                                                                                         "1,1",
	} {
		if got := evalBody(t, s, expr); got != want {
			t.Errorf("%s: %.200q, want %q", expr, got, want)
		}
	}
}
