package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config file that never ends (--configfile /dev/zero) was read until the kernel killed mockd
// for the machine's memory; it is refused past MaxFileSize, naming the limit. A directory is
// refused as before, and a small file read whole.
func TestReadLimited(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadLimited("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 256 MiB") {
			t.Errorf("/dev/zero: %v, want larger than 256 MiB", err)
		}
		if _, _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 256 MiB") {
			t.Errorf("ReadFile /dev/zero: %v, want larger than 256 MiB", err)
		}
	}
	dir := t.TempDir()
	if _, err := ReadLimited(dir); err == nil {
		t.Errorf("a directory: read, want an error")
	}
	f := filepath.Join(dir, "a.json")
	if err := os.WriteFile(f, []byte(`{"imposters":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadLimited(f); err != nil || string(b) != `{"imposters":[]}` {
		t.Errorf("a small file: %q, %v", b, err)
	}
}
