package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A Study is the runs of several seeds with the same options.
type Study struct {
	Runs []*Summary `json:"runs"`
}

// seedDir is where RunStudy writes the run of one seed, under the study's
// directory.
func seedDir(out string, seed uint64) string {
	return filepath.Join(out, fmt.Sprintf("seed-%d", seed))
}

// RunStudy runs every seed with opt (each into seedDir(opt.Out, seed)) and
// writes the study's summary and plots to opt.Out.
func RunStudy(opt Options, seeds []uint64, log io.Writer) (*Study, error) {
	st := &Study{}
	for _, seed := range seeds {
		o := opt
		o.Seed = seed
		o.Out = ""
		if opt.Out != "" {
			o.Out = seedDir(opt.Out, seed)
		}
		fmt.Fprintf(log, "seed %d\n", seed)
		s, err := Run(o, log)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		st.Runs = append(st.Runs, s)
	}
	if opt.Out != "" && !opt.TrainOnly {
		if err := writeStudy(opt.Out, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// LoadStudy reads the summary.json of every seed directory given.
func LoadStudy(dirs []string) (*Study, error) {
	st := &Study{}
	for _, d := range dirs {
		js, err := os.ReadFile(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		var s Summary
		if err := json.Unmarshal(js, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		st.Runs = append(st.Runs, &s)
	}
	return st, nil
}

// Reanalyze measures again the policies of every seed directory given
// (each holding a summary.json and the weights a run wrote), replaces the
// analysis in its summary.json, and returns the study. The analysis draws
// from the seed's own streams, so it is the one the run would have made.
func Reanalyze(dirs []string, log io.Writer) (*Study, error) {
	st := &Study{}
	for _, d := range dirs {
		js, err := os.ReadFile(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		var sum Summary
		if err := json.Unmarshal(js, &sum); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		opt := sum.Options
		s, err := newSetup(opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		modelCfg := opt.Model
		modelCfg.Seed = int64(opt.Seed)
		shape, err := NewPolicy(modelCfg, s.maxLen)
		if err != nil {
			return nil, err
		}
		specs := []ArmSpec{{Name: "base", MaxPairs: 1}}
		for _, a := range sum.Arms {
			specs = append(specs, a.Spec)
		}
		var policies []namedPolicy
		for _, spec := range specs {
			p, err := shape.Load(filepath.Join(d, spec.Name+".weights"))
			if err != nil {
				return nil, err
			}
			policies = append(policies, namedPolicy{Spec: spec, Policy: p})
		}
		t0 := time.Now()
		if sum.Analysis, err = Analyze(s, opt, policies); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		fmt.Fprintf(log, "%s: analysis %.0f s\n", d, time.Since(t0).Seconds())
		if err := writeReport(d, &sum); err != nil {
			return nil, err
		}
		st.Runs = append(st.Runs, &sum)
	}
	return st, nil
}

// writeStudy writes study.json, summary.txt and the plots to dir.
func writeStudy(dir string, st *Study) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(st.stats(), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(st.text()), 0o644); err != nil {
		return err
	}
	return st.plots(dir)
}

// Spread is a quantity over seeds: its mean, sample standard deviation
// (divisor n-1; 0 for one seed), least and greatest value, and the values.
type Spread struct {
	Mean   float64   `json:"mean"`
	SD     float64   `json:"sd"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

func spread(xs []float64) Spread {
	s := Spread{Values: xs, Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x
		s.Min = min(s.Min, x)
		s.Max = max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			s.SD += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(s.SD / float64(len(xs)-1))
	}
	return s
}

// over returns f of every run, as a Spread.
func (st *Study) over(f func(*Summary) float64) Spread {
	xs := make([]float64, len(st.Runs))
	for i, r := range st.Runs {
		xs[i] = f(r)
	}
	return spread(xs)
}

// String is "mean ± sd".
func (s Spread) String() string { return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.SD) }

// pm is mean ± sd with the given decimals.
func (s Spread) pm(dec int) string { return fmt.Sprintf("%.*f ± %.*f", dec, s.Mean, dec, s.SD) }

// policies are the names of the analysed policies (the first run's).
func (st *Study) policies() []string { return st.Runs[0].Analysis.Policies }

// pipeline is a policy deployed as SPIRAL deploys it at evaluation: its
// own n = 4 search traces, then its own aggregator once on them.
type pipeline struct {
	Accuracy, Generated, Prefill float64
}

func pipelineOf(s *Summary, i int) pipeline {
	a := s.Analysis
	n := float64(s.Config.SetSize)
	return pipeline{
		Accuracy:  a.Cross.Accuracy[i][i],
		Generated: n*a.Search[i].Generated + a.Cross.Generated[i],
		Prefill:   n*a.Search[i].Prefill + a.Cross.Prefill,
	}
}

// atTokens interpolates a policy's maj@k curve (k = 1..K, k traces
// costing k*perTrace tokens) linearly at tokens; beyond the curve's ends it
// returns NaN.
func atTokens(curve []float64, perTrace, tokens float64) float64 {
	x := tokens / perTrace // k, fractional
	if x < 1 || x > float64(len(curve)) {
		return math.NaN()
	}
	lo := int(math.Floor(x))
	if lo == len(curve) {
		return curve[lo-1]
	}
	f := x - float64(lo)
	return (1-f)*curve[lo-1] + f*curve[lo]
}

// studyStats is the study's numbers, for summary.json.
type studyStats struct {
	Seeds    []uint64 `json:"seeds"`
	Options  Options  `json:"options"`
	Policies []string `json:"policies"`
	// Values holds "<policy>/<measure>" over seeds; Cross[policy] the
	// row of the cross-pairing table (one entry per aggregator, then the
	// majority vote and the oracle).
	Values map[string]Spread     `json:"values"`
	Cross  map[string][]Spread   `json:"cross"`
	ByArm  map[string]ArmSummary `json:"arms"`
	// Selectors[policy] is each no-training selector (selectorNames) on
	// the policy's sets of the cross-pairing, then the bayes selector's
	// model ceiling; Comparisons the paired comparisons of summary.txt.
	Selectors   map[string][]Spread `json:"selectors"`
	Comparisons []Comparison        `json:"comparisons"`
}

// ArmSummary is one arm's training, over seeds.
type ArmSummary struct {
	Generated, Prefill, Kept Spread
}

func (st *Study) stats() studyStats {
	ss := studyStats{Options: st.Runs[0].Options, Policies: st.policies(), Values: map[string]Spread{}, Cross: map[string][]Spread{}, ByArm: map[string]ArmSummary{}}
	for _, r := range st.Runs {
		ss.Seeds = append(ss.Seeds, r.Options.Seed)
	}
	for i, name := range st.policies() {
		ss.Values[name+"/pass@1"] = st.over(func(s *Summary) float64 { return s.Analysis.Search[i].Coverage[0] })
		ss.Values[name+"/pass@4"] = st.over(func(s *Summary) float64 { return s.Analysis.Search[i].Coverage[3] })
		ss.Values[name+"/pass@K"] = st.over(func(s *Summary) float64 { c := s.Analysis.Search[i].Coverage; return c[len(c)-1] })
		ss.Values[name+"/maj@4"] = st.over(func(s *Summary) float64 { return s.Analysis.Search[i].Majority[3] })
		ss.Values[name+"/entropy"] = st.over(func(s *Summary) float64 { return meanOf(s.Analysis.Search[i].Entropy) })
		ss.Values[name+"/unique"] = st.over(func(s *Summary) float64 { return s.Analysis.Unique[i] })
		var row []Spread
		for j := range st.policies() {
			row = append(row, st.over(func(s *Summary) float64 { return s.Analysis.Cross.Accuracy[i][j] }))
		}
		row = append(row, st.over(func(s *Summary) float64 { return s.Analysis.Cross.Majority[i] }),
			st.over(func(s *Summary) float64 { return s.Analysis.Cross.Oracle[i] }))
		ss.Cross[name] = row
	}
	ss.Selectors = map[string][]Spread{}
	for j, name := range st.policies() {
		var row []Spread
		for sel := range numSelectors {
			row = append(row, st.over(func(s *Summary) float64 { return meanOf(s.Analysis.Selectors[j].Sets[sel]) }))
		}
		ss.Selectors[name] = append(row, st.over(func(s *Summary) float64 { return s.Analysis.Selectors[j].Ceiling }))
	}
	_, ss.Comparisons = st.controls()
	for ai := range st.Runs[0].Arms {
		name := st.Runs[0].Arms[ai].Spec.Name
		last := func(s *Summary) Point { h := s.Arms[ai].History; return h[len(h)-1] }
		ss.ByArm[name] = ArmSummary{
			Generated: st.over(func(s *Summary) float64 { return float64(last(s).Generated) }),
			Prefill:   st.over(func(s *Summary) float64 { return float64(last(s).Prefill) }),
			Kept:      st.over(func(s *Summary) float64 { return float64(s.Arms[ai].Kept) / float64(s.Arms[ai].Problems) }),
		}
	}
	return ss
}

func meanOf(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// text is the study's summary.txt.
func (st *Study) text() string {
	var b strings.Builder
	r0 := st.Runs[0]
	o := r0.Options
	c := r0.Config
	seeds := make([]string, len(st.Runs))
	for i, r := range st.Runs {
		seeds[i] = fmt.Sprint(r.Options.Seed)
	}
	fmt.Fprintf(&b, "lmtrain study: pair-sum, seeds %s; every number is mean ± sd over the seeds\n", strings.Join(seeds, ", "))
	fmt.Fprintf(&b, "model: %d blocks, width %d, %d heads; warm-up %d steps; %d steps of %d problems per arm (dynamic sampling up to %d rounds), lr %g\n",
		o.Model.Layers, o.Model.Dim, o.Model.Heads, o.Warmup, o.Steps, o.Problems, o.Rounds, o.LearningRate)
	fmt.Fprintf(&b, "SPIRAL: N1 = %d, n = %d, K = %d, N2 = %d; GRPO: %s advantages; test: %d problems disjoint from training, %d samples each\n\n",
		c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, o.GRPOPreset, o.Test, o.Samples)

	pols := st.policies()
	b.WriteString("Training (per problem ceiling of generated tokens; tokens spent over the whole run; share of drawn problems trained on)\n")
	fmt.Fprintf(&b, "%-13s %8s %22s %22s %16s\n", "arm", "ceiling", "generated", "prefill", "kept")
	for ai, a := range r0.Arms {
		last := func(s *Summary) Point { h := s.Arms[ai].History; return h[len(h)-1] }
		fmt.Fprintf(&b, "%-13s %8d %22s %22s %16s\n", a.Spec.Name, a.Budget.Generated(),
			st.over(func(s *Summary) float64 { return float64(last(s).Generated) }).pm(0),
			st.over(func(s *Summary) float64 { return float64(last(s).Prefill) }).pm(0),
			st.over(func(s *Summary) float64 { return float64(s.Arms[ai].Kept) / float64(s.Arms[ai].Problems) }).pm(2))
	}

	fmt.Fprintf(&b, "\nSearch after training (%d samples per test problem; maj@k: majority vote over k samples, ties at random; entropy: of a problem's answers, bits)\n", o.Samples)
	fmt.Fprintf(&b, "%-13s %15s %15s %15s %15s %15s %15s %8s\n", "policy", "pass@1", "pass@4", fmt.Sprintf("pass@%d", o.Samples), "maj@4", "entropy", "unique", "length")
	for i, name := range pols {
		at := func(f func(SearchResult) float64) string {
			return st.over(func(s *Summary) float64 { return f(s.Analysis.Search[i]) }).pm(3)
		}
		fmt.Fprintf(&b, "%-13s %15s %15s %15s %15s %15s %15s %8.2f\n", name,
			at(func(r SearchResult) float64 { return r.Coverage[0] }),
			at(func(r SearchResult) float64 { return r.Coverage[3] }),
			at(func(r SearchResult) float64 { return r.Coverage[len(r.Coverage)-1] }),
			at(func(r SearchResult) float64 { return r.Majority[3] }),
			at(func(r SearchResult) float64 { return meanOf(r.Entropy) }),
			st.over(func(s *Summary) float64 { return s.Analysis.Unique[i] }).pm(3),
			st.over(func(s *Summary) float64 { return s.Analysis.Search[i].Generated }).Mean)
	}
	b.WriteString("unique: expected share of test problems this policy covers at k = samples and no other trained policy does (base: no other policy)\n")

	fmt.Fprintf(&b, "\nCross-pairing: aggregator accuracy on the same %d disjoint sets of 4 per problem of each search policy's traces\n", r0.Analysis.Cross.SetsPerProblem)
	fmt.Fprintf(&b, "%-13s", "search \\ agg")
	for _, name := range pols {
		fmt.Fprintf(&b, " %15s", name)
	}
	fmt.Fprintf(&b, " %15s %15s\n", "majority", "oracle")
	for i, name := range pols {
		fmt.Fprintf(&b, "%-13s", name)
		for j := range pols {
			fmt.Fprintf(&b, " %15s", st.over(func(s *Summary) float64 { return s.Analysis.Cross.Accuracy[i][j] }).pm(3))
		}
		fmt.Fprintf(&b, " %15s %15s\n",
			st.over(func(s *Summary) float64 { return s.Analysis.Cross.Majority[i] }).pm(3),
			st.over(func(s *Summary) float64 { return s.Analysis.Cross.Oracle[i] }).pm(3))
	}
	b.WriteString("aggregator minus majority on the same sets, paired (mean ± sd over seeds of the difference; in brackets the largest per-seed paired SE)\n")
	for i, name := range pols {
		fmt.Fprintf(&b, "%-13s", name)
		for j := range pols {
			d := st.over(func(s *Summary) float64 { return s.Analysis.Cross.VsMajority[i][j].Diff })
			se := st.over(func(s *Summary) float64 { return s.Analysis.Cross.VsMajority[i][j].SE })
			fmt.Fprintf(&b, " %+7.3f (%.3f)", d.Mean, se.Max)
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "\nProbes: aggregator accuracy on hand-built sets of 4 (%d of each kind per test problem)\n", ProbesPerProblem)
	fmt.Fprintf(&b, "%-13s %15s %15s %15s\n", "aggregator", "all wrong", "1 right, 3 agree", "all right")
	for j, name := range pols {
		fmt.Fprintf(&b, "%-13s %15s %15s %15s\n", name,
			st.over(func(s *Summary) float64 { return s.Analysis.Probes[j].AllWrong }).pm(3),
			st.over(func(s *Summary) float64 { return s.Analysis.Probes[j].OneRight }).pm(3),
			st.over(func(s *Summary) float64 { return s.Analysis.Probes[j].AllRight }).pm(3))
	}
	b.WriteString("a majority vote scores 0, 0 and 1 on these kinds; the oracle 0, 1, 1\n")

	b.WriteString("\nCoverage overlap at k = samples (share of test problems: both, only the row's policy, only the column's)\n")
	for i, a := range pols {
		for j, bb := range pols {
			if j <= i || i == 0 {
				continue
			}
			fmt.Fprintf(&b, "%-13s vs %-13s both %s  only %s %s  only %s %s\n", a, bb,
				st.over(func(s *Summary) float64 { return s.Analysis.Overlap[i][j].Both }).pm(3),
				a, st.over(func(s *Summary) float64 { return s.Analysis.Overlap[i][j].OnlyA }).pm(3),
				bb, st.over(func(s *Summary) float64 { return s.Analysis.Overlap[i][j].OnlyB }).pm(3))
		}
	}

	b.WriteString("\nBy difficulty (thirds of the test problems by the base model's success on an independent draw)\n")
	fmt.Fprintf(&b, "%-8s %-13s %15s %15s %15s %15s\n", "third", "policy", "pass@1", fmt.Sprintf("pass@%d", o.Samples), "maj@4", "entropy")
	for d, bin := range r0.Analysis.Difficulty {
		fmt.Fprintf(&b, "%-8s base success %s\n", bin.Name, st.over(func(s *Summary) float64 { return s.Analysis.Difficulty[d].BaseSuccess }).pm(3))
		for i, name := range pols {
			fmt.Fprintf(&b, "%-8s %-13s %15s %15s %15s %15s\n", "", name,
				st.over(func(s *Summary) float64 { return s.Analysis.Difficulty[d].Pass1[i] }).pm(3),
				st.over(func(s *Summary) float64 { return s.Analysis.Difficulty[d].PassK[i] }).pm(3),
				st.over(func(s *Summary) float64 { return s.Analysis.Difficulty[d].Majority[i] }).pm(3),
				st.over(func(s *Summary) float64 { return s.Analysis.Difficulty[d].Entropy[i] }).pm(3))
		}
	}

	b.WriteString("\nAt deployment, per test problem: each policy's own 4 traces and its own aggregator once (the pipeline),\n")
	b.WriteString("against a majority vote over each policy's traces and its pass@1 at the same generated tokens (maj@k interpolated in k)\n")
	fmt.Fprintf(&b, "%-13s %15s %10s %10s\n", "pipeline", "accuracy", "generated", "prefill")
	for i, name := range pols {
		fmt.Fprintf(&b, "%-13s %15s %10.1f %10.1f\n", name,
			st.over(func(s *Summary) float64 { return pipelineOf(s, i).Accuracy }).pm(3),
			st.over(func(s *Summary) float64 { return pipelineOf(s, i).Generated }).Mean,
			st.over(func(s *Summary) float64 { return pipelineOf(s, i).Prefill }).Mean)
	}
	for i, name := range pols {
		if !strings.HasPrefix(name, "spiral") {
			continue
		}
		fmt.Fprintf(&b, "at %s's pipeline tokens:\n", name)
		for j, other := range pols {
			gen := st.over(func(s *Summary) float64 {
				p := pipelineOf(s, i)
				return atTokens(s.Analysis.Search[j].Majority, s.Analysis.Search[j].Generated, p.Generated)
			})
			tot := st.over(func(s *Summary) float64 {
				p := pipelineOf(s, i)
				sr := s.Analysis.Search[j]
				return atTokens(sr.Majority, sr.Generated+sr.Prefill, p.Generated+p.Prefill)
			})
			fmt.Fprintf(&b, "  %-13s majority at equal generated tokens %15s, at equal generated + prefill tokens %15s\n", other, gen.pm(3), tot.pm(3))
		}
	}
	ctl, _ := st.controls()
	b.WriteString(ctl)
	b.WriteString(st.creditText())
	if slices.ContainsFunc(st.Runs, func(s *Summary) bool { return len(s.Arms) == 0 }) {
		b.WriteString("(some runs trained no arm)\n")
	}
	return b.String()
}
