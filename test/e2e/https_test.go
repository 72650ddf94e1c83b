package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

// selfSigned returns a new PEM key and certificate for cn.
func selfSigned(t *testing.T, cn string) (keyPEM, certPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})),
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// tlsGet sends GET path to an https imposter without verifying its certificate.
func tlsGet(port int, path string, conf *tls.Config) (*http.Response, string, error) {
	if conf == nil {
		conf = &tls.Config{}
	}
	conf.InsecureSkipVerify = true
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func createImposter(t *testing.T, admin string, body map[string]any) (int, map[string]any) {
	t.Helper()
	data, _ := json.Marshal(body)
	code, _, resp := do(t, "POST", admin+"/imposters", string(data))
	return code, jsonBody(t, resp)
}

func TestHTTPSDefaultCertificate(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	code, got := createImposter(t, s.Admin, map[string]any{"protocol": "https", "port": port, "recordRequests": true,
		"stubs": []any{map[string]any{"predicates": []any{map[string]any{"equals": map[string]any{"path": "/hello"}}},
			"responses": []any{map[string]any{"is": map[string]any{"body": "secure"}}}}}})
	if code != 201 {
		t.Fatalf("POST https imposter: %d %v", code, got)
	}
	if k, _ := got["key"].(string); !strings.HasPrefix(k, "-----BEGIN RSA PRIVATE KEY-----") {
		t.Errorf("key = %q, want mockd's default PEM key", k)
	}
	if got["mutualAuth"] != false || got["rejectUnauthorized"] != false || got["ca"] != nil {
		t.Errorf("mutualAuth, rejectUnauthorized, ca = %v, %v, %v; want false, false, null", got["mutualAuth"], got["rejectUnauthorized"], got["ca"])
	}
	resp, body, err := tlsGet(port, "/hello?x=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || body != "secure" {
		t.Errorf("GET /hello = %d %q, want 200 \"secure\"", resp.StatusCode, body)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "localhost" {
		t.Errorf("default certificate CN = %q, want localhost", cn)
	}
	_, _, imp := do(t, "GET", fmt.Sprintf("%s/imposters/%d", s.Admin, port), "")
	reqs, _ := jsonBody(t, imp)["requests"].([]any)
	if len(reqs) != 1 || reqs[0].(map[string]any)["path"] != "/hello" {
		t.Errorf("recorded requests = %v, want one GET /hello", reqs)
	}
}

func TestHTTPSUserCertificateAndMutualAuth(t *testing.T) {
	s := start(t)
	key, cert := selfSigned(t, "server.test")
	ckey, ccert := selfSigned(t, "client.test")
	port := listenFree(t)
	code, got := createImposter(t, s.Admin, map[string]any{"protocol": "https", "port": port, "key": key, "cert": cert,
		"mutualAuth": true, "rejectUnauthorized": true, "ca": ccert,
		"stubs": []any{map[string]any{"responses": []any{map[string]any{"is": map[string]any{"body": "mtls"}}}}}})
	if code != 201 {
		t.Fatalf("POST: %d %v", code, got)
	}
	if got["key"] != key || got["cert"] != cert || got["ca"] != ccert {
		t.Errorf("key, cert and ca are not echoed as given: %v", got)
	}
	if _, _, err := tlsGet(port, "/", nil); err == nil {
		t.Error("a client without a certificate was served; want the handshake refused")
	}
	pair, err := tls.X509KeyPair([]byte(ccert), []byte(ckey))
	if err != nil {
		t.Fatal(err)
	}
	resp, body, err := tlsGet(port, "/", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	if body != "mtls" {
		t.Errorf("body = %q, want mtls", body)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "server.test" {
		t.Errorf("server certificate CN = %q, want the user's server.test", cn)
	}
}

func TestHTTPSCiphersAndBadCertificates(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	code, got := createImposter(t, s.Admin, map[string]any{"protocol": "https", "port": port, "ciphers": "ecdhe-rsa-aes128-gcm-sha256"})
	if code != 201 || got["ciphers"] != "ECDHE-RSA-AES128-GCM-SHA256" {
		t.Fatalf("POST with ciphers: %d ciphers=%v", code, got["ciphers"])
	}
	resp, _, err := tlsGet(port, "/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TLS.CipherSuite != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 || resp.TLS.Version != tls.VersionTLS12 {
		t.Errorf("negotiated %s over %x, want TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 over TLS 1.2", tls.CipherSuiteName(resp.TLS.CipherSuite), resp.TLS.Version)
	}
	key, _ := selfSigned(t, "other")
	for _, tc := range []struct {
		fields map[string]any
		code   string
	}{
		{map[string]any{"key": "junk", "cert": "junk"}, "ERR_OSSL_PEM_NO_START_LINE"},
		{map[string]any{"key": key}, "ERR_OSSL_X509_KEY_VALUES_MISMATCH"},
		{map[string]any{"ciphers": "nonsense"}, "ERR_SSL_NO_CIPHER_MATCH"},
	} {
		body := map[string]any{"protocol": "https", "port": listenFree(t)}
		for k, v := range tc.fields {
			body[k] = v
		}
		code, got := createImposter(t, s.Admin, body)
		errs, _ := got["errors"].([]any)
		if code != 400 || len(errs) != 1 || errs[0].(map[string]any)["code"] != tc.code {
			t.Errorf("POST %v = %d %v, want 400 with code %s", tc.fields, code, got, tc.code)
		}
	}
}

// TestHTTPSBadKeyInConfigIsClear: an https imposter of a config file with a bad cert, key or
// cipher list stops the start with an error that names the imposter and says what is wrong in
// words, then OpenSSL's reason (the admin API answers node's error object, as Mountebank).
func TestHTTPSBadKeyInConfigIsClear(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ fields, want string }{
		{`key: nope, cert: nope`, "the cert holds no PEM certificate"},
		{`ciphers: NOPE`, "no cipher of ciphers is one mockd knows"},
	} {
		port := listenFree(t)
		cfg := write(t, dir, "https.yaml", fmt.Sprintf("imposters:\n  - {port: %d, protocol: https, %s}\n", port, tc.fields))
		_, err := tryStart(t, "-c", cfg)
		want := fmt.Sprintf("cannot start imposter: https imposter %d: %s", port, tc.want)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(OpenSSL: ") {
			t.Errorf("%s: %v, want %q", tc.fields, err, want)
		}
	}
}
