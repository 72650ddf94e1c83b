package admin

import (
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestCheckIndent: a body whose answers would indent it past the bound (or 16 times its size)
// is refused with Mountebank's 400 bad data; shallow ones of any size, and any with no bound,
// are not.
func TestCheckIndent(t *testing.T) {
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	imposter := func(body string) string {
		return `{"protocol":"http","stubs":[{"responses":[{"is":{"body":` + body + `}}]}]}`
	}
	tests := []struct {
		name      string
		body      string
		maxIndent int
		refused   bool
	}{
		{"shallow", imposter(`{"a":[1,2,{"b":"c"}]}`), 1 << 10, false},
		{"2,000 deep under 16 MiB", imposter(deep(2000)), 16 << 20, false},
		{"3,000 deep past 16 MiB", imposter(deep(3000)), 16 << 20, true},
		{"9,990 deep", imposter(deep(9990)), 16 << 20, true},
		{"9,990 deep, no limit", imposter(deep(9990)), 0, false},
		{"wide, each 1,000 deep: 1 MB", imposter("[" + strings.Repeat(deep(1000)+",", 500) + "0]"), 16 << 20, true},
		{"wide, each 2 deep: under 16 times its size", imposter("[" + strings.Repeat(deep(2)+",", 60000) + "0]"), 1 << 10, false},
		{"small body, tiny bound", imposter(deep(20)), 1, false}, // too short to pass 16 times its size
		{"100 deep, 1 KiB bound", imposter(deep(100)), 1 << 10, true},
	}
	for _, tt := range tests {
		v, err := config.ParseJSON([]byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		aerr := checkIndent(v, len(tt.body), tt.maxIndent)
		if (aerr != nil) != tt.refused {
			t.Fatalf("%s: refused %v, want %v", tt.name, aerr != nil, tt.refused)
		}
		if aerr != nil && (aerr.status != 400 || aerr.errs[0].Code != config.CodeBadData || !strings.Contains(aerr.errs[0].Message, "--admin-max-indent")) {
			t.Fatalf("%s: %d %+v", tt.name, aerr.status, aerr.errs[0])
		}
	}
}
