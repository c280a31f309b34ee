package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The sweep over the tool's noise: one study per setting of e, each in its
// own directory of seed runs, summarised as a map of where SPIRAL's learned
// aggregation stands against the controls that need no training, the Bayes
// ceiling and GRPO.

// SweepRow is one setting of the sweep.
type SweepRow struct {
	Dir   string   `json:"dir"`
	Noise float64  `json:"noise"`
	Steps int      `json:"steps"`
	Seeds []uint64 `json:"seeds"`
	// Values are "name" -> the quantity over seeds (mean, sd, per seed).
	Values map[string]Spread `json:"values"`
	// Best names the best selector that needs no training at spiral's
	// pipeline generated tokens: "<policy> <selector>".
	Best        string       `json:"best_no_training"`
	BestTotal   string       `json:"best_no_training_total_tokens"`
	Comparisons []Comparison `json:"comparisons"`
}

// loadSetting reads the seed runs (seed-*/summary.json) of one study
// directory.
func loadSetting(dir string) (*Study, error) {
	dirs, err := filepath.Glob(filepath.Join(dir, "seed-*"))
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no seed directories", dir)
	}
	slices.Sort(dirs)
	return LoadStudy(dirs)
}

// bestSelector is the selector that needs no training (majority, best-of-k by
// check or the rule) on any policy's traces with the highest mean accuracy
// at spiral's pipeline tokens.
func (st *Study) bestSelector(sp int, withPrefill bool) (int, int) {
	bj, bs, best := -1, -1, math.Inf(-1)
	for j := range st.policies() {
		for _, sel := range []int{selMajority, selCheck, selRule} {
			f := selectorAt(sp, j, sel, withPrefill)
			m := st.over(func(s *Summary) float64 { v, _ := f(s); return v }).Mean
			if m > best {
				bj, bs, best = j, sel, m
			}
		}
	}
	return bj, bs
}

// sweepRow summarises one setting.
func sweepRow(dir string, st *Study) (SweepRow, error) {
	sp, g2 := st.policyIndex("spiral"), st.policyIndex("grpo-2x")
	if sp < 0 || g2 < 0 {
		return SweepRow{}, fmt.Errorf("%s: the sweep needs the spiral and grpo-2x arms", dir)
	}
	o := st.Runs[0].Options
	row := SweepRow{Dir: dir, Noise: o.Noise, Steps: o.Steps, Values: map[string]Spread{}}
	for _, r := range st.Runs {
		row.Seeds = append(row.Seeds, r.Options.Seed)
	}
	val := func(m measure) func(*Summary) float64 {
		return func(s *Summary) float64 { v, _ := m(s); return v }
	}
	row.Values["spiral pipeline"] = st.over(val(pipelineMeasure(sp)))
	row.Values["spiral traces: bayes"] = st.over(val(onSets(sp, selBayes)))
	row.Values["spiral traces: model ceiling"] = st.over(func(s *Summary) float64 { return s.Analysis.Selectors[sp].Ceiling })
	for _, sel := range []int{selRule, selCheck, selMajority} {
		row.Values["spiral traces: "+selectorNames[sel]] = st.over(val(onSets(sp, sel)))
	}
	row.Values["base traces: spiral aggregator"] = st.over(val(aggregatorOn(0, sp)))
	row.Values["base traces: rule"] = st.over(val(onSets(0, selRule)))
	bj, bs := st.bestSelector(sp, false)
	tj, ts := st.bestSelector(sp, true)
	pols := st.policies()
	row.Best = pols[bj] + " " + selectorNames[bs]
	row.BestTotal = pols[tj] + " " + selectorNames[ts]
	row.Values["best no-training, equal generated"] = st.over(val(selectorAt(sp, bj, bs, false)))
	row.Values["best no-training, equal generated + prompt"] = st.over(val(selectorAt(sp, tj, ts, true)))
	row.Values["grpo-2x majority, equal generated"] = st.over(val(selectorAt(sp, g2, selMajority, false)))
	row.Values["grpo-2x rule, equal generated"] = st.over(val(selectorAt(sp, g2, selRule, false)))
	row.Values["grpo-2x majority, equal generated + prompt"] = st.over(val(selectorAt(sp, g2, selMajority, true)))
	row.Comparisons = []Comparison{
		st.compare("spiral aggregator - rule, spiral's sets", aggregatorOn(sp, sp), onSets(sp, selRule)),
		st.compare("spiral aggregator - bayes, spiral's sets", aggregatorOn(sp, sp), onSets(sp, selBayes)),
		st.compare("pipeline - best no-training ("+row.Best+"), equal generated", pipelineMeasure(sp), selectorAt(sp, bj, bs, false)),
		st.compare("pipeline - best no-training ("+row.BestTotal+"), equal generated + prompt", pipelineMeasure(sp), selectorAt(sp, tj, ts, true)),
		st.compare("pipeline - grpo-2x majority, equal generated", pipelineMeasure(sp), selectorAt(sp, g2, selMajority, false)),
		st.compare("pipeline - grpo-2x majority, equal generated + prompt", pipelineMeasure(sp), selectorAt(sp, g2, selMajority, true)),
		st.compare("pipeline - grpo-2x rule, equal generated", pipelineMeasure(sp), selectorAt(sp, g2, selRule, false)),
	}
	return row, nil
}

// RunSweep reads the study of every directory given (one setting of the
// noise each) and writes sweep.txt and sweep.json to out. With baseline and
// baseSeeds set, it adds baselineText(baseline, baseSeeds).
func RunSweep(dirs []string, out, baseline, baseSeeds string) error {
	var rows []SweepRow
	for _, d := range dirs {
		st, err := loadSetting(d)
		if err != nil {
			return err
		}
		row, err := sweepRow(filepath.Base(d), st)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b SweepRow) int {
		switch {
		case a.Noise < b.Noise:
			return -1
		case a.Noise > b.Noise:
			return 1
		}
		return 0
	})
	text := sweepText(rows)
	var base []Comparison
	if baseline != "" {
		t, c, err := baselineText(baseline, baseSeeds)
		if err != nil {
			return err
		}
		text += t
		base = c
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(struct {
		Settings []SweepRow   `json:"settings"`
		Baseline []Comparison `json:"baseline,omitempty"`
	}{rows, base}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "sweep.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "sweep.txt"), []byte(text), 0o644)
}

func sweepText(rows []SweepRow) string {
	var b strings.Builder
	b.WriteString("lmtrain sweep over the tool's noise e (each check wrong with probability e): mean [per seed]\n")
	b.WriteString("spiral's sets: the cross-pairing's 8 sets of 4 of spiral's own traces a test problem; equal tokens: spiral's pipeline's, k interpolated\n")
	b.WriteString("bayes: the Bayes selector of the task's model with spiral's pass@1; model ceiling: its exact accuracy on sets drawn from that model\n\n")
	names := []string{
		"spiral pipeline", "spiral traces: model ceiling", "spiral traces: bayes", "spiral traces: rule", "spiral traces: best-of-k by check", "spiral traces: majority",
		"base traces: spiral aggregator", "base traces: rule",
		"best no-training, equal generated", "best no-training, equal generated + prompt",
		"grpo-2x majority, equal generated", "grpo-2x rule, equal generated", "grpo-2x majority, equal generated + prompt",
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "e = %g (%s, %d steps, seeds %v)\n", r.Noise, r.Dir, r.Steps, r.Seeds)
		for _, n := range names {
			v := r.Values[n]
			fmt.Fprintf(&b, "  %-45s %.3f [", n, v.Mean)
			for i, x := range v.Values {
				if i > 0 {
					b.WriteString(" ")
				}
				fmt.Fprintf(&b, "%.3f", x)
			}
			b.WriteString("]")
			switch n {
			case "best no-training, equal generated":
				fmt.Fprintf(&b, "  (%s)", r.Best)
			case "best no-training, equal generated + prompt":
				fmt.Fprintf(&b, "  (%s)", r.BestTotal)
			}
			b.WriteString("\n")
		}
		b.WriteString("  paired over seeds (mean [per seed ± SE clustered by problem], Student's t):\n")
		for _, c := range r.Comparisons {
			fmt.Fprintf(&b, "    %s\n", c)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// baselineText compares a study whose trained weights were not kept (old,
// measured before the selectors existed) with the selectors on its base
// model's traces, measured again in another study of the same seeds and
// base model (base): the base model is the same in every run of a seed, so
// its traces, and every selector on them, are the ones old would have
// given. It checks that the base model's measurements agree, then compares
// old's SPIRAL pipeline with each selector on the base model's traces at the
// pipeline's tokens, paired over seeds.
func baselineText(oldDir, baseDir string) (string, []Comparison, error) {
	old, err := loadSetting(oldDir)
	if err != nil {
		return "", nil, err
	}
	base, err := loadSetting(baseDir)
	if err != nil {
		return "", nil, err
	}
	if len(old.Runs) != len(base.Runs) {
		return "", nil, fmt.Errorf("%s has %d seeds, %s %d", oldDir, len(old.Runs), baseDir, len(base.Runs))
	}
	sp := old.policyIndex("spiral")
	if sp < 0 || base.policyIndex("base") != 0 || old.policyIndex("base") != 0 {
		return "", nil, fmt.Errorf("%s: the baseline needs the base model and the spiral arm", oldDir)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The study in %s (weights not kept) against the selectors on its base model's traces, measured again in %s\n", filepath.Base(oldDir), filepath.Base(baseDir))
	for i, r := range old.Runs {
		o, n := r.Analysis.Search[0], base.Runs[i].Analysis.Search[0]
		same := r.Options.Seed == base.Runs[i].Options.Seed && slices.Equal(o.Coverage, n.Coverage) && slices.Equal(o.Majority, n.Majority) &&
			r.Analysis.Cross.Accuracy[0][0] == base.Runs[i].Analysis.Cross.Accuracy[0][0]
		fmt.Fprintf(&b, "seed %d: the base model's pass@k, maj@k and own aggregator agree to the bit: %v\n", r.Options.Seed, same)
		if !same {
			return b.String(), nil, fmt.Errorf("seed %d: the base model of %s is not that of %s", r.Options.Seed, baseDir, oldDir)
		}
	}
	// One study holding old's pipeline and base's selectors, seed by seed.
	mixed := &Study{}
	for i, r := range old.Runs {
		s := *r
		s.Analysis.Selectors = append([]SelectorResult{base.Runs[i].Analysis.Selectors[0]}, make([]SelectorResult, len(r.Analysis.Policies)-1)...)
		mixed.Runs = append(mixed.Runs, &s)
	}
	var cmps []Comparison
	for _, withPrefill := range []bool{false, true} {
		what := "generated"
		if withPrefill {
			what = "generated + prompt"
		}
		for _, sel := range []int{selMajority, selCheck, selRule, selBayes} {
			c := mixed.compare(fmt.Sprintf("spiral pipeline - base model %s at equal %s tokens", selectorNames[sel], what), pipelineMeasure(sp), selectorAt(sp, 0, sel, withPrefill))
			cmps = append(cmps, c)
			fmt.Fprintf(&b, "  %s (base %s: %s)\n", c, selectorNames[sel], mixed.seedsOf(func(s *Summary) float64 { v, _ := selectorAt(sp, 0, sel, withPrefill)(s); return v }))
		}
	}
	fmt.Fprintf(&b, "  spiral pipeline: %s\n", mixed.seedsOf(func(s *Summary) float64 { return pipelineOf(s, sp).Accuracy }))
	b.WriteString("(the old study keeps no per-problem values, so only the test over seeds is given)\n")
	return b.String(), cmps, nil
}
