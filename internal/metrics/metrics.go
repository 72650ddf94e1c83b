// Package metrics holds mockd's Prometheus collectors, named and labelled as Mountebank's so
// existing dashboards keep working. Per-imposter children are resolved once, when an imposter
// starts, never per request; as in Mountebank, a series is shown only once it has counted
// something (see shownOnceUsed).
package metrics

import (
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
	matchDuration *prometheus.HistogramVec
	noMatch       *prometheus.CounterVec
	requests      *prometheus.CounterVec
	respDuration  *prometheus.HistogramVec
	blocked       *prometheus.CounterVec
	storeDuration *prometheus.HistogramVec
	storeErrors   *prometheus.CounterVec
	handler       fasthttp.RequestHandler
}

// New returns a registry with Mountebank's imposter metrics plus the Go and process collectors.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		matchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mb_predicate_match_duration_seconds",
			Help:    "Time it takes to match the predicates and select a stub",
			Buckets: []float64{0.01, 0.05, 0.1, 0.2, 0.5, 1},
		}, []string{"imposter"}),
		noMatch: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mb_no_match_total",
			Help: "Number of times no stub matched the request",
		}, []string{"imposter"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mb_request_total",
			Help: "Number of requests to the imposter",
		}, []string{"imposter"}),
		respDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mb_response_generation_duration_seconds",
			Help:    "Time it takes to generate the response from a stub",
			Buckets: []float64{0.01, 0.05, 0.1, 0.2, 0.5, 1, 3, 5, 10, 30},
		}, []string{"imposter"}),
		blocked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mb_blocked_ip_total",
			Help: "Number of times a connection was blocked from a non-whitelisted IP address",
		}, []string{"imposter"}),
	}
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
	r.reg.MustRegister(shownOnceUsed{r.matchDuration}, shownOnceUsed{r.noMatch}, shownOnceUsed{r.requests},
		shownOnceUsed{r.respDuration}, shownOnceUsed{r.blocked},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.handler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}))
	return r
}

// shownOnceUsed collects the series of c that have counted something: a counter above zero, a
// histogram with an observation. Mountebank (prom-client) creates an imposter's series when it
// first counts (mb_request_total on its first request, mb_no_match_total on its first unmatched
// one); mockd resolves them when the imposter starts, so that the hot path never creates or
// looks one up, and hides them until then. The check runs per scrape, never per request.
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

// Handler serves the metrics in Prometheus' text format.
func (r *Registry) Handler(ctx *fasthttp.RequestCtx) { r.handler(ctx) }

// Imposter is one imposter's resolved metric children. A nil *Imposter records nothing.
type Imposter struct {
	reg           *Registry
	label         string
	MatchDuration prometheus.Observer
	NoMatch       prometheus.Counter
	Requests      prometheus.Counter
	RespDuration  prometheus.Observer
	Blocked       prometheus.Counter
}

// ForImposter resolves the children for an imposter. label is Mountebank's scope prefix,
// e.g. "[http:4545 users] ".
func (r *Registry) ForImposter(label string) *Imposter {
	if r == nil {
		return nil
	}
	return &Imposter{
		reg:           r,
		label:         label,
		MatchDuration: r.matchDuration.WithLabelValues(label),
		NoMatch:       r.noMatch.WithLabelValues(label),
		Requests:      r.requests.WithLabelValues(label),
		RespDuration:  r.respDuration.WithLabelValues(label),
		Blocked:       r.blocked.WithLabelValues(label),
	}
}

// Remove drops the imposter's series (when the imposter is deleted).
func (m *Imposter) Remove() {
	if m == nil {
		return
	}
	r := m.reg
	r.matchDuration.DeleteLabelValues(m.label)
	r.noMatch.DeleteLabelValues(m.label)
	r.requests.DeleteLabelValues(m.label)
	r.respDuration.DeleteLabelValues(m.label)
	r.blocked.DeleteLabelValues(m.label)
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
