package admin

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
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

// TestStubsIndentTogether: stubs added or replaced one at a time are bounded together, as the
// imposter's answers show them all: each 600 deep is under 1 MiB, two are not. What was there
// stays; a stub replaced is counted once; shallow stubs add up to nothing much; no bound, no
// refusal.
func TestStubsIndentTogether(t *testing.T) {
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	stub := func(d int) string { return `{"responses":[{"is":{"body":` + deep(d) + `}}]}` }
	for _, maxIndent := range []int{1 << 20, 0} {
		a, _ := newTestAPI(t, Options{Port: 2525, MaxIndent: maxIndent})
		c := inmemClient(t, a, nil)
		created, err := do(t, c, "POST", "/imposters", `{"protocol":"http","stubs":[{"responses":[{"is":{"body":"kept"}}]}]}`)
		if err != nil || created.status != 201 {
			t.Fatalf("%v %d %.200s", err, created.status, created.body)
		}
		var im *imposter.Imposter
		for _, i := range a.reg.Listing().Imposters {
			if i.StubCount() == 1 {
				im = i
			}
		}
		self := "/imposters/" + strconv.Itoa(im.Port())
		steps := []struct {
			method, path, body string
			refused            bool
			stubs              int
		}{
			{"POST", "/stubs", `{"stub":` + stub(600) + `}`, false, 2},
			{"POST", "/stubs", `{"stub":` + stub(600) + `}`, true, 2},
			{"POST", "/stubs", `{"index":0,"stub":` + stub(600) + `}`, true, 2},
			{"PUT", "/stubs/1", stub(600), false, 2},
			{"PUT", "/stubs/0", stub(600), true, 2},
			{"PUT", "/stubs/1", stub(300), false, 2},
			{"POST", "/stubs", `{"stub":` + stub(400) + `}`, false, 3},
			{"POST", "/stubs", `{"stub":` + stub(600) + `}`, true, 3},
			{"PUT", "/stubs", `{"stubs":[` + stub(600) + `,` + stub(600) + `]}`, true, 3},
		}
		for i := range 30 {
			steps = append(steps, struct {
				method, path, body string
				refused            bool
				stubs              int
			}{"POST", "/stubs", `{"stub":{"predicates":[{"equals":{"path":"/` + strconv.Itoa(i) + `","headers":{"a":"b"}}}],"responses":[{"is":{"body":{"a":[1,2,{"b":"c"}]}}}]}}`, false, 4 + i})
		}
		for _, s := range steps {
			got, err := do(t, c, s.method, self+s.path, s.body)
			if err != nil {
				t.Fatal(err)
			}
			refused := s.refused && maxIndent > 0
			if refused != (got.status == 400) || refused && (!strings.Contains(got.body, `"code": "bad data"`) || !strings.Contains(got.body, "--admin-max-indent")) || !refused && got.status != 200 {
				t.Fatalf("max %d, %s %s %.60s: %d %.300s", maxIndent, s.method, s.path, s.body, got.status, got.body)
			}
			if refused && im.StubCount() != s.stubs || maxIndent > 0 && im.StubCount() != s.stubs {
				t.Fatalf("max %d, %s %s: %d stubs, want %d", maxIndent, s.method, s.path, im.StubCount(), s.stubs)
			}
		}
	}
}
