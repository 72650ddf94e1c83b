package imposter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

// answerText is an http answer as the connection writes it: status (or the error it fails
// with), header lines, body.
func answerText(a Answer, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	status, serr := a.Status()
	if serr != nil {
		return "status error: " + serr.Error()
	}
	s := strconv.Itoa(status) + "\n"
	for i := range a.NumHeaders() {
		name, value, first := a.WireHeader(i)
		s += fmt.Sprintf("%s: %s (%t)\n", name, value, first)
	}
	return s + "\n" + string(a.Body())
}

// buildBoth builds the answer of def's first stub for the raw request by the bodyOnly route and
// by the general one (the template's object rendered and compiled), as the handler does, and
// returns each as answerText reads it, and whether the bodyOnly route served it.
func buildBoth(t testing.TB, def, raw string) (fast, general string, routed bool) {
	t.Helper()
	defer func() { bodyRendered = true }()
	for _, on := range []bool{true, false} {
		bodyRendered = on
		im, err := New(impostertest.Def(t, def), Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		req := request.Acquire()
		request.FromHTTP(impostertest.RequestCtx(t, raw), req)
		a := im.Resolve(req)
		if on {
			is, _ := a.resp.(*isResponse)
			routed = is != nil && is.bodyOnly
		}
		err = im.Build(context.Background(), req, nil, nil, &a)
		text := answerText(a, err)
		if err == nil {
			if on && routed && (req.Holds(a.Body()) || len(a.Body()) > 0 && a.box.holds(a.Body()) && !a.MustCopyBody()) {
				t.Errorf("the answer's body is the request's memory, or the box's not copied")
			}
			im.Done(&a)
		}
		request.Release(req)
		if on {
			fast = text
		} else {
			general = text
		}
	}
	return fast, general, routed
}

// templateImposter is an imposter whose one stub answers is (a JSON object's members) with
// template: true, and whose defaultResponse is def (members, or "").
func templateImposter(is, def string) string {
	d := ""
	if def != "" {
		d = `"defaultResponse":{` + def + `},`
	}
	return `{"protocol":"http","port":4545,` + d + `"stubs":[{"responses":[{"is":{"template":true,` + is + `}}]}]}`
}

// TestBodyOnlyTemplateRoute compares the answers of templates whose only template is the body's
// text, built straight into the answer's buffer, with the general route's: status, header lines
// (the configured ones, the defaultResponse's), the body (empty, which the defaultResponse's
// body replaces; text past ASCII; a render error); and checks which responses take the route.
func TestBodyOnlyTemplateRoute(t *testing.T) {
	raw := "POST /users/42?q=x&q=y HTTP/1.1\r\nHost: x\r\nX-Trace: t-1\r\nContent-Type: application/json\r\nContent-Length: 29\r\n\r\n{\"name\":\"Ada\",\"tags\":[1,2,3]}"
	body := `"body":` + strconv.Quote(`{"id":"{{request.path.[1]}}","q":"{{request.query.q}}","trace":"{{request.headers.X-Trace}}","name":"{{jsonPath request.body '$.name'}}","method":"{{request.method}}"}`)
	for _, c := range []struct {
		name, is, def string
		routed        bool
	}{
		{"bench", `"statusCode":200,"headers":{"Content-Type":"application/json"},` + body, "", true},
		{"no headers", body, "", true},
		{"default headers and status", body, `"statusCode":201,"headers":{"X-D":"d","Content-Length":"3"}`, true},
		{"status of its own", `"statusCode":"404",` + body, `"statusCode":201`, true},
		{"bad status", `"statusCode":"abc",` + body, "", true},
		{"header lines", `"headers":{"A":["1","2"],"Connection":"close","Content-Length":"99","b":"é","bad name":"x"},` + body, "", true},
		{"empty text", `"body":"{{request.query.none}}"`, `"body":"the default"`, true},
		{"empty text, no default", `"body":"{{request.query.none}}"`, "", true},
		{"empty text, default object", `"body":"{{request.query.none}}"`, `"body":{"a":1}`, true},
		{"text past ascii", `"body":"é{{request.path}}€"`, "", true},
		{"escaped", `"body":"{{request.headers.content-type}} {{{request.body}}} {{request.body}}"`, "", true},
		{"helper fails", `"body":"{{regexExtract request.path 'zzz'}}"`, "", true},
		{"text mode", `"_mode":"text","body":"{{request.method}}"`, `"_mode":"binary"`, true},
		{"default binary", `"body":"{{request.method}}"`, `"_mode":"binary"`, false},
		{"object body", `"body":{"m":"{{request.method}}"}`, "", false},
		{"header template", `"headers":{"X":"{{request.method}}"},"body":"{{request.method}}"`, "", false},
		{"static body", `"body":"plain"`, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fast, general, routed := buildBoth(t, templateImposter(c.is, c.def), raw)
			if routed != c.routed {
				t.Errorf("routed %t, want %t", routed, c.routed)
			}
			if fast != general {
				t.Errorf("bodyOnly route:\n%s\ngeneral route:\n%s", fast, general)
			}
		})
	}
}

// FuzzBodyOnlyTemplateRoute checks that any body template, on any request, answers the same by
// the bodyOnly route and the general one.
func FuzzBodyOnlyTemplateRoute(f *testing.F) {
	f.Add(`{"id":"{{request.path.[1]}}","name":"{{jsonPath request.body '$.name'}}"}`, "/users/42?q=x", `{"name":"Ada"}`, `"statusCode":201`)
	f.Add(`{{request.query.none}}`, "/", "", `"body":"d"`)
	f.Add(`{{#each request.query}}{{@key}}={{this}};{{/each}}`, "/a?x=1&x=2&y=%41", "", "")
	f.Add(`{{xPath request.body '//a'}}`, "/x", "<a>1</a>", `"_mode":"text"`)
	f.Fuzz(func(t *testing.T, tpl, target, body, def string) {
		if !json.Valid([]byte("{"+def+"}")) || len(target) == 0 || target[0] != '/' {
			return
		}
		for _, c := range target + body {
			if c < ' ' || c == 0x7f {
				return
			}
		}
		raw := "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		var fr fasthttp.Request
		fr.Header.DisableNormalizing()
		if fr.Read(bufio.NewReader(strings.NewReader(raw))) != nil {
			return
		}
		imp := templateImposter(`"body":`+strconv.Quote(tpl), def)
		v, err := config.ParseJSON([]byte(imp))
		if err != nil {
			return
		}
		d, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
		if len(errs) > 0 {
			return
		}
		if _, err := New(d, Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
			return
		}
		fast, general, _ := buildBoth(t, imp, raw)
		if fast != general {
			t.Errorf("template %q on %q %q: bodyOnly route:\n%s\ngeneral route:\n%s", tpl, target, body, fast, general)
		}
	})
}

// TestBodyOnlyBoxKeptWithRequest: a bodyOnly answer's box is kept with its pooled request from
// one answer to the next (Done leaves it there, not in the pool), each answer renders its own
// body, and a request that keeps a script's slab takes a box from the pool instead.
func TestBodyOnlyBoxKeptWithRequest(t *testing.T) {
	im, err := New(impostertest.Def(t, templateImposter(`"body":"{{request.path.[0]}}"`, "")), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	req := &request.Request{}
	var first *wireBox
	for i, p := range []string{"a", "bb", "c"} {
		req.Reset()
		request.FromHTTP(impostertest.RequestCtx(t, "GET /"+p+" HTTP/1.1\r\nHost: x\r\n\r\n"), req)
		a := im.Resolve(req)
		if err := im.Build(context.Background(), req, nil, nil, &a); err != nil {
			t.Fatal(err)
		}
		if string(a.Body()) != p || !a.MustCopyBody() {
			t.Errorf("answer %d: body %q (copied %t), want %q copied", i, a.Body(), a.MustCopyBody(), p)
		}
		if first == nil {
			first = a.box
		}
		if a.box != first || !a.box.kept || *req.Kept() != any(first) {
			t.Errorf("answer %d: box %p (kept %t), want the request's %p", i, a.box, a.box.kept, first)
		}
		im.Done(&a)
	}
	script.AttachSlab(req) // the request now keeps a slab (request.Kept)
	req.Reset()
	request.FromHTTP(impostertest.RequestCtx(t, "GET /d HTTP/1.1\r\nHost: x\r\n\r\n"), req)
	a := im.Resolve(req)
	if err := im.Build(context.Background(), req, nil, nil, &a); err != nil {
		t.Fatal(err)
	}
	if string(a.Body()) != "d" || a.box == first || a.box.kept {
		t.Errorf("with a slab kept: body %q, box %p (kept %t), want a pool's box", a.Body(), a.box, a.box.kept)
	}
	im.Done(&a)
}
