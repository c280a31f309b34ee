package spiral

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/spiraltest"
	"spiral/lengthgate"
)

// genBatch describes a batch drawn by drawBatch.
type genBatch struct {
	in     Batch
	counts []int // the reward count of every set (in.RewardCounts or N2)
}

// drawBatch draws a batch of problems for c: planned by a Planner (and so
// trusted) or copied (and so checked), rewards on a coarse grid, sometimes
// ragged (a dropped output) or with outputs marked unscorable (their reward
// NaN), and lengths around the gates' targets.
func drawBatch(t *rapid.T, c Config) genBatch {
	problems := rapid.IntRange(0, 5).Draw(t, "problems")
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	var g genBatch
	g.in.Plans = new(Plans)
	if err := pl.PlanTo(g.in.Plans, rapid.Uint64().Draw(t, "seed"), 0, keys(problems)); err != nil {
		t.Fatal(err)
	}
	if rapid.Bool().Draw(t, "outside") {
		g.in.Plans = checked(c, g.in.Plans.AppendMembers(nil))
	}
	k, n2 := c.Sets, c.AggregationsPerSet
	g.counts = make([]int, problems*k)
	ragged := rapid.Bool().Draw(t, "ragged")
	for s := range g.counts {
		g.counts[s] = n2
		if ragged {
			g.counts[s] = rapid.IntRange(1, n2).Draw(t, "count")
		}
	}
	if ragged {
		g.in.RewardCounts = g.counts
	}
	outputs := 0
	for _, m := range g.counts {
		outputs += m
	}
	grid := []float64{0, 0.25, 0.5, 1}
	if rapid.Bool().Draw(t, "binary") {
		grid = []float64{0, 1}
	}
	g.in.Rewards = make([]float64, outputs)
	for o := range g.in.Rewards {
		g.in.Rewards[o] = grid[rapid.IntRange(0, len(grid)-1).Draw(t, "r")]
	}
	if rapid.Bool().Draw(t, "unscorable") {
		g.in.Unscorable = make([]bool, outputs)
		for o := range g.in.Unscorable {
			if rapid.IntRange(0, 4).Draw(t, "u") == 0 {
				g.in.Unscorable[o] = true
				g.in.Rewards[o] = math.NaN()
			}
		}
	}
	lengths := func(n int, name string) []int {
		ls := make([]int, n)
		for i := range ls {
			ls[i] = rapid.IntRange(0, 14).Draw(t, name)
		}
		return ls
	}
	if c.Gates.Search.Enabled() || rapid.Bool().Draw(t, "searchLengths") {
		g.in.SearchLengths = lengths(problems*c.SearchTraces, "sl")
	}
	if c.Gates.Aggregation.Enabled() || c.Overlong != nil || rapid.Bool().Draw(t, "aggLengths") {
		g.in.AggregationLengths = lengths(outputs, "al")
	}
	return g
}

// problem returns problem q of g in nested form, with its offset of
// outputs: sets, rewards, unscorable marks (nil if none) and lengths.
func (g genBatch) problem(c Config, q int) (sets [][]int, rewards [][]float64, unscorable [][]bool, l Lengths, r0 int) {
	k, n, n1 := c.Sets, c.SetSize, c.SearchTraces
	for _, m := range g.counts[:q*k] {
		r0 += m
	}
	if g.in.SearchLengths != nil {
		l.Search = g.in.SearchLengths[q*n1 : (q+1)*n1]
	}
	r := r0
	for i := range k {
		m := g.counts[q*k+i]
		sets = append(sets, g.in.Plans.members[(q*k+i)*n:(q*k+i+1)*n])
		rewards = append(rewards, g.in.Rewards[r:r+m])
		if g.in.Unscorable != nil {
			unscorable = append(unscorable, g.in.Unscorable[r:r+m])
		}
		if g.in.AggregationLengths != nil {
			l.Aggregation = append(l.Aggregation, g.in.AggregationLengths[r:r+m])
		}
		r += m
	}
	return sets, rewards, unscorable, l, r0
}

// reference returns the exact credit of one problem by spiraltest.RefCredit,
// with c.Overlong's penalty added to the rewards first, and then the gates
// of c applied (a positive advantage of an output whose length the gate
// does not keep becomes 0), and whether the raw rewards give no signal
// (every exact advantage 0). Unscorable rewards (NaN) enter as 0: RefCredit
// does not read them.
func reference(c Config, sets [][]int, rewards [][]float64, unscorable [][]bool, l Lengths) (spiraltest.RefResult, bool) {
	rats := func(shape bool) [][]*big.Rat {
		out := make([][]*big.Rat, len(rewards))
		for i, rs := range rewards {
			for j, r := range rs {
				x := new(big.Rat)
				if unscorable == nil || !unscorable[i][j] {
					x.SetFloat64(r)
					if shape {
						p, err := c.Overlong.Penalty(l.Aggregation[i][j])
						if err != nil {
							panic(err)
						}
						x.Add(x, new(big.Rat).SetFloat64(p))
					}
				}
				out[i] = append(out[i], x)
			}
		}
		return out
	}
	raw := spiraltest.RefCredit(c.SearchTraces, sets, rats(false), unscorable)
	noSignal := true
	for _, a := range raw.Search {
		noSignal = noSignal && a.Sign() == 0
	}
	for _, as := range raw.Aggregation {
		for _, a := range as {
			noSignal = noSignal && a.Sign() == 0
		}
	}
	ref := raw
	if c.Overlong != nil {
		ref = spiraltest.RefCredit(c.SearchTraces, sets, rats(true), unscorable)
	}
	for y, a := range ref.Search {
		if a.Sign() > 0 && l.Search != nil && !c.Gates.Search.KeepsPositive(l.Search[y]) {
			ref.Search[y] = new(big.Rat)
		}
	}
	for i, as := range ref.Aggregation {
		for j, a := range as {
			if a.Sign() > 0 && l.Aggregation != nil && !c.Gates.Aggregation.KeepsPositive(l.Aggregation[i][j]) {
				ref.Aggregation[i][j] = new(big.Rat)
			}
		}
	}
	return ref, noSignal
}

// near reports whether got is within 1e-12 of the exact want.
func near(got float64, want *big.Rat) bool {
	return math.Abs(got-spiraltest.Float(want)) <= 1e-12
}

// nearZero is near, and exactly 0 when want is 0: the kernel writes the
// search and aggregation advantages that are 0 exactly as 0, which NoSignal
// relies on.
func nearZero(got float64, want *big.Rat) bool {
	if want.Sign() == 0 {
		return got == 0
	}
	return near(got, want)
}

// TestCreditBatchMatchesReference checks CreditBatch against the exact
// reference on random configurations and batches: planned and outside
// sets, ragged and unscorable outputs, gates, the overlong punishment and
// the reward-range filter. A problem whose raw rewards give no signal, or
// whose mean raw reward is out of range, must get exactly zero credit.
func TestCreditBatchMatchesReference(t *testing.T) {
	var dst BatchCredit // reused across cases: growing and shrinking is exercised
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		if rapid.Bool().Draw(t, "overlong") {
			o := lengthgate.NewSoftOverlong(rapid.IntRange(1, 14).Draw(t, "maxLength"), 0)
			o.Buffer = rapid.IntRange(0, o.MaxLength).Draw(t, "buffer")
			c.Overlong = &o
		}
		if rapid.Bool().Draw(t, "range") {
			c.RewardRange = advantage.RewardRange{Low: 0.1, High: 0.9}
		}
		g := drawBatch(t, c)
		if err := c.CreditBatch(&dst, g.in); err != nil {
			t.Fatal(err)
		}
		k, n1 := c.Sets, c.SearchTraces
		problems := len(g.counts) / k
		if dst.Problems != problems || len(dst.NoSignal) != problems || len(dst.Aggregation) != len(g.in.Rewards) || len(dst.Search) != problems*n1 {
			t.Fatalf("dst holds %d problems, %d NoSignal, %d aggregation and %d search advantages; want %d problems",
				dst.Problems, len(dst.NoSignal), len(dst.Aggregation), len(dst.Search), problems)
		}
		noSignal := 0
		for q := range problems {
			sets, rewards, unscorable, l, r0 := g.problem(c, q)
			ref, refNoSignal := reference(c, sets, rewards, unscorable, l)
			var un []bool
			if unscorable != nil {
				un = slices.Concat(unscorable...)
			}
			inRange, err := advantage.InRewardRange(c.RewardRange, slices.Concat(rewards...), un)
			if err != nil {
				t.Fatal(err)
			}
			if dst.Rejected[q] || dst.NoSignal[q] != refNoSignal || dst.OutOfRange[q] != !inRange {
				t.Fatalf("problem %d: Rejected %v, NoSignal %v, OutOfRange %v; want false, %v, %v", q, dst.Rejected[q], dst.NoSignal[q], dst.OutOfRange[q], refNoSignal, !inRange)
			}
			if refNoSignal {
				noSignal++
			}
			dropped := refNoSignal || !inRange
			if dst.Skip(q) != dropped {
				t.Fatalf("problem %d: Skip %v, want %v", q, dst.Skip(q), dropped)
			}
			for y, a := range dst.Search[q*n1 : (q+1)*n1] {
				if dropped && a != 0 || !dropped && !nearZero(a, ref.Search[y]) || dst.Appearances[q*n1+y] != ref.Appearances[y] {
					t.Fatalf("problem %d trace %d: A_search %v in %d sets, want %v in %d (dropped %v)", q, y, a, dst.Appearances[q*n1+y], ref.Search[y].FloatString(6), ref.Appearances[y], dropped)
				}
			}
			r := r0
			for i := range k {
				if !near(dst.SetScores[q*k+i], ref.SetScores[i]) || !near(dst.SetAdvantages[q*k+i], ref.SetAdvantages[i]) {
					t.Fatalf("problem %d set %d: f = %v, A_set = %v; want %v, %v", q, i, dst.SetScores[q*k+i], dst.SetAdvantages[q*k+i], ref.SetScores[i].FloatString(6), ref.SetAdvantages[i].FloatString(6))
				}
				for j, want := range ref.Aggregation[i] {
					if a := dst.Aggregation[r+j]; dropped && a != 0 || !dropped && !nearZero(a, want) {
						t.Fatalf("problem %d set %d output %d: A_agg = %v, want %v (dropped %v)", q, i, j, a, want.FloatString(6), dropped)
					}
				}
				r += len(ref.Aggregation[i])
			}
			// The one-problem form gives the same, bit for bit.
			if unscorable == nil {
				one, err := c.Credit(Plan{Sets: sets}, rewards, l)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(one.Search, dst.Search[q*n1:(q+1)*n1]) || !slices.Equal(slices.Concat(one.Aggregation...), dst.Aggregation[r0:r]) ||
					one.NoSignal != dst.NoSignal[q] || one.OutOfRange != dst.OutOfRange[q] {
					t.Fatalf("problem %d: Credit %+v differs from CreditBatch", q, one)
				}
			}
		}
		if got := dst.NoSignalCount(); got != noSignal {
			t.Fatalf("NoSignalCount = %d, want %d", got, noSignal)
		}
	})
}

// benchConfig is the paper's configuration with both gates at 4096 tokens.
func benchConfig() Config {
	c := Paper()
	c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	return c
}

// paperBatch returns a batch of problems at c, planned, with random binary
// rewards and lengths up to 5000.
func paperBatch(c Config, problems int, seed uint64) Batch {
	rnd := rand.New(rand.NewPCG(seed, 3))
	pl, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	in := Batch{Plans: new(Plans)}
	if err := pl.PlanTo(in.Plans, seed, 3, keys(problems)); err != nil {
		panic(err)
	}
	in.Rewards = make([]float64, problems*c.AggregationOutputs())
	in.SearchLengths = make([]int, problems*c.SearchTraces)
	in.AggregationLengths = make([]int, problems*c.AggregationOutputs())
	for i := range in.Rewards {
		in.Rewards[i] = float64(rnd.IntN(2))
		in.AggregationLengths[i] = rnd.IntN(5000)
	}
	for i := range in.SearchLengths {
		in.SearchLengths[i] = rnd.IntN(5000)
	}
	return in
}

// TestNoSignalUnderShaping: a problem whose aggregation rewards are all 0
// gives no signal, and DAPO's length penalty, which differs from output to
// output, must not create one. Its NoSignal is true and its credit 0, while
// a problem with raw signal is credited from the shaped rewards.
func TestNoSignalUnderShaping(t *testing.T) {
	c := Paper()
	o := lengthgate.NewSoftOverlong(4096, 1024)
	c.Overlong = &o
	in := paperBatch(c, 2, 5)
	clear(in.Rewards[:16]) // problem 0: every reward 0
	for i := range in.AggregationLengths {
		in.AggregationLengths[i] = 2500 + 200*i // penalties from 0 to -1
	}
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatal(err)
	}
	if dst.Overlong.Penalized == 0 {
		t.Fatalf("no output was penalised (%+v): the test does not shape", dst.Overlong)
	}
	if !dst.NoSignal[0] || !allZero(dst.Search[:8]) || !allZero(dst.Aggregation[:16]) {
		t.Errorf("all-zero raw rewards under shaping: NoSignal %v, search %v, aggregation %v; want true and zeros",
			dst.NoSignal[0], dst.Search[:8], dst.Aggregation[:16])
	}
	// Without the rule, the lengths alone would give problem 0 credit.
	open := Paper()
	shaped := slices.Clone(in.Rewards)
	if _, err := o.Apply(shaped, in.AggregationLengths); err != nil {
		t.Fatal(err)
	}
	var naive BatchCredit
	if err := open.CreditBatch(&naive, Batch{Plans: in.Plans, Rewards: shaped}); err != nil {
		t.Fatal(err)
	}
	if naive.NoSignal[0] || allZero(naive.Search[:8]) {
		t.Fatalf("shaped rewards of problem 0 give no search credit (%v): the test cannot tell the passes apart", naive.Search[:8])
	}
	// Problem 1 has raw signal: its credit is that of the shaped rewards.
	if dst.NoSignal[1] || !slices.Equal(dst.Search[8:], naive.Search[8:]) || !slices.Equal(dst.Aggregation[16:], naive.Aggregation[16:]) {
		t.Errorf("problem 1: credit %v, want that of the shaped rewards %v", dst.Search[8:], naive.Search[8:])
	}
}

// TestUnscorableAndBadProblems: a batch whose one NaN reward is marked
// unscorable is credited whole; the same NaN unmarked is reported as an
// *advantage.InputError naming problem, set and output, recoverable with
// errors.As, and every other problem is credited as before. Bad lengths and
// bad outside sets are reported the same way, all at once.
func TestUnscorableAndBadProblems(t *testing.T) {
	c := benchConfig()
	in := paperBatch(c, 5, 7)
	members := in.Plans.AppendMembers(nil)
	in.Plans = checked(c, members) // outside sets: checked
	var clean BatchCredit
	if err := c.CreditBatch(&clean, in); err != nil {
		t.Fatal(err)
	}
	const nanAt = 1*16 + 2*4 + 3 // problem 1, set 2, output 3
	in.Rewards[nanAt] = math.NaN()
	in.Unscorable = make([]bool, len(in.Rewards))
	in.Unscorable[nanAt] = true
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatalf("NaN marked unscorable: %v", err)
	}
	if dst.ScoredOutputs[1*4+2] != 3 || dst.Aggregation[nanAt] != 0 || dst.Rejected[1] {
		t.Errorf("unscorable output: set 2 of problem 1 scored %d outputs, A_agg %v, rejected %v; want 3, 0, false",
			dst.ScoredOutputs[6], dst.Aggregation[nanAt], dst.Rejected[1])
	}
	for _, q := range []int{0, 2, 3, 4} {
		if !slices.Equal(dst.Search[q*8:(q+1)*8], clean.Search[q*8:(q+1)*8]) {
			t.Errorf("problem %d changed by another problem's unscorable output", q)
		}
	}

	in.Unscorable = nil // the NaN unmarked
	in.SearchLengths[3*8+5] = -1
	members[4*16+4*1+2] = members[4*16+4*1+1] // problem 4, set 1: a repeated trace
	var plans Plans
	if err := c.CheckPlans(&plans, members); err == nil {
		t.Fatal("CheckPlans: a repeated trace in problem 4 gave no error")
	}
	in.Plans = &plans
	err := c.CreditBatch(&dst, in)
	be, ok := errors.AsType[*BatchError](err)
	if !ok || len(be.Problems) != 3 {
		t.Fatalf("three bad problems: error %v, want a *BatchError listing 3", err)
	}
	ie, ok := errors.AsType[*InputError](err)
	if !ok || ie.Field != "Batch.Rewards" || ie.Problem != 1 || ie.Set != 2 || ie.Output != 3 || !errors.Is(err, advantage.ErrNotFinite) {
		t.Errorf("errors.As: %+v, want Rewards of problem 1, set 2, output 3, not finite", ie)
	}
	want := []struct {
		field                string
		problem, set, output int
	}{{"Batch.Rewards", 1, 2, 3}, {"Batch.SearchLengths", 3, -1, 5}, {"Batch.Plans", 4, 1, 2}}
	for i, w := range want {
		e := be.Problems[i]
		if e.Field != w.field || e.Problem != w.problem || e.Set != w.set || e.Output != w.output {
			t.Errorf("bad problem %d: %+v, want %+v", i, e, w)
		}
	}
	if !slices.Equal(dst.Rejected, []bool{false, true, false, true, true}) {
		t.Errorf("Rejected = %v", dst.Rejected)
	}
	for q := range 5 {
		s, ws := dst.Search[q*8:(q+1)*8], clean.Search[q*8:(q+1)*8]
		if dst.Rejected[q] && (!allZero(s) || !allZero(dst.Aggregation[q*16:(q+1)*16]) || dst.NoSignal[q]) || !dst.Rejected[q] && !slices.Equal(s, ws) {
			t.Errorf("problem %d (rejected %v): search %v, want %v", q, dst.Rejected[q], s, ws)
		}
	}
}

// TestDroppedOutput: a batch in which one set lost an aggregation output
// goes through the batch form, as the one-problem form computes it, and
// allocates nothing on reuse.
func TestDroppedOutput(t *testing.T) {
	c := benchConfig()
	in := paperBatch(c, 3, 11)
	in.RewardCounts = make([]int, 3*4)
	for s := range in.RewardCounts {
		in.RewardCounts[s] = 4
	}
	in.RewardCounts[1*4+3] = 3 // problem 1, set 3: one output dropped
	drop := 1*16 + 3*4 + 2
	in.Rewards = slices.Delete(slices.Clone(in.Rewards), drop, drop+1)
	in.AggregationLengths = slices.Delete(slices.Clone(in.AggregationLengths), drop, drop+1)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatal(err)
	}
	g := genBatch{in: in, counts: in.RewardCounts}
	for q := range 3 {
		sets, rewards, _, l, r0 := g.problem(c, q)
		one, err := c.Credit(Plan{Sets: sets}, rewards, l)
		if err != nil {
			t.Fatal(err)
		}
		agg := slices.Concat(one.Aggregation...)
		if !slices.Equal(one.Search, dst.Search[q*8:(q+1)*8]) || !slices.Equal(agg, dst.Aggregation[r0:r0+len(agg)]) {
			t.Errorf("problem %d: batch and one-problem credit differ", q)
		}
	}
	if len(dst.Aggregation) != 47 || dst.ScoredOutputs[7] != 3 {
		t.Errorf("%d aggregation advantages, set 3 of problem 1 scored %d; want 47 and 3", len(dst.Aggregation), dst.ScoredOutputs[7])
	}
	if a := testing.AllocsPerRun(10, func() { _ = c.CreditBatch(&dst, in) }); a != 0 {
		t.Errorf("ragged CreditBatch with a reused dst allocates %v times, want 0", a)
	}
}

// TestRewardRangeOnRawRewards: the reward-range filter decides on the raw
// rewards, whatever the shaping does to them.
func TestRewardRangeOnRawRewards(t *testing.T) {
	c := Paper()
	c.RewardRange = advantage.RewardRange{Low: 0, High: 1}
	o := lengthgate.NewSoftOverlong(100, 100)
	c.Overlong = &o
	in := paperBatch(c, 3, 13)
	for i := range 16 {
		in.Rewards[i] = 1 // problem 0: all right, mean 1
		in.Rewards[32+i] = float64(i % 2)
	}
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatal(err)
	}
	if !dst.OutOfRange[0] || dst.OutOfRange[2] || !allZero(dst.Search[:8]) {
		t.Errorf("OutOfRange = %v, problem 0 search %v; want problem 0 dropped with zero credit, problem 2 kept", dst.OutOfRange, dst.Search[:8])
	}
}

// TestCreditBatchLayoutErrors: a batch that does not fit the config is an
// error that leaves dst untouched.
func TestCreditBatchLayoutErrors(t *testing.T) {
	c := benchConfig()
	good := paperBatch(c, 3, 1)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, good); err != nil {
		t.Fatal(err)
	}
	snapshot := cloneCredit(&dst)
	with := func(f func(*Batch)) Batch {
		b := Batch{
			Plans:              good.Plans,
			Rewards:            slices.Clone(good.Rewards),
			SearchLengths:      slices.Clone(good.SearchLengths),
			AggregationLengths: slices.Clone(good.AggregationLengths),
		}
		f(&b)
		return b
	}
	for _, tc := range []struct {
		c     Config
		in    Batch
		field string
	}{
		{c, with(func(b *Batch) { b.Plans = nil }), "Batch.Plans"},
		{c, with(func(b *Batch) {
			b.Plans = paperBatch(Config{SearchTraces: 8, SetSize: 3, Sets: 4, AggregationsPerSet: 4}, 3, 1).Plans
		}), "Batch.Plans"},
		{c, with(func(b *Batch) { b.Rewards = b.Rewards[:47] }), "Batch.Rewards"},
		{c, with(func(b *Batch) { b.RewardCounts = make([]int, 11) }), "Batch.RewardCounts"},
		{c, with(func(b *Batch) { b.RewardCounts = make([]int, 12) }), "Batch.RewardCounts"},
		{c, with(func(b *Batch) { b.Unscorable = make([]bool, 3) }), "Batch.Unscorable"},
		{c, with(func(b *Batch) { b.SearchLengths = nil }), "Batch.SearchLengths"},
		{c, with(func(b *Batch) { b.AggregationLengths = b.AggregationLengths[1:] }), "Batch.AggregationLengths"},
		{Paper(), with(func(b *Batch) { b.SearchLengths = b.SearchLengths[1:] }), "Batch.SearchLengths"},
	} {
		err := tc.c.CreditBatch(&dst, tc.in)
		e, ok := errors.AsType[*InputError](err)
		if !ok || e.Field != tc.field || !strings.HasPrefix(err.Error(), "spiral: "+tc.field) {
			t.Errorf("error %v, want an *InputError for %s", err, tc.field)
		}
		if diff := cmp.Diff(snapshot, cloneCredit(&dst), ignoreScratch); diff != "" {
			t.Fatalf("%v: dst changed (-before +after):\n%s", err, diff)
		}
	}
	if err := (Config{}).CreditBatch(&dst, good); err == nil {
		t.Error("invalid config: nil error")
	}
	// K above the family's size, on an empty batch: C(8, 4) = 70.
	if err := (Config{SearchTraces: 8, SetSize: 4, Sets: 71, AggregationsPerSet: 4}).CreditBatch(&dst, Batch{Plans: new(Plans)}); err == nil ||
		!strings.Contains(err.Error(), "Config.Sets: 71 > C(8, 4) = 70") {
		t.Errorf("K = 71 at C(8, 4): error %v, want one naming Config.Sets and the family size", err)
	}
}

var ignoreScratch = cmpopts.IgnoreUnexported(BatchCredit{})

// cloneCredit copies the exported fields of b.
func cloneCredit(b *BatchCredit) BatchCredit {
	var c BatchCredit
	c.SetScores = slices.Clone(b.SetScores)
	c.SetAdvantages = slices.Clone(b.SetAdvantages)
	c.Search = slices.Clone(b.Search)
	c.Appearances = slices.Clone(b.Appearances)
	c.Aggregation = slices.Clone(b.Aggregation)
	c.ScoredOutputs = slices.Clone(b.ScoredOutputs)
	c.ScoredSets = slices.Clone(b.ScoredSets)
	c.Rejected = slices.Clone(b.Rejected)
	c.Problems = b.Problems
	c.NoSignal = slices.Clone(b.NoSignal)
	c.OutOfRange = slices.Clone(b.OutOfRange)
	c.Gates, c.Overlong = b.Gates, b.Overlong
	return c
}

// TestPlansTrusted: Plans are credited without a second check, and
// nothing in the API writes into them: a duplicate set written into a
// copy of planned sets is caught when the copy is made Plans (by
// CheckPlans) and rejected by CreditBatch with the same error, naming the
// Batch field; Plans made for another shape are refused.
func TestPlansTrusted(t *testing.T) {
	c := Paper()
	in := paperBatch(c, 3, 3)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatalf("planned sets: %v", err)
	}
	members := in.Plans.AppendMembers(nil)
	copy(members[c.PlanSize()+4:c.PlanSize()+8], members[c.PlanSize():c.PlanSize()+4]) // problem 1: set 1 = set 0
	members[0] = members[0] + 1000                                                     // the copy is not the Plans
	if in.Plans.Member(0, 0, 0) == members[0] {
		t.Fatal("AppendMembers returned the Plans' own memory")
	}
	members[0] -= 1000
	var plans Plans
	err := c.CheckPlans(&plans, members)
	be, ok := errors.AsType[*BatchError](err)
	if !ok || len(be.Problems) != 1 || be.Problems[0].Problem != 1 || be.Problems[0].Set != 1 || !errors.As(err, new(*combin.SetError)) ||
		!strings.HasPrefix(err.Error(), "spiral: 1 bad problem: members: problem 1, set 1: identical to set 0") {
		t.Fatalf("a duplicate set: CheckPlans error %v, want problem 1, set 1 named", err)
	}
	in.Plans = &plans
	err = c.CreditBatch(&dst, in)
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Batch.Plans" || e.Problem != 1 || e.Set != 1 || !dst.Rejected[1] || dst.Rejected[0] || dst.Rejected[2] ||
		!allZero(dst.Search[8:16]) || strings.Contains(err.Error(), "Members") || strings.Count(err.Error(), ": ") < 1 || !strings.HasPrefix(err.Error(), "spiral: ") || strings.Contains(err.Error(), "advantage:") || strings.Contains(err.Error(), "combin:") {
		t.Errorf("crediting it: error %v, rejected %v; want problem 1 rejected, named in the root's words", err, dst.Rejected)
	}
	balanced := c
	balanced.Design = combin.Balanced
	if err := balanced.CreditBatch(&dst, paperBatch(c, 1, 3)); err == nil {
		t.Error("uniform plan credited under the Balanced design")
	}
	// Indices out of range are found by CheckPlans, named with the value,
	// and CreditBatch rejects their problem without reading them.
	for _, bad := range []int{c.SearchTraces, -1, math.MaxInt} {
		in := paperBatch(c, 3, 4)
		members := in.Plans.AppendMembers(nil)
		members[c.PlanSize()+5] = bad
		err := c.CheckPlans(&plans, members)
		var be *BatchError
		if !errors.As(err, &be) || len(be.Problems) != 1 || be.Problems[0].Problem != 1 || be.Problems[0].Field != "members" ||
			be.Problems[0].Value != float64(bad) {
			t.Errorf("index %d in problem 1: error %v; want problem 1 named with its index", bad, err)
		}
		in.Plans = &plans
		err = c.CreditBatch(&dst, in)
		if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "Batch.Plans" || e.Problem != 1 || !dst.Rejected[1] || dst.Rejected[0] || dst.Rejected[2] {
			t.Errorf("crediting index %d in problem 1: error %v, rejected %v", bad, err, dst.Rejected)
		}
	}
}

func TestCreditBatchAllocs(t *testing.T) {
	shuffled := benchConfig()
	shuffled.Order = combin.Shuffled
	for _, c := range []Config{Paper(), shuffled, {SearchTraces: 8, SetSize: 4, Sets: 40, AggregationsPerSet: 2, Order: combin.Shuffled}} {
		for _, outside := range []bool{false, true} {
			if outside && c.PlanSize() > 32 {
				continue // combin.CheckSets allocates scratch for large sets
			}
			in := paperBatch(c, 256, 2)
			if outside {
				in.Plans = checked(c, in.Plans.AppendMembers(nil))
			}
			var dst BatchCredit
			if err := c.CreditBatch(&dst, in); err != nil { // grows dst
				t.Fatal(err)
			}
			if a := testing.AllocsPerRun(10, func() { _ = c.CreditBatch(&dst, in) }); a != 0 {
				t.Errorf("%+v (outside sets %v): CreditBatch with a reused dst allocates %v times, want 0", c, outside, a)
			}
		}
		if a := testing.AllocsPerRun(10, func() { _ = c.validateShape() }); a != 0 {
			t.Errorf("validateShape allocates %v times on a valid config, want 0", a)
		}
	}
}

// TestCreditBatchConcurrent runs CreditBatch on different batches from
// several goroutines at once (run with -race to check for shared state) and
// compares with sequential results.
func TestCreditBatchConcurrent(t *testing.T) {
	c := benchConfig()
	const workers = 4
	var want [workers]BatchCredit
	var ins [workers]Batch
	for w := range workers {
		ins[w] = paperBatch(c, 64, uint64(w))
		if err := c.CreditBatch(&want[w], ins[w]); err != nil {
			t.Fatal(err)
		}
	}
	var got [workers]BatchCredit
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range 20 {
				if err := c.CreditBatch(&got[w], ins[w]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if diff := cmp.Diff(cloneCredit(&want[w]), cloneCredit(&got[w]), ignoreScratch); diff != "" {
			t.Errorf("worker %d: concurrent result differs:\n%s", w, diff)
		}
	}
}

func TestFirstNegative(t *testing.T) {
	for n := range 19 { // past two steps of eight
		ls := make([]int, n)
		if got := firstNegative(ls); got != -1 {
			t.Errorf("n = %d, no negative: %d", n, got)
		}
		for at := range n {
			clear(ls)
			ls[at] = -1
			if n > at+1 {
				ls[n-1] = -7
			}
			if got := firstNegative(ls); got != at {
				t.Errorf("n = %d, first negative at %d: got %d", n, at, got)
			}
		}
	}
}

// TestLargeProblem: one problem of N1 = 2^20 traces and 16,384 sets of 16
// (a cost linear in the input, not in N1 times K*n), planned and from
// outside, with every appearance counted. By default a quarter of that:
// N1 = 2^18 and 4,096 sets; SPIRAL_LONG=1 runs full size.
func TestLargeProblem(t *testing.T) {
	shift := 2
	if spiraltest.Long() {
		shift = 0
	}
	c := Config{SearchTraces: 1 << (20 - shift), SetSize: 16, Sets: 1 << (14 - shift), AggregationsPerSet: 1}
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	in := Batch{Plans: new(Plans)}
	if err := pl.PlanTo(in.Plans, 1, 2, keys(1)); err != nil {
		t.Fatal(err)
	}
	in.Rewards = make([]float64, c.AggregationOutputs())
	for i := range in.Rewards {
		in.Rewards[i] = float64(i % 2)
	}
	var dst BatchCredit
	for _, outside := range []bool{false, true} {
		if outside {
			in.Plans = checked(c, in.Plans.AppendMembers(nil))
		}
		if err := c.CreditBatch(&dst, in); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, a := range dst.Appearances {
			total += a
		}
		if total != c.PlanSize() || dst.NoSignal[0] {
			t.Errorf("outside %v: %d appearances, NoSignal %v; want %d and false", outside, total, dst.NoSignal[0], c.PlanSize())
		}
	}
}

// TestNoSignalWithUnequalSetScores: two splits of the 8 traces into halves
// (a balanced plan) with set scores (1, 1, 0, 0) give every trace the mean
// of +0.5 and -0.5, so every search and aggregation advantage is 0 though
// the set advantages are not: no signal.
func TestNoSignalWithUnequalSetScores(t *testing.T) {
	c := Paper()
	c.Design = combin.Balanced
	in := Batch{
		Plans:   checked(c, []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 4, 5, 2, 3, 6, 7}),
		Rewards: []float64{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatal(err)
	}
	if !dst.NoSignal[0] || !allZero(dst.Search) || !allZero(dst.Aggregation) {
		t.Errorf("NoSignal %v, search %v, aggregation %v; want true and zeros", dst.NoSignal[0], dst.Search, dst.Aggregation)
	}
	if !slices.Equal(dst.SetAdvantages, []float64{0.5, 0.5, -0.5, -0.5}) {
		t.Errorf("set advantages %v, want (0.5, 0.5, -0.5, -0.5)", dst.SetAdvantages)
	}
}

// keys returns the keys 0, 1, ..., n-1.
func keys(n int) []uint64 {
	ks := make([]uint64, n)
	for i := range ks {
		ks[i] = uint64(i)
	}
	return ks
}

// checked returns members made Plans by CheckPlans, which must accept them.
func checked(c Config, members []int) *Plans {
	var p Plans
	if err := c.CheckPlans(&p, members); err != nil {
		panic(err)
	}
	return &p
}

// TestShapingAtMaxFactor: DAPO's punishment at Factor = MaxFactor added to
// a valid reward of -1e30 gives -2e30, beyond advantage.MaxAbsReward but
// a value the caller never passed: it is credited (the raw rewards were
// checked), not reported as bad input, and every output is finite.
func TestShapingAtMaxFactor(t *testing.T) {
	c := Paper()
	c.Overlong = &lengthgate.SoftOverlong{MaxLength: 10, Buffer: 0, Factor: lengthgate.MaxFactor}
	in := paperBatch(c, 2, 21)
	for o := range in.Rewards {
		in.Rewards[o] = float64(o % 3)
		in.AggregationLengths[o] = 5 + o%11 // some over L_max = 10
	}
	in.Rewards[3] = -1e30
	in.AggregationLengths[3] = 11
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil {
		t.Fatalf("reward -1e30 punished by MaxFactor: %v, want it credited", err)
	}
	if dst.Rejected[0] || dst.Overlong.Overlong == 0 || dst.SetScores[0] > -1e29 {
		t.Errorf("rejected %v, overlong %+v, set score %v; want problem 0 credited with its -2e30", dst.Rejected, dst.Overlong, dst.SetScores[0])
	}
	for _, xs := range [][]float64{dst.Search, dst.Aggregation, dst.SetScores, dst.SetAdvantages} {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("non-finite output %v", x)
			}
		}
	}
}

// allZero reports whether every x is ±0, without a branch on the data.
func allZero(xs []float64) bool {
	var bits uint64
	for _, x := range xs {
		bits |= math.Float64bits(x)
	}
	return bits&^(1<<63) == 0
}

// TestGatesAsLengthgate: CreditBatch gates its credit as lengthgate's
// checked Gate.Apply does on the ungated credit of the same batch, bit for
// bit, reports included (their error terms too): on the whole batch in one
// pass, or, when a problem is rejected, on each other problem, the reports
// added up.
func TestGatesAsLengthgate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		g := drawBatch(t, c)
		problems := len(g.counts) / c.Sets
		if len(g.in.Rewards) > 0 && rapid.Bool().Draw(t, "reject") { // a NaN reward, scored
			o := rapid.IntRange(0, len(g.in.Rewards)-1).Draw(t, "bad")
			g.in.Rewards[o] = math.NaN()
			if g.in.Unscorable != nil {
				g.in.Unscorable[o] = false
			}
		}
		var gated, ungated BatchCredit
		if err := c.CreditBatch(&gated, g.in); err != nil && !errors.As(err, new(*BatchError)) {
			t.Fatal(err)
		}
		open := c
		open.Gates = lengthgate.Gates{}
		if err := open.CreditBatch(&ungated, g.in); err != nil && !errors.As(err, new(*BatchError)) {
			t.Fatal(err)
		}
		rejected := slices.Contains(gated.Rejected, true)
		for _, role := range []struct {
			name        string
			gate        lengthgate.Gate
			got, ungate []float64
			lengths     []int
			report      lengthgate.Report
			span        func(Span) (lo, hi int)
		}{
			{"search", c.Gates.Search, gated.Search, ungated.Search, g.in.SearchLengths, gated.Gates.Search,
				func(sp Span) (int, int) { return sp.Trace, sp.Trace + sp.Traces }},
			{"aggregation", c.Gates.Aggregation, gated.Aggregation, ungated.Aggregation, g.in.AggregationLengths, gated.Gates.Aggregation,
				func(sp Span) (int, int) { return sp.Reward, sp.Reward + sp.Rewards }},
		} {
			want, wantReport := role.ungate, lengthgate.Report{}
			apply := func(adv []float64, lengths []int) lengthgate.Report {
				rep, err := role.gate.Apply(adv, lengths)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			switch {
			case !role.gate.Enabled():
			case !rejected:
				wantReport = apply(want, role.lengths)
			default:
				for q := range problems {
					if lo, hi := role.span(gated.Span(q)); !gated.Rejected[q] {
						wantReport.Add(apply(want[lo:hi], role.lengths[lo:hi]))
					}
				}
			}
			if !slices.EqualFunc(role.got, want, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) || !role.report.Equal(wantReport) {
				t.Fatalf("%s: CreditBatch gives %v, %v; Gate.Apply %v, %v", role.name, role.got, role.report, want, wantReport)
			}
		}
	})
}
