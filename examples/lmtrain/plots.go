package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

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

	// Accuracy against tokens spent per problem at deployment: one panel
	// per search policy, its traces under each selector that needs no
	// training, its pipeline, and spiral's pipeline for reference.
	for _, withPrefill := range []bool{false, true} {
		if err := st.tokensFigure(dir, withPrefill); err != nil {
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

// tokensFigure draws tokens.png (generated tokens) or tokens-prefill.png
// (generated and prompt tokens): a panel per search policy with maj@k, best-of-k
// by check and the rule against the tokens of k traces (k = 1..12), the
// policy's own pipeline and spiral's, mean ± sd over the seeds.
func (st *Study) tokensFigure(dir string, withPrefill bool) error {
	pols := st.policies()
	r0 := st.Runs[0]
	xl, file := "generated tokens per problem", tokensPlot
	what := "generated tokens"
	if withPrefill {
		xl, file = "generated + prefill tokens per problem", prefillPlot
		what = "generated + prompt (prefill) tokens"
	}
	sp := st.policyIndex("spiral")
	lo, hi := math.Inf(1), math.Inf(-1)
	var panels []*plot.Plot
	kinds := []plotstyle.Kind{plotstyle.Vote, plotstyle.Check, plotstyle.Rule}
	sels := []int{selMajority, selCheck, selRule}
	for j, name := range pols {
		p := plotstyle.New(name+"'s traces", xl, "accuracy")
		n := min(12, len(r0.Analysis.Selectors[j].Curves[0]))
		for si, sel := range sels {
			mid, l, h := st.curve(n, func(s *Summary, k int) float64 { return float64(k+1) * perTrace(s, j, withPrefill) },
				func(s *Summary, k int) float64 { return s.Analysis.Selectors[j].Curves[sel][k] })
			for _, xy := range append(l, h...) {
				lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
			}
			if err := banded(p, mid, l, h, name, kinds[si], ""); err != nil {
				return err
			}
		}
		for idx, i := range []int{j, sp} {
			if i < 0 || idx == 1 && i == j {
				continue
			}
			acc := st.over(func(s *Summary) float64 { return pipelineOf(s, i).Accuracy })
			x := st.over(func(s *Summary) float64 { return pipeTokens(s, i, withPrefill) })
			lo, hi = math.Min(lo, acc.Mean-acc.SD), math.Max(hi, acc.Mean+acc.SD)
			var shape draw.GlyphDrawer = draw.CircleGlyph{}
			if i != j {
				shape = draw.CrossGlyph{}
			}
			if err := plotstyle.Points(p, plotter.XYs{{X: x.Mean, Y: acc.Mean}}, []float64{acc.SD}, pols[i], shape, ""); err != nil {
				return err
			}
		}
		panels = append(panels, p)
	}
	for _, p := range panels {
		yTicks(p, lo, hi)
	}
	// The legend, in the base model's grey: what each pattern and marker is.
	legend := plot.NewLegend()
	for si, sel := range sels {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = plotstyle.Color("base"), plotstyle.Width, plotstyle.Dashes(kinds[si])
		legend.Add(selectorNames[sel]+" of k traces", l)
	}
	for _, m := range []struct {
		shape draw.GlyphDrawer
		label string
	}{{draw.CircleGlyph{}, "4 traces + the policy's own aggregator"}, {draw.CrossGlyph{}, "spiral's pipeline (red)"}} {
		sc, err := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}})
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = m.shape, plotstyle.Color("base"), vg.Points(3.5)
		legend.Add(m.label, sc)
	}
	return saveGrid(panels, legend, fmt.Sprintf("Accuracy against %s per problem: every policy's traces under the selectors that need no training (mean ± sd over seeds)", what), filepath.Join(dir, file))
}

// saveGrid writes panels in a grid of 3 columns, the legend in the tile
// after the last panel and a title above, as a PNG.
func saveGrid(panels []*plot.Plot, legend plot.Legend, title, path string) error {
	const cols = 3
	rows := (len(panels) + cols) / cols
	w, h := 15*vg.Inch, vg.Length(rows)*4.2*vg.Inch+0.4*vg.Inch
	c := vgimg.New(w, h)
	dc := draw.New(c)
	face := font.DefaultCache.Lookup(font.From(plot.DefaultFont, 13), 13)
	dc.SetColor(color.Black)
	dc.FillString(face, vg.Point{X: (w - face.Width(title)) / 2, Y: h - 0.3*vg.Inch}, title)
	body := draw.Crop(dc, 0, 0, 0, -0.4*vg.Inch)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(14), PadTop: vg.Points(4), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	for i, p := range panels {
		p.Draw(tiles.At(body, i%cols, i/cols))
	}
	lc := tiles.At(body, len(panels)%cols, len(panels)/cols)
	legend.Top, legend.Left = true, true
	legend.Draw(lc)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
