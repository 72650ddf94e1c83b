package behavior

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

func jsonOf(v config.Value) string { return string(config.MarshalJSON(v, 0)) }

func loadJSON(t testing.TB, file string) []any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := config.ParseJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v.([]any)
}

// requestFrom builds a request.Request from Mountebank's recorded request shape.
func requestFrom(o *config.Object) *request.Request {
	r := &request.Request{}
	kvs := func(v config.Value) []request.KV {
		var out []request.KV
		for _, m := range config.AsObject(v).Members {
			if arr, ok := m.Value.([]any); ok {
				for _, e := range arr {
					out = append(out, request.KV{Name: m.Key, Value: e.(string)})
				}
			} else {
				out = append(out, request.KV{Name: m.Key, Value: m.Value.(string)})
			}
		}
		return out
	}
	r.Method, _ = get(o, "method").(string)
	r.Path, _ = get(o, "path").(string)
	r.Query = kvs(get(o, "query"))
	r.Headers = kvs(get(o, "headers"))
	r.Body, _ = get(o, "body").(string)
	ip, _ := get(o, "ip").(string)
	from, _ := get(o, "requestFrom").(string)
	r.SetClient(ip, from)
	return r
}

// TestApplyMountebank replays testdata/apply.json: each case's `want` is what Mountebank 2.9.1's
// behaviors.execute returned for the request, response and behaviors.
func TestApplyMountebank(t *testing.T) {
	for _, c := range loadJSON(t, "testdata/apply.json") {
		tc := c.(*config.Object)
		name := get(tc, "name").(string)
		t.Run(name, func(t *testing.T) {
			comp, err := Compile(get(tc, "behaviors").([]any), Options{})
			if err != nil {
				t.Fatal(err)
			}
			resp := config.Clone(get(tc, "response")).(*config.Object)
			got, err := comp.Apply(context.Background(), requestFrom(config.AsObject(get(tc, "request"))), resp, nil)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if want := jsonOf(get(tc, "want")); jsonOf(got) != want {
				t.Errorf("behaviors %s\n got %s\nwant %s", jsonOf(get(tc, "behaviors")), jsonOf(got), want)
			}
		})
	}
}

// TestValidateMountebank replays testdata/validate.json, produced by Mountebank's behaviors.validate.
func TestValidateMountebank(t *testing.T) {
	for _, c := range loadJSON(t, "testdata/validate.json") {
		tc := c.(*config.Object)
		in := get(tc, "behaviors")
		errs := Validate(in)
		got := make([]any, 0, len(errs))
		for _, e := range errs {
			got = append(got, config.NewObject("code", e.Code, "message", e.Message, "source", e.Source))
		}
		if want := jsonOf(get(tc, "errors")); jsonOf(got) != want {
			t.Errorf("Validate(%s)\n got %s\nwant %s", jsonOf(in), jsonOf(got), want)
		}
	}
}

func TestValidateCrashes(t *testing.T) {
	// Mountebank 2.9.1 crashes on these; mockd reports bad data.
	for _, in := range []string{`[null]`, `{"wait":1}`, `"x"`, `[{"copy":{"from":"path","into":"x","using":null}}]`, `[{"copy":{"from":null,"into":"x","using":{"method":"regex","selector":"x"}}}]`} {
		v, _ := config.ParseJSON([]byte(in))
		errs := Validate(v)
		if len(errs) == 0 || errs[0].Code != config.CodeBadData {
			t.Errorf("Validate(%s) = %v, want a bad data error", in, errs)
		}
	}
}

func TestDecorateAndWait(t *testing.T) {
	scope := script.New(script.Options{Timeout: time.Minute}).NewScope(nil)
	behaviors := []any{
		config.NewObject("wait", "function () { return 20; }"),
		config.NewObject("copy", config.NewObject("from", "path", "into", "${P}", "using", config.NewObject("method", "regex", "selector", ".*"))),
		config.NewObject("decorate", "function (request, response) { response.body = response.body.toUpperCase(); }"),
		config.NewObject("wait", 10.0),
	}
	comp, _ := Compile(behaviors, Options{})
	start := time.Now()
	got, err := comp.Apply(context.Background(), &request.Request{Method: "GET", Path: "/abc"}, config.NewObject("body", "path=${P}"), scope)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(got) != `{"body":"PATH=/ABC"}` {
		t.Errorf("got %s", jsonOf(got))
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Errorf("waits took %v, want at least 30ms", el)
	}
	// A throwing wait function gives Mountebank's error.
	comp, _ = Compile([]any{config.NewObject("wait", "function () { throw new Error('w'); }")}, Options{})
	_, err = comp.Apply(context.Background(), &request.Request{}, config.NewObject(), scope)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Message != "invalid wait injection" || jsonOf(ce.Source) != `{"source":"function () { throw new Error('w'); }","data":"w"}` {
		t.Errorf("wait error = %v", err)
	}
}

func TestInvalidSelectors(t *testing.T) {
	for _, using := range []*config.Object{
		config.NewObject("method", "regex", "selector", "("),
		config.NewObject("method", "xpath", "selector", "//["),
	} {
		comp, _ := Compile([]any{config.NewObject("copy", config.NewObject("from", "body", "into", "X", "using", using))}, Options{})
		if _, err := comp.Apply(context.Background(), &request.Request{Body: "x"}, config.NewObject("body", "X"), nil); err == nil {
			t.Errorf("%s: no error", jsonOf(using))
		}
	}
	// An invalid JSONPath selects nothing, as JSONPath-plus's exception is swallowed.
	comp, _ := Compile([]any{config.NewObject("copy", config.NewObject("from", "body", "into", "X",
		"using", config.NewObject("method", "jsonpath", "selector", "$[?(")))}, Options{})
	got, err := comp.Apply(context.Background(), &request.Request{Body: `{"a":1}`}, config.NewObject("body", "X"), nil)
	if err != nil || jsonOf(got) != `{"body":"X"}` {
		t.Errorf("invalid jsonpath: %s %v", jsonOf(got), err)
	}
}

func TestShellTransform(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no shell")
	}
	dir := t.TempDir()
	argsScript := dir + "/args.sh"
	envScript := dir + "/env.sh"
	hang := dir + "/hang.sh"
	_ = os.WriteFile(argsScript, []byte("#!/bin/sh\n# $1 is the request, $2 the response\nprintf '{\"body\":%s,\"statusCode\":201}' \"$(printf '%s' \"$1\" | sed 's/.*\"path\":\\(\"[^\"]*\"\\).*/\\1/')\"\n"), 0o755)
	_ = os.WriteFile(envScript, []byte("#!/bin/sh\nprintf '%s' \"$MB_RESPONSE\" | sed 's/hello/bye/'\n"), 0o755)
	_ = os.WriteFile(hang, []byte("#!/bin/sh\nsleep 30\n"), 0o755)
	req := &request.Request{Method: "GET", Path: "/shell"}
	// The commands that should finish get a limit they cannot reach on a loaded machine; the
	// one that hangs gets a short one, and must be killed long before its 30 s sleep ends.
	const plenty = time.Minute
	tests := []struct {
		cmds    []string
		timeout time.Duration
		want    string
		err     string
	}{
		{[]string{argsScript}, plenty, `{"body":"/shell","statusCode":201}`, ""},
		{[]string{envScript}, plenty, `{"body":"bye"}`, ""},
		{[]string{envScript, envScript}, plenty, `{"body":"bye"}`, ""},
		{[]string{"printf 'not json'; true"}, plenty, "", "Shell command returned invalid JSON: 'not json'"},
		{[]string{"exit 3"}, plenty, "", "Command failed: exit 3"},
		{[]string{hang}, 300 * time.Millisecond, "", "killed after the time limit"},
	}
	for _, tc := range tests {
		var bs []any
		for _, c := range tc.cmds {
			bs = append(bs, config.NewObject("shellTransform", c))
		}
		comp, _ := Compile(bs, Options{Timeout: tc.timeout})
		got, err := comp.Apply(context.Background(), req, config.NewObject("body", "hello"), nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.cmds, err, tc.err)
			}
			continue
		}
		if err != nil || jsonOf(got) != tc.want {
			t.Errorf("%v = %s, %v; want %s", tc.cmds, jsonOf(got), err, tc.want)
		}
	}
}

// A command writing without end (here, 1 GB of zeros; and to its standard error) is killed at
// MaxOutput: mockd held everything it wrote (4 GB resident for 2 GB of output) until it ended.
func TestShellTransformOutputBounded(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no shell")
	}
	req := &request.Request{Method: "GET", Path: "/shell"}
	for _, tc := range []struct{ cmd, want string }{
		{"head -c 1000000000 /dev/zero #", "its standard output was larger than 65536 bytes"},
		{"head -c 1000000000 /dev/zero >&2 #", "its standard error was larger than 65536 bytes"},
	} {
		comp, _ := Compile([]any{config.NewObject("shellTransform", tc.cmd)}, Options{Timeout: time.Minute, MaxOutput: 64 << 10})
		_, err := comp.Apply(context.Background(), req, config.NewObject("body", "hello"), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 4096 {
			t.Errorf("%s: error %.300v, want %q", tc.cmd, err, tc.want)
		}
	}
	// Output of exactly the limit is read.
	comp, _ := Compile([]any{config.NewObject("shellTransform", `printf '{"body":"%s"}' "$(head -c 65525 /dev/zero | tr '\0' x)" #`)}, Options{Timeout: time.Minute, MaxOutput: 64 << 10})
	got, err := comp.Apply(context.Background(), req, config.NewObject("body", "hello"), nil)
	if err != nil {
		t.Fatalf("output of exactly the limit: %v", err)
	}
	body, _ := got.Get("body")
	if b, _ := body.(string); len(b) != 65525 {
		t.Errorf("output of exactly the limit: body of %d bytes, want 65525", len(b))
	}
}

// TestCopyRegexECMAScript: a copy regex RE2 cannot run (lookaround, backreferences) runs on the
// ECMAScript engine: the whole match, then each group (undefined when it took no part, which
// Mountebank renders as ","; past the last group ${M} is the whole match, as with RE2).
func TestCopyRegexECMAScript(t *testing.T) {
	for _, tc := range []struct{ selector, flags, from, want string }{
		// "/people/42/orders/7".match(/(?<=people\/)(\d+)(?=\/orders)|(x)/) is ["42","42",undefined]
		{`(?<=people/)(\d+)(?=/orders)|(x)`, "", "path", "0=42 1=42 2=,"},
		// "token=abc; token=abc".match(/token=(\w+); token=\1/i) is ["token=abc; token=abc","abc"]
		{`TOKEN=(\w+); token=\1`, "i", "body", "0=token=abc; token=abc 1=abc 2=token=abc; token=abc[2]"},
	} {
		opts := `{}`
		if tc.flags == "i" {
			opts = `{"ignoreCase":true}`
		}
		b, _ := config.ParseJSON([]byte(`[{"copy":{"from":"` + tc.from + `","into":"${M}","using":{"method":"regex","selector":` +
			strconv.Quote(tc.selector) + `,"options":` + opts + `}}}]`))
		comp, err := Compile(b.([]any), Options{})
		if err != nil {
			t.Fatal(err)
		}
		req := &request.Request{Method: "GET", Path: "/people/42/orders/7", Body: "token=abc; token=abc"}
		resp := config.NewObject("body", "0=${M}[0] 1=${M}[1] 2=${M}[2]")
		got, err := comp.Apply(context.Background(), req, resp, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.selector, err)
		}
		if body := get(got, "body"); body != tc.want {
			t.Errorf("%s: body %q, want %q", tc.selector, body, tc.want)
		}
	}
}

// TestWaitZeroSendsAtOnce: a wait that asks for no time (0, a negative number, a function
// returning 0 or NaN) does not wait at all, so even a cancelled request gets its answer; any other
// wait is a timer the cancellation ends.
func TestWaitZeroSendsAtOnce(t *testing.T) {
	scope := script.New(script.Options{Timeout: time.Minute}).NewScope(nil)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		wait  any
		waits bool
	}{
		{0.0, false},
		{"0", false},
		{-5.0, false},
		{"function () { return 0; }", false},
		{"function () { return -1; }", false},
		{"function () { return 'x'; }", false},
		{1000.0, true},
		{"1000", true},
		{"function () { return 1000; }", true},
	} {
		comp, err := Compile([]any{config.NewObject("wait", tc.wait)}, Options{})
		if err != nil {
			t.Fatalf("Compile(wait %v): %v", tc.wait, err)
		}
		if s, isNumber := tc.wait.(float64); isNumber && s <= 0 && comp.Len() != 0 {
			t.Errorf("wait %v compiles to %d steps, want none", tc.wait, comp.Len())
		}
		_, err = comp.Apply(cancelled, &request.Request{}, config.NewObject("body", "x"), scope)
		if tc.waits && !errors.Is(err, context.Canceled) {
			t.Errorf("wait %v on a cancelled request: err %v, want context.Canceled (it should wait)", tc.wait, err)
		}
		if !tc.waits && err != nil {
			t.Errorf("wait %v on a cancelled request: err %v, want none (it should not wait)", tc.wait, err)
		}
	}
}

// TestSelectJSONPathWideAndDeep: `$.*` over many keys gives them in the document's order, and
// `$..*` over arrays nested in each other gives each array as it is in the body (both were
// quadratic: 25 s for 200,000 keys, seconds for 10,000 levels).
func TestSelectJSONPathWideAndDeep(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	const keys = 50000
	for i := keys - 1; i >= 0; i-- {
		if i < keys-1 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	b.WriteString("}")
	vals := SelectJSONPath("$.*", b.String())
	if len(vals) != keys || vals[0] != float64(keys-1) || vals[keys-1] != 0.0 {
		t.Fatalf("$.* selected %d values, first %v last %v; want %d from %d down to 0", len(vals), vals[0], vals[len(vals)-1], keys, keys-1)
	}
	const depth = 10000
	deep := strings.Repeat("[1,", depth) + "2" + strings.Repeat("]", depth)
	vals = SelectJSONPath("$..*", deep)
	if len(vals) != 2*depth {
		t.Fatalf("$..* selected %d values, want %d", len(vals), 2*depth)
	}
	// The arrays selected are the body's own: each one's second element is another of them.
	selected := map[*any]bool{}
	for _, v := range vals {
		if a, ok := v.([]any); ok {
			if len(a) != 2 || a[0] != 1.0 {
				t.Fatalf("selected array %v, want [1, …]", a)
			}
			selected[&a[0]] = true
		}
	}
	inner := 0
	for _, v := range vals {
		if a, ok := v.([]any); ok {
			if next, ok := a[1].([]any); ok {
				inner++
				if !selected[&next[0]] {
					t.Fatalf("an array selected holds an array that was not selected")
				}
			}
		}
	}
	if len(selected) != depth-1 || inner != depth-2 {
		t.Errorf("%d arrays selected, %d of them inside another; want %d and %d", len(selected), inner, depth-1, depth-2)
	}
}

// TestSelectJSONPathProperties: a name or an index is a JavaScript property access in
// jsonpath-plus: `[1]` on an object selects its key "1", `[-1]` an object's key "-1" and
// nothing in an array, `.1` an array's element, `.length` and `[i]` read arrays and strings.
// Each want's first value is what Mountebank 2.9.1's copy behavior took.
func TestSelectJSONPathProperties(t *testing.T) {
	const doc = `{"1":"b","x":{"1":"a","2":"c","-1":"m","length":"L"},"0":9,"y":["p","q"],"s":"str"}`
	for path, want := range map[string]string{
		"$[1]":       `["b"]`,
		"$.x[1]":     `["a"]`,
		"$[-1]":      `[]`,
		"$.x[-1]":    `["m"]`,
		"$.y[-1]":    `[]`,
		"$.y[-1:]":   `["q"]`,
		"$.x[1,2]":   `["a","c"]`,
		"$.x[2,1]":   `["c","a"]`,
		"$..[1]":     `["b","a","q"]`,
		"$..[0]":     `[9,"p"]`,
		"$.y.1":      `["q"]`,
		"$.y['1']":   `["q"]`,
		"$.y.length": `[2]`,
		"$.x.length": `["L"]`,
		"$.s[1]":     `["t"]`,
		"$.s.length": `[3]`,
		"$.x[1][0]":  `["a"]`,
		"$.x[*][0]":  `["a","c","m","L"]`,
		"$.y[1]":     `["q"]`,
		"$..y[1]":    `["q"]`,
		"$.x.1":      `["a"]`,
		// jsonpath-plus replaces an @ followed by '.', white space, ')' or '[' only; any other
		// is a syntax error and the selection throws.
		"$.y[?(@ == 'q')]": `["q"]`,
		"$.y[?(@=='q')]":   `[]`,
		"$.y[?(@)]":        `[]`,
	} {
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		got := config.Plain(SelectJSONPath(path, doc))
		if got == nil {
			got = []any{}
		}
		if !reflect.DeepEqual(got, w) {
			gotJSON, _ := json.Marshal(got)
			t.Errorf("%s = %s, want %s", path, gotJSON, want)
		}
	}
}

// TestSelectJSONPathOrder: values come in the order jsonpath-plus (Mountebank's) gives them,
// which copy's ${x}[n] and lookup's index read: recursive descent applies the rest of the path
// to a value before descending into its members, objects' members in JavaScript's order (array
// indexes first). Each want is what jsonpath-plus selected on Node 20.
func TestSelectJSONPathOrder(t *testing.T) {
	for _, tt := range []struct{ doc, path, want string }{
		{"{\"name\":\"a\",\"child\":{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},\"z\":{\"name\":\"d\"}}", "$..name", "[\"a\",\"b\",\"c\",\"d\"]"},
		{"{\"name\":\"a\",\"child\":{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},\"z\":{\"name\":\"d\"}}", "$..*", "[\"a\",{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},{\"name\":\"d\"},\"b\",[{\"name\":\"c\"}],{\"name\":\"c\"},\"c\",\"d\"]"},
		{"{\"name\":\"a\",\"child\":{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},\"z\":{\"name\":\"d\"}}", "$.*", "[\"a\",{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},{\"name\":\"d\"}]"},
		{"{\"name\":\"a\",\"child\":{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},\"z\":{\"name\":\"d\"}}", "$..kids[0].name", "[\"c\"]"},
		{"{\"name\":\"a\",\"child\":{\"name\":\"b\",\"kids\":[{\"name\":\"c\"}]},\"z\":{\"name\":\"d\"}}", "$..[0]", "[{\"name\":\"c\"}]"},
		{"{\"b\":1,\"2\":\"two\",\"a\":{\"10\":\"x\",\"1\":\"y\",\"k\":[3,{\"b\":4}]},\"0\":null}", "$.*", "[null,\"two\",1,{\"1\":\"y\",\"10\":\"x\",\"k\":[3,{\"b\":4}]}]"},
		{"{\"b\":1,\"2\":\"two\",\"a\":{\"10\":\"x\",\"1\":\"y\",\"k\":[3,{\"b\":4}]},\"0\":null}", "$..*", "[null,\"two\",1,{\"1\":\"y\",\"10\":\"x\",\"k\":[3,{\"b\":4}]},\"y\",\"x\",[3,{\"b\":4}],3,{\"b\":4},4]"},
		{"{\"b\":1,\"2\":\"two\",\"a\":{\"10\":\"x\",\"1\":\"y\",\"k\":[3,{\"b\":4}]},\"0\":null}", "$..b", "[1,4]"},
		{"{\"b\":1,\"2\":\"two\",\"a\":{\"10\":\"x\",\"1\":\"y\",\"k\":[3,{\"b\":4}]},\"0\":null}", "$.a.*", "[\"y\",\"x\",[3,{\"b\":4}]]"},
		{"[[\"b,a\",1,null],{\"1\":null},[false]]", "$..*", "[[\"b,a\",1,null],{\"1\":null},[false],\"b,a\",1,null,null,false]"},
		{"[[\"b,a\",1,null],{\"1\":null},[false]]", "$[*]", "[[\"b,a\",1,null],{\"1\":null},[false]]"},
		{"{\"a\":{\"a\":{\"a\":\"x\"}}}", "$..a", "[{\"a\":{\"a\":\"x\"}},{\"a\":\"x\"},\"x\"]"},
		{"{\"a\":{\"a\":{\"a\":\"x\"}}}", "$.a..a", "[{\"a\":\"x\"},\"x\"]"},
	} {
		var want any
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		got := config.Plain(SelectJSONPath(tt.path, tt.doc))
		if got == nil {
			got = []any{}
		}
		if !reflect.DeepEqual(got, want) {
			gotJSON, _ := json.Marshal(got)
			t.Errorf("%s on %s = %s, want %s", tt.path, tt.doc, gotJSON, tt.want)
		}
	}
}

// TestDecorates: the decorate steps counted when every step is a wait or a decorate, whatever
// their order and however they are grouped; none (and not ok) with a step that reads the
// request without a script.
func TestDecorates(t *testing.T) {
	dec := "(config) => { config.response.body = 'x'; }"
	for _, tc := range []struct {
		behaviors []any
		n         int
		ok        bool
	}{
		{[]any{config.NewObject("decorate", dec)}, 1, true},
		{[]any{config.NewObject("wait", 5.0, "decorate", dec), config.NewObject("decorate", dec)}, 2, true},
		{[]any{config.NewObject("wait", 5.0)}, 0, true},
		{[]any{config.NewObject("decorate", dec), config.NewObject("copy", config.NewObject("from", "body", "into", "X", "using", config.NewObject("method", "regex", "selector", ".*")))}, 0, false},
		{[]any{config.NewObject("shellTransform", "cat"), config.NewObject("decorate", dec)}, 0, false},
	} {
		comp, err := Compile(tc.behaviors, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := comp.Decorates(); n != tc.n || ok != tc.ok {
			t.Errorf("%s: Decorates() = %d %v, want %d %v", config.MarshalJSON(tc.behaviors, 0), n, ok, tc.n, tc.ok)
		}
	}
	if n, ok := (*Compiled)(nil).Decorates(); n != 0 || !ok {
		t.Errorf("nil: %d %v", n, ok)
	}
}

// TestCopyFromNameNotText: a copy whose from names a field with a number, a boolean
// or null (`{"headers": 5}`) fails the request with the TypeError Mountebank's
// getKeyIgnoringCase throws (expectedKey.toLowerCase), but only when the field it looks in has
// a key: with no query parameters, `{"query": true}` selects nothing.
func TestCopyFromNameNotText(t *testing.T) {
	for _, tc := range []struct {
		from  string
		query bool
		want  string // the error's message, or the body
	}{
		{`{"headers":5}`, false, "expectedKey.toLowerCase is not a function"},
		{`{"query":true}`, true, "expectedKey.toLowerCase is not a function"},
		{`{"query":true}`, false, "got undefined"},
		{`{"headers":null}`, false, "Cannot read properties of null (reading 'toLowerCase')"},
		{`{"path":5}`, false, "expectedKey.toLowerCase is not a function"},
		{`{"headers":"x-a"}`, false, "got a"},
	} {
		for _, kind := range []string{"copy"} {
			cfg := `{"from":` + tc.from + `,"into":"$X","using":{"method":"regex","selector":".+"}}`
			b, _ := config.ParseJSON([]byte(`[{"` + kind + `":` + cfg + `}]`))
			comp, err := Compile(b.([]any), Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := &request.Request{Method: "GET", Path: "/p", Headers: []request.KV{{Name: "X-A", Value: "a"}}}
			if tc.query {
				req.Query = []request.KV{{Name: "q", Value: "1"}}
			}
			got, err := comp.Apply(context.Background(), req, config.NewObject("body", "got $X"), nil)
			msg := ""
			if err != nil {
				if ce, ok := err.(*config.Error); ok && ce.Raw != nil {
					m, _ := ce.Raw.Get("message")
					msg, _ = m.(string)
				} else {
					msg = err.Error()
				}
			} else {
				msg, _ = get(got, "body").(string)
			}
			if msg != tc.want {
				t.Errorf("%s from %s (query %v): %q, want %q", kind, tc.from, tc.query, msg, tc.want)
			}
		}
	}
}
