package match

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// TestFindByPath: an index of literal paths only (findByPath: case-sensitive and -insensitive
// buckets merged, settled and unsettled stubs, paths in and out of lowercase ASCII) picks the
// stub the plain scan and the reference pick.
func TestFindByPath(t *testing.T) {
	plainOnly(t)
	rng := rand.New(rand.NewSource(26))
	paths := []string{"/a", "/A", "/b", "/a/b", "/é", "/É", "/users/42", "/Users/42", "/a-very-long-path/of/more/than/8", "/A-VERY-long-path/of/more/than/8", "/k", "/K"}
	methods := []string{"GET", "get", "POST", "Delete", "k"}
	pathsOnly, fast, few, many := 0, 0, 0, 0 // few, many: sets of paths listed (listFew) or not
	for round := 0; round < 600; round++ {
		var stubs [][]any
		for i := 1 + rng.Intn(12); i > 0; i-- {
			exp := map[string]any{"path": paths[rng.Intn(len(paths))]}
			if rng.Intn(2) == 0 {
				exp["method"] = methods[rng.Intn(len(methods))]
			}
			if rng.Intn(5) == 0 {
				exp["query"] = map[string]any{"q": "1"} // not settled: the predicate runs
			}
			p := map[string]any{[]string{"equals", "deepEquals"}[rng.Intn(2)]: exp}
			if rng.Intn(3) == 0 {
				p["caseSensitive"] = true
			}
			preds := []any{p}
			if rng.Intn(6) == 0 {
				preds = append(preds, map[string]any{"startsWith": map[string]any{"method": "G"}})
			}
			stubs = append(stubs, preds)
		}
		s, err := Compile(stubs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !s.idx.pathsOnly {
			continue
		}
		pathsOnly++
		if s.idx.pathCSFew != nil || s.idx.pathCIFew != nil {
			few++
		}
		if len(s.idx.pathCS) > fewPaths || len(s.idx.pathCI) > fewPaths {
			many++
		}
		for k := 0; k < 12; k++ {
			r := &request.Request{Method: methods[rng.Intn(len(methods))], Path: paths[rng.Intn(len(paths))]}
			if rng.Intn(3) == 0 {
				r.Query = []request.KV{{Name: "q", Value: "1"}}
			}
			if len(s.idx.pathCI) == 0 || isLowerASCII(r.Path) {
				fast++
			}
			got, gerr := s.Find(r)
			want, werr := scanParsed(s, r)
			ref, rerr := plainFind(s, r)
			if got != want || (gerr == nil) != (werr == nil) || !sameAnswer(got, gerr, ref, rerr) {
				b, _ := json.Marshal(stubs)
				t.Fatalf("Find(%s %s) = %d, %v; scan = %d, %v; reference = %d, %v\nstubs %s", r.Method, r.Path, got, gerr, want, werr, ref, rerr, b)
			}
		}
	}
	if pathsOnly < 300 || fast < 2000 || few < 100 || many < 100 {
		t.Errorf("only %d sets of paths only (%d with their paths listed, %d not), %d requests found by path", pathsOnly, few, many, fast)
	}
}

// TestLowerASCII: the case checks findByPath and decide use.
func TestLowerASCII(t *testing.T) {
	for _, s := range []string{"", "/", "/users/42", "/Users/42", "/a-very-long-path/of/more", "/a-very-long-path/of/morE",
		"/a-very-long-pAth", "@[`{", "/é", "abcdefgh\x80", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "post", "POST", "k"} {
		checkLowerASCII(t, s, "post")
	}
	// equalLowerASCII reads eight bytes at a time: capitals and their neighbours ('@' '['
	// '`' '{') at every place of a word, a difference or a byte past ASCII in a later word.
	for _, s := range []string{"@ABCDEFGHIJKLMNOPQRSTUVWXYZ[`az{\x00\x7f", "\x00\x00\x00\x0bGET user 42",
		"ABCDEFGH\x80", "ABCDEFGHIJKLMNO\u212a", "\u212aABCDEFGH", "ABCDEFGhijklmnop"} {
		l := jsvalue.ToLower(s)
		checkLowerASCII(t, s, l)
		for i := range len(l) {
			for _, c := range []byte{l[i] ^ 0x20, l[i] + 1, l[i] - 1, 0x80} {
				b := []byte(l)
				b[i] = c
				checkLowerASCII(t, s, string(b))
			}
		}
	}
}

func FuzzLowerASCII(f *testing.F) {
	f.Add("/users/42", "post")
	f.Add("/a-very-long-pAth", "get")
	f.Add("K", "k")
	f.Fuzz(func(t *testing.T, s, lower string) {
		checkLowerASCII(t, s, lower)
		checkLowerASCII(t, s, jsvalue.ToLower(s))
	})
}

func checkLowerASCII(t *testing.T, s, lower string) {
	t.Helper()
	ascii := true
	for i := 0; i < len(s); i++ {
		ascii = ascii && s[i] < 0x80
	}
	if got, want := isLowerASCII(s), ascii && strings.ToLower(s) == s; got != want {
		t.Errorf("isLowerASCII(%q) = %v, want %v", s, got, want)
	}
	eq, sure := equalLowerASCII(s, lower)
	if ascii && !sure || sure && eq != (jsvalue.ToLower(s) == lower) {
		t.Errorf("equalLowerASCII(%q, %q) = %v, %v; want %v (ASCII %v)", s, lower, eq, sure, jsvalue.ToLower(s) == lower, ascii)
	}
}

// TestPathsOnlyWithStubsAfter: stubs always a candidate (no predicates, a predicate the index
// cannot file) after every stub filed under a path keep the path-only search; one before them
// does not. Either way Find answers what a scan of every stub answers.
func TestPathsOnlyWithStubsAfter(t *testing.T) {
	recorded := `[{"deepEquals":{"method":"GET"}},{"deepEquals":{"path":"/orders/7"}}]`
	for _, tc := range []struct {
		name      string
		stubs     string
		pathsOnly bool
	}{
		{"proxyOnce recorded, proxy after", `[` + recorded + `, []]`, true},
		{"catch-alls after", `[[{"equals":{"path":"/a"}}], ` + recorded + `, [{"contains":{"body":"x"}}], []]`, true},
		{"case-sensitive paths, catch-all after", `[[{"equals":{"path":"/A"},"caseSensitive":true}], [{"equals":{"path":"/orders/7"}}], [{"startsWith":{"path":"/o"}}]]`, true},
		{"catch-all first", `[[], ` + recorded + `]`, false},
		{"catch-all between", `[[{"equals":{"path":"/a"}}], [{"contains":{"body":"x"}}], ` + recorded + `]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stubs [][]any
			if err := json.Unmarshal([]byte(tc.stubs), &stubs); err != nil {
				t.Fatal(err)
			}
			s, err := Compile(stubs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.idx.pathsOnly != tc.pathsOnly {
				t.Errorf("pathsOnly = %v, want %v", s.idx.pathsOnly, tc.pathsOnly)
			}
			for _, method := range []string{"GET", "PUT"} {
				for _, path := range []string{"/orders/7", "/Orders/7", "/a", "/A", "/o", "/z"} {
					for _, body := range []string{"", "x"} {
						r := &request.Request{Method: method, Path: path, Body: body}
						got, gerr := s.Find(r)
						want, werr := scanParsed(s, r)
						if got != want || gerr != nil || werr != nil {
							t.Errorf("%s %s %q: Find = %d, %v; scan = %d, %v", method, path, body, got, gerr, want, werr)
						}
					}
				}
			}
		})
	}
}
