// Package tcpserver serves tcp imposters: one goroutine per connection, each packet a request
// (unless an end-of-request resolver says to wait for more), answered with what the imposter
// core builds (imposter.Resolve, BuildTCP); it also talks to a tcp proxy's origin.
package tcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/proxy"
	"github.com/mockd/mockd/internal/request"
)

// readSize is the most one read takes from a socket: node's 64 KiB, so that a packet is one
// request as in Mountebank.
const readSize = 64 << 10

// TCP is the tcp protocol.
func TCP(*config.Imposter) (imposter.Prepared, error) {
	return imposter.Prepared{New: func(im *imposter.Imposter) imposter.Server { return newServer(im) }, FIFO: true}, nil
}

// server serves a tcp imposter.
type server struct {
	im     *imposter.Imposter
	binary bool
	// endOfRequest decides whether the bytes received so far make a whole request; nil means
	// every packet is one (Mountebank's default). stop: the resolver was stopped by a script
	// limit, and the connection is closed.
	endOfRequest func(data []byte) (done, stop bool)
	maxRequest   int

	netconn.Server
}

func newServer(im *imposter.Imposter) *server {
	s := &server{im: im, binary: im.Binary(), maxRequest: im.MaxBody()}
	s.Server = netconn.Server{Log: im.Log(), Handle: s.handle}
	if eor := config.AsObject(get(im.Definition().Header, "endOfRequestResolver")); eor != nil && jsvalue.Truthy(get(eor, "inject")) {
		source := jsvalue.String(get(eor, "inject"))
		js := im.Script()
		if js == nil {
			im.Log().Warn("endOfRequestResolver needs --allowInjection; every packet is a request")
		} else {
			resolve := js.EndOfRequestResolver(source, s.binary)
			s.endOfRequest = func(data []byte) (done, stop bool) {
				done, err := resolve(data)
				if err != nil {
					im.Log().Error("injection X=> " + err.Error())
					// A resolver the time or memory limit stopped would run again, as long, for
					// every packet: the connection is closed instead.
					var l interface{ ScriptLimit() bool }
					return false, errors.As(err, &l) && l.ScriptLimit()
				}
				return done, false
			}
		}
	}
	return s
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// client is what respond needs of a connection, found once: the client's address as
// Mountebank shows it, and whether it was admitted.
type client struct {
	conn     net.Conn
	ip, from string
	admitted bool
}

// handle serves c; it marks c busy from a request's first byte until its answer is written
// (idle: closed first when the process runs out of file descriptors, see netconn.ReclaimIdle).
func (s *server) handle(c net.Conn, idle *netconn.IdleMark) {
	im := s.im
	// The idle timeout without a deadline change per request (see netconn.IdleConn).
	conn := netconn.IdleConn(c, im.IdleTimeout())
	cl := client{conn: conn}
	cl.ip, cl.from = request.NodeAddr(c.RemoteAddr(), im.PlainIPv4())
	buf := make([]byte, readSize)
	var pending []byte // the packets of a request the endOfRequestResolver says is not whole yet
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			idle.Busy()
			// Without a resolver every packet is a request; with one, a packet that starts a
			// request is read where it is, and copied to pending only when the resolver
			// waits for more (buf is read into again).
			data := buf[:n]
			if len(pending) > 0 {
				pending = append(pending, data...)
				data = pending
			}
			if len(data) > s.maxRequest {
				im.Log().Warn("tcp request too large; closing the connection", "client", c.RemoteAddr().String(), "bytes", len(data))
				return
			}
			done, stop := true, false
			if s.endOfRequest != nil {
				done, stop = s.endOfRequest(data)
			}
			if stop {
				im.Log().Warn("endOfRequestResolver stopped by a script limit; closing the connection", "client", c.RemoteAddr().String())
				return
			}
			if done {
				// Nothing keeps data once it is answered (the request holds a copy, see
				// encode): pending's memory serves the next request, unless it grew large.
				if !s.respond(&cl, data) {
					return
				}
				pending = pending[:0]
				if cap(pending) > readSize {
					pending = nil
				}
				idle.Idle()
			} else if len(pending) == 0 {
				pending = append(pending, data...)
			}
		}
		if err != nil {
			return
		}
	}
}

// respond answers one request; it returns false when the connection must be dropped.
func (s *server) respond(cl *client, payload []byte) bool {
	im := s.im
	conn := cl.conn
	ip, from := cl.ip, cl.from
	if !cl.admitted {
		if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok && !im.Admit(a.IP) {
			im.Blocked(ip)
			return false
		}
		cl.admitted = true
	}
	req := request.Acquire()
	recycle := false // the request's strings (Data) are in its arena: see Recycle
	defer func() {
		if recycle {
			request.Recycle(req)
		} else {
			request.Release(req)
		}
	}()
	req.TCP = true
	req.SetClient(ip, from)
	req.SetData(payload, s.binary)

	if im.LogEnabled(slog.LevelInfo) {
		// Mountebank shows the first 20 characters of the payload.
		data, more := req.Data(), ""
		if n := jsvalue.Len16(data); n > 20 {
			data, more = prefix16(data, 20), "..."
		}
		im.LogLineOf(slog.LevelInfo, from, " => ", data, more)
	}
	a := im.Resolve(req)
	if a.Err != nil {
		im.LogFailure(req, a.Err)
		_, _ = conn.Write(imposter.TCPErrorJSON(a.Err))
		return true
	}
	// Response generation, as Mountebank times it: from the match to the built response
	// (behaviors, injection, proxying), not writing it.
	m := im.Metrics()
	var t0 metrics.Instant
	if m != nil {
		t0 = metrics.Now()
	}
	ctx := context.Background()
	var stop func()
	if a.Defers() {
		// A wait or a shell command: Mountebank writes the answer in a later turn of its event
		// loop, and a client that has shut its side by then (FIN) has had its socket ended
		// (node's allowHalfOpen is off): nothing is written and the connection closes at once.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop = watchHangUp(conn, cancel)
	}
	out, keep := im.BuildTCP(ctx, req, &a, func(req *request.Request, addr, to string) (*config.Object, *config.Object) {
		return s.proxy(conn, req, addr, to)
	})
	if m != nil {
		m.RespDuration.Observe(t0.Since())
	}
	recycle = im.RecyclableTCP(&a)
	// The match is kept before the answer goes out (Mountebank keeps it as it resolves the
	// response): a client that reads the answer and then asks for the imposter sees it.
	im.RecordMatch(&a)
	if stop != nil {
		stop()
		if ctx.Err() != nil || shutDown(conn) {
			return false
		}
	}
	if len(out) > 0 {
		if _, err := conn.Write(out); err != nil {
			return false
		}
	}
	return keep
}

// prefix16 is s.substring(0, n) for a string of at least n UTF-16 code units (a surrogate
// pair cut in two is kept whole).
func prefix16(s string, n int) string {
	units := 0
	for i, r := range s {
		if units >= n {
			return s[:i]
		}
		units++
		if r >= 0x10000 {
			units++
		}
	}
	return s
}

// encode renders request bytes as Mountebank does: base64 in binary mode, otherwise UTF-8 with
// invalid bytes replaced by U+FFFD.
func (s *server) encode(b []byte) string {
	if s.binary {
		return base64.StdEncoding.EncodeToString(b)
	}
	return jsvalue.DecodeUTF8(b)
}

// proxy forwards req to the origin at addr and returns its first answer (the bytes of the
// first read, or as many as the end-of-request resolver wants) as a response object {data,
// _proxyResponseTime}. A nil answer without error means the origin closed without sending
// anything. It is the server's imposter.TCPOrigin for requests of client. A client that hangs
// up, or is closed by a DELETE of the imposter, ends the exchange with the origin at once, as an
// http proxy's does (before, it held both connections until --idle-timeout): nothing is answered.
func (s *server) proxy(client net.Conn, req *request.Request, addr, to string) (*config.Object, *config.Object) {
	im := s.im
	hop := proxy.HopsOfAddr(client.RemoteAddr()) + 1 // see proxy.MaxHops
	if hop > proxy.MaxHops {
		e := proxy.LoopError(to)
		im.Log().Error(fmt.Sprintf("Proxy %s transmission error X=> %s", addr, e.Message))
		return nil, e.Render()
	}
	start := time.Now()
	payload := []byte(req.Data())
	if s.binary {
		payload = config.DecodeBase64(req.Data())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := watchHangUp(client, cancel)
	defer stop()
	d := net.Dialer{Timeout: im.IdleTimeout()}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if ctx.Err() != nil {
		if conn != nil {
			_ = conn.Close()
		}
		im.Log().Warn("tcp proxy client gone; the exchange with the origin is given up", "origin", addr)
		return nil, nil
	}
	if err != nil {
		im.Log().Error(fmt.Sprintf("Proxy %s transmission error X=> %v", addr, err))
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			return nil, config.NewObject("code", "invalid proxy", "message", "Cannot resolve "+quoteJS(to))
		}
		return nil, config.NewObject("code", "invalid proxy", "message", "Unable to connect to "+quoteJS(to))
	}
	defer conn.Close()
	defer proxy.Enter(conn, hop).Leave()
	_ = conn.SetDeadline(time.Now().Add(im.IdleTimeout()))
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })()
	gone := func() bool {
		if ctx.Err() == nil {
			return false
		}
		im.Log().Warn("tcp proxy client gone; the exchange with the origin is given up", "origin", addr)
		return true
	}
	if _, err := conn.Write(payload); err != nil {
		if gone() {
			return nil, nil
		}
		return nil, nodeSocketError(err)
	}
	buf := make([]byte, readSize)
	var got []byte
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			got = append(got, buf[:n]...)
			done, stop := true, false
			if s.endOfRequest != nil {
				done, stop = s.endOfRequest(got)
			}
			if stop {
				return nil, config.NewObject("code", "invalid proxy", "message",
					fmt.Sprintf("the endOfRequestResolver was stopped by a script limit reading the answer of %s", quoteJS(to)))
			}
			if done {
				break
			}
			if len(got) > s.maxRequest { // an answer the resolver never ends is not kept whole
				im.Log().Error(fmt.Sprintf("Proxy %s answer larger than %d bytes", addr, s.maxRequest))
				return nil, config.NewObject("code", "invalid proxy", "message",
					fmt.Sprintf("the answer of %s is larger than %d bytes (--max-body)", quoteJS(to), s.maxRequest))
			}
		}
		if err != nil {
			if gone() || len(got) == 0 || isEOF(err) {
				return nil, nil
			}
			return nil, nodeSocketError(err)
		}
	}
	elapsed := time.Since(start)
	return config.NewObject("data", s.encode(got), "_proxyResponseTime", float64(elapsed.Milliseconds())), nil
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// nodeSocketError renders a socket error the way JSON.stringify renders node's.
func nodeSocketError(err error) *config.Object {
	code := "ECONNRESET"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		code = "ETIMEDOUT"
	}
	return config.NewObject("code", code, "message", err.Error())
}

func quoteJS(s string) string { return string(config.MarshalJSON(s, 0)) }
