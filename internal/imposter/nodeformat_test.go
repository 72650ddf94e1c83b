package imposter

import (
	"encoding/json"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestStatusCodeErrorFormatsAsNode holds what Mountebank 2.9.1 (node 20) answers for a stub
// whose statusCode is not a valid one: node's ERR_HTTP_INVALID_STATUS_CODE formats the value
// with util.format's %s, util.inspect for arrays and objects.
func TestStatusCodeErrorFormatsAsNode(t *testing.T) {
	hundredAndOne := make([]int, 101)
	for i := range hundredAndOne {
		hundredAndOne[i] = i
	}
	counted, _ := json.Marshal(hundredAndOne)
	tests := []struct{ in, want string }{
		{`"abc"`, "abc"},
		{`true`, "true"},
		{`1.5`, "1.5"},
		{`-5`, "-5"},
		{`1e21`, "1e+21"},
		{`"1e3"`, "1e3"},
		{`[1]`, "[ 1 ]"},
		{`[]`, "[]"},
		{`{}`, "{}"},
		{`{"a":1}`, "{ a: 1 }"},
		{`[1,2]`, "[ 1, 2 ]"},
		{`["a"]`, "[ 'a' ]"},
		{`[[1]]`, "[ [Array] ]"},
		{`{"a":{"b":1}}`, "{ a: [Object] }"},
		{`[null]`, "[ null ]"},
		{`[{}]`, "[ {} ]"},
		{`{"a":[]}`, "{ a: [] }"},
		{`[1000]`, "[ 1000 ]"},
		{`[1.5]`, "[ 1.5 ]"},
		{`["x'y"]`, `[ "x'y" ]`},
		{`{"a-b":1,"c":[1]}`, "{ 'a-b': 1, c: [Array] }"},
		{`[-0, 1e21, 0.1]`, "[ 0, 1e+21, 0.1 ]"},
		{`["ü","日本"]`, "[ 'ü', '日本' ]"},
		{`{"a":1,"a":2}`, "{ a: 2 }"},
		{`[1,"a",true,null,{},[],{"x":1},[2]]`, "[ 1, 'a', true, null, {}, [], [Object], [Array] ]"},
		{`{"b":1,"2":2,"1":3,"a b":4,"":5}`, "{ '1': 3, '2': 2, b: 1, 'a b': 4, '': 5 }"},
		{`["it's \"q\"", "back\\slash", "tab\t", "\u0085", "` + "`x${" + `"]`, "[ `it's \"q\"`, 'back\\\\slash', 'tab\\t', '\\x85', '`x${' ]"},
		{`[1,2,3,4,5,6,7]`, "[\n  1, 2, 3, 4,\n  5, 6, 7\n]"},
		{`["a","b","c","d","e","f","g","h"]`, "[\n  'a', 'b', 'c',\n  'd', 'e', 'f',\n  'g', 'h'\n]"},
		{`["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]`,
			"[\n  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n  'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'\n]"},
		{`{"aaaaaaaaaaaaaaaaaaaa":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","c":"dddddddddddddddddddddddd"}`,
			"{\n  aaaaaaaaaaaaaaaaaaaa: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',\n  c: 'dddddddddddddddddddddddd'\n}"},
		{`[1,22,333,4444,55555,666666,7777777,88888888,999999999,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]`,
			"[\n        1,       22,       333,\n     4444,    55555,    666666,\n  7777777, 88888888, 999999999,\n" +
				"        1,        2,         3,\n        4,        5,         6,\n        7,        8,         9,\n" +
				"       10,       11,        12,\n       13,       14,        15,\n       16,       17\n]"},
		{string(counted), "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n" +
			"  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n" +
			"  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n" +
			"  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n" +
			"  96, 97, 98, 99,\n  ... 1 more item\n]"},
	}
	for _, tt := range tests {
		v, err := config.ParseJSON([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		_, err = statusCode(v)
		if err == nil {
			t.Errorf("statusCode(%s): no error", tt.in)
			continue
		}
		if got, want := err.Error(), "Invalid status code: "+tt.want; got != want {
			t.Errorf("statusCode(%s):\n got %q\nwant %q", tt.in, got, want)
		}
	}
}
