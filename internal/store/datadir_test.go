package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := d.Load()
	if err != nil || cfg != nil {
		t.Fatalf("Load() of an empty dir = %v, %v; want nil, nil", cfg, err)
	}
	for _, n := range []int{4545, 4546} {
		def := config.NewObject("protocol", "http", "port", float64(n))
		ch := Change{Replace: true, Put: []Imposter{{Port: n, Render: func() (*config.Object, []string) { return def, nil }}}}
		if v, err := d.Save(context.Background(), ch); err != nil || v != int64(n-4544) {
			t.Fatalf("Save() = %d, %v; want version %d", v, err, n-4544)
		}
	}
	cfg, err = d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Imposters) != 1 {
		t.Fatalf("got %d imposters, want 1", len(cfg.Imposters))
	}
	if got := string(config.MarshalJSON(cfg.Imposters[0].Value, 0)); got != `{"protocol":"http","port":4546}` {
		t.Errorf("imposter = %s, want the last saved one", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d files, want 1 (no temporary files left)", len(entries))
	}
}

func TestLoadRejectsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fileName), []byte(`{"imposters": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := Open(dir)
	if _, err := d.Load(); err == nil {
		t.Fatal("Load() of a truncated file succeeded")
	}
}

func TestSaveAppliesChanges(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	def := func(port int, name string) Imposter {
		return Imposter{Port: port, Render: func() (*config.Object, []string) {
			return config.NewObject("protocol", "http", "port", float64(port), "name", name), nil
		}}
	}
	for _, tc := range []struct {
		ch   Change
		want string
	}{
		{Change{Put: []Imposter{def(4546, "b"), def(4545, "a")}}, "4545 a, 4546 b"},
		{Change{Put: []Imposter{def(4547, "c")}, Deleted: []int{4545}}, "4546 b, 4547 c"},
		{Change{Put: []Imposter{def(4546, "b2")}}, "4546 b2, 4547 c"},
		{Change{Replace: true, Put: []Imposter{def(4548, "d")}}, "4548 d"},
		{Change{Replace: true}, ""},
	} {
		if _, err := d.Save(context.Background(), tc.ch); err != nil {
			t.Fatal(err)
		}
		cfg, err := d.Load()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, src := range cfg.Imposters {
			o := config.AsObject(src.Value)
			port, _ := o.Get("port")
			name, _ := o.Get("name")
			got = append(got, fmt.Sprintf("%v %v", port, name))
		}
		if s := strings.Join(got, ", "); s != tc.want {
			t.Errorf("after %+v: saved %q, want %q", tc.ch, s, tc.want)
		}
	}
}

// TestOpenLocksTheDirectory checks that a data directory in use cannot be opened again (a second
// server on it would overwrite the first one's imposters) until it is closed, and that the lock
// leaves no file in it.
func TestOpenLocksTheDirectory(t *testing.T) {
	skipUnlessLockable(t)
	dir := filepath.Join(t.TempDir(), "data")
	steps := []struct {
		do      string // open, close
		wantErr string
	}{
		{"open", ""},
		{"open", "is in use by another mockd"},
		{"open", "is in use by another mockd"},
		{"close", ""},
		{"open", ""},
		{"close", ""},
		{"close", ""}, // twice is harmless
		{"open", ""},
	}
	var held []*Dir
	defer func() {
		for _, d := range held {
			d.Close()
		}
	}()
	for i, s := range steps {
		switch s.do {
		case "open":
			d, err := Open(dir)
			if s.wantErr == "" {
				if err != nil {
					t.Fatalf("step %d: Open() = %v", i, err)
				}
				held = append(held, d)
				continue
			}
			if err == nil || !strings.Contains(err.Error(), s.wantErr) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("step %d: Open() of a directory in use = %v; want an error naming it, %q", i, err, s.wantErr)
			}
		case "close":
			if err := held[len(held)-1].Close(); err != nil {
				t.Fatalf("step %d: Close() = %v", i, err)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the lock left %d files in the directory", len(entries))
	}
}

// TestSaveKeepsTheLockOnARemadeDirectory checks that a data directory deleted (and perhaps made
// again) while a server runs does not let a second server in: the lock is the directory's own,
// so the next save locks the directory now at the path, or fails when another server holds it,
// instead of writing over that server's imposters.
func TestSaveKeepsTheLockOnARemadeDirectory(t *testing.T) {
	skipUnlessLockable(t)
	save := func(d *Dir, port int) error {
		def := config.NewObject("protocol", "http", "port", float64(port))
		_, err := d.Save(context.Background(), Change{Replace: true, Put: []Imposter{{Port: port, Render: func() (*config.Object, []string) { return def, nil }}}})
		return err
	}
	for _, tc := range []struct {
		name     string
		remake   bool // mkdir again after rm -rf
		second   bool // a second server opens the new directory before the first one saves
		wantSave string
		wantFile int // the port in the file after the first server's save
	}{
		{name: "removed", wantFile: 4545},
		{name: "remade", remake: true, wantFile: 4545},
		{name: "remade and taken", remake: true, second: true, wantSave: "is in use by another mockd", wantFile: 4546},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			d, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if tc.remake {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.second {
				other, err := Open(dir)
				if err != nil {
					t.Fatalf("second Open() of the new directory = %v", err)
				}
				defer other.Close()
				if err := save(other, 4546); err != nil {
					t.Fatal(err)
				}
			}
			err = save(d, 4545)
			if tc.wantSave == "" && err != nil || tc.wantSave != "" && (err == nil || !strings.Contains(err.Error(), tc.wantSave)) {
				t.Fatalf("Save() after the directory was removed = %v, want error %q", err, tc.wantSave)
			}
			data, err := os.ReadFile(filepath.Join(dir, fileName))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"port": %d`, tc.wantFile); !strings.Contains(string(data), want) {
				t.Errorf("file holds %s, want %s", data, want)
			}
			if !tc.second {
				if other, err := Open(dir); err == nil {
					other.Close()
					t.Errorf("a second Open() of the directory the first server saved in succeeded; want in use")
				}
			}
		})
	}
}

// skipUnlessLockable skips the test on a system where directories cannot be locked.
func skipUnlessLockable(t *testing.T) {
	t.Helper()
	f, err := lockDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Skip("directories cannot be locked on this system")
	}
	f.Close()
}
