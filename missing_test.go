package spiral

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral/combin"
	"spiral/internal/spiraltest"
	"spiral/loss"
)

// missingToy is the toy of the missing-output checks: a search trace is
// symbol 1 with probability 2/3 (0 with 1/3), scored by a softmax whose
// score function along (-1, 1) is y - 2/3; an aggregation output is z = 1
// with probability s(ctx) = (1 + 2 ctx[0] + ctx[n-1])/5, order-sensitive,
// else z = 0, with reward 1 or 1/4, scored by a softmax over z with one
// parameter vector for every context, whose score along (-1, 1) is z - s;
// each output is missing with probability 1/4, independently of the rest.
// Every weight is an integer over a fixed denominator: 1 or 2 over 3 for a
// trace, 5 (missing), 3 a or 3 (5 - a) (z = 1 or 0, s = a/5) over 20 for an
// output.
type missingToy struct{ n int }

func (missingToy) traceWeight(y int) int64 { return int64(1 + y) } // over 3

func (t missingToy) a(ctx []int) int64 { return 1 + 2*int64(ctx[0]) + int64(ctx[len(ctx)-1]) } // s = a/5

var missingReward = [2]float64{0.25, 1}

// grads returns grad_search J and grad_agg J along (-1, 1): with y the n
// candidates read in order, E[f(y) sum_k (y_k - 2/3)] and
// E[s(y)(1 - s(y))(r1 - r0)].
func (t missingToy) grads() (search, agg *big.Rat) {
	search, agg = new(big.Rat), new(big.Rat)
	ctx := make([]int, t.n)
	for code := range 1 << t.n {
		w := big.NewRat(1, 1)
		score := new(big.Rat)
		for k := range t.n {
			ctx[k] = code >> k & 1
			w.Mul(w, big.NewRat(t.traceWeight(ctx[k]), 3))
			score.Add(score, big.NewRat(3*int64(ctx[k])-2, 3))
		}
		s := big.NewRat(t.a(ctx), 5)
		notS := new(big.Rat).Sub(big.NewRat(1, 1), s)
		f := new(big.Rat).Add(new(big.Rat).Mul(notS, big.NewRat(1, 4)), s)
		search.Add(search, f.Mul(f, score).Mul(f, w))
		v := new(big.Rat).Mul(s, notS)
		v.Mul(v, big.NewRat(3, 4)).Mul(v, w)
		agg.Add(agg, v)
	}
	return search, agg
}

// exactSum accumulates integer-weighted float64 values without rounding:
// x = mant 2^e with 0 < mant < 2^53 read off its bits, and w mant is added
// to a 128-bit accumulator per exponent e and sign (at most 2^97 in every
// use here).
type exactSum struct {
	// buckets[e-minSumExp] holds [sign][hi, lo] of exponent e; allocated
	// at the first add.
	buckets [][2][2]uint64
}

// minSumExp and maxSumExp bound the exponent e of x = mant 2^e over the
// finite nonzero float64 values: -1074 for the subnormals, 1023 - 52 for
// the largest.
const minSumExp, maxSumExp = -1074, 1023 - 52

func (e *exactSum) add(t *testing.T, w int64, x float64) {
	if x == 0 || w == 0 {
		return
	}
	b64 := math.Float64bits(x)
	biased := int(b64 >> 52 & 0x7ff)
	if biased == 0x7ff {
		t.Fatalf("exactSum: x = %v", x)
	}
	mant, exp := b64&(1<<52-1), minSumExp
	if biased > 0 {
		mant, exp = mant|1<<52, biased-1075
	}
	sign := int(b64 >> 63)
	if w < 0 {
		sign, w = 1-sign, -w
	}
	if e.buckets == nil {
		e.buckets = make([][2][2]uint64, maxSumExp-minSumExp+1)
	}
	b := &e.buckets[exp-minSumExp]
	hi, lo := bits.Mul64(uint64(w), mant)
	var carry uint64
	b[sign][1], carry = bits.Add64(b[sign][1], lo, 0)
	b[sign][0], carry = bits.Add64(b[sign][0], hi, carry)
	if carry != 0 || b[sign][0] >= 1<<62 {
		t.Fatal("exactSum: accumulator overflow")
	}
}

func (e *exactSum) rat() *big.Rat {
	r := new(big.Rat)
	for i, b := range e.buckets {
		exp := i + minSumExp
		for sign := range 2 {
			if b[sign] == [2]uint64{} {
				continue
			}
			v := new(big.Int).Lsh(new(big.Int).SetUint64(b[sign][0]), 64)
			v.Or(v, new(big.Int).SetUint64(b[sign][1]))
			if sign == 1 {
				v.Neg(v)
			}
			x := new(big.Rat).SetInt(v)
			if exp >= 0 {
				x.Mul(x, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(exp))))
			} else {
				x.Quo(x, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(-exp))))
			}
			r.Add(r, x)
		}
	}
	return r
}

// missingExpectation is the expected update of each option, per role,
// along (-1, 1).
type missingExpectation struct {
	search, agg *big.Rat
}

// expectMissing enumerates, for c (uniform subsets in index order), every
// selection of K of the C(N1, n) sets, every outcome of the N1 traces and
// every outcome of the K N2 outputs (missing, z = 0 or z = 1), credits
// every outcome with CreditBatch (one problem each, a batch per selection
// and traces) and returns the exact expected update of each of opts by
// LossCoefficients with loss.Sum. A missing output of an even set is marked
// Unscorable; one of an odd set is dropped (RewardCounts), unless all of
// its outputs are, when one is kept and marked Unscorable.
func expectMissing(t *testing.T, c Config, opts []LossOptions) []missingExpectation {
	t.Helper()
	n1, n, k, n2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
	toy := missingToy{n: n}
	var family [][]int
	for code := range 1 << n1 {
		var set []int
		for y := range n1 {
			if code>>y&1 == 1 {
				set = append(set, y)
			}
		}
		if len(set) == n {
			family = append(family, set)
		}
	}
	var selections [][]int
	var choose func(start int, sel []int)
	choose = func(start int, sel []int) {
		if len(sel) == k {
			selections = append(selections, append([]int(nil), sel...))
			return
		}
		for h := start; h < len(family); h++ {
			choose(h+1, append(sel, h))
		}
	}
	choose(0, nil)
	outputs := k * n2
	problems := 1
	for range outputs {
		problems *= 3
	}
	sums := make([][2]exactSum, len(opts)) // per option: the search and the aggregation update
	var (
		plans  Plans
		credit BatchCredit
		coefs  = make([]LossCoefficients, len(opts)) // one per option: each keeps its multipliers
		flat   = make([]int, 0, problems*k*n)
		in     Batch
		states = make([]int, problems*outputs) // 0 missing, 1 z = 0, 2 z = 1
		weight = make([]int64, problems)
		// where[q][o] is the position of output o of problem q in the
		// batch, or -1 when it was dropped.
		where = make([][]int, problems)
	)
	ys := make([]int, n1)
	as := make([]int64, k)
	for _, sel := range selections {
		flat = flat[:0]
		for range problems {
			for _, h := range sel {
				flat = append(flat, family[h]...)
			}
		}
		if err := c.CheckPlans(&plans, flat); err != nil {
			t.Fatal(err)
		}
		for traces := range 1 << n1 {
			var tw int64 = 1
			for y := range n1 {
				ys[y] = traces >> y & 1
				tw *= toy.traceWeight(ys[y])
			}
			ctx := make([]int, n)
			for i, h := range sel {
				for j, y := range family[h] {
					ctx[j] = ys[y]
				}
				as[i] = toy.a(ctx)
			}
			in = Batch{Plans: &plans, Rewards: in.Rewards[:0], Unscorable: in.Unscorable[:0], RewardCounts: in.RewardCounts[:0], SearchLengths: in.SearchLengths, AggregationLengths: in.AggregationLengths}
			for q := range problems {
				x := q
				var w int64 = 1
				state := states[q*outputs : (q+1)*outputs]
				for o := range outputs {
					state[o] = x % 3
					x /= 3
					switch a := as[o/n2]; state[o] {
					case 0:
						w *= 5
					case 1:
						w *= 3 * (5 - a)
					case 2:
						w *= 3 * a
					}
				}
				weight[q] = w
				where[q] = where[q][:0]
				for i := range k {
					count, missing := 0, 0
					for j := range n2 {
						if state[i*n2+j] == 0 {
							missing++
						}
					}
					for j := range n2 {
						o := i*n2 + j
						drop := i%2 == 1 && state[o] == 0 && !(missing == n2 && j == 0)
						if drop {
							where[q] = append(where[q], -1)
							continue
						}
						where[q] = append(where[q], len(in.Rewards))
						r := 0.0
						if state[o] > 0 {
							r = missingReward[state[o]-1]
						}
						in.Rewards = append(in.Rewards, r)
						in.Unscorable = append(in.Unscorable, state[o] == 0)
						count++
					}
					in.RewardCounts = append(in.RewardCounts, count)
				}
			}
			in.SearchLengths = ones(in.SearchLengths, problems*n1)
			in.AggregationLengths = ones(in.AggregationLengths, len(in.Rewards))
			if err := c.CreditBatch(&credit, in); err != nil {
				t.Fatal(err)
			}
			for i, opt := range opts {
				opt.Reduction = loss.Sum
				coef := &coefs[i]
				if err := c.LossCoefficients(coef, &credit, in, opt); err != nil {
					t.Fatal(err)
				}
				if coef.Report.Scale != 1 {
					t.Fatalf("loss.Sum: Scale = %v, want 1", coef.Report.Scale)
				}
				// Every weight times the score (y - 2/3 = (3y - 2)/3, z - a/5
				// = (5z - a)/5) and the traces' weight, over 15 more.
				ss := &sums[i]
				for q := range problems {
					w := weight[q] * tw
					for y := range n1 {
						ss[0].add(t, w*5*int64(3*ys[y]-2), coef.Search[q*n1+y])
					}
					for o := range outputs {
						if z := states[q*outputs+o] - 1; z >= 0 && where[q][o] >= 0 {
							ss[1].add(t, w*3*(5*int64(z)-as[o/n2]), coef.Aggregation[where[q][o]])
						}
					}
				}
			}
		}
	}
	// The common denominator: C(T, K) selections, 3^N1 for the traces,
	// 20^(K N2) for the outputs.
	den := new(big.Int).Mul(big.NewInt(int64(len(selections))), new(big.Int).Exp(big.NewInt(3), big.NewInt(int64(n1)), nil))
	den.Mul(den, new(big.Int).Exp(big.NewInt(20), big.NewInt(int64(outputs)), nil))
	d := new(big.Rat).SetInt(den.Mul(den, big.NewInt(15)))
	out := make([]missingExpectation, len(opts))
	for i := range opts {
		out[i] = missingExpectation{search: sums[i][0].rat().Quo(sums[i][0].rat(), d), agg: sums[i][1].rat().Quo(sums[i][1].rat(), d)}
	}
	return out
}

// missingConstants returns, exactly, for c and delta: E[M(K')] (uniform
// design), K E[(S-1)+] or K E[S; S >= 2], P(K' >= 2) and P(S >= 2), from
// the distributions of S ~ Binomial(N2, 1 - delta) and K' ~ Binomial(K,
// 1 - delta^N2) summed term by term (not the closed forms of missing.go).
func missingConstants(t *testing.T, c Config, delta *big.Rat) (em, ka, pk, ps *big.Rat) {
	k, n2 := c.Sets, c.AggregationsPerSet
	one := big.NewRat(1, 1)
	binom := func(n, j int, p *big.Rat) *big.Rat { // P(Binomial(n, p) = j)
		v := new(big.Rat).SetInt(new(big.Int).Binomial(int64(n), int64(j)))
		v.Mul(v, ratPow(p, j))
		return v.Mul(v, ratPow(new(big.Rat).Sub(one, p), n-j))
	}
	keep := new(big.Rat).Sub(one, delta)
	ea, ps := new(big.Rat), new(big.Rat)
	for s := 2; s <= n2; s++ {
		p := binom(n2, s, keep)
		ps.Add(ps, p)
		a := int64(s - 1)
		if c.AggregationBaseline == LeaveOneOut {
			a = int64(s)
		}
		ea.Add(ea, new(big.Rat).Mul(p, big.NewRat(a, 1)))
	}
	ka = ea.Mul(ea, big.NewRat(int64(k), 1))
	kept := new(big.Rat).Sub(one, ratPow(delta, n2))
	em, pk = new(big.Rat), new(big.Rat)
	for kk := 2; kk <= k; kk++ {
		ck := c
		ck.Sets = kk
		m, err := ck.M()
		if err != nil {
			t.Fatal(err)
		}
		p := binom(k, kk, kept)
		pk.Add(pk, p)
		em.Add(em, new(big.Rat).Mul(p, m))
	}
	return em, ka, pk, ps
}

// closeRat reports whether got is want to a relative 2^-40 (the rounding
// of the float64 coefficients the enumeration adds up exactly).
func closeRat(got, want *big.Rat) bool {
	diff := new(big.Rat).Sub(got, want)
	diff.Abs(diff)
	bound := new(big.Rat).Abs(want)
	bound.Mul(bound, big.NewRat(1, 1<<40))
	return diff.Cmp(bound) <= 0
}

// TestMissingOutputsByEnumeration enumerates every selection of sets,
// every trace outcome, every aggregation outcome and every missing pattern
// (each output missing with probability 1/4; missing outputs of even sets
// marked Unscorable, of odd sets dropped) at five configurations and both
// baselines, credits each outcome with CreditBatch and weights it with
// LossCoefficients (loss.Sum), and checks the exact expected update of
// each role against the role's gradient: ScoredGradient and JointGradient
// with MissingRate = 1/4 give grad J (constant 1 on both roles); the
// paper's update gives RoleWeights' expected-count weights E[M(K')] and
// K E[(S-1)+] (K E[S; S >= 2] leave one out); JointGradient without a rate
// (MissingRate 0) gives E[M(K')]/M and E[(S-1)+]/(N2-1) (E[S; S >= 2]/N2),
// not 1; ScoredGradient with MissingRate 0 gives P(K' >= 2) and P(S >= 2).
// 4/2/3/2 (233,280 outcomes with leave one out) runs under SPIRAL_LONG=1,
// and 3/2/3/2, whose one selection of three sets takes 8 batches, by
// default; under the race detector only 4/2/2/2 and 2/1/2/3 run.
func TestMissingOutputsByEnumeration(t *testing.T) {
	delta := big.NewRat(1, 4)
	opts := []LossOptions{
		{Update: ScoredGradient, MissingRate: 0.25},
		{Update: JointGradient, MissingRate: 0.25},
		{Update: PaperUpdate},
		{Update: JointGradient},
		{Update: ScoredGradient},
	}
	one := big.NewRat(1, 1)
	for _, shape := range [][4]int{{4, 2, 2, 2}, {3, 2, 3, 2}, {4, 2, 3, 2}, {5, 3, 2, 2}, {2, 1, 2, 3}} {
		for _, base := range []AggregationBaseline{WithinSet, LeaveOneOut} {
			c := Config{SearchTraces: shape[0], SetSize: shape[1], Sets: shape[2], AggregationsPerSet: shape[3], AggregationBaseline: base}
			if shape == [4]int{4, 2, 3, 2} && !spiraltest.Long() {
				continue // the largest enumeration, 233,280 outcomes: long only (3/2/3/2 has K = 3 by default)
			}
			if raceEnabled && shape[0] > 4 || raceEnabled && shape[2] == 3 {
				continue // nothing concurrent: the race detector's run keeps the two smallest
			}
			t.Run(fmt.Sprintf("%d/%d/%d/%d/%v", shape[0], shape[1], shape[2], shape[3], base), func(t *testing.T) {
				gs, ga := missingToy{n: c.SetSize}.grads()
				em, ka, pk, ps := missingConstants(t, c, delta)
				m, err := c.M()
				if err != nil {
					t.Fatal(err)
				}
				a := int64(c.AggregationsPerSet - 1)
				if base == LeaveOneOut {
					a++
				}
				unscaled := new(big.Rat).Quo(ka, big.NewRat(int64(c.Sets)*a, 1))
				want := [][2]*big.Rat{
					{one, one},
					{one, one},
					{em, ka},
					{new(big.Rat).Quo(em, m), unscaled},
					{pk, ps},
				}
				w, err := c.RoleWeights(LossOptions{MissingRate: 0.25})
				if err != nil {
					t.Fatal(err)
				}
				if w.Search.Cmp(em) != 0 || w.Aggregation.Cmp(ka) != 0 {
					t.Errorf("RoleWeights(MissingRate 1/4) = %s, %s; want E[M(K')] = %s, %s", w.Search.RatString(), w.Aggregation.RatString(), em.RatString(), ka.RatString())
				}
				got := expectMissing(t, c, opts)
				for i, opt := range opts {
					rs := new(big.Rat).Quo(got[i].search, gs)
					ra := new(big.Rat).Quo(got[i].agg, ga)
					if !closeRat(rs, want[i][0]) || !closeRat(ra, want[i][1]) {
						t.Errorf("%v, MissingRate %v: E[update] = %s grad_search J + %s grad_agg J, want %s and %s",
							opt.Update, opt.MissingRate, rs.FloatString(12), ra.FloatString(12), want[i][0].RatString(), want[i][1].RatString())
					}
				}
				t.Logf("delta = 1/4: paper's update weights %s (M = %s) and %s (K a = %d); JointGradient without a rate %s and %s",
					em.RatString(), m.RatString(), ka.RatString(), int64(c.Sets)*a, new(big.Rat).Quo(em, m).RatString(), unscaled.RatString())
			})
		}
	}
}

// TestMissingOutputsMonteCarlo simulates the paper's configuration (8/4/4/4,
// uniform and balanced designs, both baselines) on missingToy with each
// aggregation output missing with probability 1/4 (Unscorable), through the
// Planner, CreditBatch and LossCoefficients, and checks that ScoredGradient
// (MissingRate 1/4) gives each role's gradient within 4 standard errors,
// and, for the uniform design, that JointGradient with MissingRate 1/4 does
// too while JointGradient without a rate (MissingRate 0) is off by its exact bias
// E[M(K')]/M and E[(S-1)+]/(N2-1) (E[S; S >= 2]/N2), also within 4
// standard errors. 20,000 problems; 10^6 under SPIRAL_LONG=1.
func TestMissingOutputsMonteCarlo(t *testing.T) {
	problems := 20_000
	if spiraltest.Long() {
		problems = 1_000_000
	}
	const batch = 500
	delta := big.NewRat(1, 4)
	toy := missingToy{n: 4}
	gs, ga := toy.grads()
	gsf, _ := gs.Float64()
	gaf, _ := ga.Float64()
	for _, design := range []combin.Design{combin.Uniform, combin.Balanced} {
		for _, base := range []AggregationBaseline{WithinSet, LeaveOneOut} {
			c := Paper()
			c.Design, c.AggregationBaseline = design, base
			opts := []LossOptions{{Update: ScoredGradient, MissingRate: 0.25}}
			want := [][2]float64{{1, 1}}
			if design == combin.Uniform {
				em, ka, _, _ := missingConstants(t, c, delta)
				m, _ := c.M()
				a := int64(c.AggregationsPerSet - 1)
				if base == LeaveOneOut {
					a++
				}
				bs, _ := new(big.Rat).Quo(em, m).Float64()
				ba, _ := new(big.Rat).Quo(ka, big.NewRat(int64(c.Sets)*a, 1)).Float64()
				opts = append(opts, LossOptions{Update: JointGradient, MissingRate: 0.25}, LossOptions{Update: JointGradient})
				want = append(want, [2]float64{1, 1}, [2]float64{bs, ba})
			}
			t.Run(fmt.Sprintf("%v/%v", design, base), func(t *testing.T) {
				planner, err := c.NewPlanner()
				if err != nil {
					t.Fatal(err)
				}
				rnd := rand.New(rand.NewPCG(uint64(design), uint64(base)))
				n1, n, k, n2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
				var (
					plans  Plans
					credit BatchCredit
					coef   LossCoefficients
					ys     = make([]int, batch*n1)
					zs     = make([]int, batch*k*n2)
					ss     = make([]float64, batch*k*n2)
					ctx    = make([]int, n)
					sum    = make([][2]float64, len(opts))
					sumSq  = make([][2]float64, len(opts))
				)
				in := Batch{Plans: &plans, Rewards: make([]float64, batch*k*n2), Unscorable: make([]bool, batch*k*n2),
					SearchLengths: ones(nil, batch*n1), AggregationLengths: ones(nil, batch*k*n2)}
				for step := range problems / batch {
					if err := planner.PlanTo(&plans, 7, uint64(step), keys(batch)); err != nil {
						t.Fatal(err)
					}
					for y := range ys {
						ys[y] = 0
						if rnd.IntN(3) < 2 {
							ys[y] = 1
						}
					}
					for q := range batch {
						for i := range k {
							for j := range n {
								ctx[j] = ys[q*n1+plans.Member(q, i, j)]
							}
							s := float64(toy.a(ctx)) / 5
							for j := range n2 {
								o := (q*k+i)*n2 + j
								zs[o], ss[o] = 0, s
								if rnd.Float64() < s {
									zs[o] = 1
								}
								in.Rewards[o] = missingReward[zs[o]]
								in.Unscorable[o] = rnd.IntN(4) == 0
							}
						}
					}
					if err := c.CreditBatch(&credit, in); err != nil {
						t.Fatal(err)
					}
					for i, opt := range opts {
						if err := c.LossCoefficients(&coef, &credit, in, opt); err != nil {
							t.Fatal(err)
						}
						for q := range batch {
							var u [2]float64
							for y := range n1 {
								u[0] += coef.Search[q*n1+y] * (float64(ys[q*n1+y]) - 2.0/3)
							}
							for o := q * k * n2; o < (q+1)*k*n2; o++ {
								u[1] += coef.Aggregation[o] * (float64(zs[o]) - ss[o])
							}
							u[0] /= gsf
							u[1] /= gaf
							for r := range 2 {
								sum[i][r] += u[r]
								sumSq[i][r] += u[r] * u[r]
							}
						}
					}
				}
				np := float64(problems / batch * batch)
				for i, opt := range opts {
					for r, role := range []string{"search", "aggregation"} {
						mean := sum[i][r] / np
						se := math.Sqrt((sumSq[i][r]/np - mean*mean) / np)
						z := (mean - want[i][r]) / se
						t.Logf("%v, MissingRate %v, %s: E[update]/grad = %.5f ± %.5f, want %.5f (z = %.2f)", opt.Update, opt.MissingRate, role, mean, se, want[i][r], z)
						if math.Abs(z) > 4 {
							t.Errorf("%v, MissingRate %v, %s: %.5f ± %.5f, want %.5f (z = %.2f)", opt.Update, opt.MissingRate, role, mean, se, want[i][r], z)
						}
					}
				}
			})
		}
	}
}

// TestScoredGradientWithoutMissing: with every output scored and
// MissingRate 0, ScoredGradient's coefficients are JointGradient's (K' = K
// and S = N2 in every problem and set), for every reduction, split or
// pooled, both baselines and both designs; and the errors of a bad rate.
func TestScoredGradientWithoutMissing(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, c := range []Config{Paper(), {SearchTraces: 5, SetSize: 2, Sets: 3, AggregationsPerSet: 3, AggregationBaseline: LeaveOneOut}, {SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Design: combin.Balanced}} {
		planner, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		in := Batch{Plans: new(Plans)}
		if err := planner.PlanTo(in.Plans, 1, 2, keys(3)); err != nil {
			t.Fatal(err)
		}
		in.Rewards = make([]float64, 3*c.AggregationOutputs())
		in.AggregationLengths = make([]int, len(in.Rewards))
		in.SearchLengths = make([]int, 3*c.SearchTraces)
		for o := range in.Rewards {
			in.Rewards[o], in.AggregationLengths[o] = float64(rnd.IntN(2)), rnd.IntN(9)
		}
		for y := range in.SearchLengths {
			in.SearchLengths[y] = rnd.IntN(9)
		}
		var b BatchCredit
		if err := c.CreditBatch(&b, in); err != nil {
			t.Fatal(err)
		}
		var joint, scored LossCoefficients
		for r := range loss.Reduction(12) {
			for _, split := range []bool{false, true} {
				opt := LossOptions{Reduction: r, SplitRoles: split}
				if err := c.LossCoefficients(&joint, &b, in, opt); err != nil {
					t.Fatal(err)
				}
				opt.Update = ScoredGradient
				if err := c.LossCoefficients(&scored, &b, in, opt); err != nil {
					t.Fatal(err)
				}
				for o, x := range append(append([]float64(nil), joint.Search...), joint.Aggregation...) {
					y := append(append([]float64(nil), scored.Search...), scored.Aggregation...)[o]
					if math.Abs(x-y) > 1e-15*math.Abs(x) {
						t.Fatalf("%v %v split %v: coefficient %d: ScoredGradient %v, JointGradient %v", c.Design, r, split, o, y, x)
					}
				}
			}
		}
		for _, delta := range []float64{-0.1, 1, math.NaN(), math.Inf(1)} {
			err := c.LossCoefficients(&scored, &b, in, LossOptions{Update: ScoredGradient, MissingRate: delta})
			if e, ok := errors.AsType[*InputError](err); !ok || e.Field != "LossOptions.MissingRate" {
				t.Errorf("MissingRate %v: %v, want an *InputError about LossOptions.MissingRate", delta, err)
			}
		}
	}
	c := Paper()
	c.Design = combin.Balanced
	if _, err := c.RoleWeights(LossOptions{MissingRate: 0.1}); err == nil {
		t.Error("balanced design with a missing rate: RoleWeights gave no error")
	}
	if _, err := Paper().RoleWeights(LossOptions{MissingRate: 0.1, Reduction: loss.SeqMeanTokenSum}); err == nil {
		t.Error("a mean reduction with a missing rate: RoleWeights gave no error")
	}
}

// TestRoleWeightsMissingRate: the expected-count weights at the paper's
// configuration for delta = 1/4 are E[M(K')] and K E[(S-1)+] = 12 - 4 + 1/64
// ... summed term by term (missingConstants), exactly; delta = 0 gives
// the weights of every output scored; and a large K has float weights only.
func TestRoleWeightsMissingRate(t *testing.T) {
	for _, base := range []AggregationBaseline{WithinSet, LeaveOneOut} {
		c := Paper()
		c.AggregationBaseline = base
		w, err := c.RoleWeights(LossOptions{MissingRate: 0.25})
		if err != nil {
			t.Fatal(err)
		}
		em, ka, _, _ := missingConstants(t, c, big.NewRat(1, 4))
		if w.Search.Cmp(em) != 0 || w.Aggregation.Cmp(ka) != 0 {
			t.Errorf("%v: RoleWeights = %s, %s; want %s, %s", base, w.Search.RatString(), w.Aggregation.RatString(), em.RatString(), ka.RatString())
		}
		if f, _ := em.Float64(); math.Abs(w.SearchFloat-f) > 1e-15 || w.SearchMultiplier != 1/f {
			t.Errorf("%v: SearchFloat %v, multiplier %v; want %v", base, w.SearchFloat, w.SearchMultiplier, f)
		}
		t.Logf("%v: E[M(K')] = %s ~ %.6f, K E[a] = %s ~ %.6f", base, em.RatString(), w.SearchFloat, ka.RatString(), w.AggregationFloat)
	}
	// K = 100 > 64: floats, against the exact sum.
	c := Config{SearchTraces: 12, SetSize: 3, Sets: 100, AggregationsPerSet: 2}
	w, err := c.RoleWeights(LossOptions{MissingRate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	em, ka, _, _ := missingConstants(t, c, big.NewRat(1, 2))
	emf, _ := em.Float64()
	kaf, _ := ka.Float64()
	if w.Search != nil || math.Abs(w.SearchFloat-emf) > 1e-12*emf || math.Abs(w.AggregationFloat-kaf) > 1e-12*kaf {
		t.Errorf("K = 100: RoleWeights %v, %v (exact %v); want %v, %v", w.SearchFloat, w.AggregationFloat, w.Search, emf, kaf)
	}
}

// ones returns s with length n, every entry 1.
func ones(s []int, n int) []int {
	s = append(s[:0], make([]int, n)...)
	for i := range s {
		s[i] = 1
	}
	return s
}

// TestScoredGradientAdvantageCoefficients: AdvantageCoefficients with
// ScoredGradient reads the counts from the Batch's RewardCounts and
// Unscorable and gives LossCoefficients' coefficients bit for bit, on
// ragged batches with unscorable outputs and empty sets, both designs.
func TestScoredGradientAdvantageCoefficients(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	for _, c := range []Config{Paper(), {SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Design: combin.Balanced, AggregationBaseline: LeaveOneOut}} {
		planner, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
			in := Batch{Plans: new(Plans), RewardCounts: make([]int, 4*c.Sets)}
			if err := planner.PlanTo(in.Plans, 3, uint64(trial), keys(4)); err != nil {
				t.Fatal(err)
			}
			for s := range in.RewardCounts {
				in.RewardCounts[s] = 1 + rnd.IntN(c.AggregationsPerSet)
				for range in.RewardCounts[s] {
					in.Rewards = append(in.Rewards, float64(rnd.IntN(2)))
					in.Unscorable = append(in.Unscorable, rnd.IntN(3) == 0)
					in.AggregationLengths = append(in.AggregationLengths, rnd.IntN(9))
				}
			}
			in.SearchLengths = make([]int, 4*c.SearchTraces)
			var b BatchCredit
			if err := c.CreditBatch(&b, in); err != nil {
				t.Fatal(err)
			}
			opt := LossOptions{Update: ScoredGradient, Reduction: loss.SeqMeanTokenSum, MissingRate: 0.2}
			var want, got LossCoefficients
			if err := c.LossCoefficients(&want, &b, in, opt); err != nil {
				t.Fatal(err)
			}
			if err := c.AdvantageCoefficients(&got, b.Search, b.Aggregation, in, opt); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Search, want.Search) || !slices.Equal(got.Aggregation, want.Aggregation) {
				t.Fatalf("%v trial %d: AdvantageCoefficients %v %v, LossCoefficients %v %v", c.Design, trial, got.Search, got.Aggregation, want.Search, want.Aggregation)
			}
		}
	}
}
