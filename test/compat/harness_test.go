package compat

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Tests of the harness itself; they need neither Mountebank nor mockd.

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want []pathSeg
		bad  bool
	}{
		{in: "status", want: []pathSeg{{key: "status"}}},
		{in: "headers.X-Trace", want: []pathSeg{{key: "headers"}, {key: "x-trace"}}},
		{in: "body.requests[0].timestamp", want: []pathSeg{{key: "body"}, {key: "requests"}, {index: 0, isIdx: true}, {key: "timestamp"}}},
		{in: "body.stubs[*].matches", want: []pathSeg{{key: "body"}, {key: "stubs"}, {index: -1, isIdx: true}, {key: "matches"}}},
		{in: "nope.x", bad: true},
		{in: "body..x", bad: true},
		{in: "body.a[x]", bad: true},
	}
	for _, tt := range tests {
		got, err := parsePath(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("parsePath(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePath(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestNormaliseHidesWhatMustDiffer(t *testing.T) {
	ctx := engineCtx{adminPort: 46950, vars: vars{"port": "38211"}}
	ex := exchange{
		Status: 201,
		Headers: []header{
			{"Location", "http://127.0.0.1:46950/imposters/38211"},
			{"Date", "Sun, 22 Nov 2026 06:26:41 GMT"},
			{"Content-Length", "99"},
		},
		Body: []byte(`{"port": 38211, "requests": [{"requestFrom": "::ffff:127.0.0.1:5120", "ip": "::ffff:127.0.0.1",
			"timestamp": "2026-11-22T06:26:41.123Z"}], "matches": [{"processingTime": 3}]}`),
	}
	got := normalise(ex, step{}, ctx, true)
	want := answer{
		"status":  mustParseJSON([]byte("201")),
		"headers": map[string]any{"location": "http://localhost:<admin port>/imposters/${port}"},
		"body": map[string]any{
			"port": "${port}",
			"requests": []any{map[string]any{
				"requestFrom": "127.0.0.1:<client port>", "ip": "127.0.0.1", "timestamp": "<timestamp>",
			}},
			"matches": []any{map[string]any{"processingTime": "<processing time>"}},
		},
	}
	if d := diff(want, got); len(d) > 0 {
		t.Errorf("normalise: got %s\ndifferences from want:\n%s", show(got), strings.Join(d, "\n"))
	}
}

func TestDiffReportsPathsAndValues(t *testing.T) {
	a := answer{"status": mustParseJSON([]byte("200")), "body": mustParseJSON([]byte(`{"a": [1, {"b": "x"}], "c": 1.0}`))}
	b := answer{"status": mustParseJSON([]byte("200")), "body": mustParseJSON([]byte(`{"a": [1, {"b": "y"}], "c": 1, "d": true}`))}
	got := diff(a, b)
	want := []string{
		`body.a[1].b: mb="x" mockd="y"`,
		`body.d: mb=(absent) mockd=true`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff:\ngot  %q\nwant %q", got, want)
	}
}

func TestIgnorePath(t *testing.T) {
	a := answer{"body": mustParseJSON([]byte(`{"requests": [{"t": 1, "k": 2}, {"t": 3, "k": 4}]}`)), "headers": map[string]any{"x-a": "1"}}
	for _, p := range []string{"body.requests[*].t", "headers.X-A"} {
		path, err := parsePath(p)
		if err != nil {
			t.Fatal(err)
		}
		ignorePath(a, path)
	}
	want := answer{"body": mustParseJSON([]byte(`{"requests": [{"k": 2}, {"k": 4}]}`)), "headers": map[string]any{}}
	if d := diff(want, a); len(d) > 0 {
		t.Errorf("ignorePath: %s", strings.Join(d, "\n"))
	}
}

func TestExpand(t *testing.T) {
	v := vars{"port": "38211", "name": "x"}
	got, err := v.expand(`{"port": "${port}", "path": "/imposters/${port}", "n": "${name}"}`, true)
	want := `{"port": 38211, "path": "/imposters/38211", "n": "x"}`
	if err != nil || got != want {
		t.Errorf("expand = %q, %v; want %q", got, err, want)
	}
	if _, err := v.expand("/imposters/${missing}", false); err == nil {
		t.Error("expand of an undefined variable: want an error")
	}
}

func TestReadResponseFraming(t *testing.T) {
	tests := []struct {
		name, raw, method, body string
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET", "abc"},
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", "GET", "hi"},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nrest", "GET", "rest"},
		{"head", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD", ""},
	}
	for _, tt := range tests {
		ex, err := readResponse(bufio.NewReader(strings.NewReader(tt.raw)), tt.method)
		if err != nil || string(ex.Body) != tt.body || ex.Status != 200 {
			t.Errorf("%s: got status %d body %q err %v; want 200 %q", tt.name, ex.Status, ex.Body, err, tt.body)
		}
	}
}

func TestScenariosLoad(t *testing.T) {
	scs, err := loadScenarios(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 80 {
		t.Errorf("got %d scenarios, want at least 80", len(scs))
	}
}

func TestKeyOrderWarnings(t *testing.T) {
	got := keyOrderWarnings([]byte(`{"protocol": "http", "port": 1, "x": {"a": 1, "b": 2}}`),
		[]byte(`{"port": 1, "protocol": "http", "x": {"a": 1, "b": 2}, "extra": 0}`))
	want := []string{"key order differs at body (top level): mb [protocol port x], mockd [port protocol x]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keyOrderWarnings:\ngot  %q\nwant %q", got, want)
	}
}

// TestGoldenFilesMatchScenarios keeps testdata/golden in step with
// scenarios/: every scenario has its recorded answers and nothing else is
// there. Rewrite them with -compat.record.
func TestGoldenFilesMatchScenarios(t *testing.T) {
	if suite.record {
		t.Skip("recording")
	}
	scs, err := loadScenarios(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, sc := range scs {
		want[sc.Name+".json"] = true
		if _, err := os.Stat(filepath.Join(goldenDir, sc.Name+".json")); err != nil {
			t.Errorf("scenario %s has no golden file; run go test ./test/compat -compat.record", sc.Name)
		}
	}
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s has no scenario; delete it", f)
		}
	}
}
