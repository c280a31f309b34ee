package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"spiral/eval"
)

// A Comparison is a paired comparison of two measurements (A - B) on the
// same seeds: each seed's difference with its standard error clustered by
// problem (eval.PairedTTest over the per-problem values, the sets of a
// problem averaged first), and Student's t test over the seeds.
type Comparison struct {
	Label string    `json:"label"`
	A     []float64 `json:"a"`
	B     []float64 `json:"b"`
	// Diff is the mean difference, Seeds each seed's, SE each seed's
	// standard error clustered by problem (NaN when the run keeps no
	// per-problem values for it).
	Diff  float64   `json:"diff"`
	Seeds []float64 `json:"per_seed"`
	SE    []float64 `json:"per_seed_se"`
	// T, DF and P are the t test over the seeds (two-sided).
	T  float64 `json:"t"`
	DF int     `json:"df"`
	P  float64 `json:"p"`
}

// measure is a quantity of one run: its value and, when the run keeps
// them, its per-problem values (nil otherwise).
type measure func(s *Summary) (float64, []float64)

// compare builds the comparison of a and b over the study's seeds.
func (st *Study) compare(label string, a, b measure) Comparison {
	c := Comparison{Label: label}
	for _, r := range st.Runs {
		va, pa := a(r)
		vb, pb := b(r)
		c.A, c.B = append(c.A, va), append(c.B, vb)
		c.Seeds = append(c.Seeds, va-vb)
		se := math.NaN()
		if pa != nil && pb != nil {
			if pt, err := eval.PairedTTest(pa, pb); err == nil {
				se = pt.SE
			}
		}
		c.SE = append(c.SE, se)
	}
	c.T, c.P = math.NaN(), math.NaN()
	if pt, err := eval.PairedTTest(c.A, c.B); err == nil {
		c.Diff, c.T, c.DF, c.P = pt.Diff, pt.T, pt.DF, pt.P
	}
	return c
}

// String is one line: the difference, each seed's with its clustered
// standard error, and the test.
func (c Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %+.3f [", c.Label, c.Diff)
	for i, d := range c.Seeds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%+.3f", d)
		if !math.IsNaN(c.SE[i]) {
			fmt.Fprintf(&b, " ± %.3f", c.SE[i])
		}
	}
	fmt.Fprintf(&b, "]  t(%d) = %.2f, p = %s", c.DF, c.T, pValue(c.P))
	return b.String()
}

func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < 0.001:
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3f", p)
}

// seedsOf is "mean [v1, v2, ...]" of a quantity over the seeds.
func (st *Study) seedsOf(f func(*Summary) float64) string {
	var b strings.Builder
	sp := st.over(f)
	fmt.Fprintf(&b, "%.3f [", sp.Mean)
	for i, v := range sp.Values {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%.3f", v)
	}
	b.WriteString("]")
	return b.String()
}

// policyIndex is the index of the named policy, or -1.
func (st *Study) policyIndex(name string) int {
	for i, p := range st.policies() {
		if p == name {
			return i
		}
	}
	return -1
}

// perTrace is the tokens of one of policy j's traces: generated, or
// generated and prompt.
func perTrace(s *Summary, j int, withPrefill bool) float64 {
	sr := s.Analysis.Search[j]
	if withPrefill {
		return sr.Generated + sr.Prefill
	}
	return sr.Generated
}

// pipeTokens is the tokens of policy i's pipeline (4 traces and its
// aggregator once).
func pipeTokens(s *Summary, i int, withPrefill bool) float64 {
	p := pipelineOf(s, i)
	if withPrefill {
		return p.Generated + p.Prefill
	}
	return p.Generated
}

// pipelineMeasure is policy i's pipeline, per problem.
func pipelineMeasure(i int) measure {
	return func(s *Summary) (float64, []float64) {
		return s.Analysis.Cross.Accuracy[i][i], s.Analysis.Cross.PerProblem[i][i]
	}
}

// selectorAt is selector sel on policy j's traces at the tokens of
// policy i's pipeline: the curve interpolated linearly in k (k traces cost
// k*perTrace tokens), per problem when k <= PerProblemK.
func selectorAt(i, j, sel int, withPrefill bool) measure {
	return func(s *Summary) (float64, []float64) {
		sr := s.Analysis.Selectors[j]
		per := perTrace(s, j, withPrefill)
		tokens := pipeTokens(s, i, withPrefill)
		v := atTokens(sr.Curves[sel], per, tokens)
		x := tokens / per
		if math.IsNaN(v) || x > float64(len(sr.PerProblem[sel])) {
			return v, nil
		}
		lo := int(math.Floor(x))
		f := x - float64(lo)
		pp := make([]float64, len(s.Analysis.Search[j].Counts))
		for q := range pp {
			pp[q] = sr.PerProblem[sel][lo-1][q]
			if f > 0 {
				pp[q] = (1-f)*pp[q] + f*sr.PerProblem[sel][lo][q]
			}
		}
		return v, pp
	}
}

// onSets is selector sel on policy j's sets of the cross-pairing.
func onSets(j, sel int) measure {
	return func(s *Summary) (float64, []float64) {
		per := s.Analysis.Selectors[j].Sets[sel]
		return meanOf(per), per
	}
}

// aggregatorOn is aggregator a on policy j's sets.
func aggregatorOn(j, a int) measure {
	return func(s *Summary) (float64, []float64) {
		return s.Analysis.Cross.Accuracy[j][a], s.Analysis.Cross.PerProblem[j][a]
	}
}

// controls is the study's comparisons of SPIRAL with the controls that
// need no training, as text and as Comparisons.
func (st *Study) controls() (string, []Comparison) {
	var b strings.Builder
	var cmps []Comparison
	pols := st.policies()
	n := st.Runs[0].Config.SetSize
	noise := st.Runs[0].Options.Noise
	add := func(c Comparison) {
		cmps = append(cmps, c)
		fmt.Fprintf(&b, "  %s\n", c)
	}

	fmt.Fprintf(&b, "\nSelectors that need no training, on the cross-pairing's sets of %d of each policy's traces (tool noise e = %g; mean [per seed])\n", n, noise)
	b.WriteString("rule: the Bayes rule over the checks shown; bayes: the Bayes selector of the task's model with the policy's pass@1 as proposal accuracy;\n")
	b.WriteString("ceiling: bayes's exact accuracy on sets drawn from that model\n")
	fmt.Fprintf(&b, "%-13s", "search")
	for _, name := range selectorNames {
		fmt.Fprintf(&b, " %-30s", name)
	}
	fmt.Fprintf(&b, " %-30s %-30s\n", "ceiling", "own aggregator")
	for j, name := range pols {
		fmt.Fprintf(&b, "%-13s", name)
		for sel := range numSelectors {
			fmt.Fprintf(&b, " %-30s", st.seedsOf(func(s *Summary) float64 { return meanOf(s.Analysis.Selectors[j].Sets[sel]) }))
		}
		fmt.Fprintf(&b, " %-30s %-30s\n",
			st.seedsOf(func(s *Summary) float64 { return s.Analysis.Selectors[j].Ceiling }),
			st.seedsOf(func(s *Summary) float64 { return s.Analysis.Cross.Accuracy[j][j] }))
	}
	sp := st.policyIndex("spiral")
	if sp >= 0 {
		b.WriteString("paired on the same sets: spiral's aggregator minus each selector (mean [per seed ± SE clustered by problem], t test over seeds)\n")
		for j, name := range pols {
			for _, sel := range []int{selMajority, selCheck, selRule, selBayes} {
				add(st.compare(fmt.Sprintf("spiral aggregator - %s on %s's sets", selectorNames[sel], name), aggregatorOn(j, sp), onSets(j, sel)))
			}
		}
	}

	for _, withPrefill := range []bool{false, true} {
		if sp < 0 {
			break
		}
		what := "generated tokens"
		if withPrefill {
			what = "generated + prompt tokens"
		}
		fmt.Fprintf(&b, "\nAt spiral's pipeline %s (%s a problem): each policy's traces under each selector, k interpolated (mean [per seed])\n",
			what, st.seedsOf(func(s *Summary) float64 { return pipeTokens(s, sp, withPrefill) }))
		fmt.Fprintf(&b, "%-13s %8s", "search", "traces")
		for _, name := range selectorNames {
			fmt.Fprintf(&b, " %-30s", name)
		}
		b.WriteString("\n")
		for j, name := range pols {
			fmt.Fprintf(&b, "%-13s %8.2f", name, st.over(func(s *Summary) float64 { return pipeTokens(s, sp, withPrefill) / perTrace(s, j, withPrefill) }).Mean)
			for sel := range numSelectors {
				f := selectorAt(sp, j, sel, withPrefill)
				fmt.Fprintf(&b, " %-30s", st.seedsOf(func(s *Summary) float64 { v, _ := f(s); return v }))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "spiral's pipeline (%s) minus each, paired\n", st.seedsOf(func(s *Summary) float64 { v, _ := pipelineMeasure(sp)(s); return v }))
		for j, name := range pols {
			for sel := range numSelectors {
				add(st.compare(fmt.Sprintf("pipeline - %s %s at equal %s", name, selectorNames[sel], what), pipelineMeasure(sp), selectorAt(sp, j, sel, withPrefill)))
			}
		}
	}

	// The aggregators' behaviour.
	fmt.Fprintf(&b, "\nWhat each aggregator does with the checks, on the base model's sets and on its own policy's (mean [per seed])\n")
	b.WriteString("copies a hit: answer is a pair shown as a hit, on sets showing one; writes a miss: answer is a pair shown as a miss, on sets showing no hit;\n")
	b.WriteString("right, no hit: accuracy on sets showing no hit; right, none right: accuracy on sets holding no right candidate\n")
	fmt.Fprintf(&b, "%-13s %-13s %-30s %-30s %-30s %-30s\n", "sets of", "aggregator", "copies a hit", "writes a miss", "right, no hit", "right, none right")
	row := func(sets, label string, f func(s *Summary) Behaviour) {
		fmt.Fprintf(&b, "%-13s %-13s %-30s %-30s %-30s %-30s\n", sets, label,
			st.seedsOf(func(s *Summary) float64 { v := f(s); return rate(v.CopiesHit, v.HitSets) }),
			st.seedsOf(func(s *Summary) float64 { v := f(s); return rate(v.WritesMiss, v.NoHitSets) }),
			st.seedsOf(func(s *Summary) float64 { v := f(s); return rate(v.RightNoHit, v.NoHitSets) }),
			st.seedsOf(func(s *Summary) float64 { v := f(s); return rate(v.RightNoRight, v.NoRightSets) }))
	}
	for _, j := range []int{0, -1} {
		for a, name := range pols {
			sj := j
			if j < 0 {
				if a == 0 {
					continue
				}
				sj = a
			}
			row(pols[sj], name, func(s *Summary) Behaviour { return s.Analysis.Behaviour[sj][a] })
		}
	}
	for j, name := range pols {
		row(name, "rule", func(s *Summary) Behaviour { return s.Analysis.RuleBehaviour[j] })
		row(name, "uniform", func(s *Summary) Behaviour { return s.Analysis.UniformBehaviour[j] })
	}
	b.WriteString("sets showing a hit, showing none, holding no right candidate (share of all sets):\n")
	for j, name := range pols {
		fmt.Fprintf(&b, "%-13s %-30s %-30s %-30s\n", name,
			st.seedsOf(func(s *Summary) float64 {
				v := s.Analysis.UniformBehaviour[j]
				return v.HitSets / (v.HitSets + v.NoHitSets)
			}),
			st.seedsOf(func(s *Summary) float64 {
				v := s.Analysis.UniformBehaviour[j]
				return v.NoHitSets / (v.HitSets + v.NoHitSets)
			}),
			st.seedsOf(func(s *Summary) float64 {
				v := s.Analysis.UniformBehaviour[j]
				return v.NoRightSets / (v.HitSets + v.NoHitSets)
			}))
	}
	return b.String(), cmps
}

// MarshalJSON writes c with null for every value that is not finite (a
// test with too few seeds, a standard error the run cannot give).
func (c Comparison) MarshalJSON() ([]byte, error) {
	list := func(xs []float64) []any {
		out := make([]any, len(xs))
		for i, x := range xs {
			out[i] = finite(x)
		}
		return out
	}
	return json.Marshal(struct {
		Label string `json:"label"`
		A     []any  `json:"a"`
		B     []any  `json:"b"`
		Diff  any    `json:"diff"`
		Seeds []any  `json:"per_seed"`
		SE    []any  `json:"per_seed_se"`
		T     any    `json:"t"`
		DF    int    `json:"df"`
		P     any    `json:"p"`
	}{c.Label, list(c.A), list(c.B), finite(c.Diff), list(c.Seeds), list(c.SE), finite(c.T), c.DF, finite(c.P)})
}

// finite is x, or nil when x is NaN or infinite.
func finite(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
