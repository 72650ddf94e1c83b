//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mockd/mockd/internal/app"
)

// TestLoadProtofile: the protocols a protofile names are loaded; a missing one loads none,
// silently when it is the default one (as mb), reported when it was given (a misspelt path
// otherwise shows only as "protocol not yet supported" later); one that is not JSON is reported; a FIFO is not opened (it would block the start)
// and is reported only when given.
func TestLoadProtofile(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(named, []byte(`{"foo":{"createCommand":"node foo.js"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"foo":`), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		given  bool
		want   string
		protos int
	}{
		{named, false, "", 1},
		{filepath.Join(dir, "none.json"), false, "", 0}, // the default protocols.json: mb's silence
		{filepath.Join(dir, "none.json"), true, "file does not exist; no custom protocols loaded", 0},
		{bad, true, "contains invalid JSON -- no custom protocols loaded", 0},
		{fifo, false, "", 0},
		{fifo, true, "not read (not a regular file", 0},
	} {
		var out bytes.Buffer
		var opts app.Options
		loadProtofile(tc.path, tc.given, &opts, &out)
		if (tc.want == "") != (out.Len() == 0) || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s (given %v): %q, want %q", tc.path, tc.given, out.String(), tc.want)
		}
		if len(opts.CustomProtocols) != tc.protos {
			t.Errorf("%s: %d protocols, want %d", tc.path, len(opts.CustomProtocols), tc.protos)
		}
	}
	var opts app.Options
	loadProtofile(named, false, &opts, &bytes.Buffer{})
	if s := opts.CustomProtocols[0]; s.Name != "foo" || s.CreateCommand != "node foo.js" {
		t.Errorf("loaded %+v", s)
	}
}
