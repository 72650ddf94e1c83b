package script

import (
	"testing"
	"time"
)

// TestInspectAsNode checks util.format and util.inspect (which console and the scripts' logger
// use) against what node 20 prints for the same expressions.
func TestInspectAsNode(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`util.format('a %s b', 'x')`, "a x b"},
		{`util.format('%s', {a: 1})`, "{ a: 1 }"},
		{`util.format('%s', {a: {b: {c: 1}}})`, "{ a: [Object] }"},
		{`util.format('%s', [1, [2, [3]]])`, "[ 1, [Array] ]"},
		{`util.format('%d %i %f', '42', 3.9, '1.5x')`, "42 3 1.5"},
		{`util.format('%j', {a: [1, 'x']})`, "{\"a\":[1,\"x\"]}"},
		{`util.format('%o', {a: 1})`, "{ a: 1 }"},
		{`util.format('%O', {a: 'it\'s'})`, "{ a: \"it's\" }"},
		{`util.format('%%s %s', 'x', 'extra', 5, {k: null})`, "%s x extra 5 { k: null }"},
		{`util.format('no directives', {a: 1}, [1, 2])`, "no directives { a: 1 } [ 1, 2 ]"},
		{`util.format({a: 1}, 'str', 3)`, "{ a: 1 } str 3"},
		{`util.format(1, 2)`, "1 2"},
		{`util.format('%s', null, undefined)`, "null undefined"},
		{`util.format('%c%s', 'color: red', 'x')`, "x"},
		{`util.inspect({a: 1, b: 'two', c: [1, 2, 3], d: {e: {f: {g: 1}}}})`, "{ a: 1, b: 'two', c: [ 1, 2, 3 ], d: { e: { f: [Object] } } }"},
		{`util.inspect({'a-b': 1, c_d: 2, '3x': 3})`, "{ 'a-b': 1, c_d: 2, '3x': 3 }"},
		{`util.inspect([])`, "[]"},
		{`util.inspect({})`, "{}"},
		{`util.inspect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])`, "[\n  1, 2, 3, 4,  5,\n  6, 7, 8, 9, 10\n]"},
		{`util.inspect(['a', 'b', 'c', 'd', 'e', 'f', 'g'])`, "[\n  'a', 'b', 'c',\n  'd', 'e', 'f',\n  'g'\n]"},
		{`util.inspect(Array.from({length: 30}, (x, i) => i * 100))`, "[\n     0,  100,  200,  300,  400,  500,\n   600,  700,  800,  900, 1000, 1100,\n  1200, 1300, 1400, 1500, 1600, 1700,\n  1800, 1900, 2000, 2100, 2200, 2300,\n  2400, 2500, 2600, 2700, 2800, 2900\n]"},
		{`util.inspect({ aaaaaaaaaa: 'bbbbbbbbbbbbbbbbbbbb', cccccccccc: 'dddddddddddddddddddd', eeeeeeeeee: 'ffffffffffffffffffff' })`, "{\n  aaaaaaaaaa: 'bbbbbbbbbbbbbbbbbbbb',\n  cccccccccc: 'dddddddddddddddddddd',\n  eeeeeeeeee: 'ffffffffffffffffffff'\n}"},
		{`util.inspect({ a: { b: { c: { d: 1 } } } })`, "{ a: { b: { c: [Object] } } }"},
		{`util.inspect('str')`, "'str'"},
		{`util.inspect("it's")`, "\"it's\""},
		{`util.inspect('a\nb\t\u0001')`, "'a\\nb\\t\\x01'"},
		{`util.inspect(-0)`, "-0"},
		{`util.inspect(function foo() {})`, "[Function: foo]"},
		{`util.inspect(() => 1)`, "[Function (anonymous)]"},
		{`util.inspect(class Foo {})`, "[class Foo]"},
		{`util.inspect(new Date(0))`, "1970-01-01T00:00:00.000Z"},
		{`util.inspect(/ab+c/gi)`, "/ab+c/gi"},
		{`util.inspect(Buffer.from('hi'))`, "<Buffer 68 69>"},
		{`util.inspect(new Map([['a', 1], ['b', {c: 2}]]))`, "Map(2) { 'a' => 1, 'b' => { c: 2 } }"},
		{`util.inspect(new Set([1, 'x']))`, "Set(2) { 1, 'x' }"},
		{`util.inspect(Object.create(null))`, "[Object: null prototype] {}"},
		{`util.inspect((function () { class P { constructor() { this.x = 1; } } return new P(); })())`, "P { x: 1 }"},
		{`util.inspect((function () { const o = {a: 1}; o.self = o; return o; })())`, "<ref *1> { a: 1, self: [Circular *1] }"},
		{`util.inspect([undefined, null, true, 1n])`, "[ undefined, null, true, 1n ]"},
		{`util.inspect({ get g() { return 1; }, set s(v) {} })`, "{ g: [Getter], s: [Setter] }"},
		{`util.inspect(new Uint8Array([1, 2]))`, "Uint8Array(2) [ 1, 2 ]"},
		{`util.inspect(Array.from({length: 120}, () => 1))`, "[\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1, 1, 1, 1,\n  ... 20 more items\n]"},
		{`util.inspect({ list: [ { id: 1, name: 'alpha' }, { id: 2, name: 'beta' }, { id: 3, name: 'gamma' } ], total: 3 })`, "{\n  list: [\n    { id: 1, name: 'alpha' },\n    { id: 2, name: 'beta' },\n    { id: 3, name: 'gamma' }\n  ],\n  total: 3\n}"},
		{`util.inspect([[1, 2, [3, 4, [5, [6]]]]])`, "[ [ 1, 2, [ 3, 4, [Array] ] ] ]"},
		{`util.inspect(new String('s'))`, "[String: 's']"},
		{`util.inspect([ 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' ])`, "[\n  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n  'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'\n]"},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		if got := evalBody(t, s, "(function () { const util = require('util'); return "+tc.expr+"; })()"); got != tc.want {
			t.Errorf("%s\n got %q\nwant %q", tc.expr, got, tc.want)
		}
	}
}
