// Command ceiling is the benchmark's upper bound: a bare fasthttp server that answers every
// request with one constant response and does nothing else (or, with -proxy-to, forwards every
// request to one origin; with -tcp, a bare tcp server).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:48999", "address to listen on")
	status := flag.Int("status", 200, "status code of every response")
	postStatus := flag.Int("post-status", 0, "status code of the answers to POST requests (default -status): 201 makes it the bound of bench's admin-pairs, whose client wants 201 for its POST and 200 for its DELETE")
	bodyFile := flag.String("body-file", "", "file whose content is the body of every response (default empty)")
	contentType := flag.String("content-type", "text/plain", "Content-Type of every response")
	useTLS := flag.Bool("tls", false, "serve https with a self-signed certificate made at start")
	useTCP := flag.Bool("tcp", false, "serve plain tcp: every read is answered with the body (bench's tcp scenarios)")
	proxyTo := flag.String("proxy-to", "", "http://host:port: forward every request there and answer with its answer (the bound of bench's proxyAlways scenario)")
	spin := flag.Int("spin", 0, "rounds of arithmetic per request, to see how latency behaves when the server, not the load generator, is the bottleneck")
	listenOnPost := flag.String("listen-on-post", "", "IPv4 address host:port: each POST also opens a listening socket there (socket, SO_REUSEADDR, bind, listen) and each DELETE closes it, "+
		"with plain system calls and no poller: the kernel's least work for bench's admin-pairs, whose POST creates an imposter and DELETE deletes it")
	flag.Parse()
	var sockets *pairSockets
	if *listenOnPost != "" {
		var err error
		if sockets, err = newPairSockets(*listenOnPost); err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
	}

	var body []byte
	if *bodyFile != "" {
		var err error
		if body, err = os.ReadFile(*bodyFile); err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
	}
	if *useTCP {
		if err := serveTCP(*addr, body); err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
		return
	}
	ct := []byte(*contentType)
	if *postStatus == 0 {
		*postStatus = *status
	}
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if *spin > 0 {
				burn(*spin)
			}
			if ctx.IsPost() {
				if sockets != nil && !sockets.open() {
					ctx.SetStatusCode(fasthttp.StatusInternalServerError)
					return
				}
				ctx.SetStatusCode(*postStatus)
			} else {
				if sockets != nil && ctx.IsDelete() {
					sockets.close()
				}
				ctx.SetStatusCode(*status)
			}
			ctx.Response.Header.SetContentTypeBytes(ct)
			ctx.Response.SetBodyRaw(body)
		},
		Name: "ceiling",
	}
	if *proxyTo != "" {
		h, err := proxyHandler(*proxyTo)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
		s.Handler = h
	}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		<-ch
		_ = s.Shutdown()
	}()
	fmt.Println("ceiling listening on", *addr)
	serve := func() error { return s.ListenAndServe(*addr) }
	if *useTLS {
		cert, key, err := selfSigned()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
		serve = func() error { return s.ListenAndServeTLSEmbed(*addr, cert, key) }
	}
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

var sink uint64

// burn spends CPU time in proportion to n.
func burn(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

// selfSigned makes a certificate for 127.0.0.1 and its key, PEM-encoded.
func selfSigned() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}
