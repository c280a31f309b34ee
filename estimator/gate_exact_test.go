package estimator

import (
	"math"
	"math/big"
	"spiral/combin"
	"testing"

	"spiral/lengthgate"
)

// findGateExact is the exact expectation of the gated search estimator E[g]
// for the "find" toy under the uniform design over Subsets(N, n) with K sets:
// symbol 0 is a wrong trace, every other symbol a right one, the aggregator
// answers correctly with probability 3/4 when its set holds a right trace,
// else never, and the set score is that probability (N2 = 0) or the mean
// of N2 Bernoulli rewards. gated[v] says whether the gate removes a
// positive search advantage of a trace with symbol v.
//
// By exchangeability E[g] = N sum_v p_v (e_v - p) E[gate_v(A_0) | y_0 = v],
// and given y_0 the advantage A_0 depends only on which other traces are
// right, and up to relabelling only on how many (r of N-1, each right with
// probability q = 1 - p_0). For each r a dynamic program over the C(N, n)
// sets, choosing K of them, tracks the number c of chosen sets that hold
// trace 0, the score numerators u (score = u/D) summed over those (s0) and
// over all chosen sets (B); then A_0 = (K s0 - c B)/(K c D).
func findGateExact(tb testing.TB, N, n, K, N2 int, p []*big.Rat, gated []bool) []*big.Rat {
	tb.Helper()
	f := family(tb, false, N, n)
	var sets [][]int
	for s := range f.All() {
		sets = append(sets, append([]int(nil), s...))
	}
	// Score numerators of a set with (b = 1) or without (b = 0) a right
	// trace, with integer weights over the common denominator wden.
	D, umax := 4, 3
	var uw [2][]int64
	wden := int64(1)
	if N2 == 0 {
		uw[0], uw[1] = []int64{1}, []int64{0, 0, 0, 1} // u = 0, or u = 3 (3/4)
	} else {
		D, umax = N2, N2
		wden = int64(math.Pow(4, float64(N2)))
		uw[0] = []int64{wden}
		uw[1] = make([]int64, N2+1)
		for h := range uw[1] { // C(N2, h) 3^h 1^(N2-h) / 4^N2
			uw[1][h] = int64(mcBinomial(N2, h)) * int64(math.Pow(3, float64(h)))
		}
	}
	S := K*umax + 1
	idx := func(k, c, s0, b int) int { return ((k*(K+1)+c)*S+s0)*S + b }
	size := (K + 1) * (K + 1) * S * S
	q := new(big.Rat).Sub(big.NewRat(1, 1), p[0])
	// meanA[right0][0] = E[A_0], meanA[right0][1] = E[A_0 [A_0 <= 0]].
	var meanA [2][2]*big.Rat
	for r0 := range 2 {
		meanA[r0] = [2]*big.Rat{new(big.Rat), new(big.Rat)}
		for r := 0; r < N; r++ { // right traces among 1..N-1: 1..r
			prob := new(big.Rat).SetInt(new(big.Int).Binomial(int64(N-1), int64(r)))
			for range r {
				prob.Mul(prob, q)
			}
			for range N - 1 - r {
				prob.Mul(prob, p[0])
			}
			dp := make([]int64, size)
			dp[idx(0, 0, 0, 0)] = 1
			next := make([]int64, size)
			for _, h := range sets {
				b, has0 := 0, false
				for _, i := range h {
					if (i == 0 && r0 == 1) || (i >= 1 && i <= r) {
						b = 1
					}
					has0 = has0 || i == 0
				}
				copy(next, dp)
				for k := range K {
					for c := 0; c <= k; c++ {
						for s0 := range S {
							for bb := range S {
								w := dp[idx(k, c, s0, bb)]
								if w == 0 {
									continue
								}
								for u, wu := range uw[b] {
									if wu == 0 {
										continue
									}
									c2, s2 := c, s0
									if has0 {
										c2, s2 = c+1, s0+u
									}
									next[idx(k+1, c2, s2, bb+u)] += w * wu
								}
							}
						}
					}
				}
				dp, next = next, dp
			}
			denom := new(big.Int).Binomial(int64(len(sets)), int64(K))
			denom.Mul(denom, new(big.Int).Exp(big.NewInt(wden), big.NewInt(int64(K)), nil))
			for c := 1; c <= K; c++ {
				for s0 := range S {
					for bb := range S {
						w := dp[idx(K, c, s0, bb)]
						if w == 0 {
							continue
						}
						num := int64(K*s0 - c*bb)
						a := new(big.Rat).SetFrac(big.NewInt(num*w), new(big.Int).Mul(denom, big.NewInt(int64(K*c*D))))
						a.Mul(a, prob)
						meanA[r0][0].Add(meanA[r0][0], a)
						if num <= 0 {
							meanA[r0][1].Add(meanA[r0][1], a)
						}
					}
				}
			}
		}
	}
	V := len(p)
	g := zeros(V)
	for v := range V {
		right := 0
		if v != 0 {
			right = 1
		}
		a := meanA[right][0]
		if gated[v] {
			a = meanA[right][1]
		}
		for u := range V { // N p_v (e_v - p)_u a
			s := new(big.Rat).Neg(p[u])
			if u == v {
				s.Add(s, big.NewRat(1, 1))
			}
			s.Mul(s, p[v])
			s.Mul(s, a)
			s.Mul(s, big.NewRat(int64(N), 1))
			g[u].Add(g[u], s)
		}
	}
	return g
}

// TestFindGateExactMatchesBruteForce validates findGateExact against the
// enumeration of every outcome (mcBruteForce) on Subsets(4, 2), K = 3, with
// the gate on the last symbol, exact and noisy scores.
func TestFindGateExactMatchesBruteForce(t *testing.T) {
	p := rats("1/2", "1/4", "1/4")
	pol := must(NewCategorical(p))
	tab := mcFindTable(t, 3, 2)
	for _, N2 := range []int{0, 2} {
		for _, gated := range []bool{false, true} {
			mc := MonteCarlo{Family: mcFamily(t, 4, 2, false), K: 3, N2: N2, Policy: pol, Objective: tab}
			gv := []bool{false, false, false}
			if gated {
				mc.Gate, mc.Lengths = lengthgate.Gate{Target: 4096}, []int{2000, 3000, 6000}
				gv[2] = true
			}
			want := mcBruteForce(t, &mc).g
			got := findGateExact(t, 4, 2, 3, N2, p, gv)
			for v := range want {
				if g := ratFloat(got[v]); math.Abs(g-want[v]) > 1e-10 {
					t.Errorf("N2=%d gated=%t: E[g] = %s, brute force %v", N2, gated, ratString(got), want)
				}
			}
		}
	}
}

// TestGateBiasExact: the length gate's bias at the paper's configuration
// (Subsets(8, 4), K = 4) on the find toy with three symbols (wrong of 2000
// tokens, right of 3000, right of 6000; p = (1/2, 1/4, 1/4); L_target =
// 4096), exactly. Ungated, E[g] = M grad J = (-0.0830, 0.0415, 0.0415).
// Gated with exact set scores (N2 = 0) the long right trace is still pushed
// UP (E[g]_2 > 0): its exact-score advantage is never negative, and the
// gate only zeroes it. Gated with noisy scores (N2 = 4) it is pushed DOWN
// (E[g]_2 < 0): reward noise gives it negative advantages, which the gate
// keeps while it removes the positive ones.
func TestGateBiasExact(t *testing.T) {
	p := rats("1/2", "1/4", "1/4")
	ungated := []bool{false, false, false}
	gate := []bool{false, false, true}
	m := must(family(t, false, 8, 4).Constants(0, 4)).M
	grad := must(Gradient(must(NewCategorical(p)), mcFindTable(t, 3, 4), combin.IndexOrder))
	for _, N2 := range []int{0, 4} {
		if got := findGateExact(t, 8, 4, 4, N2, p, ungated); !ratsEqual(got, scale(m, grad)) {
			t.Errorf("N2 = %d ungated: E[g] = %s, want M grad J = %s", N2, ratString(got), ratString(scale(m, grad)))
		}
	}
	exact := findGateExact(t, 8, 4, 4, 0, p, gate)
	noisy := findGateExact(t, 8, 4, 4, 4, p, gate)
	t.Logf("M grad J = %.5f; gated E[g]: exact scores %.5f = %s, N2 = 4 %.5f = %s",
		floats(scale(m, grad)), floats(exact), ratString(exact), floats(noisy), ratString(noisy))
	if exact[2].Sign() <= 0 || noisy[2].Sign() >= 0 {
		t.Errorf("gated E[g]_2: exact scores %s, N2 = 4 %s; want > 0 and < 0", exact[2].RatString(), noisy[2].RatString())
	}
	if got, want := ratString(exact), "(-12285/197248, 20475/394496, 4095/394496)"; got != want {
		t.Errorf("gated E[g], exact scores = %s, want %s", got, want)
	}
	if got, want := ratString(noisy), "(-182497698448065/7200976528211968, 1013478894796095/14401953056423936, -648483497899965/14401953056423936)"; got != want {
		t.Errorf("gated E[g], N2 = 4 = %s, want %s", got, want)
	}
}

func floats(xs []*big.Rat) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = ratFloat(x)
	}
	return out
}
