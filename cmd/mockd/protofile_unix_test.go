//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportProtofile: a protofile naming protocols is reported; a missing, empty or unreadable
// one says nothing unless given; a FIFO is not opened (it would block the start).
func TestReportProtofile(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "protocols.json")
	if err := os.WriteFile(named, []byte(`{"foo":{"createCommand":"node foo.js"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		given bool
		want  string
	}{
		{named, false, "names custom protocols (foo)"},
		{filepath.Join(dir, "none.json"), true, ""},
		{fifo, false, ""},
		{fifo, true, "not read (not a regular file"},
	} {
		var out bytes.Buffer
		reportProtofile(tc.path, tc.given, &out)
		if (tc.want == "") != (out.Len() == 0) || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s (given %v): %q, want %q", tc.path, tc.given, out.String(), tc.want)
		}
	}
}
