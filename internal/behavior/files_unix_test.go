//go:build unix

package behavior

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Devices and FIFOs are refused without blocking the reader.
func TestFilesReadNotRegular(t *testing.T) {
	if _, _, err := NewFiles(nil, 0).Read("/dev/zero"); err == nil || !strings.Contains(err.Error(), "regular") {
		t.Errorf("/dev/zero: %v", err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := NewFiles([]string{dir}, 0).Read(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "regular") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("reading a FIFO blocks")
	}
}
