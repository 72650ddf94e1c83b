//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockDir opens the directory at path and takes an exclusive lock on it without waiting
// (errLocked when another process holds it); closing the returned file releases it. The lock
// is the directory's own, so it leaves no file behind, and the kernel drops it when the
// process ends, however it ends (kill -9 too).
func lockDir(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}

// pin opens the file at path and returns it with its state: while it is open, its inode is not
// given to another file (a rename over it unlinks it; the open file keeps it). nil, nil when
// there is no file.
func pin(path string) (*os.File, os.FileInfo) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil
	}
	return f, fi
}
