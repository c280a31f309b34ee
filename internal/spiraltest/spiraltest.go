// Package spiraltest holds what the module's tests share: the exact
// reference of SPIRAL's credit in rational arithmetic, the switch for long
// tests, and the default seed of the property tests.
package spiraltest

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"math"
	"math/big"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// RefResult is SPIRAL's credit of one problem, exactly.
type RefResult struct {
	// SetScores[i] is f_i, the mean of set i's scored rewards; 0 for a set
	// with no scored output.
	SetScores []*big.Rat
	// SetAdvantages[i] is f_i - fbar, fbar the mean of f over the scored
	// sets; 0 for a set with no scored output.
	SetAdvantages []*big.Rat
	// Search[y] is the mean of A_set over the scored sets holding trace y,
	// 0 if there are none.
	Search []*big.Rat
	// Appearances[y] is the number of scored sets holding trace y.
	Appearances []int
	// Aggregation[i][j] is r_ij - f_i; 0 for an unscorable output.
	Aggregation [][]*big.Rat
	// ScoredOutputs[i] is the number of scored outputs of set i.
	ScoredOutputs []int
	// ScoredSets is the number of sets with a scored output.
	ScoredSets int
}

// RefCredit computes SPIRAL's credit (docs/method.md#the-credit-signals)
// for one problem with traces search traces, sets[i] the trace indices of
// set i and rewards[i] its rewards, as plainly as possible and exactly.
// unscorable, if not nil, has the shape of rewards and marks the outputs
// left out: they are in no set score and no baseline and get A_agg = 0,
// and a set with no scored output is left out of fbar and of every G(y).
// It trusts its input (each sets[i] within [0, traces), the shapes
// matching) and does not check for identical sets.
func RefCredit(traces int, sets [][]int, rewards [][]*big.Rat, unscorable [][]bool) RefResult {
	k := len(sets)
	res := RefResult{
		SetScores:     make([]*big.Rat, k),
		SetAdvantages: make([]*big.Rat, k),
		Search:        make([]*big.Rat, traces),
		Appearances:   make([]int, traces),
		Aggregation:   make([][]*big.Rat, k),
		ScoredOutputs: make([]int, k),
	}
	scored := func(i, j int) bool { return unscorable == nil || !unscorable[i][j] }
	fsum := new(big.Rat)
	for i, rs := range rewards {
		f := new(big.Rat)
		for j, r := range rs {
			if scored(i, j) {
				f.Add(f, r)
				res.ScoredOutputs[i]++
			}
		}
		if n := res.ScoredOutputs[i]; n > 0 {
			f.Quo(f, big.NewRat(int64(n), 1))
			fsum.Add(fsum, f)
			res.ScoredSets++
		}
		res.SetScores[i] = f
	}
	fbar := new(big.Rat)
	if res.ScoredSets > 0 {
		fbar.Quo(fsum, big.NewRat(int64(res.ScoredSets), 1))
	}
	for i := range k {
		res.SetAdvantages[i] = new(big.Rat)
		if res.ScoredOutputs[i] > 0 {
			res.SetAdvantages[i].Sub(res.SetScores[i], fbar)
		}
		for j, r := range rewards[i] {
			a := new(big.Rat)
			if scored(i, j) {
				a.Sub(r, res.SetScores[i])
			}
			res.Aggregation[i] = append(res.Aggregation[i], a)
		}
	}
	for y := range traces {
		s := new(big.Rat)
		for i, g := range sets {
			if res.ScoredOutputs[i] == 0 {
				continue
			}
			for _, m := range g {
				if m == y {
					s.Add(s, res.SetAdvantages[i])
					res.Appearances[y]++
				}
			}
		}
		if c := res.Appearances[y]; c > 0 {
			s.Quo(s, big.NewRat(int64(c), 1))
		}
		res.Search[y] = s
	}
	return res
}

// Rats returns rewards as exact rationals. Every value must be finite.
func Rats(rewards [][]float64) [][]*big.Rat {
	out := make([][]*big.Rat, len(rewards))
	for i, rs := range rewards {
		for _, r := range rs {
			out[i] = append(out[i], new(big.Rat).SetFloat64(r))
		}
	}
	return out
}

// Float returns the float64 nearest x.
func Float(x *big.Rat) float64 {
	f, _ := x.Float64()
	return f
}

// Long reports whether the long tests run: SPIRAL_LONG=1 in the
// environment, the module's one switch for them.
func Long() bool { return os.Getenv("SPIRAL_LONG") == "1" }

// SkipUnlessLong skips tb unless the long tests run.
func SkipUnlessLong(tb testing.TB) {
	tb.Helper()
	if !Long() {
		tb.Skip("long test: set SPIRAL_LONG=1 to run it")
	}
}

// Seed is the seed of the property tests when a run sets none.
const Seed = 20260603

// Main runs a package's tests, as its TestMain, with rapid's seed fixed to
// Seed unless the run sets one (-rapid.seed or RAPID_SEED), so that the
// property tests are deterministic. Unless the run benchmarks (-test.bench)
// or sets GOGC, the collector runs at a heap GCPercent times larger than
// the last live heap, not the default 100: the exact references allocate
// many short-lived big.Rat values, and the collections cost a tenth of the
// tests' CPU time at the default. Benchmarks keep the default, as a
// trainer's program would.
func Main(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" && os.Getenv("RAPID_SEED") == "" {
		if err := f.Value.Set(strconv.Itoa(Seed)); err != nil {
			panic(err)
		}
	}
	if f := flag.Lookup("test.bench"); (f == nil || f.Value.String() == "") && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	os.Exit(m.Run())
}

// Check runs prop as rapid.Check does, with short test cases by default
// and long under SPIRAL_LONG=1, for properties whose cases are costly
// (exact references); a -rapid.checks flag on the command line overrides
// both. It sets the flag for the call, so the tests that call it must not
// run in parallel.
func Check(t *testing.T, short, long int, prop func(*rapid.T)) {
	t.Helper()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		n := short
		if Long() {
			n = long
		}
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		if err := f.Value.Set(strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set(old)
	}
	rapid.Check(t, prop)
}

// GCPercent is the collector's target (runtime/debug.SetGCPercent) while
// Main runs tests.
const GCPercent = 400

// Allocated returns the bytes f allocates: the least over three calls,
// since the count is process-wide and other goroutines (the runtime's, the
// test framework's) may allocate meanwhile. Tests of bounded cost use it to
// check that a refused size allocates nothing large.
func Allocated(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// ReadJSONGz decodes the gzip-compressed JSON file at path into v, failing
// the test on any error: the trainers' recorded vectors are stored so.
func ReadJSONGz(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
