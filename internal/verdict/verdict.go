// Package verdict is the answer to "did my code make the calls it should?": for every imposter,
// which stubs' expectations (a stub's `expect`) were not met, which stubs were never used and
// which requests matched no stub. GET /verify serves it as JSON, `mockd verify` prints it, writes
// it as JUnit XML and as GitHub annotations and job summary, and `mockd serve --verdict FILE`
// writes it at shutdown. A verdict fails when any of the three is found (unused stubs only
// unless allowed).
package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Verdict is the result of verifying every imposter.
type Verdict struct {
	Passed    bool       `json:"passed"`
	Summary   Summary    `json:"summary"`
	Imposters []Imposter `json:"imposters"`
}

// Summary counts what the verdict found.
type Summary struct {
	Expectations       int `json:"expectations"`
	ExpectationsFailed int `json:"expectationsFailed"`
	UnusedStubs        int `json:"unusedStubs"`
	UnmatchedRequests  int `json:"unmatchedRequests"`
}

// Stub statuses.
const (
	Passed = "passed" // its expectation was met, or it has none and was used
	Failed = "failed" // its expectation was not met
	Unused = "unused" // it has no expectation and answered no request
)

// Imposter is the verdict on one imposter.
type Imposter struct {
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
	Name     string `json:"name,omitempty"`
	Passed   bool   `json:"passed"`
	Stubs    []Stub `json:"stubs"`
	// UnmatchedRequests counts the requests that matched no stub (or raised an error).
	UnmatchedRequests int `json:"unmatchedRequests"`
	// Unmatched lists them when the imposter records requests (recordRequests or --mock).
	Unmatched []Unmatched `json:"unmatched"`
}

// Stub is the verdict on one stub.
type Stub struct {
	Index      int             `json:"index"`
	Predicates json.RawMessage `json:"predicates"`
	Hits       uint64          `json:"hits"`
	Expect     json.RawMessage `json:"expect,omitempty"`
	Status     string          `json:"status"`
	Message    string          `json:"message,omitempty"`
}

// Unmatched is one request that matched no stub.
type Unmatched struct {
	Request json.RawMessage `json:"request"`
	// Why names the nearest stubs and what each failed; Explanation says the same as JSON.
	Why         string          `json:"why"`
	Explanation json.RawMessage `json:"explanation,omitempty"`
}

// Finish sets the summary and every Passed flag from the stubs and requests; unused stubs fail
// the verdict unless allowUnused.
func (v *Verdict) Finish(allowUnused bool) {
	v.Summary = Summary{}
	v.Passed = true
	for i := range v.Imposters {
		im := &v.Imposters[i]
		im.Passed = im.UnmatchedRequests == 0
		for _, s := range im.Stubs {
			if len(s.Expect) > 0 {
				v.Summary.Expectations++
			}
			switch s.Status {
			case Failed:
				v.Summary.ExpectationsFailed++
				im.Passed = false
			case Unused:
				v.Summary.UnusedStubs++
				if !allowUnused {
					im.Passed = false
				}
			}
		}
		v.Summary.UnmatchedRequests += im.UnmatchedRequests
		v.Passed = v.Passed && im.Passed
	}
	if v.Imposters == nil {
		v.Imposters = []Imposter{}
	}
}

// Problem is one reason a verdict fails, for every renderer.
type Problem struct {
	Imposter *Imposter
	Stub     *Stub      // nil for an unmatched request
	Request  *Unmatched // nil for a stub, or when the request was not recorded
	Text     string
}

// Problems lists what failed, imposter by imposter: unmet expectations, unused stubs (when
// they fail the verdict) and unmatched requests.
func (v *Verdict) Problems(allowUnused bool) []Problem {
	var out []Problem
	for i := range v.Imposters {
		im := &v.Imposters[i]
		for j := range im.Stubs {
			s := &im.Stubs[j]
			if s.Status == Failed || s.Status == Unused && !allowUnused {
				out = append(out, Problem{Imposter: im, Stub: s, Text: fmt.Sprintf("%s: stub %d %s: %s", im.Label(), s.Index, s.Describe(), s.Message)})
			}
		}
		for j := range im.Unmatched {
			u := &im.Unmatched[j]
			out = append(out, Problem{Imposter: im, Request: u, Text: fmt.Sprintf("%s: %s matched no stub; %s", im.Label(), u.Describe(), u.Why)})
		}
		if n := im.UnmatchedRequests - len(im.Unmatched); n > 0 {
			out = append(out, Problem{Imposter: im, Text: fmt.Sprintf("%s: %d request(s) matched no stub (turn recordRequests on to see them and why)", im.Label(), n)})
		}
	}
	return out
}

// Label names the imposter: "http:4545 users".
func (im *Imposter) Label() string {
	s := fmt.Sprintf("%s:%d", im.Protocol, im.Port)
	if im.Name != "" {
		s += " " + im.Name
	}
	return s
}

// Describe renders the stub's predicates compactly (or "(no predicates)").
func (s *Stub) Describe() string {
	p := compact(s.Predicates)
	if p == "" || p == "null" || p == "[]" {
		return "(no predicates)"
	}
	return cut(p, 120)
}

// compact renders JSON on one line.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strings.TrimSpace(string(raw))
	}
	return b.String()
}

// Describe names the request: "GET /users/42" for http, the data for tcp.
func (u *Unmatched) Describe() string {
	var r struct {
		Method, Path string
		Query        map[string]any
		Data         *string
	}
	_ = json.Unmarshal(u.Request, &r)
	if r.Data != nil {
		return "request " + cut(fmt.Sprintf("%q", *r.Data), 60)
	}
	return strings.TrimSpace(r.Method + " " + r.Path)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// Text writes the verdict for a terminal: one line per problem, then a summary line.
func (v *Verdict) Text(w io.Writer, allowUnused bool) {
	for _, p := range v.Problems(allowUnused) {
		fmt.Fprintln(w, "FAIL", p.Text)
	}
	s := v.Summary
	status := "PASS"
	if !v.Passed {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s: %d imposter(s), %d expectation(s) of which %d failed, %d unused stub(s), %d unmatched request(s)\n",
		status, len(v.Imposters), s.Expectations, s.ExpectationsFailed, s.UnusedStubs, s.UnmatchedRequests)
}
