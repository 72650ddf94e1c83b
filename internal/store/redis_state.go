package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The state of an imposter incarnation lives under prefix:imp:ID: "cycles" (a hash: stub ID →
// requests the stub answered, for its response cycle), "counts" (a hash: node run|field → that
// run's count), "base" (the counts when the requests were last cleared), "journal" (a stream
// of recorded requests, capped at the journal size), "scenarios" (a hash: scenario → state)
// and, with --store-script-state, "script" (the scripts' state, JSON), "lock" (its lock) and
// "released:TOKEN" (a lock's release mark, kept for seconds). saveScript deletes them with the
// imposter (the marks expire).

// RedisImposter is one imposter's state in Redis, shared by the nodes that run it. Its methods
// are safe for concurrent use; each fails at once while the store is lost.
type RedisImposter struct {
	r  *Redis
	id string

	mu      sync.Mutex
	cycles  map[string]*group[struct{}] // by stub ID
	journal group[[]byte]
}

// Imposter returns the shared state of the imposter incarnation id.
func (r *Redis) Imposter(id string) *RedisImposter {
	return &RedisImposter{r: r, id: id, cycles: map[string]*group[struct{}]{}}
}

// ScriptState reports whether the imposters' scripts keep their state in the store
// (RedisOptions.ScriptState, --store-script-state).
func (r *Redis) ScriptState() bool { return r.opts.ScriptState }

// Node names this node in the requests it records.
func (r *Redis) Node() string { return r.opts.Node }

func (ri *RedisImposter) key(what string) string { return ri.r.key("imp", ri.id, what) }

// do runs one operation on the imposter's key what (the first it uses) as Redis.do does. An
// error Redis answered (not a lost store: a key of another type, written by hand) is logged
// once per operation and key, naming the key: the node then goes on with its own copy of that
// state, as while the store is lost, and nothing else would say so.
func (ri *RedisImposter) do(ctx context.Context, op, what string, f func(ctx context.Context) error) error {
	err := ri.r.do(ctx, op, f)
	var re redis.Error
	if err == nil || errors.Is(err, redis.Nil) || !errors.As(err, &re) {
		return err
	}
	err = ri.r.keysErr("on", err, "imp:"+ri.id+":"+what)
	if _, logged := ri.r.refused.LoadOrStore(op+" "+err.Error(), true); !logged {
		ri.r.log.Warn(fmt.Sprintf("the store refused a %s operation %v; this node goes on with its own copy of that state, as while the store is lost (logged once)", op, err))
	}
	return err
}

// Next advances the stub's response cycle by one, for every node, and returns the count
// before the advance. Concurrent calls for one stub share one HINCRBY: while one is on its way,
// the next ones wait and go together.
func (ri *RedisImposter) Next(stubID string) (uint64, error) {
	ri.mu.Lock()
	g := ri.cycles[stubID]
	if g == nil {
		g = &group[struct{}]{}
		ri.cycles[stubID] = g
	}
	ri.mu.Unlock()
	return g.do(struct{}{}, func(batch []struct{}) (int64, error) {
		var after int64
		err := ri.do(context.Background(), "cycle", "cycles", func(ctx context.Context) error {
			var err error
			after, err = ri.r.rdb.HIncrBy(ctx, ri.key("cycles"), stubID, int64(len(batch))).Result()
			return err
		})
		return after - int64(len(batch)), err
	})
}

// Record adds a recorded request to the journal, capped at the journal size, and returns once
// it is stored. Concurrent calls share one round trip.
func (ri *RedisImposter) Record(entry []byte) error {
	_, err := ri.journal.do(entry, func(batch [][]byte) (int64, error) {
		return 0, ri.do(context.Background(), "record", "journal", func(ctx context.Context) error {
			_, err := ri.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, e := range batch {
					p.XAdd(ctx, &redis.XAddArgs{Stream: ri.key("journal"), MaxLen: int64(ri.r.journalSize()), Values: []any{"e", e}})
				}
				return nil
			})
			return err
		})
	})
	return err
}

// Journal returns the recorded requests in the order they were stored; only the n latest when
// n > 0.
func (ri *RedisImposter) Journal(ctx context.Context, n int) ([][]byte, error) {
	var msgs []redis.XMessage
	err := ri.do(ctx, "journal", "journal", func(ctx context.Context) error {
		var err error
		if n > 0 {
			msgs, err = ri.r.rdb.XRevRangeN(ctx, ri.key("journal"), "+", "-", int64(n)).Result()
		} else {
			msgs, err = ri.r.rdb.XRange(ctx, ri.key("journal"), "-", "+").Result()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		if e, ok := m.Values["e"].(string); ok {
			out = append(out, []byte(e))
		}
	}
	if n > 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// WriteCounts stores this node's counts (its totals since the imposter started), by field.
func (ri *RedisImposter) WriteCounts(ctx context.Context, counts map[string]uint64) error {
	args := ri.countArgs(counts)
	return ri.do(ctx, "counts", "counts", func(ctx context.Context) error {
		return ri.r.rdb.HSet(ctx, ri.key("counts"), args...).Err()
	})
}

// countArgs is counts as the field/value pairs of the counts hash: this run's fields.
func (ri *RedisImposter) countArgs(counts map[string]uint64) []any {
	args := make([]any, 0, 2*len(counts))
	mine := ri.r.boot + "|"
	for f, n := range counts {
		args = append(args, mine+f, n)
	}
	return args
}

// Counts returns the counts of every node but this one since the requests were last cleared,
// summed by field, and this node's counts when they were (its base: what it counted before).
func (ri *RedisImposter) Counts(ctx context.Context) (others, base map[string]uint64, err error) {
	var counts, bases *redis.MapStringStringCmd
	err = ri.do(ctx, "counts", "counts", func(ctx context.Context) error {
		_, err := ri.r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			counts = p.HGetAll(ctx, ri.key("counts"))
			bases = p.HGetAll(ctx, ri.key("base"))
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	others, base = map[string]uint64{}, map[string]uint64{}
	mine := ri.r.boot + "|"
	for k, v := range counts.Val() {
		_, field, ok := strings.Cut(k, "|")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil || strings.HasPrefix(k, mine) {
			continue
		}
		b, _ := strconv.ParseUint(bases.Val()[k], 10, 64)
		if n > b {
			others[field] += n - b
		}
	}
	for k, v := range bases.Val() {
		if field, ok := strings.CutPrefix(k, mine); ok {
			base[field], _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return others, base, nil
}

// clearScript clears an imposter's requests: KEYS are the counts, base and journal keys; ARGV
// the clearing node's counts as field/value pairs (stored first). Every node's counts become
// its base, so that what a node counts from now on is what it counts above them, whenever it
// writes next.
var clearScript = redis.NewScript(`
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('DEL', KEYS[2], KEYS[3])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do redis.call('HSET', KEYS[2], all[i], all[i + 1]) end
return 1
`)

// Clear drops the journal and makes every node's counts count from zero; counts are this
// node's counts now.
func (ri *RedisImposter) Clear(ctx context.Context, counts map[string]uint64) error {
	args := ri.countArgs(counts)
	return ri.do(ctx, "clear", "counts", func(ctx context.Context) error {
		return clearScript.Run(ctx, ri.r.rdb, []string{ri.key("counts"), ri.key("base"), ri.key("journal")}, args...).Err()
	})
}

// newBoot names one run of this node: counts are kept per run, so that a node that restarts
// (and counts from zero again) does not overwrite what it counted before.
func newBoot(node string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strings.ReplaceAll(node, "|", "_") + "/" + hex.EncodeToString(b[:])
}

// group lets concurrent calls share one round trip: the first call runs, and the calls that
// come while it runs wait and then run together, led by the first of them.
type group[T any] struct {
	mu      sync.Mutex
	busy    bool
	waiting []*groupCall[T]
}

type groupCall[T any] struct {
	arg  T
	done chan struct{}
	n    uint64 // the call's count: base + its place in the batch
	err  error
	lead bool // the call is to run the next batch
}

// do runs run once for arg and the calls waiting with it; run returns the base count, and each
// call gets base + its place in the batch.
func (g *group[T]) do(arg T, run func(batch []T) (int64, error)) (uint64, error) {
	c := &groupCall[T]{arg: arg, done: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, c)
	if g.busy {
		g.mu.Unlock()
		<-c.done
		if !c.lead {
			return c.n, c.err
		}
		g.mu.Lock()
	}
	g.busy = true
	batch := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	args := make([]T, len(batch))
	for i, b := range batch {
		args[i] = b.arg
	}
	base, err := run(args)
	for i, b := range batch {
		b.n, b.err, b.lead = uint64(base)+uint64(i), err, false
		if b != c {
			close(b.done)
		}
	}
	g.mu.Lock()
	if len(g.waiting) > 0 {
		next := g.waiting[0]
		next.lead = true
		close(next.done)
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return c.n, c.err
}

// ScenarioStarted is the state of a scenario the store holds no state for: every scenario
// starts in it (imposter.StartedState, WireMock's "Started").
const ScenarioStarted = "Started"

// The scenario states of an imposter incarnation are the hash prefix:imp:ID:scenarios (name →
// state); a name it lacks is in ScenarioStarted.

// moveScenarioScript moves a scenario from one state to the next: KEYS[1] is the scenarios
// hash, ARGV the name, the state required, the next state and the state of a name the hash
// lacks. It returns 1 when it moved the scenario, 0 when the scenario was in another state.
var moveScenarioScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ARGV[4]
if cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

// MoveScenario moves the scenario name from the state from to the state to, atomically for
// every node: of several nodes moving it from the same state at once, exactly one does. It
// reports whether this call moved it.
func (ri *RedisImposter) MoveScenario(name, from, to string) (bool, error) {
	var moved int64
	err := ri.do(context.Background(), "scenario", "scenarios", func(ctx context.Context) error {
		var err error
		moved, err = moveScenarioScript.Run(ctx, ri.r.rdb, []string{ri.key("scenarios")}, name, from, to, ScenarioStarted).Int64()
		return err
	})
	return moved == 1, err
}

// ScenarioState returns the state of the scenario name.
func (ri *RedisImposter) ScenarioState(name string) (string, error) {
	state := ScenarioStarted
	err := ri.do(context.Background(), "scenario", "scenarios", func(ctx context.Context) error {
		s, err := ri.r.rdb.HGet(ctx, ri.key("scenarios"), name).Result()
		switch {
		case err == nil:
			state = s
		case errors.Is(err, redis.Nil):
			err = nil
		}
		return err
	})
	return state, err
}

// ScenarioStates returns the states of the scenarios the store holds a state for, by name
// (those it lacks are in ScenarioStarted).
func (ri *RedisImposter) ScenarioStates(ctx context.Context) (map[string]string, error) {
	var states map[string]string
	err := ri.do(ctx, "scenario", "scenarios", func(ctx context.Context) error {
		var err error
		states, err = ri.r.rdb.HGetAll(ctx, ri.key("scenarios")).Result()
		return err
	})
	return states, err
}

// SetScenario puts the scenario name in state, for every node.
func (ri *RedisImposter) SetScenario(ctx context.Context, name, state string) error {
	return ri.do(ctx, "scenario", "scenarios", func(ctx context.Context) error {
		return ri.r.rdb.HSet(ctx, ri.key("scenarios"), name, state).Err()
	})
}

// ResetScenarios puts the scenarios named back in ScenarioStarted, for every node; every
// scenario when names is empty.
func (ri *RedisImposter) ResetScenarios(ctx context.Context, names ...string) error {
	return ri.do(ctx, "scenario", "scenarios", func(ctx context.Context) error {
		if len(names) == 0 {
			return ri.r.rdb.Del(ctx, ri.key("scenarios")).Err()
		}
		return ri.r.rdb.HDel(ctx, ri.key("scenarios"), names...).Err()
	})
}

// The scripts' state of an imposter incarnation (--store-script-state) is the string
// prefix:imp:ID:script, JSON as the script package writes it, guarded by the lock
// prefix:imp:ID:lock: a random token, set with an expiry, that a node holds from reading the
// state until it has written it back.

// lockStateScript takes the lock: KEYS are the lock and the state, ARGV the token and how long
// to hold the lock (ms). It returns {1, state} ({1} when no state is stored) when it took the
// lock, {0} when another holds it. A lock the token already holds is taken again (its hold
// starts anew): an earlier try whose reply never came (the store stalled past redisTimeout)
// may have taken it.
var lockStateScript = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return {0} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local s = redis.call('GET', KEYS[2])
if s then return {1, s} end
return {1}
`)

// unlockStateScript releases the lock: KEYS are the lock, the state and the token's release
// mark; ARGV the token, whether to store the state ("1"), the state and how long to keep the
// mark (ms). It returns 0, changing nothing, when the lock is not the token's (it expired, and
// another node may hold it now), and 1 when it released it or had released it before (the
// mark is there): a try whose reply never came may have released it, and the next try must not
// take that for an expired lock.
var unlockStateScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if redis.call('EXISTS', KEYS[3]) == 1 then return 1 end
  return 0
end
if ARGV[2] == '1' then redis.call('SET', KEYS[2], ARGV[3]) end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
return 1
`)

// releasedFor is how long the mark of a released lock is kept: longer than UnlockState tries.
const releasedFor = stateGrace + 2*redisTimeout

// LockState takes the lock of the imposter's script state for up to hold, waiting while
// another node holds it, up to wait, and returns the state stored (nil when none) and the
// token UnlockState releases the lock with. It fails with ErrLockBusy when the wait ends first.
// When the store cannot be reached it fails at once, unless the store was lost less than
// stateGrace ago: then it keeps trying, with the same token, until the store answers, the
// grace or the wait ends, so that a store that stalls for a moment (a loaded machine) delays
// the calls but does not make them use this node's copy of the state.
func (ri *RedisImposter) LockState(wait, hold time.Duration) (state []byte, token string, err error) {
	token = newToken()
	end := time.Now().Add(wait)
	pause := 500 * time.Microsecond
	do := ri.r.do
	for {
		var reply []any
		err := do(context.Background(), "script", func(ctx context.Context) error {
			var err error
			reply, err = lockStateScript.Run(ctx, ri.r.rdb, []string{ri.key("lock"), ri.key("script")},
				token, max(hold.Milliseconds(), 1)).Slice()
			return err
		})
		var lost *UnavailableError
		switch {
		case err == nil:
		case errors.As(err, &lost) && ri.r.inGrace() && time.Now().Before(end):
			do = ri.r.try // the store is taken for lost until the heartbeat finds it back
			time.Sleep(stateRetry)
			continue
		default:
			return nil, "", err
		}
		if n, _ := reply[0].(int64); n == 1 {
			if len(reply) > 1 {
				s, _ := reply[1].(string)
				state = []byte(s)
			}
			return state, token, nil
		}
		if time.Now().After(end) {
			return nil, "", ErrLockBusy
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// stateRetry is how long LockState waits before it tries a lost store again.
const stateRetry = 50 * time.Millisecond

// UnlockState releases the lock LockState gave token, storing state first unless it is nil.
// It reports false, storing nothing, when the lock is no longer token's: it was held longer
// than LockState's hold, and another node may have changed the state since. It is sent even
// while the store is taken for lost, and like LockState it tries a store lost less than
// stateGrace ago again (a try may have gone through unanswered: its release mark tells).
func (ri *RedisImposter) UnlockState(token string, state []byte) (bool, error) {
	write := "0"
	if state != nil {
		write = "1"
	}
	keys := []string{ri.key("lock"), ri.key("script"), ri.key("released:" + token)}
	for {
		var ok int64
		// Tried even while the store is taken for lost: LockState took the lock, so the store
		// answered a moment ago (perhaps in the grace, before the heartbeat found it back).
		err := ri.r.try(context.Background(), "script", func(ctx context.Context) error {
			var err error
			ok, err = unlockStateScript.Run(ctx, ri.r.rdb, keys, token, write, state, releasedFor.Milliseconds()).Int64()
			return err
		})
		var lost *UnavailableError
		if err != nil && errors.As(err, &lost) && ri.r.inGrace() {
			time.Sleep(stateRetry)
			continue
		}
		return ok == 1, err
	}
}

// ErrLockBusy is LockState's error when another node held the lock for all of the wait.
var ErrLockBusy error = lockBusy{}

type lockBusy struct{}

func (lockBusy) Error() string {
	return "another node held the script state's lock for all of the wait"
}

// LockBusy marks the error as ErrLockBusy for packages that do not import store.
func (lockBusy) LockBusy() bool { return true }

// newToken returns a random token for a lock.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
