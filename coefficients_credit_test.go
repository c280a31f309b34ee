package spiral

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"spiral/combin"
	"spiral/internal/spiraltest"
	"spiral/loss"
)

// reductions returns every defined loss.Reduction.
func reductions() []loss.Reduction {
	var rs []loss.Reduction
	for r := loss.Reduction(0); !strings.HasPrefix(r.String(), "Reduction("); r++ {
		rs = append(rs, r)
	}
	return rs
}

// credited returns a batch of problems at c with lengths, and its credit.
func credited(t testing.TB, c Config, problems int, seed uint64) (Batch, *BatchCredit) {
	t.Helper()
	in := paperBatch(c, problems, seed)
	var b BatchCredit
	if err := c.CreditBatch(&b, in); err != nil {
		t.Fatal(err)
	}
	return in, &b
}

// TestLossCoefficientsCreditOfAnotherConfig: a credit made under Paper()
// and passed with a Config of another N1, n, K, N2, order of sets, design
// or aggregation baseline is refused with an *InputError about "credit";
// so is a BatchCredit no CreditBatch filled, a nil credit and a nil dst.
// Gates, which the coefficients do not read, may differ.
func TestLossCoefficientsCreditOfAnotherConfig(t *testing.T) {
	in, b := credited(t, Paper(), 3, 1)
	opt := LossOptions{Reduction: loss.TokenMean}
	var dst LossCoefficients
	if err := Paper().LossCoefficients(&dst, b, in, opt); err != nil {
		t.Fatal(err)
	}
	other := func(f func(*Config)) Config { c := Paper(); f(&c); return c }
	for name, c := range map[string]Config{
		"K = 3":       other(func(c *Config) { c.Sets = 3 }),
		"K = 2":       other(func(c *Config) { c.Sets = 2 }),
		"n = 3":       other(func(c *Config) { c.SetSize = 3 }),
		"N2 = 2":      other(func(c *Config) { c.AggregationsPerSet = 2 }),
		"N1 = 9":      other(func(c *Config) { c.SearchTraces = 9 }),
		"ordered":     other(func(c *Config) { c.Ordered = true }),
		"balanced":    other(func(c *Config) { c.Design = combin.Balanced }),
		"leave-1-out": other(func(c *Config) { c.AggregationBaseline = LeaveOneOut }),
	} {
		err := c.LossCoefficients(&dst, b, in, opt)
		if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "credit" || !strings.Contains(err.Error(), "made by a Config of N1 = 8, n = 4, K = 4, N2 = 4") {
			t.Errorf("%s: %v, want an *InputError about credit naming the Config that made it", name, err)
		}
	}
	gated := Paper()
	gated.Gates = benchConfig().Gates
	if err := gated.LossCoefficients(&dst, b, in, opt); err != nil {
		t.Errorf("other gates: %v", err)
	}
	for name, call := range map[string]func() error{
		"nil credit": func() error { return Paper().LossCoefficients(&dst, nil, in, opt) },
		"nil dst":    func() error { return Paper().LossCoefficients(nil, b, in, opt) },
		"zero credit": func() error {
			return Paper().LossCoefficients(&dst, &BatchCredit{Search: b.Search, Aggregation: b.Aggregation, Problems: 3}, in, opt)
		},
		"nil dst, advantages": func() error {
			return Paper().AdvantageCoefficients(nil, b.Search, b.Aggregation, in, opt)
		},
	} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			err = call()
		}()
		want := "credit"
		if strings.HasPrefix(name, "nil dst") {
			want = "dst"
		}
		if e, ok := errors.AsType[*InputError](err); !ok || e.Field != want {
			t.Errorf("%s: %v, want an *InputError about %s", name, err, want)
		}
	}
}

// TestAdvantageCoefficients: advantages held outside a BatchCredit give the
// coefficients of the BatchCredit that holds them.
func TestAdvantageCoefficients(t *testing.T) {
	c := Paper()
	c.AggregationBaseline = LeaveOneOut
	in, b := credited(t, c, 5, 2)
	for _, r := range reductions() {
		for _, u := range []Update{JointGradient, PaperUpdate} {
			opt := LossOptions{Update: u, Reduction: r, SplitRoles: r%2 == 0}
			var want, got LossCoefficients
			if err := c.LossCoefficients(&want, b, in, opt); err != nil {
				t.Fatal(err)
			}
			if err := c.AdvantageCoefficients(&got, b.Search, b.Aggregation, in, opt); err != nil {
				t.Fatal(err)
			}
			if !sameBits(got.Search, want.Search) || !sameBits(got.Aggregation, want.Aggregation) || got.Report != want.Report {
				t.Errorf("%+v: AdvantageCoefficients differs from LossCoefficients", opt)
			}
		}
	}
	err := c.AdvantageCoefficients(&LossCoefficients{}, b.Search[1:], b.Aggregation, in, LossOptions{})
	if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "search" {
		t.Errorf("39 search advantages: %v, want an *InputError about search", err)
	}
}

// TestLossCoefficientsAllocs: with a reused LossCoefficients, after one
// call for the configuration, LossCoefficients allocates nothing for every
// update (with and without a missing rate), aggregation baseline,
// reduction, one or two terms, design and order of sets, and at a family
// whose M takes big.Rat long to compute.
func TestLossCoefficientsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	configs := []Config{
		Paper(),
		{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Design: combin.Balanced},
		{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, AggregationBaseline: LeaveOneOut},
		{SearchTraces: 6, SetSize: 3, Sets: 5, AggregationsPerSet: 2, Ordered: true},
		{SearchTraces: 256, SetSize: 16, Sets: 32, AggregationsPerSet: 3},
	}
	for _, c := range configs {
		in, b := credited(t, c, 4, 3)
		var dst LossCoefficients
		updates := []LossOptions{{Update: JointGradient}, {Update: PaperUpdate}, {Update: ScoredGradient, MissingRate: 0.25}}
		if c.Design == combin.Uniform {
			updates = append(updates, LossOptions{Update: JointGradient, MissingRate: 0.25})
		}
		for _, u := range updates {
			for _, r := range reductions() {
				for _, split := range []bool{false, true} {
					opt := LossOptions{Update: u.Update, MissingRate: u.MissingRate, Reduction: r, SplitRoles: split}
					if err := c.LossCoefficients(&dst, b, in, opt); err != nil { // grows dst
						t.Fatal(err)
					}
					if a := testing.AllocsPerRun(5, func() { _ = c.LossCoefficients(&dst, b, in, opt) }); a != 0 {
						t.Errorf("%v %+v: %v allocations a call with a reused dst, want 0", c.creditShape(), opt, a)
					}
				}
			}
		}
	}
}

// TestLossCoefficientsSubnormal: advantages so small that an advantage
// times its multiplier is below float64's smallest subnormal still give
// the coefficient in float64's range: the multiplier meets the reduction's
// ratio first. At the paper's configuration an aggregation advantage of
// 2e-323 under the joint gradient (1/(K (N2-1)) = 1/12) with token-mean
// over outputs of 4000 tokens has the coefficient 2e-323/12 * 4000 ~
// 6.6e-321, not 0.
func TestLossCoefficientsSubnormal(t *testing.T) {
	c := Paper()
	const problems = 2
	in := paperBatch(c, problems, 4)
	for i := range in.SearchLengths {
		in.SearchLengths[i] = 4000
	}
	for i := range in.AggregationLengths {
		in.AggregationLengths[i] = 4000
	}
	search := make([]float64, problems*c.SearchTraces)
	aggregation := make([]float64, problems*c.AggregationOutputs())
	for i := range search {
		search[i] = float64(i%5-2) * 5e-324
	}
	for i := range aggregation {
		aggregation[i] = float64(i%7-3) * 5e-324 // 2e-323 = 4 x 5e-324 among them
	}
	w, err := c.RoleWeights(LossOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dst LossCoefficients
	for _, r := range []loss.Reduction{loss.TokenMean, loss.SeqMeanTokenMean, loss.TRLGRPO} {
		if err := c.AdvantageCoefficients(&dst, search, aggregation, in, LossOptions{Reduction: r}); err != nil {
			t.Fatal(err)
		}
		check := func(role string, adv, got []float64, weight *big.Rat) {
			for o, a := range adv {
				if a == 0 {
					continue
				}
				// The trainer's weight of the output (lengths all 4000,
				// one term of B = R outputs, T = 4000 R tokens) times the
				// coefficient is Scale times the update a/weight.
				rows := len(search) + len(aggregation)
				tw := trainerWeight(r, 4000, rows, rows, 4000*rows)
				want := new(big.Rat).SetFloat64(a)
				want.Quo(want, weight)
				want.Mul(want, new(big.Rat).SetFloat64(dst.Report.Scale))
				want.Quo(want, tw)
				exact, _ := want.Float64()
				if got[o] == 0 || math.Abs(got[o]-exact) > 2*5e-324 {
					t.Errorf("%v: %s advantage %v: coefficient %v, want %v", r, role, a, got[o], exact)
				}
			}
		}
		check("search", search, dst.Search, w.Search)
		check("aggregation", aggregation, dst.Aggregation, w.Aggregation)
	}
}

// TestLossCoefficientsBatchSize: a batch of more than loss.MaxRows outputs
// is refused with an *InputError about the Batch whose Value is the number
// of outputs, before anything is allocated.
func TestLossCoefficientsBatchSize(t *testing.T) {
	if testing.Short() {
		t.Skip("needs 2 x 128 MiB of untouched memory")
	}
	c := Paper()
	const problems = loss.MaxRows / 8
	search := make([]float64, problems*c.SearchTraces)
	aggregation := make([]float64, 8)
	in := Batch{SearchLengths: make([]int, len(search)), AggregationLengths: make([]int, len(aggregation))}
	var dst LossCoefficients
	var err error
	allocated := spiraltest.Allocated(func() {
		err = c.AdvantageCoefficients(&dst, search, aggregation, in, LossOptions{Update: JointGradient, Reduction: loss.TokenMean})
	})
	e, ok := errors.AsType[*InputError](err)
	if !ok || e.Field != "Batch" || e.Value != loss.MaxRows+8 || !strings.Contains(err.Error(), "16777224 outputs > 16777216, the most one call reduces") {
		t.Errorf("%d outputs: %v, want an *InputError about Batch with the number of outputs", loss.MaxRows+8, err)
	}
	if allocated > 1<<12 {
		t.Errorf("refused batch: %d bytes allocated", allocated)
	}
}

// TestCheckPlansAllocs: with a reused Plans, PlanTo and CheckPlans
// allocate nothing once grown, for both designs, subsets (in index and
// shuffled order) and tuples, and plans of more than 256 members (whose
// set check needs scratch memory beyond the stack).
func TestCheckPlansAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range []Config{
		Paper(),
		{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Design: combin.Balanced},
		{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Ordered: true},
		{SearchTraces: 64, SetSize: 8, Sets: 16, AggregationsPerSet: 2},
		{SearchTraces: 64, SetSize: 8, Sets: 16, AggregationsPerSet: 2, Design: combin.Balanced},
		{SearchTraces: 4096, SetSize: 64, Sets: 256, AggregationsPerSet: 4},
		{SearchTraces: 64, SetSize: 8, Sets: 16, AggregationsPerSet: 2, Design: combin.Balanced, Order: combin.Shuffled},
	} {
		pl, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		var drawn Plans
		if err := pl.PlanTo(&drawn, 1, 1, keys(8)); err != nil {
			t.Fatal(err)
		}
		ks := keys(8)
		if a := testing.AllocsPerRun(5, func() { _ = pl.PlanTo(&drawn, 1, 2, ks) }); a != 0 {
			t.Errorf("%v: PlanTo of 8 plans allocates %v times a call, want 0", c.creditShape(), a)
		}
		members := drawn.AppendMembers(nil)
		var p Plans
		if err := c.CheckPlans(&p, members); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(5, func() { _ = c.CheckPlans(&p, members) }); a != 0 {
			t.Errorf("%v: CheckPlans of 8 plans of %d members allocates %v times a call, want 0", c.creditShape(), c.PlanSize(), a)
		}
	}
}
