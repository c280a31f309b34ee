package main

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"spiral"
	"spiral/eval"
	"spiral/internal/plotstyle"
)

// Output file names.
const (
	entropyFile  = "entropy.png"
	successFile  = "success.png"
	coverageFile = "coverage.png"
	summaryFile  = "summary.txt"
)

// reportKs are the widths k at which the summary lists coverage and
// efficiency.
var reportKs = []int{1, 2, 4, 8, 16, 32, 64}

func (res *result) files() []string {
	var out []string
	for _, f := range []string{entropyFile, successFile, coverageFile, summaryFile} {
		out = append(out, filepath.Join(res.opt.out, f))
	}
	return out
}

// write writes the plots and the summary to res.opt.out.
func write(res *result) error {
	if err := os.MkdirAll(res.opt.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(res.opt.out, summaryFile), []byte(res.summary()), 0o644); err != nil {
		return err
	}
	for _, f := range []func() error{res.plotEntropy, res.plotSuccess, res.plotCoverage} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// summary is the text summary: "key: value" lines, one fact per line, then
// the verdict. It holds nothing that depends on the machine or the clock.
func (res *result) summary() string {
	var b strings.Builder
	o := res.opt
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s: %v\n", k, v) }
	b.WriteString("# toytrain: SPIRAL versus GRPO on a toy of strategies (see go doc ./examples/toytrain)\n")
	kv("seed", o.seed)
	kv("steps", o.steps)
	kv("batch_problems", o.batch)
	kv("train_problems", o.trainProblems)
	kv("eval_problems", o.evalProblems)
	kv("learning_rate", o.lr)
	kv("strategies", o.toy.V)
	kv("single_fraction", o.toy.single)
	kv("complementary_subset", o.toy.comp)
	kv("complementary_need", o.toy.need)
	kv("luck", o.toy.luck)
	kv("set_size_n", res.setN)
	c := spiral.Paper()
	kv("outputs_per_problem", fmt.Sprintf("%d for every arm (SPIRAL: %d search + %d sets x %d aggregations; GRPO: a group of %d)",
		c.Generations(), c.SearchTraces, c.Sets, c.AggregationsPerSet, c.Generations()))
	kv("update", fmt.Sprintf("logits += learning_rate * A * (e_v - p) / %d for every output v with advantage A, averaged over the batch's problems", c.Generations()))
	kv("eval_single_problems", fmt.Sprintf("%d of %d", countKind(res.evals, single), len(res.evals)))
	kv("coverage_samples_per_problem", o.evalSamples)
	for _, a := range res.arms {
		p := a.arm.name + "."
		kv(p+"about", a.arm.about)
		first := a.history[0]
		kv(p+"entropy_bits.start", f4(first.Entropy))
		kv(p+"entropy_bits.final", f4(a.final.Entropy))
		kv(p+"single_success.final", f4(a.final.Single))
		kv(p+"aggregated_success.final", f4(a.final.Aggregated))
		kv(p+"best_action_success.start", f4(first.BestAction))
		kv(p+"best_action_success.final", f4(a.final.BestAction))
		kv(p+"adopt_prob.single", f4(a.final.Adopt[single]))
		kv(p+"adopt_prob.complementary", f4(a.final.Adopt[complementary]))
		for _, k := range reportKs {
			if k <= o.kmax {
				kv(fmt.Sprintf("%scoverage@%d", p, k), f4(a.coverage[k-1]))
			}
		}
		if a.arm.config != nil {
			kv(p+"no_credit_fraction", noCreditLine(a.stats, *a.arm.config))
		}
		kv(p+"search_logits_moved_sq", fmt.Sprintf("%.4f (||θ_T - θ_0||^2)", a.moved))
		kv(p+"search_noise_sq", fmt.Sprintf("%.4f (lr^2 sum over steps of E||s - E[s]||^2 for the search step s: what the noise alone would make ||θ_T - θ_0||^2)", res.noise(a.streamResult)))
	}
	for i, e := range res.eff {
		p := fmt.Sprintf("efficiency.%s_vs_%s.", res.arms[i+1].arm.name, res.arms[0].arm.name)
		counts := map[eval.EfficiencyStatus]int{}
		for _, pt := range e.Points {
			counts[pt.Status]++
		}
		for _, s := range []eval.EfficiencyStatus{eval.EfficiencyReached, eval.EfficiencyLowerBound, eval.EfficiencyUnreached, eval.EfficiencySaturated} {
			kv(p+"points_"+strings.ReplaceAll(s.String(), " ", "_"), counts[s])
		}
		if e.MaxIndex >= 0 {
			kv(p+"max", fmt.Sprintf("%.3f at k_baseline = %d (k_method = %.2f)", e.Max, e.MaxKA, e.Points[e.MaxIndex].KB))
		} else {
			kv(p+"max", "none reached")
		}
		for _, k := range reportKs {
			if k <= o.kmax {
				pt := e.Points[k-1]
				kv(fmt.Sprintf("%sat_k%d", p, k), fmt.Sprintf("%s %s", f3(pt.Efficiency), pt.Status))
			}
		}
	}
	for _, pr := range res.pairs {
		res.comparePair(&b, pr)
	}
	b.WriteString(res.verdict())
	return b.String()
}

// verdict states, from the numbers, how each arm compares with the baseline
// (the first arm), and why, as "verdict.<arm>" and "why.<arm>.<i>" lines.
func (res *result) verdict() string {
	if len(res.arms) < 2 {
		return "verdict: one arm only, nothing to compare\n"
	}
	var b strings.Builder
	base := res.arms[0]
	B := base.arm.name
	kmax := res.opt.kmax
	for i, a := range res.arms[1:] {
		A := a.arm.name
		fmt.Fprintf(&b, "verdict.%s: %s\n", A, res.coverageVerdict(a))
		why := []string{
			fmt.Sprintf("%s's %s: entropy %.3f -> %.3f bits, single-trace success %.4f -> %.4f",
				B, base.arm.objective, base.history[0].Entropy, base.final.Entropy, base.history[0].Single, base.final.Single),
			fmt.Sprintf("%s's %s: entropy %.3f -> %.3f bits, single-trace success %.4f -> %.4f",
				A, a.arm.objective, a.history[0].Entropy, a.final.Entropy, a.history[0].Single, a.final.Single),
			fmt.Sprintf("best-action aggregated success (what the search distribution is worth to a perfect aggregator): %s %.4f -> %.4f, %s %.4f -> %.4f",
				B, base.history[0].BestAction, base.final.BestAction, A, a.history[0].BestAction, a.final.BestAction),
		}
		if math.Abs(a.final.BestAction-a.history[0].BestAction) < 0.02 {
			why = append(why, fmt.Sprintf("%s's search changed what sets are worth by less than 0.02 (the uniform start is already diverse): its gain over %s is in not losing that diversity", A, B))
		}
		if wb, wa := base.searchWeight, a.searchWeight; wb != nil && wa != nil && wa.Sign() > 0 {
			ratio, _ := new(big.Rat).Quo(wb, wa).Float64()
			fb, _ := wb.Float64()
			fa, _ := wa.Float64()
			size := fmt.Sprintf("%.1f times smaller for %s", ratio, A)
			if ratio < 1 {
				size = fmt.Sprintf("%.1f times larger for %s", 1/ratio, A)
			}
			why = append(why, fmt.Sprintf("the expected search step is lr times %s = %.4f of %s's objective gradient and lr times %s = %.4f of %s's (spiral.Config.RoleWeights: for GRPO the within-set aggregation weight of its group as one set of G outputs, for SPIRAL the search weight M; each output's term divided by the outputs per problem): %s",
				wb.RatString(), fb, B, wa.RatString(), fa, A, size))
		}
		if base.arm.singleTrace && !a.arm.singleTrace && a.coverage[0] < base.coverage[0] {
			why = append(why, fmt.Sprintf("%s is better at k = 1 (pass@1 %.4f vs %.4f) because it optimises exactly the single-trace success that pass@1 measures; diversity pays only when several samples are drawn",
				B, base.coverage[0], a.coverage[0]))
		}
		if base.final.Adopt == base.history[0].Adopt {
			why = append(why, fmt.Sprintf("%s never trains the aggregation head (adopt probability stays %.2f): its aggregated success is %.4f with its own head against %.4f with the best action; %s's head learned adopt %.3f on single and %.3f on complementary problems: %.4f against %.4f",
				B, base.final.Adopt[single], base.final.Aggregated, base.final.BestAction, A, a.final.Adopt[single], a.final.Adopt[complementary], a.final.Aggregated, a.final.BestAction))
		}
		if e := res.eff[i]; e.MaxIndex >= 0 {
			end := ""
			if e.MaxKA == kmax {
				end = ", at the end of the grid, where the efficiency is still rising"
			}
			why = append(why, fmt.Sprintf("scaling efficiency (eval.ScalingEfficiency, %s as the baseline): %s (%s) at k = 1, largest %.3f at k = %d%s",
				B, f3(e.Points[0].Efficiency), e.Points[0].Status, e.Max, e.MaxKA, end))
		}
		for j, w := range why {
			fmt.Fprintf(&b, "why.%s.%d: %s\n", A, j+1, w)
		}
	}
	for _, pr := range res.pairs {
		b.WriteString(res.pairVerdict(pr))
	}
	return b.String()
}

// coverageVerdict compares arm a's coverage curve with the baseline's.
func (res *result) coverageVerdict(a armResult) string {
	base := res.arms[0]
	kmax := res.opt.kmax
	above := 0
	cross := 0 // the smallest k from which a's coverage is above the baseline's up to kmax
	for k := kmax; k >= 1; k-- {
		if a.coverage[k-1] > base.coverage[k-1] {
			above++
			if cross == k+1 || k == kmax {
				cross = k
			}
		}
	}
	curve := fmt.Sprintf("coverage@1 %.4f vs %.4f, coverage@%d %.4f vs %.4f", a.coverage[0], base.coverage[0], kmax, a.coverage[kmax-1], base.coverage[kmax-1])
	switch {
	case above == kmax:
		return fmt.Sprintf("%s beats %s at every k = 1..%d (%s)", a.arm.name, base.arm.name, kmax, curve)
	case above == 0:
		return fmt.Sprintf("%s does NOT beat %s at any k = 1..%d (%s)", a.arm.name, base.arm.name, kmax, curve)
	case cross > 0:
		return fmt.Sprintf("%s beats %s at every k >= %d; at k = %d it does not (%s)", a.arm.name, base.arm.name, cross, cross-1, curve)
	}
	return fmt.Sprintf("%s beats %s at %d of the %d widths k, not at k = %d (%s)", a.arm.name, base.arm.name, above, kmax, kmax, curve)
}

func countKind(ps []problem, k int) int {
	n := 0
	for _, p := range ps {
		if p.kind == k {
			n++
		}
	}
	return n
}

func f4(x float64) string { return fmt.Sprintf("%.4f", x) }

func f3(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return fmt.Sprintf("%.3f", x)
}

// addCurve adds arm a's curve of y to p in its method's colour and the
// kind's pattern, labelled with the arm's name and what: the mean over its
// streams with a band of one standard deviation either side when it has
// more than one stream ("x16" after the name), else its main stream's.
func addCurve(p *plot.Plot, a armResult, y func(streamResult, int) (x, y float64), points int, k plotstyle.Kind, what string) error {
	mean, lo, hi := make(plotter.XYs, points), make(plotter.XYs, points), make(plotter.XYs, points)
	for i := range points {
		xs := make([]float64, len(a.replicates))
		for r, sr := range a.replicates {
			mean[i].X, xs[r] = y(sr, i)
		}
		e := meanSE(xs)
		sd := e.se * math.Sqrt(float64(len(xs)))
		mean[i].Y = e.mean
		lo[i], hi[i] = plotter.XY{X: mean[i].X, Y: e.mean - sd}, plotter.XY{X: mean[i].X, Y: e.mean + sd}
	}
	label := a.arm.name
	if len(a.replicates) > 1 {
		label = fmt.Sprintf("%s x%d", label, len(a.replicates))
		if err := plotstyle.Band(p, lo, hi, a.arm.name); err != nil {
			return err
		}
	}
	if what != "" {
		label += ": " + what
	}
	return plotstyle.Line(p, mean, a.arm.name, k, label)
}

// historyCurve reads the metric of a stream's i-th evaluation.
func historyCurve(m func(metrics) float64) func(streamResult, int) (float64, float64) {
	return func(sr streamResult, i int) (float64, float64) {
		pt := sr.history[i]
		return float64(pt.step), m(pt.metrics)
	}
}

func (res *result) save(p *plot.Plot, name string) error {
	return plotstyle.Save(p, filepath.Join(res.opt.out, name))
}

func (res *result) plotEntropy() error {
	p := plotstyle.New("Search entropy (xN: mean of N streams, band ±1 sd)", "training step", "entropy (bits)")
	p.Y.Min, p.Y.Max = 0, math.Log2(float64(res.opt.toy.V))*1.2
	for _, a := range res.arms {
		if err := addCurve(p, a, historyCurve(func(m metrics) float64 { return m.Entropy }), len(a.history), plotstyle.Search, ""); err != nil {
			return err
		}
	}
	return res.save(p, entropyFile)
}

func (res *result) plotSuccess() error {
	p := plotstyle.New("Held-out success (exact; xN: mean of N streams ± 1 sd)", "training step", "success rate")
	p.Y.Min, p.Y.Max = 0, 1
	for _, a := range res.arms {
		for _, s := range []struct {
			kind  plotstyle.Kind
			label string
			y     func(metrics) float64
		}{
			{plotstyle.Aggregator, "own head", func(m metrics) float64 { return m.Aggregated }},
			{plotstyle.Reference, "best action", func(m metrics) float64 { return m.BestAction }},
			{plotstyle.Search, "single trace", func(m metrics) float64 { return m.Single }},
		} {
			if err := addCurve(p, a, historyCurve(s.y), len(a.history), s.kind, s.label); err != nil {
				return err
			}
		}
	}
	return res.save(p, successFile)
}

func (res *result) plotCoverage() error {
	p := plotstyle.New(fmt.Sprintf("pass@k of the trained search (%d held-out problems)", len(res.evals)), "k (samples, log scale)", "coverage")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for k := 1; k <= res.opt.kmax; k *= 2 {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = 0, 1
	for _, a := range res.arms {
		cov := func(sr streamResult, k int) (float64, float64) { return float64(k + 1), sr.coverage[k] }
		if err := addCurve(p, a, cov, len(a.coverage), plotstyle.Search, ""); err != nil {
			return err
		}
	}
	return res.save(p, coverageFile)
}
