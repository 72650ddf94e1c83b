//go:build !race

package tcpserver

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
)

// TestTCPListeningAllocations guards a tcp imposter's per-packet path through a real
// connection (its reads and writes, the idle timeout, matching, the answer), the client's own
// work included: bench's tcp-simple allocates nothing; tcp-binary-lp's length-prefix resolver
// runs natively and its binary predicate compares the payload as received (request.BinaryText,
// lowercased in the request's memory), so it allocates nothing either. The bounds are averages
// over many requests, with room for a rare allocation of the runtime. (Off under -race, which
// allocates on its own.)
func TestTCPListeningAllocations(t *testing.T) {
	frame := func(s string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...)
	}
	lpReq, lpResp := frame("GET user 42"), frame(`{"id":42,"name":"Ada"}`)
	for _, tc := range []struct {
		name, imposter string
		req, resp      []byte
		max            float64
	}{
		{"text", `{"protocol":"tcp","stubs":[{"predicates":[{"equals":{"data":"PING\n"}}],"responses":[{"is":{"data":"PONG\n"}}]}]}`,
			[]byte("PING\n"), []byte("PONG\n"), 0.2},
		{"binary-length-prefixed", `{"protocol":"tcp","mode":"binary",
			"endOfRequestResolver":{"inject":"function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }"},
			"stubs":[{"predicates":[{"equals":{"data":"` + b64(lpReq) + `"}}],"responses":[{"is":{"data":"` + b64(lpResp) + `"}}]}]}`,
			lpReq, lpResp, 0.2},
		{"binary-readUInt32BE", `{"protocol":"tcp","mode":"binary",
			"endOfRequestResolver":{"inject":"function (requestData) { return requestData.length >= 4 && requestData.length >= requestData.readUInt32BE(0) + 4; }"},
			"stubs":[{"responses":[{"is":{"data":"` + b64(lpResp) + `"}}]}]}`,
			lpReq, lpResp, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := startImposter(t, tc.imposter)
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			got := make([]byte, len(tc.resp))
			exchange := func() {
				if _, err := c.Write(tc.req); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(br, got); err != nil || string(got) != string(tc.resp) {
					t.Fatalf("%v: got %q", err, got)
				}
			}
			for range 50 {
				exchange()
			}
			if n := testing.AllocsPerRun(500, exchange); n > tc.max {
				t.Errorf("%v allocations per request, want at most %v", n, tc.max)
			}
		})
	}
}
