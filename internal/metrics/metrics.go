// Package metrics holds mockd's Prometheus collectors, named and labelled as Mountebank's so
// existing dashboards keep working. Per-imposter children are resolved once, when an imposter
// starts, never per request; as in Mountebank, a series is shown only once it has counted
// something (see shownOnceUsed).
package metrics

import (
	"bytes"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Registry is the set of collectors GET /metrics serves. Safe for concurrent use.
type Registry struct {
	reg           *prometheus.Registry
	imposters     *imposterSeries
	storeDuration *prometheus.HistogramVec
	storeErrors   *prometheus.CounterVec
	handler       fasthttp.RequestHandler
}

// New returns a registry with Mountebank's imposter metrics plus the Go and process collectors.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), imposters: &imposterSeries{
		byLabel: map[string]*Imposter{},
		matchDuration: prometheus.NewDesc("mb_predicate_match_duration_seconds",
			"Time it takes to match the predicates and select a stub", []string{"imposter"}, nil),
		noMatch: prometheus.NewDesc("mb_no_match_total",
			"Number of times no stub matched the request", []string{"imposter"}, nil),
		requests: prometheus.NewDesc("mb_request_total",
			"Number of requests to the imposter", []string{"imposter"}, nil),
		respDuration: prometheus.NewDesc("mb_response_generation_duration_seconds",
			"Time it takes to generate the response from a stub", []string{"imposter"}, nil),
		blocked: prometheus.NewDesc("mb_blocked_ip_total",
			"Number of times a connection was blocked from a non-whitelisted IP address", []string{"imposter"}, nil),
	}}
	r.storeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mockd_store_operation_duration_seconds",
		Help:    "Time a --store operation took, by operation (save, sync, cycle, record, counts, …)",
		Buckets: []float64{0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.25, 1},
	}, []string{"op"})
	r.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockd_store_errors_total",
		Help: "Number of --store operations that failed, by operation",
	}, []string{"op"})
	r.reg.MustRegister(shownOnceUsed{r.storeDuration}, shownOnceUsed{r.storeErrors})
	r.reg.MustRegister(r.imposters,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Uncompressed, as Mountebank serves them (and the text can be rewritten, see Handler).
	r.handler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{DisableCompression: true}))
	return r
}

// shownOnceUsed collects the series of c that have counted something: a counter above zero, a
// histogram with an observation, as imposterSeries shows the imposters' (see there).
type shownOnceUsed struct{ prometheus.Collector }

func (s shownOnceUsed) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() {
		s.Collector.Collect(all)
		close(all)
	}()
	var m dto.Metric
	for metric := range all {
		m.Reset()
		if metric.Write(&m) == nil && used(&m) {
			ch <- metric
		}
	}
}

func used(m *dto.Metric) bool {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue() != 0
	case m.Histogram != nil:
		return m.Histogram.GetSampleCount() != 0
	}
	return true
}

// ObserveStore records one operation of the shared store (--store): how long it took and
// whether it failed. Safe on a nil Registry.
func (r *Registry) ObserveStore(op string, seconds float64, err error) {
	if r == nil {
		return
	}
	r.storeDuration.WithLabelValues(op).Observe(seconds)
	if err != nil {
		r.storeErrors.WithLabelValues(op).Inc()
	}
}

// Handler serves the metrics in Prometheus' text format (or what the scraper negotiates). In the
// text format Mountebank's histograms print `le` first, as prom-client does: the Go client
// always prints it last, and Mountebank's own tests match the series with `{.+imposter`.
func (r *Registry) Handler(ctx *fasthttp.RequestCtx) {
	r.handler(ctx)
	if bytes.Equal(ctx.Response.Header.ContentType(), []byte(textEscaped)) {
		// The same text format: Mountebank's prom-client names it without the escaping
		// parameter client_golang adds, and its answer has no Vary.
		ctx.Response.Header.SetContentType(textFormat)
		ctx.Response.Header.Del("Vary")
	}
	if bytes.HasPrefix(ctx.Response.Header.ContentType(), []byte("text/plain")) && len(ctx.Response.Header.ContentEncoding()) == 0 {
		if body := ctx.Response.Body(); bytes.Contains(body, []byte(`",le="`)) {
			ctx.Response.SetBodyRaw(leFirst(body))
		}
	}
}

const (
	textFormat  = "text/plain; version=0.0.4; charset=utf-8"
	textEscaped = textFormat + "; escaping=underscores"
)

// leFirst moves the `le` label of each mb_ histogram bucket line to the front of its labels:
// `mb_x_bucket{imposter="…",le="0.1"} 1` becomes `mb_x_bucket{le="0.1",imposter="…"} 1`.
func leFirst(text []byte) []byte {
	out := make([]byte, 0, len(text))
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line = text[:i+1]
		}
		text = text[len(line):]
		open := bytes.IndexByte(line, '{')
		le := bytes.LastIndex(line, []byte(`,le="`))
		if !bytes.HasPrefix(line, []byte("mb_")) || open < 0 || le < open {
			out = append(out, line...)
			continue
		}
		end := bytes.IndexByte(line[le+len(`,le="`):], '"')
		if end < 0 {
			out = append(out, line...)
			continue
		}
		end += le + len(`,le="`) + 1 // past the closing quote
		out = append(out, line[:open+1]...)
		out = append(out, line[le+1:end]...) // le="…"
		out = append(out, ',')
		out = append(out, line[open+1:le]...)
		out = append(out, line[end:]...)
	}
	return out
}

// Imposter is one imposter's series, counted in place. A nil *Imposter records nothing.
type Imposter struct {
	reg           *Registry
	label         string
	MatchDuration prometheus.Observer // &matchDuration (a test may put its own)
	NoMatch       *Counter
	Requests      *Counter
	RespDuration  prometheus.Observer // &respDuration
	Blocked       *Counter

	matchDuration, respDuration histogram
	noMatch, requests, blocked  Counter
}

// Buckets of the two histograms, Mountebank's.
var (
	matchBuckets = []float64{0.01, 0.05, 0.1, 0.2, 0.5, 1}
	respBuckets  = []float64{0.01, 0.05, 0.1, 0.2, 0.5, 1, 3, 5, 10, 30}
)

// ForImposter makes the series of an imposter. label is Mountebank's scope prefix, e.g.
// "[http:4545 users] ". It costs one allocation: the series are the Imposter's own fields,
// which GET /metrics reads (imposterSeries), rather than children of prometheus vectors, whose
// creation (label hashing, label pairs, a histogram's buckets, a created timestamp) and deletion
// for five series were a tenth of what creating and deleting an imposter cost (issue #26,
// admin-pairs). An imposter started on the label of one being stopped (the same port, at once)
// takes its place; the stopped one's Remove then leaves it alone.
func (r *Registry) ForImposter(label string) *Imposter {
	if r == nil {
		return nil
	}
	m := &Imposter{reg: r, label: label}
	m.matchDuration.upper, m.respDuration.upper = matchBuckets, respBuckets
	m.MatchDuration, m.RespDuration = &m.matchDuration, &m.respDuration
	m.NoMatch, m.Requests, m.Blocked = &m.noMatch, &m.requests, &m.blocked
	s := r.imposters
	s.mu.Lock()
	s.byLabel[label] = m
	s.mu.Unlock()
	return m
}

// Remove drops the imposter's series (when the imposter is deleted).
func (m *Imposter) Remove() {
	if m == nil {
		return
	}
	s := m.reg.imposters
	s.mu.Lock()
	if s.byLabel[m.label] == m {
		delete(s.byLabel, m.label)
	}
	s.mu.Unlock()
}

// Counter is a count that only goes up. Safe for concurrent use.
type Counter struct{ v atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// histogram counts observations by bucket, as prometheus' histogram does (a value goes in the
// first bucket whose upper bound is at least the value), without its hot and cold halves: a
// scrape made while requests are observed may see the sum a few observations behind the
// counts. Safe for concurrent use.
type histogram struct {
	upper   []float64
	counts  [11]atomic.Uint64 // by bucket, the last one for values above every bound
	sumBits atomic.Uint64
}

func (h *histogram) Observe(v float64) {
	i := 0
	for i < len(h.upper) && v > h.upper[i] {
		i++
	}
	h.counts[i].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// metric is the histogram as a prometheus metric, nil when it has observed nothing.
func (h *histogram) metric(desc *prometheus.Desc, label string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.upper))
	var n uint64
	for i, le := range h.upper {
		n += h.counts[i].Load()
		buckets[le] = n
	}
	n += h.counts[len(h.upper)].Load()
	if n == 0 {
		return nil
	}
	return prometheus.MustNewConstHistogram(desc, n, math.Float64frombits(h.sumBits.Load()), buckets, label)
}

// imposterSeries is the collector of the imposters' series. As Mountebank's (prom-client, which
// creates an imposter's series when it first counts: mb_request_total on its first request,
// mb_no_match_total on its first unmatched one), a series is shown only once it has counted
// something; mockd makes them when the imposter starts, so that the hot path never creates or
// looks one up. The check runs per scrape, never per request.
type imposterSeries struct {
	mu                                                      sync.Mutex
	byLabel                                                 map[string]*Imposter
	matchDuration, noMatch, requests, respDuration, blocked *prometheus.Desc
}

func (s *imposterSeries) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.matchDuration, s.noMatch, s.requests, s.respDuration, s.blocked} {
		ch <- d
	}
}

func (s *imposterSeries) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	list := make([]*Imposter, 0, len(s.byLabel))
	for _, m := range s.byLabel {
		list = append(list, m)
	}
	s.mu.Unlock()
	counter := func(desc *prometheus.Desc, c *Counter, label string) {
		if v := c.v.Load(); v > 0 {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), label)
		}
	}
	for _, m := range list {
		if h := m.matchDuration.metric(s.matchDuration, m.label); h != nil {
			ch <- h
		}
		counter(s.noMatch, &m.noMatch, m.label)
		counter(s.requests, &m.requests, m.label)
		if h := m.respDuration.metric(s.respDuration, m.label); h != nil {
			ch <- h
		}
		counter(s.blocked, &m.blocked, m.label)
	}
}

// epoch anchors Now: time.Since of a time with a monotonic reading costs one clock read,
// time.Now two (wall and monotonic), and the hot path times every request twice.
var epoch = time.Now()

// Instant is a point in time for measuring durations: a monotonic clock reading.
type Instant time.Duration

// Now returns the current Instant.
func Now() Instant { return Instant(time.Since(epoch)) }

// Since returns the seconds from i to now.
func (i Instant) Since() float64 { return time.Duration(Now() - i).Seconds() }
