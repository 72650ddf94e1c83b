package config

import (
	"strings"
	"testing"
)

// Node's own errors pass through Mountebank as they are, keys in node's order (Node 20).
func TestNodeErrorsRender(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"port taken, wildcard", AddrInUse("", 4545),
			`{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"::","port":4545}`},
		{"port taken, host", AddrInUse("127.0.0.1", 4545),
			`{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"127.0.0.1","port":4545}`},
		{"address not local", ListenFailed("EADDRNOTAVAIL", -99, "10.99.1.2", 4546),
			`{"code":"EADDRNOTAVAIL","errno":-99,"syscall":"listen","address":"10.99.1.2","port":4546}`},
		{"unknown host", LookupFailed("ENOTFOUND", -3008, "no.such.host.invalid"),
			`{"errno":-3008,"code":"ENOTFOUND","syscall":"getaddrinfo","hostname":"no.such.host.invalid"}`},
		{"lookup failed for now", LookupFailed("EAI_AGAIN", -3001, "example.test"),
			`{"errno":-3001,"code":"EAI_AGAIN","syscall":"getaddrinfo","hostname":"example.test"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(MarshalJSON(tt.err.Render(), 0)); got != tt.want {
				t.Errorf("Render() = %s, want %s", got, tt.want)
			}
			if tt.err.Message == "" {
				t.Error("no message for logs and the command line")
			}
		})
	}
}

// node's ERR_INVALID_URL shows its input where other errors have a message.
func TestInvalidURLRender(t *testing.T) {
	in := "nope"
	e := &Error{Code: "ERR_INVALID_URL", Message: "Invalid URL", Input: &in, Source: "{}"}
	if got, want := string(MarshalJSON(e.Render(), 0)), `{"code":"ERR_INVALID_URL","input":"nope","source":"{}"}`; got != want {
		t.Errorf("Render() = %s, want %s", got, want)
	}
}

// A stub that passes validation beside one that fails is dry-run, and its errors take its
// place in the list, which runs from the last stub to the first (Mountebank's validator).
func TestParseImposterDryRunsPassingStubs(t *testing.T) {
	v, err := ParseJSON([]byte(`{"protocol":"http","stubs":[
		{"responses":[{"is":{"body":"0"}}]},
		{"responses":[]},
		{"responses":[{"is":{"body":"2"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	opts := ParseOptions{DryRun: func(imp *Imposter, stub *Object) []*Error {
		body := jsonText(stub)
		ran = append(ran, body)
		return []*Error{{Code: CodeBadData, Message: "dry run " + string(body[len(body)-6])}}
	}}
	_, errs := ParseImposter(v, opts)
	var got []string
	for _, e := range errs {
		got = append(got, e.Message)
	}
	want := []string{"dry run 2", "'responses' must be a non-empty array", "dry run 0"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("errors = %q, want %q", got, want)
	}
	if len(ran) != 2 {
		t.Errorf("dry runs = %d, want 2", len(ran))
	}
	// Without a failing stub, nothing is dry-run here (the compiler checks them all).
	ran = nil
	v, _ = ParseJSON([]byte(`{"protocol":"http","stubs":[{"responses":[{"is":{}}]}]}`))
	if _, errs := ParseImposter(v, opts); len(errs) != 0 || len(ran) != 0 {
		t.Errorf("errs %v, dry runs %d: want none", errs, len(ran))
	}
}

func jsonText(o *Object) string { return string(MarshalJSON(o, 0)) }

// An old-style _behaviors that is an array is an object to Mountebank's upcast too: none of
// its keys are behaviors, so the response gets an empty list (kept when repeat is there).
func TestUpcastBehaviorsArray(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"is":{},"_behaviors":[{"wait":1}]}`, `{"is":{},"behaviors":[]}`},
		{`{"is":{},"_behaviors":[],"repeat":2}`, `{"is":{},"_behaviors":[],"repeat":2}`},
		{`{"is":{},"_behaviors":{"wait":1,"repeat":2}}`, `{"is":{},"repeat":2,"behaviors":[{"wait":1}]}`},
	} {
		v, err := ParseJSON([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		upcastBehaviors(v.(*Object))
		if got := jsonText(v.(*Object)); got != tt.want {
			t.Errorf("upcast %s = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Imposter fields Mountebank reads with `x || []`, looks up, or passes to node's listen
// (scenario admin-post-falsy-fields).
func TestParseImposterFieldTypes(t *testing.T) {
	tests := []struct {
		name, json string
		want       string // the rendered errors, "" when the imposter parses
	}{
		{"stubs empty string", `{"protocol":"http","stubs":""}`, ""},
		{"stubs 0", `{"protocol":"http","stubs":0}`, ""},
		{"stubs false", `{"protocol":"http","stubs":false}`, ""},
		{"stubs true", `{"protocol":"http","stubs":true}`, `[{"code":"bad data","message":"'stubs' must be an array"}]`},
		{"protocol null", `{"protocol":null}`, `[{"code":"bad data","message":"the null protocol is not yet supported"}]`},
		{"protocol missing", `{"port":4545}`, `[{"code":"bad data","message":"'protocol' is a required field"}]`},
		{"port true", `{"protocol":"http","port":true}`, `[{"code":"ERR_INVALID_ARG_VALUE"}]`},
		{"port array", `{"protocol":"http","port":[4545]}`, `[{"code":"ERR_INVALID_ARG_VALUE"}]`},
		{"port array of a string", `{"protocol":"http","port":["4545"]}`, `[{"code":"ERR_INVALID_ARG_VALUE"}]`},
		{"port empty array", `{"protocol":"http","port":[]}`, `[{"code":"bad data","message":"invalid value for 'port'"}]`},
		{"port array of a fraction", `{"protocol":"http","port":[1.5]}`, `[{"code":"bad data","message":"invalid value for 'port'"}]`},
		{"port false", `{"protocol":"http","port":false}`, `[{"code":"bad data","message":"invalid value for 'port'"}]`},
		{"port true after stub errors", `{"protocol":"http","port":true,"stubs":[{"responses":[]}]}`,
			`[{"code":"bad data","message":"'responses' must be a non-empty array","source":{"responses":[]}}]`},
		{"string response", `{"protocol":"http","stubs":[{"responses":[{"is":{}},"s"]}]}`,
			`[{"code":"bad data","message":"\"repeat\" field must be an integer greater than 0","source":"s"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseJSON([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			_, errs := ParseImposter(v, ParseOptions{})
			got := ""
			if len(errs) > 0 {
				parts := make([]string, len(errs))
				for i, e := range errs {
					parts[i] = string(MarshalJSON(e.Render(), 0))
					if e.Message == "" {
						t.Errorf("error %d has no message for logs and the command line", i)
					}
				}
				got = "[" + strings.Join(parts, ",") + "]"
			}
			if got != tt.want {
				t.Errorf("errors\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
