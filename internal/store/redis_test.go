package store

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
)

// storedHTTP is an imposter as a node saves it.
func storedHTTP(port int, id string) Imposter {
	return Imposter{Port: port, ID: id, Render: func() (*config.Object, []string) {
		return config.NewObject("protocol", "http", "port", float64(port)), nil
	}}
}

// TestUnreadableEntries writes entries into the defs hash by hand, as redis-cli HSET would:
// Load returns each with its error and still returns the readable ones beside it, and a
// change of the port (a put, a delete, a replacement of all) overwrites or removes it.
func TestUnreadableEntries(t *testing.T) {
	huge := strings.Repeat("x", 8<<20)
	tests := []struct {
		name  string
		value string
		want  string // in the error
	}{
		{"garbage", "garbage", `invalid character 'g' looking for beginning of value ("garbage")`},
		{"truncated", `{"id":"a","imposter":{"protocol":"ht`, "unexpected end of JSON input"},
		{"number", "42", "a JSON number where a record is an object"},
		{"array", "[1,2]", "a JSON array where a record is an object"},
		{"string", `"imposter"`, "a JSON string where a record is an object"},
		{"null", "null", `the record has no "id" ("null")`},
		{"empty object", "{}", `the record has no "id"`},
		{"id of the wrong type", `{"id":5,"imposter":{}}`, `its "id" is a JSON number`},
		{"no imposter", `{"id":"a","stubIds":[]}`, "the record's imposter:"},
		{"imposter not an object", `{"id":"a","imposter":[1]}`, `its "imposter" is not an object`},
		{"huge garbage", huge, `("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… 8388608 bytes)`},
		{"deeply nested", strings.Repeat("[", 100000), "exceeded max depth"},
	}
	r := startRedis(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"put", "delete", "replace"} {
				if _, err := r.Save(ctx, Change{Replace: true, Put: []Imposter{storedHTTP(4545, "bad"), storedHTTP(4546, "good")}}); err != nil {
					t.Fatal(err)
				}
				if err := r.rdb.HSet(ctx, r.key("defs"), "4545", tt.value).Err(); err != nil {
					t.Fatal(err)
				}
				list, err := r.Load(ctx, []int{4545, 4546})
				if err != nil {
					t.Fatalf("Load: %v, want the readable entries and the unreadable one's error", err)
				}
				if len(list) != 2 || list[0].Port != 4545 || list[1].Port != 4546 {
					t.Fatalf("Load returned %+v", list)
				}
				if list[0].Err == nil || !strings.Contains(list[0].Err.Error(), tt.want) || !strings.Contains(list[0].Err.Error(), "mockd:defs") {
					t.Errorf("the unreadable entry's error is %v, want one naming mockd:defs with %q", list[0].Err, tt.want)
				}
				if len(list[0].Err.Error()) > 500 {
					t.Errorf("the error quotes %d bytes of the entry", len(list[0].Err.Error()))
				}
				if list[0].Version <= 0 {
					t.Errorf("the unreadable entry's version is %d", list[0].Version)
				}
				if list[1].Err != nil || list[1].ID != "good" || list[1].Def == nil {
					t.Errorf("the readable entry beside it: %+v", list[1])
				}
				// A change of the port replaces or removes the entry.
				var ch Change
				switch mode {
				case "put":
					ch.Put = []Imposter{storedHTTP(4545, "new")}
				case "delete":
					ch.Deleted = []int{4545}
				case "replace":
					ch.Replace, ch.Put = true, []Imposter{storedHTTP(4546, "good")}
				}
				if _, err := r.Save(ctx, ch); err != nil {
					t.Fatalf("%s over the unreadable entry: %v", mode, err)
				}
				list, err = r.Load(ctx, []int{4545})
				switch {
				case err != nil:
					t.Fatalf("Load after the %s: %v", mode, err)
				case mode == "put" && (len(list) != 1 || list[0].Err != nil || list[0].ID != "new"):
					t.Errorf("after the put: %+v", list)
				case mode != "put" && len(list) != 0:
					t.Errorf("after the %s: %+v, want the entry gone", mode, list)
				}
			}
		})
	}
}

// TestUnreadableVersions writes the version of an imposter, and the store's version, by
// hand: an imposter's version that is not a number reads as BadVersion (its definition is
// still read), and a store version that is not a number reads as 0 (a store that lost its
// data, which Reseed mends) rather than making the store count as lost.
func TestUnreadableVersions(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	if _, err := r.Save(ctx, Change{Put: []Imposter{storedHTTP(4545, "a")}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"x", "-7", "1.5"} {
		if err := r.rdb.HSet(ctx, r.key("versions"), "4545", bad).Err(); err != nil {
			t.Fatal(err)
		}
		byPort, _, err := r.Versions(ctx)
		if err != nil || byPort[4545] != BadVersion {
			t.Errorf("version %q: Versions = %v, %v; want 4545 at BadVersion", bad, byPort, err)
		}
		list, err := r.Load(ctx, []int{4545})
		if err != nil || len(list) != 1 || list[0].Err != nil || list[0].Version != BadVersion {
			t.Errorf("version %q: Load = %+v, %v; want the definition at BadVersion", bad, list, err)
		}
	}
	if err := r.rdb.Set(ctx, r.key("version"), "garbage", 0).Err(); err != nil {
		t.Fatal(err)
	}
	v, err := r.Version(ctx)
	if err != nil || v != 0 {
		t.Fatalf("Version of a garbage counter = %d, %v; want 0, nil", v, err)
	}
	if !r.Available() {
		t.Fatal("a garbage counter made the store count as lost")
	}
	nv, err := r.Reseed(ctx, 10, Change{Replace: true, Put: []Imposter{storedHTTP(4545, "a")}})
	if err != nil || nv != 11 {
		t.Fatalf("Reseed over a garbage counter = %d, %v; want 11", nv, err)
	}
}

// TestKeysOfAnotherType replaces each key a sync reads or writes with one of another type: the
// operation's error names the key (Redis's WRONGTYPE does not), and the store does not count as
// lost.
func TestKeysOfAnotherType(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	tests := []struct {
		key  string
		op   func() error
		want string
	}{
		{"versions", func() error { _, _, err := r.Versions(ctx); return err }, "reading mockd:versions, mockd:version: WRONGTYPE"},
		{"defs", func() error { _, err := r.Load(ctx, []int{4545}); return err }, "reading mockd:defs, mockd:versions: WRONGTYPE"},
		{"applied", func() error { return r.Applied(ctx, 1) }, "writing mockd:applied: WRONGTYPE"},
		{"defs", func() error { _, err := r.Save(ctx, Change{Deleted: []int{4545}}); return err }, "writing mockd:version, mockd:defs, mockd:versions: WRONGTYPE"},
	}
	for _, tt := range tests {
		if err := r.rdb.Set(ctx, r.key(tt.key), "garbage", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := tt.op(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s a string: %v, want an error with %q", tt.key, err, tt.want)
		}
		if !r.Available() {
			t.Fatalf("%s a string: the store counts as lost", tt.key)
		}
		if err := r.rdb.Del(ctx, r.key(tt.key)).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImposterKeysOfAnotherType replaces an imposter's state keys with strings: each operation
// fails with an error naming its key (the imposter then goes on with the node's own copy), and
// the node logs it once per operation and key, not at every request, nor not at all (it said
// nothing before).
func TestImposterKeysOfAnotherType(t *testing.T) {
	r := startRedis(t)
	var logged strings.Builder
	var mu sync.Mutex
	r.log = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), nil))
	ctx := context.Background()
	ri := r.Imposter("inc1")
	tests := []struct {
		key string
		op  func() error
	}{
		{"cycles", func() error { _, err := ri.Next("s1"); return err }},
		{"journal", func() error { return ri.Record([]byte(`{}`)) }},
		{"journal", func() error { _, err := ri.Journal(ctx, 0); return err }},
		{"counts", func() error { return ri.WriteCounts(ctx, map[string]uint64{"requests": 1}) }},
		{"scenarios", func() error { _, err := ri.MoveScenario("x", ScenarioStarted, "Next"); return err }},
		{"scenarios", func() error { _, err := ri.ScenarioState("x"); return err }},
	}
	for _, tt := range tests {
		key := "mockd:imp:inc1:" + tt.key
		if err := r.rdb.Set(ctx, key, "garbage", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := tt.op(); err == nil || !strings.Contains(err.Error(), "on "+key+": WRONGTYPE") {
				t.Errorf("%s a string: %v, want an error naming it", key, err)
			}
		}
		if !r.Available() {
			t.Fatalf("%s a string: the store counts as lost", key)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for want, n := range map[string]int{
		"a cycle operation on mockd:imp:inc1:cycles":    1,
		"a record operation on mockd:imp:inc1:journal":  1,
		"a journal operation on mockd:imp:inc1:journal": 1,
		"a counts operation on mockd:imp:inc1:counts":   1,
		// The move's script and the read fail with two errors (the script's names its line).
		"a scenario operation on mockd:imp:inc1:scenarios": 2,
	} {
		if got := strings.Count(logged.String(), want); got != n {
			t.Errorf("logged %q %d times, want %d:\n%s", want, got, n, logged.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestCallerDeadlineIsNotALostStore runs operations whose caller's context has ended (an
// admin change's wait for the other nodes, past its second): they fail, but the store is not
// taken for lost (it was, and every change was then refused with 503 until the next heartbeat).
func TestCallerDeadlineIsNotALostStore(t *testing.T) {
	r := startRedis(t)
	expired, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-expired.Done()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	for name, ctx := range map[string]context.Context{"past its deadline": expired, "canceled": canceled} {
		if _, err := r.Version(ctx); err == nil {
			t.Errorf("%s: Version succeeded", name)
		}
		if err := r.WaitApplied(ctx, 1); err == nil {
			t.Errorf("%s: WaitApplied succeeded", name)
		}
		if !r.Available() {
			t.Fatalf("%s: the caller's context made the store count as lost", name)
		}
	}
}

// FuzzParseRecord reads any text as an entry of the defs hash (a hand-written HSET can put
// anything there): a record or an error, never a panic; an error quotes a bounded, valid
// UTF-8 part of the text; a record has an ID and an object for its imposter.
func FuzzParseRecord(f *testing.F) {
	f.Add(`{"id":"a","stubIds":["s"],"imposter":{"protocol":"http","port":4545}}`)
	f.Add(`garbage`)
	f.Add(`{"id":5,"imposter":{}}`)
	f.Add(`{"id":"a","imposter":[1]}`)
	f.Add(`null`)
	f.Add(strings.Repeat("é", 30))
	f.Add(`{"id":"a","imposter":{"x":` + strings.Repeat("[", 2000) + `}}`)
	f.Fuzz(func(t *testing.T, text string) {
		rec, def, err := parseRecord(text)
		if err != nil {
			if len(err.Error()) > 1000 {
				t.Fatalf("the error is %d bytes", len(err.Error()))
			}
			if !utf8.ValidString(err.Error()) && utf8.ValidString(text) {
				t.Fatalf("the error is not valid UTF-8: %q", err.Error())
			}
			return
		}
		if _, ok := def.(*config.Object); !ok || rec.ID == "" {
			t.Fatalf("a record with ID %q and imposter %T", rec.ID, def)
		}
	})
}

// TestWaitAppliedSkipsKeysThatAreNoHeartbeat puts keys under the nodes' prefix that are not
// heartbeats (garbage, JSON of another shape, a hash): a change waits for the live nodes only
// (it waited its whole second for each of those), and still for a live node that is behind.
func TestWaitAppliedSkipsKeysThatAreNoHeartbeat(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	if err := r.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Applied(ctx, 5); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		r.rdb.Set(ctx, r.key("node", "ghost"), "garbage", 0).Err(),
		r.rdb.Set(ctx, r.key("node", "zz"), `{"name":5}`, 0).Err(),
		r.rdb.Set(ctx, r.key("node", "nameless"), `{}`, 0).Err(),
		r.rdb.HSet(ctx, r.key("node", "yy"), "a", "b").Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := r.WaitApplied(wctx, 5); err != nil {
		t.Fatalf("WaitApplied with keys that are no heartbeat: %v", err)
	}
	// A live node that is behind is still waited for.
	if err := r.rdb.Set(ctx, r.key("node", "other"), `{"name":"other"}`, 0).Err(); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if err := r.WaitApplied(short, 5); err == nil {
		t.Fatal("WaitApplied did not wait for a live node that is behind")
	}
}
