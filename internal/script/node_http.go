package script

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// httpSpec is a request of require('http') or require('https') as the prelude's ClientRequest
// hands it over when the script ends it.
type httpSpec struct {
	Protocol string // "http:" or "https:"
	Host     string
	Port     int
	Method   string
	Path     string
	Headers  []string // name, value, name, value… in the script's order and case
	Chunked  bool     // the body was written in pieces without a Content-Length

	RejectUnauthorized bool
	CA                 string
	Cert               string
	Key                string
	Servername         string
}

// httpRequest sends spec with body on a goroutine. handler gets ('response', statusCode,
// statusMessage, httpVersion, rawHeaders), then ('data', ArrayBuffer) per chunk and ('end'), or
// ('error', Error) when no answer came, or ('aborted', Error) when the answer broke off.
//
// Requests go out as node sends them: no redirects followed, no proxy from the environment, no
// compression asked for, no User-Agent unless the script sets one, header names as written.
func (rt *runtime) httpRequest(spec *httpSpec, body []byte, handler goja.Callable) int64 {
	c := rt.io()
	c.nextID++
	id := c.nextID
	ctx, cancel := context.WithCancel(c.ctx)
	c.aborts[id] = cancel
	emit := func(event string, args ...goja.Value) error {
		_, err := handler(goja.Undefined(), append([]goja.Value{rt.vm.ToValue(event)}, args...)...)
		return err
	}
	fail := func(e *nodeErr) {
		c.post(func() error {
			c.pending--
			return emit("error", e.js(rt))
		})
	}
	req, tr, err := buildHTTPRequest(ctx, spec, body)
	if err != nil {
		cancel()
		// node throws these synchronously (an invalid header, certificate or method)
		panic(rt.vm.NewTypeError(err.Error()))
	}
	c.closers = append(c.closers, idleCloser{tr})
	c.pending++
	c.goroutine(rt, func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				fail(&nodeErr{message: "socket hang up", code: "ECONNRESET"})
			} else {
				fail(nodeError(err, "connect", spec.Host, spec.Port))
			}
			return
		}
		defer resp.Body.Close()
		status, _ := strings.CutPrefix(resp.Status, strconv.Itoa(resp.StatusCode))
		raw := rawHeaders(resp.Header)
		if !c.postWait(func() error {
			return emit("response", rt.vm.ToValue(resp.StatusCode), rt.vm.ToValue(strings.TrimSpace(status)),
				rt.vm.ToValue(strconv.Itoa(resp.ProtoMajor)+"."+strconv.Itoa(resp.ProtoMinor)), rt.vm.ToValue(raw))
		}) {
			return
		}
		buf := make([]byte, maxChunk)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				chunk := append([]byte(nil), buf[:n]...)
				if !c.postWait(func() error { return emit("data", rt.vm.ToValue(rt.vm.NewArrayBuffer(chunk))) }) {
					return
				}
			}
			if errors.Is(err, io.EOF) {
				c.post(func() error {
					c.pending--
					return emit("end")
				})
				return
			}
			if err != nil {
				c.post(func() error {
					c.pending--
					e := rt.newError("aborted")
					_ = e.Set("code", "ECONNRESET")
					return emit("aborted", e)
				})
				return
			}
		}
	})
	return id
}

// buildHTTPRequest makes the Go request and the transport that sends it.
func buildHTTPRequest(ctx context.Context, spec *httpSpec, body []byte) (*http.Request, *http.Transport, error) {
	scheme := "http"
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}
	if spec.Protocol == "https:" {
		scheme = "https"
		cfg, err := spec.tlsConfig()
		if err != nil {
			return nil, nil, err
		}
		tr.TLSClientConfig = cfg
	}
	host := net.JoinHostPort(dialHost(spec.Host), strconv.Itoa(spec.Port))
	path := spec.Path
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, spec.Method, scheme+"://"+host+"/", nil)
	if err != nil {
		return nil, nil, err
	}
	req.URL.Path, req.URL.Opaque = "", path // sent as written
	if !strings.HasPrefix(path, "/") {
		req.URL = &url.URL{Scheme: scheme, Host: host, Opaque: "/" + path}
	}
	req.Host = spec.Host
	if (spec.Protocol == "https:" && spec.Port != 443) || (spec.Protocol != "https:" && spec.Port != 80) {
		req.Host = net.JoinHostPort(spec.Host, strconv.Itoa(spec.Port))
	}
	req.Header = http.Header{}
	hasUA, hasConn, length := false, false, int64(-1)
	for i := 0; i+1 < len(spec.Headers); i += 2 {
		name, value := spec.Headers[i], spec.Headers[i+1]
		switch strings.ToLower(name) {
		case "host":
			req.Host = value
			continue
		case "content-length":
			if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
				length = n
			}
			continue
		case "transfer-encoding":
			continue
		case "user-agent":
			hasUA = true
		case "connection":
			hasConn = true
		}
		req.Header[name] = append(req.Header[name], value)
	}
	if !hasUA {
		req.Header["User-Agent"] = []string{""} // Go then sends none, as node
	}
	if !hasConn {
		req.Header["Connection"] = []string{"keep-alive"} // node's agent keeps connections alive
	}
	switch {
	case length >= 0:
		req.ContentLength = length
		if length > 0 || len(body) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
	case spec.Chunked:
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		req.Body = io.NopCloser(bytes.NewReader(body))
	case len(body) > 0 || spec.Method == "POST" || spec.Method == "PUT" || spec.Method == "PATCH":
		req.ContentLength = int64(len(body))
		req.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) == 0 {
			req.Body = http.NoBody // Go then sends Content-Length: 0 for these methods, as node
		}
	}
	return req, tr, nil
}

func (spec *httpSpec) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: !spec.RejectUnauthorized, ServerName: spec.Servername} //nolint:gosec // as the script asks, node's option
	if cfg.ServerName == "" && net.ParseIP(spec.Host) == nil {
		cfg.ServerName = spec.Host
	}
	if spec.CA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(spec.CA)) {
			return nil, errors.New("unable to parse the ca option")
		}
		cfg.RootCAs = pool
	}
	if spec.Cert != "" || spec.Key != "" {
		pair, err := tls.X509KeyPair([]byte(spec.Cert), []byte(spec.Key))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// rawHeaders lists h as node's rawHeaders: name, value, name, value…, names in order.
func rawHeaders(h http.Header) []any {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []any
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, k, v)
		}
	}
	return out
}

// idleCloser closes a transport's kept-alive connections when the call ends.
type idleCloser struct{ tr *http.Transport }

func (c idleCloser) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}
