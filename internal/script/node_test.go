package script

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// respond runs an inject response and returns its body, or "error: " and the script error's data.
func respond(t *testing.T, s *Scope, ctx context.Context, src string) string {
	t.Helper()
	got, err := s.Response(ctx, src, testRequest())
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			if d, ok := config.AsObject(ce.Source).Get("data"); ok {
				return "error: " + jsvalue.String(d)
			}
		}
		return "error: " + err.Error()
	}
	b, _ := got.Get("body")
	return jsvalue.String(b)
}

// runScripts runs each inject response on one scope and compares its body.
func runScripts(t *testing.T, tests []struct{ name, src, want string }) {
	t.Helper()
	s := newEngine(t, 5*time.Second).NewScope(nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := respond(t, s, context.Background(), tc.src); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// origin starts a loopback TCP server that hands each connection to serve.
func origin(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// refusedPort returns a loopback port nothing listens on.
func refusedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	return port
}

// noLeak fails the test when goroutines started since base are still running a few seconds
// after the script call that started them returned (they are waited for when the call ends;
// the HTTP transport's own connection goroutines end as their sockets close).
func noLeak(t *testing.T, base int) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if goruntime.NumGoroutine() <= base {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines left running, %d before:\n%s", goruntime.NumGoroutine(), base, buf[:goruntime.Stack(buf, true)])
}

func TestNet(t *testing.T) {
	echo := origin(t, func(c net.Conn) {
		buf := make([]byte, 1024)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			c.Write([]byte("echo " + string(buf[:n])))
		}
	})
	greetThenClose := origin(t, func(c net.Conn) { c.Write([]byte("bye")) })
	refused := refusedPort(t)
	tests := []struct{ name, src, want string }{
		{"connect, write, once data", `function (config) {
			const socket = require('net').connect({ port: ` + echo + `, host: '127.0.0.1' }, () => socket.write('ping'));
			socket.once('data', d => { config.callback({ body: Buffer.isBuffer(d) + ' ' + d.toString() }); socket.end(); });
		}`, "true echo ping"},
		{"createConnection(port, host), setEncoding, connect event", `function (config) {
			const net = require('net');
			const socket = net.createConnection(` + echo + `, '127.0.0.1');
			socket.setEncoding('utf8');
			socket.on('connect', () => socket.write(Buffer.from('héllo')));
			socket.on('data', d => { config.callback({ body: typeof d + ' ' + d + ' ' + socket.remotePort }); socket.destroy(); });
		}`, "string echo héllo " + echo},
		{"new Socket().connect, end then close", `function (config) {
			const net = require('net'), events = [];
			const socket = new net.Socket();
			socket.connect(` + greetThenClose + `, '127.0.0.1');
			socket.on('data', d => events.push('data:' + d));
			socket.on('end', () => events.push('end'));
			socket.on('close', hadError => { events.push('close:' + hadError); config.callback({ body: events.join(' ') }); });
		}`, "data:bye end close:false"},
		{"refused", `function (config) {
			const socket = require('net').connect(` + refused + `, '127.0.0.1');
			socket.on('error', e => config.callback({ body: [e.code, e.errno, e.syscall, e.address, e.port == ` + refused + `, e.message == 'connect ECONNREFUSED 127.0.0.1:` + refused + `'].join(' ') }));
		}`, "ECONNREFUSED -111 connect 127.0.0.1 true true"},
		{"refused, then close with hadError", `function (config) {
			const socket = require('net').connect(` + refused + `, '127.0.0.1');
			socket.on('error', () => {});
			socket.on('close', hadError => config.callback({ body: 'closed ' + hadError }));
		}`, "closed true"},
		{"an error nobody listens for fails the call", `function (config) {
			require('net').connect(` + refused + `, '127.0.0.1');
		}`, "error: connect ECONNREFUSED 127.0.0.1:" + refused},
		{"bad port", `function (config) { require('net').connect(70000); }`,
			"error: Port should be >= 0 and < 65536. Received type number (70000)."},
		{"no servers", `function (config) { require('net').createServer(); }`,
			"error: mockd scripts can open client connections only, not servers"},
		{"nothing left to wait for", `function (config) {
			const socket = require('net').connect(` + greetThenClose + `, '127.0.0.1');
			socket.on('error', () => {});
		}`, "error: the injection returned undefined and can no longer call its callback"},
	}
	base := goruntime.NumGoroutine()
	runScripts(t, tests)
	noLeak(t, base+4) // the three origins' accept loops, and a connection of greetThenClose
}

// TestNetEndsWithTheCall checks that a socket a script left open is closed when its call times
// out or is cancelled, and that no goroutine of the call is left.
func TestNetEndsWithTheCall(t *testing.T) {
	heard, closed := make(chan struct{}, 4), make(chan string, 4)
	silent := origin(t, func(c net.Conn) {
		buf := make([]byte, 64)
		if _, err := c.Read(buf); err == nil {
			heard <- struct{}{}
		}
		_, err := io.Copy(io.Discard, c) // until the script's side closes
		closed <- "closed: " + errString(err)
	})
	src := `function (config) {
		const socket = require('net').connect(` + silent + `, '127.0.0.1', () => socket.write('anyone?'));
		socket.on('data', d => config.callback({ body: 'unexpected ' + d }));
	}`
	originSaw := func(what string) {
		t.Helper()
		select {
		case got := <-closed:
			if got != "closed: <nil>" {
				t.Errorf("%s: the origin saw %s, want the connection closed", what, got)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s: the origin's connection is still open", what)
		}
	}
	base := goruntime.NumGoroutine()
	e := newEngine(t, 2*time.Second) // time enough to connect on a busy machine
	if got := respond(t, e.NewScope(nil), context.Background(), src); got != "error: script timed out after 2s" {
		t.Errorf("timeout: got %q", got)
	}
	originSaw("timeout")

	for len(heard) > 0 {
		<-heard // the first connection's
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-heard // connected and written: now the request goes away
		cancel()
	}()
	long := newEngine(t, time.Minute)
	if got := respond(t, long.NewScope(nil), ctx, src); got != "error: "+(errCanceled{}).Error() {
		t.Errorf("cancel: got %q", got)
	}
	originSaw("cancel")
	noLeak(t, base+2) // the accept loop and the connection goroutine finishing
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Method", r.Method)
			w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
			w.Header().Set("X-Te", strings.Join(r.TransferEncoding, ","))
			w.Header().Set("X-Ua", r.Header.Get("User-Agent"))
			w.Header().Set("X-Query", r.URL.RawQuery)
			w.Header().Set("X-Custom", r.Header.Get("X-Custom"))
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.WriteHeader(201)
			w.Write(body)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 200000)))
		case "/cut":
			// Promise 100 bytes, send 10, close: node reports the answer as aborted.
			conn, rw, _ := w.(http.Hijacker).Hijack()
			rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
			rw.Flush()
			conn.Close()
		case "/hangup":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secure " + r.Proto)) }))
	t.Cleanup(tls.Close)
	tlsPort := strings.TrimPrefix(tls.URL, "https://127.0.0.1:")
	refused := refusedPort(t)

	tests := []struct{ name, src, want string }{
		{"documented pattern: request, setEncoding, data, end", `function (config) {
			const http = require('http');
			const req = http.request({ method: 'POST', hostname: 'localhost', port: ` + port + `, path: '/echo?q=1', headers: { 'X-Custom': 'c' } }, response => {
				let body = '';
				response.setEncoding('utf8');
				response.on('data', chunk => { body += chunk; });
				response.on('end', () => config.callback({ body: [response.statusCode, response.statusMessage, response.httpVersion,
					response.headers['x-method'], response.headers['x-length'], response.headers['x-te'], '[' + response.headers['x-ua'] + ']',
					response.headers['x-query'], response.headers['x-custom'], response.headers['set-cookie'].join('|'), body].join(' ') }));
			});
			req.write('part one, ');
			req.write(Buffer.from('part two'));
			req.end();
		}`, "201 Created 1.1 POST -1 chunked [] q=1 c a=1|b=2 part one, part two"},
		{"end(body) sends Content-Length", `function (config) {
			const req = require('http').request('http://127.0.0.1:` + port + `/echo', { method: 'PUT' }, res => {
				res.on('data', () => {});
				res.on('end', () => config.callback({ body: res.headers['x-method'] + ' ' + res.headers['x-length'] }));
			});
			req.end('12345');
		}`, "PUT 5"},
		{"get, Buffer chunks", `function (config) {
			require('http').get('http://127.0.0.1:` + port + `/big', res => {
				const chunks = [];
				res.on('data', c => chunks.push(c));
				res.on('end', () => config.callback({ body: Buffer.isBuffer(chunks[0]) + ' ' + Buffer.concat(chunks).length }));
			});
		}`, "true 200000"},
		{"promise around get", `async function (config) {
			const res = await new Promise((resolve, reject) => require('http').get({ port: ` + port + `, path: '/echo' }, resolve).on('error', reject));
			await new Promise(resolve => setTimeout(resolve, 20)); // data read late is kept for the listener
			let body = '';
			for (const c of await new Promise(resolve => { const cs = []; res.on('data', c => cs.push(c)); res.on('end', () => resolve(cs)); })) { body += c; }
			return { body: res.statusCode + ' ' + body.length };
		}`, "201 0"},
		{"https, certificate not verified when asked", `function (config) {
			require('https').get({ hostname: '127.0.0.1', port: ` + tlsPort + `, path: '/', rejectUnauthorized: false }, res => {
				let body = '';
				res.on('data', c => body += c);
				res.on('end', () => config.callback({ body: body }));
			});
		}`, "secure HTTP/1.1"},
		{"https, unknown certificate refused by default", `function (config) {
			require('https').get('https://127.0.0.1:` + tlsPort + `/', () => config.callback({ body: 'answered' }))
				.on('error', e => config.callback({ body: e.code + ' ' + e.message }));
		}`, "DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate"},
		{"refused", `function (config) {
			require('http').get('http://127.0.0.1:` + refused + `/', () => config.callback({ body: 'answered' }))
				.on('error', e => config.callback({ body: e.message + ' ' + e.code + ' ' + Object.keys(e).join(',') }));
		}`, "connect ECONNREFUSED 127.0.0.1:" + refused + " ECONNREFUSED errno,code,syscall,address,port"},
		{"origin closes without answering", `function (config) {
			require('http').get('http://127.0.0.1:` + port + `/hangup', () => config.callback({ body: 'answered' }))
				.on('error', e => config.callback({ body: e.message + ' ' + e.code }));
		}`, "socket hang up ECONNRESET"},
		{"origin closes mid-body", `function (config) {
			require('http').get('http://127.0.0.1:` + port + `/cut', res => {
				let body = '';
				res.on('data', c => body += c);
				res.on('aborted', () => body += ' aborted');
				res.on('error', e => config.callback({ body: body + ' ' + e.message + ' ' + e.code }));
				res.on('end', () => config.callback({ body: 'complete' }));
			});
		}`, "0123456789 aborted aborted ECONNRESET"},
		{"wrong protocol", `function (config) { require('http').get('https://127.0.0.1/'); }`,
			`error: Protocol "https:" not supported. Expected "http:"`},
		{"destroyed before the answer", `function (config) {
			const req = require('http').get('http://127.0.0.1:` + port + `/echo', () => config.callback({ body: 'answered' }));
			req.on('error', e => config.callback({ body: e.message }));
			req.destroy();
		}`, "socket hang up"},
	}
	base := goruntime.NumGoroutine()
	runScripts(t, tests)
	srv.CloseClientConnections()
	tls.CloseClientConnections()
	noLeak(t, base)
}

// TestHTTPEndsWithTheCall checks that a request still waiting for its answer is cancelled when
// the call times out: the origin sees its connection closed and no goroutine is left.
func TestHTTPEndsWithTheCall(t *testing.T) {
	gone := make(chan struct{})
	port := origin(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		if _, err := http.ReadRequest(r); err != nil {
			return
		}
		io.Copy(io.Discard, r) // never answers; returns when the client closes
		close(gone)
	})
	base := goruntime.NumGoroutine()
	e := newEngine(t, 2*time.Second) // time enough to connect on a busy machine
	got := respond(t, e.NewScope(nil), context.Background(), `function (config) {
		require('http').get('http://127.0.0.1:`+port+`/', res => config.callback({ body: 'answered' }));
	}`)
	if got != "error: script timed out after 2s" {
		t.Errorf("got %q", got)
	}
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the origin's connection is still open")
	}
	noLeak(t, base+1) // the origin's connection goroutine finishing
}

func TestFS(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(file, []byte("héllo"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { return strconv.Quote(s) }
	tests := []struct{ expr, want string }{
		{`require('fs').readFileSync(` + q(file) + `, 'utf8')`, "héllo"},
		{`require('fs').readFileSync(` + q(file) + `, { encoding: 'hex' })`, "68c3a96c6c6f"},
		{`Buffer.isBuffer(require('fs').readFileSync(` + q(file) + `))`, "true"},
		{`require('fs').existsSync(` + q(file) + `)`, "true"},
		{`require('fs').existsSync(` + q(filepath.Join(dir, "none")) + `)`, "false"},
		{`(function () { const fs = require('fs'); fs.writeFileSync(` + q(filepath.Join(dir, "w")) + `, 'a'); fs.appendFileSync(` + q(filepath.Join(dir, "w")) + `, 'b'); return fs.readFileSync(` + q(filepath.Join(dir, "w")) + `); })()`, "ab"},
		{`require('fs').readdirSync(` + q(dir) + `).join(',')`, "data.txt,w"},
		{`require('fs').statSync(` + q(file) + `).size + ' ' + require('fs').statSync(` + q(dir) + `).isDirectory()`, "6 true"},
		{`require('fs').readFileSync(` + q(filepath.Join(dir, "none")) + `)`, "error: ENOENT: no such file or directory, open '" + filepath.Join(dir, "none") + "'"},
		{`(function () { try { require('fs').readFileSync(` + q(dir) + `); } catch (e) { return [e.code, e.errno, e.syscall].join(' '); } })()`, "EISDIR -21 read"},
		{`(function () { try { require('fs').readFileSync(` + q(dir) + `); } catch (e) { return e.message; } })()`, "EISDIR: illegal operation on a directory, read"},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		if got := evalBody(t, s, tc.expr); got != tc.want {
			t.Errorf("%s\n got %q\nwant %q", tc.expr, got, tc.want)
		}
	}
}
