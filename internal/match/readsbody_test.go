package match

import "testing"

// TestReadsBody: a set reads the body when any predicate may (a field named body or form in
// any case, inject, a selector, anything the reference alone evaluates), and only then.
func TestReadsBody(t *testing.T) {
	for _, tt := range []struct {
		name, stubs string
		opts        Options
		want        bool
	}{
		{"no stubs", `[]`, Options{}, false},
		{"no predicates", `[[]]`, Options{}, false},
		{"method and path", `[[{"equals":{"method":"POST","path":"/upload"}}]]`, Options{}, false},
		{"headers and query", `[[{"deepEquals":{"query":{"a":"1"}}},{"exists":{"headers":{"X":true}}}]]`, Options{}, false},
		{"not of a path", `[[{"not":{"equals":{"path":"/x"}}}]]`, Options{}, false},
		{"or of paths", `[[{"or":[{"equals":{"path":"/x"}},{"startsWith":{"path":"/y"}}]}]]`, Options{}, false},
		{"except on path", `[[{"equals":{"path":"/x"},"except":"\\d+"}]]`, Options{}, false},
		{"equals body", `[[{"equals":{"body":"x"}}]]`, Options{}, true},
		{"body in the second stub", `[[{"equals":{"path":"/x"}}],[{"contains":{"body":"x"}}]]`, Options{}, true},
		{"upper-case body", `[[{"equals":{"BODY":"x"}}]]`, Options{}, true},
		{"upper-case body, key case sensitive", `[[{"equals":{"Body":"x"},"keyCaseSensitive":true}]]`, Options{}, true},
		{"case sensitive with except", `[[{"matches":{"body":"^a"},"caseSensitive":true,"except":"b"}]]`, Options{}, true},
		{"deepEquals body", `[[{"deepEquals":{"body":{"a":1}}}]]`, Options{}, true},
		{"exists body", `[[{"exists":{"body":false}}]]`, Options{}, true},
		{"form", `[[{"equals":{"form":{"a":"1"}}}]]`, Options{}, true},
		{"body under not", `[[{"not":{"equals":{"body":"x"}}}]]`, Options{}, true},
		{"body under and", `[[{"and":[{"equals":{"path":"/x"}},{"equals":{"body":"x"}}]}]]`, Options{}, true},
		{"jsonpath", `[[{"equals":{"path":"/x"},"jsonpath":{"selector":"$.a"}}]]`, Options{}, true},
		{"xpath", `[[{"equals":{"path":"/x"},"xpath":{"selector":"//a"}}]]`, Options{}, true},
		{"inject", `[[{"inject":"function(){return true}"}]]`, Options{}, true},
		{"no operator, not reached by the dry run", `[[{"or":[{"equals":{"data":"test"}},{"bogus":1}]}]]`, Options{TCP: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(decode(t, tt.stubs), tt.opts)
			if err != nil {
				t.Fatalf("Compile(%s): %v", tt.stubs, err)
			}
			if got := s.ReadsBody(); got != tt.want {
				t.Fatalf("ReadsBody(%s) = %v, want %v", tt.stubs, got, tt.want)
			}
			// A change that keeps the stubs' compiled predicates keeps the answer.
			reuse := make([]int, s.Len())
			for i := range reuse {
				reuse[i] = i
			}
			again, err := CompileReusing(make([]any, s.Len()), s, reuse, tt.opts)
			if err != nil || again.ReadsBody() != tt.want {
				t.Fatalf("recompiled: ReadsBody = %v (%v), want %v", again.ReadsBody(), err, tt.want)
			}
		})
	}
}
