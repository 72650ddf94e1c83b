//go:build !unix

package store

import "os"

// lockDir cannot lock a directory on this system: a second server on the same data directory
// is not detected (README: --datadir).
func lockDir(string) (*os.File, error) { return nil, nil }

// pin returns the state of the file at path, without keeping it open (a file open here cannot
// be renamed over): its inode may go to another file, which is not detected either.
func pin(path string) (*os.File, os.FileInfo) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil
	}
	return nil, fi
}
