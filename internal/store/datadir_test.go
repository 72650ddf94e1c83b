package store

import (
	"os"
	"path/filepath"
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
	for _, n := range []float64{4545, 4546} {
		doc := config.NewObject("imposters", []any{config.NewObject("protocol", "http", "port", n)})
		if err := d.Save(doc); err != nil {
			t.Fatal(err)
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
