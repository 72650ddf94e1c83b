package match

import (
	"encoding/json"
	"errors"
	"math/rand"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestExtendAgreesWithCompile: a Set grown by Extend, a few stubs at a time (filed in levels
// from its first stubs on), finds for every request the stub the Set of the same stubs compiled
// whole finds, as the plain scan and the reference do; its levels file every stub once, in
// order; and a Set extended twice (the second time from the same Set) leaves the first
// extension as it was.
func TestExtendAgreesWithCompile(t *testing.T) {
	plainOnly(t)
	defer func(n int) { levelsFrom = n }(levelsFrom)
	rng := rand.New(rand.NewSource(37))
	multiLevel, branched := 0, 0
	for round := 0; round < 400; round++ {
		levelsFrom = rng.Intn(4)
		stubs := randomStubs(rng, 2+rng.Intn(60))
		k := 1 + rng.Intn(len(stubs)/2+1)
		s, err := Compile(stubs[:k], Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k < len(stubs) {
			m := min(1+rng.Intn(3), len(stubs)-k)
			next, err := Extend(s, fromPlainStubs(stubs[k:k+m]), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rng.Intn(5) == 0 {
				// Extended again from s: next's stubs must stay next's.
				other := randomStubs(rng, 1+rng.Intn(3))
				if _, err := Extend(s, fromPlainStubs(other), Options{}); err != nil {
					t.Fatal(err)
				}
				branched++
			}
			s, k = next, k+m
		}
		whole, err := Compile(stubs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != len(stubs) {
			t.Fatalf("Len() = %d, want %d", s.Len(), len(stubs))
		}
		for i := range stubs {
			if len(s.stubs[i]) != len(whole.stubs[i]) {
				t.Fatalf("stub %d has %d predicates, compiled whole %d", i, len(s.stubs[i]), len(whole.stubs[i]))
			}
		}
		// The levels: idx files the stubs from 0, each level those from the end of the one
		// before, the last up to the end, at most about log2(n) of them.
		end := s.idx.hi
		if s.idx.lo != 0 {
			t.Fatalf("the first index files stubs from %d", s.idx.lo)
		}
		for _, x := range s.tail {
			if x.lo != end || x.hi <= x.lo {
				t.Fatalf("a level files stubs %d to %d after one ending at %d", x.lo, x.hi, end)
			}
			end = x.hi
		}
		if int(end) != len(stubs) || len(s.tail) > 8 {
			t.Fatalf("levels end at %d of %d stubs, %d levels", end, len(stubs), len(s.tail))
		}
		if len(s.tail) > 1 {
			multiLevel++
		}
		if s.ReadsBody() != whole.ReadsBody() || s.Scripted() != whole.Scripted() {
			t.Fatalf("ReadsBody %t, Scripted %t; compiled whole %t, %t", s.ReadsBody(), s.Scripted(), whole.ReadsBody(), whole.Scripted())
		}
		for range 30 {
			r := randomRequest(rng)
			got, gerr := s.Find(r)
			want, werr := whole.Find(r)
			scan, serr := scanParsed(whole, r)
			ref, rerr := plainFind(s, r)
			if !sameAnswer(got, gerr, want, werr) || !sameAnswer(got, gerr, scan, serr) || !sameAnswer(got, gerr, ref, rerr) {
				b, _ := json.Marshal(stubs)
				t.Fatalf("Find(%s %s) extended = %d, %v; compiled whole = %d, %v; scan = %d, %v; reference = %d, %v\nstubs %s",
					r.Method, r.Path, got, gerr, want, werr, scan, serr, ref, rerr, b)
			}
		}
	}
	if multiLevel < 50 || branched < 50 {
		t.Errorf("only %d Sets with several levels, %d extended twice", multiLevel, branched)
	}
}

// TestExtendErrors: a stub Extend refuses is named by its index in the whole Set, as
// CompileValues names it.
func TestExtendErrors(t *testing.T) {
	good := fromPlainStubs([][]any{{map[string]any{"equals": map[string]any{"path": "/a"}}}, {}})
	bad := fromPlainStubs([][]any{{}, {map[string]any{"matches": map[string]any{"path": "(("}}}})
	prev, err := CompileValues(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, got := Extend(prev, bad, Options{})
	_, want := CompileValues(append(append([]config.Value(nil), good...), bad...), Options{})
	var ge, we *Error
	if !errors.As(got, &ge) || !errors.As(want, &we) {
		t.Fatalf("Extend: %v; CompileValues: %v", got, want)
	}
	if ge.Stub != 3 || *ge != *we {
		t.Fatalf("Extend: %+v; CompileValues: %+v", ge, we)
	}
	if prev.Len() != 2 {
		t.Fatalf("prev has %d stubs after a refused Extend", prev.Len())
	}
}
