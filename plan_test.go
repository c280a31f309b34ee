package spiral

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/stat/distuv"
	"pgregory.net/rapid"

	"spiral/combin"
	"spiral/lengthgate"
)

// TestPlanGolden pins the plans that seed (2026, 1) gives. They were recorded
// once from this code and must never change: they pin the cross-machine
// determinism of math/rand/v2's PCG and of every draw made from it (combin's
// Sampler, then the Fisher-Yates shuffles of Shuffled). Computing a plan
// twice in one run could not catch a change of algorithm, machine or Go
// release; this expectation does. If it fails, plans recorded by earlier
// runs (and conformance vectors) are no longer reproducible.
func TestPlanGolden(t *testing.T) {
	shuffled := Paper()
	shuffled.Order = combin.Shuffled
	tuples := Paper()
	tuples.Ordered = true
	tests := []struct {
		c    Config
		want [][]int
	}{
		{Paper(), [][]int{{0, 1, 2, 5}, {2, 3, 4, 7}, {1, 2, 5, 7}, {0, 1, 4, 7}}},
		// The same subsets as Paper(): the shuffles are drawn after them.
		{shuffled, [][]int{{1, 0, 5, 2}, {7, 4, 3, 2}, {5, 1, 2, 7}, {7, 0, 4, 1}}},
		{tuples, [][]int{{0, 3, 2, 5}, {5, 3, 4, 2}, {1, 6, 4, 7}, {3, 4, 5, 0}}},
		// A family too large to list: combin's rejection method.
		{Config{SearchTraces: 1024, SetSize: 16, Sets: 3, AggregationsPerSet: 1}, [][]int{
			{41, 52, 138, 264, 267, 287, 320, 445, 786, 807, 876, 894, 950, 957, 978, 995},
			{55, 71, 121, 232, 282, 365, 511, 602, 639, 729, 806, 866, 873, 899, 918, 976},
			{11, 44, 160, 167, 348, 364, 513, 703, 712, 803, 827, 847, 874, 957, 984, 1004},
		}},
	}
	for _, tt := range tests {
		p, err := tt.c.Plan(2026, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, p.Sets); diff != "" {
			t.Errorf("%+v: plan for seed 2026, step 1, key 0 changed (-want +got):\n%s", tt.c, diff)
		}
	}
}

// randomConfig draws a small valid Config: every family, order and gate.
func randomConfig(t *rapid.T) Config {
	// Mostly small N1; sometimes above 64, where plan checks cannot use a
	// bit mask per group.
	n1 := rapid.OneOf(rapid.IntRange(1, 9), rapid.IntRange(1, 9), rapid.IntRange(1, 9), rapid.IntRange(63, 70)).Draw(t, "N1")
	n := rapid.IntRange(1, n1).Draw(t, "n")
	c := Config{SearchTraces: n1, SetSize: n, Ordered: rapid.Bool().Draw(t, "ordered")}
	if !c.Ordered {
		c.Order = combin.Order(rapid.IntRange(0, 1).Draw(t, "order"))
		c.Design = combin.Design(rapid.IntRange(0, 1).Draw(t, "design"))
	}
	size, _ := combin.NewFamily(n1, n, c.Ordered)
	maxK := 24
	if t64, fits := size.Count64(); fits {
		maxK = int(min(t64, 24))
	}
	c.Sets = rapid.IntRange(1, maxK).Draw(t, "K")
	c.AggregationsPerSet = rapid.IntRange(1, 5).Draw(t, "N2")
	c.Gates.Search.Target = rapid.IntRange(0, 12).Draw(t, "searchTarget")
	c.Gates.Search.Boundary = lengthgate.Boundary(rapid.IntRange(0, 1).Draw(t, "searchBoundary"))
	c.Gates.Aggregation.Target = rapid.IntRange(0, 12).Draw(t, "aggTarget")
	c.Gates.Aggregation.Boundary = lengthgate.Boundary(rapid.IntRange(0, 1).Draw(t, "aggBoundary"))
	if err := c.Validate(); err != nil {
		t.Fatalf("randomConfig drew an invalid config: %v", err)
	}
	return c
}

func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		seed := rapid.Uint64().Draw(t, "seed")
		p, err := c.Plan(seed, 0, 7)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckPlan(p); err != nil {
			t.Fatalf("a drawn plan does not fit its config: %v", err)
		}
		// JSON round trip.
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Plan
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(p, back) || c.CheckPlan(back) != nil {
			t.Fatalf("JSON round trip: %s gave %v", data, back)
		}
		// Same seed, same plan; the Planner and PlanTo draw the same.
		pl, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		again, err := pl.Plan(seed, 0, 7)
		if err != nil || !cmp.Equal(p, again) {
			t.Fatalf("Planner.Plan with the same seed: %v, %v; want %v", again, err, p)
		}
		// PlanTo draws, for each key, the plan Plan draws for it alone.
		ks := rapid.SliceOfN(rapid.Uint64(), 0, 4).Draw(t, "keys")
		var in Plans
		if err := pl.PlanTo(&in, seed, 1, ks); err != nil {
			t.Fatal(err)
		}
		var seq []int
		for _, key := range ks {
			one, err := c.Plan(seed, 1, key)
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, slices.Concat(one.Sets...)...)
		}
		if in.Problems() != len(ks) || !slices.Equal(in.AppendMembers(nil), seq) && len(seq) > 0 {
			t.Fatalf("PlanTo = %v, Plans key by key = %v", in.AppendMembers(nil), seq)
		}
	})
}

// TestCheckPlanRejects plants each kind of defect in turn in a valid plan
// and checks that CheckPlan reports it as a *combin.SetError naming the set.
func TestCheckPlanRejects(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		p, err := c.Plan(rapid.Uint64().Draw(t, "seed"), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		k, n := c.Sets, c.SetSize
		for defect := range 3 {
			bad := Plan{Sets: make([][]int, k)}
			for i, g := range p.Sets {
				bad.Sets[i] = slices.Clone(g)
			}
			i := rapid.IntRange(0, k-1).Draw(t, "set")
			g := bad.Sets[i]
			var want combin.SetErrorReason
			switch {
			case defect == 0:
				g[rapid.IntRange(0, n-1).Draw(t, "pos")] = c.SearchTraces + rapid.IntRange(0, 3).Draw(t, "over")
				want = combin.OutOfRange
			case defect == 1 && n >= 2:
				j := rapid.IntRange(1, n-1).Draw(t, "pos")
				g[j] = g[j-1]
				want = combin.Repeated
			case defect == 2 && k >= 2:
				// A copy of another set: the same subset in any order
				// (reversed), the same tuple as it is.
				i0 := (i + 1 + rapid.IntRange(0, k-2).Draw(t, "other")) % k
				copy(g, p.Sets[i0])
				if !c.Ordered {
					slices.Reverse(g)
				}
				want = combin.Duplicate
			default:
				continue
			}
			err := c.CheckPlan(bad)
			e, eok := errors.AsType[*InputError](err)
			se, ok := errors.AsType[*combin.SetError](err)
			if !ok || !eok || se.Reason != want || (e.Set != i && (want != combin.Duplicate || se.Other != i)) {
				t.Fatalf("CheckPlan(%v) = %v, want a *combin.SetError %v naming set %d", bad.Sets, err, want, i)
			}
		}
	})
}

func TestCheckPlanErrors(t *testing.T) {
	c := Paper()
	tup := c
	tup.Ordered = true
	tests := []struct {
		c    Config
		sets [][]int
		want string
	}{
		{c, nil, "spiral: Plan.Sets: 0 sets, want K = 4"},
		{c, [][]int{{0, 1, 2, 3}, {0, 1, 2, 4}, {0, 1, 2}, {0, 1, 2, 5}}, "spiral: Plan.Sets, set 2: 3 members, want n = 4"},
		{c, [][]int{{0, 1, 2, 3}, {0, 1, 2, 4}, {0, 1, 2, 8}, {0, 1, 2, 5}}, "spiral: Plan.Sets, set 2, member 3 = 8: out of range [0, 8)"},
		{c, [][]int{{0, 1, 2, 3}, {0, 1, 2, 4}, {0, 1, 1, 6}, {0, 1, 2, 5}}, "spiral: Plan.Sets, set 2, member 2 = 1: repeats member 1"},
		{c, [][]int{{0, 1, 2, 3}, {0, 1, 2, 4}, {3, 2, 1, 0}, {0, 1, 2, 5}}, "spiral: Plan.Sets, set 2: identical to set 0"},
		{tup, [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 1, 2, 3}, {0, 1, 2, 5}}, "spiral: Plan.Sets, set 2: identical to set 0"},
		{Config{}, nil, "spiral: Config.SearchTraces: 0 < 1"},
	}
	for _, tt := range tests {
		err := tt.c.CheckPlan(Plan{Sets: tt.sets})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckPlan(%v) = %v, want %q", tt.sets, err, tt.want)
		}
	}
	// Subsets in any order and reordered tuples are valid.
	if err := c.CheckPlan(Plan{Sets: [][]int{{3, 1, 2, 0}, {0, 1, 2, 4}, {7, 6, 5, 4}, {0, 1, 2, 5}}}); err != nil {
		t.Errorf("shuffled plan: %v", err)
	}
	if err := tup.CheckPlan(Plan{Sets: [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 0, 2, 3}, {0, 1, 3, 2}}}); err != nil {
		t.Errorf("tuple plan: %v", err)
	}
	// A plan decoded from JSON that does not fit its config.
	var p Plan
	if err := json.Unmarshal([]byte(`{"sets": [[0,1,2,3],[4,5,6,7],[0,2,4,6],[1,3,5,9]]}`), &p); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckPlan(p); err == nil || !strings.Contains(err.Error(), "set 3, member 3 = 9: out of range") {
		t.Errorf("decoded plan: %v", err)
	}
}

func TestPlanErrors(t *testing.T) {
	if _, err := (Config{}).Plan(1, 1, 1); err == nil {
		t.Error("Config{}.Plan: nil error")
	}
	pl, err := Paper().NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	if pl.Config() != Paper() {
		t.Errorf("Planner.Config() = %+v", pl.Config())
	}
	// A batch larger than combin.MaxSize members is refused before any
	// allocation, naming the argument and the bound. (The problems are a
	// slice of keys the caller holds, so 2^30, 2^40 or MaxInt/16 problems
	// cannot be asked for without that memory; the bound is checked on
	// the first size past it.)
	var in Plans
	if err := pl.PlanTo(&in, 1, 1, keys(2)); err != nil {
		t.Fatal(err)
	}
	ks := make([]uint64, combin.MaxSize/16+1)
	var err2 error
	allocs := testing.AllocsPerRun(1, func() { err2 = pl.PlanTo(&in, 1, 1, ks) })
	e, ok := errors.AsType[*InputError](err2)
	if !ok || e.Field != "keys" || e.Value != float64(len(ks)) || !strings.Contains(err2.Error(), "more than 16777216 members, the most a batch's plans hold") || in.Problems() != 2 || (allocs > 8 && !raceEnabled) {
		t.Errorf("PlanTo of %d problems: error %v, %d problems left, %v allocations; want an error naming keys and the bound, dst untouched", len(ks), err2, in.Problems(), allocs)
	}
}

func TestPlanToAllocs(t *testing.T) {
	pl, err := Paper().NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	var in Plans
	ks := keys(256)
	if a := testing.AllocsPerRun(20, func() { _ = pl.PlanTo(&in, 1, 2, ks) }); a != 0 {
		t.Errorf("PlanTo allocates %v times per call, want 0", a)
	}
}

// TestPlanSelection checks the plans against the paper's constants: at
// N1 = 8, n = 4, K = 4 a trace is in no set with probability
// C(35,4)/C(70,4) = 88/1541 and is in K*n/N1 = 2 sets on average. The
// tolerance is 5 standard errors of the sample mean over independent plans
// (trace 0 of each), at a fixed seed.
func TestPlanSelection(t *testing.T) {
	plans := 40000
	if testing.Short() {
		plans = 8000
	}
	pl, err := Paper().NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	var in Plans
	if err := pl.PlanTo(&in, 5, 6, keys(plans)); err != nil {
		t.Fatal(err)
	}
	flat := in.AppendMembers(nil)
	miss, sum, sumSq := 0.0, 0.0, 0.0
	for q := range plans {
		apps := 0
		for _, y := range flat[q*16 : (q+1)*16] {
			if y == 0 {
				apps++
			}
		}
		if apps == 0 {
			miss++
		}
		sum += float64(apps)
		sumSq += float64(apps * apps)
	}
	p := 88.0 / 1541
	gotMiss := miss / float64(plans)
	if se := math.Sqrt(p * (1 - p) / float64(plans)); math.Abs(gotMiss-p) > 5*se {
		t.Errorf("P(trace in no set) = %.5f, want 88/1541 = %.5f ± 5*%.5f", gotMiss, p, se)
	}
	mean := sum / float64(plans)
	sd := math.Sqrt(sumSq/float64(plans) - mean*mean)
	if se := sd / math.Sqrt(float64(plans)); math.Abs(mean-2) > 5*se {
		t.Errorf("mean appearances = %.4f, want K*n/N1 = 2 ± 5*%.4f", mean, se)
	}
}

// TestShuffledOrder checks by a chi-square test (threshold the quantile at
// 1 - 1e-6, fixed seed) that under Shuffled the smallest index of a group is
// at each of its n positions equally often, and that under IndexOrder it is
// always first.
func TestShuffledOrder(t *testing.T) {
	c := Paper()
	c.Order = combin.Shuffled
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	const plans = 5000
	var in Plans
	if err := pl.PlanTo(&in, 8, 9, keys(plans)); err != nil {
		t.Fatal(err)
	}
	flat := in.AppendMembers(nil)
	var pos [4]float64
	for g := 0; g < len(flat); g += 4 {
		pos[slices.Index(flat[g:g+4], slices.Min(flat[g:g+4]))]++
	}
	e := float64(plans*4) / 4
	chi := 0.0
	for _, o := range pos {
		chi += (o - e) * (o - e) / e
	}
	if lim := (distuv.ChiSquared{K: 3}).Quantile(1 - 1e-6); chi > lim {
		t.Errorf("position of the smallest index: counts %v, chi-square %.1f > %.1f", pos, chi, lim)
	}
	p, err := Paper().Plan(8, 9, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range p.Sets {
		if !slices.IsSorted(g) {
			t.Errorf("IndexOrder set %v not ascending", g)
		}
	}
}

// TestBalancedPlans checks that the Balanced design's plans are valid,
// distinct, balanced, in the configured order, and reproducible.
func TestBalancedPlans(t *testing.T) {
	for _, order := range []combin.Order{combin.IndexOrder, combin.Shuffled} {
		c := Paper()
		c.Design = combin.Balanced
		c.Order = order
		p, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		const problems = 500
		var in Plans
		if err := p.PlanTo(&in, 2026, 10, keys(problems)); err != nil {
			t.Fatal(err)
		}
		flat := in.AppendMembers(nil)
		fam, err := c.validFamily()
		if err != nil {
			t.Fatal(err)
		}
		var sc setScratch
		for q := range problems {
			one := flat[q*c.PlanSize() : (q+1)*c.PlanSize()]
			if err := c.checkSets(fam, one, &sc); err != nil {
				t.Fatalf("%v: problem %d: %v", order, q, err)
			}
			var counts [8]int
			for _, y := range one {
				counts[y]++
			}
			if counts != [8]int{2, 2, 2, 2, 2, 2, 2, 2} {
				t.Fatalf("%v: problem %d: appearances %v, want every trace twice", order, q, counts)
			}
		}
		var again Plans
		if err := p.PlanTo(&again, 2026, 10, keys(problems)); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(flat, again.AppendMembers(nil)) {
			t.Fatalf("%v: the same seed gave different plans", order)
		}
	}
}

// TestCheckPlanBalance checks that a plan that is valid for the Uniform
// design but not balanced is rejected under the Balanced design, naming the
// trace.
func TestCheckPlanBalance(t *testing.T) {
	c := Paper()
	plan := Plan{Sets: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}, {0, 2, 4, 6}}}
	if err := c.CheckPlan(plan); err != nil {
		t.Fatalf("uniform: CheckPlan = %v, want nil", err)
	}
	c.Design = combin.Balanced
	err := c.CheckPlan(plan)
	if err == nil || !strings.Contains(err.Error(), "trace 0 is in 3 sets, want 2") {
		t.Fatalf("balanced: CheckPlan = %v, want an error naming trace 0", err)
	}
	ok := Plan{Sets: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}}
	if err := c.CheckPlan(ok); err != nil {
		t.Fatalf("balanced: CheckPlan(balanced plan) = %v, want nil", err)
	}
	// N1 = 5, K*n = 6: every trace once or twice.
	c = Config{SearchTraces: 5, SetSize: 2, Sets: 3, AggregationsPerSet: 1, Design: combin.Balanced}
	if err := c.CheckPlan(Plan{Sets: [][]int{{0, 1}, {2, 3}, {0, 4}}}); err != nil {
		t.Fatalf("N1 = 5: CheckPlan = %v, want nil", err)
	}
	err = c.CheckPlan(Plan{Sets: [][]int{{0, 1}, {0, 2}, {0, 3}}})
	if err == nil || !strings.Contains(err.Error(), "trace 0 is in 3 sets, want 1 or 2") {
		t.Fatalf("N1 = 5: CheckPlan = %v, want an error naming trace 0", err)
	}
}

// TestPlanDigest pins, by a digest, the plans of 512 problems (keys 0..255
// at steps 1 and 2) for configurations that reach every method of combin's
// samplers: listed families with one run of digits and with several, dense
// families (T <= 2K) and K = T, the rejection method with sets found among
// sorted indices or by a Fisher-Yates scratch array, duplicates found by
// comparison or by the hash set, tuples, the Balanced design and Shuffled
// orders longer than one value's run. Like TestPlanGolden, the digests were
// recorded once and must never change.
func TestPlanDigest(t *testing.T) {
	shape := func(n1, n, k int) Config {
		return Config{SearchTraces: n1, SetSize: n, Sets: k, AggregationsPerSet: 1}
	}
	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	shuffled := func(c *Config) { c.Order = combin.Shuffled }
	balanced := func(c *Config) { c.Design = combin.Balanced }
	ordered := func(c *Config) { c.Ordered = true }
	tests := []struct {
		c    Config
		want string
	}{
		{Paper(), "3614708d0e591e83"},
		{with(Paper(), shuffled), "de1bae85aa7df763"},
		{with(Paper(), ordered), "9de6cb2e7d9e3d01"},
		{with(Paper(), balanced), "28ecde4f557fc6e5"},
		{with(with(Paper(), balanced), shuffled), "59697b4961124005"},
		{shape(20, 2, 20), "2980434d302c6bcd"},                 // listed, several runs
		{shape(6, 3, 15), "0d62d3c8134e2705"},                  // dense: T = 20 <= 2K
		{shape(5, 2, 10), "2a0d94967ad1d0e5"},                  // K = T
		{shape(8, 1, 8), "b9a2023ce7212ec5"},                   // n = 1
		{shape(1024, 16, 3), "753b5f712562dafc"},               // rejection, sorted indices
		{shape(64, 8, 40), "0a918f36b155b662"},                 // rejection, hash set
		{shape(200, 70, 3), "f56d3370b8290116"},                // rejection, Fisher-Yates scratch
		{with(shape(30, 6, 5), ordered), "48ed365563446e81"},   // rejection, tuples
		{with(shape(30, 25, 2), shuffled), "252ce888687feb10"}, // shuffles of several runs
		{with(shape(10, 3, 7), balanced), "e58cb805cbab1bae"},  // balanced, r or r+1
		{with(shape(9, 4, 5), balanced), "ab977659a3ea582c"},   // balanced
		{with(shape(40, 5, 30), balanced), "a498a6b928326a29"}, // balanced, many sets
	}
	ks := keys(256)
	for _, tt := range tests {
		pl, err := tt.c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		var ps Plans
		var buf []byte
		for step := uint64(1); step <= 2; step++ {
			if err := pl.PlanTo(&ps, 2026, step, ks); err != nil {
				t.Fatal(err)
			}
			buf = buf[:0]
			for _, m := range ps.AppendMembers(nil) {
				buf = binary.LittleEndian.AppendUint64(buf, uint64(m))
			}
			h.Write(buf)
		}
		if got := fmt.Sprintf("%016x", h.Sum64()); got != tt.want {
			t.Errorf("%+v: digest of the plans = %s, want %s", tt.c, got, tt.want)
		}
	}
}
