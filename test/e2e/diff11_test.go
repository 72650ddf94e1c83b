package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// TestChunkSizeLeadingZeros: a chunk size written with leading zeros past fasthttp's 15 digits
// (`0000000000000000005`) is read as node (so Mountebank 2.9.1) reads it, on an imposter and on
// the admin API: the body is recorded and the request behind it answered. fasthttp answered 400.
// A size past 64 bits stays refused, as node refuses it (HPE_INVALID_CHUNK_SIZE).
func TestChunkSizeLeadingZeros(t *testing.T) {
	s, port, admin := recordingServer(t, "ok")
	const next = "GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	zeros := strings.Repeat("0", 30)
	for _, tc := range []struct {
		name, lines string
		refused     bool
	}{
		{"19 digits", "0000000000000000005\r\nhello\r\n0\r\n\r\n", false},
		{"16 digits", "0000000000000005\r\nhello\r\n0\r\n\r\n", false},
		{"zeros, an extension and a last chunk of zeros", zeros + "5;a=b\r\nhello\r\n" + zeros + "\r\n\r\n", false},
		{"a size past 64 bits", "10000000000000000\r\nhello\r\n0\r\n\r\n", true},
	} {
		data := "POST /z HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + tc.lines + next
		refusedOrBoth(t, tc.name, data, tc.refused, port, admin)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if n := strings.Count(body, `"body": "hello"`); n != 3 {
		t.Errorf("the imposter recorded %d bodies \"hello\", want 3:\n%s", n, body)
	}
}
