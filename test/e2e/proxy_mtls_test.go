package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestProxyMutualTLSToOrigin checks a proxy's cert/key: an https origin that requires a client
// certificate answers through the proxy only when the proxy presents the trusted one.
func TestProxyMutualTLSToOrigin(t *testing.T) {
	serverKey, serverCert := selfSigned(t, "origin")
	clientKey, clientCert := selfSigned(t, "mockd-client")
	block, _ := pem.Decode([]byte(clientCert))
	clientX509, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair([]byte(serverCert), []byte(serverKey))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(clientX509)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.TLS.PeerCertificates[0].Subject.CommonName)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	s := start(t)
	withCert, without := listenFree(t), listenFree(t)
	to := "https://" + ln.Addr().String()
	for port, proxy := range map[int]map[string]any{
		withCert: {"to": to, "mode": "proxyTransparent", "cert": clientCert, "key": clientKey},
		without:  {"to": to, "mode": "proxyTransparent"},
	} {
		body, _ := json.Marshal(map[string]any{"protocol": "http", "port": port,
			"stubs": []any{map[string]any{"responses": []any{map[string]any{"proxy": proxy}}}}})
		if status, _, b := do(t, "POST", s.Admin+"/imposters", string(body)); status != 201 {
			t.Fatalf("create proxy on %d: %d %s", port, status, b)
		}
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(withCert)+"/", ""); status != 200 || body != "hello mockd-client" {
		t.Errorf("proxy with cert/key: %d %q, want 200 %q", status, body, "hello mockd-client")
	}
	if status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(without)+"/", ""); status != 500 {
		t.Errorf("proxy without a client certificate: %d %q, want Mountebank's 500 invalid proxy error", status, body)
	}
}
