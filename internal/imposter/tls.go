package imposter

import (
	_ "embed" // the default certificate

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// mockd's own self-signed certificate, used by https imposters that name no key and cert
// (Mountebank ships a different one; clients that pin Mountebank's certificate must pass theirs).
var (
	//go:embed cert/mockd-key.pem
	defaultKey string
	//go:embed cert/mockd-cert.pem
	defaultCert string
)

// TLSText is the PEM text an https imposter whose definition header is h uses for field ("key"
// or "cert"): its own when set, else mockd's.
func TLSText(h *config.Object, field string) string {
	def := defaultCert
	if field == "key" {
		def = defaultKey
	}
	v := get(h, field)
	if !jsvalue.Truthy(v) {
		return def
	}
	return jsvalue.String(v)
}
