package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestDeeplyNestedAdminBodyIsRefusedBeforeItsAnswersGrow: an admin body's answers indent each
// level (as Mountebank's do), so they grow with the square of its depth: a 20 KB imposter
// nested 10,000 deep was answered with 200 MB, each request of its `is` body with 400 MB, and
// mockd's memory peaked near 2 GB; a 1 MB body of 500 arrays each 1,000 deep would have been
// answered with 1 GB. Such bodies are now refused (400 bad data, naming --admin-max-indent)
// and what runs stays. Mountebank 2.9.1 answers bodies nested up to 4,000 deep as mockd does
// (32 MB to the POST) and exits from about 5,000 levels; 2,000 deep is taken and answered.
func TestDeeplyNestedAdminBodyIsRefusedBeforeItsAnswersGrow(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imposter := func(port int, body string) string {
		return fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"is":{"body":%s}}]}]}`, port, body)
	}
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imposter(port, `"kept"`)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	other := listenFree(t)
	refused := []struct{ name, body string }{
		{"5,000 deep (10 KB)", imposter(other, deep(5000))},
		{"500 arrays 1,000 deep (1 MB)", imposter(other, "["+strings.Repeat(deep(1000)+",", 500)+"0]")},
	}
	for _, r := range refused {
		status, _, body := do(t, "POST", s.Admin+"/imposters", r.body)
		if status != 400 || !strings.Contains(body, `"code": "bad data"`) || !strings.Contains(body, "--admin-max-indent") {
			t.Fatalf("%s: %d %.300s", r.name, status, body)
		}
		status, _, body = do(t, "PUT", s.Admin+"/imposters/"+strconv.Itoa(port)+"/stubs", `{"stubs":[{"responses":[{"is":{"body":`+deep(5000)+`}}]}]}`)
		if status != 400 || !strings.Contains(body, `"code": "bad data"`) {
			t.Fatalf("%s, its stubs put: %d %.300s", r.name, status, body)
		}
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); status != 200 || body != "kept" {
		t.Fatalf("the imposter: %d %q", status, body)
	}
	if status, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(other), ""); status != 404 {
		t.Fatalf("a refused imposter: %d %.300s", status, body)
	}

	// 2,000 deep: 8 MB answered to the POST, 16 MB to each request (its body indented by 4).
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imposter(other, deep(2000))); status != 201 || len(body) < 7_500_000 {
		t.Fatalf("2,000 deep: %d, %d bytes", status, len(body))
	}
	status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(other)+"/", "")
	if status != 200 || len(body) < 15_000_000 || !strings.HasPrefix(body, "[\n    [\n        [") {
		t.Fatalf("2,000 deep, a request: %d, %d bytes %.40q", status, len(body), body)
	}
	// A generous bound (the 10,000 deep body alone took near 2 GB).
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 768<<20 {
		t.Errorf("peak RSS %d MB", peak>>20)
	}
}

// TestDeeplyNestedRequestBodyAgainstAnObjectPredicate: an `equals` or `exists` of an object
// on a request body of arrays nested 9,999 deep goes down every level, and named the field of
// each level's failure a level longer than the last: 100 MB copied for each array so nested.
// Twenty of them (400 KB) took 3 s and mockd peaked near 450 MB; 50 (1 MB) took 82 s. The
// names stop growing at 256 bytes now (1 MB: 1 s, 170 MB). The bound is generous: memory,
// not time.
func TestDeeplyNestedRequestBodyAgainstAnObjectPredicate(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"body":{"a":1}}}],"responses":[{"is":{"body":"equal"}}]},
		{"predicates":[{"exists":{"body":{"zz":true}}}],"responses":[{"is":{"body":"exists"}}]},
		{"responses":[{"is":{"body":"neither"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	deep := strings.Repeat("[", 9999) + strings.Repeat("]", 9999)
	body := "[" + strings.Repeat(deep+",", 20) + "0]"
	if status, _, got := do(t, "POST", "http://127.0.0.1:"+strconv.Itoa(port)+"/", body); status != 200 || got != "neither" {
		t.Fatalf("%d %q", status, got)
	}
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 300<<20 {
		t.Errorf("peak RSS %d MB", peak>>20)
	}
}
