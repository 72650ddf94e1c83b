package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/smtp"
	"net/textproto"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestTwoServersOnOneDatadir starts a second mockd on the --datadir of a running one: it must
// refuse to start, saying why, and leave the first one and what it saved as they were (both
// used to run, each saving only its own imposters over the other's, so that a restart brought
// back the last writer's and lost what the other had acknowledged). Once the first is gone,
// even by kill -9, the directory is free again.
func TestTwoServersOnOneDatadir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p1 := listenFree(t)
	first := start(t, "--datadir", dir)
	want := model{p1: {Name: "first", Stubs: []string{"a"}}}

	// Before and after the first one saves anything (an empty directory once let the second
	// start; a saved imposter's port, taken by the first, then made it fail for that reason).
	for _, when := range []string{"before", "after"} {
		if when == "after" {
			if code, _, body := do(t, "POST", first.Admin+"/imposters", imposterJSON(p1, modelImposter{Name: "first", Stubs: []string{"a"}})); code != 201 {
				t.Fatalf("POST: %d %s", code, body)
			}
		}
		second, err := tryStart(t, "--datadir", dir)
		if err == nil {
			second.stop()
			t.Fatalf("%s the first one saved an imposter, a second mockd started on its --datadir", when)
		}
		if msg := err.Error(); !strings.Contains(msg, "in use by another mockd") || !strings.Contains(msg, dir) {
			t.Errorf("%s the first one saved an imposter, the second mockd's error does not say the directory is in use:\n%s", when, msg)
		}
	}
	if got := fetchModel(t, first.Admin); !reflect.DeepEqual(got, want) {
		t.Errorf("the first mockd now has %v, want %v", got, want)
	}
	if code, _, _ := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", p1), ""); code != 200 {
		t.Errorf("the first mockd's imposter answered %d, want 200", code)
	}

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	third := start(t, "--datadir", dir)
	if got := fetchModel(t, third.Admin); !reflect.DeepEqual(got, want) {
		t.Errorf("restarted after kill -9: %v, want %v", got, want)
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
