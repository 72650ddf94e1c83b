package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// nextKey is the member of an imposter in the file that holds where its stubs are in their
// response cycles (store.Imposter.Next), when one is past its first response: Load takes it
// out (NextOf), so it is never part of a definition.
const nextKey = "_mockdNext"

// fileName is the one file in a data directory: every imposter, in the replayable form of
// GET /imposters?replayable=true. One file makes each change, even a replacement of every
// imposter, a single atomic rename.
const fileName = "imposters.json"

// errLocked is lockDir's answer when another process holds the lock.
var errLocked = errors.New("locked")

// lockWait bounds how long Open and Save wait for another server's save to end. A save holds
// the lock for one write of the file; only a process that keeps the lock (a mockd from before
// servers shared a directory) holds it longer.
var lockWait = 10 * time.Second

// Dir persists imposters in a directory (--datadir). Its methods are safe for concurrent use.
//
// Several servers may share one directory, as Mountebank's do (its FAQ: instances behind a load
// balancer on one volume; mbtest starts every server with --datadir .mbdb). Each save rewrites
// only the saving server's own imposters in the file and keeps the others' as they are there, so
// a restart brings back every server's. A save holds the directory's lock (flock) while it reads
// and replaces the file; no lock is held in between.
type Dir struct {
	path    string
	mu      sync.Mutex
	defs    map[int]*config.Object // this server's imposters as last saved, by port
	version int64
	// claimed holds the ports whose entries in the file are this server's: a save removes
	// them from the file before it writes defs (so a deleted imposter goes). Before the first
	// save, every imposter the file held at Open is this server's (claimAll): it starts with
	// them, or replaces them with --configfile, as Mountebank's start loads them all.
	claimed  map[int]bool
	claimAll bool
	others   []any // the other servers' imposters in the file, as last read or written
	// seen is the file as this server last read or wrote it (nil when there was none), and
	// pinned the file kept open (see pin): its inode cannot be given to another file meanwhile,
	// so a file at the path with seen's inode, size and time is that one, unchanged. (Another
	// server's file, written in the same tick of the file system's clock, of the same size and
	// given the inode of this server's file just replaced, passed for it: its imposters were
	// lost.)
	seen   os.FileInfo
	pinned *os.File
	held   *os.File // the lock Open took, kept until the first save or Close
	// loadedNext holds what Load took out of each imposter (see nextKey), by port.
	loadedNext map[int][]uint64
	// loaded holds the ports of the imposters Load returned: this server's until its first
	// save (see claimAll).
	loaded []int
}

// Open returns the data directory at path, creating it when missing. It takes the directory's
// lock (waiting up to lockWait for another server's save) and keeps it until the first Save or
// Close, so that no other server writes between the Load of the imposters this server starts
// with and its first save of them.
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
	d := &Dir{path: path, defs: map[int]*config.Object{}, claimAll: true, held: lock}
	d.see()
	return d, nil
}

// lockPath locks the directory at path, waiting up to lockWait while another process holds it.
func lockPath(path string) (*os.File, error) {
	deadline := time.Now().Add(lockWait)
	for {
		lock, err := lockDir(path)
		if err == nil {
			return lock, nil
		}
		if !errors.Is(err, errLocked) {
			return nil, fmt.Errorf("cannot lock data directory: %w", err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("data directory %s stayed locked by another process for %s (a server saving or starting holds it that long only with a very large file; a mockd from before servers shared a directory holds it while it runs)", path, lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// see notes the file now at the path as the one this server has read or written (see seen).
// The lock is held.
func (d *Dir) see() {
	if d.pinned != nil {
		_ = d.pinned.Close()
	}
	d.pinned, d.seen = pin(d.File())
}

// Close releases the lock Open took if no save has yet. The saved imposters stay.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pinned != nil {
		_ = d.pinned.Close()
		d.pinned = nil
	}
	if d.held == nil {
		return nil
	}
	err := d.held.Close() // closing the directory drops the lock
	d.held = nil
	return err
}

// File returns the path of the file holding the imposters.
func (d *Dir) File() string { return filepath.Join(d.path, fileName) }

// Load returns the saved imposters as a config to start with; nil when nothing was saved.
func (d *Dir) Load() (*config.Config, error) {
	file := d.File()
	imposters, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read data directory: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loadedNext = map[int][]uint64{}
	var files []string // each imposter's file, when they come from Mountebank's layout
	if imposters == nil {
		if imposters, files, err = readMountebank(d.path, d.loadedNext); err != nil {
			return nil, fmt.Errorf("cannot read data directory: %w", err)
		}
		if imposters == nil {
			return nil, nil
		}
	}
	cfg := &config.Config{Server: &config.Object{}}
	for i, im := range imposters {
		if files != nil {
			cfg.Imposters = append(cfg.Imposters, &config.Source{File: files[i], Value: im})
			continue
		}
		if o := config.AsObject(im); o != nil {
			if v, ok := o.Get(nextKey); ok {
				o.Delete(nextKey)
				if list, ok := v.([]any); ok {
					next := make([]uint64, len(list))
					for j, n := range list {
						if f, ok := n.(float64); ok && f >= 0 && f < 1<<53 {
							next[j] = uint64(f)
						}
					}
					d.loadedNext[portOf(im)] = next
				}
			}
		}
		cfg.Imposters = append(cfg.Imposters, &config.Source{File: file, Path: fmt.Sprintf("imposters[%d]", i), Value: im})
	}
	d.loaded = d.loaded[:0]
	for _, im := range imposters {
		d.loaded = append(d.loaded, portOf(im))
	}
	return cfg, nil
}

// NextOf returns where the stubs of the imposter on port were in their response cycles when
// it was saved (see store.Imposter.Next), as Load read them; nil when they were all at the
// start.
func (d *Dir) NextOf(port int) []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loadedNext[port]
}

// withNext returns def with where its stubs are in their cycles (nextKey), when one is past
// its first response; def itself otherwise (a copy: def may be the store's caller's).
func withNext(def *config.Object, next []uint64) *config.Object {
	if def == nil || !slices.ContainsFunc(next, func(n uint64) bool { return n != 0 }) {
		return def
	}
	list := make([]any, len(next))
	for i, n := range next {
		list[i] = float64(n)
	}
	out := &config.Object{Members: make([]config.Member, 0, len(def.Members)+1)}
	out.Members = append(out.Members, def.Members...)
	out.Members = append(out.Members, config.Member{Key: nextKey, Value: list})
	return out
}

// readFile returns the imposters the file holds; nil when there is no file.
func readFile(file string) ([]any, error) {
	v, err := readJSON(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list, ok := config.AsObject(v).Get("imposters")
	imposters, isList := list.([]any)
	if !ok || !isList {
		return nil, fmt.Errorf("%s: no \"imposters\" array", file)
	}
	if imposters == nil {
		imposters = []any{}
	}
	return imposters, nil
}

// portOf is the port of an imposter in the file; -1 when it has none.
func portOf(im any) int {
	p, _ := config.AsObject(im).Get("port")
	if f, ok := p.(float64); ok && f == float64(int(f)) {
		return int(f)
	}
	return -1
}

// Save applies a change to this server's saved imposters and returns the number of changes
// saved since Open. When it returns nil every imposter of this server is on disk, in one file
// with the other servers' (see write), and no other server's imposter was lost.
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
		def, _ := im.Render()
		if im.Next != nil {
			def = withNext(def, im.Next())
		}
		next[im.Port] = def
	}
	lock := d.held
	d.held = nil
	if lock != nil && !isDirAt(lock, d.path) {
		_ = lock.Close() // the directory was deleted since Open
		lock = nil
	}
	if lock == nil {
		// The directory may have been deleted (a CI job's cleanup): it is made again and
		// this server's imposters are written in full.
		if err := os.MkdirAll(d.path, 0o755); err != nil {
			return 0, fmt.Errorf("cannot save imposters: %w", err)
		}
		var err error
		if lock, err = lockPath(d.path); err != nil {
			return 0, fmt.Errorf("cannot save imposters: %w", err)
		}
	}
	defer lock.Close()
	others, err := d.othersNow()
	if err != nil {
		return 0, fmt.Errorf("cannot save imposters: %w", err)
	}
	kept := others[:0:0]
	for _, im := range others {
		if port := portOf(im); next[port] == nil && !slices.Contains(ch.Deleted, port) {
			kept = append(kept, im)
		}
	}
	list := make([]any, 0, len(kept)+len(next))
	list = append(list, kept...)
	for _, def := range next {
		list = append(list, def)
	}
	slices.SortStableFunc(list, func(a, b any) int { return cmp.Compare(portOf(a), portOf(b)) })
	if err := d.write(config.NewObject("imposters", list)); err != nil {
		return 0, err // the file, and d, hold the state before the change
	}
	d.see() // seen nil if it fails: the next save reads the file
	d.removeMountebankDirs(ch.Deleted, next)
	d.others = kept
	d.defs = next
	d.claimed = make(map[int]bool, len(next))
	for port := range next {
		d.claimed[port] = true
	}
	d.claimAll = false
	d.version++
	return d.version, nil
}

// removeMountebankDirs removes the directory Mountebank's layout keeps for each of this
// server's imposters the change removed (DIR/PORT: see readMountebank), as Mountebank's delete
// removes an imposter's directory whatever it holds; nothing outside those directories. A
// directory mockd started from would otherwise outlive its imposter, which Mountebank started
// on the same directory would bring back. d.mu and the lock are held; next holds the imposters
// that stay. Best effort: the change is saved already.
func (d *Dir) removeMountebankDirs(deleted []int, next map[int]*config.Object) {
	gone := slices.Clone(deleted)
	for port := range d.defs {
		gone = append(gone, port)
	}
	for port := range d.claimed {
		gone = append(gone, port)
	}
	if d.claimAll { // the first save: what Load returned is this server's (--configfile replaces it)
		gone = append(gone, d.loaded...)
	}
	for _, port := range gone {
		if next[port] != nil || port <= 0 {
			continue
		}
		dir := filepath.Join(d.path, strconv.Itoa(port))
		if _, err := os.Lstat(dir); err == nil {
			_ = os.RemoveAll(dir) // a symbolic link goes, not what it names
		}
	}
}

// isDirAt reports whether f is the directory at path (not one deleted, or deleted and made again).
func isDirAt(f *os.File, path string) bool {
	held, herr := f.Stat()
	now, err := os.Stat(path)
	return herr == nil && err == nil && os.SameFile(held, now)
}

// othersNow returns the other servers' imposters the file holds now: those of d.others when the
// file is the one d last read or wrote (none when it is the one of Open: see claimAll), read
// again otherwise (another server saved, or the directory was made again and another saved
// there). d.mu and the lock are held.
func (d *Dir) othersNow() ([]any, error) {
	now, err := os.Stat(d.File())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // removed: nothing of the others' to keep
	}
	if err != nil {
		return nil, err
	}
	if d.seen != nil && os.SameFile(d.seen, now) && d.seen.Size() == now.Size() && d.seen.ModTime().Equal(now.ModTime()) {
		if d.claimAll {
			return nil, nil // the file of Open: all this server's
		}
		return d.others, nil
	}
	all, err := readFile(d.File())
	if err != nil {
		return nil, err
	}
	others := make([]any, 0, len(all))
	for _, im := range all {
		if !d.claimed[portOf(im)] {
			others = append(others, im)
		}
	}
	return others, nil
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

// readMountebank reads the imposters of a data directory Mountebank wrote: a directory an
// imposter (named by its port) holding imposter.json, whose stubs name a directory of their own
// (meta.dir) holding meta.json (responseFiles, and nextIndex: where the stub is in its response
// cycle, put in next by port) and a file a response. It returns the imposters, ordered by port,
// each with its file; nil when there is none. A directory without imposter.json is left out,
// as Mountebank skips it; a file that does not parse is an error, naming it.
func readMountebank(dir string, next map[int][]uint64) ([]any, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	type loaded struct {
		port int
		im   *config.Object
		file string
	}
	var list []loaded
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		base := filepath.Join(dir, e.Name())
		file := filepath.Join(base, "imposter.json")
		v, err := readJSON(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		im := config.AsObject(v)
		if im == nil {
			return nil, nil, fmt.Errorf("%s: not an imposter (a JSON object)", file)
		}
		stubs, _ := im.Get("stubs")
		stubList, _ := stubs.([]any)
		var cycles []uint64
		for _, s := range stubList {
			stub := config.AsObject(s)
			meta, _ := stub.Get("meta")
			sub, _ := config.AsObject(meta).Get("dir")
			subDir, ok := sub.(string)
			if stub == nil || !ok {
				cycles = append(cycles, 0)
				continue
			}
			if !filepath.IsLocal(subDir) {
				return nil, nil, fmt.Errorf("%s: a stub's directory %q is not inside the imposter's", file, subDir)
			}
			metaFile := filepath.Join(base, subDir, "meta.json")
			mv, err := readJSON(metaFile)
			if err != nil {
				return nil, nil, err
			}
			mo := config.AsObject(mv)
			names, _ := mo.Get("responseFiles")
			rfs, _ := names.([]any)
			responses := make([]any, 0, len(rfs))
			for _, n := range rfs {
				rf, ok := n.(string)
				if !ok || !filepath.IsLocal(rf) {
					return nil, nil, fmt.Errorf("%s: a response file %v is not inside the stub's directory", metaFile, n)
				}
				r, err := readJSON(filepath.Join(base, subDir, rf))
				if err != nil {
					return nil, nil, err
				}
				responses = append(responses, r)
			}
			stub.Delete("meta")
			stub.Set("responses", responses)
			at := uint64(0)
			if f, ok := mo.Get("nextIndex"); ok {
				if n, ok := f.(float64); ok && n > 0 && n < 1<<53 {
					at = uint64(n)
				}
			}
			cycles = append(cycles, at)
		}
		port := portOf(im)
		if slices.ContainsFunc(cycles, func(n uint64) bool { return n != 0 }) {
			next[port] = cycles
		}
		list = append(list, loaded{port: port, im: im, file: file})
	}
	if len(list) == 0 {
		return nil, nil, nil
	}
	slices.SortStableFunc(list, func(a, b loaded) int { return cmp.Compare(a.port, b.port) })
	imposters, files := make([]any, len(list)), make([]string, len(list))
	for i, l := range list {
		imposters[i], files[i] = l.im, l.file
	}
	return imposters, files, nil
}

// readJSON reads and parses the JSON file at path.
func readJSON(path string) (config.Value, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := config.ParseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
