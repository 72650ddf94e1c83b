package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRandomCompat plays generated cases (randgen_test.go) on Mountebank and mockd and fails
// on any difference, as TestCompat does for the written scenarios.
//
//	go test ./test/compat -run TestRandomCompat                               # seeds 1-40
//	MOCKD_COMPAT_RANDOM=2000 go test ./test/compat -run TestRandomCompat       # seeds 1-2000
//	MOCKD_COMPAT_RANDOM=500 MOCKD_COMPAT_RANDOM_FROM=2001 go test ...          # seeds 2001-2500
//	MOCKD_COMPAT_RANDOM_SEED=1234 go test ./test/compat -run TestRandomCompat  # one case
//
// A case that differs is written as a scenario file (MOCKD_COMPAT_RANDOM_OUT, default
// $TMPDIR/mockd-compat-random/random-SEED.json) that can go into scenarios/ as it is.
func TestRandomCompat(t *testing.T) {
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if suite.setup != nil {
		t.Fatal(suite.setup)
	}
	if suite.record {
		t.Skip("recording: the random cases have no golden files")
	}
	from, count := uint64(1), uint64(40)
	if s := os.Getenv("MOCKD_COMPAT_RANDOM"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MOCKD_COMPAT_RANDOM=%q: %v", s, err)
		}
		count = n
	}
	if s := os.Getenv("MOCKD_COMPAT_RANDOM_FROM"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MOCKD_COMPAT_RANDOM_FROM=%q: %v", s, err)
		}
		from = n
	}
	if s := os.Getenv("MOCKD_COMPAT_RANDOM_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MOCKD_COMPAT_RANDOM_SEED=%q: %v", s, err)
		}
		from, count = n, 1
	}
	outDir := os.Getenv("MOCKD_COMPAT_RANDOM_OUT")
	if outDir == "" {
		outDir = filepath.Join(os.TempDir(), "mockd-compat-random")
	}
	for seed := from; seed < from+count; seed++ {
		sc := randomScenario(seed)
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			differences := playRandom(t, sc)
			if len(differences) == 0 {
				return
			}
			file := filepath.Join(outDir, sc.Name+".json")
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, scenarioJSON(sc), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Errorf("seed %d differs (replay: MOCKD_COMPAT_RANDOM_SEED=%d; the case as a scenario: %s)", seed, seed, file)
			for _, d := range differences {
				t.Error(d)
			}
		})
	}
}

// playRandom plays one generated case on both engines and returns the differences. A case
// that Mountebank refuses or crashes on is still compared: a crash fails the case.
func playRandom(t *testing.T, sc scenario) []string {
	t.Helper()
	file := fmt.Sprintf("random seed %s", sc.Name)
	mb, err := suite.servers.get("mb", sc.Flags, sc.flagKey())
	if err != nil {
		t.Fatal(err)
	}
	mbEx, mbCtx := play(t, file, sc, mb)
	if t.Failed() || suite.mbOnly {
		return nil
	}
	mockd, err := suite.servers.get("mockd", sc.Flags, sc.flagKey())
	if err != nil {
		t.Fatal(err)
	}
	mockdEx, mockdCtx := play(t, file, sc, mockd)
	return compareRuns(t, file, sc, mbEx, mbCtx, mockdEx, mockdCtx)
}

// TestRandomScenariosAreStable checks the generator itself: a seed always gives the same
// case, and every case reads back as a scenario file.
func TestRandomScenariosAreStable(t *testing.T) {
	dir := t.TempDir()
	for seed := uint64(1); seed <= 300; seed++ {
		a, b := scenarioJSON(randomScenario(seed)), scenarioJSON(randomScenario(seed))
		if string(a) != string(b) {
			t.Fatalf("seed %d gives two different cases:\n%s\n%s", seed, a, b)
		}
		file := filepath.Join(dir, fmt.Sprintf("random-%d.json", seed))
		if err := os.WriteFile(file, a, 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := loadScenario(file)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, a)
		}
		if got := scenarioJSON(sc); string(got) != string(a) {
			t.Fatalf("seed %d does not read back as itself:\n%s\n%s", seed, a, got)
		}
	}
}
