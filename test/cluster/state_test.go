package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// threeResponses is an imposter that records its requests and answers with a cycle of three.
func threeResponses(port int) string {
	return fmt.Sprintf(`{"protocol":"http","port":%d,"recordRequests":true,"stubs":[
		{"predicates":[{"startsWith":{"path":"/cycle"}}],"responses":[{"is":{"body":"a"}},{"is":{"body":"b"}},{"is":{"body":"c"}}]},
		{"predicates":[{"equals":{"path":"/plain"}}],"responses":[{"is":{"body":"plain"}}],"expect":{"times":4}}]}`, port)
}

// imposterState is the part of GET /imposters/:port?explain=true the tests read.
type imposterState struct {
	NumberOfRequests int `json:"numberOfRequests"`
	Requests         []struct {
		Path string `json:"path"`
	} `json:"requests"`
	Stubs []struct {
		Hits int `json:"hits"`
	} `json:"stubs"`
}

func readState(t *testing.T, n *node, port int) imposterState {
	t.Helper()
	var s imposterState
	body := mustDo(t, 200, "GET", n.admin+fmt.Sprintf("/imposters/%d?explain=true", port), "")
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return s
}

// TestCycleAdvancesOncePerRequestAcrossNodes sends requests for a 3-response stub to the nodes
// in turn: the responses come in the stub's order, once each, whichever node answers.
func TestCycleAdvancesOncePerRequestAcrossNodes(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", threeResponses(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/plain", "plain") })
	var got []string
	for i := 0; i < 9; i++ {
		got = append(got, mustDo(t, 200, "GET", nodes[(i*2)%3].url(port)+"/cycle", ""))
	}
	if s := strings.Join(got, ""); s != "abcabcabc" {
		t.Errorf("responses over the nodes = %s, want abcabcabc", s)
	}
	// repeat: a response given twice counts as two places of the cycle, across the nodes too.
	mustDo(t, 200, "PUT", nodes[1].admin+fmt.Sprintf("/imposters/%d/stubs/0", port),
		`{"predicates":[{"startsWith":{"path":"/cycle"}}],"responses":[{"is":{"body":"x"},"repeat":2},{"is":{"body":"y"}}]}`)
	eventually(t, "the new stub everywhere", func() string {
		for _, n := range nodes {
			if _, body := get(n.admin + fmt.Sprintf("/imposters/%d", port)); !strings.Contains(body, `"repeat": 2`) {
				return n.host + " has not the new stub: " + body
			}
		}
		return ""
	})
	got = nil
	for i := 0; i < 6; i++ {
		got = append(got, mustDo(t, 200, "GET", nodes[(i+1)%3].url(port)+"/cycle", ""))
	}
	if s := strings.Join(got, ""); s != "xxyxxy" {
		t.Errorf("responses with repeat over the nodes = %s, want xxyxxy", s)
	}
}

// TestJournalAndCountsAreClusterWide sends requests to every node: GET /imposters/:port on any
// node lists them all in arrival order, with cluster-wide counts, GET /verify counts every
// node's hits, and clearing the requests through one node clears them everywhere.
func TestJournalAndCountsAreClusterWide(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[1].admin+"/imposters", threeResponses(port))
	eventually(t, "created everywhere", func() string {
		for _, n := range nodes {
			if status, body := get(n.admin + fmt.Sprintf("/imposters/%d", port)); status != 200 {
				return fmt.Sprintf("%s: %d %s", n.host, status, body)
			}
		}
		return ""
	})
	var want []string
	for i := 0; i < 6; i++ {
		n := nodes[i%3]
		path := fmt.Sprintf("/cycle-%d-%s", i, n.host)
		if i%3 == 0 {
			path = "/plain"
		}
		mustDo(t, 200, "GET", n.url(port)+path, "")
		want = append(want, path)
	}
	mustDo(t, 200, "GET", nodes[2].url(port)+"/plain", "")
	mustDo(t, 200, "GET", nodes[1].url(port)+"/plain", "")
	want = append(want, "/plain", "/plain")
	for _, n := range nodes {
		s := readState(t, n, port)
		var paths []string
		for _, r := range s.Requests {
			paths = append(paths, r.Path)
		}
		if strings.Join(paths, " ") != strings.Join(want, " ") {
			t.Errorf("%s: requests = %v, want %v", n.host, paths, want)
		}
	}
	// Counts reach the store every 100 ms: poll.
	eventually(t, "cluster-wide counts", func() string {
		for _, n := range nodes {
			s := readState(t, n, port)
			if s.NumberOfRequests != 8 || len(s.Stubs) != 2 || s.Stubs[0].Hits != 4 || s.Stubs[1].Hits != 4 {
				return fmt.Sprintf("%s: numberOfRequests %d, stubs %+v; want 8 and hits 4, 4", n.host, s.NumberOfRequests, s.Stubs)
			}
			var v struct {
				Passed    bool `json:"passed"`
				Imposters []struct {
					Stubs []struct {
						Hits   int    `json:"hits"`
						Status string `json:"status"`
					} `json:"stubs"`
				} `json:"imposters"`
			}
			body := mustDo(t, 200, "GET", n.admin+"/verify", "")
			if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.Imposters) != 1 || len(v.Imposters[0].Stubs) != 2 {
				return body
			}
			if st := v.Imposters[0].Stubs[1]; st.Hits != 4 || st.Status != "passed" {
				return fmt.Sprintf("%s: GET /verify: the stub expecting 4 requests has %d, %s", n.host, st.Hits, st.Status)
			}
		}
		return ""
	})
	// The counts reached the store (above): clearing through one node clears every node's.
	mustDo(t, 200, "DELETE", nodes[0].admin+fmt.Sprintf("/imposters/%d/savedRequests", port), "")
	mustDo(t, 200, "GET", nodes[1].url(port)+"/plain", "")
	eventually(t, "cleared on every node", func() string {
		for _, n := range nodes {
			s := readState(t, n, port)
			if s.NumberOfRequests != 1 || len(s.Requests) != 1 || s.Stubs[1].Hits != 1 || s.Stubs[0].Hits != 0 {
				return fmt.Sprintf("%s after clearing and one request: %+v", n.host, s)
			}
		}
		return ""
	})
}

// TestCyclesGoOnWithoutTheStore stops Redis: each node goes on cycling on its own, and every
// node still answers.
func TestCyclesGoOnWithoutTheStore(t *testing.T) {
	r := startRedis(t)
	nodes := startCluster(t, r.url())
	port := freePort(t)
	mustDo(t, 201, "POST", nodes[0].admin+"/imposters", threeResponses(port))
	eventually(t, "created everywhere", func() string { return served(nodes, port, "/plain", "plain") })
	r.stop()
	for _, n := range nodes {
		var got []string
		for i := 0; i < 3; i++ {
			got = append(got, mustDo(t, 200, "GET", n.url(port)+"/cycle", ""))
		}
		seen := map[string]bool{}
		for _, g := range got {
			seen[g] = true
		}
		if len(seen) != 3 {
			t.Errorf("%s without the store: three requests got %v, want each of a, b, c once", n.host, got)
		}
	}
}
