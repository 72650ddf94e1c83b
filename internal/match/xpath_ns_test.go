package match

import (
	"errors"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// An xpath's ns that is not an object is lowercased in place by Mountebank unless the predicate
// is caseSensitive: a non-empty string or an array element that is not a string throws a
// TypeError in its dry run (scenario pred-xpath-ns-types); the other predicates compile. A
// stub's predicates that are not an array throw there too.
func TestCompileXPathNSAndPredicateTypes(t *testing.T) {
	tests := []struct {
		name, stub string
		typeErr    bool
	}{
		{"ns string", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":"s"}}`, true},
		{"ns string caseSensitive", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":"s"},"caseSensitive":true}`, false},
		{"ns empty string", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":""}}`, false},
		{"ns array of a number", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":[1]}}`, true},
		{"ns array of null", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":[null]}}`, true},
		{"ns array of strings", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":["A",""]}}`, false},
		{"ns array caseSensitive", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":[1]},"caseSensitive":true}`, false},
		{"ns true", `{"equals":{"body":"x"},"xpath":{"selector":"//a","ns":true}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := config.ParseJSON([]byte(tt.stub))
			if err != nil {
				t.Fatal(err)
			}
			_, err = CompileReusing([]config.Value{[]any{p}}, nil, nil, Options{})
			var me *Error
			switch {
			case !tt.typeErr && err != nil:
				t.Fatalf("Compile: %v, want no error", err)
			case tt.typeErr && (!errors.As(err, &me) || me.Code != "" || me.Stub != 0):
				t.Fatalf("Compile: %v, want a TypeError of stub 0", err)
			}
		})
	}
	for _, preds := range []config.Value{true, 1.0, "s", config.NewObject()} {
		_, err := CompileReusing([]config.Value{nil, preds}, nil, nil, Options{})
		var me *Error
		if !errors.As(err, &me) || me.Code != "" || me.Stub != 1 {
			t.Errorf("predicates %v: %v, want a TypeError of stub 1", preds, err)
		}
	}
	for _, preds := range []config.Value{nil, "", 0.0, false} {
		if _, err := CompileReusing([]config.Value{preds}, nil, nil, Options{}); err != nil {
			t.Errorf("predicates %v: %v, want none", preds, err)
		}
	}
}
