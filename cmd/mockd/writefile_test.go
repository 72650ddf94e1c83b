package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceFile: the file is replaced in full or not at all, keeps its mode (0644 when new),
// a symbolic link is followed and stays a link, and no temporary file is left.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		prepare func(path string) string // returns the file whose content changes
		mode    fs.FileMode
		fails   bool
	}{
		{"new", func(p string) string { return p }, 0o644, false},
		{"existing", func(p string) string { _ = os.WriteFile(p, []byte("old"), 0o600); return p }, 0o600, false},
		{"a link", func(p string) string {
			target := p + ".target"
			_ = os.WriteFile(target, []byte("old"), 0o640)
			_ = os.Symlink(target, p)
			return target
		}, 0o640, false},
		{"in a missing directory", func(p string) string { return filepath.Join(p, "x") }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			file := tc.prepare(path)
			if tc.fails {
				path = file
			}
			err := replaceFile(path, []byte("new"))
			if tc.fails {
				if err == nil {
					t.Error("no error")
				} else if want := "create " + path + ": "; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error %q, want it to begin %q (the file asked for, not the temporary one)", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(file)
			info, _ := os.Stat(file)
			if string(got) != "new" || info.Mode().Perm() != tc.mode {
				t.Errorf("%s: %q, mode %v; want \"new\", %v", file, got, info.Mode().Perm(), tc.mode)
			}
			if file != path {
				if l, err := os.Lstat(path); err != nil || l.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the link is no longer one: %v %v", l, err)
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".tmp" {
			t.Errorf("left %s", e.Name())
		}
	}
}
