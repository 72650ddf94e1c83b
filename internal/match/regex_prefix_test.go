package match

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"

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
			full := jr.re
			if jr.exact != nil && kelvinOrLongS(in) {
				full = jr.exact // what runs on input holding the Kelvin sign or the long s
			}
			if got, want := jr.MatchString(in), full.MatchString(in); got != want {
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

// TestRegexLengthBounded: a pattern past MaxRegexLen is refused with an error naming the limit
// (a 10 MB predicate took 7 s and 1.4 GB to compile, and the cache kept it); the cache holds
// at most reCacheByteLimit bytes of sources, so long patterns cannot pile up in it.
func TestRegexLengthBounded(t *testing.T) {
	long := strings.Repeat("a", MaxRegexLen+1)
	if err := CheckRegex(long, false); err == nil || !strings.Contains(err.Error(), "more than mockd compiles") {
		t.Errorf("a pattern of %d characters: %v, want the limit's error", len(long), err)
	}
	// a character class of 64 Ki letters: long, and one instruction once compiled
	class := "[" + strings.Repeat("a", 64<<10) + "]"
	for i := 0; i < 2*reCacheByteLimit/len(class); i++ {
		if _, err := compileJSRegex(class+strconv.Itoa(i), false); err != nil {
			t.Fatal(err)
		}
		if b := reCacheBytes.Load(); b > reCacheByteLimit {
			t.Fatalf("the cache holds %d bytes of patterns, limit %d", b, reCacheByteLimit)
		}
	}
}

// TestECMAScriptFallback: patterns RE2 cannot run (lookaround, backreferences) run on the
// ECMAScript engine with JavaScript's meaning, in matches and in except.
func TestECMAScriptFallback(t *testing.T) {
	for _, tc := range []struct {
		pred  string
		paths map[string]bool
	}{
		{`{"matches":{"path":"^/users/(?!admin)\\w+$"}}`, map[string]bool{"/users/bob": true, "/users/admin": false, "/USERS/ADMIN": false}},
		{`{"matches":{"path":"(?<=/v)\\d+"}}`, map[string]bool{"/v2/x": true, "/2/x": false}},
		{`{"matches":{"path":"^/(\\w)\\1$"}}`, map[string]bool{"/aa": true, "/ab": false}},
		{`{"matches":{"path":"^/(?<c>\\w)\\k<c>$"}}`, map[string]bool{"/zz": true, "/zy": false}},
		{`{"matches":{"path":"^/(?=a)[A-Z]$"}, "caseSensitive":true}`, map[string]bool{"/a": false, "/A": false}},
		{`{"matches":{"path":"^/(?=a)[a-z]$"}}`, map[string]bool{"/A": true}},
		{`{"equals":{"path":"/users/"},"except":"\\d+(?=$)"}`, map[string]bool{"/users/42": true, "/users/4x": false}},
	} {
		set, err := Compile(decode(t, "[["+tc.pred+"]]"), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.pred, err)
		}
		for path, want := range tc.paths {
			r := &request.Request{Method: "GET", Path: path}
			if got, err := set.Find(r); err != nil || (got == 0) != want {
				t.Errorf("%s on %s: Find = %d, %v; want match %v", tc.pred, path, got, err, want)
			}
		}
	}
}

// TestECMAScriptTimeout: a pattern that backtracks catastrophically stops at MatchTimeout and
// counts as no match.
func TestECMAScriptTimeout(t *testing.T) {
	defer func(d time.Duration) { MatchTimeout = d }(MatchTimeout)
	MatchTimeout = 50 * time.Millisecond
	re, err := compileJSRegex(`^(\w+\s?)*(?!x)$`, false)
	if err != nil || re.ecma == nil {
		t.Fatalf("compile: %v (ECMAScript engine: %v)", err, re != nil && re.ecma != nil)
	}
	if re.MatchString(strings.Repeat("a", 40) + "!") {
		t.Error("a match that timed out counts as a match")
	}
}

// TestRegexCodeUnits: a pattern reads a character past the BMP as JavaScript without the u flag
// does, two UTF-16 code units (each case what node 20's RegExp.test gave).
func TestRegexCodeUnits(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		ic, want   bool
	}{
		{`^.$`, "😀", false, false},
		{`^..$`, "😀", false, true},
		{`^.$`, "é", false, true},
		{`😀`, "a😀b", false, true},
		{`^😀+$`, "😀😀", false, false},
		{`^[😀]$`, "😀", false, false},
		{`^[😀]{2}$`, "😀", false, true},
		{`^[^a]$`, "😀", false, false},
		{`^\S\S$`, "😀", false, true},
		{`^\uD83D`, "😀x", false, true},
		{`\uDE00$`, "x😀", false, true},
		{`^[\uD800-\uDBFF][\uDC00-\uDFFF]$`, "𝒜", false, true},
		{`😀*`, "x", false, false},
		{`^.{3}$`, "a😀", false, true},
		{`^.😀.$`, "a😀b", false, true},
		{`^(?:😀)$`, "😀", false, true},
		{`^\W+$`, "😀", false, true},
		{`^.$`, "😀", true, false},
		{`^😀$`, "😀", true, true},
		// Input holding the private characters units are written as is read as characters.
		{`^.$`, "\ue03d", false, true},
	} {
		re, err := compileJSRegex(tc.pattern, tc.ic)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := re.MatchString(tc.s); got != tc.want {
			t.Errorf("/%s/ on %q (ignore case %v): %v, want %v", tc.pattern, tc.s, tc.ic, got, tc.want)
		}
	}
}

// TestRegexCodeUnitsECMAScriptAndReplace: the ECMAScript engine's patterns (lookaround,
// backreferences) and except's replace read a character past the BMP as two UTF-16 code units,
// as JavaScript without the u flag does (each case what node 20's test and replace(/p/gi, "")
// gave; a lone surrogate left by replace is written as WTF-8).
func TestRegexCodeUnitsECMAScriptAndReplace(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		match      bool
		replaced   string
	}{
		{`^(?!x).$`, "😀", false, "😀"},
		{`^(?!x)..$`, "😀", true, ""},
		{`(.)\1`, "😀😀", false, "😀😀"},
		{`(?=.)\uDE00`, "a😀", true, "a\xed\xa0\xbd"},
		{`(?=\uD83D).`, "😀b", true, "\xed\xb8\x80b"},
		{`(?<=a).`, "a😀", true, "a\xed\xb8\x80"},
		{`(?=.)😀{2}`, "😀😀", false, "😀😀"},
		{`(?=.)😀`, "a😀", true, "a"},
		{`^.`, "😀😀", true, "\xed\xb8\x80😀"},
		{`.$`, "a😀", true, "a\xed\xa0\xbd"},
		{`\uD83D`, "a😀b", true, "a\xed\xb8\x80b"},
		{`[^a]`, "a😀b", true, "a"},
		{`😀+`, "😀\U0001F600", true, ""},
		{`.`, "😀", true, ""},
		{`^..$`, "😀", true, ""},
		{`b`, "😀b", true, "😀"},
	} {
		re, err := compileJSRegex(tc.pattern, true)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := re.MatchString(tc.s); got != tc.match {
			t.Errorf("/%s/i.test(%q) = %v, want %v", tc.pattern, tc.s, got, tc.match)
		}
		if got := re.ReplaceAllString(tc.s, ""); got != tc.replaced {
			t.Errorf("%q.replace(/%s/gi, '') = %q, want %q", tc.s, tc.pattern, got, tc.replaced)
		}
	}
	// A lone surrogate an except left is read as one code unit by the next pattern.
	re, err := compileJSRegex(`^\uDE00b$`, false)
	if err != nil {
		t.Fatal(err)
	}
	if !re.MatchString("\xed\xb8\x80b") {
		t.Error(`/^\uDE00b$/ does not match a lone low surrogate followed by b`)
	}
	re, err = compileJSRegex(`^(?=.).b$`, false)
	if err != nil {
		t.Fatal(err)
	}
	if !re.MatchString("\xed\xb8\x80b") {
		t.Error(`/^(?=.).b$/ does not match a lone low surrogate followed by b`)
	}
}

// TestUnitsRoundTrip: text written as code units and back is the same text.
func TestUnitsRoundTrip(t *testing.T) {
	for _, s := range []string{"", "abc", "😀", "a😀b𝒜", "\xed\xa0\xbd", "\xed\xb8\x80x", "é\u2028😀\xed\xa0\xbd"} {
		us, ok := toUnits(s)
		if !ok {
			t.Fatalf("toUnits(%q) refused", s)
		}
		if got := fromUnits(us); got != s {
			t.Errorf("fromUnits(toUnits(%q)) = %q", s, got)
		}
		if got := fromUTF16Runes(utf16Runes(s)); got != s {
			t.Errorf("fromUTF16Runes(utf16Runes(%q)) = %q", s, got)
		}
	}
}

// TestECMAScriptDots: the ECMAScript engine's patterns get each '.' outside a class as
// [^\n\r] (the same characters in regexp2, which folds a case-insensitive '.' character by
// character, ~35 ms each), and match as they did.
func TestECMAScriptDots(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`^(?!x).$`, `^(?!x)[^\n\r]$`},
		{`(.)\1.*`, `([^\n\r])\1[^\n\r]*`},
		{`\.[.]\\.`, `\.[.]\\[^\n\r]`},
		{`[\].].[^.].`, `[\].][^\n\r][^.][^\n\r]`},
		{`[].[^].`, `[][^\n\r][^][^\n\r]`},
		{`(?<n>.)(?<=a.)\k<n>`, `(?<n>[^\n\r])(?<=a[^\n\r])\k<n>`},
		{`(?s).`, `(?s).`},
		{`(?i:.)`, `(?i:.)`},
		{`\c.`, `\c.`},
		{`é.`, `é[^\n\r]`},
		{`abc`, `abc`},
	} {
		if got := ecmaDots(tc.src); got != tc.want {
			t.Errorf("ecmaDots(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
	inputs := []string{"", "a", "A", "\n", "\r", "\u2028", "K", "\u212a", "ſ", "😀", "ab", "a\nb", "xx", "x.", "aa", "a]b"}
	// Four shapes: regexp2 folds each '.' of the untranslated patterns for ever so long (3 s of
	// a -race run for eight).
	for _, src := range []string{`^(?!x).$`, `(.)\1`, `(?<=a).{2}`, `[.\]].\]`} {
		for _, ic := range []bool{false, true} {
			opts := regexp2.ECMAScript
			if ic {
				opts |= regexp2.IgnoreCase
			}
			plain := regexp2.MustCompile(src, opts)
			re, err := compileECMAScript(src, ic)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range inputs {
				want, _ := plain.MatchString(in)
				if got, _ := re.MatchString(in); got != want {
					t.Errorf("/%s/ (ignore case %v) on %q: %v, want %v", src, ic, in, got, want)
				}
			}
		}
	}
}
