package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTranslate: each scenario's stubs become WireMock mappings and MockServer expectations
// that keep Mountebank's first-match order, or an n/a with the reason.
func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		scenario    string
		wiremock    string // a fragment of the first mapping's JSON, or the n/a reason
		mockserver  string // likewise for the first expectation
		wantNA      bool
		msNA        bool // MockServer alone is n/a: mockserver is the reason
		firstPrio   int  // WireMock's
		msFirstPrio int  // MockServer's
	}{
		{scenario: "simple", wiremock: `"urlPath":"/health"`, mockserver: `"path":"/health"`, firstPrio: 1, msFirstPrio: 1},
		{scenario: "json-equals-first", wiremock: `"equalToJson":{"customer":"acme"`, mockserver: `"matchType":"ONLY_MATCHING_FIELDS"`, firstPrio: 1, msFirstPrio: 100},
		{scenario: "json-contains", wiremock: `"matchesJsonPath":{"contains":"SKU-000","expression":"$.sku"}`, mockserver: `"jsonPath":"$[?(@.sku =~ /.*SKU-000.*/)]"`, firstPrio: 1, msFirstPrio: 100},
		{scenario: "jsonpath-first", wiremock: `"matchesJsonPath":{"equalTo":"cust-000","expression":"$.customer.id"}`, mockserver: `"jsonPath":"$.customer[?(@.id == 'cust-000')]"`, firstPrio: 1, msFirstPrio: 100},
		{scenario: "xpath-first", wiremock: `"matchesXPath":{"equalTo":"cust-000","expression":"//customer/id/text()"}`, mockserver: `"xpath":"//customer/id[.='cust-000']"`, firstPrio: 1, msFirstPrio: 100},
		{scenario: "and-or-not", wiremock: `"urlPathPattern":"^(/logic/0|/logic-alt/0/.*)$"`, mockserver: `"not":true`, firstPrio: 1, msFirstPrio: 50},
		{scenario: "header-first", wiremock: `"X-Tenant":{"caseInsensitive":true,"equalTo":"tenant-000"}`, mockserver: `"X-Tenant":["tenant-000"]`, firstPrio: 1, msFirstPrio: 100},
		{scenario: "wait-0", wiremock: `"fixedDelayMilliseconds":0`, mockserver: `"delay":{"timeUnit":"MILLISECONDS","value":0}`, firstPrio: 1, msFirstPrio: 1},
		{scenario: "handlebars", wiremock: `"transformers":["response-template"]`, mockserver: "Handlebars templates (its own are Velocity, Mustache or JavaScript)", msNA: true, firstPrio: 1},
		{scenario: "decorate", wiremock: "JavaScript decorate behaviors", wantNA: true},
		{scenario: "inject", wiremock: "JavaScript inject responses", wantNA: true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			var s *scenario
			for _, c := range allScenarios() {
				if c.Name == tc.scenario {
					s = c
				}
			}
			stubs := s.Stubs()
			wm, err := wiremockMappings(stubs)
			if tc.wantNA {
				if why, ok := isNA(err); !ok || why != tc.wiremock {
					t.Fatalf("want n/a %q, got %v", tc.wiremock, err)
				}
				if _, err := mockserverExpectations(stubs); err == nil {
					t.Fatal("MockServer: want n/a")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ms, err := mockserverExpectations(stubs)
			if tc.msNA {
				if why, ok := isNA(err); !ok || why != tc.mockserver {
					t.Fatalf("MockServer: want n/a %q, got %v", tc.mockserver, err)
				}
				if w, _ := json.Marshal(wm[0]); !strings.Contains(string(w), tc.wiremock) {
					t.Errorf("WireMock mapping %s lacks %s", w, tc.wiremock)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(wm) != len(stubs) || len(ms) != len(stubs) {
				t.Fatalf("%d stubs: %d mappings, %d expectations", len(stubs), len(wm), len(ms))
			}
			w, _ := json.Marshal(wm[0])
			m, _ := json.Marshal(ms[0])
			if !strings.Contains(string(w), tc.wiremock) {
				t.Errorf("WireMock mapping %s lacks %s", w, tc.wiremock)
			}
			if !strings.Contains(string(m), tc.mockserver) {
				t.Errorf("MockServer expectation %s lacks %s", m, tc.mockserver)
			}
			if p := wm[0].(map[string]any)["priority"]; p != tc.firstPrio {
				t.Errorf("WireMock priority %v, want %d", p, tc.firstPrio)
			}
			if p := ms[0].(map[string]any)["priority"]; p != tc.msFirstPrio {
				t.Errorf("MockServer priority %v, want %d", p, tc.msFirstPrio)
			}
		})
	}
}

// TestReplayable: MockServer's recorded expectations replay on method and path, again and again.
func TestReplayable(t *testing.T) {
	rec := `[{"httpRequest":{"method":"GET","path":"/orders/7","headers":{"Host":["127.0.0.1:1"]},"remoteAddress":"127.0.0.1:5"},
		"httpResponse":{"statusCode":200,"headers":{"Date":["x"],"x-mockserver-response-time-ms":["3"],"Content-Type":["text/plain"]},"body":"b"},
		"times":{"remainingTimes":1}}]`
	out, err := replayable([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"httpRequest":{"method":"GET","path":"/orders/7"},"httpResponse":{"body":"b","headers":{"Content-Type":["text/plain"]},"statusCode":200}}]`
	if string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}

func TestWiremockXPathText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"//customer/id", "//customer/id/text()"},
		{"//item[@sku='x']", "//item[@sku='x']/text()"},
		{"//a[contains(., 'x')]", "//a[contains(., 'x')]/text()"},
		{"//customer/id/text()", "//customer/id/text()"},
		{"//item/@sku", "//item/@sku"},
		{"count(//item)", "count(//item)"},
	} {
		if got := wiremockXPathText(c.in); got != c.want {
			t.Errorf("wiremockXPathText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
