package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mockd/mockd/test/internal/mockdproc"
)

// ticket is an imposter selling one ticket per round: the scenario "ticket" goes from Started
// to Sold on the first /buy, and /status says so.
func ticket(port int) string {
	return fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"scenarioName":"ticket","requiredScenarioState":"Started","newScenarioState":"Sold","predicates":[{"equals":{"path":"/buy"}}],"responses":[{"is":{"body":"sold to you"}}]},
		{"predicates":[{"equals":{"path":"/buy"}}],"responses":[{"is":{"statusCode":409,"body":"sold out"}}]},
		{"scenarioName":"ticket","requiredScenarioState":"Sold","predicates":[{"equals":{"path":"/status"}}],"responses":[{"is":{"body":"gone"}}]},
		{"predicates":[{"equals":{"path":"/status"}}],"responses":[{"is":{"body":"available"}}]},
		{"predicates":[{"equals":{"path":"/plain"}}],"responses":[{"is":{"body":"plain"}}]}]}`, port)
}

// TestScenariosAreClusterWide races 40 concurrent purchases spread over the three nodes, round
// after round: exactly one wins each round, every node then sees the scenario Sold (through
// its stubs and GET /imposters/:port/scenarios), and a reset or a PUT of the state through
// one node is every node's. Plain stubs of the imposter ask Redis nothing.
func TestScenariosAreClusterWide(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", ticket(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/status", "available") })
	scenarios := func(n *node) string { return n.admin + fmt.Sprintf("/imposters/%d/scenarios", port) }

	for round := 0; round < 3; round++ {
		const n = 40
		byStatus, errs := mockdproc.Burst(n, func(i int) string { return nodes[i%3].url(port) + "/buy" })
		for _, err := range errs {
			t.Error(err)
		}
		sold, soldOut := byStatus[200], byStatus[409]
		if sold != 1 || soldOut != n-1 {
			t.Fatalf("round %d: %d sold, %d sold out of %d concurrent requests over 3 nodes; want exactly 1 sold",
				round, sold, soldOut, n)
		}
		if msg := served(nodes, port, "/status", "gone"); msg != "" {
			t.Errorf("round %d after the sale: %s", round, msg)
		}
		for _, nd := range nodes {
			if body := mustDo(t, 200, "GET", scenarios(nd), ""); !strings.Contains(body, `"state": "Sold"`) {
				t.Errorf("round %d: GET scenarios on %s:\n%s", round, nd.host, body)
			}
		}
		// Reset through another node each round, alternately all scenarios and the one.
		url := scenarios(nodes[round%3])
		if round%2 == 1 {
			url += "/ticket"
		}
		if body := mustDo(t, 200, "DELETE", url, ""); !strings.Contains(body, `"state": "Started"`) {
			t.Errorf("reset: %s", body)
		}
		if msg := served(nodes, port, "/status", "available"); msg != "" {
			t.Errorf("round %d after the reset through %s: %s", round, nodes[round%3].host, msg)
		}
	}

	// PUT on one node is the state on the others.
	if body := mustDo(t, 200, "PUT", scenarios(nodes[0])+"/ticket", `{"state": "Sold"}`); !strings.Contains(body, `"state": "Sold"`) {
		t.Errorf("PUT state: %s", body)
	}
	for _, nd := range nodes[1:] {
		if body := mustDo(t, 200, "GET", scenarios(nd), ""); !strings.Contains(body, `"state": "Sold"`) {
			t.Errorf("GET scenarios on %s after the PUT on %s:\n%s", nd.host, nodes[0].host, body)
		}
	}
	if msg := served(nodes, port, "/status", "gone"); msg != "" {
		t.Errorf("after the PUT on %s: %s", nodes[0].host, msg)
	}

	// Plain stubs of an imposter with scenarios: no scenario command reaches Redis.
	before := storeCalls(t, r)
	for i := 0; i < 30; i++ {
		mustDo(t, 200, "GET", nodes[i%3].url(port)+"/plain", "")
	}
	after := storeCalls(t, r)
	for _, c := range []string{"hget", "evalsha", "eval"} { // (HSET: the nodes write their counts)
		if after[c] != before[c] {
			t.Errorf("30 plain requests made Redis run %s %d times", c, after[c]-before[c])
		}
	}
}

// TestScenariosGoOnWithoutTheStore stops Redis after a sale: each node goes on from its own
// copy of the state, and a change of the state through the API answers 503.
func TestScenariosGoOnWithoutTheStore(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", ticket(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/status", "available") })
	mustDo(t, 200, "GET", nodes[1].url(port)+"/buy", "")
	if msg := served(nodes, port, "/status", "gone"); msg != "" { // each node's copy is Sold now
		t.Fatal(msg)
	}
	r.stop()
	if msg := served(nodes, port, "/status", "gone"); msg != "" {
		t.Errorf("without the store: %s", msg)
	}
	status, body := do(t, "PUT", nodes[2].admin+fmt.Sprintf("/imposters/%d/scenarios/ticket", port), `{"state": "Started"}`)
	if status != 503 || !strings.Contains(body, `"code": "store unavailable"`) {
		t.Errorf("PUT state without the store: %d\n%s", status, body)
	}
}
