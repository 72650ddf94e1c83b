package tcpserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/script"
)

// protocols are those the tests start imposters of.
var protocols = map[string]imposter.Protocol{"tcp": TCP}

// startImposter creates and starts an imposter from JSON on a free loopback port, with scripts
// allowed.
func startImposter(t testing.TB, def string) *imposter.Imposter {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(impostertest.Def(t, def), imposter.Options{Host: "127.0.0.1", Logger: log, Script: script.New(script.Options{Logger: log}), Protocols: protocols})
	if err != nil {
		t.Fatalf("new %s: %v", def, err)
	}
	impostertest.Start(t, im)
	return im
}

func dial(t *testing.T, im *imposter.Imposter) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(im.Port()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func exchangeTCP(t *testing.T, c net.Conn, data string) (string, error) {
	t.Helper()
	if _, err := io.WriteString(c, data); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		err = nil
	}
	return string(buf[:n]), err
}

func TestTCPResponses(t *testing.T) {
	tests := []struct {
		name, def, send, want string
	}{
		{"text is", `{"protocol":"tcp","stubs":[{"predicates":[{"contains":{"data":"hi"}}],"responses":[{"is":{"data":"hello"}}]}]}`, "oh hi", "hello"},
		{"no match, no default: nothing", `{"protocol":"tcp","stubs":[{"predicates":[{"contains":{"data":"hi"}}],"responses":[{"is":{"data":"hello"}}]}]}`, "bye", ""},
		{"default data", `{"protocol":"tcp","defaultResponse":{"data":"dflt"}}`, "x", "dflt"},
		{"empty data falls back to default", `{"protocol":"tcp","defaultResponse":{"data":"dflt"},"stubs":[{"responses":[{"is":{"data":""}}]}]}`, "x", "dflt"},
		{"binary", `{"protocol":"tcp","mode":"binary","stubs":[{"predicates":[{"equals":{"data":"AAE="}}],"responses":[{"is":{"data":"/+4="}}]}]}`, "\x00\x01", "\xff\xee"},
		{"data not a string", `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":5}}]}]}`, "x", `{"errors":[{"code":"ERR_INVALID_ARG_TYPE"}]}`},
		{"random data fault", `{"protocol":"tcp","stubs":[{"responses":[{"fault":"RANDOM_DATA_THEN_CLOSE"}]}]}`, "x", imposter.RandomFaultData},
		{"proxy to a non-tcp URL", `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":"http://x"}}]}]}`, "x", `{"errors":[{"code":"invalid proxy","message":"Unable to proxy to any protocol other than tcp","source":"http://x"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := startImposter(t, tt.def)
			got, err := exchangeTCP(t, dial(t, im), tt.send)
			if err != nil && err != io.EOF {
				t.Fatalf("send %q: %v", tt.send, err)
			}
			if got != tt.want {
				t.Errorf("send %q: got %q, want %q", tt.send, got, tt.want)
			}
		})
	}
}

func TestTCPProxyRecordsStub(t *testing.T) {
	origin := startImposter(t, `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"origin says"}}]}]}`)
	im := startImposter(t, `{"protocol":"tcp","stubs":[{"responses":[{"proxy":{"to":{"host":"127.0.0.1","port":`+strconv.Itoa(origin.Port())+`},"predicateGenerators":[{"matches":{"data":true}}]}}]}]}`)
	c := dial(t, im)
	for i := 0; i < 2; i++ {
		got, err := exchangeTCP(t, c, "q")
		if err != nil || got != "origin says" {
			t.Fatalf("request %d: got %q, %v", i, got, err)
		}
	}
	if n := origin.NumberOfRequests(); n != 1 {
		t.Errorf("origin saw %d requests, want 1 (the second is answered from the recorded stub)", n)
	}
	if n := im.StubCount(); n != 2 {
		t.Fatalf("stubs = %d, want 2", n)
	}
	rec := string(config.MarshalJSON(im.StubDefinitions()[0], 0))
	if want := `{"predicates":[{"deepEquals":{"data":"q"}}],"responses":[{"is":{"data":"origin says","_proxyResponseTime":`; !bytes.HasPrefix([]byte(rec), []byte(want)) {
		t.Errorf("recorded stub %s, want prefix %s", rec, want)
	}
}

func TestTCPIdleTimeout(t *testing.T) {
	old := imposter.DefaultIdleTimeout
	imposter.DefaultIdleTimeout = 100 * time.Millisecond
	t.Cleanup(func() { imposter.DefaultIdleTimeout = old })
	im := startImposter(t, `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"pong"}}]}]}`)
	c := dial(t, im)
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("idle connection: read gave %v, want EOF after the idle timeout", err)
	}
	// Busy, then silent: closed too (the deadline is not armed again for each request, see
	// netconn.IdleConn, but each wait still ends).
	c = dial(t, im)
	for i := range 3 {
		if got, err := exchangeTCP(t, c, "ping"); err != nil || got != "pong" {
			t.Fatalf("request %d: got %q, %v", i, got, err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection idle after its requests: read gave %v, want EOF after the idle timeout", err)
	}
}

// FuzzTCPSplitter feeds arbitrary byte streams, cut into packets, to a tcp imposter's
// connection handler: it must never panic, and must answer or drop every connection.
func FuzzTCPSplitter(f *testing.F) {
	f.Add([]byte("hello"), uint8(3), false)
	f.Add([]byte("\x00\x01\xff\xfe"), uint8(1), true)
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"), uint8(0), false)
	v, _ := config.ParseJSON([]byte(`{"protocol":"tcp","stubs":[{"predicates":[{"contains":{"data":"he"}}],"responses":[{"is":{"data":"x"}}]},{"responses":[{"fault":"RANDOM_DATA_THEN_CLOSE"}]}]}`))
	vb, _ := config.ParseJSON([]byte(`{"protocol":"tcp","mode":"binary","recordRequests":true,"stubs":[{"predicates":[{"contains":{"data":"AAE="}}],"responses":[{"is":{"data":"AAE="}}]}]}`))
	text, _ := config.ParseImposter(v, config.ParseOptions{})
	bin, _ := config.ParseImposter(vb, config.ParseOptions{})
	f.Fuzz(func(t *testing.T, data []byte, cut uint8, binary bool) {
		def := text
		if binary {
			def = bin
		}
		im, err := imposter.New(def, imposter.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		s := newServer(im)
		server, client := net.Pipe()
		done := make(chan struct{})
		go func() {
			s.ServeConn(server) // serves and closes the connection, as for an accepted one
			close(done)
		}()
		go io.Copy(io.Discard, client) //nolint:errcheck // drains answers until the pipe closes
		step := int(cut)%(len(data)+1) + 1
		for len(data) > 0 {
			n := min(step, len(data))
			if _, err := client.Write(data[:n]); err != nil {
				break
			}
			data = data[n:]
		}
		client.Close()
		<-done
	})
}

// countingObserver counts observations.
type countingObserver struct{ n atomic.Int64 }

func (o *countingObserver) Observe(float64) { o.n.Add(1) }

// writeSpy is a connection that notes, at its first write, how many response-generation
// times had been observed.
type writeSpy struct {
	net.Conn
	obs         *countingObserver
	seenAtWrite int64
	wrote       bytes.Buffer
	writes      int
}

func (w *writeSpy) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (w *writeSpy) SetWriteDeadline(time.Time) error { return nil }
func (w *writeSpy) Write(b []byte) (int, error) {
	if w.writes == 0 {
		w.seenAtWrite = w.obs.n.Load()
	}
	w.writes++
	return w.wrote.Write(b)
}

// TestTCPResponseTimeExcludesWrite: as in Mountebank, the response-generation time of a tcp
// answer ends when the response is built, before it is written to the socket.
func TestTCPResponseTimeExcludesWrite(t *testing.T) {
	tests := []struct {
		name, def, want string
		keep            bool
	}{
		{"is", `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"pong"}}]}]}`, "pong", true},
		{"default", `{"protocol":"tcp","defaultResponse":{"data":"dflt"}}`, "dflt", true},
		{"random data fault", `{"protocol":"tcp","stubs":[{"responses":[{"fault":"RANDOM_DATA_THEN_CLOSE"}]}]}`, imposter.RandomFaultData, false},
		{"bad data", `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":7}}]}]}`, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := config.ParseJSON([]byte(tc.def))
			if err != nil {
				t.Fatal(err)
			}
			d, errs := config.ParseImposter(v, config.ParseOptions{})
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: slog.New(slog.DiscardHandler), Metrics: metrics.New(), Protocols: protocols})
			if err != nil {
				t.Fatal(err)
			}
			if err := im.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { im.Stop(context.Background()) })
			obs := &countingObserver{}
			im.Metrics().RespDuration = obs
			spy := &writeSpy{obs: obs}
			keep := newServer(im).respond(&client{conn: spy}, []byte("ping"))
			if keep != tc.keep {
				t.Errorf("keep = %v, want %v", keep, tc.keep)
			}
			if tc.want != "" && spy.wrote.String() != tc.want {
				t.Errorf("wrote %q, want %q", spy.wrote.String(), tc.want)
			}
			if spy.writes == 0 {
				t.Fatal("nothing written")
			}
			if spy.seenAtWrite != 1 || obs.n.Load() != 1 {
				t.Fatalf("observations at the write: %d (after: %d), want 1 (timed before writing)", spy.seenAtWrite, obs.n.Load())
			}
		})
	}
}

// TestTCPRecycledRequests: a request answered by a plain `is` response is recycled (its data is
// made in memory the next request reuses); what outlives it keeps its own copy: the journal of
// recorded requests, and each request's matching sees its own data.
func TestTCPRecycledRequests(t *testing.T) {
	for _, binary := range []bool{false, true} {
		mode, enc := "text", func(s string) string { return s }
		if binary {
			mode, enc = "binary", func(s string) string { return b64([]byte(s)) }
		}
		im := startImposter(t, `{"protocol":"tcp","mode":"`+mode+`","recordRequests":true,"stubs":[`+
			`{"predicates":[{"equals":{"data":"`+enc("first")+`"}}],"responses":[{"is":{"data":"`+enc("one")+`"}}]},`+
			`{"predicates":[{"equals":{"data":"`+enc("other")+`"}}],"responses":[{"is":{"data":"`+enc("two")+`"}}]}]}`)
		c := dial(t, im)
		for i, tc := range []struct{ send, want string }{{"first", "one"}, {"other", "two"}, {"first", "one"}, {"third", ""}, {"other", "two"}} {
			got, err := exchangeTCP(t, c, tc.send)
			if err != nil || got != tc.want {
				t.Fatalf("%s request %d (%s): got %q, %v; want %q", mode, i, tc.send, got, err, tc.want)
			}
		}
		var data []string
		for _, r := range im.RecordedRequests() {
			data = append(data, string(config.MarshalJSON(get(r.Request, "data"), 0)))
		}
		want := []string{`"` + enc("first") + `"`, `"` + enc("other") + `"`, `"` + enc("first") + `"`, `"` + enc("third") + `"`, `"` + enc("other") + `"`}
		if strings.Join(data, " ") != strings.Join(want, " ") {
			t.Errorf("%s: recorded %v, want %v", mode, data, want)
		}
	}
}

// TestTCPDebugMatchesKeepTheirData: with --debug a stub's matches keep each request as
// recorded (its data not copied), so those requests are not recycled.
func TestTCPDebugMatchesKeepTheirData(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(impostertest.Def(t, `{"protocol":"tcp","stubs":[{"responses":[{"is":{"data":"ok"}}]}]}`),
		imposter.Options{Host: "127.0.0.1", Logger: log, Debug: true, Protocols: protocols})
	if err != nil {
		t.Fatal(err)
	}
	impostertest.Start(t, im)
	c := dial(t, im)
	// A match is kept once its answer is written: the fourth exchange makes sure the third's is.
	for _, send := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		if got, err := exchangeTCP(t, c, send); err != nil || got != "ok" {
			t.Fatalf("%s: got %q, %v", send, got, err)
		}
	}
	var data []string
	for _, m := range im.Stubs(false).Matches(0)[:3] {
		data = append(data, jsvalue.String(get(config.AsObject(get(config.AsObject(m), "request")), "data")))
	}
	if strings.Join(data, " ") != "aaaa bbbb cccc" {
		t.Errorf("matches' data: %q, want aaaa bbbb cccc", data)
	}
}

// TestTCPHalfClosedClient: a client that sent its request and shut its sending side gets no
// answer from a response that waits or runs a shell command, and the connection closes without
// the wait running out, as Mountebank's socket ends at the client's FIN (node's allowHalfOpen is
// off) before its timer or child process is done; other answers are written.
func TestTCPHalfClosedClient(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a client's FIN is seen during a wait on Linux only")
	}
	tests := []struct {
		name, response, want string
	}{
		{"plain", `{"is":{"data":"plain"}}`, "plain"},
		{"decorate", `{"is":{"data":"x"},"behaviors":[{"decorate":"function (req, res) { res.data = 'decorated'; }"}]}`, "decorated"},
		{"wait", `{"is":{"data":"waited"},"behaviors":[{"wait":50}]}`, ""},
		{"wait longer than the test", `{"is":{"data":"waited"},"_behaviors":{"wait":600000}}`, ""},
		{"shellTransform", `{"is":{"data":"x"},"behaviors":[{"shellTransform":"sleep 600 #"}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := startImposter(t, `{"protocol":"tcp","stubs":[{"responses":[`+tt.response+`]}]}`)
			c := dial(t, im)
			if _, err := io.WriteString(c, "ping"); err != nil {
				t.Fatal(err)
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on a hang, not a speed
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("reading the answer: %v (the connection was not closed)", err)
			}
			if string(got) != tt.want {
				t.Errorf("answer %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTCPResolverJoinsPackets: with an endOfRequestResolver, the packets of a request are
// joined until it says the request is whole, whatever the first packet held (too few bytes for
// the prefix, the prefix and part of the frame), and the next request starts afresh. net.Pipe
// hands each write to one read.
func TestTCPResolverJoinsPackets(t *testing.T) {
	frame := func(s string) string { return "\x00\x00\x00" + string(rune(len(s))) + s }
	def := impostertest.Def(t, `{"protocol":"tcp","mode":"binary","recordRequests":true,
		"endOfRequestResolver":{"inject":"function (requestData) { return requestData.length >= 4 && requestData.length >= 4 + requestData[0] * 16777216 + requestData[1] * 65536 + requestData[2] * 256 + requestData[3]; }"},
		"stubs":[{"responses":[{"is":{"data":"b2s="}}]}]}`)
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(def, imposter.Options{Logger: log, Script: script.New(script.Options{Logger: log})})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(im)
	if s.endOfRequest == nil {
		t.Fatal("no resolver")
	}
	server, client := net.Pipe()
	done := make(chan struct{})
	go func() {
		s.ServeConn(server)
		close(done)
	}()
	requests := [][]string{
		{"\x00\x00", "\x00\x03ab", "c"},
		{frame("whole")},
		{frame("four")[:6], "ur"},
		{frame("x") + frame("y")},         // one packet with two frames is one request (as in Mountebank)
		{"\x00", "\x00", "\x00", "\x01z"}, // a byte at a time
	}
	got := make([]byte, 2)
	for i, packets := range requests {
		for _, p := range packets {
			if _, err := io.WriteString(client, p); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := io.ReadFull(client, got); err != nil || string(got) != "ok" {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
	}
	client.Close()
	<-done
	var data []string
	for _, r := range im.RecordedRequests() {
		data = append(data, jsvalue.String(get(r.Request, "data")))
	}
	var want []string
	for _, packets := range requests {
		want = append(want, b64([]byte(strings.Join(packets, ""))))
	}
	if strings.Join(data, " ") != strings.Join(want, " ") {
		t.Errorf("recorded %v, want %v", data, want)
	}
}
