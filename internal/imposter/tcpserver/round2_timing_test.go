package tcpserver

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
)

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
			im := startImposter(b, sc.imposter)
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
