package spiral

import (
	"fmt"
	"math"
	"testing"

	"spiral/internal/cpubench"
)

// stepPlainLoop is one training step of benchConfig() (Paper()'s 8/4/4/4,
// both gates at target 4096, GateAtTarget) as plain loops on 0/1 rewards,
// with no input checks: the plans by paperPlanLoop, then for each problem
// the set means f_i = S_i/N2 (plain sums of 0/1 rewards are exact), A_agg
// = r - f_i, A_set = f_i - fbar, A_search = the mean of A_set over the sets
// holding a trace (0 in none), NoSignal, and Eq. 8 on both roles with the
// report's tallies and the removed mass as a compensated sum (Knuth's
// two-sum over the gated entries, in order, as CreditBatch's gate adds
// it). It is the floor of CreditBatch's work on the uniform batch
// (BenchmarkStep/problems=B/spiral); TestStepPlainLoop checks that it
// gives CreditBatch's outputs.
type stepPlainLoop struct {
	plan                         *paperPlanLoop
	members                      []int
	Search, Aggregation          []float64
	SetScores, SetAdvantages     []float64
	Appearances                  []int
	NoSignal                     []bool
	search, agg                  plainGateTally
	searchLengths, outputLengths int // entries the gates examined
}

// plainGateTally is what one role's gate did: lengthgate.Report's counts
// and the removed mass as the unevaluated sum mass + low.
type plainGateTally struct {
	positive, atTarget, gated int
	mass, low                 float64
}

// plainTarget is benchConfig()'s target of both gates.
const plainTarget = 4096

func newStepPlainLoop(problems int) *stepPlainLoop {
	return &stepPlainLoop{
		plan:          newPaperPlanLoop(),
		members:       make([]int, problems*16),
		Search:        make([]float64, problems*8),
		Aggregation:   make([]float64, problems*16),
		SetScores:     make([]float64, problems*4),
		SetAdvantages: make([]float64, problems*4),
		Appearances:   make([]int, problems*8),
		NoSignal:      make([]bool, problems),
	}
}

// gate applies Eq. 8 to adv (of outputs of the given lengths) and adds to
// t. The
// tests of the sign and of the length are flags, not branches: on fresh
// inputs they go either way about as often, and the same loop with two
// branches there took more CPU time than CreditBatch at 256 problems
// (bench/compare.sh, 57.0 µs against 52.2 µs) at half its instructions.
// Only a gated entry, about one in ten, takes a branch, to the two-sum.
func (t *plainGateTally) gate(adv []float64, lengths []int) {
	lengths = lengths[:len(adv)]
	for i, a := range adv {
		l := lengths[i]
		pos := b2i(int64(math.Float64bits(a)) > 0) // a > 0, for a finite a
		gated := pos & b2i(l >= plainTarget)
		t.positive += pos
		t.atTarget += pos & b2i(l == plainTarget)
		t.gated += gated
		if gated != 0 {
			s := t.mass + a // two-sum: t.mass + a = s + the error, exactly
			z := s - t.mass
			t.low += (t.mass - (s - z)) + (a - z)
			t.mass = s
			adv[i] = 0
		}
	}
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// step plans the problems of keys at (seed, step) and credits them from
// rewards (16 a problem) and the lengths (8 and 16 a problem).
func (l *stepPlainLoop) step(seed, step uint64, keys []uint64, rewards []float64, searchLengths, aggLengths []int) {
	l.plan.planTo(l.members, seed, step, keys)
	l.search, l.agg = plainGateTally{}, plainGateTally{}
	l.searchLengths, l.outputLengths = len(keys)*8, len(keys)*16
	for q := range keys {
		rs := (*[16]float64)(rewards[q*16:])
		agg := (*[16]float64)(l.Aggregation[q*16:])
		scores := (*[4]float64)(l.SetScores[q*4:])
		setAdv := (*[4]float64)(l.SetAdvantages[q*4:])
		var fbar float64
		var aggOr uint64
		for i := range 4 {
			f := (rs[4*i] + rs[4*i+1] + rs[4*i+2] + rs[4*i+3]) / 4
			scores[i] = f
			fbar += f
			for j := 4 * i; j < 4*i+4; j++ {
				agg[j] = rs[j] - f
				aggOr |= math.Float64bits(agg[j])
			}
		}
		fbar /= 4
		var sum [8]float64
		var count [8]int
		ms := (*[16]int)(l.members[q*16:])
		for i := range 4 {
			a := scores[i] - fbar
			setAdv[i] = a
			for _, y := range ms[4*i : 4*i+4] {
				sum[y] += a
				count[y]++
			}
		}
		search := (*[8]float64)(l.Search[q*8:])
		app := (*[8]int)(l.Appearances[q*8:])
		var searchOr uint64
		for y := range 8 {
			a := sum[y] / float64(max(count[y], 1)) // +0 in no set
			search[y], app[y] = a, count[y]
			searchOr |= math.Float64bits(a)
		}
		l.NoSignal[q] = (aggOr|searchOr)&^(1<<63) == 0
		l.search.gate(search[:], searchLengths[q*8:q*8+8])
		l.agg.gate(agg[:], aggLengths[q*16:q*16+16])
	}
}

// TestStepPlainLoop: on 0/1 rewards the plain loop gives CreditBatch's
// outputs bit for bit (every sum is exact and every quotient rounded once
// in both): search and aggregation advantages, set scores and advantages,
// appearances, NoSignal, and both gates' reports. The batches hold
// problems with every reward equal and problems whose sets each score 0 or
// 1 (some of which give no signal), and outputs at, above and below the
// target, so that a loop that drops a set, a gate or NoSignal fails.
func TestStepPlainLoop(t *testing.T) {
	c := benchConfig()
	const problems = 256
	l := newStepPlainLoop(problems)
	var dst BatchCredit
	noSignal := 0
	for seed := uint64(1); seed <= 4; seed++ {
		in := paperBatch(c, problems, seed)
		for q := range problems {
			rs := in.Rewards[q*16 : q*16+16]
			switch q % 4 {
			case 1: // every reward equal
				for j := range rs {
					rs[j] = float64(q / 4 % 2)
				}
			case 2: // each set's rewards equal
				for i := range 4 {
					for j := range 4 {
						rs[4*i+j] = float64((q >> (2 + i)) & 1)
					}
				}
			}
			for j := range 4 { // some lengths at the target
				in.AggregationLengths[q*16+4*j+int(seed)%4] = plainTarget
			}
			in.SearchLengths[q*8+q%8] = plainTarget
		}
		if err := c.CreditBatch(&dst, in); err != nil {
			t.Fatal(err)
		}
		l.step(seed, 3, keys(problems), in.Rewards, in.SearchLengths, in.AggregationLengths)
		same := func(name string, got, want []float64) {
			t.Helper()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("seed %d: %s[%d] = %v, CreditBatch gives %v", seed, name, i, got[i], want[i])
				}
			}
		}
		same("Search", l.Search, dst.Search)
		same("Aggregation", l.Aggregation, dst.Aggregation)
		same("SetScores", l.SetScores, dst.SetScores)
		same("SetAdvantages", l.SetAdvantages, dst.SetAdvantages)
		for i, a := range dst.Appearances {
			if l.Appearances[i] != a {
				t.Fatalf("seed %d: Appearances[%d] = %d, CreditBatch gives %d", seed, i, l.Appearances[i], a)
			}
		}
		for q, ns := range dst.NoSignal {
			if l.NoSignal[q] != ns {
				t.Fatalf("seed %d: NoSignal[%d] = %v, CreditBatch gives %v", seed, q, l.NoSignal[q], ns)
			}
			if ns {
				noSignal++
			}
		}
		for _, r := range []struct {
			role  string
			outs  int
			tally plainGateTally
			want  plainReport
		}{
			{"Search", l.searchLengths, l.search, reportFields(dst.Gates.Search.Outputs, dst.Gates.Search.Positive, dst.Gates.Search.AtTarget, dst.Gates.Search.Gated, dst.Gates.Search.MassRemoved)},
			{"Aggregation", l.outputLengths, l.agg, reportFields(dst.Gates.Aggregation.Outputs, dst.Gates.Aggregation.Positive, dst.Gates.Aggregation.AtTarget, dst.Gates.Aggregation.Gated, dst.Gates.Aggregation.MassRemoved)},
		} {
			got := reportFields(r.outs, r.tally.positive, r.tally.atTarget, r.tally.gated, r.tally.mass+r.tally.low)
			if got != r.want || math.Float64bits(got.MassRemoved) != math.Float64bits(r.want.MassRemoved) {
				t.Fatalf("seed %d: the %s gate's report %+v, CreditBatch gives %+v", seed, r.role, got, r.want)
			}
			if r.want.AtTarget == 0 || r.want.Gated == r.want.AtTarget {
				t.Fatalf("seed %d: the %s gate saw %d outputs at the target and gated %d: the test needs both kinds", seed, r.role, r.want.AtTarget, r.want.Gated)
			}
		}
	}
	if noSignal == 0 || noSignal > 4*problems/2 {
		t.Fatalf("%d problems of %d give no signal: the test needs both kinds", noSignal, 4*problems)
	}
}

// plainReport is a lengthgate.Report's exported fields, comparable.
type plainReport struct {
	Outputs, Positive, AtTarget, Gated int
	MassRemoved                        float64
}

// reportFields returns the plainReport of the given fields.
func reportFields(outputs, positive, atTarget, gated int, mass float64) plainReport {
	return plainReport{outputs, positive, atTarget, gated, mass}
}

// BenchmarkStepPlainLoop times stepPlainLoop on the pool of fresh inputs
// and the keys and steps of BenchmarkStep/problems=B/spiral, the floor of
// its work; bench/cachegrind.sh counts its instructions when named and
// bench/compare.sh times it beside the numpy peer when named:
//
//	bench/cachegrind.sh BenchmarkStepPlainLoop/problems=256 256 BenchmarkStepPlainLoop/problems=1 1
//	bench/compare.sh 9 BenchmarkStep/problems=%d/spiral BenchmarkStepPlainLoop/problems=%d
func BenchmarkStepPlainLoop(b *testing.B) {
	for _, problems := range []int{256, 1} {
		b.Run(fmt.Sprintf("problems=%d", problems), func(b *testing.B) {
			pool := stepPool(benchConfig(), problems)
			l := newStepPlainLoop(problems)
			ks := keys(problems)
			step := uint64(0)
			i := 0
			cpubench.Loop(b, func() {
				in := &pool[i]
				if i++; i == len(pool) {
					i = 0
				}
				step++
				l.step(1, step, ks, in.Rewards, in.SearchLengths, in.AggregationLengths)
			})
		})
	}
}
