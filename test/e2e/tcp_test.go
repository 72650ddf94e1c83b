package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func dialTCP(t *testing.T, port int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %d: %v", port, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ask writes data and reads one answer.
func ask(t *testing.T, c net.Conn, data string) string {
	t.Helper()
	if _, err := io.WriteString(c, data); err != nil {
		t.Fatalf("write %q: %v", data, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read answer to %q: %v", data, err)
	}
	return string(buf[:n])
}

// TestTCPBadClientsDoNotBlock checks that half-open, garbage-sending and never-finishing
// clients of a tcp imposter hold up neither other clients nor the admin API.
func TestTCPBadClientsDoNotBlock(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,"stubs":[{"predicates":[{"equals":{"data":"ping"}}],"responses":[{"is":{"data":"pong"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}

	// A client that connects and never writes, one that half-closes, one that floods garbage
	// without reading, and one that sends a huge request slowly.
	silent := dialTCP(t, port)
	_ = silent
	half := dialTCP(t, port)
	half.(*net.TCPConn).CloseWrite()
	flood := dialTCP(t, port)
	go func() {
		junk := []byte(strings.Repeat("\x00\xff garbage ", 4096))
		for i := 0; i < 200; i++ {
			if _, err := flood.Write(junk); err != nil {
				return
			}
		}
	}()
	slow := dialTCP(t, port)
	go func() {
		for i := 0; i < 50; i++ {
			if _, err := slow.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	for i := 0; i < 20; i++ {
		c := dialTCP(t, port)
		if got := ask(t, c, "ping"); got != "pong" {
			t.Fatalf("good client %d: got %q, want %q", i, got, "pong")
		}
	}
	start := time.Now()
	if status, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("admin GET: %d %s", status, body)
	}
	if d := time.Since(start); d > 20*time.Second { // a hang, not a slow machine
		t.Errorf("admin GET took %v with bad tcp clients connected", d)
	}
	// Deleting the imposter closes every connection, bad ones included, promptly.
	start = time.Now()
	if status, _, body := do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("delete: %d %s", status, body)
	}
	if d := time.Since(start); d > 20*time.Second { // a hang, not a slow machine
		t.Errorf("DELETE took %v with bad tcp clients connected", d)
	}
	_ = silent.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Error("silent client: connection still open after the imposter was deleted")
	}
}

// TestTCPModesAndRecording covers text and binary tcp imposters end to end.
func TestTCPModesAndRecording(t *testing.T) {
	s := start(t)
	text, bin := listenFree(t), listenFree(t)
	imps := fmt.Sprintf(`{"imposters":[
		{"protocol":"tcp","port":%d,"recordRequests":true,"stubs":[{"predicates":[{"startsWith":{"data":"GET"}}],"responses":[{"is":{"data":"got it"}}]}]},
		{"protocol":"tcp","port":%d,"mode":"binary","stubs":[{"predicates":[{"equals":{"data":"AAEC"}}],"responses":[{"is":{"data":"/w=="}}]}]}]}`, text, bin)
	if status, _, body := do(t, "PUT", s.Admin+"/imposters", imps); status != 200 {
		t.Fatalf("put: %d %s", status, body)
	}
	c := dialTCP(t, text)
	if got := ask(t, c, "GET thing"); got != "got it" {
		t.Errorf("text: got %q", got)
	}
	if got := ask(t, c, "GET again"); got != "got it" {
		t.Errorf("text, same connection: got %q", got)
	}
	b := dialTCP(t, bin)
	if got := ask(t, b, "\x00\x01\x02"); got != "\xff" {
		t.Errorf("binary: got %q", got)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(text), "")
	imp := jsonBody(t, body)
	reqs, _ := imp["requests"].([]any)
	if len(reqs) != 2 || imp["mode"] != "text" {
		t.Fatalf("recorded %d requests, mode %v; want 2, text:\n%s", len(reqs), imp["mode"], body)
	}
	first := reqs[0].(map[string]any)
	if first["data"] != "GET thing" || first["ip"] == nil || first["requestFrom"] == nil {
		t.Errorf("first request = %v", first)
	}
}

// TestSMTPReceivesMail sends mail with Go's net/smtp and reads it back from the API; a client
// that stops mid-DATA does not block another.
func TestSMTPReceivesMail(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"smtp","port":%d,"recordRequests":true}`, port)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	stuck := dialTCP(t, port)
	r := bufio.NewReader(stuck)
	r.ReadString('\n')
	io.WriteString(stuck, "HELO x\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<d@e.f>\r\nDATA\r\nSubject: never ends\r\n")

	msg := "From: Ann <ann@example.com>\r\nTo: bob@example.com\r\nSubject: hi\r\n\r\nhello bob\r\n"
	if err := smtp.SendMail("127.0.0.1:"+strconv.Itoa(port), nil, "ann@example.com", []string{"bob@example.com"}, []byte(msg)); err != nil {
		t.Fatalf("send: %v", err)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	imp := jsonBody(t, body)
	reqs, _ := imp["requests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1:\n%s", len(reqs), body)
	}
	got := reqs[0].(map[string]any)
	if got["subject"] != "hi" || got["text"] != "hello bob" || got["envelopeFrom"] != "ann@example.com" {
		t.Errorf("recorded %v", got)
	}
	if from, _ := got["from"].(map[string]any); from["name"] != "Ann" || from["address"] != "ann@example.com" {
		t.Errorf("from = %v", got["from"])
	}
}

// TestTCPScripts covers JavaScript on tcp imposters: an endOfRequestResolver that joins packets
// until a newline, an inject response and a decorate behavior.
func TestTCPScripts(t *testing.T) {
	s := start(t, "--allowInjection")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,"recordRequests":true,
		"endOfRequestResolver":{"inject":"function (requestData) { return requestData.endsWith('\\n'); }"},
		"stubs":[
		{"predicates":[{"startsWith":{"data":"inject"}}],"responses":[{"inject":"function (config) { return { data: 'got ' + config.request.data.trim().length }; }"}]},
		{"responses":[{"is":{"data":"plain"},"behaviors":[{"decorate":"function (config, response) { response.data = response.data.toUpperCase(); }"}]}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c := dialTCP(t, port)
	if _, err := c.Write([]byte("inj")); err != nil {
		t.Fatal(err)
	}
	// "inj" alone is not a whole request: the answer comes only after the newline.
	if got := ask(t, c, "ect me\n"); got != "got 9" { //nolint:misspell // "inj" + "ect me": one word over two packets
		t.Errorf("inject over two packets answered %q, want %q", got, "got 9")
	}
	if got := ask(t, c, "hello\n"); got != "PLAIN" {
		t.Errorf("decorated response = %q, want %q", got, "PLAIN")
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	if !strings.Contains(body, `"data": "inject me\n"`) {
		t.Errorf("the joined request was not recorded as one:\n%s", body)
	}
}

// TestLoopingResolverClosesTheConnection: a tcp imposter's endOfRequestResolver runs again for
// every packet; one that loops cost --script-timeout per packet for as long as the client kept
// sending (the connection stayed until --idle-timeout). Once the time limit stops it, the
// connection is closed, and the imposter and the admin API go on answering.
func TestLoopingResolverClosesTheConnection(t *testing.T) {
	s := start(t, "--allowInjection", "--script-timeout", "300ms", "--idle-timeout", "10m")
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,"endOfRequestResolver":{"inject":"function (data) { while (true) {} }"},"stubs":[{"responses":[{"is":{"data":"x"}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("packet")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a bound for a broken build, not a measure
	if n, err := c.Read(make([]byte, 16)); err != io.EOF {
		t.Fatalf("read after the resolver timed out: %d bytes, %v; want the connection closed (EOF)", n, err)
	}
	if status, _, _ := do(t, "GET", s.Admin+"/imposters", ""); status != 200 {
		t.Errorf("the admin API answers %d", status)
	}
}
