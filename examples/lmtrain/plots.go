package main

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"spiral/internal/plotstyle"
)

// The study's plots, in the repository's one palette (internal/plotstyle):
// one colour per method, solid lines for a policy's own search, dashed for
// its aggregator, dotted for a majority vote; bands are mean ± sd over the
// seeds.
const (
	trainingPlot = "training.png"
	coveragePlot = "coverage.png"
	tokensPlot   = "tokens.png"
	prefillPlot  = "tokens-prefill.png"
	entropyPlot  = "entropy.png"
)

// curve returns the mean over seeds of y(run, i) for i < n, with the band
// mean ± sd, at x(run, i) averaged over the seeds.
func (st *Study) curve(n int, x, y func(s *Summary, i int) float64) (mid, lo, hi plotter.XYs) {
	for i := range n {
		xs := st.over(func(s *Summary) float64 { return x(s, i) })
		ys := st.over(func(s *Summary) float64 { return y(s, i) })
		mid = append(mid, plotter.XY{X: xs.Mean, Y: ys.Mean})
		lo = append(lo, plotter.XY{X: xs.Mean, Y: ys.Mean - ys.SD})
		hi = append(hi, plotter.XY{X: xs.Mean, Y: ys.Mean + ys.SD})
	}
	return mid, lo, hi
}

// banded adds a curve with its band.
func banded(p *plot.Plot, mid, lo, hi plotter.XYs, method string, k plotstyle.Kind, label string) error {
	if len(mid) > 1 {
		if err := plotstyle.Band(p, lo, hi, method); err != nil {
			return err
		}
	}
	return plotstyle.Line(p, mid, method, k, label)
}

// yTicks sets p's y axis to cover the data from lo to hi, with ticks that
// resolve differences of a few hundredths.
func yTicks(p *plot.Plot, lo, hi float64) {
	min, max, step := niceRange(lo, hi)
	p.Y.Min, p.Y.Max = min, max
	p.Y.Tick.Marker = plotstyle.Ticks(min, max, step, "%.2f")
}

// niceRange returns a range covering [lo, hi] in whole ticks and the tick
// step: 0.05, or 0.1 for a range wider than 0.6.
func niceRange(lo, hi float64) (float64, float64, float64) {
	step := 0.05
	if hi-lo > 0.6 {
		step = 0.1
	}
	return math.Max(0, step*math.Floor(lo/step)), math.Min(1, step*math.Ceil(hi/step)), step
}

func (st *Study) plots(dir string) error {
	pols := st.policies()
	r0 := st.Runs[0]
	lo, hi := math.Inf(1), math.Inf(-1)
	track := func(xys ...plotter.XYs) {
		for _, s := range xys {
			for _, p := range s {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}

	// Training: each arm's own search and aggregator on the test problems.
	p := plotstyle.New("Training: each arm on the test problems (mean ± sd over seeds)", "training step", "accuracy")
	for ai, a := range r0.Arms {
		n := len(a.History)
		x := func(s *Summary, i int) float64 { return float64(s.Arms[ai].History[i].Step) }
		mid, l, h := st.curve(n, x, func(s *Summary, i int) float64 { return s.Arms[ai].History[i].Pass1 })
		track(l, h)
		if err := banded(p, mid, l, h, a.Spec.Name, plotstyle.Search, a.Spec.Name+" pass@1"); err != nil {
			return err
		}
		if a.Spec.Kind == "spiral" {
			mid, l, h := st.curve(n, x, func(s *Summary, i int) float64 { return s.Arms[ai].History[i].Aggregator })
			track(l, h)
			if err := banded(p, mid, l, h, a.Spec.Name, plotstyle.Aggregator, a.Spec.Name+" aggregator (sets of 4)"); err != nil {
				return err
			}
		}
	}
	yTicks(p, lo, hi)
	if err := plotstyle.Save(p, filepath.Join(dir, trainingPlot)); err != nil {
		return err
	}

	// Coverage.
	p = plotstyle.New("pass@k coverage of each policy's search after training", "k (samples per problem, log scale)", "pass@k")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for k := 1; k <= r0.Options.Samples; k *= 2 {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, name := range pols {
		n := len(r0.Analysis.Search[i].Coverage)
		mid, l, h := st.curve(n, func(_ *Summary, k int) float64 { return float64(k + 1) },
			func(s *Summary, k int) float64 { return s.Analysis.Search[i].Coverage[k] })
		track(l, h)
		kind := plotstyle.Search
		if name == "base" {
			kind = plotstyle.Reference
		}
		if err := banded(p, mid, l, h, name, kind, name); err != nil {
			return err
		}
	}
	yTicks(p, lo, hi)
	if err := plotstyle.Save(p, filepath.Join(dir, coveragePlot)); err != nil {
		return err
	}

	// Accuracy against tokens spent per problem at deployment.
	for _, withPrefill := range []bool{false, true} {
		title := "Accuracy against generated tokens per problem"
		xl := "generated tokens per problem"
		file := tokensPlot
		if withPrefill {
			title = "Accuracy against generated + prompt (prefill) tokens per problem"
			xl = "generated + prefill tokens per problem"
			file = prefillPlot
		}
		p := plotstyle.New(title, xl, "accuracy")
		lo, hi = math.Inf(1), math.Inf(-1)
		for i, name := range pols {
			perTrace := func(s *Summary) float64 {
				sr := s.Analysis.Search[i]
				if withPrefill {
					return sr.Generated + sr.Prefill
				}
				return sr.Generated
			}
			n := min(12, len(r0.Analysis.Search[i].Majority)) // maj@k for k = 1..12
			mid, l, h := st.curve(n, func(s *Summary, k int) float64 { return float64(k+1) * perTrace(s) },
				func(s *Summary, k int) float64 { return s.Analysis.Search[i].Majority[k] })
			track(l, h)
			if err := banded(p, mid, l, h, name, plotstyle.Vote, name+" majority of k traces"); err != nil {
				return err
			}
			pipe := func(s *Summary) pipeline { return pipelineOf(s, i) }
			acc := st.over(func(s *Summary) float64 { return pipe(s).Accuracy })
			x := st.over(func(s *Summary) float64 {
				if withPrefill {
					return pipe(s).Generated + pipe(s).Prefill
				}
				return pipe(s).Generated
			})
			lo, hi = math.Min(lo, acc.Mean-acc.SD), math.Max(hi, acc.Mean+acc.SD)
			var shape draw.GlyphDrawer = draw.CircleGlyph{}
			if err := plotstyle.Points(p, plotter.XYs{{X: x.Mean, Y: acc.Mean}}, []float64{acc.SD}, name, shape, name+" 4 traces + own aggregator"); err != nil {
				return err
			}
		}
		yTicks(p, lo, hi)
		if err := plotstyle.Save(p, filepath.Join(dir, file)); err != nil {
			return err
		}
	}

	// Entropy by difficulty.
	p = plotstyle.New("Answer entropy of each policy's search, by difficulty", "test problems by the base model's success (thirds)", "answer entropy (bits)")
	var bins plot.ConstantTicks
	for d, bin := range r0.Analysis.Difficulty {
		bins = append(bins, plot.Tick{Value: float64(d), Label: bin.Name})
	}
	p.X.Tick.Marker = bins
	p.X.Min, p.X.Max = -0.2, float64(len(bins))-0.8
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, name := range pols {
		mid, l, h := st.curve(len(bins), func(_ *Summary, d int) float64 { return float64(d) },
			func(s *Summary, d int) float64 { return s.Analysis.Difficulty[d].Entropy[i] })
		track(l, h)
		if err := banded(p, mid, l, h, name, plotstyle.Search, name); err != nil {
			return err
		}
	}
	step := 0.25
	p.Y.Min, p.Y.Max = math.Max(0, step*math.Floor(lo/step)), step*math.Ceil(hi/step)
	p.Y.Tick.Marker = plotstyle.Ticks(p.Y.Min, p.Y.Max, step, "%.2f")
	return plotstyle.Save(p, filepath.Join(dir, entropyPlot))
}
