// Command frontier ranks the configurations that fit a token budget with
// advise.Advise and draws the frontier of expected improvement per token
// against tokens per problem at a step budget (advise.Result.Frontier;
// docs/findings.md#choosing-a-configuration): every candidate as a grey
// dot, the frontier as a line through its labelled points (N1/n/K/N2 and u
// for the uniform design, b for the balanced), and the paper's
// configuration (N1 = 8, n = 4, K = 4, N2 = 4, uniform), when it fits, as
// a triangle in the paper's colour (internal/plotstyle), with the legend
// beside the plot. It prints the frontier, with each point's rho = B SNR, and
// the paper's rank. The step budget is -step-tokens tokens or
// -step-problems problems per step (default: the paper's 256 problems of
// the budget's tokens, 25,165,824 tokens per step at 98,304).
//
// The reward model is advise.RewardModel: a search trace is correct with
// probability -correct, an aggregation output with probability -found when
// the rule holds for its candidates (-rule find-one, needs with -needs m, or
// majority), else -missed; -order shuffled presents each set's candidates in
// a random order. At the paper's budget (the default, 98,304
// generated tokens) the whole space takes a few seconds; frontier.png in
// this directory, which docs/findings.md links, is that run's picture:
//
//	go run ./examples/frontier -out examples/frontier/frontier.png
//
// Usage:
//
//	go run ./examples/frontier [-out frontier.png] [-budget 98304] [-step-tokens 0] [-step-problems 0] [-rule find-one] [-needs 0] [-order index]
//		[-correct 1/4] [-found 3/4] [-missed 1/10] [-max-traces 0] [-max-sets 0] [-max-aggregations 0]
package main

import (
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"math/big"
	"os"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"spiral"
	"spiral/advise"
	"spiral/budget"
	"spiral/combin"
	"spiral/internal/plotstyle"
)

func main() {
	req := advise.Request{Lengths: budget.PaperLimits(0)}
	out := flag.String("out", "frontier.png", "the PNG file to write")
	flag.Int64Var(&req.Budget, "budget", 98_304, "generated tokens per problem")
	flag.TextVar(&req.Reward.Rule, "rule", advise.FindOne, "the aggregator's rule: find-one, needs or majority")
	flag.TextVar(&req.Order, "order", combin.IndexOrder, "the candidates' order in a prompt: index or shuffled")
	flag.IntVar(&req.Reward.Needs, "needs", 0, "with -rule needs: how many candidates must be correct")
	rats := map[string]**big.Rat{"correct": &req.Reward.Correct, "found": &req.Reward.Found, "missed": &req.Reward.Missed}
	for name, def := range map[string]string{"correct": "1/4", "found": "3/4", "missed": "1/10"} {
		*rats[name], _ = new(big.Rat).SetString(def)
		flag.Func(name, "probability, p/q or a decimal (default "+def+")", func(s string) error {
			x, ok := new(big.Rat).SetString(s)
			if !ok {
				return fmt.Errorf("not a number: %q", s)
			}
			*rats[name] = x
			return nil
		})
	}
	flag.Int64Var(&req.Step.Tokens, "step-tokens", 0, "tokens per training step (0: see -step-problems)")
	flag.Int64Var(&req.Step.Problems, "step-problems", 0, "problems per training step (0 with -step-tokens 0: the paper's 256 problems of -budget tokens)")
	flag.IntVar(&req.MaxTraces, "max-traces", 0, "bound on N1 (0: advise.MaxTraces)")
	flag.IntVar(&req.MaxSets, "max-sets", 0, "bound on K (0: advise.MaxSets)")
	flag.IntVar(&req.MaxAggregations, "max-aggregations", 0, "bound on N2 (0: advise.MaxAggregations)")
	flag.Parse()
	if err := run(os.Stdout, req, *out); err != nil {
		fmt.Fprintln(os.Stderr, "frontier:", err)
		os.Exit(1)
	}
}

// run ranks the configurations of req, prints the frontier and draws it to
// the PNG file out.
func run(w io.Writer, req advise.Request, out string) error {
	res, err := advise.Advise(req)
	if err != nil {
		return err
	}
	if len(res.Candidates) == 0 {
		return fmt.Errorf("no configuration fits %d tokens", req.Budget)
	}
	front := res.Frontier()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "frontier of %d candidates (rule %v, %s):\n", len(res.Candidates), req.Reward.Rule, stepText(req.StepBudget()))
	fmt.Fprintln(tw, "N1\tn\tK\tN2\tdesign\ttokens\tgain/token\trho\tSNR/token\t")
	for _, c := range front {
		cfg := c.Config
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%v\t%d\t%.4g\t%.3g\t%.4g\t\n", cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, cfg.Design, c.Tokens,
			ratFloat(c.ImprovementPerToken), ratFloat(c.Rho), c.SNRPerToken)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	paper := paperRank(res, req.Order)
	if paper < 0 {
		fmt.Fprintln(w, "the paper's configuration does not fit the request")
	} else {
		c := res.Candidates[paper]
		fmt.Fprintf(w, "the paper's configuration: rank %d of %d, %.4g per token (rho %.3g)\n", paper+1, len(res.Candidates), ratFloat(c.ImprovementPerToken), ratFloat(c.Rho))
	}
	p, _, err := frontierPlot(res, front, paper, req)
	if err != nil {
		return err
	}
	if err := plotstyle.Save(p, out); err != nil {
		return err
	}
	fmt.Fprintln(w, "wrote", out)
	return nil
}

// paperRank returns the index of spiral.Paper() presented in order o in
// res's ranking, or -1.
func paperRank(res advise.Result, o combin.Order) int {
	paper := spiral.Paper()
	paper.Order = o
	for i, c := range res.Candidates {
		if c.Config == paper {
			return i
		}
	}
	return -1
}

// stepText names a step budget.
func stepText(s advise.Step) string {
	if s.Problems > 0 {
		return fmt.Sprintf("%d problems per step", s.Problems)
	}
	return fmt.Sprintf("%d tokens per step", s.Tokens)
}

// ratFloat is x as a float64, +Inf for nil (an infinite rho).
func ratFloat(x *big.Rat) float64 {
	if x == nil {
		return math.Inf(1)
	}
	f, _ := x.Float64()
	return f
}

// scale is the unit of the y axis: improvement per token in units of
// 1e-9/L.
const scale = 1e9

func points(cs []advise.Candidate) plotter.XYs {
	xys := make(plotter.XYs, len(cs))
	for i, c := range cs {
		xys[i].X, xys[i].Y = float64(c.Tokens), ratFloat(c.ImprovementPerToken)*scale
	}
	return xys
}

// label names a configuration as N1/n/K/N2 and u (uniform) or b (balanced).
func label(c advise.Candidate) string {
	cfg := c.Config
	d := "u"
	if cfg.Design != spiral.Paper().Design {
		d = "b"
	}
	return fmt.Sprintf("%d/%d/%d/%d %s", cfg.SearchTraces, cfg.SetSize, cfg.Sets, cfg.AggregationsPerSet, d)
}

// frontierPlot plots every candidate, the frontier and, when paper >= 0, the
// candidate of that rank as the paper's configuration; it returns the plot
// and the texts of its legend.
func frontierPlot(res advise.Result, front []advise.Candidate, paper int, req advise.Request) (*plot.Plot, []string, error) {
	rule := req.Reward.Rule.String()
	if req.Reward.Rule == advise.NeedsPieces {
		rule = fmt.Sprintf("needs %d", req.Reward.Needs)
	}
	p := plotstyle.New(fmt.Sprintf("Improvement per token (%s, %s)", rule, stepText(req.StepBudget())),
		"tokens per problem", "expected improvement of a step per token (x 1e-9/L)")
	var legend []string
	add := func(text string, thumbs ...plot.Thumbnailer) {
		p.Legend.Add(text, thumbs...)
		legend = append(legend, text)
	}
	all, err := plotter.NewScatter(points(res.Candidates))
	if err != nil {
		return nil, nil, err
	}
	all.GlyphStyle.Color = color.Gray{Y: 0xa0}
	all.GlyphStyle.Radius = vg.Points(1.5)
	p.Add(all)
	add(fmt.Sprintf("%d candidates", len(res.Candidates)), all)
	// The frontier and the candidates are configurations, not methods: dark
	// and light grey; the paper's configuration takes the paper's colour.
	dark := color.Gray{Y: 0x30}
	line, dots, err := plotter.NewLinePoints(points(front))
	if err != nil {
		return nil, nil, err
	}
	line.Color, dots.Color, line.Width = dark, dark, plotstyle.Width
	dots.Radius = vg.Points(2.5)
	p.Add(line, dots)
	add("frontier (N1/n/K/N2 design)", line, dots)
	names := make([]string, len(front))
	for i, c := range front {
		names[i] = label(c)
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: points(front), Labels: names})
	if err != nil {
		return nil, nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font.Size = vg.Points(7)
		labels.TextStyle[i].XAlign = draw.XRight
		labels.TextStyle[i].YAlign = draw.YBottom
	}
	p.Add(labels)
	if paper >= 0 {
		mark, err := plotter.NewScatter(points(res.Candidates[paper : paper+1]))
		if err != nil {
			return nil, nil, err
		}
		mark.GlyphStyle.Color = plotstyle.Color("spiral-paper")
		mark.GlyphStyle.Shape = draw.PyramidGlyph{}
		mark.GlyphStyle.Radius = vg.Points(5)
		p.Add(mark)
		add(fmt.Sprintf("the paper's 8/4/4/4 u (rank %d)", paper+1), mark)
	}
	// Room for the marks at the budget's edge.
	p.Y.Min, p.X.Max = 0, 1.02*max(p.X.Max, float64(req.Budget))
	return p, legend, nil
}
