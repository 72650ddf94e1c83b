package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConfigErrorNamesFileLineAndStartsNothing(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	file := filepath.Join(dir, "bad.yaml")
	body := "imposters:\n  - port: " + strconv.Itoa(port) + "\n    protocol: http\n    stubs:\n      - predicates: [{equals: {path: /a}}]\n        respones: [{is: {statusCode: 200}}]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := tryStart(t, "-c", file)
	if err == nil {
		t.Fatal("mockd started with an invalid config")
	}
	want := file + `:6:9: imposters[0].stubs[0].respones: unknown field "respones"`
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error output does not name file, line and field\n got: %v\nwant: %s", err, want)
	}
	if !strings.Contains(err.Error(), "code 1") {
		t.Errorf("want exit code 1, got: %v", err)
	}
}

func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	yamlOut := filepath.Join(dir, "example.yaml")
	jsonOut := filepath.Join(dir, "example.json")
	jsonIn := filepath.Join(dir, "in.json")
	in := `{"imposters":[{"protocol":"http","port":4545,"name":"x","stubs":[{"predicates":[{"deepEquals":{"query":{"a":["1","2"]}}}],"responses":[{"is":{"statusCode":201,"body":{"b":1,"a":[true,null]},"headers":{"X-Id":"007"}}},{"is":{"body":"${TOKEN}"},"repeat":2}]}]}]}`
	if err := os.WriteFile(jsonIn, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		out, err := exec.Command(mockdBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mockd %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("convert", jsonIn, "-o", yamlOut)
	run("convert", yamlOut, "-o", jsonOut)
	got, _ := os.ReadFile(jsonOut)
	out, err := exec.Command(mockdBin, "convert", "--to", "json", jsonIn).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(out) {
		t.Errorf("JSON → YAML → JSON changed the config\n got: %s\nwant: %s", got, out)
	}
}

// TestConvertRoundTripServes: a Mountebank file whose stubs hold responses of 0 and false
// (served once as an empty response, then dropped, as Mountebank does) converts to YAML that
// mockd serves to the same GET /imposters and the same answers; one holding what only
// Mountebank's lenient reading takes (a key it ignores, a status of 1000) converts with each such
// place listed on standard error, with its YAML line.
func TestConvertRoundTripServes(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	in := `{"imposters":[{"protocol":"http","port":` + strconv.Itoa(port) + `,"stubs":[` +
		`{"predicates":[{"equals":{"path":"/a"}}],"responses":[0,{"is":{"body":"a"}},false]},` +
		`{"responses":[false]}]}]}`
	jsonIn := write(t, dir, "in.json", in)
	yamlOut := filepath.Join(dir, "out.yaml")
	out, err := exec.Command(mockdBin, "convert", jsonIn, "-o", yamlOut).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("mockd convert: %v\n%s", err, out)
	}
	var answers, listings []string
	for _, file := range []string{jsonIn, yamlOut} {
		s := start(t, "-c", file)
		_, listing, err := get(s.Admin + "/imposters?replayable=true")
		if err != nil {
			t.Fatal(err)
		}
		listings = append(listings, listing)
		var got []string
		for _, path := range []string{"/a", "/a", "/a", "/a", "/b", "/b"} {
			code, body, err := get("http://127.0.0.1:" + strconv.Itoa(port) + path)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %q", code, body))
		}
		answers = append(answers, strings.Join(got, ", "))
		s.stop()
	}
	if listings[0] != listings[1] {
		t.Errorf("GET /imposters differs\n JSON: %s\n YAML: %s", listings[0], listings[1])
	}
	if want := `200 "", 200 "a", 200 "", 200 "a", 200 "", 200 ""`; answers[0] != want || answers[1] != want {
		t.Errorf("answers\n JSON: %s\n YAML: %s\n want: %s", answers[0], answers[1], want)
	}

	lenient := write(t, dir, "lenient.json", `{"imposters":[{"protocol":"http","port":`+strconv.Itoa(port)+`,"foo":1,"stubs":[{"responses":[{"is":{"statusCode":1000}}]}]}]}`)
	cmd := exec.Command(mockdBin, "convert", lenient)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	yaml, err := cmd.Output()
	if err != nil {
		t.Fatalf("mockd convert of a lenient file: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"lenient.json loads as Mountebank JSON, but its YAML will not load", `stdout:4:5: imposters[0].foo: unknown field "foo"`,
		"stdout:8:15: imposters[0].stubs[0].responses[0].is.statusCode: must be an HTTP status"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("convert's standard error lacks %q:\n%s\nYAML:\n%s", want, stderr.String(), yaml)
		}
	}
}

func TestStartStopWithPidfile(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "mb.pid")
	cmd := exec.Command(mockdBin, "start", "--port", "0", "--host", "127.0.0.1", "--pidfile", pidfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(pidfile); err == nil {
			break
		}
		if i > 600 {
			_ = cmd.Process.Kill()
			t.Fatal("mockd start wrote no pid file")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out, err := exec.Command(mockdBin, "stop", "--pidfile", pidfile).CombinedOutput(); err != nil {
		t.Fatalf("mockd stop: %v\n%s", err, out)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("mockd start exited with %v after stop, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("mockd did not exit after mockd stop")
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind after stop")
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(mockdBin, arg).Output()
		if err != nil || !strings.HasPrefix(string(out), "mockd ") || !strings.Contains(string(out), "\ngo:     go1.") {
			t.Fatalf("mockd %s = %q, %v", arg, out, err)
		}
	}
}

// TestVersionFromLdflags builds mockd as a release does (make build, goreleaser) and checks
// that version, commit and date come out of both spellings of the command.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mockd")
	}
	bin := filepath.Join(t.TempDir(), "mockd")
	const app = "github.com/mockd/mockd/internal/app"
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X "+app+".Version=9.8.7 -X "+app+".Commit=0123abcd -X "+app+".Date=2026-11-25T11:23:01Z", "./cmd/mockd")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := "mockd 9.8.7 (Mountebank 2.9.1 API)\ncommit: 0123abcd\ndate:   2026-11-25T11:23:01Z\ngo:     go1."
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("mockd %s = %q, %v; want it to start with %q", arg, out, err, want)
		}
	}
}

// TestConvertInlinesBodyFileAndEnv: YAML → JSON puts each bodyFile's text in body (Mountebank
// JSON has no bodyFile) and resolves ${ENV}, or keeps it with --keep-env; the JSON serves what
// the YAML served.
func TestConvertInlinesBodyFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	port := listenFree(t)
	write(t, dir, "bodies/user.json", `{"id": 42}`)
	yml := write(t, dir, "stubs.yaml", "imposters:\n  - port: ${CONVERT_PORT}\n    protocol: http\n    stubs:\n"+
		"      - responses: [{is: {statusCode: 200, headers: {X-Env: \"${CONVERT_GREETING:-hello}\"}, bodyFile: bodies/user.json}}]\n")
	env := append(os.Environ(), "CONVERT_PORT="+strconv.Itoa(port))
	convert := exec.Command(mockdBin, "convert", yml, "-o", filepath.Join(dir, "out.json"))
	convert.Env = env
	if out, err := convert.CombinedOutput(); err != nil {
		t.Fatalf("convert: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "out.json"))
	for _, want := range []string{`"port": ` + strconv.Itoa(port), `"body": "{\"id\": 42}"`, `"X-Env": "hello"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("converted JSON lacks %s:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "bodyFile") {
		t.Errorf("converted JSON keeps bodyFile:\n%s", data)
	}
	// The JSON, read as Mountebank reads it (from another directory), serves the file's text.
	elsewhere := write(t, t.TempDir(), "copy.json", string(data))
	start(t, "-c", elsewhere)
	if _, hdr, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", ""); body != `{"id": 42}` || hdr.Get("X-Env") != "hello" {
		t.Errorf("the converted imposter answered %q with X-Env %q", body, hdr.Get("X-Env"))
	}

	keep := exec.Command(mockdBin, "convert", "--keep-env", yml)
	keep.Env = env
	out, err := keep.Output()
	if err != nil {
		t.Fatalf("convert --keep-env: %v", err)
	}
	for _, want := range []string{`"port": "${CONVERT_PORT}"`, `"X-Env": "${CONVERT_GREETING:-hello}"`, `"body": "{\"id\": 42}"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("convert --keep-env output lacks %s:\n%s", want, out)
		}
	}
}
