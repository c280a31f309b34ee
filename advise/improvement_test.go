package advise

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"

	"spiral"
	"spiral/budget"
	"spiral/combin"
	"spiral/internal/spiraltest"
)

// updateLaw is the law of one problem's unbiased-scaled update (g/M,
// u/(K a)) as a list of outcomes, equal vectors merged.
type updateLaw struct {
	vecs  [][]*big.Rat
	probs []*big.Rat
}

// bruteUpdateLaw enumerates every outcome of cfg on the find-one model
// (p, found, missed) with bruteRule and scales it by cand's M and K a.
func bruteUpdateLaw(t *testing.T, cfg spiral.Config, cand Candidate, p, found, missed *big.Rat) updateLaw {
	t.Helper()
	d := designOf(t, cfg)
	dim := 2 + 2<<cfg.SetSize
	index := map[string]int{}
	var law updateLaw
	invM := new(big.Rat).Inv(cand.Variance.M)
	invW := new(big.Rat).Inv(cand.Aggregation.Weight)
	bruteRule(d, p, found, missed, 1, cfg.AggregationsPerSet, false, func(g [2]*big.Rat, u map[int]*big.Rat, prob *big.Rat) {
		vec := make([]*big.Rat, dim)
		for i := range vec {
			vec[i] = new(big.Rat)
		}
		vec[0].Mul(g[0], invM)
		vec[1].Mul(g[1], invM)
		for key, x := range u {
			vec[2+key].Mul(x, invW)
		}
		var b strings.Builder
		for _, x := range vec {
			fmt.Fprintf(&b, "%s,", x.RatString())
		}
		i, ok := index[b.String()]
		if !ok {
			i = len(law.vecs)
			index[b.String()] = i
			law.vecs = append(law.vecs, vec)
			law.probs = append(law.probs, new(big.Rat))
		}
		law.probs[i].Add(law.probs[i], prob)
	})
	return law
}

// The expected improvement of one step agrees with a brute force on small
// configurations: the law of one problem's scaled update is enumerated
// outcome by outcome, the mean update over B = 1, 2 problems by every
// B-tuple of outcomes, and on the quadratic objective J(x + d) = J(x) +
// G.d - ||d||^2/2 (L = 1) the step eps (mean update) improves J by eps
// ||G||^2 - eps^2 E||mean||^2/2 in expectation, at most ||G||^4/(2
// E||mean||^2). That maximum is Candidate.Improvement at B problems per
// step, counted in problems or in tokens, and the ranking, the rate per
// token and the two limits follow from it.
func TestImprovementBruteForce(t *testing.T) {
	p, found, missed := big.NewRat(1, 3), big.NewRat(4, 5), big.NewRat(1, 6)
	model := RewardModel{Correct: p, Found: found, Missed: missed}
	lengths := budget.Limits{Search: 3, Aggregation: 2}
	for _, x := range []struct {
		N1, n, K, N2 int
		design       combin.Design
	}{
		{3, 2, 2, 2, combin.Uniform},
		{3, 2, 2, 2, combin.Balanced},
		{4, 2, 2, 2, combin.Balanced},
		{4, 3, 2, 2, combin.Uniform},
	} {
		cfg := spiral.Paper()
		cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design = x.N1, x.n, x.K, x.N2, x.design
		base, err := Evaluate(cfg, Request{Lengths: lengths, Reward: model})
		if err != nil {
			t.Fatal(err)
		}
		law := bruteUpdateLaw(t, cfg, base, p, found, missed)
		G := make([]*big.Rat, len(law.vecs[0]))
		for i := range G {
			G[i] = new(big.Rat)
		}
		for o, v := range law.vecs {
			for i, xi := range v {
				G[i].Add(G[i], new(big.Rat).Mul(law.probs[o], xi))
			}
		}
		signal := sqNorm(G)
		if signal.Cmp(base.Signal) != 0 {
			t.Fatalf("%+v: signal %v, brute force %v", x, base.Signal, signal)
		}
		for B := 1; B <= 2; B++ {
			// E||mean of B draws||^2 over every B-tuple of outcomes.
			second := new(big.Rat)
			idx := make([]int, B)
			for {
				prob := big.NewRat(1, 1)
				mean := make([]*big.Rat, len(G))
				for i := range mean {
					mean[i] = new(big.Rat)
				}
				for _, o := range idx {
					prob.Mul(prob, law.probs[o])
					for i, xi := range law.vecs[o] {
						mean[i].Add(mean[i], xi)
					}
				}
				sq := sqNorm(mean)
				sq.Quo(sq, big.NewRat(int64(B*B), 1))
				second.Add(second, sq.Mul(sq, prob))
				k := 0
				for ; k < B; k++ {
					if idx[k]++; idx[k] < len(law.vecs) {
						break
					}
					idx[k] = 0
				}
				if k == B {
					break
				}
			}
			want := new(big.Rat).Mul(signal, signal)
			want.Quo(want, new(big.Rat).Mul(big.NewRat(2, 1), second))
			for _, step := range []Step{{Problems: int64(B)}, {Tokens: int64(B) * base.Tokens}} {
				c, err := Evaluate(cfg, Request{Lengths: lengths, Reward: model, Step: step})
				if err != nil {
					t.Fatal(err)
				}
				// The same figures from the row at another step.
				if at := base.At(step); at.Improvement.Cmp(c.Improvement) != 0 || at.LargeBatch.Cmp(c.LargeBatch) != 0 {
					t.Errorf("%+v: At(%+v) gives %v, Evaluate %v", x, step, at.Improvement, c.Improvement)
				}
				if c.Improvement.Cmp(want) != 0 {
					t.Errorf("%+v at %+v: Improvement = %v, brute force %v", x, step, c.Improvement, want)
				}
				if c.Problems.Cmp(big.NewRat(int64(B), 1)) != 0 {
					t.Errorf("%+v at %+v: B = %v", x, step, c.Problems)
				}
				// A deployment objective of sets of nStar: the alignment
				// G . grad J* in closed form for find one, the search
				// gradient being (a_n, -a_n) with a_n = (Found - Missed) n
				// (1 - p)^(n-1) p (1 - p), plus the aggregation signal when
				// n = nStar.
				for nStar := 1; nStar <= 4; nStar++ {
					d, err := Evaluate(cfg, Request{Lengths: lengths, Reward: model, Step: step, DeploySetSize: nStar})
					if err != nil {
						t.Fatal(err)
					}
					a := func(n int) *big.Rat {
						x := new(big.Rat).Sub(found, missed)
						x.Mul(x, big.NewRat(int64(n), 1))
						q := new(big.Rat).Sub(big.NewRat(1, 1), p)
						for range n - 1 {
							x.Mul(x, q)
						}
						return x.Mul(x, new(big.Rat).Mul(p, q))
					}
					align := new(big.Rat).Mul(a(x.n), a(nStar))
					align.Mul(align, big.NewRat(2, 1))
					if nStar == x.n {
						align.Add(align, sqNorm(G[2:]))
					}
					dwant := new(big.Rat).Mul(align, align)
					dwant.Quo(dwant, new(big.Rat).Mul(big.NewRat(2, 1), second))
					if d.Alignment.Cmp(align) != 0 || d.DeployImprovement.Cmp(dwant) != 0 {
						t.Errorf("%+v at %+v, deploy n* = %d: alignment %v, improvement %v; brute force %v, %v", x, step, nStar, d.Alignment, d.DeployImprovement, align, dwant)
					}
					if nStar == x.n && d.DeployImprovement.Cmp(want) != 0 {
						t.Errorf("%+v: deploying its own n, improvement %v, want its own %v", x, d.DeployImprovement, want)
					}
				}
				perToken := new(big.Rat).Quo(want, big.NewRat(int64(B)*c.Tokens, 1))
				tokenLimited := new(big.Rat).Mul(signal, signal)
				tokenLimited.Quo(tokenLimited, new(big.Rat).Mul(c.Noise, big.NewRat(2*c.Tokens, 1)))
				largeBatch := new(big.Rat).Quo(signal, big.NewRat(2*int64(B)*c.Tokens, 1))
				rho := new(big.Rat).Quo(new(big.Rat).Mul(big.NewRat(int64(B), 1), signal), c.Noise)
				for _, y := range []struct {
					name      string
					got, want *big.Rat
				}{
					{"per token", c.ImprovementPerToken, perToken},
					{"token-limited limit", c.TokenLimited, tokenLimited},
					{"large-batch limit", c.LargeBatch, largeBatch},
					{"rho", c.Rho, rho},
				} {
					if y.got.Cmp(y.want) != 0 {
						t.Errorf("%+v at %+v: %s = %v, brute force %v", x, step, y.name, y.got, y.want)
					}
				}
			}
		}
	}
}

// Advise ranks by ImprovementPerToken (ties by fewer tokens), and the step
// budget changes the order: counted in problems, rho is the same for every
// configuration of one SNR whatever its tokens; counted in tokens, a
// cheaper configuration gets more problems. By default at one budget in
// problems and one in tokens, up to N1 = 5; SPIRAL_LONG=1 adds 256
// problems and 2^26 tokens, up to N1 = 6.
func TestAdviseRanksByImprovement(t *testing.T) {
	model := RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)}
	tops := map[string]bool{}
	maxTraces := 5
	if spiraltest.Long() {
		maxTraces = 6
	}
	other, err := Advise(Request{Budget: 24 * 4096, Lengths: budget.PaperLimits(0), Reward: model, Step: Step{Problems: 3}, MaxTraces: maxTraces})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []Step{{Problems: 1}, {Problems: 256}, {Tokens: 1 << 16}, {Tokens: 1 << 26}} {
		if (step.Problems == 256 || step.Tokens == 1<<26) && !spiraltest.Long() {
			continue
		}
		res, err := Advise(Request{Budget: 24 * 4096, Lengths: budget.PaperLimits(0), Reward: model, Step: step, MaxTraces: maxTraces})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range res.Candidates {
			if i > 0 {
				prev := res.Candidates[i-1]
				if cmp := prev.ImprovementPerToken.Cmp(c.ImprovementPerToken); cmp < 0 || cmp == 0 && prev.Tokens > c.Tokens {
					t.Fatalf("%+v: rank %d above rank %d", step, i, i+1)
				}
			}
			// ImprovementPerToken between its limits, at rho/(1 + rho) of
			// the large-batch one.
			frac := new(big.Rat).Quo(c.Rho, new(big.Rat).Add(c.Rho, big.NewRat(1, 1)))
			if got := new(big.Rat).Mul(c.LargeBatch, frac); got.Cmp(c.ImprovementPerToken) != 0 {
				t.Fatalf("%+v: %v per token, large-batch limit %v times rho/(1+rho) %v", step, c.ImprovementPerToken, c.LargeBatch, got)
			}
			if c.ImprovementPerToken.Cmp(c.TokenLimited) >= 0 || c.ImprovementPerToken.Cmp(c.LargeBatch) >= 0 {
				t.Fatalf("%+v: %v per token not below its limits %v and %v", step, c.ImprovementPerToken, c.TokenLimited, c.LargeBatch)
			}
		}
		// The ranking at one step budget re-ranked at this one is this one.
		at := other.At(step)
		for i := range at.Candidates {
			if at.Candidates[i].Config != res.Candidates[i].Config || at.Candidates[i].ImprovementPerToken.Cmp(res.Candidates[i].ImprovementPerToken) != 0 {
				t.Fatalf("%+v: rank %d re-ranked %+v, ranked %+v", step, i+1, at.Candidates[i].Config, res.Candidates[i].Config)
			}
		}
		top := res.Candidates[0].Config
		tops[fmt.Sprintf("%d/%d/%d/%d %v", top.SearchTraces, top.SetSize, top.Sets, top.AggregationsPerSet, top.Design)] = true
	}
	if len(tops) < 2 {
		t.Errorf("the same top at every step budget: %v", slices.Collect(maps.Keys(tops)))
	}
}

// Under a deployment objective Advise ranks by the improvement of J* per
// token, and a deployment set size the rule cannot score is an error. Up to
// N1 = 5 by default, 6 with SPIRAL_LONG=1.
func TestAdviseDeploy(t *testing.T) {
	model := RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)}
	maxTraces := 5
	if spiraltest.Long() {
		maxTraces = 6
	}
	req := Request{Budget: 24 * 4096, Lengths: budget.PaperLimits(0), Reward: model, MaxTraces: maxTraces, DeploySetSize: 4}
	res, err := Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Candidates {
		if c.DeployImprovementPerToken == nil {
			t.Fatalf("rank %d: no deployment figures", i+1)
		}
		if i > 0 && res.Candidates[i-1].DeployImprovementPerToken.Cmp(c.DeployImprovementPerToken) < 0 {
			t.Fatalf("rank %d above rank %d", i, i+1)
		}
		if c.Config.SetSize == 4 && c.DeployImprovement.Cmp(c.Improvement) != 0 {
			t.Errorf("%+v: deploying its own n, %v against its improvement %v", c.Config, c.DeployImprovement, c.Improvement)
		}
	}
	for _, bad := range []Request{
		{DeploySetSize: -1}, {DeploySetSize: MaxTraces},
		{DeploySetSize: 1, Reward: RewardModel{Rule: NeedsPieces, Needs: 2}},
	} {
		r := req
		r.DeploySetSize = bad.DeploySetSize
		if bad.Reward.Rule != 0 {
			r.Reward.Rule, r.Reward.Needs = bad.Reward.Rule, bad.Reward.Needs
		}
		if _, err := Advise(r); err == nil || !strings.Contains(err.Error(), "deploy_set_size") {
			t.Errorf("deploy_set_size %d under %v: error %v", r.DeploySetSize, r.Reward.Rule, err)
		}
	}
}
