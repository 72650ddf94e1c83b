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
	return obj, im.tbl.Load().ref.Explain(obj), nil
}

// StubHits returns how many requests each stub answered, in stub order.
func (im *Imposter) StubHits() []uint64 {
	stubs := im.tbl.Load().stubs
	out := make([]uint64, len(stubs))
	for i, s := range stubs {
		out[i] = s.hits.Load()
	}
	return out
}

// Verdict verifies the imposter: each stub's expectation against its hits, the stubs that
// answered nothing, and the requests that matched no stub (listed, with why, when recorded).
// The caller finishes the verdict (verdict.Verdict.Finish).
func (im *Imposter) Verdict() verdict.Imposter {
	v := im.StubVerdict()
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

// StubVerdict is Verdict without the list of unmatched requests (their count is there): it
// reads counters only, for the dashboard, which asks every second.
func (im *Imposter) StubVerdict() verdict.Imposter {
	v := verdict.Imposter{Port: im.port, Protocol: im.def.Protocol, Name: im.def.Name, Stubs: []verdict.Stub{},
		Unmatched: []verdict.Unmatched{}, UnmatchedRequests: int(im.noMatches.Load())}
	for i, s := range im.tbl.Load().stubs {
		preds, _ := s.def.Get("predicates")
		if preds == nil {
			preds = []any{}
		}
		vs := verdict.Stub{Index: i, Predicates: config.MarshalJSON(preds, 0), Hits: s.hits.Load(), Status: verdict.Passed}
		switch {
		case s.expect != nil:
			vs.Expect = config.MarshalJSON(get(s.def, "expect"), 0)
			if !s.expect.Met(vs.Hits) {
				vs.Status = verdict.Failed
				vs.Message = fmt.Sprintf("expected %s, got %d", s.expect, vs.Hits)
			}
		case vs.Hits == 0:
			vs.Status, vs.Message = verdict.Unused, "answered no request"
		}
		v.Stubs = append(v.Stubs, vs)
	}
	return v
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
