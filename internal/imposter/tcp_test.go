package imposter

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func TestTCPPredicatesFor(t *testing.T) {
	req := (&request.Request{TCP: true}).SetDataText("d")
	req.SetClient("1.2.3.4", "1.2.3.4:5")
	tests := []struct{ gens, want string }{
		{`[{"matches":{"data":true}}]`, `[{"deepEquals":{"data":"d"}}]`},
		{`[{"matches":{"data":true},"caseSensitive":true}]`, `[{"caseSensitive":true,"deepEquals":{"data":"d"}}]`},
		{`[{"matches":{"data":true},"predicateOperator":"exists"}]`, `[{"exists":{"requestFrom":true,"ip":true,"data":true}}]`},
		{`[{"matches":{"data":true},"predicateOperator":"contains"}]`, `[{"contains":{"requestFrom":"1.2.3.4:5","ip":"1.2.3.4","data":"d"}}]`},
		{`[{"matches":{"nope":true}}]`, `[{"deepEquals":{}}]`},
	}
	for _, tt := range tests {
		v, err := config.ParseJSON([]byte(tt.gens))
		if err != nil {
			t.Fatal(err)
		}
		p, cerr := compileTCPProxy(config.NewObject("to", "tcp://127.0.0.1:1", "predicateGenerators", v))
		if cerr != nil {
			t.Fatal(cerr)
		}
		if got := string(config.MarshalJSON(tcpPredicatesFor(req, p.generators), 0)); got != tt.want {
			t.Errorf("predicateGenerators %s: got %s, want %s", tt.gens, got, tt.want)
		}
	}
}
