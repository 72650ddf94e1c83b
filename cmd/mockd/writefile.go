package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// replaceFile writes data as the file at path (a config file mockd save, convert or import
// writes), replacing the old one only once the new one is written in full: it is written to
// a temporary file beside it and renamed over it. os.WriteFile truncated the old file first,
// so a mockd save killed midway (SIGTERM, a full disk, a file size limit) left a file cut short
// where the last good save had been. A symbolic link is followed (the file it names is
// replaced); a new file is made with mode 0644, an old one keeps its mode.
func replaceFile(path string, data []byte) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		if !info.Mode().IsRegular() {
			// A device, a FIFO (/dev/stdout): written as it is, there is nothing to replace.
			return os.WriteFile(path, data, mode)
		}
		mode = info.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		// The error names the file asked for, not the temporary one (`open
		// /ro/.mb.json.2501022145.tmp: permission denied` read as if mockd had made up a name).
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &fs.PathError{Op: "create", Path: path, Err: pe.Err}
		}
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
