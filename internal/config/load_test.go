package config

import (
	"bytes"
	"strings"
	"testing"
)

func TestLoadYAML(t *testing.T) {
	t.Setenv("MOCKD_TEST_NAME", "")
	cfg, err := Load([]string{"testdata/load/good.yaml", "testdata/load/mb.json"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.Imposters) != 2 {
		t.Fatalf("got %d imposters, want 2", len(cfg.Imposters))
	}
	if p, _ := cfg.Server.Get("port"); p != 2626.0 {
		t.Errorf("server.port = %v, want 2626", p)
	}
	if probs := CheckImposter(cfg.Imposters[0].Value, "", Compilers{}); len(probs) > 0 {
		t.Fatalf("CheckImposter: %v", probs)
	}
	imp, errs := ParseImposter(cfg.Imposters[0].Value, ParseOptions{})
	if len(errs) > 0 {
		t.Fatalf("ParseImposter: %v", errs)
	}
	if imp.Name != "users" {
		t.Errorf("name = %q, want the default from ${MOCKD_TEST_NAME:-users}", imp.Name)
	}
	got := string(MarshalJSON(imp.Stubs[0], 0))
	if !strings.Contains(got, `"body":"{\"id\": 42}\n"`) || strings.Contains(got, "bodyFile") {
		t.Errorf("bodyFile not replaced by the file's text: %s", got)
	}
	if got := string(MarshalJSON(imp.Stubs[1], 0)); !strings.Contains(got, "no ${TOKEN} here") {
		t.Errorf("unset ${TOKEN} must stay literal for the copy behavior: %s", got)
	}
	// Mountebank JSON is lenient: unknown keys are accepted.
	if _, errs := ParseImposter(cfg.Imposters[1].Value, ParseOptions{}); len(errs) > 0 {
		t.Errorf("Mountebank JSON rejected: %v", errs)
	}
}

func TestLoadErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"testdata/load/bad_unknown_key.yaml", `testdata/load/bad_unknown_key.yaml:6:9: imposters[0].stubs[0].respones: unknown field "respones"`},
		{"testdata/load/bad_port.yaml", `testdata/load/bad_port.yaml:2:5: imposters[0].port: invalid value for 'port'`},
		{"testdata/load/missing.yaml", `testdata/load/missing.yaml: cannot read config: no such file or directory`},
	}
	for _, tt := range tests {
		cfg, err := Load([]string{tt.file})
		var problems []string
		if err != nil {
			problems = err.(*LoadError).Problems
		} else {
			for _, src := range cfg.Imposters {
				for _, p := range CheckImposter(src.Value, src.Path, Compilers{}) {
					problems = append(problems, src.Locate(p.Path, p.Message))
				}
				_, errs := ParseImposter(src.Value, ParseOptions{Path: src.Path})
				for _, e := range errs {
					problems = append(problems, src.Locate(e.Path, e.Message))
				}
			}
		}
		if len(problems) == 0 || !strings.HasPrefix(problems[0], tt.want) {
			t.Errorf("%s: got problems %q, want one starting %q", tt.file, problems, tt.want)
		}
	}
}

func TestParseImposterValidation(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{}`, []string{"'protocol' is a required field"}},
		{`{"protocol":"http","port":-1}`, []string{"invalid value for 'port'"}},
		{`{"protocol":"http","port":"4545.5"}`, []string{"invalid value for 'port'"}},
		{`{"protocol":"http","port":65536}`, []string{"invalid value for 'port'"}},
		// Mountebank 2.9.1 ends its process on a null port: a clear error here, not no port.
		{`{"protocol":"http","port":null}`, []string{"invalid value for 'port'"}},
		{`{"protocol":"ftp"}`, []string{"the ftp protocol is not yet supported"}},
		{`{"port":0}`, []string{"invalid value for 'port'", "'protocol' is a required field"}},
		{`{"protocol":"http","stubs":[{}]}`, []string{"'responses' must be a non-empty array"}},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"repeat":0}]}]}`, []string{`"repeat" field must be an integer greater than 0`}},
		{`{"protocol":"http","stubs":[{"responses":[{"inject":"function(){}"}]}]}`, []string{"JavaScript injection is not allowed unless mb is run with the --allowInjection flag"}},
		{`{"protocol":"http","stubs":[{"responses":[{"is":{},"behaviors":[{"shellTransform":"x"}]}]}]}`, []string{"Shell execution is not allowed unless mb is run with the --allowInjection flag"}},
		{`{"protocol":"http","port":"4545","stubs":[{"responses":[{"is":{}}]}]}`, nil},
	}
	for _, tt := range tests {
		v, err := ParseJSON([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		_, errs := ParseImposter(v, ParseOptions{})
		var got []string
		for _, e := range errs {
			got = append(got, e.Message)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("ParseImposter(%s) errors = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUpcastBehaviors(t *testing.T) {
	v, _ := ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":[{"is":{},"_behaviors":{"wait":100,"repeat":2,"shellTransform":"cmd"}}]}]}`))
	imp, errs := ParseImposter(v, ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := string(MarshalJSON(imp.Stubs[0], 0))
	want := `{"responses":[{"is":{},"repeat":2,"behaviors":[{"wait":100},{"shellTransform":"cmd"}]}]}`
	if got != want {
		t.Errorf("upcast gave %s, want %s", got, want)
	}
}

func TestYAMLConvertRoundTrip(t *testing.T) {
	in := `{"imposters":[{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"body":{"id":1,"tags":["a","1"]}}}],` +
		`"responses":[{"is":{"statusCode":200,"body":"line1\nline2","headers":{"X-N":"007","X-B":"true","X-E":""}}},{"is":{"body":"${TOKEN} and $${X}"}}]}]}]}`
	v, err := ParseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	y, err := MarshalYAML(v)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := ParseYAML(y)
	if err != nil {
		t.Fatalf("ParseYAML of converted YAML: %v\n%s", err, y)
	}
	if got := string(MarshalJSON(back, 0)); got != in {
		t.Errorf("round trip through YAML changed the config\n got %s\nwant %s\nyaml:\n%s", got, in, y)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("MOCKD_A", "x")
	tests := map[string]string{
		"${MOCKD_A}":           "x",
		"${MOCKD_UNSET}":       "${MOCKD_UNSET}",
		"${MOCKD_UNSET:-dflt}": "dflt",
		"${MOCKD_A:-dflt}":     "x",
		"$${MOCKD_A}":          "${MOCKD_A}",
		"a${MOCKD_A}b":         "axb",
	}
	for in, want := range tests {
		if got, _ := ExpandEnv(in); got != want {
			t.Errorf("ExpandEnv(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseYAML(f *testing.F) {
	for _, s := range []string{"imposters:\n  - port: 4545\n    protocol: http\n", "a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n", "- ${A:-1}\n- '$${B}'\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _, err := ParseYAML(data)
		if err != nil {
			return
		}
		if _, err := MarshalYAML(v); err != nil {
			t.Fatalf("MarshalYAML of a parsed document: %v", err)
		}
		CheckImposter(v, "", Compilers{})
		if o, ok := v.(*Object); ok {
			if list, ok := mustGet(o, "imposters").([]any); ok {
				for _, imp := range list {
					CheckImposter(imp, "imposters[0]", Compilers{})
				}
			}
		}
		ParseImposter(v, ParseOptions{})
	})
}

func TestLoadDocuments(t *testing.T) {
	cfg, err := LoadDocuments([]string{"testdata/load/mb.json"}, []Document{
		{Name: "testdata/load/inline.yaml", Data: []byte("imposters:\n  - protocol: http\n    name: inline\n")},
		{Name: "inline.json", Data: []byte(`{"protocol": "tcp", "port": 4546}`)},
	}, LoadOptions{})
	if err != nil {
		t.Fatalf("LoadDocuments: %v", err)
	}
	if len(cfg.Imposters) != 3 || !cfg.Imposters[1].Strict() || cfg.Imposters[2].Strict() {
		t.Fatalf("got %d imposters (strict: yaml %v, json %v), want the file's and then one of each document",
			len(cfg.Imposters), len(cfg.Imposters) > 1 && cfg.Imposters[1].Strict(), len(cfg.Imposters) > 2 && cfg.Imposters[2].Strict())
	}
	_, err = LoadDocuments(nil, []Document{{Name: "bad.yaml", Data: []byte("imposters: [\n")}, {Name: "bad.json", Data: []byte("{")}}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: invalid YAML") || !strings.Contains(err.Error(), "bad.json: invalid JSON") {
		t.Errorf("LoadDocuments of broken documents: %v, want both named", err)
	}
}

// FuzzConvertRoundTrip: what mockd convert does to any JSON document that parses (JSON -> YAML
// -> JSON) gives the identical document back.
func FuzzConvertRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"imposters":[{"protocol":"http","stubs":[{"responses":[0,false,{"is":{"body":"${A} $${B}"}}]}]}]}`,
		`{"a":[1.5,-0,1e21,"yes","no","~","null","0x1F","1_000",".inf","2026-11-27","- x",": y","#z"]}`,
		`{"":{"\u0000":"\t\r\n","k: v":"'\"","<<":{"a":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseJSON(data)
		if err != nil {
			return
		}
		y, err := MarshalYAML(v)
		if err != nil {
			return // a value YAML cannot hold is refused, not changed
		}
		back, _, err := ParseYAML(y)
		if err != nil {
			t.Fatalf("the YAML of %s does not parse: %v\n%s", data, err, y)
		}
		if got, want := MarshalJSON(back, 0), MarshalJSON(v, 0); !bytes.Equal(got, want) {
			t.Fatalf("JSON -> YAML -> JSON changed %s\n got %s\nwant %s\nyaml:\n%s", data, got, want, y)
		}
	})
}
