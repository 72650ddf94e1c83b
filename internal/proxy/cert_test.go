package proxy

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestCertNotPEM: a proxy's cert and key that are not PEM are Mountebank's: ignored for an http
// origin, and for an https origin each request fails as "Unable to connect" (https.request
// throws there); neither refuses the proxy (test/compat scenario proxy-cert-not-pem).
func TestCertNotPEM(t *testing.T) {
	addr := hostileOrigin(t, func(c net.Conn) { _, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")) })
	for _, tc := range []struct {
		to      string
		certErr bool
	}{{"http://" + addr, false}, {"https://" + addr, true}} {
		p, cerr := Compile(config.NewObject("to", tc.to, "cert", "not a cert", "key", "not a key"), 0)
		if cerr != nil {
			t.Fatalf("%s: Compile = %v", tc.to, cerr)
		}
		if (p.CertErr != nil) != tc.certErr {
			t.Errorf("%s: CertErr = %v", tc.to, p.CertErr)
		}
		answer, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
		var ce *config.Error
		switch {
		case !tc.certErr && (err != nil || get(answer, "body") != "ok"):
			t.Errorf("%s: Forward = %v, %v; want the origin's answer", tc.to, answer, err)
		case tc.certErr && (!errors.As(err, &ce) || ce.Message != `Unable to connect to "`+tc.to+`"`):
			t.Errorf("%s: Forward = %v; want Unable to connect", tc.to, err)
		}
	}
}
