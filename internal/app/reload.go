package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// loadedImposter is an imposter as the config files defined it at the last (re)load.
type loadedImposter struct {
	header, stubs string // canonical JSON of the definition less its stubs, and a digest of its stubs'
	im            *imposter.Imposter
}

// key names a config imposter across reloads: its port, or where it stands when it has none.
func key(b built) string {
	if b.def.Port != 0 {
		return "port " + strconv.Itoa(b.def.Port)
	}
	return b.src.File + "#" + b.src.Path
}

func loadedOf(list []built) map[string]loadedImposter {
	m := make(map[string]loadedImposter, len(list))
	for _, b := range list {
		m[key(b)] = loadedImposter{header: string(config.MarshalJSON(b.def.Header, 0)),
			stubs: digest(b.im.AppendStubsJSON(nil)), im: b.im}
	}
	return m
}

// digest is a digest of s: what a reload compares of the stubs, kept rather than their JSON
// (15 MB for 100,000 stubs, for as long as the process runs).
func digest(s []byte) string {
	d := sha256.Sum256(s)
	return string(d[:])
}

// ReloadResult says what a reload did.
type ReloadResult struct {
	Unchanged, Swapped, Restarted, Added, Removed int
	// Warnings are what the config check found that does not stop loading.
	Warnings []string
}

func (r ReloadResult) String() string {
	return fmt.Sprintf("%d unchanged, %d with new stubs, %d restarted, %d added, %d removed",
		r.Unchanged, r.Swapped, r.Restarted, r.Added, r.Removed)
}

// Reload makes the running imposters what cfg defines, changing only what changed since the
// last load:
//   - an imposter whose definition is unchanged is left as it is (journal, response cycles and
//     scenario states included, and any change made to it through the API);
//   - one whose stubs alone changed gets the new stub table, swapped atomically on the same
//     listener, so no connection or request in flight is dropped (its journal and scenario
//     states stay);
//   - one whose other settings changed (protocol, name, recordRequests, defaultResponse,
//     certificates…) is stopped, letting requests in flight finish, and started again;
//   - one no longer defined is stopped; a new one is started.
//
// Imposters created through the admin API are left alone unless cfg defines an imposter on
// their port, which then replaces them. When cfg does not compile, or an imposter new on a port
// mockd does not serve cannot start, nothing changes and the error (a *config.LoadError) lists
// every problem with its file and line. Reloads are serialised, and each runs as an
// admin write does (see admin.API.Change): never interleaved with one, and, with a shared store
// (--store), applied to the imposters it holds and stored in it before Reload returns; while it
// cannot be reached, the reload is refused (a *RefusedError) and nothing changes.
func (a *App) Reload(cfg *config.Config) (ReloadResult, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	var res ReloadResult
	list, warnings, err := buildImposters(a.reg, cfg, a.opts.AllowInjection)
	res.Warnings = warnings
	if err != nil {
		return res, err
	}
	change := func() error {
		// First the imposters new on a port mockd does not serve: when one cannot start (its
		// port held by another process, a host that cannot be bound), the reload is refused
		// with nothing changed, as PUT /imposters is. The running imposters were changed
		// already (new stubs swapped, removed ones stopped) when the error was reported.
		early := map[*imposter.Imposter]bool{}
		var problems []string
		for _, b := range list {
			if _, had := a.loaded[key(b)]; had || (b.def.Port != 0 && a.reg.Get(b.def.Port) != nil) {
				continue
			}
			if err := a.reg.Add(b.im); err != nil {
				problems = append(problems, b.src.Locate(b.src.Path, "cannot start imposter: "+errorText(err)))
				continue
			}
			early[b.im] = true
		}
		if len(problems) > 0 {
			for im := range early {
				a.reg.Delete(im.Port())
			}
			return &config.LoadError{Problems: problems}
		}
		next := loadedOf(list)
		var errs []error
		for _, b := range list {
			k := key(b)
			cur := next[k]
			old, had := a.loaded[k]
			switch {
			case early[b.im]:
				res.Added++
				continue
			case had && old.header == cur.header && old.stubs == cur.stubs:
				next[k] = old // unchanged: keep the running imposter
				res.Unchanged++
				continue
			case had && old.header == cur.header && a.reg.Get(old.im.Port()) == old.im:
				if err := old.im.ReplaceStubs(b.im.StubDefinitions()); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", b.src.Locate(b.src.Path, "cannot swap stubs"), err))
					continue
				}
				old.stubs = cur.stubs
				next[k] = old
				res.Swapped++
				continue
			}
			if had {
				if running := a.reg.Get(old.im.Port()); running == old.im {
					a.reg.Delete(old.im.Port())
				}
				res.Restarted++
			} else {
				res.Added++
			}
			if port := b.def.Port; port != 0 && a.reg.Get(port) != nil {
				a.reg.Delete(port) // an imposter created through the API on a port the config now defines
			}
			if err := a.reg.Add(b.im); err != nil {
				delete(next, k)
				errs = append(errs, fmt.Errorf("%s", b.src.Locate(b.src.Path, "cannot start imposter: "+errorText(err))))
			}
		}
		for k, old := range a.loaded {
			if _, kept := next[k]; kept {
				continue
			}
			if running := a.reg.Get(old.im.Port()); running == old.im {
				a.reg.Delete(old.im.Port())
				res.Removed++
			}
		}
		a.loaded = next
		return errors.Join(errs...)
	}
	if a.api == nil {
		return res, change()
	}
	// As an admin write: under the admin API's change lock (the two cannot interleave), applied
	// to the imposters as a shared store holds them, and stored before the reload is done.
	ran, err := a.api.Change(context.Background(), change)
	if !ran {
		return res, &RefusedError{Err: err}
	}
	return res, err
}

// RefusedError is the error of a reload that changed nothing: the shared store (--store) could
// not be reached, and the imposters change only through it, as admin writes are refused then.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

func errorText(err error) string {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// WatchOptions tune Watch.
type WatchOptions struct {
	// Patterns are the config files, directories and globs to watch, as given to -c.
	Patterns []string
	// Interval is how often the files are looked at; 0 = 500ms.
	Interval time.Duration
	// Changed is called (from Watch's goroutine) when a file was changed, added or removed.
	Changed func()
}

// Watch looks at the files that patterns name every interval and calls Changed when one was
// changed, added or removed, until ctx ends. It polls (size and modification time) rather than
// subscribing to file system events: editors that save by renaming, directories and globs that
// gain files, and network file systems all show up the same way, for one stat per file. A change
// counts once the files look the same on two polls in a row (see settle): an editor that writes
// a file in place truncates it first, and a reload of the empty file would stop its imposters.
func Watch(ctx context.Context, opts WatchOptions) {
	interval := opts.Interval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	w := settle{last: fingerprint(opts.Patterns)}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if w.poll(fingerprint(opts.Patterns)) {
			opts.Changed()
		}
	}
}

// settle tells, from the fingerprints of successive polls, when the files changed: when a poll
// sees what the one before it saw, and that differs from what was last reported. Files still
// being written (their size or time changing from poll to poll) wait until they stay put.
type settle struct {
	last string // the fingerprint last reported (or seen at start)
	prev string // the fingerprint of the previous poll
	seen bool   // prev is set
}

// poll takes the fingerprint of one poll and reports whether the files changed.
func (s *settle) poll(now string) bool {
	stable := s.seen && now == s.prev
	s.prev, s.seen = now, true
	if !stable || now == s.last {
		return false
	}
	s.last = now
	return true
}

// fingerprint is the name, size and modification time of every file the patterns name (an
// error, such as a missing file, is part of it too).
func fingerprint(patterns []string) string {
	files, err := config.Files(patterns)
	if err != nil {
		return "error: " + err.Error()
	}
	var b []byte
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			b = append(b, f+": "+err.Error()+"\n"...)
			continue
		}
		b = append(b, f...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, info.Size(), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, info.ModTime().UnixNano(), 10)
		b = append(b, '\n')
	}
	return string(b)
}
