// Package metrics holds mockd's metrics, named and labelled as Mountebank's so existing
// dashboards keep working, and serves them with Go's and the process's in Prometheus' text
// format. Per-imposter series are resolved once, when an imposter starts, never per request;
// as in Mountebank, a series is shown only once it has counted something.
//
// It writes the format itself rather than through the Prometheus client library: that library
// (with protobuf, procfs and their package inits) cost 1.4 MiB of resident memory at every start
// of mockd, metrics on or off, for a handful of counters and histograms (issue 26). The names,
// types, help texts and label order are the library's, series by series.
package metrics

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Counter counts events. Safe for concurrent use.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Histogram counts observations in buckets (each counts the values up to its upper bound, the
// last one every value) and sums them. Safe for concurrent use.
type Histogram struct {
	upper   []float64       // the buckets' upper bounds, ascending (shared by the family)
	counts  []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sumBits atomic.Uint64   // float64 bits of the sum
}

func newHistogram(upper []float64) *Histogram {
	return &Histogram{upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
}

// Observe records v.
func (h *Histogram) Observe(v float64) {
	h.counts[sort.SearchFloat64s(h.upper, v)].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 {
	n := uint64(0)
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// family is one metric with one label: its series by label value.
type family struct {
	name, help, label string
	histogram         bool
	upper             []float64 // histograms' bucket bounds

	mu     sync.Mutex
	series map[string]any // label value → *Counter or *Histogram
}

func newCounterFamily(name, help, label string) *family {
	return &family{name: name, help: help, label: label, series: map[string]any{}}
}

func newHistogramFamily(name, help, label string, upper []float64) *family {
	return &family{name: name, help: help, label: label, histogram: true, upper: upper, series: map[string]any{}}
}

// get returns the series for the label value, making it on first use.
func (f *family) get(value string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.series[value]
	if !ok {
		if f.histogram {
			s = newHistogram(f.upper)
		} else {
			s = &Counter{}
		}
		f.series[value] = s
	}
	return s
}

func (f *family) counter(value string) *Counter    { return f.get(value).(*Counter) }
func (f *family) histogramFor(v string) *Histogram { return f.get(v).(*Histogram) }

func (f *family) remove(value string) {
	f.mu.Lock()
	delete(f.series, value)
	f.mu.Unlock()
}

// write appends the family's used series (a counter above zero, a histogram with an
// observation): Mountebank (prom-client) creates an imposter's series when it first counts;
// mockd makes them when the imposter starts, so that the hot path never creates or looks one
// up, and hides them until then. A family without a series shown is left out, as Prometheus'
// client leaves it out.
func (f *family) write(b *bytes.Buffer) {
	f.mu.Lock()
	values := make([]string, 0, len(f.series))
	for v := range f.series {
		values = append(values, v)
	}
	series := make([]any, 0, len(values))
	slices.Sort(values)
	for _, v := range values {
		series = append(series, f.series[v])
	}
	f.mu.Unlock()
	headed := false
	head := func() {
		if !headed {
			headed = true
			writeHead(b, f.name, f.help, map[bool]string{true: "histogram", false: "counter"}[f.histogram])
		}
	}
	for i, s := range series {
		label := f.label + `="` + escapeLabel(values[i]) + `"`
		switch s := s.(type) {
		case *Counter:
			if n := s.n.Load(); n > 0 {
				head()
				writeSample(b, f.name, label, float64(n))
			}
		case *Histogram:
			counts := make([]uint64, len(s.counts))
			total := uint64(0)
			for j := range s.counts {
				counts[j] = s.counts[j].Load()
				total += counts[j]
			}
			if total == 0 {
				continue
			}
			head()
			sum := math.Float64frombits(s.sumBits.Load())
			cum := uint64(0)
			for j, n := range counts {
				cum += n
				le := "+Inf"
				if j < len(s.upper) {
					le = formatFloat(s.upper[j])
				}
				writeSample(b, f.name+"_bucket", label+`,le="`+le+`"`, float64(cum))
			}
			writeSample(b, f.name+"_sum", label, sum)
			writeSample(b, f.name+"_count", label, float64(total))
		}
	}
}

// Registry is the set of metrics GET /metrics serves. Safe for concurrent use.
type Registry struct {
	matchDuration *family
	noMatch       *family
	requests      *family
	respDuration  *family
	blocked       *family
	storeDuration *family
	storeErrors   *family
	families      []*family // by name
}

// New returns a registry with Mountebank's imposter metrics (and the store's), served with the
// Go and process metrics.
func New() *Registry {
	r := &Registry{
		matchDuration: newHistogramFamily("mb_predicate_match_duration_seconds",
			"Time it takes to match the predicates and select a stub", "imposter",
			[]float64{0.01, 0.05, 0.1, 0.2, 0.5, 1}),
		noMatch:  newCounterFamily("mb_no_match_total", "Number of times no stub matched the request", "imposter"),
		requests: newCounterFamily("mb_request_total", "Number of requests to the imposter", "imposter"),
		respDuration: newHistogramFamily("mb_response_generation_duration_seconds",
			"Time it takes to generate the response from a stub", "imposter",
			[]float64{0.01, 0.05, 0.1, 0.2, 0.5, 1, 3, 5, 10, 30}),
		blocked: newCounterFamily("mb_blocked_ip_total",
			"Number of times a connection was blocked from a non-whitelisted IP address", "imposter"),
		storeDuration: newHistogramFamily("mockd_store_operation_duration_seconds",
			"Time a --store operation took, by operation (save, sync, cycle, record, counts, …)", "op",
			[]float64{0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.25, 1}),
		storeErrors: newCounterFamily("mockd_store_errors_total", "Number of --store operations that failed, by operation", "op"),
	}
	r.families = []*family{r.blocked, r.noMatch, r.matchDuration, r.requests, r.respDuration, r.storeErrors, r.storeDuration}
	slices.SortFunc(r.families, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	return r
}

// ObserveStore records one operation of the shared store (--store): how long it took and
// whether it failed. Safe on a nil Registry.
func (r *Registry) ObserveStore(op string, seconds float64, err error) {
	if r == nil {
		return
	}
	r.storeDuration.histogramFor(op).Observe(seconds)
	if err != nil {
		r.storeErrors.counter(op).Inc()
	}
}

// Text returns every metric in Prometheus' text format (version 0.0.4), metrics ordered by
// name: Go's, Mountebank's, mockd's, the process's.
func (r *Registry) Text() []byte {
	var b bytes.Buffer
	writeGo(&b)
	for _, f := range r.families {
		f.write(&b)
	}
	writeProcess(&b)
	return b.Bytes()
}

// Handler serves the metrics in Prometheus' text format, gzipped for a client that accepts it.
func (r *Registry) Handler(ctx *fasthttp.RequestCtx) {
	body := r.Text()
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8; escaping=underscores")
	ctx.Response.Header.Add("Vary", "Accept-Encoding")
	if ctx.Request.Header.HasAcceptEncoding("gzip") {
		ctx.Response.Header.Set("Content-Encoding", "gzip")
		body = fasthttp.AppendGzipBytes(nil, body)
	}
	ctx.SetBody(body)
}

// Imposter is one imposter's resolved metric series. A nil *Imposter records nothing.
type Imposter struct {
	reg           *Registry
	label         string
	MatchDuration *Histogram
	NoMatch       *Counter
	Requests      *Counter
	RespDuration  *Histogram
	Blocked       *Counter
}

// ForImposter resolves the series of an imposter. label is Mountebank's scope prefix,
// e.g. "[http:4545 users] ".
func (r *Registry) ForImposter(label string) *Imposter {
	if r == nil {
		return nil
	}
	return &Imposter{
		reg:           r,
		label:         label,
		MatchDuration: r.matchDuration.histogramFor(label),
		NoMatch:       r.noMatch.counter(label),
		Requests:      r.requests.counter(label),
		RespDuration:  r.respDuration.histogramFor(label),
		Blocked:       r.blocked.counter(label),
	}
}

// Remove drops the imposter's series (when the imposter is deleted).
func (m *Imposter) Remove() {
	if m == nil {
		return
	}
	r := m.reg
	for _, f := range []*family{r.matchDuration, r.noMatch, r.requests, r.respDuration, r.blocked} {
		f.remove(m.label)
	}
}

// writeHead writes the HELP and TYPE lines of a metric.
func writeHead(b *bytes.Buffer, name, help, typ string) {
	b.WriteString("# HELP ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help))
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typ)
	b.WriteByte('\n')
}

// writeSample writes one sample line; labels is `name="value",…` or "".
func writeSample(b *bytes.Buffer, name, labels string, v float64) {
	b.WriteString(name)
	if labels != "" {
		b.WriteByte('{')
		b.WriteString(labels)
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

// gauge writes a metric of one sample without labels.
func gauge(b *bytes.Buffer, name, help, typ string, v float64) {
	writeHead(b, name, help, typ)
	writeSample(b, name, "", v)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// formatFloat writes a value as Prometheus' client does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
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
