package request

import "testing"

// FuzzPlainURL holds the one-pass reading of plain request targets to the full one.
func FuzzPlainURL(f *testing.F) {
	for _, s := range []string{"/", "/hello", "/a/b?x=1&y=2", "/a//b", "/a/./b", "/a/../b", "/.well-known", "/a.b/c.d",
		"/a?b#c", "/a?b c", "//host/x", "/\\x", "/a%2e/b", "/é", "/a b", "/a?", "/a?\t", "/api/v1/resource499/items"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, target []byte) {
		path, search, ok := plainURL(target, false)
		if !ok {
			return
		}
		wantPath, wantSearch := resolveURL(target, false)
		if path != wantPath || search != wantSearch {
			t.Fatalf("plainURL(%q) = %q, %q; resolveURL = %q, %q", target, path, search, wantPath, wantSearch)
		}
	})
}

func TestPlainURLTakesCommonTargets(t *testing.T) {
	for _, s := range []string{"/", "/hello", "/api/v1/resource499/items?x=1&y=2", "/a.json", "/a//b"} {
		if _, _, ok := plainURL([]byte(s), false); !ok {
			t.Errorf("plainURL(%q) left it to resolveURL", s)
		}
	}
}

// FuzzParseShortQuery holds the one-loop reading of short query strings to parseQuery.
func FuzzParseShortQuery(f *testing.F) {
	for _, s := range []string{"", "q=x", "a=1&b=2&a=3", "&&", "a&", "=", "==x", "a+b=c%20d", "%zz=%4", "q=é&x", "a=b=c", "+=+&%=%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > shortQuery {
			s = s[:shortQuery]
		}
		got, want := parseShortQuery(nil, s), parseQuery(nil, s)
		if len(got) != len(want) {
			t.Fatalf("parseShortQuery(%q) = %q, parseQuery = %q", s, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("parseShortQuery(%q) = %q, parseQuery = %q", s, got, want)
			}
		}
	})
}
