// Package client is a typed Go client of Mountebank's REST API, as mockd and Mountebank 2.9.1
// serve it: imposters, stubs, recorded requests, save and replay, config and logs.
//
// A Client is safe for concurrent use. Every method takes a context that bounds the request.
// An answer with an error status returns an *Error carrying Mountebank's error codes.
//
//	c := client.New("http://localhost:2525")
//	imp, err := c.CreateImposter(ctx, client.Imposter{Protocol: "http", Stubs: []client.Stub{{
//		Responses: []client.Response{{Is: &client.Is{StatusCode: 200, Body: "hello"}}},
//	}}})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client talks to one mockd or Mountebank admin API.
type Client struct {
	base   string
	http   *http.Client
	apiKey string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with hc instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithAPIKey sends key in the x-api-key header (the server's --apikey).
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// New returns a client of the admin API at baseURL, e.g. "http://localhost:2525".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL returns the admin API's URL the client was made with.
func (c *Client) BaseURL() string { return c.base }

// Error is an answer with an error status, with the errors Mountebank's API lists.
type Error struct {
	StatusCode int
	Errors     []ErrorDetail
	// Body is the answer as received, when it was not Mountebank's error JSON.
	Body string
}

// ErrorDetail is one entry of Mountebank's {"errors": [...]}.
type ErrorDetail struct {
	// Code is e.g. "bad data", "invalid injection", "no such resource", "resource conflict".
	Code    string `json:"code"`
	Message string `json:"message"`
	// Source is the offending part of the request, when the server names it.
	Source json.RawMessage `json:"source,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Errors) == 0 {
		return fmt.Sprintf("mountebank API: status %d: %s", e.StatusCode, strings.TrimSpace(e.Body))
	}
	msgs := make([]string, len(e.Errors))
	for i, d := range e.Errors {
		msgs[i] = d.Code + ": " + d.Message
	}
	return fmt.Sprintf("mountebank API: status %d: %s", e.StatusCode, strings.Join(msgs, "; "))
}

// Code returns the code of the first error, or "" when there is none.
func (e *Error) Code() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

// ListOptions tune the reading and deleting of imposters.
type ListOptions struct {
	// Replayable leaves out what the server added (requests, _links, matches): what you would
	// send to create the imposters again.
	Replayable bool
	// RemoveProxies leaves out proxy responses (and stubs left with no response).
	RemoveProxies bool
}

func (o ListOptions) query() string {
	q := url.Values{}
	if o.Replayable {
		q.Set("replayable", "true")
	}
	if o.RemoveProxies {
		q.Set("removeProxies", "true")
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

type imposterList struct {
	Imposters []Imposter `json:"imposters"`
}

// CreateImposter creates an imposter (POST /imposters) and returns it as the server holds it,
// with its port when imp.Port was 0.
func (c *Client) CreateImposter(ctx context.Context, imp Imposter) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodPost, "/imposters", imp, &out)
}

// Imposters lists every imposter (GET /imposters). Without Replayable the list is a summary
// (protocol, port, name, numberOfRequests): read one imposter for its stubs and requests.
func (c *Client) Imposters(ctx context.Context, opts ListOptions) ([]Imposter, error) {
	var out imposterList
	return out.Imposters, c.do(ctx, http.MethodGet, "/imposters"+opts.query(), nil, &out)
}

// ReplaceImposters replaces every imposter with imps in one step (PUT /imposters): on an error
// nothing changes.
func (c *Client) ReplaceImposters(ctx context.Context, imps []Imposter) ([]Imposter, error) {
	if imps == nil {
		imps = []Imposter{}
	}
	var out imposterList
	return out.Imposters, c.do(ctx, http.MethodPut, "/imposters", imposterList{Imposters: imps}, &out)
}

// DeleteImposters deletes every imposter (DELETE /imposters) and returns them as they were
// (replayable unless opts say otherwise, as Mountebank).
func (c *Client) DeleteImposters(ctx context.Context, opts ListOptions) ([]Imposter, error) {
	var out imposterList
	return out.Imposters, c.do(ctx, http.MethodDelete, "/imposters"+opts.query(), nil, &out)
}

// Imposter returns one imposter with its stubs and recorded requests (GET /imposters/:port).
func (c *Client) Imposter(ctx context.Context, port int, opts ListOptions) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodGet, imposterPath(port)+opts.query(), nil, &out)
}

// DeleteImposter deletes one imposter (DELETE /imposters/:port) and returns it as it was, or
// nil when there was none (Mountebank answers 200 {} then).
func (c *Client) DeleteImposter(ctx context.Context, port int, opts ListOptions) (*Imposter, error) {
	var out Imposter
	if err := c.do(ctx, http.MethodDelete, imposterPath(port)+opts.query(), nil, &out); err != nil {
		return nil, err
	}
	if out.Protocol == "" {
		return nil, nil
	}
	return &out, nil
}

// AddStub adds a stub at the end of an imposter's stubs (POST /imposters/:port/stubs).
func (c *Client) AddStub(ctx context.Context, port int, stub Stub) (*Imposter, error) {
	var out Imposter
	body := struct {
		Stub Stub `json:"stub"`
	}{stub}
	return &out, c.do(ctx, http.MethodPost, imposterPath(port)+"/stubs", body, &out)
}

// InsertStub adds a stub before the one at index (POST /imposters/:port/stubs with an index).
func (c *Client) InsertStub(ctx context.Context, port, index int, stub Stub) (*Imposter, error) {
	var out Imposter
	body := struct {
		Index int  `json:"index"`
		Stub  Stub `json:"stub"`
	}{index, stub}
	return &out, c.do(ctx, http.MethodPost, imposterPath(port)+"/stubs", body, &out)
}

// ReplaceStubs replaces all stubs of an imposter (PUT /imposters/:port/stubs).
func (c *Client) ReplaceStubs(ctx context.Context, port int, stubs []Stub) (*Imposter, error) {
	if stubs == nil {
		stubs = []Stub{}
	}
	var out Imposter
	body := struct {
		Stubs []Stub `json:"stubs"`
	}{stubs}
	return &out, c.do(ctx, http.MethodPut, imposterPath(port)+"/stubs", body, &out)
}

// ReplaceStub replaces the stub at index (PUT /imposters/:port/stubs/:index).
func (c *Client) ReplaceStub(ctx context.Context, port, index int, stub Stub) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodPut, imposterPath(port)+"/stubs/"+strconv.Itoa(index), stub, &out)
}

// DeleteStub deletes the stub at index (DELETE /imposters/:port/stubs/:index).
func (c *Client) DeleteStub(ctx context.Context, port, index int) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodDelete, imposterPath(port)+"/stubs/"+strconv.Itoa(index), nil, &out)
}

// Requests returns the requests an imposter recorded, oldest first (from GET /imposters/:port).
func (c *Client) Requests(ctx context.Context, port int) ([]Request, error) {
	imp, err := c.Imposter(ctx, port, ListOptions{})
	if err != nil {
		return nil, err
	}
	return imp.Requests, nil
}

// DeleteSavedRequests empties an imposter's journal and its request count
// (DELETE /imposters/:port/savedRequests).
func (c *Client) DeleteSavedRequests(ctx context.Context, port int) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodDelete, imposterPath(port)+"/savedRequests", nil, &out)
}

// DeleteSavedProxyResponses removes the stubs a proxy recorded
// (DELETE /imposters/:port/savedProxyResponses).
func (c *Client) DeleteSavedProxyResponses(ctx context.Context, port int) (*Imposter, error) {
	var out Imposter
	return &out, c.do(ctx, http.MethodDelete, imposterPath(port)+"/savedProxyResponses", nil, &out)
}

// Save returns every imposter in replayable form, as `mb save` writes it
// (GET /imposters?replayable=true, with removeProxies when asked).
func (c *Client) Save(ctx context.Context, removeProxies bool) ([]Imposter, error) {
	return c.Imposters(ctx, ListOptions{Replayable: true, RemoveProxies: removeProxies})
}

// Replay switches from recording to replaying, as `mb replay` does: it reads every imposter
// without its proxies and puts them back in place of the running ones.
func (c *Client) Replay(ctx context.Context) ([]Imposter, error) {
	imps, err := c.Save(ctx, true)
	if err != nil {
		return nil, err
	}
	return c.ReplaceImposters(ctx, imps)
}

// Verify asks mockd for its verdict (GET /verify, or GET /imposters/:port/verify when port is
// not 0): unmet expectations, unused stubs (allowed with allowUnused) and requests that matched
// no stub. Mountebank has no such endpoint.
func (c *Client) Verify(ctx context.Context, port int, allowUnused bool) (*Verdict, error) {
	path := "/verify"
	if port != 0 {
		path = imposterPath(port) + "/verify"
	}
	if allowUnused {
		path += "?allowUnused=true"
	}
	var out Verdict
	return &out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Config returns the server's version and options (GET /config).
func (c *Client) Config(ctx context.Context) (*ServerConfig, error) {
	var out ServerConfig
	return &out, c.do(ctx, http.MethodGet, "/config", nil, &out)
}

// Logs returns the server's log entries from startIndex to endIndex, both included
// (GET /logs); a negative index leaves that end open.
func (c *Client) Logs(ctx context.Context, startIndex, endIndex int) ([]LogEntry, error) {
	q := url.Values{}
	if startIndex >= 0 {
		q.Set("startIndex", strconv.Itoa(startIndex))
	}
	if endIndex >= 0 {
		q.Set("endIndex", strconv.Itoa(endIndex))
	}
	path := "/logs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Logs []LogEntry `json:"logs"`
	}
	return out.Logs, c.do(ctx, http.MethodGet, path, nil, &out)
}

func imposterPath(port int) string { return "/imposters/" + strconv.Itoa(port) }

// do sends one request with body as JSON (nil: none) and decodes a 2xx answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: cannot encode request: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := &Error{StatusCode: resp.StatusCode}
		var list struct {
			Errors []ErrorDetail `json:"errors"`
		}
		if json.Unmarshal(data, &list) == nil && len(list.Errors) > 0 {
			apiErr.Errors = list.Errors
		} else {
			apiErr.Body = string(data)
		}
		return apiErr
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: answer is not the expected JSON: %w", method, path, err)
	}
	return nil
}
