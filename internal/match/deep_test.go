package match

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func TestJoinField(t *testing.T) {
	long := strings.Repeat("a.", 127) + "a" // 255 bytes
	tests := []struct{ path, k, want string }{
		{"", "body", "body"},
		{"body", "a", "body.a"},
		{long[:253], "a", long[:253] + ".a"}, // 255 bytes: whole
		{long, "b", long + cutField},
		{long + cutField, "c", long + cutField},
	}
	for _, tt := range tests {
		if got := joinField(tt.path, tt.k); got != tt.want {
			t.Errorf("joinField(%.20q…, %q) = %.40q…, want %.40q…", tt.path, tt.k, got, tt.want)
		}
	}
}

// TestDeeplyNestedBodyAgainstAnObjectCopiesLittle: an object predicate (equals, exists) on a
// body of arrays nested 9,000 deep goes down every level, naming the field of each failure:
// those names grew a level at a time, 81 MB copied for each array so nested (a 1 MB request
// body of 50 took 82 s and 770 MB). They stop growing at maxFieldPath now. Bytes allocated,
// not time, are what the test bounds.
func TestDeeplyNestedBodyAgainstAnObjectCopiesLittle(t *testing.T) {
	deep := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	body := "[" + deep + "," + deep + "]"
	for _, src := range []string{`{"equals":{"body":{"a":1}}}`, `{"exists":{"body":{"zz":true}}}`} {
		v, err := config.ParseJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		set, err := Compile([][]any{{config.Plain(v)}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := &request.Request{Method: "POST", Path: "/", Body: body}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		i, err := set.Find(r)
		runtime.ReadMemStats(&after)
		if err != nil || i != -1 {
			t.Fatalf("%s: %d %v", src, i, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 48<<20 {
			t.Errorf("%s: %d MB allocated", src, n>>20)
		}
	}
}
