package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// TestScenarios drives a stateful scenario through the real binary: concurrent requests at a
// transition (exactly one takes it), the scenarios routes, and a stub that does not match in
// the current state letting the next one answer.
func TestScenarios(t *testing.T) {
	port := listenFree(t)
	file := write(t, t.TempDir(), "scenario.yaml", fmt.Sprintf(`imposters:
  - port: %d
    protocol: http
    stubs:
      - scenarioName: ticket
        requiredScenarioState: Started
        newScenarioState: Sold
        predicates: [{equals: {path: /buy}}]
        responses: [{is: {body: sold to you}}]
      - predicates: [{equals: {path: /buy}}]
        responses: [{is: {statusCode: 409, body: sold out}}]
      - scenarioName: ticket
        requiredScenarioState: Sold
        predicates: [{equals: {path: /status}}]
        responses: [{is: {body: gone}}]
      - predicates: [{equals: {path: /status}}]
        responses: [{is: {body: available}}]
`, port))
	s := start(t, "-c", file)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	scen := fmt.Sprintf("%s/imposters/%d/scenarios", s.Admin, port)

	if _, _, body := do(t, "GET", base+"/status", ""); body != "available" {
		t.Fatalf("before: /status = %q", body)
	}
	for round := 0; round < 3; round++ {
		const n = 40
		byStatus, errs := mockdproc.Burst(n, func(i int) string { return base + "/buy" })
		for _, err := range errs {
			t.Error(err)
		}
		sold, soldOut := byStatus[200], byStatus[409]
		if sold != 1 || soldOut != n-1 {
			t.Fatalf("round %d: %d sold, %d sold out of %d concurrent requests; want exactly 1 sold", round, sold, soldOut, n)
		}
		if _, _, body := do(t, "GET", base+"/status", ""); body != "gone" {
			t.Errorf("round %d: after the sale /status = %q", round, body)
		}
		status, _, body := do(t, "GET", scen, "")
		if status != 200 || !strings.Contains(body, `"name": "ticket"`) || !strings.Contains(body, `"state": "Sold"`) ||
			!strings.Contains(body, `"possibleStates": [`) {
			t.Errorf("GET scenarios: %d %s", status, body)
		}
		// Reset for the next round, alternately all scenarios and the one.
		url, method := scen, "DELETE"
		if round%2 == 1 {
			url, method = scen+"/ticket", "DELETE"
		}
		if status, _, body := do(t, method, url, ""); status != 200 || !strings.Contains(body, `"state": "Started"`) {
			t.Errorf("reset: %d %s", status, body)
		}
	}
	if status, _, body := do(t, "PUT", scen+"/ticket", `{"state": "Sold"}`); status != 200 || !strings.Contains(body, `"state": "Sold"`) {
		t.Errorf("PUT state: %d %s", status, body)
	}
	if _, _, body := do(t, "GET", base+"/status", ""); body != "gone" {
		t.Errorf("after PUT Sold: /status = %q", body)
	}
	// Errors have Mountebank's shape.
	if status, _, body := do(t, "PUT", scen+"/nope", `{"state": "x"}`); status != 404 || !strings.Contains(body, `"code": "no such resource"`) {
		t.Errorf("unknown scenario: %d %s", status, body)
	}
	if status, _, body := do(t, "PUT", scen+"/ticket", `{"state": 5}`); status != 400 || !strings.Contains(body, `"code": "bad data"`) {
		t.Errorf("bad state: %d %s", status, body)
	}
	if status, _, body := do(t, "PUT", scen+"/ticket", `{`); status != 400 || !strings.Contains(body, `"code": "invalid JSON"`) {
		t.Errorf("bad JSON: %d %s", status, body)
	}
	if status, _, _ := do(t, "GET", fmt.Sprintf("%s/imposters/%d/scenarios", s.Admin, port+1), ""); status != 404 {
		t.Errorf("scenarios of a missing imposter: %d", status)
	}
}
