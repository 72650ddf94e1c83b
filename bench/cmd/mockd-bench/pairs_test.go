package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPairRequestAsNetHTTP: the pairs client's requests are, byte for byte, what net/http's
// client sent for them (it used to send them): the peers see the same requests as before.
func TestPairRequestAsNetHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	host := ln.Addr().String()
	base := "http://" + host
	for _, c := range [][3]string{
		{"POST", base + "/imposters", `{"protocol":"http","port":22999}`},
		{"DELETE", base + "/imposters/22999", ""},
		{"PUT", base + "/mockserver/clear", `{"id":"bench-pair"}`},
	} {
		served := make(chan struct{})
		go func() { // a server that reads one request and answers it
			defer close(served)
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}
		}()
		// net/http's client, recording what it writes.
		req, _ := http.NewRequest(c[0], c[1], strings.NewReader(c[2]))
		if c[2] != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		var wire bytes.Buffer
		rec := &recordingConn{w: &wire}
		tr := &http.Transport{Dial: func(network, addr string) (net.Conn, error) {
			conn, err := net.Dial(network, addr)
			rec.Conn = conn
			return rec, err
		}}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		<-served
		if want := pairRequest(c, host); !bytes.Equal(wire.Bytes(), want) {
			t.Errorf("%s %s:\nnet/http sent %q\npairRequest   %q", c[0], c[1], wire.Bytes(), want)
		}
	}
}

// recordingConn records what is written to it.
type recordingConn struct {
	net.Conn
	w *bytes.Buffer
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.w.Write(b)
	return c.Conn.Write(b)
}

// TestPairConn: the pairs client reads answers framed by length, by chunks and by the
// connection's end, keeps the connection across answers and connects again after one closes it.
func TestPairConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answers := []string{
		"HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nthe end",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	}
	conns := make(chan int, 1)
	go func() {
		n, i := 0, 0
		for i < len(answers) {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n++
			r := bufio.NewReader(conn)
			for i < len(answers) {
				req, err := http.ReadRequest(r)
				if err != nil {
					break
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = conn.Write([]byte(answers[i]))
				i++
				if strings.Contains(answers[i-1], "Connection: close") {
					break
				}
			}
			conn.Close()
		}
		conns <- n
	}()
	c, err := newPairConn(ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	req := pairRequest([3]string{"POST", "/imposters", "{}"}, ln.Addr().String())
	for i, want := range []int{201, 200, 404, 200} {
		status, err := c.roundTrip(req)
		if err != nil || status != want {
			t.Fatalf("answer %d: %d %v, want %d", i, status, err, want)
		}
	}
	if n := <-conns; n != 2 {
		t.Errorf("%d connections, want 2 (one closed by the server after its third answer)", n)
	}
}
