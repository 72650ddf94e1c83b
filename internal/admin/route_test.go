package admin

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestPlainRoute: the paths plainRoute takes are routed as expressPathOf routes them, and it
// leaves every other path to expressPathOf (empty segments, a case to fold, escapes, names,
// a query).
func TestPlainRoute(t *testing.T) {
	for _, tt := range []struct {
		path  string
		plain bool
	}{
		{"/imposters", true},
		{"/imposters/", true},
		{"/imposters/4545", true},
		{"/imposters/4545/", true},
		{"/imposters/4545/stubs/0", true},
		{"/imposters/4545/_requests", true},
		{"/imposters/4545/savedRequests", false}, // a route word with capitals: found by its lower case
		{"/config", true},
		{"/logs", true},
		{"/x", false},
		{"/", false},
		{"//", false},
		{"///", false},
		{"//imposters", false},
		{"/imposters//", false},
		{"/imposters//4545", false},
		{"/IMPOSTERS", false},
		{"/Imposters/4545", false},
		{"/imp%6fsters", false},
		{"/imposters/45%34", false},
		{"/imposters/4545?replayable=true", true}, // the query is not in the path
		{"/imposters/12a", false},
		{"/imposters/4545/stubs/-1", false},
		{"/imposters/4545/stubs/0/", true},
		{"/imposters/4545/stubs/0//", false},
		{"imposters", false},
		{"*", false},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI(tt.path)
		raw := ctx.URI().PathOriginal()
		got, ok := plainRoute(raw)
		if ok != tt.plain {
			t.Errorf("%q (%q): plain %v, want %v", tt.path, raw, ok, tt.plain)
		}
		want, routable, malformed := expressPathOf(&ctx)
		if ok && (got != want || !routable || malformed) {
			t.Errorf("%q: plainRoute %q, expressPathOf %q (routable %v, malformed %v)", tt.path, got, want, routable, malformed)
		}
		p, r, m := expressPath(&ctx)
		if p != want || r != routable || m != malformed {
			t.Errorf("%q: expressPath %q %v %v, expressPathOf %q %v %v", tt.path, p, r, m, want, routable, malformed)
		}
	}
}

// FuzzPlainRoute: whatever the path, expressPath routes as expressPathOf does.
func FuzzPlainRoute(f *testing.F) {
	for _, s := range []string{"/imposters", "/imposters/4545/stubs/0/", "//", "/imposters//", "/IMPOSTERS/1", "/_requests/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI(path)
		want, routable, malformed := expressPathOf(&ctx)
		if p, r, m := expressPath(&ctx); p != want || r != routable || m != malformed {
			t.Errorf("%q: expressPath %q %v %v, expressPathOf %q %v %v", path, p, r, m, want, routable, malformed)
		}
	})
}

// BenchmarkExpressPath routes the paths of an admin-pairs client (POST /imposters, DELETE
// /imposters/:port) and one that needs the full route (a capital, an escape).
func BenchmarkExpressPath(b *testing.B) {
	for _, path := range []string{"/imposters", "/imposters/4545", "/Imposters/45%34"} {
		b.Run(path, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("DELETE")
			ctx.Request.SetRequestURI(path)
			b.ReportAllocs()
			for b.Loop() {
				if p, ok, _ := expressPath(&ctx); !ok || p == "" {
					b.Fatal(p)
				}
			}
		})
	}
}
