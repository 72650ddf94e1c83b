package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fake answers every request with status and body and remembers what it was asked.
type fake struct {
	status int
	body   string
	got    []string // "METHOD /path?query body key"
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.got = append(f.got, r.Method+" "+r.URL.RequestURI()+" "+string(b)+" "+r.Header.Get("x-api-key"))
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func TestRequestsOnTheWire(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func(c *Client) error
		want string
	}{
		{"create", func(c *Client) error {
			_, err := c.CreateImposter(ctx, Imposter{Protocol: "http", Stubs: []Stub{{Responses: []Response{{Is: &Is{Body: "x"}}}}}})
			return err
		}, `POST /imposters {"protocol":"http","stubs":[{"responses":[{"is":{"body":"x"}}]}]} k`},
		{"list replayable", func(c *Client) error {
			_, err := c.Imposters(ctx, ListOptions{Replayable: true, RemoveProxies: true})
			return err
		}, "GET /imposters?removeProxies=true&replayable=true  k"},
		{"replace all with none", func(c *Client) error { _, err := c.ReplaceImposters(ctx, nil); return err },
			`PUT /imposters {"imposters":[]} k`},
		{"insert stub", func(c *Client) error {
			_, err := c.InsertStub(ctx, 4545, 1, Stub{Responses: []Response{{Fault: "CONNECTION_RESET_BY_PEER"}}})
			return err
		},
			`POST /imposters/4545/stubs {"index":1,"stub":{"responses":[{"fault":"CONNECTION_RESET_BY_PEER"}]}} k`},
		{"replace stubs", func(c *Client) error { _, err := c.ReplaceStubs(ctx, 4545, nil); return err },
			`PUT /imposters/4545/stubs {"stubs":[]} k`},
		{"replace stub", func(c *Client) error {
			_, err := c.ReplaceStub(ctx, 4545, 2, Stub{Responses: []Response{{Repeat: 2, Is: &Is{}}}})
			return err
		},
			`PUT /imposters/4545/stubs/2 {"responses":[{"is":{},"repeat":2}]} k`},
		{"delete proxies", func(c *Client) error { _, err := c.DeleteSavedProxyResponses(ctx, 4545); return err },
			"DELETE /imposters/4545/savedProxyResponses  k"},
		{"logs", func(c *Client) error { _, err := c.Logs(ctx, 2, -1); return err }, "GET /logs?startIndex=2  k"},
		{"verify", func(c *Client) error { _, err := c.Verify(ctx, 0, false); return err }, "GET /verify  k"},
		{"verify one", func(c *Client) error { _, err := c.Verify(ctx, 4545, true); return err }, "GET /imposters/4545/verify?allowUnused=true  k"},
		{"expect", func(c *Client) error {
			_, err := c.AddStub(ctx, 4545, Stub{Responses: []Response{{Is: &Is{}}}, Expect: ExpectBetween(1, 3)})
			return err
		}, `POST /imposters/4545/stubs {"stub":{"responses":[{"is":{}}],"expect":{"atLeast":1,"atMost":3}}} k`},
	}
	for _, tt := range tests {
		f := &fake{status: 200, body: "{}"}
		srv := httptest.NewServer(f)
		err := tt.call(New(srv.URL+"/", WithAPIKey("k")))
		srv.Close()
		if err != nil || len(f.got) != 1 || f.got[0] != tt.want {
			t.Errorf("%s: sent %q (err %v), want %q", tt.name, f.got, err, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		status   int
		body     string
		wantCode string
		wantText string
	}{
		{404, `{"errors": [{"code": "no such resource", "message": "Try POSTing to /imposters first?"}]}`, "no such resource",
			"mountebank API: status 404: no such resource: Try POSTing to /imposters first?"},
		{401, "Unauthorized", "", "mountebank API: status 401: Unauthorized"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(&fake{status: tt.status, body: tt.body})
		_, err := New(srv.URL).Imposter(ctx, 4545, ListOptions{})
		srv.Close()
		var apiErr *Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status || apiErr.Code() != tt.wantCode || err.Error() != tt.wantText {
			t.Errorf("answer %d %s: got %v, want code %q and %q", tt.status, tt.body, err, tt.wantCode, tt.wantText)
		}
	}
	srv := httptest.NewServer(&fake{status: 200, body: "{}"})
	defer srv.Close()
	if imp, err := New(srv.URL).DeleteImposter(ctx, 4545, ListOptions{}); imp != nil || err != nil {
		t.Errorf("DeleteImposter of a missing imposter = %v, %v; want nil, nil", imp, err)
	}
	srv.Config.Handler = &fake{status: 200, body: "not json"}
	if _, err := New(srv.URL).Config(ctx); err == nil {
		t.Error("Config with a non-JSON answer: want an error")
	}
}
