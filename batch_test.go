package spiral

import (
	"errors"
	"fmt"
	"math"
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
	"spiral/internal/cpubench"
	"spiral/lengthgate"
)

// reference computes one problem's credit straight from SPIRAL.md sections 2
// and 3, written plainly and independently of the package: it returns the
// gated search and aggregation advantages, the set scores and advantages,
// and the appearances. Values within 1e-9 of 0 are taken as 0 before gating
// (the rewards the tests draw make every non-zero advantage far larger).
func reference(c Config, groups [][]int, rewards [][]float64, sl []int, al [][]int) (search []float64, agg [][]float64, f, aSet []float64, app []int) {
	k := len(groups)
	f = make([]float64, k)
	fbar := 0.0
	for i, rs := range rewards {
		for _, r := range rs {
			f[i] += r
		}
		f[i] /= float64(len(rs))
		fbar += f[i]
	}
	fbar /= float64(k)
	aSet = make([]float64, k)
	for i := range f {
		aSet[i] = f[i] - fbar
	}
	search = make([]float64, c.SearchTraces)
	app = make([]int, c.SearchTraces)
	for y := range search {
		for i, g := range groups {
			if slices.Contains(g, y) {
				search[y] += aSet[i]
				app[y]++
			}
		}
		if app[y] > 0 {
			search[y] /= float64(app[y])
		}
	}
	gate := func(g lengthgate.Gate, a float64, l int) float64 {
		if math.Abs(a) < 1e-9 {
			return 0
		}
		if a > 0 && g.Target > 0 && (l > g.Target || l == g.Target && g.Boundary == lengthgate.GateAtTarget) {
			return 0
		}
		return a
	}
	for y := range search {
		l := 0
		if sl != nil {
			l = sl[y]
		}
		search[y] = gate(c.Gates.Search, search[y], l)
	}
	agg = make([][]float64, k)
	for i, rs := range rewards {
		agg[i] = make([]float64, len(rs))
		for j, r := range rs {
			l := 0
			if al != nil {
				l = al[i][j]
			}
			agg[i][j] = gate(c.Gates.Aggregation, r-f[i], l)
		}
	}
	return search, agg, f, aSet, app
}

// randomBatch draws a batch of problems for c with rewards on a coarse grid
// and lengths around the gates' targets.
func randomBatch(t *rapid.T, c Config) Batch {
	problems := rapid.IntRange(0, 6).Draw(t, "problems")
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	in := Batch{Groups: make([]int, problems*c.PlanSize())}
	if err := pl.PlanTo(in.Groups, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))); err != nil {
		t.Fatal(err)
	}
	grid := []float64{0, 0.25, 0.5, 1}
	if rapid.Bool().Draw(t, "binary") {
		grid = []float64{0, 1}
	}
	in.Rewards = make([]float64, problems*c.AggregationOutputs())
	for i := range in.Rewards {
		in.Rewards[i] = grid[rapid.IntRange(0, len(grid)-1).Draw(t, "r")]
	}
	lengths := func(n int, name string) []int {
		ls := make([]int, n)
		for i := range ls {
			ls[i] = rapid.IntRange(0, 14).Draw(t, name)
		}
		return ls
	}
	if c.Gates.Search.Enabled() || rapid.Bool().Draw(t, "searchLengths") {
		in.SearchLengths = lengths(problems*c.SearchTraces, "sl")
	}
	if c.Gates.Aggregation.Enabled() || rapid.Bool().Draw(t, "aggLengths") {
		in.AggregationLengths = lengths(problems*c.AggregationOutputs(), "al")
	}
	return in
}

// problemOf cuts problem q out of a batch in the one-problem form.
func problemOf(c Config, in Batch, q int) (Plan, [][]float64, Lengths) {
	k, n, n2, n1 := c.Sets, c.SetSize, c.AggregationsPerSet, c.SearchTraces
	p := Plan{Groups: make([][]int, k)}
	rewards := make([][]float64, k)
	var l Lengths
	if in.SearchLengths != nil {
		l.Search = in.SearchLengths[q*n1 : (q+1)*n1]
	}
	if in.AggregationLengths != nil {
		l.Aggregation = make([][]int, k)
	}
	for i := range k {
		p.Groups[i] = in.Groups[(q*k+i)*n : (q*k+i+1)*n]
		rewards[i] = in.Rewards[(q*k+i)*n2 : (q*k+i+1)*n2]
		if l.Aggregation != nil {
			l.Aggregation[i] = in.AggregationLengths[(q*k+i)*n2 : (q*k+i+1)*n2]
		}
	}
	return p, rewards, l
}

// TestBatchEqualsOneProblem checks, on random configurations and batches,
// that CreditBatch gives for every problem exactly what Credit gives for it
// alone, and that both agree with the plain reference.
func TestBatchEqualsOneProblem(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-9)
	var dst BatchCredit // reused across cases, so growing and shrinking is exercised
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		in := randomBatch(t, c)
		if err := c.CreditBatch(&dst, in); err != nil {
			t.Fatal(err)
		}
		k, n1, n2 := c.Sets, c.SearchTraces, c.AggregationsPerSet
		problems := len(in.Groups) / c.PlanSize()
		if dst.Problems != problems || len(dst.NoSignal) != problems || len(dst.Aggregation.Advantages) != problems*k*n2 {
			t.Fatalf("dst holds %d problems, %d NoSignal, %d aggregation advantages; want %d problems", dst.Problems, len(dst.NoSignal), len(dst.Aggregation.Advantages), problems)
		}
		var total lengthgate.GatesReport
		noSignal := 0
		for q := range problems {
			p, rewards, l := problemOf(c, in, q)
			one, err := c.Credit(p, rewards, l)
			if err != nil {
				t.Fatal(err)
			}
			agg := make([][]float64, k)
			for i := range agg {
				agg[i] = dst.Aggregation.Advantages[(q*k+i)*n2 : (q*k+i+1)*n2]
			}
			fromBatch := Credit{
				SetScores:     dst.SetScores[q*k : (q+1)*k],
				SetAdvantages: dst.SetAdvantages[q*k : (q+1)*k],
				Search: SearchCredit{
					Advantages:  dst.Search.Advantages[q*n1 : (q+1)*n1],
					Appearances: dst.Search.Appearances[q*n1 : (q+1)*n1],
					InNoSet:     dst.Search.InNoSet[q],
					Gate:        dst.Search.Gate[q],
					NoSignal:    dst.Search.NoSignal[q],
				},
				Aggregation: AggregationCredit{Advantages: agg, Gate: dst.Aggregation.Gate[q], NoSignal: dst.Aggregation.NoSignal[q]},
				NoSignal:    dst.NoSignal[q],
			}
			if diff := cmp.Diff(one, fromBatch); diff != "" {
				t.Fatalf("problem %d: Credit (-) and CreditBatch (+) differ:\n%s", q, diff)
			}
			search, refAgg, f, aSet, app := reference(c, p.Groups, rewards, l.Search, l.Aggregation)
			if !cmp.Equal(search, one.Search.Advantages, approx) || !cmp.Equal(refAgg, one.Aggregation.Advantages, approx) ||
				!cmp.Equal(f, one.SetScores, approx) || !cmp.Equal(aSet, one.SetAdvantages, approx) || !cmp.Equal(app, one.Search.Appearances) {
				t.Fatalf("problem %d: Credit %+v differs from the reference: search %v, agg %v, f %v, A_set %v, appearances %v",
					q, one, search, refAgg, f, aSet, app)
			}
			if want := countZero(app); one.Search.InNoSet != want {
				t.Fatalf("problem %d: InNoSet = %d, want %d", q, one.Search.InNoSet, want)
			}
			refSignal := !allNear0(search) || slices.ContainsFunc(refAgg, func(a []float64) bool { return !allNear0(a) })
			if refSignal && one.NoSignal {
				t.Fatalf("problem %d: NoSignal = %v but the reference has a non-zero advantage", q, one.NoSignal)
			}
			total.Search.Add(one.Search.Gate)
			total.Aggregation.Add(one.Aggregation.Gate)
			if one.NoSignal {
				noSignal++
			}
		}
		if got := dst.GateTotals(); got != total {
			t.Fatalf("GateTotals = %+v, want %+v", got, total)
		}
		if got := dst.NoSignalCount(); got != noSignal {
			t.Fatalf("NoSignalCount = %d, want %d", got, noSignal)
		}
	})
}

func countZero(xs []int) int {
	m := 0
	for _, x := range xs {
		if x == 0 {
			m++
		}
	}
	return m
}

func allNear0(xs []float64) bool {
	return !slices.ContainsFunc(xs, func(x float64) bool { return math.Abs(x) >= 1e-9 })
}

// TestNoSignalIgnoresGates checks Credit.NoSignal's documented invariance:
// switching the gates on changes no role's NoSignal, since the gates only
// zero positive advantages and each role has a negative one when it has any.
func TestNoSignalIgnoresGates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := randomConfig(t)
		in := randomBatch(t, c)
		open := c
		open.Gates = lengthgate.Gates{}
		var gated, ungated BatchCredit
		if err := c.CreditBatch(&gated, in); err != nil {
			t.Fatal(err)
		}
		if err := open.CreditBatch(&ungated, in); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gated.Search.NoSignal, ungated.Search.NoSignal) || !slices.Equal(gated.Aggregation.NoSignal, ungated.Aggregation.NoSignal) {
			t.Fatalf("gates changed NoSignal: search %v vs %v, aggregation %v vs %v",
				gated.Search.NoSignal, ungated.Search.NoSignal, gated.Aggregation.NoSignal, ungated.Aggregation.NoSignal)
		}
	})
}

// paperBatch returns a batch of problems at c (the paper's shape by default)
// with random binary rewards and lengths up to 5000.
func paperBatch(c Config, problems int, seed uint64) Batch {
	rnd := rand.New(rand.NewPCG(seed, 3))
	pl, err := c.NewPlanner()
	if err != nil {
		panic(err)
	}
	in := Batch{
		Groups:             make([]int, problems*c.PlanSize()),
		Rewards:            make([]float64, problems*c.AggregationOutputs()),
		SearchLengths:      make([]int, problems*c.SearchTraces),
		AggregationLengths: make([]int, problems*c.AggregationOutputs()),
	}
	if err := pl.PlanTo(in.Groups, rnd); err != nil {
		panic(err)
	}
	for i := range in.Rewards {
		in.Rewards[i] = float64(rnd.IntN(2))
		in.AggregationLengths[i] = rnd.IntN(5000)
	}
	for i := range in.SearchLengths {
		in.SearchLengths[i] = rnd.IntN(5000)
	}
	return in
}

func TestCreditBatchErrorsLeaveDstUntouched(t *testing.T) {
	c := Paper()
	c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	good := paperBatch(c, 3, 1)
	var dst BatchCredit
	if err := c.CreditBatch(&dst, good); err != nil {
		t.Fatal(err)
	}
	snapshot := cloneCredit(&dst)
	with := func(f func(*Batch)) Batch {
		b := Batch{
			Groups:             slices.Clone(good.Groups),
			Rewards:            slices.Clone(good.Rewards),
			SearchLengths:      slices.Clone(good.SearchLengths),
			AggregationLengths: slices.Clone(good.AggregationLengths),
		}
		f(&b)
		return b
	}
	tests := []struct {
		c    Config
		in   Batch
		want string
	}{
		{Config{}, good, "SearchTraces (N1) = 0"},
		{c, with(func(b *Batch) { b.Groups = b.Groups[:40] }), "len(Batch.Groups) = 40 is not a multiple of K*n = 4*4"},
		// Five problems' groups make a larger batch: the rewards no longer fit.
		{c, with(func(b *Batch) { b.Groups = append(b.Groups, b.Groups[:32]...) }), "len(Batch.Rewards) = 48, want P*K*N2 = 5*4*4 = 80 for 5 problems"},
		{c, with(func(b *Batch) { b.SearchLengths = nil }), "Batch.SearchLengths is nil, but its gate is enabled (Target = 4096)"},
		{c, with(func(b *Batch) { b.AggregationLengths = b.AggregationLengths[1:] }), "len(Batch.AggregationLengths) = 47, want P*K*N2 = 48"},
		{c, with(func(b *Batch) { b.Groups[2*16+5] = 8 }), "Batch.Groups: problem 2: groups[1][1] = 8 out of range"},
		{c, with(func(b *Batch) { copy(b.Groups[16+12:16+16], b.Groups[16:16+4]) }), "Batch.Groups: problem 1: groups[0] = "},
		{c, with(func(b *Batch) { b.Rewards[1*16+2*4+3] = math.Inf(-1) }), "Batch.Rewards[27] (problem 1, set 2, output 3) = -Inf: reward is not finite"},
		{c, with(func(b *Batch) { b.SearchLengths[2*8+6] = -1 }), "Batch.SearchLengths[22] (problem 2, trace 6) = -1 < 0"},
		{c, with(func(b *Batch) { b.AggregationLengths[2*16+3*4+1] = -7 }), "Batch.AggregationLengths[45] (problem 2, set 3, output 1) = -7 < 0"},
	}
	for _, tt := range tests {
		err := tt.c.CreditBatch(&dst, tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CreditBatch: error %v, want %q", err, tt.want)
		}
		if diff := cmp.Diff(snapshot, cloneCredit(&dst), cmpopts.IgnoreUnexported(BatchCredit{})); diff != "" {
			t.Errorf("CreditBatch with error %q changed dst:\n%s", tt.want, diff)
		}
	}
	// A batch of 0 problems is valid and empty.
	if err := Paper().CreditBatch(&dst, Batch{}); err != nil || dst.Problems != 0 || len(dst.NoSignal) != 0 {
		t.Errorf("empty batch: %v, %d problems", err, dst.Problems)
	}
}

// cloneCredit copies the exported fields of b.
func cloneCredit(b *BatchCredit) BatchCredit {
	return BatchCredit{
		Problems:      b.Problems,
		SetScores:     slices.Clone(b.SetScores),
		SetAdvantages: slices.Clone(b.SetAdvantages),
		Search: BatchSearchCredit{
			Advantages:  slices.Clone(b.Search.Advantages),
			Appearances: slices.Clone(b.Search.Appearances),
			InNoSet:     slices.Clone(b.Search.InNoSet),
			Gate:        slices.Clone(b.Search.Gate),
			NoSignal:    slices.Clone(b.Search.NoSignal),
		},
		Aggregation: BatchAggregationCredit{
			Advantages: slices.Clone(b.Aggregation.Advantages),
			Gate:       slices.Clone(b.Aggregation.Gate),
			NoSignal:   slices.Clone(b.Aggregation.NoSignal),
		},
		NoSignal: slices.Clone(b.NoSignal),
	}
}

func TestCreditBatchAllocs(t *testing.T) {
	for _, c := range []Config{Paper(), func() Config {
		c := Paper()
		c.Order = Shuffled
		c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
		return c
	}(), {SearchTraces: 8, SetSize: 4, Sets: 40, AggregationsPerSet: 2, Order: Shuffled}} {
		in := paperBatch(c, 256, 2)
		var dst BatchCredit
		if err := c.CreditBatch(&dst, in); err != nil { // grows dst
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(10, func() { _ = c.CreditBatch(&dst, in) }); a != 0 {
			t.Errorf("%+v: CreditBatch with a reused dst allocates %v times, want 0", c, a)
		}
		if a := testing.AllocsPerRun(10, func() { _ = c.Validate() }); a != 0 {
			t.Errorf("Validate allocates %v times on a valid config, want 0", a)
		}
	}
}

// TestCreditBatchConcurrent runs CreditBatch on different batches from
// several goroutines at once (run with -race to check for shared state) and
// compares with sequential results.
func TestCreditBatchConcurrent(t *testing.T) {
	c := Paper()
	c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
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
		if diff := cmp.Diff(cloneCredit(&want[w]), cloneCredit(&got[w]), cmpopts.IgnoreUnexported(BatchCredit{})); diff != "" {
			t.Errorf("worker %d: concurrent result differs:\n%s", w, diff)
		}
	}
}

// The benchmarks time one training step's bookkeeping at the paper's
// configuration with both gates on (target 4096): draw the plan, then
// compute the credit from given rewards and lengths, for one problem and for
// a batch of 256. "spiral" is Planner.PlanTo plus CreditBatch into a reused
// BatchCredit; "naive" composes the packages by hand the obvious way, with
// fresh slices per problem per call: combin's Family.Sample,
// advantage.Compute, then lengthgate's Gate.Apply on each role.

func benchConfig() Config {
	c := Paper()
	c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
	return c
}

func benchStep(b *testing.B, problems int) {
	c := benchConfig()
	in := paperBatch(c, problems, 9)
	pl, err := c.NewPlanner()
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var dst BatchCredit
	if err := c.CreditBatch(&dst, in); err != nil { // grow dst once, as a trainer's first step does
		b.Fatal(err)
	}
	cpubench.Loop(b, func() {
		if err := pl.PlanTo(in.Groups, rnd); err != nil {
			b.Fatal(err)
		}
		if err := c.CreditBatch(&dst, in); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkStepParts splits the batch of 256 into its two halves: planning
// (Planner.PlanTo) and credit (CreditBatch, whose share computed by
// advantage.ComputeBatch is measured by ./advantage's BenchmarkCredit).
func BenchmarkStepParts(b *testing.B) {
	c := benchConfig()
	in := paperBatch(c, 256, 9)
	b.Run("problems=256/plan", func(b *testing.B) {
		pl, err := c.NewPlanner()
		if err != nil {
			b.Fatal(err)
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		groups := make([]int, len(in.Groups))
		cpubench.Loop(b, func() {
			if err := pl.PlanTo(groups, rnd); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("problems=256/credit", func(b *testing.B) {
		var dst BatchCredit
		if err := c.CreditBatch(&dst, in); err != nil {
			b.Fatal(err)
		}
		cpubench.Loop(b, func() {
			if err := c.CreditBatch(&dst, in); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func benchNaive(b *testing.B, problems int) {
	c := benchConfig()
	in := paperBatch(c, problems, 9)
	fam, err := combin.Subsets(c.SearchTraces, c.SetSize)
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	k, n2, n1 := c.Sets, c.AggregationsPerSet, c.SearchTraces
	cpubench.Loop(b, func() {
		for q := range problems {
			groups, err := fam.Sample(rnd, k)
			if err != nil {
				b.Fatal(err)
			}
			rewards := make([][]float64, k)
			for i := range rewards {
				rewards[i] = slices.Clone(in.Rewards[(q*k+i)*n2 : (q*k+i+1)*n2])
			}
			cr, err := advantage.Compute(n1, groups, rewards)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Gates.Search.Apply(cr.Search, in.SearchLengths[q*n1:(q+1)*n1]); err != nil {
				b.Fatal(err)
			}
			agg := slices.Concat(cr.Aggregation...)
			if _, err := c.Gates.Aggregation.Apply(agg, in.AggregationLengths[q*k*n2:(q+1)*k*n2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStep(b *testing.B) {
	for _, problems := range []int{1, 256} {
		b.Run(fmt.Sprintf("problems=%d/spiral", problems), func(b *testing.B) { benchStep(b, problems) })
		b.Run(fmt.Sprintf("problems=%d/naive", problems), func(b *testing.B) { benchNaive(b, problems) })
	}
}

// BenchmarkCreditOneProblem times the allocating one-problem form, Credit,
// for comparison with the batch form at one problem.
func BenchmarkCreditOneProblem(b *testing.B) {
	c := benchConfig()
	l := Lengths{Search: make([]int, 8), Aggregation: [][]int{make([]int, 4), make([]int, 4), make([]int, 4), make([]int, 4)}}
	cpubench.Loop(b, func() {
		if _, err := c.Credit(workedPlan, workedRewards, l); err != nil {
			b.Fatal(err)
		}
	})
}

// TestFirstNegative puts negative lengths at every position of slices of 0
// to 9, so that each lane of the four-way OR and the tail see one.
func TestFirstNegative(t *testing.T) {
	for n := range 10 {
		if got := firstNegative(make([]int, n)); got != -1 {
			t.Errorf("%d zeros: %d, want -1", n, got)
		}
		for p := range n {
			for _, v := range []int{-1, math.MinInt} {
				ls := make([]int, n)
				for i := range ls {
					ls[i] = i + 1
				}
				ls[p] = v
				if p+2 < n {
					ls[p+2] = -5 // a later negative does not count
				}
				if got := firstNegative(ls); got != p {
					t.Errorf("%v: %d, want %d", ls, got, p)
				}
			}
		}
	}
}

// TestGateMatchesLengthgate holds the batch's unchecked gate loop equal to
// lengthgate's Gate.Apply: same advantages, same report, bit for bit.
func TestGateMatchesLengthgate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := lengthgate.Gate{
			Target:   rapid.IntRange(0, 10).Draw(t, "target"),
			Boundary: lengthgate.Boundary(rapid.IntRange(0, 1).Draw(t, "boundary")),
		}
		size := rapid.IntRange(0, 20).Draw(t, "size")
		adv := make([]float64, size)
		lengths := make([]int, size)
		for i := range adv {
			adv[i] = rapid.SampledFrom([]float64{0, math.Copysign(0, -1), -0.5, 0.25, 1e-300, -1e-300, 0.1, 3}).Draw(t, "a")
			lengths[i] = rapid.IntRange(0, 12).Draw(t, "l")
		}
		want := slices.Clone(adv)
		wantRep, err := g.Apply(want, lengths)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(adv)
		var gl []int
		if g.Enabled() || rapid.Bool().Draw(t, "withLengths") {
			gl = lengths
		}
		var rep lengthgate.Report
		zero := gate(g, got, gl, &rep)
		if rep != wantRep || !slices.Equal(got, want) {
			t.Fatalf("gate = %v, %+v; lengthgate = %v, %+v", got, rep, want, wantRep)
		}
		if zero != !slices.ContainsFunc(got, func(a float64) bool { return a != 0 }) {
			t.Fatalf("zero = %v for %v", zero, got)
		}
	})
}

// TestPlannedBatchesCredit: every batch of plans that a Planner draws for a
// configuration Validate accepts can be credited, by CreditBatch and by
// advantage.ComputeBatch on the groups as planned, with no false
// "identical sets" error, over small families with K up to the whole
// family, in both families and both orders. The one combination Validate
// refuses is Tuples with Shuffled: shuffling the candidates of two
// distinct tuples that hold the same traces can make them the same
// sequence, (0, 1) and (1, 0) both read (0, 1), and K distinct tuples are
// no longer K distinct groups; the test shows such a collision, and that
// advantage then reports identical sets.
func TestPlannedBatchesCredit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n1 := rapid.IntRange(1, 5).Draw(t, "N1")
		c := Config{
			SearchTraces:       n1,
			SetSize:            rapid.IntRange(1, n1).Draw(t, "n"),
			AggregationsPerSet: rapid.IntRange(1, 3).Draw(t, "N2"),
			Family:             Family(rapid.IntRange(0, 1).Draw(t, "family")),
			Order:              Order(rapid.IntRange(0, 1).Draw(t, "order")),
		}
		fam, err := c.family()
		if err != nil {
			t.Fatal(err)
		}
		size, _ := fam.Count64() // at most (5)_5 = 120
		c.Sets = rapid.OneOf(rapid.Just(int(size)), rapid.IntRange(1, int(size))).Draw(t, "K")
		err = c.Validate()
		if c.Family == Tuples && c.Order == Shuffled {
			if err == nil || !strings.Contains(err.Error(), "Order = Shuffled with Family = Tuples") {
				t.Fatalf("Validate(%+v) = %v, want the Tuples with Shuffled error", c, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		pl, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		problems := rapid.IntRange(1, 3).Draw(t, "problems")
		in := Batch{Groups: make([]int, problems*c.PlanSize()), Rewards: make([]float64, problems*c.AggregationOutputs())}
		if err := pl.PlanTo(in.Groups, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))); err != nil {
			t.Fatal(err)
		}
		for i := range in.Rewards {
			in.Rewards[i] = float64(rapid.IntRange(0, 1).Draw(t, "r"))
		}
		var dst BatchCredit
		if err := c.CreditBatch(&dst, in); err != nil {
			t.Fatalf("CreditBatch on planned groups: %v", err)
		}
		ab, err := advantage.NewUniformBatch[float64](problems, c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet)
		if err != nil {
			t.Fatal(err)
		}
		ab.Members, ab.Rewards = in.Groups, in.Rewards
		ab.Ordered = c.Family == Tuples
		if err := advantage.ComputeBatch(new(advantage.BatchCredit[float64]), ab); err != nil {
			t.Fatalf("advantage on planned groups: %v", err)
		}
	})

	rnd := rand.New(rand.NewPCG(1, 2))
	for range 64 {
		a, b := []int{0, 1}, []int{1, 0} // two distinct tuples of (2)_2
		rnd.Shuffle(2, func(i, j int) { a[i], a[j] = a[j], a[i] })
		rnd.Shuffle(2, func(i, j int) { b[i], b[j] = b[j], b[i] })
		if slices.Equal(a, b) {
			var se *combin.SetError
			in := advantage.Batch[float64]{Traces: []int{2}, Sets: []int{2}, SetSizes: []int{2, 2}, Members: append(a, b...),
				RewardCounts: []int{1, 1}, Rewards: []float64{1, 0}, Ordered: true}
			if err := advantage.ComputeBatch(new(advantage.BatchCredit[float64]), in); !errors.As(err, &se) || se.Reason != combin.Duplicate {
				t.Errorf("shuffled tuples %v and %v: advantage error %v, want identical sets", a, b, err)
			}
			return
		}
	}
	t.Error("64 shuffles of (0, 1) and (1, 0) never collided")
}
