package compat

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"strings"
	"time"
)

// ioTimeout bounds a single exchange so that a hung server fails the step
// instead of the whole run; it is a safety net, not an assertion on speed.
const ioTimeout = 15 * time.Second

// header is one response or request header exactly as it crossed the wire.
type header struct {
	Name  string
	Value string
}

// exchange is what one engine answered to one step.
type exchange struct {
	Status int
	// Reason is the status line's reason phrase.
	Reason  string
	Headers []header
	Body    []byte
	// Err is set when no HTTP answer arrived (refused, reset, closed early).
	Err string
}

// rawRequest is an HTTP/1.1 request written byte for byte, so that header
// names keep the case the scenario gives them and nothing is added behind
// the scenario's back except Host and Content-Length.
type rawRequest struct {
	Method  string
	Target  string // path and query, sent as is
	Headers []header
	Body    []byte
	// TLS, when set, makes the request over TLS with this client configuration.
	TLS *tls.Config
}

// roundTrip sends req to addr on a fresh connection and reads one response.
// The response headers are returned in wire order and case, which net/http
// would canonicalise away.
func roundTrip(addr string, req rawRequest) exchange {
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return exchange{Err: "connect: " + classifyNetErr(err)}
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		return exchange{Err: err.Error()}
	}
	if req.TLS != nil {
		tc := tls.Client(conn, req.TLS)
		if err := tc.Handshake(); err != nil {
			return exchange{Err: "handshake: " + classifyNetErr(err)}
		}
		conn = tc
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", req.Method, req.Target)
	hasHost, hasLength := false, false
	for _, h := range req.Headers {
		switch strings.ToLower(h.Name) {
		case "host":
			hasHost = true
		case "content-length", "transfer-encoding":
			hasLength = true
		}
	}
	if !hasHost {
		fmt.Fprintf(&b, "Host: %s\r\n", addr)
	}
	for _, h := range req.Headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	if !hasLength && (len(req.Body) > 0 || req.Method == "POST" || req.Method == "PUT") {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(req.Body))
	}
	b.WriteString("\r\n")
	b.Write(req.Body)
	if _, err := conn.Write(b.Bytes()); err != nil {
		return exchange{Err: "write: " + classifyNetErr(err)}
	}

	r := bufio.NewReader(conn)
	ex, err := readResponse(r, req.Method)
	if err != nil {
		return exchange{Err: "read: " + classifyNetErr(err)}
	}
	return ex
}

func readResponse(r *bufio.Reader, method string) (exchange, error) {
	var ex exchange
	line, err := readLine(r)
	if err != nil {
		return ex, err
	}
	parts := strings.SplitN(line, " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/") {
		return ex, fmt.Errorf("malformed status line %q", line)
	}
	ex.Status, err = strconv.Atoi(parts[1])
	if err != nil {
		return ex, fmt.Errorf("malformed status line %q", line)
	}
	if len(parts) == 3 {
		ex.Reason = parts[2]
	}
	for {
		line, err := readLine(r)
		if err != nil {
			return ex, err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return ex, fmt.Errorf("malformed header line %q", line)
		}
		ex.Headers = append(ex.Headers, header{Name: name, Value: strings.TrimSpace(value)})
	}

	noBody := method == "HEAD" || ex.Status/100 == 1 || ex.Status == 204 || ex.Status == 304
	switch {
	case noBody:
	case strings.EqualFold(headerValue(ex.Headers, "Transfer-Encoding"), "chunked"):
		ex.Body, err = io.ReadAll(httputil.NewChunkedReader(r))
		if err != nil {
			return ex, err
		}
		// Trailers, if any, end with an empty line; their absence is fine.
		for {
			line, err := readLine(r)
			if err != nil || line == "" {
				break
			}
		}
	case headerValue(ex.Headers, "Content-Length") != "":
		n, err := strconv.Atoi(headerValue(ex.Headers, "Content-Length"))
		if err != nil {
			return ex, fmt.Errorf("bad Content-Length: %w", err)
		}
		ex.Body = make([]byte, n)
		if _, err := io.ReadFull(r, ex.Body); err != nil {
			return ex, err
		}
	default:
		ex.Body, err = io.ReadAll(r)
		if err != nil {
			return ex, err
		}
	}
	return ex, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if err == io.EOF && line == "" {
			return "", io.ErrUnexpectedEOF
		}
		if err != io.EOF {
			return "", err
		}
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func headerValue(hs []header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// classifyNetErr reduces a network error to a word both engines can agree
// on; the exact syscall text differs between runs.
func classifyNetErr(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "refused"):
		return "connection refused"
	case strings.Contains(s, "reset"):
		return "connection reset"
	case strings.Contains(s, "EOF"), strings.Contains(s, "broken pipe"):
		return "connection closed"
	case strings.Contains(s, "timeout"):
		return "timeout"
	default:
		return s
	}
}
