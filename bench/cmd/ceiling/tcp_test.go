package main

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestServeTCP: each request a client sends and waits on is answered with the body, on one
// connection, as a tcp imposter with one stub answers bench's tcp scenarios.
func TestServeTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	errc := make(chan error, 1)
	go func() { errc <- serveTCP(addr, []byte("PONG\n")) }()
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		select {
		case err := <-errc:
			t.Fatal(err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if c == nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 5)
	for i := 0; i < 3; i++ {
		if _, err := c.Write([]byte("PING\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "PONG\n" {
			t.Fatalf("answer %d: %q %v", i, buf, err)
		}
	}
}
