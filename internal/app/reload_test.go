package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/mockd/mockd/internal/config"
)

// TestSettle feeds fingerprints poll by poll: a change is reported once the files look the same
// on two polls in a row, so a file caught half-written (an editor truncating it first) is never
// reloaded; a change that goes back to what was reported is none.
func TestSettle(t *testing.T) {
	steps := []struct {
		now  string
		want bool
	}{
		{"a", false},    // as at start
		{"", false},     // truncated: not yet stable
		{"b", false},    // written: not yet stable
		{"b", true},     // stable: the change is b
		{"b", false},    // nothing new
		{"", false},     // truncated again...
		{"b", false},    // ...and written back as it was: no change
		{"b", false},    // stable, but what was last reported
		{"c", false},    // changed
		{"c", true},     // stable
		{"gone", false}, // a file removed (an error fingerprint is one too)
		{"gone", true},  // stable: reported (the reload refuses a missing -c file)
	}
	s := settle{last: "a"}
	for i, st := range steps {
		if got := s.poll(st.now); got != st.want {
			t.Errorf("poll %d (%q): changed = %v, want %v", i, st.now, got, st.want)
		}
	}
}

// TestReloadRefusedWhenANewImposterCannotStart: a reload whose new imposter cannot start (its
// port held by another process) changes nothing, as PUT /imposters does, and says so as for a
// file with an error; once the port is free the same reload goes through. The running
// imposters were changed (new stubs swapped in, removed ones stopped) when the error came.
func TestReloadRefusedWhenANewImposterCannotStart(t *testing.T) {
	portA, portB := freePort(t), freePort(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	portC := held.Addr().(*net.TCPAddr).Port
	imposterYAML := func(port int, body string) string {
		return fmt.Sprintf("  - {port: %d, protocol: http, stubs: [{responses: [{is: {body: %s}}]}]}\n", port, body)
	}
	a, err := New(Options{Quiet: true, Host: "127.0.0.1", Listener: fasthttputil.NewInmemoryListener(),
		Config: loadYAML(t, "imposters:\n"+imposterYAML(portA, "a1")+imposterYAML(portB, "b1"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	bodies := func() map[int]string {
		got := map[int]string{}
		for _, port := range []int{portA, portB, portC} {
			if im := a.Registry().Get(port); im != nil {
				got[port] = string(im.AppendStubsJSON(nil))
			}
		}
		return got
	}
	before := bodies()
	next := loadYAML(t, "imposters:\n"+imposterYAML(portA, "a2")+imposterYAML(portC, "c2"))
	_, err = a.Reload(next)
	var le *config.LoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "cannot start imposter") {
		t.Fatalf("reload with a new imposter on a held port: %v, want a *config.LoadError", err)
	}
	if after := bodies(); !maps.Equal(after, before) {
		t.Errorf("the refused reload changed the imposters:\nbefore %v\nafter  %v", before, after)
	}
	held.Close()
	res, err := a.Reload(next)
	if err != nil || res.Added != 1 || res.Swapped != 1 || res.Removed != 1 {
		t.Fatalf("reload once the port is free: %+v, %v", res, err)
	}
	after := bodies()
	if _, ok := after[portB]; ok || !strings.Contains(after[portA], "a2") || !strings.Contains(after[portC], "c2") {
		t.Errorf("after the reload: %v", after)
	}
}
