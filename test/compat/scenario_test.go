package compat

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// scenario is one file in scenarios/: a short story told to both engines.
type scenario struct {
	Name        string   `json:"-"` // file name without .json
	Description string   `json:"description"`
	Flags       []string `json:"flags,omitempty"`
	// Pending names the open issue that will make mockd pass this scenario. Mountebank still runs
	// it; on mockd a difference skips the scenario (logged) and a pass fails it, so the field is
	// removed as soon as the feature lands.
	Pending string `json:"pending,omitempty"`
	Steps   []step `json:"steps"`
	// mbMayCrash: a generated case, where Mountebank's process ending is skipped, not failed
	// (PRODUCT.md: mockd answers 400 to what ends Mountebank's process, so there is nothing
	// to compare).
	mbMayCrash bool
}

// step is either an admin API call or a request to an imposter, plus the
// options that say how to compare it.
type step struct {
	Note  string     `json:"note,omitempty"`
	Admin *adminStep `json:"admin,omitempty"`
	HTTP  *httpStep  `json:"http,omitempty"`
	TCP   *tcpStep   `json:"tcp,omitempty"`
	SMTP  *smtpStep  `json:"smtp,omitempty"`
	File  *fileStep  `json:"file,omitempty"`

	// Ignore lists paths into the compared answer (status, headers.<name>,
	// body.<path>) that legitimately differ; "[*]" matches every element.
	Ignore []string `json:"ignore,omitempty"`
	// Exact compares the body byte for byte even when both sides are JSON
	// (for imposter bodies, where the serialisation is the product).
	Exact bool `json:"exact,omitempty"`
	// ExpectStatus, when set, must be what Mountebank answers: it guards
	// the scenario itself against typos that make every step an error.
	ExpectStatus int `json:"expectStatus,omitempty"`
	// BodyLines, a regular expression, compares only the lines of a text body that match it, sorted
	// (and not Content-Length): for answers such as GET /metrics, most of which differs
	// between any two servers.
	BodyLines string `json:"bodyLines,omitempty"`
	// Capture names values of this engine's answer (by path, e.g.
	// "body.port") for later steps as ${name}; answers are normalised so
	// the captured value reads as ${name} on both sides.
	Capture map[string]string `json:"capture,omitempty"`
}

// fileStep writes a file into the engine's working directory (say, the CSV of a lookup written
// after the imposter that reads it). Its answer is empty on both engines.
type fileStep struct {
	Path    string `json:"path"` // relative, inside the working directory
	Content string `json:"content"`
}

// write writes the file into dir.
func (f *fileStep) write(dir string) exchange {
	if filepath.IsAbs(f.Path) || strings.HasPrefix(filepath.Clean(f.Path), "..") {
		return exchange{Err: "file: the path must be relative, inside the working directory: " + f.Path}
	}
	if err := os.WriteFile(filepath.Join(dir, f.Path), []byte(f.Content), 0o644); err != nil {
		return exchange{Err: "file: " + err.Error()}
	}
	return exchange{}
}

type adminStep struct {
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Headers orderedHeaders  `json:"headers,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
	RawBody *string         `json:"rawBody,omitempty"`
}

type httpStep struct {
	Port    json.RawMessage `json:"port"` // a number or "${name}"
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Headers orderedHeaders  `json:"headers,omitempty"`
	// Body is sent as is when it is a JSON string, otherwise as compact JSON.
	Body json.RawMessage `json:"body,omitempty"`
	// Base64Body is decoded and sent as is (binary request bodies).
	Base64Body string `json:"base64Body,omitempty"`
	// Gzip compresses the body and adds Content-Encoding: gzip.
	Gzip bool `json:"gzip,omitempty"`
	// HTTPS speaks TLS to the imposter, without verifying its certificate.
	HTTPS bool `json:"https,omitempty"`
	// ClientCert and ClientKey, PEM text, are the client certificate offered for mutual TLS.
	ClientCert string `json:"clientCert,omitempty"`
	ClientKey  string `json:"clientKey,omitempty"`
	// Reason compares the status line's reason phrase too.
	Reason bool `json:"reason,omitempty"`
}

// tlsConfig is the client configuration for an https step (nil for plain http).
func (h *httpStep) tlsConfig() (*tls.Config, error) {
	if !h.HTTPS {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // imposters serve self-signed certificates
	if h.ClientCert != "" {
		pair, err := tls.X509KeyPair([]byte(h.ClientCert), []byte(h.ClientKey))
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func loadScenarios(dir string) ([]scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := make([]scenario, 0, len(files))
	for _, f := range files {
		sc, err := loadScenario(f)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func loadScenario(file string) (scenario, error) {
	var sc scenario
	data, err := os.ReadFile(file)
	if err != nil {
		return sc, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, fmt.Errorf("%s: %w", file, err)
	}
	sc.Name = strings.TrimSuffix(filepath.Base(file), ".json")
	if sc.Description == "" {
		return sc, fmt.Errorf("%s: description is required", file)
	}
	if len(sc.Steps) == 0 {
		return sc, fmt.Errorf("%s: no steps", file)
	}
	for i, st := range sc.Steps {
		if st.kinds() != 1 {
			return sc, fmt.Errorf("%s: step %d: exactly one of admin, http, tcp, smtp is required", file, i+1)
		}
		if _, err := regexp.Compile(st.BodyLines); err != nil {
			return sc, fmt.Errorf("%s: step %d: bodyLines: %w", file, i+1, err)
		}
		for _, p := range st.Ignore {
			if _, err := parsePath(p); err != nil {
				return sc, fmt.Errorf("%s: step %d: ignore %q: %w", file, i+1, p, err)
			}
		}
		if t := st.TCP; t != nil && t.Fill != nil && t.Packets != nil {
			return sc, fmt.Errorf("%s: step %d: fill goes with data, not packets", file, i+1)
		}
		if h := st.HTTP; h != nil {
			if (h.ClientCert != "") != (h.ClientKey != "") {
				return sc, fmt.Errorf("%s: step %d: clientCert and clientKey go together", file, i+1)
			}
			if h.ClientCert != "" && !h.HTTPS {
				return sc, fmt.Errorf("%s: step %d: clientCert needs \"https\": true", file, i+1)
			}
			if _, err := h.tlsConfig(); err != nil {
				return sc, fmt.Errorf("%s: step %d: %w", file, i+1, err)
			}
		}
		var p int
		if port := st.imposterPort(); port != nil && json.Unmarshal(port, &p) == nil && (p < imposterPortLow || p > imposterPortHigh) {
			return sc, fmt.Errorf("%s: step %d: imposter port %d outside %d-%d", file, i+1, p, imposterPortLow, imposterPortHigh)
		}
	}
	return sc, nil
}

// flagKey identifies the server a scenario needs.
func (sc scenario) flagKey() string {
	f := append([]string(nil), sc.Flags...)
	sort.Strings(f)
	return strings.Join(f, " ")
}

// Scenarios use fixed imposter ports in this range; admin ports come from
// the rest of the suite's range (see servers_test.go). The range lies below
// Linux's ephemeral ports (32768–60999): in that range any outgoing
// connection on the machine may hold a scenario's port for a while, and the
// scenario then fails with "port still in use".
const (
	imposterPortLow  = 26000
	imposterPortHigh = 26899
)

var portField = regexp.MustCompile(`"port"\s*:\s*(\d+)`)

// ports lists the literal imposter ports a scenario uses, so the runner can
// wait for them to be free before handing the scenario to the next engine.
func (sc scenario) ports() []int {
	seen := map[int]bool{}
	for _, st := range sc.Steps {
		if st.Admin != nil {
			for _, m := range portField.FindAllSubmatch(st.Admin.Body, -1) {
				n, _ := strconv.Atoi(string(m[1]))
				seen[n] = true
			}
			if st.Admin.RawBody != nil {
				for _, m := range portField.FindAllStringSubmatch(*st.Admin.RawBody, -1) {
					n, _ := strconv.Atoi(m[1])
					seen[n] = true
				}
			}
		}
		if port := st.imposterPort(); port != nil {
			var n int
			if json.Unmarshal(port, &n) == nil {
				seen[n] = true
			}
		}
	}
	out := make([]int, 0, len(seen))
	for p := range seen {
		if p >= imposterPortLow && p <= imposterPortHigh {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// vars are the values captured by earlier steps for one engine.
type vars map[string]string

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${name} in s. In JSON text a quoted "${name}" whose value
// is a number becomes that number.
func (v vars) expand(s string, jsonText bool) (string, error) {
	var missing []string
	if jsonText {
		s = regexp.MustCompile(`"\$\{([A-Za-z_][A-Za-z0-9_]*)\}"`).ReplaceAllStringFunc(s, func(m string) string {
			name := m[3 : len(m)-2]
			val, ok := v[name]
			if !ok {
				return m
			}
			if _, err := strconv.Atoi(val); err == nil {
				return val
			}
			b, _ := json.Marshal(val)
			return string(b)
		})
	}
	s = varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		val, ok := v[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return val
	})
	if len(missing) > 0 {
		return s, fmt.Errorf("undefined variable(s) %s", strings.Join(missing, ", "))
	}
	return s, nil
}

// buildRequest turns a step into the request for one engine.
func (st step) buildRequest(adminAddr string, v vars) (addr string, req rawRequest, err error) {
	if a := st.Admin; a != nil {
		req.Method = a.Method
		if req.Target, err = v.expand(a.Path, false); err != nil {
			return
		}
		addr = adminAddr
		switch {
		case a.RawBody != nil:
			var s string
			if s, err = v.expand(*a.RawBody, false); err != nil {
				return
			}
			req.Body = []byte(s)
		case len(a.Body) > 0:
			var s string
			if s, err = v.expand(string(a.Body), true); err != nil {
				return
			}
			req.Body = []byte(s)
			if !hasHeader(a.Headers, "Content-Type") {
				req.Headers = append(req.Headers, header{"Content-Type", "application/json"})
			}
		}
		req.Headers = append(req.Headers, a.Headers...)
		return
	}

	h := st.HTTP
	var port string
	if err = json.Unmarshal(h.Port, &port); err != nil {
		port = string(h.Port)
	}
	if port, err = v.expand(port, false); err != nil {
		return
	}
	addr = "127.0.0.1:" + port
	if req.TLS, err = h.tlsConfig(); err != nil {
		return
	}
	req.Method = h.Method
	if req.Target, err = v.expand(h.Path, false); err != nil {
		return
	}
	switch {
	case h.Base64Body != "":
		req.Body, err = decodeBase64(h.Base64Body)
		if err != nil {
			return
		}
	case len(h.Body) > 0:
		var s string
		if json.Unmarshal(h.Body, &s) != nil {
			var buf bytes.Buffer
			if err = json.Compact(&buf, h.Body); err != nil {
				return
			}
			s = buf.String()
		}
		req.Body = []byte(s)
	}
	req.Headers = append([]header(nil), h.Headers...)
	if h.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(req.Body) //nolint:errcheck // writes to a bytes.Buffer cannot fail
		zw.Close()         //nolint:errcheck // as above
		req.Body = buf.Bytes()
		if !hasHeader(h.Headers, "Content-Encoding") {
			req.Headers = append(req.Headers, header{"Content-Encoding", "gzip"})
		}
	}
	return
}

// orderedHeaders are request headers in the order and spelling the
// scenario gives them; a value may be an array to send the header once per
// element.
type orderedHeaders []header

func (o *orderedHeaders) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("headers must be an object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			*o = append(*o, header{name, one})
		case json.Unmarshal(raw, &many) == nil:
			for _, v := range many {
				*o = append(*o, header{name, v})
			}
		default:
			return fmt.Errorf("header %q: value must be a string or an array of strings", name)
		}
	}
	_, err := dec.Token()
	return err
}

func hasHeader(hs orderedHeaders, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// describe is a one-line summary of a step for logs and golden files.
func (st step) describe() string {
	if st.Admin != nil {
		return fmt.Sprintf("admin %s %s", st.Admin.Method, st.Admin.Path)
	}
	switch {
	case st.File != nil:
		return "file " + st.File.Path
	case st.TCP != nil:
		return fmt.Sprintf("tcp :%s", strings.Trim(string(st.TCP.Port), `"`))
	case st.SMTP != nil:
		return fmt.Sprintf("smtp :%s", strings.Trim(string(st.SMTP.Port), `"`))
	}
	scheme := "http"
	if st.HTTP.HTTPS {
		scheme = "https"
	}
	return fmt.Sprintf("%s %s :%s%s", scheme, st.HTTP.Method, strings.Trim(string(st.HTTP.Port), `"`), st.HTTP.Path)
}

// kinds counts the kinds of request a step names (exactly one is valid).
func (st step) kinds() int {
	n := 0
	for _, set := range []bool{st.Admin != nil, st.HTTP != nil, st.TCP != nil, st.SMTP != nil, st.File != nil} {
		if set {
			n++
		}
	}
	return n
}

// imposterPort is the port an imposter step talks to (nil for admin steps).
func (st step) imposterPort() json.RawMessage {
	switch {
	case st.HTTP != nil:
		return st.HTTP.Port
	case st.TCP != nil:
		return st.TCP.Port
	case st.SMTP != nil:
		return st.SMTP.Port
	}
	return nil
}
