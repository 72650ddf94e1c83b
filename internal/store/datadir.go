// Package store keeps imposters across restarts: Dir is mockd's --datadir.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/mockd/mockd/internal/config"
)

// fileName is the one file in a data directory: every imposter, in the replayable form of
// GET /imposters?replayable=true. One file makes each change, even a replacement of every
// imposter, a single atomic rename.
const fileName = "imposters.json"

// Dir persists imposters in a directory. Its methods are safe for concurrent use.
type Dir struct {
	path string
	mu   sync.Mutex
}

// Open returns the data directory at path, creating it when missing.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	// Temporary files a crash left behind hold no acknowledged state.
	stale, _ := filepath.Glob(filepath.Join(path, fileName+".*.tmp"))
	for _, f := range stale {
		_ = os.Remove(f)
	}
	return &Dir{path: path}, nil
}

// File returns the path of the file holding the imposters.
func (d *Dir) File() string { return filepath.Join(d.path, fileName) }

// Load returns the saved imposters as a config to start with; nil when nothing was saved.
func (d *Dir) Load() (*config.Config, error) {
	file := d.File()
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read data directory: %w", err)
	}
	v, err := config.ParseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("cannot read data directory: %s: %w", file, err)
	}
	list, ok := config.AsObject(v).Get("imposters")
	imposters, isList := list.([]any)
	if !ok || !isList {
		return nil, fmt.Errorf("cannot read data directory: %s: no \"imposters\" array", file)
	}
	cfg := &config.Config{Server: &config.Object{}}
	for i, im := range imposters {
		cfg.Imposters = append(cfg.Imposters, &config.Source{File: file, Path: fmt.Sprintf("imposters[%d]", i), Value: im})
	}
	return cfg, nil
}

// Save makes doc ({"imposters": […]}) the saved state. When Save returns nil the state is on
// disk: it is written to a temporary file, synced, renamed over the old file and the directory
// is synced, so a crash at any moment leaves either the old state or the new one.
func (d *Dir) Save(doc *config.Object) error {
	data := config.MarshalJSON(doc, 2)
	d.mu.Lock()
	defer d.mu.Unlock()
	tmp, err := os.CreateTemp(d.path, fileName+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	if err := os.Rename(tmp.Name(), d.File()); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	done = true
	dir, err := os.Open(d.path)
	if err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	return nil
}
