package imposter

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

func mustJSON(t *testing.T, s string) *config.Object {
	t.Helper()
	v, err := config.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*config.Object)
}

func TestCompileResponse(t *testing.T) {
	tests := []struct {
		name, resp, def string
		status          int
		body            string
		headers         []header
	}{
		{"empty is", `{"is":{}}`, ``, 200, "", nil},
		{"text body", `{"is":{"statusCode":201,"body":"hi"}}`, ``, 201, "hi", nil},
		{"string status", `{"is":{"statusCode":"404"}}`, ``, 404, "", nil},
		{"JSON body keeps order, 4 spaces", `{"is":{"body":{"b":1,"a":[1,"x"]}}}`, ``, 200, "{\n    \"b\": 1,\n    \"a\": [\n        1,\n        \"x\"\n    ]\n}", nil},
		{"array body", `{"is":{"body":[1,2]}}`, ``, 200, "[\n    1,\n    2\n]", nil},
		{"number body", `{"is":{"body":42}}`, ``, 200, "42", nil},
		{"headers: arrays repeat, numbers as text", `{"is":{"headers":{"X-A":["1","2"],"X-N":5}}}`, ``, 200, "", []header{{"X-A", "1", true}, {"X-A", "2", false}, {"X-N", "5", true}}},
		{"header with a line break is not settable", `{"is":{"headers":{"X-B":"a\r\nb","x-b":"c"}}}`, ``, 200, "", []header{{"X-B", "a\r\nb", false}, {"x-b", "c", true}}},
		{"content-length recomputed", `{"is":{"headers":{"Content-Length":"999"},"body":"abc"}}`, ``, 200, "abc", nil},
		{"defaultResponse fills each field", `{"is":{"body":"own"}}`, `{"statusCode":418,"headers":{"X-D":"d"},"body":"dflt"}`, 418, "own", []header{{"X-D", "d", true}}},
		{"own headers replace default headers", `{"is":{"headers":{"X-O":"o"}}}`, `{"headers":{"X-D":"d"},"body":"dflt"}`, 200, "dflt", []header{{"X-O", "o", true}}},
		{"binary", `{"is":{"_mode":"binary","body":"aGk=\n"}}`, ``, 200, "hi", nil},
		{"binary from default mode", `{"is":{"body":"aGk"}}`, `{"_mode":"binary"}`, 200, "hi", nil},
	}
	for _, tt := range tests {
		var def *config.Object
		if tt.def != "" {
			def = mustJSON(t, tt.def)
		}
		r := compileResponse(mustJSON(t, tt.resp), def, true)
		if r.statusErr != nil || r.status != tt.status || string(r.body) != tt.body || len(r.headers) != len(tt.headers) {
			t.Errorf("%s: got status %d (%v) body %q headers %v, want %d %q %v", tt.name, r.status, r.statusErr, r.body, r.headers, tt.status, tt.body, tt.headers)
			continue
		}
		for i := range tt.headers {
			if r.headers[i] != tt.headers[i] {
				t.Errorf("%s: header %d = %v, want %v", tt.name, i, r.headers[i], tt.headers[i])
			}
		}
	}
}

func TestCheckResponse(t *testing.T) {
	tests := map[string]string{
		`{"is":{}}`:                  "",
		`{}`:                         "unrecognized response type",
		`{"is":null}`:                "unrecognized response type",
		`{"is":{},"inject":"x"}`:     "each response object must have only one response type",
		`{"is":{},"proxy":{"to":1}}`: "each response object must have only one response type",
	}
	for in, want := range tests {
		err := checkResponse(mustJSON(t, in))
		got := ""
		if err != nil {
			got = err.Message
		}
		if got != want {
			t.Errorf("checkResponse(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestJournalBounds(t *testing.T) {
	var j journal
	j.init(3, 1<<20)
	for i := 0; i < 5; i++ {
		j.add(config.NewObject("n", float64(i)), timeZero)
	}
	list := j.list()
	if len(list) != 3 {
		t.Fatalf("journal kept %d entries, want 3", len(list))
	}
	for i, want := range []float64{2, 3, 4} {
		if got, _ := list[i].(*config.Object).Get("n"); got != want {
			t.Errorf("entry %d = %v, want %v (oldest dropped first)", i, got, want)
		}
	}
	j.init(100, 200)
	j.clear()
	for i := 0; i < 10; i++ {
		j.add(config.NewObject("body", "0123456789012345678901234567890123456789"), timeZero)
	}
	if j.bytes > 200 {
		t.Errorf("journal holds %d bytes, budget 200", j.bytes)
	}
	if len(j.list()) == 0 {
		t.Error("journal dropped everything")
	}
}

// TestDecorateLeavesStubAlone serves a decorated response several times: the decorate
// reads the stub's own `is` object (no copy), so each answer must be decorated exactly once.
func TestDecorateLeavesStubAlone(t *testing.T) {
	h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[{
		"is":{"statusCode":200,"headers":{"X-A":"1"},"body":"b"},
		"_behaviors":{"wait":0,"decorate":"(config) => { config.response.body += '+d'; config.response.headers['X-A'] += '+h'; delete config.response.statusCode; }"}}]}]}`,
		simpleRequest, false)
	for i := 0; i < 3; i++ {
		serveOnce(t, h, ctx)
		if body, xa := string(ctx.Response.Body()), string(ctx.Response.Header.Peek("X-A")); body != "b+d" || xa != "1+h" {
			t.Fatalf("answer %d: body %q, X-A %q; want b+d, 1+h", i, body, xa)
		}
	}
}
