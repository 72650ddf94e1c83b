package metrics

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
		fams, err := r.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, f := range fams {
			if strings.HasPrefix(f.GetName(), "mb_") {
				out[f.GetName()] = len(f.GetMetric()) > 0
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

// TestImposterTakesTheLabelOver: an imposter started on the port of one being deleted (a client
// suite's POST, DELETE, POST of the same port) keeps its series when the old one's are removed
// after it started (the old imposter drains in the background).
func TestImposterTakesTheLabelOver(t *testing.T) {
	r := New()
	old := r.ForImposter("[http:4545] ")
	old.Requests.Inc()
	m := r.ForImposter("[http:4545] ")
	m.Requests.Inc()
	m.Requests.Inc()
	old.Remove()
	fams, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "mb_request_total" {
			if len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 2 {
				t.Fatalf("mb_request_total: %v, want the new imposter's 2", f.GetMetric())
			}
			return
		}
	}
	t.Fatal("mb_request_total is not shown")
}

// TestHistogramAsPrometheus: an imposter's histogram puts values in the buckets prometheus'
// histogram puts them in (a value equal to a bound in that bound's bucket) and sums them alike.
func TestHistogramAsPrometheus(t *testing.T) {
	want := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x", Help: "the reference", Buckets: respBuckets})
	got := histogram{upper: respBuckets}
	for _, v := range []float64{0, 0.001, 0.01, 0.0100001, 0.05, 0.7, 1, 3, 29.9, 30, 31, 1e9} {
		want.Observe(v)
		got.Observe(v)
	}
	var w, g dto.Metric
	if err := want.Write(&w); err != nil {
		t.Fatal(err)
	}
	if err := got.metric(prometheus.NewDesc("x", "x", []string{"imposter"}, nil), "i").Write(&g); err != nil {
		t.Fatal(err)
	}
	wh, gh := w.GetHistogram(), g.GetHistogram()
	if wh.GetSampleCount() != gh.GetSampleCount() || wh.GetSampleSum() != gh.GetSampleSum() || len(wh.GetBucket()) != len(gh.GetBucket()) {
		t.Fatalf("got count %d sum %v, %d buckets; want %d, %v, %d", gh.GetSampleCount(), gh.GetSampleSum(), len(gh.GetBucket()),
			wh.GetSampleCount(), wh.GetSampleSum(), len(wh.GetBucket()))
	}
	for i, b := range wh.GetBucket() {
		if gb := gh.GetBucket()[i]; gb.GetUpperBound() != b.GetUpperBound() || gb.GetCumulativeCount() != b.GetCumulativeCount() {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), gb.GetCumulativeCount(), b.GetCumulativeCount())
		}
	}
}

// TestLeFirst: Mountebank's histogram buckets print le before the imposter label; other lines
// (other families, sums, counts, comments) are kept byte for byte.
func TestLeFirst(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mb_x_bucket{imposter=\"[http:1] \",le=\"0.01\"} 1\n", "mb_x_bucket{le=\"0.01\",imposter=\"[http:1] \"} 1\n"},
		{"mb_x_bucket{imposter=\"a,le=\\\"b\",le=\"+Inf\"} 2", "mb_x_bucket{le=\"+Inf\",imposter=\"a,le=\\\"b\"} 2"},
		{"mb_x_sum{imposter=\"[http:1] \"} 0.5\n", "mb_x_sum{imposter=\"[http:1] \"} 0.5\n"},
		{"mockd_store_operation_duration_seconds_bucket{op=\"save\",le=\"1\"} 1\n", "mockd_store_operation_duration_seconds_bucket{op=\"save\",le=\"1\"} 1\n"},
		{"# HELP mb_x_bucket x,le=\"y\"\n", "# HELP mb_x_bucket x,le=\"y\"\n"},
		{"", ""},
	} {
		if got := string(leFirst([]byte(tc.in))); got != tc.want {
			t.Errorf("leFirst(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHandlerLeFirst: GET /metrics in the text format shows the buckets as Mountebank does,
// uncompressed even when the client accepts gzip (as Mountebank).
func TestHandlerLeFirst(t *testing.T) {
	r := New()
	m := r.ForImposter("[http:4545] ")
	m.Requests.Inc()
	m.MatchDuration.Observe(0.001)
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/metrics")
	ctx.Request.Header.Set("Accept-Encoding", "gzip")
	r.Handler(&ctx)
	body := string(ctx.Response.Body())
	if len(ctx.Response.Header.ContentEncoding()) != 0 {
		t.Fatalf("Content-Encoding %q", ctx.Response.Header.ContentEncoding())
	}
	want := `mb_predicate_match_duration_seconds_bucket{le="0.01",imposter="[http:4545] "} 1`
	if !strings.Contains(body, want) || !regexp.MustCompile(`mb_predicate_match_duration_seconds.+\{.+imposter.+\}`).MatchString(body) {
		t.Errorf("GET /metrics lacks %s:\n%s", want, body)
	}
}

// GET and HEAD /metrics name the text format as Mountebank's prom-client does, without the
// escaping parameter client_golang adds (a scraper's Accept still negotiates its own).
func TestHandlerContentType(t *testing.T) {
	r := New()
	for _, method := range []string{"GET", "HEAD"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI("/metrics")
		r.Handler(&ctx)
		if got := string(ctx.Response.Header.ContentType()); got != "text/plain; version=0.0.4; charset=utf-8" {
			t.Errorf("%s /metrics: Content-Type %q", method, got)
		}
		if got := ctx.Response.Header.Peek("Vary"); len(got) > 0 {
			t.Errorf("%s /metrics: Vary %q, want none", method, got)
		}
	}
}
