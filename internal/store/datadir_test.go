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
