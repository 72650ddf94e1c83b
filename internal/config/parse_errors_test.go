package config

import (
	"reflect"
	"testing"
)

// TestParseStubErrorOrder: a stub's errors come as Mountebank's dry-run validator lists them:
// the injection refused, then each response's behavior errors (ParseOptions.Behaviors) followed
// by its repeat error; behavior errors are listed even when the injection is refused.
func TestParseStubErrorOrder(t *testing.T) {
	v, err := ParseJSON([]byte(`{"responses": [
		{"inject": "function () {}", "_behaviors": {"wait": -1}},
		{"is": {}, "repeat": 0, "behaviors": [{"copy": 5}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	behaviors := func(bv Value) []*Error {
		var errs []*Error
		for _, b := range bv.([]any) {
			errs = append(errs, &Error{Code: CodeBadData, Message: "behavior " + string(MarshalJSON(b, 0))})
		}
		return errs
	}
	_, errs := ParseStub(v, ParseOptions{Behaviors: behaviors}, "stubs[0]")
	var got []string
	for _, e := range errs {
		got = append(got, e.Message)
	}
	want := []string{
		"JavaScript injection is not allowed unless mb is run with the --allowInjection flag",
		`behavior {"wait":-1}`,
		`behavior {"copy":5}`,
		`"repeat" field must be an integer greater than 0`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors = %q, want %q", got, want)
	}
	// A stub that fails for nothing else leaves its behaviors to the compiler (which lists
	// their errors with the other stubs' compile errors).
	ok, err := ParseJSON([]byte(`{"responses": [{"is": {}, "_behaviors": {"wait": -1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := ParseStub(ok, ParseOptions{Behaviors: behaviors}, "stubs[0]"); len(errs) != 0 {
		t.Errorf("only behavior errors: %v, want them left to the compiler", errs)
	}
	// Without the hook the behaviors are left to the compiler.
	if _, errs := ParseStub(v, ParseOptions{}, "stubs[0]"); len(errs) != 2 {
		t.Errorf("without Behaviors: %d errors, want 2", len(errs))
	}
}
