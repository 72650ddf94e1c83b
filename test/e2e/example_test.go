package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestExampleConfig serves configs/example.yaml (the README's first command) and walks its API.
func TestExampleConfig(t *testing.T) {
	port := listenFree(t)
	t.Setenv("USERS_PORT", strconv.Itoa(port))
	start(t, "-c", "../../configs/example.yaml")
	base := "http://127.0.0.1:" + strconv.Itoa(port)

	user42, err := os.ReadFile("../../configs/bodies/user-42.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		method     string
		path, body string
		headers    []string
		wantStatus int
		wantBody   string // exact, or a substring when prefixed with "~"
	}{
		{"health", "GET", "/health", "", nil, 200, "ok"},
		{"bodyFile", "GET", "/users/42", "", nil, 200, string(user42)},
		{"regex path", "GET", "/users/7", "", nil, 200, "{\n    \"id\": 0,\n    \"name\": \"Somebody\"\n}"},
		{"query, case-insensitive", "GET", "/users?ROLE=Admin", "", nil, 200, "~\"Ada\""},
		{"exists on JSON body", "POST", "/users", `{"email":"x@y.z"}`, []string{"Content-Type", "application/json"}, 201, "~43"},
		{"fallback stub", "POST", "/users", `{"name":"x"}`, nil, 400, "~email is required"},
		{"not + startsWith header", "GET", "/orders", "", nil, 401, "~unauthorized"},
		{"jsonpath", "POST", "/orders", `{"sku":"A-100","qty":1}`, []string{"Authorization", "Bearer t"}, 201, "~1001"},
		{"xpath", "POST", "/legacy/orders", `<order shipping="express"><id>1</id></order>`, []string{"Authorization", "Bearer t"}, 200, `<ack shipping="express"/>`},
		{"or", "DELETE", "/orders/8", "", []string{"Authorization", "Bearer t"}, 204, ""},
		{"default response", "GET", "/nothing/here", "", nil, 404, "{\n    \"error\": \"not found\"\n}"},
	}
	for _, tt := range tests {
		status, _, body := do(t, tt.method, base+tt.path, tt.body, tt.headers...)
		ok := status == tt.wantStatus
		if strings.HasPrefix(tt.wantBody, "~") {
			ok = ok && strings.Contains(body, tt.wantBody[1:])
		} else {
			ok = ok && body == tt.wantBody
		}
		if !ok {
			t.Errorf("%s: %s %s → %d %q, want %d %q", tt.name, tt.method, tt.path, status, body, tt.wantStatus, tt.wantBody)
		}
	}

	// Response cycling: page 1, page 2, page 1.
	for i, want := range []string{`"page": 1`, `"page": 2`, `"page": 1`} {
		_, _, body := do(t, "GET", base+"/orders", "", "Authorization", "Bearer t")
		if !strings.Contains(body, want) {
			t.Errorf("GET /orders #%d = %q, want it to contain %q", i+1, body, want)
		}
	}
	// repeat: 503 twice, then 200.
	for i, want := range []int{503, 503, 200, 503} {
		if status, _, _ := do(t, "GET", base+"/payments/status", ""); status != want {
			t.Errorf("GET /payments/status #%d = %d, want %d", i+1, status, want)
		}
	}
}
