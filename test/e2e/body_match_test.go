package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestBodyMatchingAtScale: 100 stubs told apart by a JSON body field, by a JSONPath selection
// or by an XPath selection (the shapes mockd reads without parsing the body, or finds through
// its index) answer each request from the right stub, through the real binary.
func TestBodyMatchingAtScale(t *testing.T) {
	s := start(t)
	stubs := func(pred func(i int) string) string {
		var b strings.Builder
		for i := 0; i < 100; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"predicates":[%s],"responses":[{"is":{"body":"stub %d"}}]}`, pred(i), i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		pred  func(i int) string
		body  string
		want  string
		ctype string
	}{
		{"json equals, case-insensitive", func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":"POST","body":{"orderId":"ord-%03d","qty":%d}}}`, i, i%7)
		}, `{"ORDERID":"ORD-042","qty":0,"note":"x"}`, "stub 42", "application/json"},
		{"json contains", func(i int) string {
			return fmt.Sprintf(`{"contains":{"body":{"sku":"SKU-%03d"}}}`, i)
		}, `{"sku":"sku-077-blue"}`, "stub 77", "application/json"},
		{"json escaped value (parsed)", func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":{"name":"a\"%d"}}}`, i)
		}, `{"name":"a\"13"}`, "stub 13", "application/json"},
		{"jsonpath last", func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"jsonpath":{"selector":"$.customer.id"}}`, i)
		}, `{"customer":{"id":"cust-099","tier":"gold"}}`, "stub 99", "application/json"},
		{"jsonpath array", func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"t%d"},"jsonpath":{"selector":"$.tags"}}`, i)
		}, `{"tags":["x","t64","t7"]}`, "stub 7", "application/json"},
		{"xpath last", func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"xpath":{"selector":"//customer/id"}}`, i)
		}, `<order><customer><id>cust-098</id></customer></order>`, "stub 98", "application/xml"},
		{"no stub", func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"jsonpath":{"selector":"$.customer.id"}}`, i)
		}, `{"customer":{"id":"cust-100"}}`, "", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := listenFree(t)
			imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[%s]}`, port, stubs(tc.pred))
			if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}
			status, _, body := do(t, "POST", fmt.Sprintf("http://127.0.0.1:%d/orders", port), tc.body, "Content-Type", tc.ctype)
			if status != 200 || body != tc.want {
				t.Fatalf("got %d %q, want 200 %q", status, body, tc.want)
			}
		})
	}
}
