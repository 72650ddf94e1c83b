package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/mockd/mockd/internal/config"
)

// fileName is the one file in a data directory: every imposter, in the replayable form of
// GET /imposters?replayable=true. One file makes each change, even a replacement of every
// imposter, a single atomic rename.
const fileName = "imposters.json"

// errLocked is lockDir's answer when another process holds the lock.
var errLocked = errors.New("locked")

// Dir persists imposters in a directory (--datadir). Its methods are safe for concurrent use.
type Dir struct {
	path    string
	mu      sync.Mutex
	defs    map[int]*config.Object // what the file holds, by port
	version int64
	lock    *os.File // the directory, locked until Close (nil where it cannot be locked)
}

// Open returns the data directory at path, creating it when missing, and locks it until
// Close: it fails when another process (another mockd) uses it.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	lock, err := lockPath(path)
	if err != nil {
		return nil, err
	}
	// Temporary files a crash left behind hold no acknowledged state (and, the directory
	// being locked, no other server is writing one).
	stale, _ := filepath.Glob(filepath.Join(path, fileName+".*.tmp"))
	for _, f := range stale {
		_ = os.Remove(f)
	}
	return &Dir{path: path, defs: map[int]*config.Object{}, lock: lock}, nil
}

// lockPath locks the directory at path. A second server on the directory would overwrite
// this one's imposters with its own, and a restart would bring back only the last writer's.
func lockPath(path string) (*os.File, error) {
	lock, err := lockDir(path)
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("data directory %s is in use by another mockd (two servers on one --datadir would overwrite each other's imposters; servers share imposters through --store redis://...)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot lock data directory: %w", err)
	}
	return lock, nil
}

// relock makes sure the directory at d.path is the one d holds locked before a save writes
// there. The lock is the directory's own, so a directory deleted and made again under the same
// name (a CI job's cleanup, `rm -rf DIR; mkdir DIR`) is a new, unlocked one: a second server
// could lock it and the two would save over each other. When the directory at d.path is not the
// locked one (or is gone) it is made again if missing and locked; when another server holds it
// the save fails (this server's changes are live but not saved there). d.mu is held.
func (d *Dir) relock() error {
	if d.lock == nil {
		return nil // not locked on this system, or closed
	}
	held, herr := d.lock.Stat()
	now, err := os.Stat(d.path)
	if herr == nil && err == nil && os.SameFile(held, now) {
		return nil
	}
	if err := os.MkdirAll(d.path, 0o755); err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	lock, err := lockPath(d.path)
	if err != nil {
		return fmt.Errorf("cannot save imposters: %w", err)
	}
	_ = d.lock.Close()
	d.lock = lock
	return nil
}

// Close releases the directory for another server. The saved imposters stay.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close() // closing the directory drops the lock
	d.lock = nil
	return err
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

// Save applies a change to the saved imposters and returns the number of changes saved since
// Open. When it returns nil every imposter is on disk, in one file: see write.
func (d *Dir) Save(_ context.Context, ch Change) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	next := make(map[int]*config.Object, len(d.defs)+len(ch.Put))
	if !ch.Replace {
		for port, def := range d.defs {
			next[port] = def
		}
	}
	for _, port := range ch.Deleted {
		delete(next, port)
	}
	for _, im := range ch.Put {
		next[im.Port], _ = im.Render()
	}
	ports := make([]int, 0, len(next))
	for port := range next {
		ports = append(ports, port)
	}
	sort.Ints(ports)
	list := make([]any, 0, len(ports))
	for _, port := range ports {
		list = append(list, next[port])
	}
	if err := d.relock(); err != nil {
		return 0, err
	}
	if err := d.write(config.NewObject("imposters", list)); err != nil {
		return 0, err // the file, and d.defs, hold the state before the change
	}
	d.defs = next
	d.version++
	return d.version, nil
}

// write makes doc ({"imposters": […]}) the saved state. When write returns nil the state is
// on disk: it is written to a temporary file, synced, renamed over the old file and the
// directory is synced, so a crash at any moment leaves either the old state or the new one.
// d.mu is held.
func (d *Dir) write(doc *config.Object) error {
	data := config.MarshalJSON(doc, 2)
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
