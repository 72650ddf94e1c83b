package tcpserver

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/script"
)

// startBench creates and starts an imposter from JSON on a free loopback port, with scripts
// allowed.
func startBench(tb testing.TB, def string) *imposter.Imposter {
	tb.Helper()
	v, err := config.ParseJSON([]byte(def))
	if err != nil {
		tb.Fatal(err)
	}
	d, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		tb.Fatalf("parse %s: %v", def, errs[0])
	}
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: log, Script: script.New(script.Options{Logger: log}), Protocols: protocols})
	if err != nil {
		tb.Fatal(err)
	}
	if err := im.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		im.Stop(ctx)
	})
	return im
}

// BenchmarkTCPFraming exchanges requests with a tcp imposter on one connection: text, and
// binary frames with a 4-byte length prefix that an endOfRequestResolver (JavaScript) waits for.
func BenchmarkTCPFraming(b *testing.B) {
	frame := func(s string) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
		return append(out, s...)
	}
	lpReq, lpResp := frame("GET user 42"), frame(`{"id":42,"name":"Ada"}`)
	for _, sc := range []struct {
		name, imposter string
		req, resp      []byte
	}{
		{"text", `{"protocol":"tcp","stubs":[{"predicates":[{"equals":{"data":"PING\n"}}],"responses":[{"is":{"data":"PONG\n"}}]}]}`,
			[]byte("PING\n"), []byte("PONG\n")},
		{"binary-length-prefixed", `{"protocol":"tcp","mode":"binary",
			"endOfRequestResolver":{"inject":"function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }"},
			"stubs":[{"predicates":[{"equals":{"data":"` + b64(lpReq) + `"}}],"responses":[{"is":{"data":"` + b64(lpResp) + `"}}]}]}`,
			lpReq, lpResp},
	} {
		b.Run(sc.name, func(b *testing.B) {
			im := startBench(b, sc.imposter)
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			got := make([]byte, len(sc.resp))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(sc.req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(br, got); err != nil || string(got) != string(sc.resp) {
					b.Fatalf("%v: got %q", err, got)
				}
			}
		})
	}
}

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }
