package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestOpenHoldsTheLockUntilTheFirstSave checks that Open keeps the directory locked until the
// server's first save (no other server writes between the Load of what a server starts with and
// its first save of it), that another Open waits for it and gives up with an error naming the
// directory after lockWait, and that the lock leaves no file behind.
func TestOpenHoldsTheLockUntilTheFirstSave(t *testing.T) {
	skipUnlessLockable(t)
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 20 * time.Millisecond
	dir := filepath.Join(t.TempDir(), "data")
	var held []*Dir
	defer func() {
		for _, d := range held {
			d.Close()
		}
	}()
	steps := []struct {
		do      string // open, save, close (the last one opened)
		wantErr string
	}{
		{"open", ""},
		{"open", "stayed locked"},
		{"close", ""},
		{"open", ""},
		{"open", "stayed locked"},
		{"save", ""},
		{"open", ""}, // saved: released
		{"open", "stayed locked"},
		{"close", ""},
		{"close", ""}, // twice is harmless
		{"open", ""},
	}
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
				t.Fatalf("step %d: Open() of a directory locked by another = %v; want an error naming it, %q", i, err, s.wantErr)
			}
		case "save":
			if _, err := held[len(held)-1].Save(context.Background(), Change{Replace: true}); err != nil {
				t.Fatalf("step %d: Save() = %v", i, err)
			}
		case "close":
			if err := held[len(held)-1].Close(); err != nil {
				t.Fatalf("step %d: Close() = %v", i, err)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != fileName {
		t.Errorf("the directory holds %v, want only %s", entries, fileName)
	}
}

// TestServersShareADirectory plays saves of three servers on one directory, as Mountebank's
// servers share one --datadir: each save replaces the saving server's own imposters in the file
// and keeps the others' (servers used to overwrite each other's, so a restart brought back only
// the last writer's imposters).
func TestServersShareADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	def := func(port int, name string) Imposter {
		return Imposter{Port: port, Render: func() (*config.Object, []string) {
			return config.NewObject("protocol", "http", "port", float64(port), "name", name), nil
		}}
	}
	servers := map[string]*Dir{}
	defer func() {
		for _, d := range servers {
			d.Close()
		}
	}()
	open := func(name string) {
		d, err := Open(dir)
		if err != nil {
			t.Fatalf("%s: Open() = %v", name, err)
		}
		servers[name] = d
	}
	open("a")
	if _, err := servers["a"].Save(context.Background(), Change{Replace: true}); err != nil {
		t.Fatal(err) // a server's first save, at start, releases the lock Open took
	}
	open("b")
	if _, err := servers["b"].Save(context.Background(), Change{Replace: true}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		server string
		ch     Change
		hand   string // written to the file by hand before the save
		want   string
	}{
		{server: "a", ch: Change{Put: []Imposter{def(4546, "a1"), def(4548, "a2")}}, want: "4546 a1, 4548 a2"},
		{server: "b", ch: Change{Put: []Imposter{def(4547, "b1")}}, want: "4546 a1, 4547 b1, 4548 a2"},
		{server: "b", ch: Change{Put: []Imposter{def(4545, "b2")}}, want: "4545 b2, 4546 a1, 4547 b1, 4548 a2"},
		{server: "a", ch: Change{Deleted: []int{4546}}, want: "4545 b2, 4547 b1, 4548 a2"},
		{server: "a", ch: Change{Put: []Imposter{def(4548, "a3")}}, want: "4545 b2, 4547 b1, 4548 a3"},
		// PUT /imposters and DELETE /imposters replace the server's own imposters only.
		{server: "b", ch: Change{Replace: true, Put: []Imposter{def(4549, "b3")}}, want: "4548 a3, 4549 b3"},
		{server: "a", ch: Change{Replace: true}, want: "4549 b3"},
		// A server opening the directory starts with every imposter in it, and a file written
		// since another server's last save is read again (what b wrote since a's last save).
		{server: "c", ch: Change{Replace: true, Put: []Imposter{def(4549, "c1"), def(4550, "c2")}}, want: "4549 c1, 4550 c2"},
		{server: "a", ch: Change{Put: []Imposter{def(4551, "a4")}}, want: "4549 c1, 4550 c2, 4551 a4"},
		// Another server's imposter stays as the file has it, fields a server does not know too.
		// (b still has its 4549 too: two servers on two hosts may run one port, and each
		// saves its own.)
		{server: "b", hand: `{"imposters":[{"port":4549,"name":"c1"},{"port":4550,"name":"c2","extra":[1,{"x":null}]},{"port":4551,"name":"a4"}]}`,
			ch: Change{Put: []Imposter{def(4552, "b4")}}, want: `4549 b3, 4550 c2 [1,{"x":null}], 4551 a4, 4552 b4`},
		// A file that does not parse is not replaced: the save fails.
		{server: "b", hand: `{"imposters": [`, ch: Change{Put: []Imposter{def(4553, "b5")}}, want: "error"},
	} {
		if tc.server == "c" && servers["c"] == nil {
			open("c")
		}
		file := filepath.Join(dir, fileName)
		if tc.hand != "" {
			if err := os.WriteFile(file, []byte(tc.hand), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := servers[tc.server].Save(context.Background(), tc.ch)
		if tc.want == "error" {
			if data, _ := os.ReadFile(file); err == nil || string(data) != tc.hand {
				t.Errorf("step %d: Save() over a file that does not parse = %v, file now %q; want an error and the file as it was", i, err, data)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: Save() = %v", i, err)
		}
		if got := savedPorts(t, dir); got != tc.want {
			t.Errorf("step %d: %s saved %+v: the file holds %q, want %q", i, tc.server, tc.ch, got, tc.want)
		}
	}
}

// savedPorts lists the imposters in the directory's file: port, name and any "extra" field.
func savedPorts(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, fileName))
	if err != nil {
		t.Fatal(err)
	}
	v, err := config.ParseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := config.AsObject(v).Get("imposters")
	var got []string
	for _, im := range list.([]any) {
		o := config.AsObject(im)
		port, _ := o.Get("port")
		name, _ := o.Get("name")
		s := fmt.Sprintf("%v %v", port, name)
		if extra, ok := o.Get("extra"); ok {
			s += " " + string(config.MarshalJSON(extra, 0))
		}
		got = append(got, s)
	}
	return strings.Join(got, ", ")
}

// TestSaveAfterTheDirectoryIsRemoved checks that a data directory deleted (and perhaps made
// again, as a CI job's cleanup does) while a server runs gets the server's imposters in full at
// its next save, next to what another server saved there meanwhile.
func TestSaveAfterTheDirectoryIsRemoved(t *testing.T) {
	save := func(d *Dir, ch Change) error {
		_, err := d.Save(context.Background(), ch)
		return err
	}
	put := func(port int) Change {
		def := config.NewObject("protocol", "http", "port", float64(port), "name", "x")
		return Change{Put: []Imposter{{Port: port, Render: func() (*config.Object, []string) { return def, nil }}}}
	}
	for _, tc := range []struct {
		name     string
		early    bool // removed before the first save (while Open's lock is held)
		remake   bool // mkdir again after rm -rf
		second   bool // a second server saves in the new directory before the first one saves
		wantFile string
	}{
		{name: "removed", wantFile: "4544 x, 4545 x"},
		{name: "remade", remake: true, wantFile: "4544 x, 4545 x"},
		{name: "remade and shared", remake: true, second: true, wantFile: "4544 x, 4545 x, 4546 x"},
		{name: "removed before the first save", early: true, wantFile: "4545 x"},
		{name: "remade before the first save and shared", early: true, remake: true, second: true, wantFile: "4545 x, 4546 x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			d, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if !tc.early {
				if err := save(d, put(4544)); err != nil {
					t.Fatal(err)
				}
			}
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
				if err := save(other, put(4546)); err != nil {
					t.Fatal(err)
				}
			}
			if err := save(d, put(4545)); err != nil {
				t.Fatalf("Save() after the directory was removed = %v", err)
			}
			if got := savedPorts(t, dir); got != tc.wantFile {
				t.Errorf("the file holds %q, want %q", got, tc.wantFile)
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

// TestServersSaveAtOnce has two servers on one directory save at the same time, over and over:
// each save reads what the other wrote last (the lock is held from the read to the rename), so
// at the end the file holds both servers' imposters as each saved them last.
func TestServersSaveAtOnce(t *testing.T) {
	skipUnlessLockable(t)
	dir := filepath.Join(t.TempDir(), "data")
	const saves = 100
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	// Both start before either saves an imposter (a server that starts later starts the
	// imposters saved there, as Mountebank's: see TestServersShareADirectory).
	servers := make([]*Dir, 2)
	for s := range servers {
		d, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.Save(context.Background(), Change{Replace: true}); err != nil {
			t.Fatal(err) // releases Open's lock, so that the other server can open
		}
		servers[s] = d
	}
	for s, base := range []int{5000, 6000} {
		d := servers[s]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range saves {
				port := base + i%10
				def := config.NewObject("protocol", "http", "port", float64(port), "name", fmt.Sprintf("s%d-%d", s, i))
				ch := Change{Put: []Imposter{{Port: port, Render: func() (*config.Object, []string) { return def, nil }}}}
				if i%10 == 9 {
					ch.Deleted = []int{base + 3}
				}
				if _, err := d.Save(context.Background(), ch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var want []string
	for s, base := range []int{5000, 6000} {
		for k := range 10 {
			if k == 3 {
				continue // deleted by the last save that named it
			}
			want = append(want, fmt.Sprintf("%d s%d-%d", base+k, s, saves-10+k))
		}
	}
	if got := savedPorts(t, dir); got != strings.Join(want, ", ") {
		t.Errorf("after both servers' saves the file holds\n%s\nwant\n%s", got, strings.Join(want, ", "))
	}
}

// TestSaveKeepsResponseCycles checks that where an imposter's stubs are in their response
// cycles (Imposter.Next) is saved with it when one is past its first response, and that Load
// gives it back through NextOf and takes it out of the definition (which GET shows).
func TestSaveKeepsResponseCycles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	im := func(port int, next ...uint64) Imposter {
		def := config.NewObject("protocol", "http", "port", float64(port))
		return Imposter{Port: port, Render: func() (*config.Object, []string) { return def, nil },
			Next: func() []uint64 { return next }}
	}
	if _, err := d.Save(context.Background(), Change{Replace: true, Put: []Imposter{im(4545, 0, 3), im(4546, 0, 0), im(4547)}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	data, _ := os.ReadFile(filepath.Join(dir, fileName))
	if n := strings.Count(string(data), nextKey); n != 1 {
		t.Errorf("the file names %s %d times, want once (for 4545 only):\n%s", nextKey, n, data)
	}
	d, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cfg, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range cfg.Imposters {
		if _, ok := config.AsObject(src.Value).Get(nextKey); ok {
			t.Errorf("a loaded definition holds %s: %s", nextKey, config.MarshalJSON(src.Value, 0))
		}
	}
	for port, want := range map[int][]uint64{4545: {0, 3}, 4546: nil, 4547: nil} {
		if got := d.NextOf(port); !slices.Equal(got, want) {
			t.Errorf("NextOf(%d) = %v, want %v", port, got, want)
		}
	}
}

// TestLoadReadsMountebanksLayout checks that a data directory Mountebank wrote (a directory an
// imposter) is read when it holds no imposters.json: each stub's responses from its files, its
// place in the cycle from nextIndex; directories without imposter.json are left out; a file
// named outside its imposter's directory is refused.
func TestLoadReadsMountebanksLayout(t *testing.T) {
	write := func(t *testing.T, dir string, files map[string]string) {
		for name, text := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mb := map[string]string{
		"4546/imposter.json":              `{"protocol":"http","port":4546,"stubs":[{"meta":{"dir":"stubs/s1"},"predicates":[{"equals":{"path":"/a"}}]},{"meta":{"dir":"stubs/s2"}}]}`,
		"4546/stubs/s1/meta.json":         `{"responseFiles":["responses/r1.json","responses/r2.json"],"orderWithRepeats":[0,1],"nextIndex":1}`,
		"4546/stubs/s1/responses/r1.json": `{"is":{"body":"first"}}`,
		"4546/stubs/s1/responses/r2.json": `{"is":{"body":"second"}}`,
		"4546/stubs/s2/meta.json":         `{"responseFiles":["responses/r3.json"],"orderWithRepeats":[0],"nextIndex":0}`,
		"4546/stubs/s2/responses/r3.json": `{"is":{"statusCode":404}}`,
		"4545/imposter.json":              `{"protocol":"tcp","port":4545,"stubs":[]}`,
		"meta/OTHER.txt":                  ``,
	}
	for _, tt := range []struct {
		name    string
		extra   map[string]string
		want    string // the imposters loaded, compact, or the error's text
		wantErr bool
	}{
		{name: "layout", want: `{"protocol":"tcp","port":4545,"stubs":[]} {"protocol":"http","port":4546,"stubs":[{"predicates":[{"equals":{"path":"/a"}}],"responses":[{"is":{"body":"first"}},{"is":{"body":"second"}}]},{"responses":[{"is":{"statusCode":404}}]}]}`},
		{name: "imposters.json wins", extra: map[string]string{fileName: `{"imposters":[{"protocol":"http","port":4547}]}`}, want: `{"protocol":"http","port":4547}`},
		{name: "a stub's directory outside", extra: map[string]string{"4548/imposter.json": `{"port":4548,"stubs":[{"meta":{"dir":"../4546/stubs/s1"}}]}`}, want: "not inside", wantErr: true},
		{name: "a response file outside", extra: map[string]string{"4548/imposter.json": `{"port":4548,"stubs":[{"meta":{"dir":"s"}}]}`, "4548/s/meta.json": `{"responseFiles":["/etc/passwd"]}`}, want: "not inside", wantErr: true},
		{name: "a file that does not parse", extra: map[string]string{"4548/imposter.json": `{"port":`}, want: "4548", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, mb)
			write(t, dir, tt.extra)
			d, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			cfg, err := d.Load()
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Load() = %v, want an error with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, src := range cfg.Imposters {
				got = append(got, string(config.MarshalJSON(src.Value, 0)))
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("loaded\n%s\nwant\n%s", s, tt.want)
			}
			if tt.extra == nil {
				if next := d.NextOf(4546); !slices.Equal(next, []uint64{1, 0}) {
					t.Errorf("NextOf(4546) = %v, want [1 0] (Mountebank's nextIndex)", next)
				}
			}
		})
	}
}

// FuzzReadMountebank reads Mountebank layouts whose imposter.json, meta.json and response file
// hold any text: Load answers imposters or an error, never panics, and reads no file outside
// the directory.
func FuzzReadMountebank(f *testing.F) {
	f.Add(`{"port":4546,"stubs":[{"meta":{"dir":"s"}}]}`, `{"responseFiles":["r.json"],"nextIndex":1}`, `{"is":{}}`)
	f.Add(`{"port":4546,"stubs":[{"meta":{"dir":"../s"}}]}`, `{}`, `null`)
	f.Add(`[]`, `{"responseFiles":[1,"r.json"],"nextIndex":-1}`, `{`)
	f.Add(`{"stubs":[null,1,{"meta":null},{"meta":{"dir":7}}]}`, `{"responseFiles":"r.json"}`, `[]`)
	f.Fuzz(func(t *testing.T, imposter, meta, response string) {
		dir := t.TempDir()
		for name, text := range map[string]string{
			"4546/imposter.json": imposter, "4546/s/meta.json": meta, "4546/s/r.json": response,
		} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		next := map[int][]uint64{}
		imposters, files, err := readMountebank(dir, next)
		if err == nil && len(imposters) != len(files) {
			t.Fatalf("%d imposters, %d files", len(imposters), len(files))
		}
	})
}

// TestDeleteRemovesMountebanksImposterDirectory checks that deleting an imposter removes the
// directory Mountebank's layout keeps for its port, whatever it holds, as Mountebank's delete
// does (its mbTest cli datadirTest), and nothing else: not another directory, not what a
// symbolic link in its place names.
func TestDeleteRemovesMountebanksImposterDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{
		"4545/imposter.json":                     `{"protocol":"http","port":4545}`,
		"4546/imposter.json":                     `{"protocol":"http","port":4546}`,
		"4546/INSIDE-IMPOSTER-DIR":               ``,
		"4549/imposter.json":                     `{"protocol":"http","port":4549}`,
		"meta/OUTSIDE-IMPOSTER-DIR":              ``,
		"4550":                                   `a file, not an imposter's`,
		"../" + filepath.Base(outside) + "/KEEP": ``,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "4547")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Load(); err != nil {
		t.Fatal(err)
	}
	def := func(port int) Imposter {
		return Imposter{Port: port, Render: func() (*config.Object, []string) {
			return config.NewObject("protocol", "http", "port", float64(port)), nil
		}}
	}
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		return err == nil
	}
	// The server loaded 4545, 4546 and 4549; its first save keeps the first two and adds 4547
	// (4549 is replaced, as --configfile replaces what the directory holds, and Mountebank's
	// start then PUTs the config).
	steps := []struct {
		ch         Change
		gone, kept []string
	}{
		{Change{Replace: true, Put: []Imposter{def(4545), def(4546), def(4547)}}, []string{"4549"}, []string{"4545", "4546", "4547"}},
		{Change{Deleted: []int{4546}}, []string{"4546"}, []string{"4545", "4547", "meta/OUTSIDE-IMPOSTER-DIR"}},
		{Change{Deleted: []int{4547}}, []string{"4547"}, []string{"4545", "../" + filepath.Base(outside) + "/KEEP"}},
		{Change{Put: []Imposter{def(4550)}}, nil, []string{"4545", "4550"}},
		{Change{Replace: true}, []string{"4545", "4550"}, []string{"meta/OUTSIDE-IMPOSTER-DIR"}},
	}
	for i, st := range steps {
		if _, err := d.Save(context.Background(), st.ch); err != nil {
			t.Fatal(err)
		}
		for _, name := range st.gone {
			if exists(name) {
				t.Errorf("step %d: %s is still there", i, name)
			}
		}
		for _, name := range st.kept {
			if !exists(name) {
				t.Errorf("step %d: %s was removed", i, name)
			}
		}
	}
}
