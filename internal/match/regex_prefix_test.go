package match

import (
	"fmt"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// TestAnchoredPrefixAgreesWithRegexp checks that the literal-prefix shortcut never changes a
// match result.
func TestAnchoredPrefixAgreesWithRegexp(t *testing.T) {
	patterns := []struct {
		src    string
		ic     bool
		prefix string
	}{
		{`^/api/v2/items\d+$`, false, "/api/v2/items"},
		{`^/API/v2/items\d+$`, true, "/api/v2/items"},
		{`^/users/(\d+)`, true, "/users/"},
		{`/users/\d+`, true, ""},
		{`^(a|b)c`, false, ""},
		{`^k`, true, "k"},
		{`^é`, true, ""},
	}
	inputs := []string{"", "/", "/api/v2/items12", "/API/V2/ITEMS12", "/api/v2/items", "/users/42", "/Users/42",
		"x/users/42", "kelvin", "Kelvin", "\u212aelvin", "é", "É", "ac", "/api/v2/itemsX"}
	for _, p := range patterns {
		jr, err := compileJSRegex(p.src, p.ic)
		if err != nil {
			t.Fatalf("compile %q: %v", p.src, err)
		}
		if jr.prefix != p.prefix && !(jr.fold && request.EqualFoldASCII(jr.prefix, p.prefix)) {
			t.Errorf("%q (ignoreCase %v): prefix %q, want %q", p.src, p.ic, jr.prefix, p.prefix)
		}
		for _, in := range inputs {
			if got, want := jr.MatchString(in), jr.Regexp.MatchString(in); got != want {
				t.Errorf("%q (ignoreCase %v) on %q: shortcut says %v, regexp says %v", p.src, p.ic, in, got, want)
			}
		}
	}
}

// TestRegexCacheBounded checks that the shared regexp cache does not grow past its limit.
func TestRegexCacheBounded(t *testing.T) {
	for i := 0; i < reCacheLimit+500; i++ {
		if _, err := compileJSRegex(fmt.Sprintf("^/bounded/%d$", i), false); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	reCache.Range(func(any, any) bool { n++; return true })
	if n > reCacheLimit {
		t.Fatalf("regexp cache holds %d entries, limit %d", n, reCacheLimit)
	}
}
