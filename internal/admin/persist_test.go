package admin

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/store"
)

// recordingStore keeps the changes saved to it.
type recordingStore struct {
	mu      sync.Mutex
	changes []store.Change
	fail    error
}

func (s *recordingStore) Save(_ context.Context, ch store.Change) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	s.changes = append(s.changes, ch)
	return int64(len(s.changes)), nil
}

// TestChangeRunsUnderTheChangeLock runs a change made outside the API (a config reload) through
// Change: it runs with the lock admin writes take, so that the two cannot interleave, and what it
// changed is stored, as a change (not a replacement of every imposter), before Change returns.
func TestChangeRunsUnderTheChangeLock(t *testing.T) {
	st := &recordingStore{}
	a, im := newTestAPI(t, Options{Store: st})
	def, errs := config.ParseImposter(config.NewObject("protocol", "http"), config.ParseOptions{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var added int
	ran, err := a.Change(context.Background(), func() error {
		if a.changeMu.TryLock() {
			a.changeMu.Unlock()
			t.Error("the change runs without the admin API's change lock")
		}
		nim, err := a.reg.Create(def)
		if nim != nil {
			added = nim.Port()
		}
		return err
	})
	if !ran || err != nil {
		t.Fatalf("Change: ran %v, %v", ran, err)
	}
	if len(st.changes) != 1 {
		t.Fatalf("%d changes stored, want 1", len(st.changes))
	}
	ch := st.changes[0]
	if ch.Replace || len(ch.Put) != 1 || ch.Put[0].Port != added || len(ch.Deleted) != 0 {
		t.Errorf("stored change %+v; want imposter %d put, nothing else (imposter %d unchanged)", ch, added, im.Port())
	}

	// A change that changes nothing stores nothing; the change's own error comes back.
	boom := errors.New("boom")
	if ran, err := a.Change(context.Background(), func() error { return boom }); !ran || !errors.Is(err, boom) {
		t.Errorf("failed change: ran %v, %v; want true, boom", ran, err)
	}
	if len(st.changes) != 1 {
		t.Errorf("a change that changed nothing stored %d changes", len(st.changes)-1)
	}

	// A store that fails: the change ran, and the error says it is not stored.
	st.fail = errors.New("disk full")
	ran, err = a.Change(context.Background(), func() error {
		a.reg.Delete(added)
		return nil
	})
	if !ran || !errors.Is(err, st.fail) {
		t.Errorf("change with a failing store: ran %v, %v; want true and the store's error", ran, err)
	}

	// The store works again: the next change stores every running imposter (the deletion that
	// failed to save included), not only itself.
	st.fail = nil
	var again int
	if ran, err := a.Change(context.Background(), func() error {
		nim, err := a.reg.Create(def)
		if nim != nil {
			again = nim.Port()
		}
		return err
	}); !ran || err != nil {
		t.Fatalf("Change after the store recovered: ran %v, %v", ran, err)
	}
	ch = st.changes[len(st.changes)-1]
	ports := map[int]bool{}
	for _, p := range ch.Put {
		ports[p.Port] = true
	}
	if !ch.Replace || len(ch.Put) != 2 || !ports[im.Port()] || !ports[again] {
		t.Errorf("first change stored after a failed one: %+v; want every running imposter (%d, %d) replacing the store's", ch, im.Port(), again)
	}
	// Then changes are stored as changes again.
	if _, err := a.Change(context.Background(), func() error { a.reg.Delete(again); return nil }); err != nil {
		t.Fatal(err)
	}
	if ch := st.changes[len(st.changes)-1]; ch.Replace || len(ch.Deleted) != 1 || ch.Deleted[0] != again {
		t.Errorf("change after the catch-up: %+v; want imposter %d deleted, nothing else", ch, again)
	}
}
