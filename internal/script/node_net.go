package script

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/dop251/goja"
)

// jsSocket is the Go side of one socket of require('net'). Its fields are touched only on the
// call's goroutine; a reader goroutine owns conn's read side.
type jsSocket struct {
	id      int64
	handler goja.Callable // the JavaScript Socket's event function: (event, ...args)
	conn    net.Conn      // nil until connected
	writes  [][]byte      // written before the connection was made
	ending  bool          // end() was called: half-close once the writes are out
	gone    bool          // destroyed, or closed by an error: 'close' was or will be emitted
	errored bool          // 'error' was emitted
}

// maxChunk is the most one 'data' event carries: node's 64 KiB.
const maxChunk = 64 << 10

// netConnect opens a TCP connection to host:port for the JavaScript Socket whose event function
// is handler, and returns the socket's id. The connection is made on a goroutine: handler gets
// ('connect', localAddress, localPort, remoteAddress, remotePort), then ('data', ArrayBuffer)
// per chunk, ('end') when the peer finished sending, ('error', details) and ('close', hadError).
func (rt *runtime) netConnect(host string, port int, handler goja.Callable) int64 {
	c := rt.io()
	c.nextID++
	s := &jsSocket{id: c.nextID, handler: handler}
	c.sockets[s.id] = s
	c.pending++
	addr := net.JoinHostPort(dialHost(host), strconv.Itoa(port))
	c.goroutine(rt, func() {
		var d net.Dialer
		conn, err := d.DialContext(c.ctx, "tcp", addr)
		if err != nil {
			c.post(func() error { return rt.socketFailed(s, nodeError(err, "connect", host, port)) })
			return
		}
		if !c.post(func() error { return rt.socketConnected(s, conn) }) {
			_ = conn.Close()
		}
	})
	return s.id
}

// dialHost is the address node connects to for host: "localhost" is IPv4 loopback (node tries
// it first), an empty host too.
func dialHost(host string) string {
	if host == "" || host == "localhost" {
		return "127.0.0.1"
	}
	return host
}

func (rt *runtime) socketConnected(s *jsSocket, conn net.Conn) error {
	c := rt.ioc
	c.closers = append(c.closers, conn)
	if s.gone { // destroyed while connecting
		_ = conn.Close()
		c.pending--
		return rt.emitSocket(s, "close", false)
	}
	s.conn = conn
	for _, w := range s.writes {
		rt.socketWrite(s, w)
	}
	s.writes = nil
	if s.ending {
		halfClose(conn)
	}
	c.goroutine(rt, func() { rt.readSocket(c, s, conn) })
	la, lp := hostPort(conn.LocalAddr())
	ra, rp := hostPort(conn.RemoteAddr())
	return rt.emitSocket(s, "connect", la, lp, ra, rp)
}

// readSocket reads conn until it ends, posting each chunk and waiting for it to be handled. It
// runs on its own goroutine: it touches nothing of rt but through jobs.
func (rt *runtime) readSocket(c *ioCall, s *jsSocket, conn net.Conn) {
	buf := make([]byte, maxChunk)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			if !c.postWait(func() error { return rt.emitSocket(s, "data", rt.vm.NewArrayBuffer(chunk)) }) {
				return
			}
		}
		if err != nil {
			c.post(func() error { return rt.socketEnded(s, err) })
			return
		}
	}
}

// socketEnded handles the end of reading: the peer's FIN, a reset, or our own close.
func (rt *runtime) socketEnded(s *jsSocket, err error) error {
	c := rt.ioc
	if s.gone {
		c.pending--
		return rt.emitSocket(s, "close", s.errored)
	}
	if errors.Is(err, io.EOF) {
		// allowHalfOpen is false, as node's default: the peer's end ends the socket.
		s.gone = true
		_ = s.conn.Close()
		c.pending--
		if err := rt.emitSocket(s, "end"); err != nil {
			return err
		}
		return rt.emitSocket(s, "close", false)
	}
	ra, rp := hostPort(s.conn.RemoteAddr())
	rp1, _ := strconv.Atoi(rp)
	return rt.socketFailed(s, nodeError(err, "read", ra, rp1))
}

// socketFailed closes s after an error and emits 'error' then 'close'.
func (rt *runtime) socketFailed(s *jsSocket, e *nodeErr) error {
	c := rt.ioc
	wasGone := s.gone
	s.gone = true
	if s.conn != nil {
		_ = s.conn.Close()
	}
	c.pending--
	if !wasGone {
		s.errored = true
		if err := rt.emitSocket(s, "error", e.js(rt)); err != nil {
			return err
		}
	}
	return rt.emitSocket(s, "close", s.errored)
}

func (rt *runtime) emitSocket(s *jsSocket, event string, args ...any) error {
	vals := make([]goja.Value, 0, 1+len(args))
	vals = append(vals, rt.vm.ToValue(event))
	for _, a := range args {
		if v, ok := a.(goja.Value); ok {
			vals = append(vals, v)
		} else {
			vals = append(vals, rt.vm.ToValue(a))
		}
	}
	_, err := s.handler(goja.Undefined(), vals...)
	return err
}

// socketWrite writes b, by the call's deadline. An error closes the socket and emits 'error'
// (later, as node does).
func (rt *runtime) socketWrite(s *jsSocket, b []byte) {
	if s.gone {
		return
	}
	if s.conn == nil {
		s.writes = append(s.writes, b)
		return
	}
	_ = s.conn.SetWriteDeadline(rt.deadline)
	if _, err := s.conn.Write(b); err != nil {
		e := nodeError(err, "write", "", 0)
		s.gone, s.errored = true, true
		_ = s.conn.Close() // the reader then posts 'close'
		rt.ioc.post(func() error { return rt.emitSocket(s, "error", e.js(rt)) })
	}
}

// socketNatives are the functions the prelude's Socket calls.
func (rt *runtime) socketNatives(native *goja.Object) {
	find := func(id int64) *jsSocket {
		if rt.ioc == nil {
			return nil
		}
		return rt.ioc.sockets[id]
	}
	_ = native.Set("netConnect", func(host string, port int, handler goja.Value) int64 {
		fn, ok := goja.AssertFunction(handler)
		if !ok {
			panic(rt.vm.NewTypeError("BUG: netConnect needs a function"))
		}
		return rt.netConnect(host, port, fn)
	})
	_ = native.Set("netWrite", func(id int64, data goja.Value) {
		if s := find(id); s != nil {
			b, _ := data.Export().([]byte)
			rt.socketWrite(s, append([]byte(nil), b...))
		}
	})
	_ = native.Set("netEnd", func(id int64) {
		if s := find(id); s != nil && !s.ending {
			s.ending = true
			if s.conn != nil && !s.gone {
				halfClose(s.conn)
			}
		}
	})
	_ = native.Set("netDestroy", func(id int64) {
		if s := find(id); s != nil && !s.gone {
			s.gone = true
			if s.conn != nil {
				_ = s.conn.Close() // the reader posts 'close'
			}
		}
	})
}

// halfClose sends FIN, as node's socket.end() does.
func halfClose(conn net.Conn) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = conn.Close()
}

func hostPort(a net.Addr) (string, string) {
	h, p, _ := net.SplitHostPort(a.String())
	return h, p
}

// nodeErr is a system error as node reports it: `${syscall} ${code} ${address}:${port}`.
type nodeErr struct {
	message, code, syscall, address string
	errno, port                     int
	hostname                        string // for getaddrinfo errors
}

// nodeErrnos maps the errors a client socket meets to node's codes (Linux numbering).
var nodeErrnos = map[syscall.Errno]string{
	syscall.ECONNREFUSED:  "ECONNREFUSED",
	syscall.ECONNRESET:    "ECONNRESET",
	syscall.ECONNABORTED:  "ECONNABORTED",
	syscall.ETIMEDOUT:     "ETIMEDOUT",
	syscall.EHOSTUNREACH:  "EHOSTUNREACH",
	syscall.ENETUNREACH:   "ENETUNREACH",
	syscall.EPIPE:         "EPIPE",
	syscall.EADDRNOTAVAIL: "EADDRNOTAVAIL",
}

// nodeError converts a Go network error of the named system call to node's form.
func nodeError(err error, call, host string, port int) *nodeErr {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &nodeErr{message: "getaddrinfo ENOTFOUND " + dns.Name, code: "ENOTFOUND", syscall: "getaddrinfo",
			errno: -3008, hostname: dns.Name}
	}
	if e := tlsError(err); e != nil {
		return e
	}
	e := &nodeErr{code: "ECONNRESET", errno: -int(syscall.ECONNRESET), syscall: call}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && nodeErrnos[errno] != "":
		e.code, e.errno = nodeErrnos[errno], -int(errno)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		e.code, e.errno = "ETIMEDOUT", -int(syscall.ETIMEDOUT)
	}
	e.message = call + " " + e.code
	if call == "connect" {
		var op *net.OpError
		if errors.As(err, &op) && op.Addr != nil {
			host, p := hostPort(op.Addr)
			port, _ = strconv.Atoi(p)
			e.address = host
		} else {
			e.address = dialHost(host)
		}
		e.port = port
		e.message += " " + e.address + ":" + strconv.Itoa(port)
	}
	return e
}

// tlsError converts a failed certificate check to node's error (which has only a code), or
// returns nil.
func tlsError(err error) *nodeErr {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		if c := ua.Cert; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) {
			return &nodeErr{message: "self-signed certificate", code: "DEPTH_ZERO_SELF_SIGNED_CERT"}
		}
		return &nodeErr{message: "unable to verify the first certificate", code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE"}
	case errors.As(err, &he):
		return &nodeErr{message: "Hostname/IP does not match certificate's altnames: " + he.Error(), code: "ERR_TLS_CERT_ALTNAME_INVALID"}
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return &nodeErr{message: "certificate has expired", code: "CERT_HAS_EXPIRED"}
	}
	return nil
}

// js makes the JavaScript Error node would throw.
func (e *nodeErr) js(rt *runtime) goja.Value {
	o := rt.newError(e.message)
	if e.syscall == "" { // an HTTP-level error such as "socket hang up"
		_ = o.Set("code", e.code)
		return o
	}
	_ = o.Set("errno", e.errno)
	_ = o.Set("code", e.code)
	_ = o.Set("syscall", e.syscall)
	if e.hostname != "" {
		_ = o.Set("hostname", e.hostname)
	}
	if e.address != "" {
		_ = o.Set("address", e.address)
		_ = o.Set("port", e.port)
	}
	return o
}

// newError returns new Error(message).
func (rt *runtime) newError(message string) *goja.Object {
	ctor, _ := goja.AssertConstructor(rt.vm.Get("Error"))
	o, err := ctor(nil, rt.vm.ToValue(message))
	if err != nil {
		panic("BUG: new Error: " + err.Error())
	}
	return o
}
