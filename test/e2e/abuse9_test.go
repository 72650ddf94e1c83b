package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTwoServersOnOneDatadir starts a second mockd on the --datadir of a running one: it must
// refuse to start, saying why, and leave the first one and what it saved as they were (both
// used to run, each saving only its own imposters over the other's, so that a restart brought
// back the last writer's and lost what the other had acknowledged). Once the first is gone,
// even by kill -9, the directory is free again.
func TestTwoServersOnOneDatadir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p1 := listenFree(t)
	first := start(t, "--datadir", dir)
	want := model{p1: {Name: "first", Stubs: []string{"a"}}}

	// Before and after the first one saves anything (an empty directory once let the second
	// start; a saved imposter's port, taken by the first, then made it fail for that reason).
	for _, when := range []string{"before", "after"} {
		if when == "after" {
			if code, _, body := do(t, "POST", first.Admin+"/imposters", imposterJSON(p1, modelImposter{Name: "first", Stubs: []string{"a"}})); code != 201 {
				t.Fatalf("POST: %d %s", code, body)
			}
		}
		second, err := tryStart(t, "--datadir", dir)
		if err == nil {
			second.stop()
			t.Fatalf("%s the first one saved an imposter, a second mockd started on its --datadir", when)
		}
		if msg := err.Error(); !strings.Contains(msg, "in use by another mockd") || !strings.Contains(msg, dir) {
			t.Errorf("%s the first one saved an imposter, the second mockd's error does not say the directory is in use:\n%s", when, msg)
		}
	}
	if got := fetchModel(t, first.Admin); !reflect.DeepEqual(got, want) {
		t.Errorf("the first mockd now has %v, want %v", got, want)
	}
	if code, _, _ := do(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/", p1), ""); code != 200 {
		t.Errorf("the first mockd's imposter answered %d, want 200", code)
	}

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	third := start(t, "--datadir", dir)
	if got := fetchModel(t, third.Admin); !reflect.DeepEqual(got, want) {
		t.Errorf("restarted after kill -9: %v, want %v", got, want)
	}
}
