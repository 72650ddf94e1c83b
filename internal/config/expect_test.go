package config

import (
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	for _, tc := range []struct {
		in      string
		min     int
		max     int
		text    string
		wantErr string
	}{
		{in: `{"times":2}`, min: 2, max: 2, text: "exactly 2 requests"},
		{in: `{"atLeast":1}`, min: 1, max: -1, text: "at least 1 request"},
		{in: `{"atMost":3}`, min: 0, max: 3, text: "at most 3 requests"},
		{in: `{"atLeast":1,"atMost":3}`, min: 1, max: 3, text: "between 1 and 3 requests"},
		{in: `{"times":"two"}`, wantErr: `expect.times: times must be a non-negative integer, not "two"`},
		{in: `{"times":1.5}`, wantErr: "not 1.5"},
		{in: `{"atLeast":-1}`, wantErr: "atLeast must be a non-negative integer"},
		{in: `{"times":1,"atLeast":1}`, wantErr: "times cannot be combined"},
		{in: `{"atLeast":3,"atMost":1}`, wantErr: "atLeast 3 is above atMost 1"},
		{in: `{"time":1}`, wantErr: `expect.time: unknown field "time"`},
		{in: `{}`, wantErr: "expect must be an object"},
		{in: `3`, wantErr: "expect must be an object"},
	} {
		v, err := ParseJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		e, errs := ParseExpect(v, "expect")
		if tc.wantErr != "" {
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.wantErr) {
				t.Errorf("%s: got %v, want error %q", tc.in, errs, tc.wantErr)
			}
			continue
		}
		if len(errs) > 0 || e.Min != tc.min || e.Max != tc.max || e.String() != tc.text {
			t.Errorf("%s: got %+v %v %q", tc.in, e, errs, e)
		}
	}
	e := &Expect{Min: 1, Max: 2}
	for hits, want := range map[uint64]bool{0: false, 1: true, 2: true, 3: false} {
		if e.Met(hits) != want {
			t.Errorf("%v met by %d = %v", e, hits, !want)
		}
	}
	if e, errs := ParseExpect(nil, "expect"); e != nil || errs != nil {
		t.Error("no expect is no expectation")
	}
}
