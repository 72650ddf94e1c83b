package jsonpath

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestSelectJS: brackets holding unquoted text and `@.length` in filters select what
// jsonpath-plus 7.2 (Mountebank 2.9.1's) selects, as Mountebank answered them (copy behavior,
// the values selected joined with commas; "" for nothing).
func TestSelectJS(t *testing.T) {
	doc := `{"x":{"a":1},"y":["ab","",5,[1,2],{"length":0},{"length":3},"\ud83d\ude00"],"01":"z","1":"one","a":[10,20,30]," 1":"sp","length":7,"n":[{"a":1},null]}`
	v, err := config.ParseJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ sel, want string }{
		{"$[x]", `{"a":1}`},
		{"$.x[a]", `1`},
		{"$[a]", `[10,20,30]`},
		{"$[ 1 ]", ``},
		{"$.a[ 1 ]", ``},
		{"$.a[1 ]", ``},
		{"$.a[01]", ``},
		{"$[01]", `"z"`},
		{"$[1]", `"one"`},
		{"$.a[1]", `20`},
		{"$.a[-1]", ``},
		{"$.a[-0]", ``},
		{"$.a[+1]", ``},
		{"$.a[ 0 , 2 ]", ``},
		{"$.a[0,2]", `10,30`},
		{"$[a,x]", `[10,20,30],{"a":1}`},
		{"$.a[0:2]", `10,20`},
		{"$.a[*]", `10,20,30`},
		{"$['a'][1]", `20`},
		{`$["x"]`, `{"a":1}`},
		{"$.y[?(@.length)]", `"ab",[1,2],{"length":3},"😀"`},
		{"$.y[?(@.length > 1)]", `"ab",[1,2],{"length":3},"😀"`},
		{"$.y[?(@.length == 2)]", `"ab",[1,2],"😀"`},
		{"$.y[?(@.length == 0)]", `"",{"length":0}`},
		{"$.y[?(@.length < 3 && @.length > 1)]", `"ab",[1,2],"😀"`},
		{"$.y[?(@ == '@.length')]", ``},
		{"$.a[?(@ > 15)]", `20,30`},
		{"$.y[0].length", `2`},
		{"$.y[1].length", ``},
		{"$.y[1,x].length", ``},
		{"$.1..length", `3`},
		{"$.x..", `{"a":1}`},
		{"$.n[?(@.a == 1)]", ``},
		{"$.n[?(@ && @.a == 1)]", `{"a":1}`},
		{"$..[?(@.a == 1)]", ``},
		{"$.n[?(@.length)]", ``},
		{"$.n..", `[{"a":1},null],{"a":1},null`},
		{"$.y[?(!@.length)]", `"",5,{"length":0}`},
		{"$.y[?(@.length === 2)]", `"ab",[1,2],"😀"`},
		{"$.y[?(@.length !== 2)]", `"",5,{"length":0},{"length":3}`},
		{"$.y[?(@ === 'ab')]", `"ab"`},
		{"$.a[(@.length-1)]", `30`},
		{"$.a[( @.length - 3 )]", `10`},
		{"$.a[(@.length-4)]", ``},
		{"$.a[(@.length-0)]", ``},
		{"$.a[(@.length)]", ``},
		{"$.x[(@.length-1)]", ``},
		{"$[(@.length-6)]", `"one"`},
		{"$.y[0][(@.length-1)]", `"b"`},
		{"$.y[5][(@.length-3)]", ``},
	} {
		x, err := Parse(tc.sel)
		got := ""
		if err == nil {
			for i, r := range Select(x, v) {
				if i > 0 {
					got += ","
				}
				b := config.MarshalJSON(r, 0)
				got += string(b)
			}
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s (err %v)", tc.sel, got, tc.want, err)
		}
	}
}

// TestDots: runs of dots as jsonpath-plus 7.2 reads them (Mountebank 2.9.1's copy answered
// these, first value selected).
func TestDots(t *testing.T) {
	doc := `{"a":1,"":{"a":5},"b":{"a":2,"":7,"c":[{"a":3}]}}`
	v, err := config.ParseJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ sel, want string }{
		{"$...a", "1"}, {"$....a", "5"}, {"$.....a", "5"}, {"$......a", "5"}, {"$.b....", "7"},
		{"$...b", `{"a":2,"":7,"c":[{"a":3}]}`}, {"$.......", ""}, {"$...['a']", "5"}, {"$.b.['a']", "2"},
	} {
		x, err := Parse(tc.sel)
		got := ""
		if err == nil {
			if out := Select(x, v); len(out) > 0 {
				got = string(config.MarshalJSON(out[0], 0))
			}
		}
		if got != tc.want {
			t.Errorf("%s (%s): %s (%v), want %s", tc.sel, jsDots(tc.sel), got, err, tc.want)
		}
	}
	for in, want := range map[string]string{"$...['a']": "$..['']['a']", "$.['b']": "$..['b']", "$..['b']": "$..['b']", "$.a.b": "$.a.b", "$['x...y']": "$['x...y']"} {
		if got := jsDots(in); got != want {
			t.Errorf("jsDots(%q) = %q, want %q", in, got, want)
		}
	}
}
