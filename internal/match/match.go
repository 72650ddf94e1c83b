// Package match compiles Mountebank predicates and finds the first stub of an
// imposter whose predicates match a request, with Mountebank 2.9.1's exact
// semantics (models/predicates.js).
//
// It works in two layers. The reference (reference.go, selectors.go) is predicates.js written
// plainly, to be read next to it. The speed layer (index.go, compile.go, eval.go, jsonscan.go)
// narrows the candidate stubs and evaluates the predicate shapes it specialises, reading the
// request in place; every other predicate, and any request a fast node is unsure of, goes to the
// reference. Deleting a fast path changes no answer, only the time it takes: layers_test.go
// holds Find, Find without the speed layer and the reference to the same answers.
package match

import (
	"slices"
	"sync/atomic"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// Error is a Mountebank API error raised by a predicate (Code e.g. "bad
// data", "invalid injection"). Code is empty for a JavaScript runtime error
// (TypeError, SyntaxError) that Mountebank would surface without a code.
type Error struct {
	Code, Message string
	// Source is what Mountebank reports as the error's source. It is nil
	// where Mountebank reports the JSON text of the whole stub, which only
	// the caller has.
	Source any
	// Stub is the index of the stub whose predicates raised the error at
	// Compile, or -1.
	Stub int
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// Errors is what Compile returns when several stubs are invalid: one *Error
// per invalid stub, in the order Mountebank lists them (last stub first: its
// validator concatenates the per-stub lists in reverse).
type Errors []*Error

func (es Errors) Error() string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += "; "
		}
		s += e.Error()
	}
	return s
}

// Unwrap lets errors.As find the first *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func validationError(msg string, source any) *Error {
	return &Error{Code: "bad data", Message: msg, Source: source, Stub: -1}
}

func typeError(msg string) *Error {
	return &Error{Message: msg, Stub: -1}
}

// Options configure Compile.
type Options struct {
	// Binary is true for an imposter in binary mode (Mountebank encoding
	// "base64"): expected and actual values are base64-decoded, and matches,
	// jsonpath and xpath are refused.
	Binary bool
	// TCP is true for a tcp imposter; it selects the request Mountebank's
	// dry-run validation uses ({data: "test"} instead of the http one).
	TCP bool
	// Injector runs inject predicates; nil makes them fail at evaluation.
	Injector Injector
}

// Injector evaluates a JavaScript predicate. Implemented by internal/script.
type Injector interface {
	Predicate(source string, r *request.Request) (bool, error)
}

// Set is the compiled predicates of all stubs of one imposter, in two layers: the reference
// evaluator (reference.go) holds Mountebank's semantics, and the speed layer (the candidate
// index of index.go, the fast nodes of compile.go and eval.go) answers what it specialises and
// hands everything else to the reference. It is immutable and safe for concurrent use.
type Set struct {
	stubs [][]*pred
	// filled is how much of stubs' array the Sets sharing it have filled: Extend appends in
	// place to the Set that filled it last, and copies it for any other.
	filled *atomic.Int64
	idx    index
	// tail are the indexes of the stubs Extend appended after those idx files, each of the
	// stubs after the one before (nil for a Set compiled whole).
	tail     []*index
	binary   bool
	injector Injector
	scripted bool
	// readsBody is set when a predicate may read the request's body (see ReadsBody).
	readsBody bool
	// noScan turns off reading JSON bodies by scanning their text (scanSelect, scanFields):
	// every body is parsed. referenceOnly turns the whole speed layer off: no index, and the
	// reference evaluates every predicate. Tests compare the layers on copies of a Set.
	noScan, referenceOnly bool
}

// Scripted reports whether a predicate of s is an inject: a script may then have kept a
// request's strings.
func (s *Set) Scripted() bool { return s.scripted }

// ReadsBody reports whether a predicate of s may read the request's body, or its form (made
// from the body): one that names the field body or form in any case, an inject, one with a
// jsonpath or xpath selector (predicates.js applies it to every field of the request, the
// body's included), and any predicate whose expected value is not an object or that names no
// operator, which the reference alone evaluates. When it is false, no request's body changes
// what Find and Match answer, and the server may read a body past without keeping it.
func (s *Set) ReadsBody() bool { return s.readsBody }

// Shares reports whether s and o hold the same compiled predicates (one is the other
// WithInjector), not only alike ones.
func (s *Set) Shares(o *Set) bool {
	return len(s.stubs) > 0 && len(s.stubs) == len(o.stubs) && &s.stubs[0] == &o.stubs[0]
}

// WithInjector returns s with inj running its inject predicates (s is left as it is): the
// compiled predicates are shared.
func (s *Set) WithInjector(inj Injector) *Set {
	c := *s
	c.injector = inj
	return &c
}

// Len is the number of stubs in s.
func (s *Set) Len() int { return len(s.stubs) }

// Find returns the index of the first stub whose predicates all match r (a
// stub with no predicates matches everything), or -1. An error is what
// Mountebank would raise evaluating the predicates (its imposter answers 500).
func (s *Set) Find(r *request.Request) (int, error) {
	if len(s.stubs) > 0 && len(s.stubs[0]) == 0 {
		// The first stub has no predicates: it takes every request (a proxy's catch-all stub,
		// which proxyAlways records after). The index's lookups of the path and the method
		// were ~600 instructions a proxied request.
		return 0, nil
	}
	if r.BodyMissing || s.referenceOnly || r.Object != nil {
		// deepEquals throws on such a request before looking at any field,
		// so no stub may be skipped. A custom protocol's request has none of the fields
		// the index and the fast nodes read: the reference evaluates it.
		c := acquireCtx(s, r)
		defer releaseCtx(c)
		return s.scan(c, 0)
	}
	// The index takes an evaluation context only when a stub needs one (a settled stub,
	// decided by its path and method, does not).
	var c *evalCtx
	i, err := s.idx.find(s, &c, r)
	for k := 0; i < 0 && err == nil && k < len(s.tail); k++ {
		// Every stub of a level comes after those of the levels before it.
		i, err = s.tail[k].find(s, &c, r)
	}
	if c != nil {
		releaseCtx(c) // not deferred: a context lost to a panic is the collector's
	}
	return i, err
}

func (s *Set) scan(c *evalCtx, from int) (int, error) {
	return s.scanTo(c, from, len(s.stubs))
}

// scanTo is scan of the stubs from to to-1.
func (s *Set) scanTo(c *evalCtx, from, to int) (int, error) {
	for i := from; i < to; i++ {
		ok, err := c.stub(s.stubs[i])
		if err != nil {
			return -1, err
		}
		if ok {
			return i, nil
		}
	}
	return -1, nil
}

// Match reports whether stub i matches r.
func (s *Set) Match(i int, r *request.Request) (bool, error) {
	if i < 0 || i >= len(s.stubs) {
		return false, nil
	}
	c := acquireCtx(s, r)
	defer releaseCtx(c)
	return c.stub(s.stubs[i])
}

// Compile compiles stubs[i] = the "predicates" array of stub i, as plain
// decoded JSON (nil, bool, float64, string, []any, map[string]any). It
// returns the errors Mountebank's dry-run validation returns for those
// predicates (an *Error, or Errors when several stubs are invalid); invalid
// regular expressions and RE2-unsupported constructs are always errors.
//
// Decoding into maps lost the order of the keys: a predicate naming several operators uses
// the first in predicates.js's order. CompileValues keeps the configured order.
func Compile(stubs [][]any, opts Options) (*Set, error) {
	return CompileValues(fromPlainStubs(stubs), opts)
}

// fromPlainStubs returns the predicates of stubs, plain decoded JSON, as configured values.
func fromPlainStubs(stubs [][]any) []config.Value {
	ordered := make([]config.Value, len(stubs))
	for i, preds := range stubs {
		list := make([]any, len(preds))
		for j, p := range preds {
			list[j] = fromPlain(p)
		}
		ordered[i] = list
	}
	return ordered
}

// CompileValues is Compile for the predicates as configured: stubs[i] is the "predicates"
// array of stub i (null, "", 0 or false: no predicates; another value that is not an array is
// the TypeError Mountebank's dry run throws), whose keys keep their order.
func CompileValues(stubs []config.Value, opts Options) (*Set, error) {
	return CompileReusing(stubs, nil, nil, opts)
}

// CompileReusing is CompileValues where the stubs i with reuse[i] >= 0 have the predicates of
// stub reuse[i] of prev, compiled with the same options, which they share (stubs[i] is not
// read): a change to a large imposter compiles only the stubs it adds.
func CompileReusing(stubs []config.Value, prev *Set, reuse []int, opts Options) (*Set, error) {
	cc := getCompiler(opts.Binary)
	defer cc.release()
	s := &Set{stubs: make([][]*pred, len(stubs)), binary: opts.Binary, injector: opts.Injector}
	sc := stubCompiler{cc: cc, opts: opts}
	for i, v := range stubs {
		if prev != nil && i < len(reuse) && reuse[i] >= 0 {
			s.stubs[i] = prev.stubs[reuse[i]]
			cc.scripted = cc.scripted || prev.scripted // whichever stub it was
			continue
		}
		s.stubs[i] = sc.stub(i, v)
	}
	if err := sc.result(); err != nil {
		return nil, err
	}
	s.idx = buildIndex(s.stubs, 0, len(s.stubs))
	s.scripted = cc.scripted
	s.readsBody = opts.Binary || readBody(s.stubs)
	return s, nil
}

// readBody reports whether a predicate of stubs may read the request's body (see ReadsBody).
func readBody(stubs [][]*pred) bool {
	return slices.ContainsFunc(stubs, func(ps []*pred) bool { return slices.ContainsFunc(ps, (*pred).readsBody) })
}

// Extend returns prev with stubs appended after its own (stubs[i] is the "predicates" array of
// stub prev.Len()+i, as CompileValues reads it), compiled with the options prev was compiled
// with: what CompileReusing returns for prev's stubs, all reused, and stubs, in a time that
// does not grow with prev's stubs. prev is left as it is.
//
// A proxy with mode proxyAlways appends a stub for every new request it records: rebuilding
// the index of all stubs for each one made recording quadratic (a new key took 68 ms at
// 15,000 stubs). The new stubs are filed in an index of their own, after prev's, which absorbs
// the indexes before it that are no larger than itself (a binary counter): a stub is filed
// again each time its index at least doubles, O(log n) times, and Find looks in O(log n)
// indexes for a request that none before matches.
func Extend(prev *Set, stubs []config.Value, opts Options) (*Set, error) {
	if len(stubs) == 0 {
		return prev.WithInjector(opts.Injector), nil
	}
	n0 := len(prev.stubs)
	cc := getCompiler(opts.Binary)
	defer cc.release()
	sc := stubCompiler{cc: cc, opts: opts}
	added := make([][]*pred, len(stubs))
	for i, v := range stubs {
		added[i] = sc.stub(n0+i, v)
	}
	if err := sc.result(); err != nil {
		return nil, err
	}
	s := *prev
	s.injector = opts.Injector
	s.stubs, s.filled = prev.appendStubs(added)
	s.scripted = prev.scripted || cc.scripted
	s.readsBody = prev.readsBody || readBody(added)
	s.fileAppended(n0)
	return &s, nil
}

// appendStubs returns s's stubs with added after them, in s's array when it has room and no
// other Set has filled it past s's stubs (a Set sees only its own length of it), else in a new
// one twice as long, and the count of the array filled.
func (s *Set) appendStubs(added [][]*pred) ([][]*pred, *atomic.Int64) {
	n0, n := len(s.stubs), len(s.stubs)+len(added)
	if s.filled != nil && n <= cap(s.stubs) && s.filled.CompareAndSwap(int64(n0), int64(n)) {
		return append(s.stubs, added...), s.filled
	}
	out := make([][]*pred, n, 2*n)
	copy(out, s.stubs)
	copy(out[n0:], added)
	filled := new(atomic.Int64)
	filled.Store(int64(n))
	return out, filled
}

// levelsFrom is how many stubs a Set has before Extend files the stubs it appends in indexes
// of their own: below, the one index is built again, which costs little, and Find looks in
// one. From 256, a proxyAlways recording's new keys cost 2.4 times as much up to there (145 us
// against 60 us, 52 KB against 11 KB a key). (Tests lower it.)
var levelsFrom = 32

// fileAppended files the stubs from n0 on (those Extend appended) in s's indexes.
func (s *Set) fileAppended(n0 int) {
	n := len(s.stubs)
	if n0 < levelsFrom {
		s.idx, s.tail = buildIndex(s.stubs, 0, n), nil
		return
	}
	tail := s.tail // prev's: never changed in place
	lo := n0
	for len(tail) > 0 && int(tail[len(tail)-1].hi-tail[len(tail)-1].lo) <= n-lo {
		lo = int(tail[len(tail)-1].lo)
		tail = tail[:len(tail)-1]
	}
	if len(tail) == 0 && int(s.idx.hi) <= n-lo {
		s.idx, s.tail = buildIndex(s.stubs, 0, n), nil
		return
	}
	x := buildIndex(s.stubs, lo, n)
	s.tail = append(slices.Clip(tail), &x)
}

// stubCompiler compiles stubs' predicates one at a time, keeping their errors.
type stubCompiler struct {
	cc   *compiler
	opts Options
	// One dry run for all stubs: its request is normalized once per set of parameters. Both
	// are made on the first stub that needs one (most stubs of plain strings never do).
	dry    *evaluator
	dryReq *config.Object
	errs   Errors
}

// stub compiles v, the predicates of stub i, keeping its error.
func (sc *stubCompiler) stub(i int, v config.Value) []*pred {
	cc := sc.cc
	preds, isList := v.([]any)
	if !isList && jsvalue.Truthy(v) {
		// Mountebank's dry run maps over the stub's predicates (`stub.predicates || []`):
		// any other value throws a TypeError, which its API shows as the stub alone.
		e := typeError("stubPredicates.map is not a function")
		e.Stub = i
		sc.errs = append(sc.errs, e)
		return nil
	}
	cc.err = nil
	ps := make([]*pred, len(preds))
	for j, p := range preds {
		ps[j] = cc.pred(p)
	}
	err := cc.err
	if err == nil {
		if !cannotRaise(ps) {
			if sc.dry == nil {
				sc.dry, sc.dryReq = &evaluator{binary: sc.opts.Binary}, dryRunRequest(sc.opts.TCP)
			}
			err = dryRun(sc.dry, sc.dryReq, preds)
		}
	}
	if err != nil {
		e := *err
		e.Stub = i
		sc.errs = append(sc.errs, &e)
	}
	return ps
}

// result returns the errors of the stubs compiled, in the order Mountebank lists them.
func (sc *stubCompiler) result() error {
	errs := sc.errs
	for i, j := 0, len(errs)-1; i < j; i, j = i+1, j-1 {
		errs[i], errs[j] = errs[j], errs[i]
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	default:
		return errs
	}
}

// cannotRaise reports whether predicates are all equals or deepEquals of strings on the
// request's string fields (method, path…) through a plain pipe: no request makes those raise an
// error, so their dry run is skipped (it allocated ten times what the stub keeps, 100,000 times
// for as many plain stubs).
func cannotRaise(ps []*pred) bool {
	for _, p := range ps {
		if (p.op != opEquals && p.op != opDeepEquals) || p.pp == nil || !p.pp.simple || p.exp == nil || p.exists ||
			!p.exp.stringsOnStringFields() {
			return false
		}
	}
	return true
}

// dryRun evaluates every predicate of a stub against Mountebank's test request, as
// dryRunValidator.js does (every one, not stopping at the first that fails), and returns the
// first error.
func dryRun(ev *evaluator, req *config.Object, preds []any) *Error {
	for _, p := range preds {
		if res := ev.evaluate(p, req); res.Err != nil {
			if e, ok := res.Err.(*Error); ok {
				return e
			}
			return typeError(res.Err.Error())
		}
	}
	return nil
}
