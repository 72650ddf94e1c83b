// Command ceiling is the benchmark's upper bound: a bare fasthttp server that answers every
// request with one constant response and does nothing else.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:48999", "address to listen on")
	status := flag.Int("status", 200, "status code of every response")
	bodyFile := flag.String("body-file", "", "file whose content is the body of every response (default empty)")
	contentType := flag.String("content-type", "text/plain", "Content-Type of every response")
	spin := flag.Int("spin", 0, "rounds of arithmetic per request, to see how latency behaves when the server, not the load generator, is the bottleneck")
	flag.Parse()

	var body []byte
	if *bodyFile != "" {
		var err error
		if body, err = os.ReadFile(*bodyFile); err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(1)
		}
	}
	ct := []byte(*contentType)
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if *spin > 0 {
				burn(*spin)
			}
			ctx.SetStatusCode(*status)
			ctx.Response.Header.SetContentTypeBytes(ct)
			ctx.Response.SetBodyRaw(body)
		},
		Name: "ceiling",
	}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		<-ch
		_ = s.Shutdown()
	}()
	fmt.Println("ceiling listening on", *addr)
	if err := s.ListenAndServe(*addr); err != nil {
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
