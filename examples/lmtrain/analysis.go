package main

import (
	"math"
	"math/rand/v2"
	"slices"

	"spiral/eval"
)

// Analysis is what one seed's trained policies do on the test problems,
// every policy (the base model and each arm's) as a search policy and as an
// aggregator.
type Analysis struct {
	// Policies names the policies: "base", then the arms in order.
	Policies []string `json:"policies"`
	// Search is each policy's search on the test problems.
	Search []SearchResult `json:"search"`
	// Cross is the cross-pairing of search policies and aggregators.
	Cross CrossTable `json:"cross"`
	// Probes is each aggregator on candidate sets built by hand.
	Probes []ProbeResult `json:"probes"`
	// Overlap[i][j] is the overlap of policy i's and j's coverage at k =
	// Samples, and Unique[j] the fraction of problems policy j alone
	// covers at k = Samples among the trained policies (Unique[0], the base
	// model's, among all).
	Overlap [][]eval.Overlap `json:"overlap"`
	Unique  []float64        `json:"unique"`
	// Difficulty splits the test problems in thirds by the base model's
	// success on an independent draw of Samples traces each.
	Difficulty []DifficultyBin `json:"difficulty"`
	// Selectors is the no-training selectors on each policy's traces.
	Selectors []SelectorResult `json:"selectors"`
	// Behaviour[s][a] is what aggregator a does on search policy s's sets
	// of the cross-pairing, and RuleBehaviour[s] and UniformBehaviour[s]
	// what the rule and a uniformly chosen pair do on them.
	Behaviour        [][]Behaviour `json:"behaviour"`
	RuleBehaviour    []Behaviour   `json:"rule_behaviour"`
	UniformBehaviour []Behaviour   `json:"uniform_behaviour"`
}

// PerProblemK is the largest k whose per-problem selector accuracies a run
// keeps (for standard errors clustered by problem at a token count).
const PerProblemK = 8

// SelectorResult is the no-training selectors (selectorNames) on one
// policy's traces.
type SelectorResult struct {
	Name string `json:"name"`
	// P is the policy's pass@1, the bayes selector's proposal accuracy,
	// and Ceiling that selector's exact accuracy on sets of 4 drawn from
	// its model (modelCeiling).
	P       float64 `json:"p"`
	Ceiling float64 `json:"model_ceiling"`
	// Curves[sel][k-1] is the mean accuracy with k traces a problem: for
	// majority maj@k (eval.ExpectedMajority), for the others the mean over
	// the Samples/k disjoint sets of k of a problem's traces in sample
	// order. PerProblem[sel][k-1][q] is the same for problem q, k <=
	// PerProblemK.
	Curves     [][]float64   `json:"curves"`
	PerProblem [][][]float64 `json:"per_problem"`
	// Sets[sel][q] is the selector's mean accuracy on problem q's sets of
	// the cross-pairing (majority with ties at random, in expectation).
	Sets [][]float64 `json:"sets"`
}

// Behaviour is an aggregator on sets of 4 candidates, counted over a
// search policy's sets: on sets showing a hit, how often its answer is a
// pair shown as a hit; on sets showing none, how often its answer is a
// pair some candidate showed as a miss, and how often it is right; on sets
// holding no right candidate, how often it is right.
type Behaviour struct {
	HitSets      float64 `json:"hit_sets"`
	CopiesHit    float64 `json:"copies_hit"`
	NoHitSets    float64 `json:"no_hit_sets"`
	WritesMiss   float64 `json:"writes_miss"`
	RightNoHit   float64 `json:"right_no_hit"`
	NoRightSets  float64 `json:"no_right_sets"`
	RightNoRight float64 `json:"right_no_right"`
}

// add adds to b an answer distribution (weight of each pair) on one
// set whose right pair is right.
func (b *Behaviour) add(cands []shown, right int32, answer [ProblemPairs]float64) {
	var hitPair, missPair [ProblemPairs]bool
	holdsRight := false
	for _, c := range cands {
		if c.hit {
			hitPair[c.pair] = true
		} else {
			missPair[c.pair] = true
		}
		holdsRight = holdsRight || c.pair == right
	}
	anyHit := false
	for _, h := range hitPair {
		anyHit = anyHit || h
	}
	if anyHit {
		b.HitSets++
		for a, w := range answer {
			if hitPair[a] {
				b.CopiesHit += w
			}
		}
	} else {
		b.NoHitSets++
		for a, w := range answer {
			if missPair[a] {
				b.WritesMiss += w
			}
		}
		b.RightNoHit += answer[right]
	}
	if !holdsRight {
		b.NoRightSets++
		b.RightNoRight += answer[right]
	}
}

// rate is num/den, NaN for no sets.
func rate(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// round6 rounds to 6 decimals, for the per-problem values a run keeps.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// SearchResult is one policy's search traces on the test problems, Samples
// of each under the policy's own grammar.
type SearchResult struct {
	Name     string `json:"name"`
	MaxPairs int    `json:"max_pairs"`
	// Coverage[k-1] is pass@k (eval.CoverageCurve) and Majority[k-1] maj@k
	// (eval.ExpectedMajority, ties at random), averaged over problems.
	Coverage []float64 `json:"coverage"`
	Majority []float64 `json:"majority"`
	// Counts and Entropy are per test problem: the right traces among the
	// samples, and the entropy of the answers in bits.
	Counts  []eval.PassCount `json:"counts"`
	Entropy []float64        `json:"entropy_bits"`
	// Generated is the mean length of a trace, Prefill that of its prompt,
	// in tokens.
	Generated float64 `json:"generated"`
	Prefill   float64 `json:"prefill"`
}

// CrossTable is every aggregator on the same sets of every search policy's
// traces: the first 4*m of a problem's samples in m disjoint sets of 4.
type CrossTable struct {
	SetsPerProblem int `json:"sets_per_problem"`
	// Accuracy[s][a] is aggregator a's accuracy on search policy s's sets,
	// VsMajority[s][a] its paired comparison with a majority vote over the
	// same sets (eval.PairedAccuracy, aggregator first).
	Accuracy   [][]float64     `json:"accuracy"`
	VsMajority [][]eval.Paired `json:"vs_majority"`
	// Majority[s] and Oracle[s]: a majority vote (ties at random), and the
	// fraction of sets holding a right candidate.
	Majority []float64 `json:"majority"`
	Oracle   []float64 `json:"oracle"`
	// Generated[a] is aggregator a's mean output length and Prefill the
	// length of an aggregation prompt, in tokens.
	Generated []float64 `json:"generated"`
	Prefill   float64   `json:"prefill"`
	// PerProblem[s][a][q] is aggregator a's accuracy on problem q's sets
	// of search policy s.
	PerProblem [][][]float64 `json:"per_problem"`
}

// ProbeResult is one aggregator's accuracy on sets of 4 candidates built
// by hand for every test problem (ProbesPerProblem of each kind, the
// candidates' order and the wrong pairs at random): all wrong (four different wrong pairs), one right among three
// agreeing wrong ones (the same wrong pair three times), all right.
type ProbeResult struct {
	Aggregator string  `json:"aggregator"`
	AllWrong   float64 `json:"all_wrong"`
	OneRight   float64 `json:"one_right"`
	AllRight   float64 `json:"all_right"`
}

// ProbesPerProblem is the number of probe sets of each kind per test
// problem.
const ProbesPerProblem = 4

// DifficultyBin is one third of the test problems by difficulty.
type DifficultyBin struct {
	Name     string `json:"name"`
	Problems int    `json:"problems"`
	// BaseSuccess is the base model's success rate on the independent draw
	// that defines the bin.
	BaseSuccess float64 `json:"base_success"`
	// Per policy: mean pass@1, pass@Samples and answer entropy (bits).
	Pass1    []float64 `json:"pass1"`
	PassK    []float64 `json:"passk"`
	Entropy  []float64 `json:"entropy_bits"`
	Majority []float64 `json:"majority"`
}

// Analyze measures the policies (the base model first) on the test
// problems, each measurement from its own random stream of the seed.
func Analyze(s setup, opt Options, policies []namedPolicy) (Analysis, error) {
	var an Analysis
	k := opt.Samples
	n := s.cfg.SetSize
	m := k / n
	rng := func(i, j uint64) *rand.Rand { return rand.New(rand.NewPCG(opt.Seed, 10_000+100*i+j)) }
	traces := make([][][]int32, len(policies))
	for i, p := range policies {
		an.Policies = append(an.Policies, p.Spec.Name)
		g := s.grammar(p.Spec.MaxPairs)
		var err error
		if traces[i], err = sampleTraces(p.Policy, rng(uint64(i), 0), s.test, g, k); err != nil {
			return an, err
		}
		sr, err := searchResult(p.Spec, s.test, traces[i], k)
		if err != nil {
			return an, err
		}
		an.Search = append(an.Search, sr)
	}

	// Cross-pairing: every aggregator on the same sets of every policy's
	// traces.
	ct := &an.Cross
	ct.SetsPerProblem = m
	filler := make([][]int32, n)
	for c := range filler {
		filler[c] = append(proposal(s.test[0], 0), TokStop)
	}
	ct.Prefill = float64(len(aggregatePrompt(s.test[0], filler)))
	gen := make([]float64, len(policies))
	outputs := 0
	for si := range policies {
		sets := disjointSets(traces[si], len(s.test), k, m, n)
		var vote, oracle []bool
		voteRng := rng(uint64(si), 1)
		for q, pr := range s.test {
			for _, set := range sets[q] {
				ans := answers(set)
				v, err := eval.MajorityVote(ans, eval.TieRandom, voteRng)
				if err != nil {
					return an, err
				}
				vote = append(vote, v == pr.Answer())
				oracle = append(oracle, slices.Contains(ans, pr.Answer()))
			}
		}
		ct.Majority = append(ct.Majority, mean(vote))
		ct.Oracle = append(ct.Oracle, mean(oracle))
		var acc []float64
		var vs []eval.Paired
		var perRow [][]float64
		var bhRow []Behaviour
		for ai, agg := range policies {
			outs, err := aggregate(agg.Policy, rng(uint64(si), 10+uint64(ai)), s.test, sets, s.one, n)
			if err != nil {
				return an, err
			}
			right := make([]bool, len(outs))
			perProblem := make([]float64, len(s.test))
			var bh Behaviour
			for o, out := range outs {
				q := o / m
				right[o] = answerOf(out) == s.test[q].Answer()
				gen[ai] += float64(len(out))
				if right[o] {
					perProblem[q] += 1 / float64(m)
				}
				var ans [ProblemPairs]float64
				ans[answerOf(out)] = 1
				bh.add(shownOf(sets[q][o%m]), s.test[q].Answer(), ans)
			}
			for q := range perProblem {
				perProblem[q] = round6(perProblem[q])
			}
			perRow = append(perRow, perProblem)
			bhRow = append(bhRow, bh)
			if ai == 0 {
				outputs += len(outs)
			}
			pa, err := eval.PairedAccuracy(right, vote)
			if err != nil {
				return an, err
			}
			acc = append(acc, mean(right))
			vs = append(vs, pa)
		}
		ct.Accuracy = append(ct.Accuracy, acc)
		ct.VsMajority = append(ct.VsMajority, vs)
		ct.PerProblem = append(ct.PerProblem, perRow)
		an.Behaviour = append(an.Behaviour, bhRow)
		var rule, uniform Behaviour
		e := s.one.Noise
		for q, pr := range s.test {
			for _, set := range sets[q] {
				cands := shownOf(set)
				best, nb := bayesPick(cands, e, 1.0/ProblemPairs)
				var ans, flat [ProblemPairs]float64
				for a, ok := range best {
					if ok {
						ans[a] = 1 / float64(nb)
					}
					flat[a] = 1.0 / ProblemPairs
				}
				rule.add(cands, pr.Answer(), ans)
				uniform.add(cands, pr.Answer(), flat)
			}
		}
		an.RuleBehaviour = append(an.RuleBehaviour, rule)
		an.UniformBehaviour = append(an.UniformBehaviour, uniform)
	}
	for i, p := range policies {
		an.Selectors = append(an.Selectors, selectorResult(p.Spec.Name, s, an.Search[i], traces[i], k, n))
	}
	for ai := range gen {
		ct.Generated = append(ct.Generated, gen[ai]/float64(outputs))
	}

	// Probes.
	probeSets, probeKind := probes(rng(99, 0), s.test, n)
	for ai, agg := range policies {
		outs, err := aggregate(agg.Policy, rng(99, 1+uint64(ai)), s.test, probeSets, s.one, n)
		if err != nil {
			return an, err
		}
		var right [3]float64
		for o, out := range outs {
			if answerOf(out) == s.test[o/(3*ProbesPerProblem)].Answer() {
				right[probeKind[o]]++
			}
		}
		per := float64(len(s.test) * ProbesPerProblem)
		an.Probes = append(an.Probes, ProbeResult{Aggregator: agg.Spec.Name, AllWrong: right[0] / per, OneRight: right[1] / per, AllRight: right[2] / per})
	}

	// Coverage overlap and unique coverage at k = Samples.
	counts := make([][]eval.PassCount, len(policies))
	for i, sr := range an.Search {
		counts[i] = sr.Counts
	}
	an.Overlap = make([][]eval.Overlap, len(policies))
	for i := range policies {
		for j := range policies {
			o, err := eval.CoverageOverlap(counts[i], counts[j], k)
			if err != nil {
				return an, err
			}
			an.Overlap[i] = append(an.Overlap[i], o)
		}
	}
	u, err := eval.UniqueCoverage(counts[1:], k)
	if err != nil {
		return an, err
	}
	u0, err := eval.UniqueCoverage(counts, k)
	if err != nil {
		return an, err
	}
	an.Unique = append([]float64{u0[0]}, u...)

	// Difficulty: thirds by the base model's success on a fresh draw.
	base, err := sampleTraces(policies[0].Policy, rng(98, 0), s.test, s.one, k)
	if err != nil {
		return an, err
	}
	baseRight := make([]int, len(s.test))
	for i, t := range base {
		if answerOf(t) == s.test[i/k].Answer() {
			baseRight[i/k]++
		}
	}
	order := make([]int, len(s.test))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return baseRight[a] - baseRight[b] })
	for b, name := range []string{"hard", "medium", "easy"} {
		lo, hi := b*len(order)/3, (b+1)*len(order)/3
		bin := DifficultyBin{Name: name, Problems: hi - lo}
		for _, q := range order[lo:hi] {
			bin.BaseSuccess += float64(baseRight[q]) / float64(k)
		}
		bin.BaseSuccess /= float64(hi - lo)
		for i, sr := range an.Search {
			var p1, pk, h, mj float64
			for _, q := range order[lo:hi] {
				c := sr.Counts[q]
				p1 += float64(c.C) / float64(c.N)
				if c.C > 0 {
					pk++
				}
				h += sr.Entropy[q]
				ans := answers(traces[i][q*k : (q+1)*k])
				v, err := eval.ExpectedMajority(ans, s.test[q].Answer(), n, eval.TieRandom)
				if err != nil {
					return an, err
				}
				mj += v
			}
			w := float64(hi - lo)
			bin.Pass1 = append(bin.Pass1, p1/w)
			bin.PassK = append(bin.PassK, pk/w)
			bin.Entropy = append(bin.Entropy, h/w)
			bin.Majority = append(bin.Majority, mj/w)
		}
		an.Difficulty = append(an.Difficulty, bin)
	}
	return an, nil
}

// searchResult measures one policy's traces, k per test problem.
func searchResult(spec ArmSpec, test []Problem, traces [][]int32, k int) (SearchResult, error) {
	sr := SearchResult{Name: spec.Name, MaxPairs: spec.MaxPairs, Majority: make([]float64, k)}
	for q, pr := range test {
		mine := traces[q*k : (q+1)*k]
		ans := answers(mine)
		c := 0
		for i, a := range ans {
			if a == pr.Answer() {
				c++
			}
			sr.Generated += float64(len(mine[i]))
			sr.Prefill += float64(len(searchPrompt(pr)))
		}
		sr.Counts = append(sr.Counts, eval.PassCount{N: k, C: c})
		h, err := eval.AnswerEntropy(ans)
		if err != nil {
			return sr, err
		}
		sr.Entropy = append(sr.Entropy, h)
		for j := 1; j <= k; j++ {
			v, err := eval.ExpectedMajority(ans, pr.Answer(), j, eval.TieRandom)
			if err != nil {
				return sr, err
			}
			sr.Majority[j-1] += v / float64(len(test))
		}
	}
	sr.Generated /= float64(len(traces))
	sr.Prefill /= float64(len(traces))
	var err error
	sr.Coverage, err = eval.CoverageCurve(sr.Counts, k)
	return sr, err
}

// probes builds ProbesPerProblem sets of n candidates of each kind (0: all
// wrong, 1: one right among n-1 agreeing wrong, 2: all right) for every
// problem, and returns them with each set's kind, problem after problem.
func probes(r *rand.Rand, test []Problem, n int) ([][][][]int32, []int) {
	sets := make([][][][]int32, len(test))
	var kinds []int
	trace := func(p Problem, pair int32) []int32 { return append(proposal(p, pair), TokStop) }
	wrongPairs := func(p Problem) []int32 {
		var w []int32
		for id := range int32(ProblemPairs) {
			if id != p.Answer() {
				w = append(w, id)
			}
		}
		r.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		return w
	}
	for q, p := range test {
		for kind := range 3 {
			for range ProbesPerProblem {
				set := make([][]int32, n)
				w := wrongPairs(p)
				for c := range set {
					switch kind {
					case 0:
						set[c] = trace(p, w[c])
					case 1:
						set[c] = trace(p, w[0])
					default:
						set[c] = trace(p, p.Answer())
					}
				}
				if kind == 1 {
					set[r.IntN(n)] = trace(p, p.Answer())
				}
				sets[q] = append(sets[q], set)
				kinds = append(kinds, kind)
			}
		}
	}
	return sets, kinds
}

func mean(b []bool) float64 {
	c := 0
	for _, v := range b {
		if v {
			c++
		}
	}
	return float64(c) / float64(len(b))
}

// selectorResult measures the no-training selectors on one policy's traces,
// k per test problem, n a set.
func selectorResult(name string, s setup, sr SearchResult, traces [][]int32, k, n int) SelectorResult {
	e := s.one.Noise
	res := SelectorResult{Name: name, P: sr.Coverage[0]}
	p := min(max(res.P, 1e-6), 1-1e-6)
	res.Ceiling = modelCeiling(n, e, p)
	res.Curves = make([][]float64, numSelectors)
	res.PerProblem = make([][][]float64, numSelectors)
	res.Sets = make([][]float64, numSelectors)
	shownAll := shownOf(traces)
	for sel := range numSelectors {
		res.Curves[sel] = make([]float64, k)
		res.PerProblem[sel] = make([][]float64, min(PerProblemK, k))
		for size := 1; size <= k; size++ {
			per := make([]float64, len(s.test))
			for q, pr := range s.test {
				mine := shownAll[q*k : (q+1)*k]
				if sel == selMajority {
					ans := answers(traces[q*k : (q+1)*k])
					v, _ := eval.ExpectedMajority(ans, pr.Answer(), size, eval.TieRandom)
					per[q] = v
				} else {
					m := k / size
					for j := range m {
						per[q] += selectorAccuracy(sel, mine[j*size:(j+1)*size], pr.Answer(), e, p) / float64(m)
					}
				}
				res.Curves[sel][size-1] += per[q] / float64(len(s.test))
				if size == n {
					m := k / n
					v := 0.0
					for j := range m {
						v += selectorAccuracy(sel, mine[j*n:(j+1)*n], pr.Answer(), e, p) / float64(m)
					}
					res.Sets[sel] = append(res.Sets[sel], round6(v))
				}
			}
			if size <= PerProblemK {
				for q := range per {
					per[q] = round6(per[q])
				}
				res.PerProblem[sel][size-1] = per
			}
		}
	}
	return res
}
