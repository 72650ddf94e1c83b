package httpserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

// HTTPS is the https protocol: the http server with TLS on its connections, so requests take
// exactly the http path. A bad key, certificate or cipher list fails as node's TLS does.
func HTTPS(def *config.Imposter) (imposter.Prepared, error) {
	conf, err := TLSConfig(def.Header)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) && def.Port > 0 { // the command line names the imposter
			named := *ce
			named.Message = strings.Replace(ce.Message, "https imposter:", fmt.Sprintf("https imposter %d:", def.Port), 1)
			return imposter.Prepared{}, &named
		}
		return imposter.Prepared{}, err
	}
	return imposter.Prepared{New: func(im *imposter.Imposter) imposter.Server { return newServer(im, conf) }, FIFO: true}, nil
}

// TLSConfig builds an https imposter's TLS configuration from the key, cert, mutualAuth,
// rejectUnauthorized, ca and ciphers fields of its definition header h, failing as Mountebank
// (node's TLS) does on bad ones.
func TLSConfig(h *config.Object) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if c, ok := h.Get("ciphers"); ok && jsvalue.Truthy(c) {
		if _, isString := c.(string); !isString {
			// Mountebank calls ciphers.toUpperCase() first: a TypeError, which shows no fields.
			return nil, &config.Error{Code: "TypeError", Message: "options.ciphers.toUpperCase is not a function", Raw: config.NewObject()}
		}
	}
	// Node takes a ca, cert or key only as text (or a list of texts), in that order.
	for _, field := range []string{"ca", "cert", "key"} {
		if v := get(h, field); jsvalue.Truthy(v) && !pemTexts(v) {
			return nil, &config.Error{Code: "ERR_INVALID_ARG_TYPE", Message: "The \"options." + field + "\" property must be a string or a list of strings",
				Raw: config.NewObject("code", "ERR_INVALID_ARG_TYPE")}
		}
	}
	if c, ok := h.Get("ciphers"); ok && jsvalue.Truthy(c) {
		if err := applyCiphers(conf, strings.ToUpper(jsvalue.String(c))); err != nil {
			return nil, err
		}
	}
	if noKey, noCert := emptyList(get(h, "key")), emptyList(get(h, "cert")); noKey || noCert {
		// Node makes the server without a key or without a certificate, after checking the
		// other in its order, and fails every handshake: so does Mountebank's imposter.
		if !noCert {
			if _, err := certChain(imposter.TLSText(h, "cert")); err != nil {
				return nil, err
			}
		}
		if !noKey && parseKey([]byte(imposter.TLSText(h, "key"))) == nil {
			return nil, errNoKey()
		}
		conf.GetConfigForClient = failHandshake
		return conf, nil
	}
	cert, err := keyPair(imposter.TLSText(h, "key"), imposter.TLSText(h, "cert"))
	if err != nil {
		return nil, err
	}
	conf.Certificates = []tls.Certificate{cert}
	// Node asks for a client certificate only when both are set, and then requires a valid one.
	if jsvalue.Truthy(get(h, "mutualAuth")) && jsvalue.Truthy(get(h, "rejectUnauthorized")) {
		conf.ClientAuth = tls.RequireAndVerifyClientCert
		conf.ClientCAs = caPool(get(h, "ca"))
	}
	return conf, nil
}

// emptyList reports whether v is an empty list, which node takes for no key or certificate.
func emptyList(v config.Value) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// handshakeFailure is the TLS alert record OpenSSL sends when it has no key or certificate to
// answer a ClientHello with: fatal, handshake_failure.
var handshakeFailure = []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}

// failHandshake fails the handshake of an imposter that has no key or certificate, with the
// alert OpenSSL sends (Go's own would be internal_error).
func failHandshake(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	_, _ = hello.Conn.Write(handshakeFailure)
	return nil, errors.New("the imposter has no key or no certificate (an empty list)")
}

// errNoKey is node's error for a key that holds no private key.
func errNoKey() error {
	return opensslError("the key holds no private key mockd can read (PKCS #1, PKCS #8 or SEC 1 PEM)", "DECODER routines", "unsupported", "ERR_OSSL_UNSUPPORTED")
}

// pemTexts reports whether v is what node takes for a ca, cert or key: a string, or a list of them.
func pemTexts(v config.Value) bool {
	switch t := v.(type) {
	case string:
		return true
	case []any:
		for _, e := range t {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// caPool collects the certificates of ca (a PEM string or a list of them); nil (the system
// roots) when there are none.
func caPool(ca config.Value) *x509.CertPool {
	var texts []string
	switch t := ca.(type) {
	case string:
		texts = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				texts = append(texts, s)
			}
		}
	}
	if len(texts) == 0 {
		return nil
	}
	pool := x509.NewCertPool()
	for _, s := range texts {
		pool.AppendCertsFromPEM([]byte(s))
	}
	return pool
}

// opensslError is the error node passes through from OpenSSL, as Mountebank answers it (Raw);
// its Message, which the command line shows (a config file's https imposter), says in words
// what is wrong (what) and then OpenSSL's reason; HTTPS adds the imposter's port.
func opensslError(what, library, reason, code string) *config.Error {
	return &config.Error{Code: code, Message: fmt.Sprintf("https imposter: %s (OpenSSL: %s: %s)", what, library, reason),
		Raw: config.NewObject("library", library, "reason", reason, "code", code)}
}

// keyPair parses a PEM key and certificate chain, checking them in node's order (certificate,
// key, then that they match) with its error for each.
func keyPair(keyPEM, certPEM string) (tls.Certificate, error) {
	out, err := certChain(certPEM)
	if err != nil {
		return out, err
	}
	key := parseKey([]byte(keyPEM))
	if key == nil {
		return out, errNoKey()
	}
	leaf, _ := x509.ParseCertificate(out.Certificate[0])
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return out, opensslError("the key is not the cert's private key", "x509 certificate routines", "key values mismatch", "ERR_OSSL_X509_KEY_VALUES_MISMATCH")
	}
	out.PrivateKey = key
	out.Leaf = leaf
	return out, nil
}

// certChain parses the certificates of a PEM certificate chain, with node's error for a text
// that holds none or a bad one.
func certChain(certPEM string) (tls.Certificate, error) {
	var out tls.Certificate
	if !strings.Contains(certPEM, "-----BEGIN CERTIFICATE-----") && !strings.Contains(certPEM, "-----BEGIN X509 CERTIFICATE-----") &&
		!strings.Contains(certPEM, "-----BEGIN TRUSTED CERTIFICATE-----") {
		// OpenSSL finds no certificate's
		return out, opensslError("the cert holds no PEM certificate (-----BEGIN CERTIFICATE----- …)", "PEM routines", "no start line", "ERR_OSSL_PEM_NO_START_LINE")
	}
	rest := []byte(certPEM)
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			break
		}
		rest = r
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return out, opensslError("a CERTIFICATE block of the cert cannot be parsed", "asn1 encoding routines", "wrong tag", "ERR_OSSL_ASN1_WRONG_TAG")
		}
		out.Certificate = append(out.Certificate, block.Bytes)
	}
	if len(out.Certificate) == 0 {
		return out, opensslError("a CERTIFICATE block of the cert is not valid PEM (base64)", "PEM routines", "bad base64 decode", "ERR_OSSL_PEM_BAD_BASE64_DECODE")
	}
	return out, nil
}

// parseKey returns the first private key in text (PKCS #1, PKCS #8 or SEC 1), or nil.
func parseKey(text []byte) crypto.Signer {
	rest := text
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			return nil
		}
		rest = r
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return k
		}
		if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
			return k
		}
		if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			switch t := k.(type) {
			case *rsa.PrivateKey:
				return t
			case *ecdsa.PrivateKey:
				return t
			case ed25519.PrivateKey:
				return t
			}
		}
		return nil
	}
}

// opensslCiphers maps OpenSSL's names of the TLS 1.2 suites Go implements to Go's ids.
var opensslCiphers = map[string]uint16{
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
}

// opensslKeywords are OpenSSL cipher-list words that select groups of suites; mockd lets Go
// choose among its own secure suites for them.
var opensslKeywords = map[string]bool{
	"ALL": true, "DEFAULT": true, "HIGH": true, "MEDIUM": true, "COMPLEMENTOFDEFAULT": true,
	"COMPLEMENTOFALL": true, "ECDHE": true, "EECDH": true, "ECDH": true, "KECDHE": true,
	"AES": true, "AESGCM": true, "AES128": true, "AES256": true, "CHACHA20": true, "RSA": true,
	"ARSA": true, "KRSA": true, "ECDSA": true, "AECDSA": true, "SHA": true, "SHA1": true,
	"SHA256": true, "SHA384": true, "TLSV1.2": true, "TLSV1": true, "SSLV3": true, "3DES": true,
}

// applyCiphers restricts conf to an OpenSSL cipher list as node does: TLS 1.2 names restrict the
// TLS 1.2 suites; a list without TLS 1.3 names (TLS_…) turns TLS 1.3 off, and one with only TLS
// 1.3 names turns TLS 1.2 off. Go does not let a server choose among TLS 1.3 suites, so those
// names only enable TLS 1.3. A list selecting nothing is OpenSSL's "no cipher match".
func applyCiphers(conf *tls.Config, list string) error {
	var suites []uint16
	any12, any13, keyword := false, false, false
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		if strings.HasPrefix(name, "TLS_") {
			any13 = true
			continue
		}
		any12 = true
		if strings.ContainsAny(name[:1], "!-+@") {
			continue
		}
		if id, ok := opensslCiphers[name]; ok {
			suites = append(suites, id)
			continue
		}
		allWords := true
		for _, w := range strings.Split(name, "+") {
			allWords = allWords && opensslKeywords[w]
		}
		keyword = keyword || allWords
	}
	if any12 && len(suites) == 0 && !keyword {
		return opensslError("no cipher of ciphers is one mockd knows (OpenSSL names, such as ECDHE-RSA-AES128-GCM-SHA256)", "SSL routines", "no cipher match", "ERR_SSL_NO_CIPHER_MATCH")
	}
	if !keyword {
		conf.CipherSuites = suites
	}
	switch {
	case !any13:
		conf.MaxVersion = tls.VersionTLS12
	case !any12:
		conf.MinVersion = tls.VersionTLS13
	}
	return nil
}
