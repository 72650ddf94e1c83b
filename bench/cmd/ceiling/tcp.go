package main

import (
	"net"
)

// serveTCP is the bare tcp server: every read of a connection is answered with body in one
// write, which is what a tcp imposter with one stub does for a client that sends a request
// and waits for its answer (bench's tcp scenarios). It never returns but on a listen error.
func serveTCP(addr string, body []byte) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
				if _, err := c.Write(body); err != nil {
					return
				}
			}
		}()
	}
}
