package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/mockd/mockd/internal/app"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/schema"
)

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.JSON))
	if err != nil {
		t.Fatalf("mockd.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource("mockd.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mockd.schema.json")
	if err != nil {
		t.Fatalf("mockd.schema.json does not compile: %v", err)
	}
	return sch
}

// instance reads a config file as an editor sees it (before ${ENV} expansion and bodyFile).
func instance(file string) (any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if ext := filepath.Ext(file); ext == ".yaml" || ext == ".yml" {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		// Through JSON, as an editor's YAML language server does: JSON's types only.
		if data, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

func validate(sch *jsonschema.Schema, file string) error {
	v, err := instance(file)
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// load runs the loader and compiles every imposter, as `mockd validate --allowInjection` does.
func load(file string) error {
	_, err := app.Validate([]string{file}, true)
	return err
}

func glob(t *testing.T, patterns ...string) []string {
	t.Helper()
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// TestGoodConfigs: every config in the repository loads and validates against the schema.
func TestGoodConfigs(t *testing.T) {
	sch := compile(t)
	files := glob(t, "../configs/*.yaml", "../configs/*.json", "testdata/good/*.yaml", "testdata/good/*.json",
		"../internal/config/testdata/load/good.yaml")
	if len(files) < 6 {
		t.Fatalf("found only %d good configs: %v", len(files), files)
	}
	for _, f := range files {
		if err := load(f); err != nil {
			t.Errorf("%s does not load: %v", f, err)
		}
		if err := validate(sch, f); err != nil {
			t.Errorf("%s does not validate against the schema: %v", f, err)
		}
	}
}

// TestBadConfigs: every known-bad config fails the loader and the schema alike.
func TestBadConfigs(t *testing.T) {
	sch := compile(t)
	files := glob(t, "testdata/bad/*.yaml", "../internal/config/testdata/load/bad_*.yaml")
	if len(files) < 15 {
		t.Fatalf("found only %d bad configs", len(files))
	}
	for _, f := range files {
		if err := load(f); err == nil {
			t.Errorf("%s loads, want a config error", f)
		}
		if err := validate(sch, f); err == nil {
			t.Errorf("%s validates against the schema, want an error", f)
		}
	}
}

// TestCompatScenarioImposters: every imposter a comparison scenario creates and Mountebank
// accepts is judged the same by the schema and by mockd's YAML loader (which, like the schema,
// refuses keys Mountebank would ignore).
func TestCompatScenarioImposters(t *testing.T) {
	sch := compile(t)
	scenarios := glob(t, "../test/compat/scenarios/*.json")
	dir := t.TempDir()
	checked := 0
	for _, file := range scenarios {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		bodies, err := acceptedImposters(file, filepath.Join("../test/compat/testdata/golden", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for i, body := range bodies {
			// JSON is YAML: written as .yaml it goes through the strict YAML loader.
			f := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", name, i))
			if err := os.WriteFile(f, body, 0o644); err != nil {
				t.Fatal(err)
			}
			loadErr, schemaErr := load(f), validate(sch, f)
			why, stricter := schemaStricter[name]
			loaderWhy, loaderStricter := loaderStricter[name]
			switch {
			case stricter && (loadErr != nil || schemaErr == nil):
				t.Errorf("%s, imposter %d: listed in schemaStricter (%s), but now loader: %v, schema: %v; remove it from the list",
					file, i, why, loadErr, schemaErr)
			case loaderStricter && (loadErr == nil || schemaErr != nil):
				t.Errorf("%s, imposter %d: listed in loaderStricter (%s), but now loader: %v, schema: %v; remove it from the list",
					file, i, loaderWhy, loadErr, schemaErr)
			case !stricter && !loaderStricter && (loadErr == nil) != (schemaErr == nil):
				t.Errorf("%s, imposter %d: the loader and the schema disagree\n  loader: %v\n  schema: %v\n  %s", file, i, loadErr, schemaErr, body)
			}
			checked++
		}
	}
	t.Logf("checked %d imposters of %d scenarios", checked, len(scenarios))
	if checked < 100 {
		t.Errorf("checked only %d scenario imposters", checked)
	}
}

// TestCompatScenarioImpostersConvert: every imposter a comparison scenario creates and
// Mountebank accepts goes through mockd convert's JSON -> YAML -> JSON unchanged, and its YAML
// loads exactly when the JSON loads and the strict check (config.CheckImposter) finds nothing
// to refuse, which mockd convert then lists: a Mountebank file mockd loads converts to YAML that
// loads to the identical imposters, or convert says which of its values the YAML check refuses.
func TestCompatScenarioImpostersConvert(t *testing.T) {
	scenarios := glob(t, "../test/compat/scenarios/*.json")
	check := app.Compilers(true)
	loaded, refused := 0, 0
	for _, file := range scenarios {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		bodies, err := acceptedImposters(file, filepath.Join("../test/compat/testdata/golden", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for i, body := range bodies {
			doc := append(append([]byte(`{"imposters":[`), body...), "]}"...)
			v, err := config.ParseJSON(doc)
			if err != nil {
				t.Fatalf("%s, imposter %d: %v", file, i, err)
			}
			y, err := config.MarshalYAML(v)
			if err != nil {
				t.Errorf("%s, imposter %d: MarshalYAML: %v", file, i, err)
				continue
			}
			back, _, err := config.ParseYAML(y)
			if err != nil {
				t.Errorf("%s, imposter %d: the converted YAML does not parse: %v\n%s", file, i, err, y)
				continue
			}
			if got, want := config.MarshalJSON(back, 0), config.MarshalJSON(v, 0); !bytes.Equal(got, want) {
				t.Errorf("%s, imposter %d: JSON -> YAML -> JSON changed it\n got %s\nwant %s\nyaml:\n%s", file, i, got, want, y)
				continue
			}
			if _, jsonErr := app.CheckDocument("in.json", doc, true); jsonErr != nil {
				continue // not loaded as JSON either (a custom protocol without its --protofile)
			}
			strict := false
			for _, p := range config.CheckImposter(mustImposter(t, back), "imposters[0]", check) {
				strict = strict || !p.Warning
			}
			_, yamlErr := app.CheckDocument("out.yaml", y, true)
			switch {
			case yamlErr != nil && !strict:
				t.Errorf("%s, imposter %d: loads as JSON, its YAML does not, and not for the strict check: %v\n%s", file, i, yamlErr, y)
			case yamlErr == nil && strict:
				t.Errorf("%s, imposter %d: the strict check refuses it, but its YAML loads\n%s", file, i, y)
			case yamlErr == nil:
				loaded++
			default:
				refused++
			}
		}
	}
	t.Logf("%d imposters' YAML loads, %d refused by the strict check (convert lists why)", loaded, refused)
	if loaded < 300 {
		t.Errorf("only %d scenario imposters converted to YAML that loads", loaded)
	}
}

func mustImposter(t *testing.T, doc config.Value) config.Value {
	t.Helper()
	o, _ := doc.(*config.Object)
	if o != nil {
		if list, ok := o.Get("imposters"); ok {
			if l, ok := list.([]any); ok && len(l) == 1 {
				return l[0]
			}
		}
	}
	t.Fatalf("not one imposter: %s", config.MarshalJSON(doc, 0))
	return nil
}

// schemaStricter lists the scenarios whose imposters the schema refuses while mockd's YAML
// loader still accepts them: values Mountebank takes without complaint but that cannot work.
// The schema flags them for an editor's user; when the loader learns to refuse them too, the
// test says to remove the entry.
var schemaStricter = map[string]string{}

// loaderStricter lists the scenarios whose imposters mockd's YAML loader refuses while the
// schema accepts them: what a JSON Schema cannot say, such as JavaScript that does not parse.
var loaderStricter = map[string]string{
	"script-inject-syntax-error":           "the inject function does not parse",
	"behavior-copy-xpath-malformed-empty":  "a copy's xpath selector does not compile",
	"behavior-copy-xpath-string-malformed": "a copy's xpath selector gives a string (name(/*)), which Mountebank accepts and fails on at request time",
}

// acceptedImposters returns the imposters of a scenario's POST and PUT /imposters steps that
// Mountebank answered with 2xx (from the golden file), leaving out those that use the
// scenario's captured ${variables}.
func acceptedImposters(scenarioFile, goldenFile string) ([][]byte, error) {
	var sc struct {
		Steps []struct {
			Admin *struct {
				Method string          `json:"method"`
				Path   string          `json:"path"`
				Body   json.RawMessage `json:"body"`
			} `json:"admin"`
			Capture map[string]string `json:"capture"`
		} `json:"steps"`
	}
	var golden struct {
		Steps []struct {
			Answer struct {
				Status int `json:"status"`
			} `json:"answer"`
		} `json:"steps"`
	}
	for file, v := range map[string]any{scenarioFile: &sc, goldenFile: &golden} {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	usesCapture := func(body []byte) bool {
		for _, st := range sc.Steps {
			for name := range st.Capture {
				if bytes.Contains(body, []byte("${"+name+"}")) {
					return true
				}
			}
		}
		return false
	}
	var out [][]byte
	for i, st := range sc.Steps {
		a := st.Admin
		if a == nil || a.Path != "/imposters" || len(a.Body) == 0 || i >= len(golden.Steps) ||
			golden.Steps[i].Answer.Status/100 != 2 || usesCapture(a.Body) {
			continue
		}
		switch a.Method {
		case "POST":
			out = append(out, a.Body)
		case "PUT":
			var list struct {
				Imposters []json.RawMessage `json:"imposters"`
			}
			if json.Unmarshal(a.Body, &list) == nil {
				for _, imp := range list.Imposters {
					out = append(out, imp)
				}
			}
		}
	}
	return out, nil
}

// TestServerKeys: the schema's server block has the keys the loader takes, the server flags
// (app.ServerKeys) but configfile, which a config file may not set.
func TestServerKeys(t *testing.T) {
	var doc struct {
		Definitions struct {
			Server struct {
				Properties map[string]any `json:"properties"`
			} `json:"server"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(schema.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	var inSchema, flags []string
	for k := range doc.Definitions.Server.Properties {
		inSchema = append(inSchema, k)
	}
	for _, k := range app.ServerKeys() {
		if k != "configfile" {
			flags = append(flags, k)
		}
	}
	sort.Strings(inSchema)
	sort.Strings(flags)
	if strings.Join(inSchema, " ") != strings.Join(flags, " ") {
		t.Errorf("the schema's server keys\n%q\nare not the server flags\n%q", inSchema, flags)
	}
}

// TestWithProtocols: with a protofile's custom protocols, the schema accepts their imposters
// whatever fields they hold, and still holds every other imposter to the built-in protocols
// (a typo of one, or of a custom protocol, is an error).
func TestWithProtocols(t *testing.T) {
	doc, err := schema.WithProtocols([]string{"foo", "ldap"})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("the schema with custom protocols is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource("custom.schema.json", parsed); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("custom.schema.json")
	if err != nil {
		t.Fatalf("the schema with custom protocols does not compile: %v", err)
	}
	plain := compile(t)
	for _, tc := range []struct {
		config            string
		valid, plainValid bool
	}{
		{`{"imposters": [{"protocol": "foo", "port": 3000, "customField": 1, "stubs": [{"predicates": [{"equals": {"dn": "x"}}], "responses": [{"is": {"entry": 2}}]}]}]}`, true, false},
		{`{"protocol": "ldap", "anything": true}`, true, false},
		{`{"imposters": [{"protocol": "http", "port": 3000}]}`, true, true},
		{`{"imposters": [{"protocol": "htp", "port": 3000}]}`, false, false},
		{`{"imposters": [{"protocol": "fooo", "port": 3000}]}`, false, false},
		{`{"imposters": [{"protocol": "http", "customField": 1}]}`, false, false},
		{`{"imposters": [{"protocol": "foo", "port": "x"}]}`, false, false},
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.config))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.valid {
			t.Errorf("with custom protocols, %s: valid %v, want %v (%v)", tc.config, err == nil, tc.valid, err)
		}
		if err := plain.Validate(v); (err == nil) != tc.plainValid {
			t.Errorf("without them, %s: valid %v, want %v (%v)", tc.config, err == nil, tc.plainValid, err)
		}
	}
	if out, err := schema.WithProtocols(nil); err != nil || !bytes.Equal(out, schema.JSON) {
		t.Errorf("WithProtocols(nil) is not the shipped schema (%v)", err)
	}
}
