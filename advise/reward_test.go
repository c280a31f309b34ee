package advise

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"spiral"
	"spiral/budget"
	"spiral/combin"
	"spiral/estimator"
	"spiral/internal/spiraltest"
)

// bruteMoments are the moments of the whole update of one problem found by
// enumerating every outcome: the traces, the selection and every set's
// number of correct outputs (all that the update depends on, the rewards of
// a set entering only through how many are 1).
type bruteMoments struct {
	// Eg, E||g||^2, E_S||E[g|S]||^2 and E||E[g|S,y]||^2 of the search
	// update g.
	g                   [2]*big.Rat
	gSq, gSets, gTraces *big.Rat
	// E[u], E||u||^2 and E||E[u|S,y]||^2 of the aggregation update u, whose
	// component ctx*2 + z is output z's logit in context ctx, and E[v],
	// E||v||^2 of v, u under the leave-one-out baseline.
	u, v             []*big.Rat
	uSq, uTrace, vSq *big.Rat
}

// designOf returns the exact law of cfg's sets (subsets, its design).
func designOf(t *testing.T, cfg spiral.Config) *estimator.SetDistribution {
	t.Helper()
	f, err := combin.Subsets(cfg.SearchTraces, cfg.SetSize)
	if err != nil {
		t.Fatal(err)
	}
	var d *estimator.SetDistribution
	if cfg.Design == combin.Uniform {
		d, err = estimator.UniformSets(f, cfg.Sets)
	} else {
		d, err = estimator.BalancedSets(f, cfg.Sets)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// bruteRule computes the moments for a search trace correct with
// probability p, and an aggregation output correct with probability found
// when at least need of its set's candidates are correct and missed
// otherwise. The credit is the paper's: set score the mean reward, search
// advantage the mean of f_k - fbar over the sets holding the trace,
// aggregation advantage r - f_k, both multiplying their score e_z - pi.
// With shuffled true each set is presented to the aggregator in one of its
// n! orders, uniformly and independently, and the conditional moments
// condition on the presentations too. When visit is not nil it is called
// with every outcome's search update g, aggregation update u (by
// component) and probability.
func bruteRule(d *estimator.SetDistribution, p, found, missed *big.Rat, need, N2 int, shuffled bool, visit func(g [2]*big.Rat, u map[int]*big.Rat, prob *big.Rat)) bruteMoments {
	N, n := d.Traces(), d.SetSize()
	one := big.NewRat(1, 1)
	q := new(big.Rat).Sub(one, p)
	r := bruteMoments{gSq: new(big.Rat), gSets: new(big.Rat), gTraces: new(big.Rat), uSq: new(big.Rat), uTrace: new(big.Rat), vSq: new(big.Rat)}
	r.g = [2]*big.Rat{new(big.Rat), new(big.Rat)}
	r.u, r.v = make([]*big.Rat, 2<<n), make([]*big.Rat, 2<<n)
	for i := range r.u {
		r.u[i], r.v[i] = new(big.Rat), new(big.Rat)
	}
	prod := new(big.Rat) // dst += x w through one scratch product
	add := func(dst, x, w *big.Rat) { dst.Add(dst, prod.Mul(x, w)) }
	// binom(s, x) = P(Binomial(N2, s) = x), for s found or missed, computed
	// once per (s, x).
	binoms := map[*big.Rat][]*big.Rat{}
	binom := func(s *big.Rat, x int) *big.Rat {
		if bs, ok := binoms[s]; ok {
			return bs[x]
		}
		bs := make([]*big.Rat, N2+1)
		for x := range bs {
			b := new(big.Rat).SetInt(new(big.Int).Binomial(int64(N2), int64(x)))
			for range x {
				b.Mul(b, s)
			}
			for range N2 - x {
				b.Mul(b, new(big.Rat).Sub(one, s))
			}
			bs[x] = b
		}
		binoms[s] = bs
		return bs[x]
	}
	for sel, pS := range d.Selections() {
		K := len(sel)
		sets := make([][]int, K)
		for k, h := range sel {
			sets[k] = d.Set(h)
		}
		gS := [2]*big.Rat{new(big.Rat), new(big.Rat)}
		orders := [][]int{identity(n)}
		if shuffled {
			orders = nil
			for perm := range permutations(n) {
				orders = append(orders, slices.Clone(perm))
			}
		}
		presentations := 1
		for range K {
			presentations *= len(orders)
		}
		for code := range (1 << N) * presentations {
			correct := make([]bool, N)
			pY := new(big.Rat).Set(pS)
			for i := range N {
				correct[i] = code>>i&1 == 1
				if correct[i] {
					pY.Mul(pY, p)
				} else {
					pY.Mul(pY, q)
				}
			}
			pY.Quo(pY, big.NewRat(int64(presentations), 1))
			// Each set's presentation, context and success probability.
			pres := code >> N
			ctx := make([]int, K)
			s := make([]*big.Rat, K)
			for k, set := range sets {
				order := orders[pres%len(orders)]
				pres /= len(orders)
				c := 0
				for _, j := range order {
					i := set[j]
					ctx[k] *= 2
					if correct[i] {
						c++
					} else {
						ctx[k]++ // symbol 1 is wrong
					}
				}
				s[k] = missed
				if c >= need {
					s[k] = found
				}
			}
			gY := [2]*big.Rat{new(big.Rat), new(big.Rat)}
			uY := map[int]*big.Rat{}
			X := make([]int, K)
			for {
				pX := new(big.Rat).Set(pY)
				for k := range K {
					pX.Mul(pX, binom(s[k], X[k]))
				}
				f := make([]*big.Rat, K)
				fbar := new(big.Rat)
				for k := range K {
					f[k] = big.NewRat(int64(X[k]), int64(N2))
					fbar.Add(fbar, f[k])
				}
				fbar.Quo(fbar, big.NewRat(int64(K), 1))
				// g = sum_i A_search(i) (e_{y_i} - (p, q)).
				g := [2]*big.Rat{new(big.Rat), new(big.Rat)}
				for i := range N {
					a, holders := new(big.Rat), 0
					for k, set := range sets {
						for _, j := range set {
							if j == i {
								a.Add(a, new(big.Rat).Sub(f[k], fbar))
								holders++
							}
						}
					}
					if holders == 0 {
						continue
					}
					a.Quo(a, big.NewRat(int64(holders), 1))
					score := [2]*big.Rat{new(big.Rat).Neg(p), new(big.Rat).Neg(q)}
					if correct[i] {
						score[0].Add(score[0], one)
					} else {
						score[1].Add(score[1], one)
					}
					add(g[0], score[0], a)
					add(g[1], score[1], a)
				}
				// u: output j of set k is correct (z = 0, reward 1) for
				// j < X[k], else wrong (z = 1, reward 0).
				u, loo := map[int]*big.Rat{}, map[int]*big.Rat{}
				for k := range K {
					for j := range N2 {
						reward, z := new(big.Rat), 1
						if j < X[k] {
							reward, z = big.NewRat(1, 1), 0
						}
						adv := new(big.Rat).Sub(reward, f[k])
						// The others' mean: (N2 f - r)/(N2 - 1).
						others := new(big.Rat).Mul(f[k], big.NewRat(int64(N2), 1))
						others.Sub(others, reward).Quo(others, big.NewRat(int64(N2-1), 1))
						advLOO := new(big.Rat).Sub(reward, others)
						for out, pi := range []*big.Rat{s[k], new(big.Rat).Sub(one, s[k])} {
							score := new(big.Rat).Neg(pi)
							if out == z {
								score.Add(score, one)
							}
							key := ctx[k]*2 + out
							if u[key] == nil {
								u[key], loo[key] = new(big.Rat), new(big.Rat)
							}
							add(u[key], score, adv)
							add(loo[key], score, advLOO)
						}
					}
				}
				if visit != nil {
					visit(g, u, pX)
				}
				for v := range 2 {
					add(r.g[v], g[v], pX)
					add(gY[v], g[v], pX)
					add(r.gSq, new(big.Rat).Mul(g[v], g[v]), pX)
				}
				for key, x := range u {
					add(r.u[key], x, pX)
					if uY[key] == nil {
						uY[key] = new(big.Rat)
					}
					add(uY[key], x, pX)
					add(r.uSq, new(big.Rat).Mul(x, x), pX)
				}
				for key, x := range loo {
					add(r.v[key], x, pX)
					add(r.vSq, new(big.Rat).Mul(x, x), pX)
				}
				k := 0
				for ; k < K; k++ {
					if X[k]++; X[k] <= N2 {
						break
					}
					X[k] = 0
				}
				if k == K {
					break
				}
			}
			// gY and uY hold P(S, y) E[. | S, y].
			for v := range 2 {
				gS[v].Add(gS[v], gY[v])
				r.gTraces.Add(r.gTraces, new(big.Rat).Quo(new(big.Rat).Mul(gY[v], gY[v]), pY))
			}
			for _, x := range uY {
				r.uTrace.Add(r.uTrace, new(big.Rat).Quo(new(big.Rat).Mul(x, x), pY))
			}
		}
		for v := range 2 {
			r.gSets.Add(r.gSets, new(big.Rat).Quo(new(big.Rat).Mul(gS[v], gS[v]), pS))
		}
	}
	return r
}

// The needs-m and majority rules (and the zero rule, find one) agree with a
// brute-force enumeration of every outcome, to the last rational: the
// candidate Advise ranks has the enumerated signal, Var(g/M), its set and
// noise terms, Var(u/(K a)), its outputs term and the SNR of the whole
// update, on uniform and balanced designs. Majority at n = 4 scores a tie of
// two correct candidates as Missed. Under the leave-one-out baseline, whose
// weight is K N2 (spiral.Config.RoleWeights), the scaled update has the
// same signal and variance.
func TestRewardRulesBruteForce(t *testing.T) {
	p, found, missed := big.NewRat(1, 3), big.NewRat(4, 5), big.NewRat(1, 6)
	for _, x := range []struct {
		N1, n, K, N2 int
		design       combin.Design
		rule         Rule
		needs, want  int // want: the least count the brute force accepts
		order        combin.Order
	}{
		{4, 2, 2, 2, combin.Uniform, NeedsPieces, 2, 2, combin.IndexOrder},
		{4, 3, 2, 2, combin.Uniform, NeedsPieces, 2, 2, combin.IndexOrder},
		{5, 4, 2, 2, combin.Uniform, Majority, 0, 3, combin.IndexOrder},
		{4, 3, 3, 2, combin.Balanced, Majority, 0, 2, combin.IndexOrder},
		{4, 3, 2, 3, combin.Balanced, NeedsPieces, 3, 3, combin.IndexOrder},
		{3, 2, 2, 2, combin.Uniform, FindOne, 0, 1, combin.IndexOrder},
		{3, 2, 2, 2, combin.Uniform, FindOne, 0, 1, combin.Shuffled},
		{4, 2, 2, 2, combin.Uniform, Majority, 0, 2, combin.Shuffled},  // long
		{4, 3, 2, 2, combin.Balanced, Majority, 0, 2, combin.Shuffled}, // long: n!^K = 36 presentations
	} {
		if x.N1 > 3 && x.order == combin.Shuffled && !spiraltest.Long() {
			continue
		}
		model := RewardModel{Correct: p, Found: found, Missed: missed, Rule: x.rule, Needs: x.needs}
		res, err := Advise(Request{Budget: 1 << 40, Lengths: budget.Limits{Search: 1, Aggregation: 1}, Reward: model,
			MaxTraces: x.N1, MaxSets: x.K, MaxAggregations: x.N2, SetSizes: []int{x.n}, Order: x.order})
		if err != nil {
			t.Fatal(err)
		}
		cfg := spiral.Paper()
		cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design, cfg.Order = x.N1, x.n, x.K, x.N2, x.design, x.order
		var cand *Candidate
		for i := range res.Candidates {
			if res.Candidates[i].Config == cfg {
				cand = &res.Candidates[i]
			}
		}
		if cand == nil {
			t.Fatalf("%+v: not among %d candidates", x, len(res.Candidates))
		}
		d := designOf(t, cfg)
		b := bruteRule(d, p, found, missed, x.want, x.N2, x.order == combin.Shuffled, nil)
		sq := func(v ...*big.Rat) *big.Rat { return sqNorm(v) }
		m2 := new(big.Rat).Mul(cand.Variance.M, cand.Variance.M)
		w2 := new(big.Rat).Mul(cand.Aggregation.Weight, cand.Aggregation.Weight)
		looCfg := cfg
		looCfg.AggregationBaseline = spiral.LeaveOneOut
		loo, err := looCfg.RoleWeights(spiral.LossOptions{})
		if err != nil {
			t.Fatal(err)
		}
		looW2 := new(big.Rat).Mul(loo.Aggregation, loo.Aggregation)
		over := func(x, y, w *big.Rat) *big.Rat { z := new(big.Rat).Sub(x, y); return z.Quo(z, w) }
		gMean, uMean := sq(b.g[:]...), sq(b.u...)
		v, a := cand.Variance, cand.Aggregation
		for _, c := range []struct {
			name      string
			got, want *big.Rat
		}{
			{"search signal", v.Signal, new(big.Rat).Quo(gMean, m2)},
			{"Var(g/M)", v.Total(x.N2), over(b.gSq, gMean, m2)},
			{"search sets term", v.Sets, over(b.gSets, gMean, m2)},
			{"search noise term", v.Noise(x.N2), over(b.gSq, b.gTraces, m2)},
			{"aggregation signal", a.Signal, new(big.Rat).Quo(uMean, w2)},
			{"Var(u/(K a))", a.Total(), over(b.uSq, uMean, w2)},
			{"aggregation outputs term", a.Outputs, over(b.uSq, b.uTrace, w2)},
			{"leave-one-out signal", a.Signal, new(big.Rat).Quo(sq(b.v...), looW2)},
			{"leave-one-out Var(u/(K N2))", a.Total(), over(b.vSq, sq(b.v...), looW2)},
		} {
			if c.got.Cmp(c.want) != 0 {
				t.Errorf("%+v %s = %v, brute force %v", x, c.name, c.got, c.want)
			}
		}
		signal := new(big.Rat).Add(v.Signal, a.Signal)
		snr := signal.Quo(signal, new(big.Rat).Add(over(b.gSq, gMean, m2), over(b.uSq, uMean, w2)))
		if cand.SNR.Cmp(snr) != 0 {
			t.Errorf("%+v SNR = %v, brute force %v", x, cand.SNR, snr)
		}
	}
}

// Needed follows each rule's definition, and the rules' tables differ from
// find one exactly where fewer than m candidates are correct.
func TestRewardNeeded(t *testing.T) {
	for _, x := range []struct {
		model RewardModel
		n     int
		want  int
	}{
		{RewardModel{}, 5, 1},
		{RewardModel{Rule: NeedsPieces, Needs: 1}, 3, 1},
		{RewardModel{Rule: NeedsPieces, Needs: 3}, 3, 3},
		{RewardModel{Rule: Majority}, 2, 2},
		{RewardModel{Rule: Majority}, 3, 2},
		{RewardModel{Rule: Majority}, 4, 3},
		{RewardModel{Rule: Majority}, 7, 4},
	} {
		got, err := x.model.Needed(x.n)
		if err != nil || got != x.want {
			t.Errorf("%v/%d at n = %d: %d, %v; want %d", x.model.Rule, x.model.Needs, x.n, got, err, x.want)
		}
	}
	for _, bad := range []struct {
		model RewardModel
		n     int
	}{
		{RewardModel{Rule: NeedsPieces, Needs: 4}, 3},
		{RewardModel{Rule: NeedsPieces}, 3},
		{RewardModel{Rule: Majority, Needs: 2}, 3},
		{RewardModel{Rule: 3}, 3},
		{RewardModel{}, 0},
	} {
		if _, err := bad.model.Needed(bad.n); err == nil {
			t.Errorf("%+v at n = %d: no error", bad.model, bad.n)
		}
	}
}

// The JSON form keeps the find-one model's: a zero rule is left out and
// read back as find one; a named rule round-trips.
func TestRewardModelJSON(t *testing.T) {
	old := `{"correct":"1/4","found":"3/4","missed":"1/10"}`
	var m RewardModel
	if err := json.Unmarshal([]byte(old), &m); err != nil || m.Rule != FindOne || m.Needs != 0 {
		t.Fatalf("%s: %+v, %v", old, m, err)
	}
	if b, err := json.Marshal(m); err != nil || string(b) != old {
		t.Errorf("find one marshals as %s, %v; want %s", b, err, old)
	}
	m.Rule, m.Needs = NeedsPieces, 2
	b, err := json.Marshal(m)
	if err != nil || !strings.Contains(string(b), `"rule":"needs","needs":2`) {
		t.Fatalf("needs 2 marshals as %s, %v", b, err)
	}
	var back RewardModel
	if err := json.Unmarshal(b, &back); err != nil || back.Rule != NeedsPieces || back.Needs != 2 {
		t.Errorf("%s reads back as %+v, %v", b, back, err)
	}
	if err := json.Unmarshal([]byte(`{"rule":"most"}`), &back); err == nil {
		t.Error("rule most: no error")
	}
	if _, err := Rule(7).MarshalText(); err == nil {
		t.Error("Rule(7) marshals")
	}
}
