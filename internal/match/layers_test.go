package match

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// The differential tests of this file hold the two layers of matching to each other: Find
// (the speed layer: the candidate index, body scans, fast paths), Find with its speed paths
// off, and the reference evaluator must answer every request alike: the same stub, or errors
// with the same code and message. The inputs are Mountebank's own cases, every fuzz corpus
// entry under testdata/fuzz, and the predicates and requests of the compat scenarios.

// agreeAll fails t unless Find, Find without its index and scans, Find with every node a
// reference node, and the reference agree on r.
func agreeAll(t *testing.T, set *Set, ref *Reference, r *request.Request, what string) {
	t.Helper()
	type answer struct {
		name string
		i    int
		err  error
	}
	var answers []answer
	i, err := set.Find(r)
	answers = append(answers, answer{"Find", i, err})
	i, err = scanParsed(set, r)
	answers = append(answers, answer{"Find without index and scans", i, err})
	i, err = plainFind(set, r)
	answers = append(answers, answer{"Find with every node a reference node", i, err})
	i, err = ref.Find(r)
	answers = append(answers, answer{"reference", i, err})
	want := answers[len(answers)-1]
	for _, a := range answers[:len(answers)-1] {
		if !sameAnswer(a.i, a.err, want.i, want.err) {
			t.Fatalf("%s: %s = %d, %v; reference = %d, %v", what, a.name, a.i, a.err, want.i, want.err)
		}
	}
}

func sameAnswer(i int, err error, j int, err2 error) bool {
	if err == nil && err2 == nil {
		return i == j
	}
	var a, b *Error
	if !errors.As(err, &a) || !errors.As(err2, &b) {
		return err != nil && err2 != nil && err.Error() == err2.Error()
	}
	return a.Code == b.Code && a.Message == b.Message
}

// TestLayersAgreeOnMountebankCases runs each Mountebank case as a one-stub imposter through
// both layers (TestReferenceAgreesWithFindOnMountebankCases runs them all in one imposter).
func TestLayersAgreeOnMountebankCases(t *testing.T) {
	ordered := orderedMBPredicates(t)
	n := 0
	for i, tc := range loadMBCases(t) {
		opts := Options{Binary: tc.Binary, TCP: tc.Binary}
		set, err := Compile([][]any{{tc.Predicate}}, opts)
		if err != nil {
			continue // refused at Compile: nothing to evaluate
		}
		n++
		agreeAll(t, set, NewReference([]config.Value{[]any{ordered[i]}}, opts), tc.request(), tc.Name)
	}
	if n < 250 {
		t.Fatalf("only %d Mountebank cases compiled", n)
	}
}

// fuzzValue is one value of a corpus file: a string, []byte, int or bool.
func fuzzValues(t *testing.T, file string) []any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 0 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a fuzz corpus file", file)
	}
	var out []any
	for _, l := range lines[1:] {
		open := strings.IndexByte(l, '(')
		if open < 0 || !strings.HasSuffix(l, ")") {
			t.Fatalf("%s: cannot read %q", file, l)
		}
		kind, arg := l[:open], l[open+1:len(l)-1]
		switch kind {
		case "string", "[]byte":
			s, err := strconv.Unquote(arg)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			out = append(out, s)
		case "bool":
			out = append(out, arg == "true")
		default:
			n, _ := strconv.ParseInt(arg, 0, 64)
			out = append(out, n)
		}
	}
	return out
}

// TestLayersAgreeOnFuzzCorpus runs every entry of the fuzz corpora under testdata/fuzz: the
// requests of FuzzFind and FuzzReference against their stubs, the predicates of FuzzCompile
// and FuzzReferencePredicates against their request, and every other string (bodies of the
// scanner targets) as the body of a request against FuzzFind's stubs.
func TestLayersAgreeOnFuzzCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/*/*")
	if len(files) == 0 {
		t.Fatal("no fuzz corpus")
	}
	var stubs [][]any
	if err := json.Unmarshal([]byte(fuzzFindStubs), &stubs); err != nil {
		t.Fatal(err)
	}
	set, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	orderedStubs, _ := config.ParseJSON([]byte(fuzzFindStubs))
	ref := NewReference(orderedStubs.([]any), Options{})
	for _, file := range files {
		target := filepath.Base(filepath.Dir(file))
		vals := fuzzValues(t, file)
		switch target {
		case "FuzzFind", "FuzzReference":
			s := make([]string, 6)
			for i := range s {
				s[i], _ = vals[i].(string)
			}
			r := fuzzFindRequest(s[0], s[1], s[2], s[3], s[4], s[5])
			agreeAll(t, set, ref, r, file)
			request.Release(r)
		case "FuzzCompile", "FuzzReferencePredicates":
			src, _ := vals[0].(string)
			binary, _ := vals[1].(bool)
			agreeOnPredicates(t, src, binary, file)
		default:
			for _, v := range vals {
				if s, ok := v.(string); ok {
					r := fuzzFindRequest("POST", "/o", "", "Content-Type", "application/json", s)
					agreeAll(t, set, ref, r, file)
					request.Release(r)
				}
			}
		}
	}
}

// agreeOnPredicates runs the predicates of one stub, as JSON text, against fuzzRequest (and,
// in binary mode, a tcp request) through both layers.
func agreeOnPredicates(t *testing.T, src string, binary bool, what string) {
	t.Helper()
	v, err := config.ParseJSON([]byte(src))
	if err != nil {
		return
	}
	preds, isList := v.([]any)
	if !isList {
		preds = []any{v}
	}
	for _, p := range preds {
		if o, ok := p.(*config.Object); ok && operatorCount(o) > 1 {
			return // Find reads the operators in predicates.js's order, not the JSON's
		}
	}
	opts := Options{Binary: binary, TCP: binary}
	set, err := Compile([][]any{config.Plain(preds).([]any)}, opts)
	if err != nil {
		return
	}
	ref := NewReference([]config.Value{preds}, opts)
	r := *fuzzRequest
	r.Query = append([]request.KV(nil), fuzzRequest.Query...)
	agreeAll(t, set, ref, &r, what)
	if binary {
		r.TCP = true
		r.SetDataText("aGVsbG8=")
		agreeAll(t, set, ref, &r, what+" (tcp)")
	}
}

// TestLayersAgreeOnCompatScenarios runs the requests of every compat scenario (test/compat)
// against the stubs of the http, https and tcp imposters the scenario creates, through both
// layers. Requests are built as the servers build them, less the headers a client adds.
func TestLayersAgreeOnCompatScenarios(t *testing.T) {
	files, _ := filepath.Glob("../../test/compat/scenarios/*.json")
	if len(files) == 0 {
		t.Skip("no compat scenarios")
	}
	requests := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := config.ParseJSON(b)
		if err != nil {
			continue
		}
		type imposter struct {
			set *Set
			ref *Reference
			tcp bool
		}
		imposters := map[string]imposter{}
		steps, _ := prop(doc, "steps").([]any)
		for n, step := range steps {
			if admin := asObject(prop(step, "admin")); admin != nil {
				var defs []any
				switch method, path := prop(admin, "method"), prop(admin, "path"); {
				case method == "POST" && path == "/imposters":
					defs = []any{prop(admin, "body")}
				case method == "PUT" && path == "/imposters":
					defs, _ = prop(prop(admin, "body"), "imposters").([]any)
				}
				for _, def := range defs {
					proto := prop(def, "protocol")
					if proto != "http" && proto != "https" && proto != "tcp" {
						continue
					}
					var ordered []config.Value
					stubList, _ := prop(def, "stubs").([]any)
					for _, s := range stubList {
						preds, _ := prop(s, "predicates").([]any)
						ordered = append(ordered, preds)
					}
					opts := Options{Binary: prop(def, "mode") == "binary", TCP: proto == "tcp"}
					// As the imposter compiles them: as configured, keys in their order.
					set, err := CompileValues(ordered, opts)
					if err != nil {
						continue
					}
					imposters[jsString(prop(def, "port"))] = imposter{set, NewReference(ordered, opts), proto == "tcp"}
				}
				continue
			}
			r := compatRequest(step)
			if r == nil {
				continue
			}
			port := jsString(prop(prop(step, "http"), "port"))
			if r.TCP {
				port = jsString(prop(prop(step, "tcp"), "port"))
			}
			imp, ok := imposters[port]
			if !ok || imp.tcp != r.TCP {
				continue
			}
			requests++
			agreeAll(t, imp.set, imp.ref, r, fmt.Sprintf("%s step %d", filepath.Base(file), n))
		}
	}
	t.Logf("%d requests of %d scenarios", requests, len(files))
	if requests < 300 {
		t.Fatalf("only %d requests of the compat scenarios were evaluated", requests)
	}
}

// compatRequest is the request an http or tcp step of a compat scenario sends, or nil.
func compatRequest(step any) *request.Request {
	r := &request.Request{}
	if tcp := asObject(prop(step, "tcp")); tcp != nil {
		data, isString := prop(tcp, "data").(string)
		if !isString {
			return nil
		}
		r.TCP = true
		r.SetDataText(data)
		r.SetClient("127.0.0.1", "127.0.0.1:50000")
		return r
	}
	h := asObject(prop(step, "http"))
	if h == nil || prop(h, "gzip") == true || !jsvalue.IsUndefined(prop(h, "base64Body")) {
		return nil
	}
	r.Method, _ = prop(h, "method").(string)
	path, _ := prop(h, "path").(string)
	if i := strings.IndexByte(path, '?'); i >= 0 {
		r.Query = request.ParseQuery(nil, path[i+1:])
		path = path[:i]
	}
	r.Path = path
	if headers := asObject(prop(h, "headers")); headers != nil {
		for _, m := range headers.Members {
			r.Headers = append(r.Headers, request.KV{Name: m.Key, Value: jsString(m.Value)})
		}
	}
	switch b := prop(h, "body").(type) {
	case string:
		r.Body = b
	case jsvalue.Undefined:
	default:
		r.Body = string(config.MarshalJSON(b, 0))
	}
	for _, kv := range r.Headers {
		if strings.EqualFold(kv.Name, "content-type") && request.IsURLEncodedForm(kv.Value) && r.Body != "" {
			r.Form, r.HasForm = request.ParseQuery(nil, r.Body), true
		}
	}
	r.SetClient("127.0.0.1", "127.0.0.1:50000")
	return r
}

// TestLayersAgreeBeyondTheDryRun: predicates the dry run does not reach (an or stops at its
// first true alternative) are still evaluated alike, malformed ones raising the reference's
// errors.
func TestLayersAgreeBeyondTheDryRun(t *testing.T) {
	for _, src := range []string{
		`[{"or":[{"equals":{"method":"GET"}},{"or":5}]}]`,
		`[{"or":[{"equals":{"method":"GET"}},{"and":null}]}]`,
		`[{"or":[{"equals":{"method":"GET"}},{"not":7}]}]`,
		`[{"or":[{"equals":{"method":"GET"}},{"not":null}]}]`,
		`[{"or":[{"equals":{"method":"GET"}},"equals"]}]`,
		`[{"or":[{"equals":{"method":"GET"}},{"contains":{"body":{"n":"x"}}}]}]`,
		`[{"or":[{"equals":{"method":"GET"}},{"endsWith":{"body":{"a":null}}}]}]`,
	} {
		v, err := config.ParseJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		set, err := CompileValues([]config.Value{v}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		ref := NewReference([]config.Value{v}, Options{})
		r := *fuzzRequest
		agreeAll(t, set, ref, &r, src)
		if _, err := ref.Find(&r); err == nil {
			t.Errorf("%s: the reference raises no error", src)
		}
	}
}
