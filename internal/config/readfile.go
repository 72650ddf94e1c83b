package config

import (
	"fmt"
	"io"
	"os"
)

// MaxFileSize bounds a file mockd reads as configuration (a config file, a template it includes,
// a bodyFile, an rcfile): what the admin API takes in one body.
const MaxFileSize = 256 << 20

// maxFileSize is the bound ReadLimited applies: MaxFileSize, smaller in tests (reading 256 MiB
// from /dev/zero took minutes under the race detector).
var maxFileSize int64 = MaxFileSize

// ReadLimited is os.ReadFile refusing a file larger than MaxFileSize. --configfile /dev/zero
// read until the kernel killed mockd for the machine's memory (/dev/urandom likewise); a FIFO
// or /dev/stdin is still read as before.
func ReadLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(len(data)) > maxFileSize {
		return nil, &os.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d MiB", maxFileSize>>20)}
	}
	return data, nil
}
