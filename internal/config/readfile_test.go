package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config file that never ends (--configfile /dev/zero) was read until the kernel killed mockd
// for the machine's memory; it is refused past MaxFileSize, naming the limit. A directory is
// refused as before, and a small file read whole. The bound is made 1 MiB here: reading 256 MiB
// took the race detector minutes; a file of exactly the bound is still read.
func TestReadLimited(t *testing.T) {
	if MaxFileSize != 256<<20 || maxFileSize != MaxFileSize {
		t.Fatalf("the bound is %d (MaxFileSize %d), want 256 MiB", maxFileSize, MaxFileSize)
	}
	maxFileSize = 1 << 20
	t.Cleanup(func() { maxFileSize = MaxFileSize })
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadLimited("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
			t.Errorf("/dev/zero: %v, want larger than 1 MiB", err)
		}
		if _, _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
			t.Errorf("ReadFile /dev/zero: %v, want larger than 1 MiB", err)
		}
	}
	dir := t.TempDir()
	for _, size := range []int{1 << 20, 1<<20 + 1} {
		f := filepath.Join(dir, "big.json")
		if err := os.WriteFile(f, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := ReadLimited(f)
		if size <= 1<<20 && (err != nil || len(b) != size) {
			t.Errorf("a file of %d bytes: %d bytes, %v; want it read whole", size, len(b), err)
		}
		if size > 1<<20 && (err == nil || !strings.Contains(err.Error(), "larger than 1 MiB")) {
			t.Errorf("a file of %d bytes: %v, want larger than 1 MiB", size, err)
		}
	}
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
