package script

import (
	"strings"
	"testing"
	"time"
)

// TestOneOperationCannotTakeTheProcess: a script asking goja for a string or a Buffer of
// 100 GB in one operation gets node's RangeError; before, the Go runtime ran out of memory and
// the process ended ('x'.repeat(1e11) in an inject killed mockd). What stays within the limits
// behaves as before.
func TestOneOperationCannotTakeTheProcess(t *testing.T) {
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range []struct{ expr, want string }{
		{`'x'.repeat(1e11)`, "Invalid string length"},
		{`'ab'.repeat(3e8)`, "Invalid string length"},
		{`'x'.padEnd(1e11)`, "Invalid string length"},
		{`'x'.padStart(1e11, 'ab')`, "Invalid string length"},
		{`(function () { const a = []; a.length = 4294967295; return a.join('x'); })()`, "Invalid string length"},
		{`Buffer.alloc(1e11)`, "Array buffer allocation failed"},
		{`Buffer.allocUnsafe(1e11)`, "Array buffer allocation failed"},
		{`Buffer.from({ length: 1e11 })`, "Array buffer allocation failed"},
		{`Buffer.concat([], 1e11)`, "Array buffer allocation failed"},
	} {
		if got := evalBody(t, s, tc.expr); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %.200q, want the error %q", tc.expr, got, tc.want)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{`'ab'.repeat(3)`, "ababab"},
		{`'x'.repeat(0) + 'x'.repeat(1e11 * 0)`, ""},
		{`'x'.padStart(4, 'ab')`, "abax"},
		{`'x'.padEnd(1e11, '')`, "x"},
		{`'x'.padEnd(3)`, "x  "},
		{`[1, 2, 3].join('-') + [1, 2].join() + [].join('x')`, "1-2-31,2"},
		{`Array.prototype.join.call('abc', '+')`, "a+b+c"},
		{`String.prototype.repeat.name + String.prototype.repeat.length + String.prototype.padEnd.length + Array.prototype.join.length`, "repeat121"},
		{`Object.keys(String.prototype).length + ',' + ('repeat' in String.prototype)`, "0,true"},
		{`Buffer.alloc(3).length + Buffer.from([1, 2]).length`, "5"},
		{`[1, [2, 3]].toString()`, "1,2,3"},
	} {
		if got := evalBody(t, s, tc.expr); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// A join of an array of 2^32-1 holes ran in goja's own loop, which the time limit cannot
// interrupt, for minutes; it is now joined a slice at a time and stopped at the limit. A long
// array still joins as before.
func TestLongJoinIsInterrupted(t *testing.T) {
	s := newEngine(t, time.Second).NewScope(nil)
	got := evalBody(t, s, `(function () { const a = []; a.length = 4294967295; return a.join(''); })()`)
	if !strings.Contains(got, "timed out") {
		t.Errorf("joining 2^32-1 holes: %.200q, want the time limit's error", got)
	}
	s = newEngine(t, time.Minute).NewScope(nil) // a limit a loaded machine cannot reach
	got = evalBody(t, s, `(function () { const a = new Array(3000000); a[0] = 'a'; a[1048576] = 'b'; a[2999999] = 'c'; const j = a.join('-'); return j.length + j.replace(/-+/g, '|'); })()`)
	if got != "3000002a|b|c" {
		t.Errorf("a long join: %q, want %q", got, "3000002a|b|c")
	}
}
