package client

import "encoding/json"

// Imposter is one mock server as Mountebank's API describes it. The same type is sent to create
// an imposter and read back from the API; fields the server fills in (NumberOfRequests,
// Requests) are ignored when sending.
type Imposter struct {
	// Protocol is "http", "https", "tcp" or "smtp". Required.
	Protocol string `json:"protocol"`
	// Port is the imposter's port; 0 lets the server pick a free one (read it back from the answer).
	Port int `json:"port,omitempty"`
	// Host, when set, is the address the imposter binds to instead of the server's --host.
	Host string `json:"host,omitempty"`
	// Name is a label shown in logs and the API.
	Name string `json:"name,omitempty"`
	// RecordRequests keeps every request in the imposter's journal (Requests).
	RecordRequests bool `json:"recordRequests,omitempty"`
	// AllowCORS answers CORS preflight requests.
	AllowCORS bool `json:"allowCORS,omitempty"`
	// DefaultResponse is what a request that matches no stub gets (Mountebank: 200, empty body).
	DefaultResponse *Is `json:"defaultResponse,omitempty"`
	// Stubs are tried in order; a request gets the first whose predicates all match.
	Stubs []Stub `json:"stubs,omitempty"`

	// Mode is "text" (default) or "binary" for tcp imposters (base64 data).
	Mode string `json:"mode,omitempty"`
	// EndOfRequestResolver tells a tcp imposter where a request ends (JavaScript).
	EndOfRequestResolver *Inject `json:"endOfRequestResolver,omitempty"`

	// Key and Cert are the PEM key and certificate of an https imposter (built-in when empty).
	Key  string `json:"key,omitempty"`
	Cert string `json:"cert,omitempty"`
	// MutualAuth together with RejectUnauthorized asks clients for a certificate.
	MutualAuth         bool `json:"mutualAuth,omitempty"`
	RejectUnauthorized bool `json:"rejectUnauthorized,omitempty"`
	// Ciphers restricts the TLS cipher suites (OpenSSL names).
	Ciphers string `json:"ciphers,omitempty"`

	// NumberOfRequests counts the requests the imposter received (read only).
	NumberOfRequests int `json:"numberOfRequests,omitempty"`
	// Requests is the journal: the recorded requests, oldest first (read only; needs
	// RecordRequests or the server's --mock).
	Requests []Request `json:"requests,omitempty"`
}

// Inject holds a JavaScript function as text.
type Inject struct {
	Inject string `json:"inject"`
}

// Stub pairs predicates with the responses a matching request gets, in turn.
type Stub struct {
	// Predicates must all match; none matches every request.
	Predicates []Predicate `json:"predicates,omitempty"`
	// Responses are used one after another (each Repeat times), then from the start again.
	Responses []Response `json:"responses"`
	// ScenarioName is a label (Mountebank ignores it but keeps it).
	ScenarioName string `json:"scenarioName,omitempty"`
	// Matches lists the requests this stub matched, when the server runs with --debug (read only).
	Matches []json.RawMessage `json:"matches,omitempty"`
	// Expect is how many requests the stub must answer for Verify to pass (mockd only;
	// Mountebank ignores it).
	Expect *Expect `json:"expect,omitempty"`
}

// Expect is a stub's expectation: exactly Times requests, or at least AtLeast and/or at most
// AtMost. ExpectTimes, ExpectAtLeast, ExpectAtMost and ExpectBetween make one.
type Expect struct {
	Times   *int `json:"times,omitempty"`
	AtLeast *int `json:"atLeast,omitempty"`
	AtMost  *int `json:"atMost,omitempty"`
}

// ExpectTimes expects exactly n requests.
func ExpectTimes(n int) *Expect { return &Expect{Times: &n} }

// ExpectAtLeast expects n requests or more.
func ExpectAtLeast(n int) *Expect { return &Expect{AtLeast: &n} }

// ExpectAtMost expects n requests or fewer.
func ExpectAtMost(n int) *Expect { return &Expect{AtMost: &n} }

// ExpectBetween expects from min to max requests, both included.
func ExpectBetween(min, max int) *Expect { return &Expect{AtLeast: &min, AtMost: &max} }

// Verdict is mockd's answer to GET /verify: whether every stub's expectation was met, every
// stub was used (unless allowed otherwise) and every request matched a stub.
type Verdict struct {
	Passed    bool              `json:"passed"`
	Summary   VerdictSummary    `json:"summary"`
	Imposters []ImposterVerdict `json:"imposters"`
}

// VerdictSummary counts what a verdict found.
type VerdictSummary struct {
	Expectations       int `json:"expectations"`
	ExpectationsFailed int `json:"expectationsFailed"`
	UnusedStubs        int `json:"unusedStubs"`
	UnmatchedRequests  int `json:"unmatchedRequests"`
}

// ImposterVerdict is the verdict on one imposter.
type ImposterVerdict struct {
	Port     int           `json:"port"`
	Protocol string        `json:"protocol"`
	Name     string        `json:"name,omitempty"`
	Passed   bool          `json:"passed"`
	Stubs    []StubVerdict `json:"stubs"`
	// UnmatchedRequests counts the requests that matched no stub.
	UnmatchedRequests int `json:"unmatchedRequests"`
	// Unmatched lists them when the imposter records requests.
	Unmatched []UnmatchedRequest `json:"unmatched"`
}

// StubVerdict is the verdict on one stub: Status is "passed", "failed" (its expectation was
// not met; Message says how) or "unused" (no expectation and no request).
type StubVerdict struct {
	Index      int             `json:"index"`
	Predicates json.RawMessage `json:"predicates"`
	Hits       uint64          `json:"hits"`
	Expect     *Expect         `json:"expect,omitempty"`
	Status     string          `json:"status"`
	Message    string          `json:"message,omitempty"`
}

// UnmatchedRequest is a request that matched no stub, with why (the nearest stubs and what
// each failed).
type UnmatchedRequest struct {
	Request     json.RawMessage `json:"request"`
	Why         string          `json:"why"`
	Explanation json.RawMessage `json:"explanation,omitempty"`
}

// Fields are the request fields a predicate operator compares: method, path, query, headers,
// body, form, requestFrom, ip (http) or data (tcp). A value is a string, or an object for query,
// headers, form and a JSON body.
type Fields map[string]any

// Predicate is one condition on a request. Set exactly one operator (Equals … Inject); the
// remaining fields tune it.
type Predicate struct {
	Equals     Fields      `json:"equals,omitempty"`
	DeepEquals Fields      `json:"deepEquals,omitempty"`
	Contains   Fields      `json:"contains,omitempty"`
	StartsWith Fields      `json:"startsWith,omitempty"`
	EndsWith   Fields      `json:"endsWith,omitempty"`
	Matches    Fields      `json:"matches,omitempty"`
	Exists     Fields      `json:"exists,omitempty"`
	Not        *Predicate  `json:"not,omitempty"`
	Or         []Predicate `json:"or,omitempty"`
	And        []Predicate `json:"and,omitempty"`
	// Inject is a JavaScript function of the request (needs --allowInjection).
	Inject string `json:"inject,omitempty"`

	// CaseSensitive compares values with case (default false, as Mountebank).
	CaseSensitive bool `json:"caseSensitive,omitempty"`
	// Except is a regular expression removed from the values before comparing.
	Except string `json:"except,omitempty"`
	// JSONPath and XPath select part of the body to compare.
	JSONPath *Selector `json:"jsonpath,omitempty"`
	XPath    *Selector `json:"xpath,omitempty"`
	// KeyCaseSensitive compares the keys of query, headers and JSON bodies with case.
	KeyCaseSensitive bool `json:"keyCaseSensitive,omitempty"`
}

// Selector is a JSONPath or XPath selector; NS maps XML namespace prefixes to URIs.
type Selector struct {
	Selector string            `json:"selector"`
	NS       map[string]string `json:"ns,omitempty"`
}

// Response is one answer of a stub: set exactly one of Is, Proxy, Inject and Fault.
type Response struct {
	Is    *Is    `json:"is,omitempty"`
	Proxy *Proxy `json:"proxy,omitempty"`
	// Inject is a JavaScript function that returns the response (needs --allowInjection).
	Inject string `json:"inject,omitempty"`
	// Fault is "CONNECTION_RESET_BY_PEER" or "RANDOM_DATA_THEN_CLOSE".
	Fault string `json:"fault,omitempty"`
	// Repeat uses this response so many times before the next (default 1).
	Repeat int `json:"repeat,omitempty"`
	// Behaviors change the response before it is sent, in order.
	Behaviors []Behavior `json:"behaviors,omitempty"`
}

// Is is a canned response.
type Is struct {
	// StatusCode defaults to 200.
	StatusCode int `json:"statusCode,omitempty"`
	// Headers maps a name to a string or a list of strings.
	Headers map[string]any `json:"headers,omitempty"`
	// Body is a string, or any JSON value (sent as JSON).
	Body any `json:"body,omitempty"`
	// Mode is "binary" when Body (or Data) is base64.
	Mode string `json:"_mode,omitempty"`
	// Data is a tcp imposter's answer.
	Data string `json:"data,omitempty"`
}

// Proxy forwards requests to another server and can record what it answers as new stubs.
type Proxy struct {
	// To is the origin, e.g. "http://localhost:8080" or "tcp://localhost:9000".
	To string `json:"to"`
	// Mode is "proxyOnce" (default), "proxyAlways" or "proxyTransparent".
	Mode string `json:"mode,omitempty"`
	// PredicateGenerators say which request fields the recorded stubs match on.
	PredicateGenerators []PredicateGenerator `json:"predicateGenerators,omitempty"`
	// AddWaitBehavior records the origin's latency as a wait behavior.
	AddWaitBehavior bool `json:"addWaitBehavior,omitempty"`
	// AddDecorateBehavior adds this decorate function to the recorded responses.
	AddDecorateBehavior string `json:"addDecorateBehavior,omitempty"`
	// InjectHeaders are added to the proxied request.
	InjectHeaders map[string]string `json:"injectHeaders,omitempty"`
	// Cert and Key are a client certificate for the origin (mutual TLS).
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
}

// PredicateGenerator says how a proxy builds the predicates of the stubs it records.
type PredicateGenerator struct {
	// Matches names the fields to match, e.g. {"method": true, "path": true}.
	Matches           map[string]any `json:"matches,omitempty"`
	CaseSensitive     bool           `json:"caseSensitive,omitempty"`
	Except            string         `json:"except,omitempty"`
	JSONPath          *Selector      `json:"jsonpath,omitempty"`
	XPath             *Selector      `json:"xpath,omitempty"`
	PredicateOperator string         `json:"predicateOperator,omitempty"`
	Inject            string         `json:"inject,omitempty"`
	KeyCaseSensitive  bool           `json:"keyCaseSensitive,omitempty"`
}

// Behavior changes a response: set one field.
type Behavior struct {
	// Wait delays the response: milliseconds (a number) or a JavaScript function (a string).
	Wait any `json:"wait,omitempty"`
	// Copy copies part of the request into the response: {from, into, using}.
	Copy map[string]any `json:"copy,omitempty"`
	// Lookup replaces tokens with a row of a CSV file: {key, fromDataSource, into}.
	Lookup map[string]any `json:"lookup,omitempty"`
	// Decorate is a JavaScript function that edits the response (needs --allowInjection).
	Decorate string `json:"decorate,omitempty"`
	// ShellTransform is a command that rewrites the response (needs --allowInjection).
	ShellTransform string `json:"shellTransform,omitempty"`
}

// Request is one recorded request of an imposter's journal.
type Request struct {
	RequestFrom string `json:"requestFrom,omitempty"`
	IP          string `json:"ip,omitempty"`
	Method      string `json:"method,omitempty"`
	Path        string `json:"path,omitempty"`
	// Query maps a parameter to a string, or a list when it was given several times.
	Query map[string]any `json:"query,omitempty"`
	// Headers maps a header name, as sent, to a string or a list of strings.
	Headers map[string]any `json:"headers,omitempty"`
	Body    string         `json:"body,omitempty"`
	// Form holds the fields of an application/x-www-form-urlencoded body.
	Form map[string]any `json:"form,omitempty"`
	// Data is what a tcp client sent.
	Data string `json:"data,omitempty"`
	// Timestamp is when the request arrived (RFC 3339 with milliseconds).
	Timestamp string `json:"timestamp,omitempty"`
}

// ServerConfig is what GET /config reports: the server's version, its start options under
// Mountebank's flag names, and process information.
type ServerConfig struct {
	Version string         `json:"version"`
	Options map[string]any `json:"options"`
	Process map[string]any `json:"process"`
}

// LogEntry is one line of GET /logs.
type LogEntry struct {
	Level     string `json:"level"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp,omitempty"`
}
