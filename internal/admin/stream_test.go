package admin

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestLargeAnswersAreStreamed: an answer larger than renderWhole (stubs nested deep, each
// taken, printed together) is streamed, byte for byte what rendering it whole makes, and is
// never kept; a small one is sent with its length, as before.
func TestLargeAnswersAreStreamed(t *testing.T) {
	a, small := newTestAPI(t, Options{Port: 2525})
	c := inmemClient(t, a, nil)
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	stub := func(d int) string { return `{"responses":[{"is":{"body":` + deep(d) + `}}]}` }
	created, err := do(t, c, "POST", "/imposters", `{"protocol":"http","stubs":[`+stub(1000)+`,`+stub(900)+`]}`)
	if err != nil || created.status != 201 {
		t.Fatalf("%v %d %.200s", err, created.status, created.body)
	}
	im := a.reg.Listing().Imposters[0]
	if im == small {
		im = a.reg.Listing().Imposters[1]
	}
	port := im.Port()
	self := "/imposters/" + strconv.Itoa(port)
	stubs, err := do(t, c, "POST", self+"/stubs", `{"stub":`+stub(1100)+`}`)
	if err != nil || stubs.status != 200 {
		t.Fatalf("%v %d %.200s", err, stubs.status, stubs.body)
	}
	base := PrintOptions{BaseURL: "http://localhost:2525"}
	whole := func(opts PrintOptions) string { return string(config.AppendJSON(nil, printImposter(im, opts), 2)) }
	list := func(opts PrintOptions) string {
		return string(config.AppendJSON(nil, config.NewObject("imposters", a.render(a.reg.Listing().Imposters, opts)), 2))
	}
	streamed := func(what string, got answer, want string) {
		t.Helper()
		if len(want) <= renderWhole {
			t.Fatalf("%s: %d bytes, not large enough to stream", what, len(want))
		}
		if got.status != 200 || got.body != want {
			t.Fatalf("%s: %d, %d bytes, want %d:\n got %.300s\nwant %.300s", what, got.status, len(got.body), len(want), got.body, want)
		}
		if _, ok := got.headers["Content-Length"]; ok {
			t.Errorf("%s: sent with its length, not streamed", what)
		}
	}
	streamed("POST stubs", stubs, whole(base))
	for _, q := range []string{"", "?replayable=true", "?removeProxies=true", "?explain=true"} {
		opts := PrintOptions{BaseURL: base.BaseURL, Replayable: q == "?replayable=true", RemoveProxies: q == "?removeProxies=true", Explain: q == "?explain=true"}
		got, err := do(t, c, "GET", self+q, "")
		if err != nil {
			t.Fatal(err)
		}
		streamed("GET "+self+q, got, whole(opts))
		if body := a.formatted(im, opts); body != nil {
			t.Errorf("GET %s%s: a %d-byte rendering kept", self, q, len(body))
		}
		if q == "?explain=true" {
			continue
		}
		opts.Explain = false
		got, err = do(t, c, "GET", "/imposters"+q, "")
		if err != nil {
			t.Fatal(err)
		}
		if q == "" { // the short list: small
			if got.body != string(a.formattedListBody(t, PrintOptions{BaseURL: base.BaseURL, List: true})) {
				t.Errorf("GET /imposters: %.300s", got.body)
			}
			continue
		}
		streamed("GET /imposters"+q, got, list(opts))
	}
	got, err := do(t, c, "GET", "/imposters/"+strconv.Itoa(small.Port()), "")
	want := string(config.AppendJSON(nil, printImposter(small, base), 2))
	if err != nil || got.status != 200 || got.headers["Content-Length"] != strconv.Itoa(len(want)) || got.body != want {
		t.Fatalf("small imposter: %v %d %v %.300s", err, got.status, got.headers, got.body)
	}
	deleted, err := do(t, c, "DELETE", self, "")
	if err != nil {
		t.Fatal(err)
	}
	if deleted.status != 200 || !bytes.Equal([]byte(deleted.body), []byte(stubs.body)) {
		t.Fatalf("DELETE: %d, %d bytes, want the %d of the last answer", deleted.status, len(deleted.body), len(stubs.body))
	}
}

// formattedListBody is formattedList's body, which must be rendered whole.
func (a *API) formattedListBody(t *testing.T, opts PrintOptions) []byte {
	t.Helper()
	body, _ := a.formattedList(opts)
	if body == nil {
		t.Fatal("list streamed")
	}
	return body
}
