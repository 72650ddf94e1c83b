package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/mockd/mockd/internal/config"
)

// Timings of the Redis store.
const (
	// redisTimeout bounds every command: a store that takes longer is taken for lost.
	redisTimeout = time.Second
	// pollEvery is how often a node reads the store's version, in case it missed a message,
	// and, while the store is lost, tries to reach it again.
	pollEvery = 250 * time.Millisecond
	// heartbeatEvery is how often a node says it is alive; it counts as gone after
	// heartbeatTTL without saying so.
	heartbeatEvery = time.Second
	heartbeatTTL   = 3 * time.Second
	// stateGrace is how long after the store was lost a script call that needs the shared
	// script state keeps trying to take its lock (see RedisImposter.LockState): a store that
	// stalled (a reply later than redisTimeout on a loaded machine) and answers again within it
	// costs the calls a wait, not their updates. After it, calls fail at once as other
	// operations do.
	stateGrace = 3 * time.Second
)

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// URL is redis://[user:password@]host:port/db, rediss:// for TLS, or unix:///path?db=N,
	// with go-redis's options as query parameters, and prefix=NAME for the keys' prefix
	// (default "mockd"): nodes that share a prefix share their imposters.
	URL string
	// Node names this node in GET /cluster; it must differ from the other nodes' names.
	Node string
	// Address is where this node's admin API listens, for GET /cluster.
	Address string
	// Logger receives the store's operational messages; nil = slog.Default().
	Logger *slog.Logger
	// JournalSize caps each imposter's shared journal (the oldest requests go first);
	// 0 = 100,000, as the journal of one node.
	JournalSize int
	// ScriptState keeps the state of the imposters' scripts in the store, for every node
	// (--store-script-state); see script.Scope.ShareState.
	ScriptState bool
	// Observe, when set, receives the duration and outcome of every store operation (op names
	// it: "save", "sync", "cycle", …), for metrics.
	Observe func(op string, seconds float64, err error)
}

// Redis keeps imposter definitions, and the state of their stubs, in Redis, for several
// mockd nodes to share (--store redis://…). Every change is a Lua script that bumps one
// version counter, stores the changed imposters with that version and publishes it; nodes
// apply what they have not and read the version every pollEvery in case they missed a
// message. Its methods are safe for concurrent use.
type Redis struct {
	opts    RedisOptions
	rdb     *redis.Client
	prefix  string
	display string // the URL without its password
	boot    string // this run of this node (see newBoot)
	log     *slog.Logger
	started time.Time

	up      atomic.Bool
	backs   atomic.Int64 // how often the store came back after it was lost
	downMu  sync.Mutex
	downErr error        // why the store was last lost
	lostAt  atomic.Int64 // when it was last lost, in Unix nanoseconds

	refused    sync.Map                          // the refused operations logged (see RedisImposter.do)
	applied    atomic.Int64                      // the version this node runs (see Applied)
	unstarted  atomic.Pointer[map[string]string] // see SetUnstarted
	unreadable atomic.Pointer[map[string]string] // see SetUnreadable
	lastSync   atomic.Int64                      // when it last synced, in Unix nanoseconds

	stop context.CancelFunc
	done sync.WaitGroup
}

// OpenRedis returns a Redis store for opts.URL; it does not connect (see Connect).
func OpenRedis(opts RedisOptions) (*Redis, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	prefix := "mockd"
	q := u.Query()
	if p := q.Get("prefix"); p != "" {
		prefix = p
	}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	ropts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	ropts.DialTimeout, ropts.ReadTimeout, ropts.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
	ropts.MaxRetries = -1 // a lost store is found at once: requests must not wait for retries
	ropts.DisableIdentity = true
	ropts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	redis.SetLogger(clientLog{opts.Logger}) // one store a process: the client's logger is global
	display := u.Redacted()
	r := &Redis{opts: opts, rdb: redis.NewClient(ropts), prefix: prefix, display: display, log: opts.Logger, started: time.Now(),
		boot: newBoot(opts.Node)}
	r.up.Store(true)
	return r, nil
}

// clientLog takes the Redis client's own messages to the debug level: while the store is down
// the client wrote "redis: … connection pool: failed to dial after 5 attempts" to stderr several
// times a second, beside the one warning the store logs when it is lost (see lost).
type clientLog struct{ log *slog.Logger }

func (l clientLog) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...))
}

// String returns the store's URL without its password.
func (r *Redis) String() string { return r.display }

// key returns the name of a key of the store.
func (r *Redis) key(parts ...string) string { return r.prefix + ":" + strings.Join(parts, ":") }

// Connect waits until Redis answers, trying again for up to wait (0 = one try).
func (r *Redis) Connect(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	logged := false
	for {
		cctx, cancel := context.WithTimeout(ctx, redisTimeout)
		err := r.rdb.Ping(cctx).Err()
		cancel()
		if err == nil {
			r.up.Store(true)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cannot reach the store %s: %w", r.display, err)
		}
		if !logged {
			r.log.Warn(fmt.Sprintf("waiting up to %s for the store %s: %v", wait, r.display, err))
			logged = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// SetNode names this node and its admin address, before Run.
func (r *Redis) SetNode(name, address string) {
	r.opts.Node, r.opts.Address = name, address
	r.boot = newBoot(name)
}

func (r *Redis) journalSize() int {
	if r.opts.JournalSize <= 0 {
		return 100000
	}
	return r.opts.JournalSize
}

// Stop stops the background work: nothing is synced from the store any more.
func (r *Redis) Stop() {
	if r.stop != nil {
		r.stop()
		r.done.Wait()
	}
}

// Close stops the background work, takes this node off the live list and closes the
// connections.
func (r *Redis) Close() {
	r.Stop()
	if r.up.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
		_ = r.rdb.Del(ctx, r.key("node", r.opts.Node)).Err()
		_ = r.rdb.HDel(ctx, r.key("applied"), r.opts.Node).Err()
		cancel()
	}
	_ = r.rdb.Close()
}

// UnavailableError is the error of an operation refused or failed because the store cannot
// be reached.
type UnavailableError struct {
	Store string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("cannot reach the store %s: %v", e.Store, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable marks the error as the store being out of reach (the admin API answers 503).
func (e *UnavailableError) Unavailable() bool { return true }

// Comebacks counts how often the store came back after it was lost.
func (r *Redis) Comebacks() int64 { return r.backs.Load() }

// Available reports whether the store answered its last command.
func (r *Redis) Available() bool { return r.up.Load() }

// unavailable returns the error of an operation refused while the store is lost.
func (r *Redis) unavailable() error {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	return &UnavailableError{Store: r.display, Err: r.downErr}
}

// inGrace reports whether the store, lost, was lost less than stateGrace ago.
func (r *Redis) inGrace() bool {
	return time.Since(time.Unix(0, r.lostAt.Load())) < stateGrace
}

// lost reports whether err says the store cannot be reached (rather than refusing a
// command), and then marks it lost: the first time it is logged.
func (r *Redis) lost(err error) bool {
	var re redis.Error
	if err == nil || errors.Is(err, redis.Nil) || errors.As(err, &re) && !strings.HasPrefix(re.Error(), "LOADING") {
		return false
	}
	r.downMu.Lock()
	r.downErr = err
	r.downMu.Unlock()
	if r.up.CompareAndSwap(true, false) {
		r.lostAt.Store(time.Now().UnixNano())
		r.log.Warn(fmt.Sprintf("lost the store %s: %v; serving the imposters this node has, with response cycles, scenario states and script state kept by this node alone, and refusing changes until it is back", r.display, err))
	}
	return true
}

// do runs one operation against Redis, timed and reported as op. A lost store fails it at
// once with an *UnavailableError.
func (r *Redis) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	if !r.up.Load() {
		return r.unavailable()
	}
	return r.try(ctx, op, f)
}

// try is do without its first check: it sends the operation even while the store is taken
// for lost (it stays so until the heartbeat finds it back; see Run).
func (r *Redis) try(ctx context.Context, op string, f func(ctx context.Context) error) error {
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if staleConn(err) && ctx.Err() == nil {
		// A pooled connection from before a Redis restart: the new Redis never saw the command,
		// and the pool has dropped that connection, so one more try dials afresh. A Redis that is
		// really gone refuses the dial and the store is lost as before.
		err = f(ctx)
	}
	if r.opts.Observe != nil {
		r.opts.Observe(op, time.Since(start).Seconds(), err)
	}
	if err != nil && caller.Err() != nil {
		// The caller's own deadline ended the operation, not the store's timeout: an admin
		// change that waited its second for a node killed a moment ago (its heartbeat not
		// expired yet) took the store for lost, and the changes after it were refused with 503
		// until the next heartbeat found it "back".
		return err
	}
	if r.lost(err) {
		return &UnavailableError{Store: r.display, Err: err}
	}
	return err
}

// staleConn reports whether err is what a connection closed by the other side gives.
func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// storedRecord is an imposter as the defs hash holds it.
type storedRecord struct {
	ID       string          `json:"id"`
	StubIDs  []string        `json:"stubIds"`
	Imposter json.RawMessage `json:"imposter"`
}

// saveScript applies a change: KEYS are the version counter, the defs hash (port → record)
// and the versions hash (port → version); ARGV are the prefix, the mode ("put", "replace",
// "absent": only ports the store lacks, or "reseed": replace when the version is below
// ARGV[3]), a version floor, then port/record pairs ("" deletes). It deletes the state of
// every imposter incarnation it removes, publishes the new version and returns it (0 when
// "reseed" found nothing to do).
var saveScript = redis.NewScript(`
local prefix, mode = ARGV[1], ARGV[2]
local function dropState(record, newID)
  if not record then return end
  -- A record that is not ours (written by hand) names no state to drop: it is replaced or deleted all the same.
  local ok, rec = pcall(cjson.decode, record)
  if not ok or type(rec) ~= 'table' or type(rec.id) ~= 'string' or rec.id == '' then return end
  local id = rec.id
  if id == newID then return end
  for _, k in ipairs({'cycles', 'counts', 'base', 'journal', 'scenarios', 'script', 'lock'}) do
    redis.call('DEL', prefix .. ':imp:' .. id .. ':' .. k)
  end
end
if mode == 'reseed' then
  local cur = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
  if cur >= tonumber(ARGV[3]) then return 0 end
  redis.call('SET', KEYS[1], ARGV[3])
end
local v = redis.call('INCR', KEYS[1])
if mode == 'replace' or mode == 'reseed' then
  local keep = {}
  for i = 4, #ARGV, 2 do keep[ARGV[i]] = true end
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    if not keep[all[i]] then
      dropState(all[i + 1], nil)
      redis.call('HDEL', KEYS[2], all[i])
      redis.call('HDEL', KEYS[3], all[i])
    end
  end
end
for i = 4, #ARGV, 2 do
  local port, record = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', KEYS[2], port)
  if record == '' then
    dropState(old, nil)
    redis.call('HDEL', KEYS[2], port)
    redis.call('HDEL', KEYS[3], port)
  elseif not (mode == 'absent' and old) then
    dropState(old, cjson.decode(record).id)
    redis.call('HSET', KEYS[2], port, record)
    redis.call('HSET', KEYS[3], port, v)
  end
end
redis.call('PUBLISH', prefix .. ':changes', v)
return v
`)

// Save stores a change in one atomic step and returns the version it got. The last change
// Redis receives is what every node ends up with.
func (r *Redis) Save(ctx context.Context, ch Change) (int64, error) {
	mode := "put"
	if ch.Replace {
		mode = "replace"
	}
	return r.save(ctx, "save", mode, 0, ch)
}

// SaveAbsent stores the imposters of ch whose ports the store has none for (--store-init
// merge).
func (r *Redis) SaveAbsent(ctx context.Context, ch Change) (int64, error) {
	return r.save(ctx, "save", "absent", 0, ch)
}

// Reseed replaces the store's imposters with ch when the store's version is below floor: a
// store that lost its data (a Redis restarted without persistence) gets back what the nodes
// run. It returns 0 when the store had moved on, or another node reseeded it first.
func (r *Redis) Reseed(ctx context.Context, floor int64, ch Change) (int64, error) {
	return r.save(ctx, "reseed", "reseed", floor, ch)
}

func (r *Redis) save(ctx context.Context, op, mode string, floor int64, ch Change) (int64, error) {
	args := []any{r.prefix, mode, floor}
	for _, im := range ch.Put {
		def, ids := im.Render()
		rec, err := json.Marshal(storedRecord{ID: im.ID, StubIDs: ids, Imposter: config.MarshalJSON(def, 0)})
		if err != nil {
			return 0, fmt.Errorf("cannot save imposter %d: %w", im.Port, err)
		}
		args = append(args, strconv.Itoa(im.Port), rec)
	}
	for _, port := range ch.Deleted {
		args = append(args, strconv.Itoa(port), "")
	}
	var v int64
	err := r.do(ctx, op, func(ctx context.Context) error {
		var err error
		v, err = saveScript.Run(ctx, r.rdb, []string{r.key("version"), r.key("defs"), r.key("versions")}, args...).Int64()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cannot save imposters: %w", r.keysErr("writing", err, "version", "defs", "versions"))
	}
	return v, nil
}

// Version returns the store's version.
func (r *Redis) Version(ctx context.Context) (int64, error) {
	var v int64
	err := r.do(ctx, "version", func(ctx context.Context) error {
		text, err := r.rdb.Get(ctx, r.key("version")).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		// A counter that is not a number (written by hand) reads as 0, as Versions reads it: the
		// store lost its data, and the first node to see it reseeds it (see Reseed), rather than
		// this node taking the store for lost.
		v, _ = strconv.ParseInt(text, 10, 64)
		return err
	})
	return v, err
}

// Versions returns the version of every stored imposter by port, and the store's version,
// read at one moment.
func (r *Redis) Versions(ctx context.Context) (map[int]int64, int64, error) {
	var all *redis.MapStringStringCmd
	var version *redis.StringCmd
	err := r.do(ctx, "sync", func(ctx context.Context) error {
		_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			all = p.HGetAll(ctx, r.key("versions"))
			version = p.Get(ctx, r.key("version"))
			return nil
		})
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		return err
	})
	if err != nil {
		return nil, 0, r.keysErr("reading", err, "versions", "version")
	}
	out := make(map[int]int64, len(all.Val()))
	for p, v := range all.Val() {
		if port, err := strconv.Atoi(p); err == nil {
			out[port] = parseVersion(v)
		}
	}
	v, _ := strconv.ParseInt(version.Val(), 10, 64)
	return out, v, nil
}

// BadVersion is the version of a stored imposter whose version is not a number (written by
// hand): the imposter is still read and run, as version BadVersion, until a change replaces it.
const BadVersion int64 = -2

// parseVersion reads a stored imposter's version.
func parseVersion(text string) int64 {
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || v < 0 {
		return BadVersion
	}
	return v
}

// Stored is an imposter as a shared store holds it.
type Stored struct {
	Port    int
	ID      string
	StubIDs []string
	// Version is the store's version when the imposter was last saved.
	Version int64
	// Def is the definition (replayable).
	Def config.Value
	// Err says why the store's entry for Port cannot be read (not a record this store wrote:
	// garbage written by hand, say); ID, StubIDs and Def are then unset. The entry stays until
	// a change of the port replaces or deletes it.
	Err error
}

// maxRecordError bounds how much of an unreadable record an error quotes.
const maxRecordError = 40

// parseRecord reads one entry of the defs hash.
func parseRecord(text string) (storedRecord, config.Value, error) {
	var rec storedRecord
	if err := json.Unmarshal([]byte(text), &rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			err = fmt.Errorf("a JSON %s where a record is an object", te.Value)
		} else if errors.As(err, &te) {
			err = fmt.Errorf("its %q is a JSON %s", te.Field, te.Value)
		}
		return rec, nil, fmt.Errorf("%w (%s)", err, quoteStart(text))
	}
	if rec.ID == "" {
		return rec, nil, fmt.Errorf("the record has no \"id\" (%s)", quoteStart(text))
	}
	def, err := config.ParseJSON(rec.Imposter)
	if err == nil {
		if _, ok := def.(*config.Object); !ok {
			err = errors.New("its \"imposter\" is not an object")
		}
	}
	if err != nil {
		return rec, nil, fmt.Errorf("the record's imposter: %w", err)
	}
	return rec, def, nil
}

// quoteStart quotes the start of text, for an error about it.
func quoteStart(text string) string {
	if len(text) <= maxRecordError {
		return strconv.Quote(text)
	}
	cut := maxRecordError
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… %d bytes", strconv.Quote(text[:cut]), len(text))
}

// Load returns the stored imposters on ports; a port the store has none for is left out, and
// one whose entry cannot be read is returned with its Err set (see Stored.Err): one bad entry
// does not keep a node from the others.
func (r *Redis) Load(ctx context.Context, ports []int) ([]Stored, error) {
	if len(ports) == 0 {
		return nil, nil
	}
	fields := make([]string, len(ports))
	for i, p := range ports {
		fields[i] = strconv.Itoa(p)
	}
	var defs, versions *redis.SliceCmd
	err := r.do(ctx, "sync", func(ctx context.Context) error {
		_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			defs = p.HMGet(ctx, r.key("defs"), fields...)
			versions = p.HMGet(ctx, r.key("versions"), fields...)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, r.keysErr("reading", err, "defs", "versions")
	}
	var out []Stored
	for i, d := range defs.Val() {
		text, ok := d.(string)
		if !ok {
			continue // deleted meanwhile
		}
		vtext, _ := versions.Val()[i].(string)
		v := parseVersion(vtext)
		rec, def, err := parseRecord(text)
		if err != nil {
			err = fmt.Errorf("the entry %s in the hash %s: %w", fields[i], r.key("defs"), err)
			out = append(out, Stored{Port: ports[i], Version: v, Err: err})
			continue
		}
		out = append(out, Stored{Port: ports[i], ID: rec.ID, StubIDs: rec.StubIDs, Version: v, Def: def})
	}
	return out, nil
}

// Applied records that this node runs the store's version v (for WaitApplied and GET /cluster).
func (r *Redis) Applied(ctx context.Context, v int64) error {
	r.applied.Store(v)
	r.lastSync.Store(time.Now().UnixNano())
	err := r.do(ctx, "sync", func(ctx context.Context) error {
		return r.rdb.HSet(ctx, r.key("applied"), r.opts.Node, v).Err()
	})
	return r.keysErr("writing", err, "applied")
}

// keysErr names the keys an operation read or wrote in its error when Redis refused it (a
// key of another type, say, written by hand): "WRONGTYPE Operation against a key holding the
// wrong kind of value" alone does not say which. A lost store's error is returned as it is.
func (r *Redis) keysErr(verb string, err error, keys ...string) error {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = r.key(k)
	}
	return fmt.Errorf("%s %s: %w", verb, strings.Join(names, ", "), err)
}

// WaitApplied waits until every live node runs version v or later, or ctx ends. The live
// nodes are those whose heartbeat reads as one (see Nodes) when the wait begins: a key under
// the nodes' prefix that is not a heartbeat (written by hand, of another type) made every
// change wait its whole second for a node that does not exist.
func (r *Redis) WaitApplied(ctx context.Context, v int64) error {
	nodes, err := r.Nodes(ctx)
	if err != nil {
		return err
	}
	for {
		var applied map[string]string
		err = r.do(ctx, "wait", func(ctx context.Context) error {
			var err error
			applied, err = r.rdb.HGetAll(ctx, r.key("applied")).Result()
			return err
		})
		if err != nil {
			return err
		}
		behind := false
		for _, n := range nodes {
			if got, _ := strconv.ParseInt(applied[n.Name], 10, 64); got < v {
				behind = true
				break
			}
		}
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Node is one live node, as its last heartbeat described it.
type Node struct {
	Name    string    `json:"name"`
	Address string    `json:"address,omitempty"`
	Version int64     `json:"version"`
	Synced  time.Time `json:"lastSync"`
	Started time.Time `json:"startedAt"`
	Seen    time.Time `json:"heartbeat"`
	// Unstarted holds the stored imposters the node could not start (their ports were taken),
	// by port: why.
	Unstarted map[string]string `json:"unstarted,omitempty"`
	// Unreadable holds the stored imposters the node cannot read or run from their entries,
	// by port: why.
	Unreadable map[string]string `json:"unreadable,omitempty"`
}

// SetUnstarted says which stored imposters this node could not start, and why, for its
// heartbeat (see Node.Unstarted).
func (r *Redis) SetUnstarted(m map[int]string) { r.unstarted.Store(byPortText(m)) }

// SetUnreadable says which stored imposters this node cannot read or run from their
// entries, and why, for its heartbeat (see Node.Unreadable).
func (r *Redis) SetUnreadable(m map[int]string) { r.unreadable.Store(byPortText(m)) }

func byPortText(m map[int]string) *map[string]string {
	out := make(map[string]string, len(m))
	for port, why := range m {
		out[strconv.Itoa(port)] = why
	}
	return &out
}

// Self returns this node as its next heartbeat will describe it.
func (r *Redis) Self() Node {
	n := Node{Name: r.opts.Node, Address: r.opts.Address, Version: r.applied.Load(),
		Synced: time.Unix(0, r.lastSync.Load()).UTC(), Started: r.started.UTC(), Seen: time.Now().UTC()}
	if u := r.unstarted.Load(); u != nil && len(*u) > 0 {
		n.Unstarted = *u
	}
	if u := r.unreadable.Load(); u != nil && len(*u) > 0 {
		n.Unreadable = *u
	}
	return n
}

// Nodes returns the live nodes, ordered by name.
func (r *Redis) Nodes(ctx context.Context) ([]Node, error) {
	keys, err := r.nodeKeys(ctx)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	var vals []any
	err = r.do(ctx, "nodes", func(ctx context.Context) error {
		var err error
		vals, err = r.rdb.MGet(ctx, keys...).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, v := range vals {
		if s, ok := v.(string); ok {
			var n Node
			if json.Unmarshal([]byte(s), &n) == nil && n.Name != "" {
				out = append(out, n)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r *Redis) nodeKeys(ctx context.Context) ([]string, error) {
	var keys []string
	err := r.do(ctx, "nodes", func(ctx context.Context) error {
		it := r.rdb.Scan(ctx, 0, r.key("node", "*"), 1000).Iterator()
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		return it.Err()
	})
	return keys, err
}

// heartbeat says that this node is alive.
func (r *Redis) heartbeat(ctx context.Context) error {
	data, err := json.Marshal(r.Self())
	if err != nil {
		return err
	}
	return r.do(ctx, "heartbeat", func(ctx context.Context) error {
		return r.rdb.Set(ctx, r.key("node", r.opts.Node), data, heartbeatTTL).Err()
	})
}

// Run starts the background work: it calls changed with the store's version whenever a node
// publishes a change, every pollEvery, and when a lost store is back (then with force set);
// it also keeps this node's heartbeat. changed runs on one goroutine, one call at a time.
func (r *Redis) Run(changed func(version int64, force bool)) {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	kick := make(chan bool, 1)
	notify := func(force bool) {
		select {
		case kick <- force:
		default:
			if force { // make sure a forced call is not lost behind a plain one
				go func() {
					select {
					case kick <- true:
					case <-ctx.Done():
					}
				}()
			}
		}
	}
	r.done.Add(3)
	go r.guard("sync", func() {
		defer r.done.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case force := <-kick:
				v, err := r.Version(ctx)
				if err == nil {
					changed(v, force)
				}
			}
		}
	})
	go r.guard("subscription", func() {
		defer r.done.Done()
		ps := r.rdb.Subscribe(ctx, r.key("changes"))
		defer ps.Close()
		ch := ps.Channel(redis.WithChannelHealthCheckInterval(time.Second))
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
				notify(false)
			}
		}
	})
	go r.guard("heartbeat", func() {
		defer r.done.Done()
		poll := time.NewTicker(pollEvery)
		defer poll.Stop()
		lastBeat := time.Time{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			}
			if !r.up.Load() {
				pctx, cancel := context.WithTimeout(ctx, redisTimeout)
				err := r.rdb.Ping(pctx).Err()
				cancel()
				if err != nil {
					continue
				}
				r.backs.Add(1)
				r.up.Store(true)
				r.log.Info(fmt.Sprintf("the store %s is back: resynchronising", r.display))
				notify(true)
			} else {
				notify(false)
			}
			if time.Since(lastBeat) >= heartbeatEvery {
				if r.heartbeat(ctx) == nil {
					lastBeat = time.Now()
				}
			}
		}
	})
}

// guard runs f, logging a panic with its stack rather than ending the process.
func (r *Redis) guard(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("panic in the store's "+what, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}
