package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writeReport writes summary.json, summary.txt and the plots to dir.
func writeReport(dir string, s *Summary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(summaryText(s)), 0o644); err != nil {
		return err
	}
	return plots(dir, s)
}

// Replot reads a summary.json that Run wrote and writes its report to dir.
func Replot(summaryJSON, dir string) error {
	js, err := os.ReadFile(summaryJSON)
	if err != nil {
		return err
	}
	var s Summary
	if err := json.Unmarshal(js, &s); err != nil {
		return fmt.Errorf("%s: %w", summaryJSON, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeReport(dir, &s)
}

func summaryText(s *Summary) string {
	var b strings.Builder
	o := s.Options
	c := s.Config
	fmt.Fprintf(&b, "lmtrain: %d steps of %d problems per arm, seed %d; model: %d block(s), width %d, %d heads\n",
		o.Steps, o.Problems, o.Seed, o.Model.Layers, o.Model.Dim, o.Model.Heads)
	fmt.Fprintf(&b, "SPIRAL: N1 = %d, n = %d, K = %d, N2 = %d, length gates L_target = %d (search), %d (aggregation) (0: off), unbiased role multipliers: %v\n",
		c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, o.SearchGate, o.AggregationGate, o.Unbiased)
	fmt.Fprintf(&b, "GRPO: %s advantages, dynamic sampling up to %d rounds in both arms\n", o.GRPOPreset, o.Rounds)
	fmt.Fprintf(&b, "test: %d held-out problems, %d search samples each; aggregation on 4 sets of %d of them\n",
		o.Test, o.Samples, c.SetSize)
	fmt.Fprintf(&b, "time: warm-up %.0f s, total %.0f s\n\n", s.WarmupSeconds, s.Seconds)
	fmt.Fprintf(&b, "%-7s %-14s %8s %10s %10s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n",
		"arm", "", "ceiling", "generated", "prefill", "pass@1", "pass@8", "pass@64", "aggr.", "majority", "oracle", "answers", "entropy", "length")
	for _, a := range s.Arms {
		for i, h := range a.History {
			if i != 0 && i != len(a.History)-1 {
				continue
			}
			label := "base"
			if i > 0 {
				label = fmt.Sprintf("step %d", h.Step)
			}
			e := h.Eval
			fmt.Fprintf(&b, "%-7s %-14s %8d %10d %10d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.2f %8.2f %8.2f\n",
				a.Name, label, a.Budget.Generated(), h.Generated, h.Prefill,
				at(e.Coverage, 1), at(e.Coverage, 8), at(e.Coverage, 64), e.Aggregator, e.Majority, e.Oracle, e.DistinctAnswers, e.AnswerEntropy, e.MeanLength)
		}
		if first, last := a.History[0].Eval.RSA, a.History[len(a.History)-1].Eval.RSA; len(first) > 0 && len(last) > 0 {
			fmt.Fprintf(&b, "%-7s RSA accuracy, steps 0..%d: base %s; trained %s\n", a.Name, len(last)-1, fmtCurve(first), fmtCurve(last))
		}
		fmt.Fprintf(&b, "%-7s %d of %d problems trained on (the others gave no signal), %d positive advantages gated, %.0f s\n\n",
			a.Name, a.Kept, a.Problems, a.Gated, a.Seconds)
	}
	b.WriteString("ceiling: the library's generated-token ceiling per problem (package budget); generated and prefill: tokens\n")
	b.WriteString("spent in training, all rounds; aggr.: aggregator accuracy; majority: majority vote over the same candidates;\n")
	b.WriteString("oracle: sets holding a right candidate; answers: distinct answers among 16 samples; entropy: of a problem's\n")
	b.WriteString("answers over all its samples, bits; length: mean search trace in tokens.\n")
	return b.String()
}

func fmtCurve(c []float64) string {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = fmt.Sprintf("%.3f", v)
	}
	return strings.Join(parts, " ")
}

// at returns curve[k-1], or NaN-free 0 when the curve is shorter.
func at(curve []float64, k int) float64 {
	if k > len(curve) {
		return 0
	}
	return curve[k-1]
}

var armColors = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff},
}

func plots(dir string, s *Summary) error {
	save := func(p *plot.Plot, name string) error {
		return p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, name))
	}
	line := func(p *plot.Plot, xys plotter.XYs, c color.Color, dashes []vg.Length, label string) error {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		l.Dashes = dashes
		p.Add(l)
		p.Legend.Add(label, l)
		return nil
	}
	dashed := []vg.Length{vg.Points(6), vg.Points(3)}
	dotted := []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	newPlot := func(title, x, y string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = x
		p.Y.Label.Text = y
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
		return p
	}
	series := func(a ArmResult, y func(EvalResult) float64) plotter.XYs {
		xys := make(plotter.XYs, len(a.History))
		for i, h := range a.History {
			xys[i].X = float64(h.Generated) / 1000
			xys[i].Y = y(h.Eval)
		}
		return xys
	}

	p := newPlot("accuracy on held-out problems (aggregation and vote: sets of 4 search traces)", "generated tokens in training (thousands)", "accuracy")
	p.Legend.Top, p.Legend.Left = false, false
	for i, a := range s.Arms {
		c := armColors[i%len(armColors)]
		if err := line(p, series(a, func(e EvalResult) float64 { return at(e.Coverage, 1) }), c, nil, a.Name+" pass@1"); err != nil {
			return err
		}
		if err := line(p, series(a, func(e EvalResult) float64 { return e.Aggregator }), c, dashed, a.Name+" aggregator (n=4)"); err != nil {
			return err
		}
		if err := line(p, series(a, func(e EvalResult) float64 { return e.Majority }), c, dotted, a.Name+" majority vote (n=4)"); err != nil {
			return err
		}
	}
	if err := save(p, "pass1.png"); err != nil {
		return err
	}

	p = newPlot("pass@k coverage after training", "k (samples per problem)", "pass@k")
	p.Legend.Top, p.Legend.Left = false, false
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for k := 1; k <= 64; k *= 2 {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	curve := func(cov []float64) plotter.XYs {
		xys := make(plotter.XYs, len(cov))
		for k, v := range cov {
			xys[k] = plotter.XY{X: float64(k + 1), Y: v}
		}
		return xys
	}
	if len(s.Arms) > 0 && len(s.Arms[0].History) > 0 {
		if err := line(p, curve(s.Arms[0].History[0].Eval.Coverage), armColors[2], dashed, "base model"); err != nil {
			return err
		}
	}
	for i, a := range s.Arms {
		last := a.History[len(a.History)-1]
		if err := line(p, curve(last.Eval.Coverage), armColors[i%len(armColors)], nil, a.Name); err != nil {
			return err
		}
	}
	if err := save(p, "coverage.png"); err != nil {
		return err
	}

	p = newPlot("recursive self-aggregation (P = 8, n = 4) at evaluation", "RSA step t", "accuracy of the population")
	p.Legend.Left = false
	steps := func(acc []float64) plotter.XYs {
		xys := make(plotter.XYs, len(acc))
		for t, v := range acc {
			xys[t] = plotter.XY{X: float64(t), Y: v}
		}
		return xys
	}
	for i, a := range s.Arms {
		c := armColors[i%len(armColors)]
		if rsa := a.History[0].Eval.RSA; len(rsa) > 0 {
			if err := line(p, steps(rsa), c, dashed, a.Name+" base model"); err != nil {
				return err
			}
		}
		if rsa := a.History[len(a.History)-1].Eval.RSA; len(rsa) > 0 {
			if err := line(p, steps(rsa), c, nil, a.Name+" trained"); err != nil {
				return err
			}
		}
	}
	if err := save(p, "rsa.png"); err != nil {
		return err
	}

	p = newPlot("diversity of search traces", "generated tokens in training (thousands)", "answer entropy (bits)")
	for i, a := range s.Arms {
		if err := line(p, series(a, func(e EvalResult) float64 { return e.AnswerEntropy }), armColors[i%len(armColors)], nil, a.Name); err != nil {
			return err
		}
	}
	return save(p, "diversity.png")
}
