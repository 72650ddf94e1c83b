package behavior

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mockd/mockd/internal/config"
)

// DefaultMaxFileSize bounds a file named in a stub (a lookup's CSV) when Files.MaxSize is 0.
const DefaultMaxFileSize = 64 << 20

// Files says which files named in stubs (a lookup's CSV; anyone who reaches the admin API can
// name one) may be read: only regular files (not a device such as /dev/zero, nor a FIFO that
// would block the reader), no larger than MaxSize, and, when Roots is set, only under one of
// its directories (symbolic links resolved). A nil *Files reads any regular file of the
// default size.
type Files struct {
	// Roots are the directories files must lie under; none = anywhere.
	Roots []string
	// MaxSize bounds a file's size; 0 = DefaultMaxFileSize.
	MaxSize int64

	resolved []string // Roots with their symbolic links resolved
}

// NewFiles returns the rules for files under roots (relative ones from the working directory;
// none = anywhere) of at most maxSize bytes (0 = DefaultMaxFileSize).
func NewFiles(roots []string, maxSize int64) *Files {
	f := &Files{MaxSize: maxSize}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil || slices.Contains(f.Roots, abs) {
			continue // a config file's directory is often the working directory: named once
		}
		f.Roots = append(f.Roots, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			f.resolved = append(f.resolved, real)
		} else {
			f.resolved = append(f.resolved, abs)
		}
	}
	return f
}

func (f *Files) maxSize() int64 {
	if f == nil || f.MaxSize <= 0 {
		return DefaultMaxFileSize
	}
	return f.MaxSize
}

// under reports whether path (absolute, clean) lies in one of dirs.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Check refuses, with Mountebank's "insufficient access" error, a path that lies outside the
// roots as written. It reads nothing: the file need not exist yet (Mountebank reads it when a
// request needs it).
func (f *Files) Check(what, path string) *config.Error {
	if f == nil || len(f.Roots) == 0 {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err == nil && (under(abs, f.Roots) || under(abs, f.resolved)) {
		return nil
	}
	return &config.Error{Code: config.CodeInsufficient, Message: fmt.Sprintf(
		"%s %q is outside the directories mockd reads files from (%s); start mockd with --file-root to add a directory, or with --allowInjection",
		what, path, strings.Join(f.Roots, ", "))}
}

// Read reads a file the rules allow, returning its content and what it was when read.
func (f *Files) Read(path string) ([]byte, os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, nil, err
	}
	if f != nil && len(f.Roots) > 0 {
		abs, err := filepath.Abs(real)
		if err != nil || !under(abs, f.resolved) {
			return nil, nil, errors.New("the file lies outside the directories mockd reads files from")
		}
	}
	// Non-blocking, so that a FIFO put there since the check cannot hold the reader.
	file, err := os.OpenFile(real, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, errors.New("not a regular file")
	}
	limit := f.maxSize()
	if info.Size() > limit {
		return nil, nil, fmt.Errorf("larger than the limit of %d bytes", limit)
	}
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("larger than the limit of %d bytes", limit)
	}
	return data, info, nil
}
