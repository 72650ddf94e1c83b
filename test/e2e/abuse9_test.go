package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestServersShareADatadir runs two mockd on one --datadir, as Mountebank's servers share one
// (mbtest starts every server with --datadir .mbdb): the second one starts (it used to be
// refused), each saves its own imposters without losing the other's, a third one that would
// start the imposters still running elsewhere fails on their ports without changing anything,
// and a restart after both are gone, even by kill -9, brings back what each had.
func TestServersShareADatadir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p1, p2, p3 := listenFree(t), listenFree(t), listenFree(t)
	first := start(t, "--datadir", dir)
	second, err := tryStart(t, "--datadir", dir)
	if err != nil {
		t.Fatalf("a second mockd on the --datadir of a running one: %v", err)
	}
	create := func(s *server, port int, im modelImposter) {
		t.Helper()
		if code, _, body := do(t, "POST", s.Admin+"/imposters", imposterJSON(port, im)); code != 201 {
			t.Fatalf("POST: %d %s", code, body)
		}
	}
	create(first, p1, modelImposter{Name: "first", Stubs: []string{"a"}})
	create(second, p2, modelImposter{Name: "second", Stubs: []string{"b"}})
	create(first, p3, modelImposter{Name: "third", Stubs: []string{"c"}})
	if code, _, body := do(t, "DELETE", fmt.Sprintf("%s/imposters/%d", first.Admin, p3), ""); code != 200 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "imposters.json"))
	if err != nil {
		t.Fatal(err)
	}

	// A third one starts with every imposter saved there, as Mountebank's does: the ports are
	// the running servers', so it fails, says why, and leaves the file as it was.
	if third, err := tryStart(t, "--datadir", dir); err == nil {
		third.stop()
		t.Error("a mockd started the imposters of the servers running on its --datadir")
	} else if !strings.Contains(err.Error(), strconv.Itoa(p1)) && !strings.Contains(err.Error(), strconv.Itoa(p2)) {
		t.Errorf("the third mockd's error does not name a port it could not take:\n%v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "imposters.json")); string(now) != string(saved) {
		t.Errorf("a mockd that failed to start changed the saved imposters:\n%s\nwas\n%s", now, saved)
	}
	for s, want := range map[*server]model{
		first:  {p1: {Name: "first", Stubs: []string{"a"}}},
		second: {p2: {Name: "second", Stubs: []string{"b"}}},
	} {
		if got := fetchModel(t, s.Admin); !reflect.DeepEqual(got, want) {
			t.Errorf("a running mockd now has %v, want %v", got, want)
		}
	}
	for _, port := range []int{p1, p2} {
		if code, _, _ := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", port), ""); code != 200 {
			t.Errorf("imposter %d answered %d, want 200", port, code)
		}
	}

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	second.stop()
	restarted := start(t, "--datadir", dir)
	want := model{p1: {Name: "first", Stubs: []string{"a"}}, p2: {Name: "second", Stubs: []string{"b"}}}
	if got := fetchModel(t, restarted.Admin); !reflect.DeepEqual(got, want) {
		t.Errorf("restarted on the shared --datadir: %v, want %v", got, want)
	}
}

// TestSMTPLongLinesAndLargeMessages sends, through Go's SMTP client, a message with a line past
// the 64 KiB command limit (it ended the session, where Mountebank's smtp-server takes it), then
// one past --max-body on the same connection: that one is answered 552 once sent, and the
// session goes on with the next message (it used to be cut off mid-DATA with no answer).
func TestSMTPLongLinesAndLargeMessages(t *testing.T) {
	s := start(t, "--max-body", "1MiB")
	port := listenFree(t)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"smtp","port":%d,"recordRequests":true}`, port)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c, err := smtp.Dial("127.0.0.1:" + strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	long := strings.Repeat("y", 200<<10)
	large := strings.Repeat(strings.Repeat("z", 998)+"\r\n", 2<<10) // 2 MiB
	for i, tt := range []struct {
		text    string
		wantErr string // in the answer to the end of DATA
	}{
		{long, ""},
		{large, "552 Error: message exceeds fixed maximum message size 1048576"},
		{"small", ""},
	} {
		if err := c.Mail("ann@example.com"); err != nil {
			t.Fatalf("message %d: MAIL: %v", i, err)
		}
		if err := c.Rcpt("bob@example.com"); err != nil {
			t.Fatalf("message %d: RCPT: %v", i, err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatalf("message %d: DATA: %v", i, err)
		}
		if _, err := io.WriteString(w, "Subject: m\r\n\r\n"+tt.text+"\r\n"); err != nil {
			t.Fatalf("message %d: writing the message: %v", i, err)
		}
		err = w.Close()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Fatalf("message %d: end of DATA answered %v", i, err)
		case tt.wantErr != "":
			var te *textproto.Error
			if !errors.As(err, &te) || fmt.Sprintf("%d %s", te.Code, te.Msg) != tt.wantErr {
				t.Fatalf("message %d: end of DATA answered %v, want %s", i, err, tt.wantErr)
			}
		}
	}
	if err := c.Quit(); err != nil {
		t.Errorf("QUIT: %v", err)
	}
	_, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), "")
	reqs, _ := jsonBody(t, body)["requests"].([]any)
	if len(reqs) != 2 {
		t.Fatalf("recorded %d messages, want the two that fit", len(reqs))
	}
	for i, want := range []string{long, "small"} {
		if got, _ := reqs[i].(map[string]any)["text"].(string); got != want {
			t.Errorf("message %d recorded with a text of %d bytes, want %d", i, len(got), len(want))
		}
	}
}
