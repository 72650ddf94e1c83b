package customproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// The test binary is also the programs the tests start: with CUSTOMPROTO_HELPER set it acts
// as a custom protocol's program instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("CUSTOMPROTO_HELPER") {
	case "":
		os.Exit(m.Run())
	case "ready": // announce a port and metadata, echo the arguments, wait to be stopped
		var args map[string]any
		_ = json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &args)
		b, _ := json.Marshal(map[string]any{"port": 4242, "encoding": "utf8", "x": 1, "args": args})
		fmt.Println(string(b))
		fmt.Println("warn something to log")
		time.Sleep(time.Hour)
	case "plain": // a first line that is not JSON: the port is the creation request's
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "silent":
		time.Sleep(time.Hour)
	case "exit0":
		os.Exit(0)
	}
	os.Exit(7)
}

func newImposter(t *testing.T, js string) *imposter.Imposter {
	t.Helper()
	v, err := config.ParseJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{Custom: map[string]bool{"p": true}})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	im, err := imposter.New(def, imposter.Options{Logger: slog.New(slog.DiscardHandler), Custom: map[string]bool{"p": true}})
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func testOptions() *Options {
	return &Options{CallbackURLTemplate: func() string { return "http://localhost:2525/imposters/:port/_requests" },
		LogLevel: "debug", StartTimeout: 2 * time.Second, StopTimeout: 2 * time.Second}
}

// TestArguments: the JSON argument is Mountebank's: its four fields, the creation request's
// other fields merged in (arrays become objects of their indexes), --host when the request
// names none, defaultResponse last; protocol, name, recordRequests and stubs are left out.
func TestArguments(t *testing.T) {
	im := newImposter(t, `{"protocol":"p","port":3000,"name":"n","recordRequests":true,"defaultResponse":{"data":"d"},
		"extra":[1,{"a":2}],"loglevel":"warn","nested":{"k":"v"},"stubs":[]}`)
	opts := testOptions()
	opts.Host = "127.0.0.1"
	got := string(Arguments(im.Definition(), opts))
	want := `{"port":3000,"callbackURLTemplate":"http://localhost:2525/imposters/:port/_requests","loglevel":"warn","allowInjection":false,` +
		`"extra":{"0":1,"1":{"a":2}},"nested":{"k":"v"},"host":"127.0.0.1","defaultResponse":{"data":"d"}}`
	if got != want {
		t.Errorf("Arguments:\n got %s\nwant %s", got, want)
	}
	// No port in the request: none in the arguments (JSON.stringify drops undefined).
	im = newImposter(t, `{"protocol":"p","host":"::1"}`)
	got = string(Arguments(im.Definition(), testOptions()))
	want = `{"callbackURLTemplate":"http://localhost:2525/imposters/:port/_requests","loglevel":"debug","allowInjection":false,"host":"::1"}`
	if got != want {
		t.Errorf("Arguments without a port:\n got %s\nwant %s", got, want)
	}
}

// TestSplitCommand: split on every single space, as createCommand.split(' '); nothing of the
// command is interpreted by a shell.
func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		args []string
	}{
		{"python3 -m mb_netmgmt snmp", "python3", []string{"-m", "mb_netmgmt", "snmp"}},
		{"prog  a", "prog", []string{"", "a"}},
		{"prog 'a b' $(rm) ;x", "prog", []string{"'a", "b'", "$(rm)", ";x"}},
		{"", "", []string{}},
	} {
		name, args := splitCommand(tc.in)
		if name != tc.name || strings.Join(args, "|") != strings.Join(tc.args, "|") || len(args) != len(tc.args) {
			t.Errorf("splitCommand(%q) = %q %q, want %q %q", tc.in, name, args, tc.name, tc.args)
		}
	}
}

// TestParse: protocols in the file's order, the last of a repeated name, an entry without a
// string createCommand kept with none; anything but a JSON object is ErrInvalid.
func TestParse(t *testing.T) {
	specs, err := Parse([]byte(`{"snmp":{"createCommand":"python3 -m x snmp"},"bad":{"createCommand":3},"http":{"createCommand":"a"},"snmp":{"createCommand":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Spec{{"snmp", "b"}, {"bad", ""}, {"http", "a"}}
	if fmt.Sprint(specs) != fmt.Sprint(want) {
		t.Errorf("Parse = %v, want %v", specs, want)
	}
	for _, bad := range []string{`[]`, `{`, `"x"`, ``, `null`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q): %v, want ErrInvalid", bad, err)
		}
	}
	if !BuiltIn("http") || BuiltIn("snmp") {
		t.Error("BuiltIn")
	}
}

// TestLoad: a missing file names nothing; a directory or a file past 1 MiB is not read.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if specs, err := Load(filepath.Join(dir, "none.json")); specs != nil || err != nil {
		t.Errorf("missing: %v %v", specs, err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrNotRead) {
		t.Errorf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"a":"`+strings.Repeat("x", MaxProtofile)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); !errors.Is(err, ErrNotRead) {
		t.Errorf("big: %v", err)
	}
}

func startHelper(t *testing.T, mode, js string, opts *Options) (*imposter.External, error) {
	t.Setenv("CUSTOMPROTO_HELPER", mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return start(Spec{Name: "p", CreateCommand: exe + " -test.run=^$"}, opts, newImposter(t, js))
}

// TestStart: the first line on stdout is the metadata; its port is the imposter's (and leaves
// the metadata, as encoding does); Close stops the program and returns once it has exited.
func TestStart(t *testing.T) {
	ext, err := startHelper(t, "ready", `{"protocol":"p","port":1234,"custom":"c"}`, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if port := ext.Listener.Addr().(interface{ String() string }).String(); !strings.HasSuffix(port, ":4242") {
		t.Errorf("addr %s, want port 4242", port)
	}
	md := string(config.MarshalJSON(ext.Metadata, 0))
	if !strings.Contains(md, `"x":1`) || !strings.Contains(md, `"port":1234`) || !strings.Contains(md, `"custom":"c"`) || strings.Contains(md, "encoding") {
		t.Errorf("metadata %s", md)
	}
	if ext.CallbackURL != "http://localhost:2525/imposters/4242/_requests" {
		t.Errorf("callback %s", ext.CallbackURL)
	}
	l := ext.Listener.(*listener)
	done := make(chan struct{})
	go func() {
		_, err := ext.Listener.Accept()
		if err == nil {
			t.Error("Accept returned a connection")
		}
		close(done)
	}()
	if err := ext.Listener.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.p.exited:
	default:
		t.Error("Close returned before the program exited")
	}
	<-done
	_ = ext.Listener.Close() // twice is fine
}

// TestStartPlain: a first line that is not JSON leaves the port to the creation request; a
// request without one cannot start.
func TestStartPlain(t *testing.T) {
	ext, err := startHelper(t, "plain", `{"protocol":"p","port":1234}`, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Listener.Close()
	if !strings.HasSuffix(ext.Listener.Addr().String(), ":1234") || ext.Metadata != nil {
		t.Errorf("addr %s metadata %v", ext.Listener.Addr(), ext.Metadata)
	}
	_, err = startHelper(t, "plain", `{"protocol":"p"}`, testOptions())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Code != config.CodeCannotStart || !strings.Contains(ce.Message, "announced no port") {
		t.Errorf("no port: %v", err)
	}
}

// TestStartFailures: Mountebank's errors for a program that exits first or cannot be run, and
// mockd's for one that never writes its first line.
func TestStartFailures(t *testing.T) {
	_, err := startHelper(t, "exit7", `{"protocol":"p","port":1234}`, testOptions())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Code != config.CodeCannotStart || ce.Message != `"p" start command failed (exit code 7)` {
		t.Errorf("exit 7: %#v", err)
	}
	_, err = startHelper(t, "exit0", `{"protocol":"p","port":1234}`, testOptions())
	if !errors.As(err, &ce) || ce.Message != `"p" start command failed (exit code 0)` {
		t.Errorf("exit 0: %#v", err)
	}
	opts := testOptions()
	opts.StartTimeout = 300 * time.Millisecond
	_, err = startHelper(t, "silent", `{"protocol":"p","port":1234}`, opts)
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "wrote no line on stdout") {
		t.Errorf("silent: %#v", err)
	}
	_, err = start(Spec{Name: "p", CreateCommand: "/nonexistent/prog a"}, testOptions(), newImposter(t, `{"protocol":"p","port":1234}`))
	if !errors.As(err, &ce) || ce.Raw == nil {
		t.Fatalf("spawn: %#v", err)
	}
	got := string(config.MarshalJSON(ce.Raw, 0))
	want := `{"code":"cannot start server","message":"Invalid configuration for protocol \"p\": cannot run \"/nonexistent/prog a\"","source":"/nonexistent/prog a",` +
		`"details":{"errno":-2,"code":"ENOENT","syscall":"spawn /nonexistent/prog","path":"/nonexistent/prog","spawnargs":["a","{\"port\":1234,\"callbackURLTemplate\":\"http://localhost:2525/imposters/:port/_requests\",\"loglevel\":\"debug\",\"allowInjection\":false}"]}}`
	if got != want {
		t.Errorf("spawn error:\n got %s\nwant %s", got, want)
	}
	_, err = start(Spec{Name: "p"}, testOptions(), newImposter(t, `{"protocol":"p","port":1234}`))
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, `cannot run ""`) {
		t.Errorf("no command: %#v", err)
	}
}
