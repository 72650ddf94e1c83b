package admin

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/request"
)

// printCases are imposters whose JSON takes each branch of printStubs: every protocol, the
// members shown only when truthy, stubs kept as text and as trees (recorded proxy answers),
// stubs with keys printStubs sets itself, proxies to drop, a journal.
var printCases = []string{
	`{"protocol":"http","port":4545,"host":"127.0.0.1","stubs":[{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`,
	`{"protocol":"http"}`,
	`{"protocol":"http","stubs":[]}`,
	`{"protocol":"http","stubs":[{"responses":[{"is":{}}]}]}`,
	`{"protocol":"http","stubs":[{"responses":[{"proxy":{"to":"http://127.0.0.1:9"}}]},{"responses":[{"is":{"body":"b"}}]},{"responses":[{"proxy":{"to":"http://127.0.0.1:9"}}]}]}`,
	`{"protocol":"http","name":"users","recordRequests":true,"defaultResponse":{"statusCode":404,"body":{"a":[1,2,{"b":null}],"e":{},"l":[]}},"stubs":[{"responses":[{"is":{"body":"x\"y\\z\u0001"}}]}]}`,
	`{"protocol":"http","name":42,"defaultResponse":{},"stubs":[{"responses":[{"proxy":{"to":"http://127.0.0.1:9","mode":"proxyOnce"}}]},{"responses":[{"is":{"body":"a"}},{"proxy":{"to":"http://127.0.0.1:9"}}]}]}`,
	`{"protocol":"http","name":"","defaultResponse":0,"stubs":[{"responses":[{"is":{"body":"a","_proxyResponseTime":12}}]}]}`,
	`{"protocol":"http","stubs":[{"responses":[{"is":{"body":"a"}}],"matches":[1],"_links":{"x":1},"hits":3}]}`,
	`{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]},{"responses":[{"is":{"statusCode":201}}]}]}`,
	`{"protocol":"https","stubs":[{"responses":[{"is":{"body":"s"}}]}]}`,
	`{"protocol":"https","mutualAuth":true,"rejectUnauthorized":1,"ca":"c","ciphers":"ecdhe","key":"k","cert":["c1","c2"],"name":"tls"}`,
	`{"protocol":"tcp","mode":"binary","endOfRequestResolver":{"inject":"function(){return true}"},"stubs":[{"responses":[{"is":{"data":"AAEC"}}]}]}`,
	`{"protocol":"tcp","stubs":[{"predicates":[{"contains":{"data":"x"}}],"responses":[{"is":{"data":"y"}}]}]}`,
	`{"protocol":"smtp","recordRequests":true}`,
}

// printOptionsAll are every combination of the options printStubs reads.
func printOptionsAll() []PrintOptions {
	var all []PrintOptions
	for bits := range 32 {
		all = append(all, PrintOptions{BaseURL: []string{"http://localhost:2525", "https://h\"x:1"}[bits>>4&1],
			List: bits&1 != 0, Replayable: bits&2 != 0, RemoveProxies: bits&4 != 0, Explain: bits&8 != 0})
	}
	return all
}

// TestAppendImposterPrintsAsPrintStubs compares the direct printer with the generic tree
// printed by config.AppendJSON for every case and option, before and after requests (counted,
// recorded, with --debug matches).
func TestAppendImposterPrintsAsPrintStubs(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	for _, src := range printCases {
		for _, debug := range []bool{false, true} {
			im := newPrintCase(t, src, imposter.Options{Logger: quiet, Debug: debug})
			if im == nil {
				t.Fatalf("%s: refused", src)
			}
			comparePrinters(t, im, src)
			for _, path := range []string{"/health", "/a", "/"} {
				a := im.Resolve(&request.Request{Method: "GET", Path: path, Body: "x"})
				im.RecordMatch(&a)
			}
			comparePrinters(t, im, src+" (after requests)")
		}
	}
}

// newPrintCase is the imposter of src, not started, or nil when src is not one.
func newPrintCase(tb testing.TB, src string, opts imposter.Options) *imposter.Imposter {
	v, err := config.ParseJSON([]byte(src))
	if err != nil {
		return nil
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		return nil
	}
	im, err := imposter.New(def, opts)
	if err != nil {
		return nil
	}
	return im
}

func comparePrinters(t *testing.T, im *imposter.Imposter, what string) {
	t.Helper()
	for _, opts := range printOptionsAll() {
		want := config.AppendJSON(nil, printImposter(im, opts), 2)
		got := appendPrinted([]byte("x"), im, opts)
		if !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("%s %+v:\n got: %s\nwant: %s", what, opts, got, want)
		}
		// Again: the stubs' heads kept by the first (see stubHead) are written this time.
		if got := appendPrinted([]byte("x"), im, opts); !bytes.Equal(got[1:], want) {
			t.Fatalf("%s %+v, printed again:\n got: %s\nwant: %s", what, opts, got, want)
		}
		if got := streamPrinted(t, im, opts); !bytes.Equal(got, want) {
			t.Fatalf("%s %+v, streamed:\n got: %s\nwant: %s", what, opts, got, want)
		}
	}
}

// streamPrinted is appendPrinted's text as appendImposter writes it to a config.Chunker.
func streamPrinted(t *testing.T, im *imposter.Imposter, opts PrintOptions) []byte {
	var w bytes.Buffer
	stubs, reqs := printed(im, opts)
	c := &config.Chunker{W: &w}
	if err := c.Finish(appendImposter(nil, im, stubs, reqs, opts, c)); err != nil {
		t.Fatal(err)
	}
	return w.Bytes()
}

// FuzzAppendImposter: the direct printer writes what printStubs's tree prints, for any
// imposter a body defines and any options.
func FuzzAppendImposter(f *testing.F) {
	for i, src := range printCases {
		f.Add(src, uint8(i))
	}
	quiet := slog.New(slog.DiscardHandler)
	all := printOptionsAll()
	f.Fuzz(func(t *testing.T, src string, bits uint8) {
		if len(src) > 4096 {
			return
		}
		im := newPrintCase(t, src, imposter.Options{Logger: quiet, Debug: bits&0x80 != 0})
		if im == nil {
			return
		}
		if bits&0x40 != 0 {
			a := im.Resolve(&request.Request{Method: "GET", Path: "/"})
			im.RecordMatch(&a)
		}
		opts := all[int(bits)%len(all)]
		want := config.AppendJSON(nil, printImposter(im, opts), 2)
		// Twice: after the last input's stubs' heads were kept, then after this one's.
		for range 2 {
			if got := appendPrinted(nil, im, opts); !bytes.Equal(got, want) {
				t.Fatalf("%+v:\n got: %s\nwant: %s", opts, got, want)
			}
		}
		if got := streamPrinted(t, im, opts); !bytes.Equal(got, want) {
			t.Fatalf("%+v, streamed:\n got: %s\nwant: %s", opts, got, want)
		}
	})
}

// TestStubHeadKeptForTheSameText: an imposter printed (not replayable) keeps its stubs' heads,
// and another imposter of the same stubs' text is printed from them, byte for byte as the
// tree prints it; a stub of another text, or other options, is not.
func TestStubHeadKeptForTheSameText(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	src := `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"a"}}]},{"responses":[{"is":{"statusCode":201}}]}]}`
	other := `{"protocol":"http","stubs":[{"predicates":[{"equals":{"path":"/b"}}],"responses":[{"is":{"body":"a"}}]},{"responses":[{"is":{"statusCode":201}}]}]}`
	opts := PrintOptions{BaseURL: "http://localhost:2525"}
	first := newPrintCase(t, src, imposter.Options{Logger: quiet})
	appendPrinted(nil, first, opts)
	second, third := newPrintCase(t, src, imposter.Options{Logger: quiet}), newPrintCase(t, other, imposter.Options{Logger: quiet})
	for i := range 2 {
		if keptStubHead(second.Stubs(true), i, opts) == nil {
			t.Fatalf("stub %d of the same text: no head kept", i)
		}
	}
	if keptStubHead(third.Stubs(true), 0, opts) != nil {
		t.Fatal("a stub of another text: a head kept for it")
	}
	if keptStubHead(second.Stubs(true), 0, PrintOptions{BaseURL: opts.BaseURL, Explain: true}) != nil {
		t.Fatal("other options: a head kept for them")
	}
	for _, im := range []*imposter.Imposter{second, third, second} {
		want := config.AppendJSON(nil, printImposter(im, opts), 2)
		if got := appendPrinted(nil, im, opts); !bytes.Equal(got, want) {
			t.Fatalf("got: %s\nwant: %s", got, want)
		}
	}
}
