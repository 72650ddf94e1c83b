package metrics

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestInstantSince checks that an Instant measures elapsed time: never less than what passed.
func TestInstantSince(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
		start := Now()
		time.Sleep(wait)
		if got := start.Since(); got < wait.Seconds() {
			t.Errorf("after sleeping %v: Since() = %v s, want at least %v s", wait, got, wait.Seconds())
		}
	}
	if a, b := Now(), Now(); b < a {
		t.Errorf("Now went backwards: %d then %d", a, b)
	}
}

// TestSeriesShownOnceUsed checks that an imposter's series appear only once they have counted
// something, as Mountebank's do, and leave with the imposter.
func TestSeriesShownOnceUsed(t *testing.T) {
	r := New()
	m := r.ForImposter("[http:4545] ")
	shown := func() map[string]bool {
		out := map[string]bool{}
		for _, line := range strings.Split(string(r.Text()), "\n") {
			if name, ok := strings.CutPrefix(line, "# TYPE mb_"); ok {
				out["mb_"+strings.Fields(name)[0]] = true
			}
		}
		return out
	}
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, nil},
		{func() {
			m.Requests.Inc()
			m.MatchDuration.Observe(0)
			m.RespDuration.Observe(0)
		}, []string{"mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{func() { m.NoMatch.Inc() }, []string{"mb_no_match_total", "mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{func() { m.Blocked.Inc() }, []string{"mb_blocked_ip_total", "mb_no_match_total", "mb_predicate_match_duration_seconds", "mb_request_total", "mb_response_generation_duration_seconds"}},
		{m.Remove, nil},
	}
	for i, st := range steps {
		st.do()
		got := shown()
		var names []string
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, st.want) {
			t.Errorf("step %d: series shown %v, want %v", i, names, st.want)
		}
	}
}

// TestText checks the text format of each kind of metric: a counter, a histogram's cumulative
// buckets with its sum and count, label values escaped, families and series in name order, and
// the Go and process metrics Prometheus' client writes.
func TestText(t *testing.T) {
	r := New()
	a := r.ForImposter("[http:1 \"q\"\\] ")
	b := r.ForImposter("[http:2] ")
	for _, v := range []float64{0.005, 0.01, 0.3, 7, 100} {
		b.RespDuration.Observe(v)
	}
	b.Requests.Inc()
	a.Requests.Inc()
	a.Requests.Inc()
	r.ObserveStore("save", 0.001, nil)
	r.ObserveStore("save", 0.001, io.EOF)
	text := string(r.Text())
	for _, want := range []string{
		"# HELP mb_request_total Number of requests to the imposter\n# TYPE mb_request_total counter\n" +
			`mb_request_total{imposter="[http:1 \"q\"\\] "} 2` + "\n" + `mb_request_total{imposter="[http:2] "} 1` + "\n",
		"# TYPE mb_response_generation_duration_seconds histogram\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="0.01"} 2` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="0.05"} 2` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="0.1"} 2` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="0.2"} 2` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="0.5"} 3` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="1"} 3` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="3"} 3` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="5"} 3` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="10"} 4` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="30"} 4` + "\n" +
			`mb_response_generation_duration_seconds_bucket{imposter="[http:2] ",le="+Inf"} 5` + "\n" +
			`mb_response_generation_duration_seconds_sum{imposter="[http:2] "} 107.315` + "\n" +
			`mb_response_generation_duration_seconds_count{imposter="[http:2] "} 5` + "\n",
		`mockd_store_errors_total{op="save"} 1` + "\n",
		`mockd_store_operation_duration_seconds_count{op="save"} 2` + "\n",
		"\ngo_goroutines ", "\ngo_info{version=\"go", "\ngo_memstats_heap_alloc_bytes ", "\ngo_gc_duration_seconds_count ",
		"\ngo_threads ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
	var names []string
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("metrics not in name order: %v", names)
	}
}

// TestHandlerGzip checks that a client that accepts gzip gets the metrics gzipped.
func TestHandlerGzip(t *testing.T) {
	r := New()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.Set("Accept-Encoding", "gzip")
	r.Handler(&ctx)
	if got := string(ctx.Response.Header.Peek("Content-Encoding")); got != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", got)
	}
	zr, err := gzip.NewReader(bytes.NewReader(ctx.Response.Body()))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !strings.Contains(string(body), "go_goroutines ") {
		t.Fatalf("gunzipped body: %v\n%.200s", err, body)
	}
	if ct := string(ctx.Response.Header.ContentType()); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
}

func BenchmarkObserve(b *testing.B) {
	m := New().ForImposter("[http:1] ")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Requests.Inc()
			m.MatchDuration.Observe(0.0001)
			m.RespDuration.Observe(0.0002)
		}
	})
}
