package match

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// mbCase is one case of testdata/mb_cases.json, whose want/error come from
// Mountebank 2.9.1's predicates.js (see testdata/gen_mb_cases.js).
type mbCase struct {
	Name      string `json:"name"`
	Predicate any    `json:"predicate"`
	Request   struct {
		Method      string      `json:"method"`
		Path        string      `json:"path"`
		Query       [][2]string `json:"query"`
		Headers     [][2]string `json:"headers"`
		Body        string      `json:"body"`
		BodyMissing bool        `json:"bodyMissing"`
		Form        [][2]string `json:"form"`
		RequestFrom string      `json:"requestFrom"`
		IP          string      `json:"ip"`
		TCP         bool        `json:"tcp"`
		Data        string      `json:"data"`
	} `json:"request"`
	Binary bool  `json:"binary"`
	Want   *bool `json:"want"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func kvs(pairs [][2]string) []request.KV {
	var out []request.KV
	for _, p := range pairs {
		out = append(out, request.KV{Name: p[0], Value: p[1]})
	}
	return out
}

func (tc *mbCase) request() *request.Request {
	q := tc.Request
	r := &request.Request{
		Method: q.Method, Path: q.Path, Query: kvs(q.Query), Headers: kvs(q.Headers),
		Body: q.Body, BodyMissing: q.BodyMissing, TCP: q.TCP,
	}
	r.SetDataText(q.Data)
	r.SetClient(q.IP, q.RequestFrom)
	if q.Form != nil {
		r.Form, r.HasForm = kvs(q.Form), true
	}
	return r
}

func loadMBCases(t testing.TB) []mbCase {
	t.Helper()
	b, err := os.ReadFile("testdata/mb_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []mbCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestMountebankGroundTruth evaluates each predicate with the speed layer (a fast node, or the
// reference for what it does not specialise) as Mountebank's evaluate(predicate, request) did,
// and compares result and error.
func TestMountebankGroundTruth(t *testing.T) {
	for _, tc := range loadMBCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			cc := &compiler{ev: &evaluator{binary: tc.Binary}}
			p := cc.pred(fromPlain(tc.Predicate))
			if cc.err != nil {
				t.Fatalf("compile %v: %v", tc.Predicate, cc.err)
			}
			s := &Set{stubs: [][]*pred{{p}}, binary: tc.Binary}
			c := acquireCtx(s, tc.request())
			got, err := c.eval(p)
			releaseCtx(c)
			switch {
			case tc.Error != nil:
				e, ok := err.(*Error)
				if !ok || e.Code != tc.Error.Code || e.Message != tc.Error.Message {
					t.Fatalf("predicate %v: got (%v, %v), want error %q %q", tc.Predicate, got, err, tc.Error.Code, tc.Error.Message)
				}
			case err != nil:
				t.Fatalf("predicate %v: unexpected error %v, want %v", tc.Predicate, err, *tc.Want)
			case got != *tc.Want:
				t.Fatalf("predicate %v request %+v: got %v, want %v", tc.Predicate, tc.Request, got, *tc.Want)
			}
		})
	}
}
