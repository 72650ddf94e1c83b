package e2e

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestConnectionResetFault: CONNECTION_RESET_BY_PEER closes the connection without an answer,
// over http and https. Mountebank 2.9.1 destroys the socket after reading the request, so its
// client sees the connection closed (EOF), not a reset; the compat suite checks http against it.
func TestConnectionResetFault(t *testing.T) {
	s := start(t)
	for _, proto := range []string{"http", "https"} {
		t.Run(proto, func(t *testing.T) {
			port := listenFree(t)
			imp := fmt.Sprintf(`{"protocol":%q,"port":%d,"stubs":[{"responses":[{"fault":"CONNECTION_RESET_BY_PEER"}]}]}`, proto, port)
			if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}
			c := dialImposter(t, proto, port)
			defer c.Close()
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := c.Read(make([]byte, 64))
			if n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("read %d bytes, err %v; want the connection closed without an answer", n, err)
			}
		})
	}
}
