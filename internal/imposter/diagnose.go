package imposter

import (
	"encoding/json"
	"fmt"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/verdict"
)

// Explain evaluates a request in Mountebank's JSON shape (as recorded requests show it; see
// match.RequestFromJSON for the defaults) against every stub as they stand, without running
// scripts or changing anything, and returns the request as evaluated with the explanation.
func (im *Imposter) Explain(req config.Value) (*config.Object, *match.Explanation, error) {
	obj, err := match.RequestFromJSON(req, im.def.Protocol == "tcp")
	if err != nil {
		return nil, nil, err
	}
	return obj, im.tbl.Load().reference().Explain(obj), nil
}

// StubHits returns how many requests each stub answered, in stub order.
func (im *Imposter) StubHits() []uint64 {
	stubs := im.tbl.Load().stubs
	counted := im.tally()
	out := make([]uint64, len(stubs))
	for i, s := range stubs {
		out[i] = counted.hits(s)
	}
	return out
}

// Verdict verifies the imposter: each stub's expectation against its hits, the stubs that
// answered nothing, and the requests that matched no stub (listed, with why, when recorded).
// The caller finishes the verdict (verdict.Verdict.Finish).
func (im *Imposter) Verdict() verdict.Imposter {
	v := verdict.Imposter{Port: im.port, Protocol: im.def.Protocol, Name: im.def.Name, Stubs: im.stubVerdicts(-1, true),
		Unmatched: []verdict.Unmatched{}, UnmatchedRequests: int(im.NoMatchCount())}
	for _, r := range im.RecordedRequests() {
		why := r.Explain()
		if why == nil {
			continue
		}
		req := config.Clone(r.Request).(*config.Object)
		req.Set("timestamp", r.At.UTC().Format("2006-01-02T15:04:05.000Z"))
		v.Unmatched = append(v.Unmatched, verdict.Unmatched{
			Request:     json.RawMessage(config.MarshalJSON(req, 0)),
			Why:         why.Text(),
			Explanation: json.RawMessage(config.MarshalJSON(why.Summary(), 0)),
		})
	}
	return v
}

// StubVerdicts returns the verdict on the first n stubs without their predicates: it reads
// counters, for the dashboard, which asks every second.
func (im *Imposter) StubVerdicts(n int) []verdict.Stub { return im.stubVerdicts(n, false) }

// StubCounts counts, as Verdict would, the stubs that have an expectation, those that fail it
// and those unused (no expectation and no hit). It allocates nothing.
func (im *Imposter) StubCounts() (expectations, failed, unused int) {
	counted := im.tally()
	for _, s := range im.tbl.Load().stubs {
		if s.expect != nil {
			expectations++
		}
		switch s.status(counted.hits(s)) {
		case verdict.Failed:
			failed++
		case verdict.Unused:
			unused++
		}
	}
	return expectations, failed, unused
}

// stubVerdicts is the verdict on the first n stubs (every stub when n < 0), with their
// predicates or not.
func (im *Imposter) stubVerdicts(n int, predicates bool) []verdict.Stub {
	stubs := im.tbl.Load().stubs
	if n < 0 || n > len(stubs) {
		n = len(stubs)
	}
	out := make([]verdict.Stub, 0, n)
	counted := im.tally()
	for i, s := range stubs[:n] {
		vs := verdict.Stub{Index: i, Hits: counted.hits(s)}
		if predicates {
			preds := s.predicates()
			if preds == nil {
				preds = []any{}
			}
			vs.Predicates = config.MarshalJSON(preds, 0)
		}
		if s.expect != nil {
			vs.Expect = config.MarshalJSON(s.field("expect"), 0)
		}
		switch vs.Status = s.status(vs.Hits); vs.Status {
		case verdict.Failed:
			vs.Message = fmt.Sprintf("expected %s, got %d", s.expect, vs.Hits)
		case verdict.Unused:
			vs.Message = "answered no request"
		}
		out = append(out, vs)
	}
	return out
}

// status is the stub's verdict after hits: its expectation failed, or, without one, it answered
// nothing (unused), or it passed.
func (s *stub) status(hits uint64) string {
	switch {
	case s.expect != nil && !s.expect.Met(hits):
		return verdict.Failed
	case s.expect == nil && hits == 0:
		return verdict.Unused
	}
	return verdict.Passed
}

// Verify verifies every imposter of list.
func Verify(list []*Imposter, allowUnused bool) *verdict.Verdict {
	v := &verdict.Verdict{}
	for _, im := range list {
		v.Imposters = append(v.Imposters, im.Verdict())
	}
	v.Finish(allowUnused)
	return v
}
