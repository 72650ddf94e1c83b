//go:build !unix

package store

import "os"

// lockDir cannot lock a directory on this system: a second server on the same data directory
// is not detected (README: --datadir).
func lockDir(string) (*os.File, error) { return nil, nil }
