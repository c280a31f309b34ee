// Package plotstyle gives the plots of the repository's examples one look:
// one colour per method, the same in every figure (toytrain, lmtrain,
// frontier), a line pattern per kind of measurement, error bands over
// seeds, and the legend drawn beside the data, never over it.
//
// A method is named as the examples name their arms: "base" (the model
// before training), "spiral" (the library's unbiased weighting),
// "spiral-paper" (the paper's summed loss), "spiral-balanced" (the balanced
// set design), "grpo" and its variants "grpo-2x" (traces of twice the
// length) and "grpo-24" (as many traces as SPIRAL generates outputs), and
// the references "majority" (a majority vote) and "oracle" (a right
// candidate in the set).
package plotstyle

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// colors maps each method to its colour.
var colors = map[string]color.RGBA{
	"base":            rgb(0x7f, 0x7f, 0x7f), // grey
	"spiral":          rgb(0xd6, 0x27, 0x28), // red
	"spiral-paper":    rgb(0xff, 0x7f, 0x0e), // orange
	"spiral-balanced": rgb(0x94, 0x67, 0xbd), // purple
	"grpo":            rgb(0x1f, 0x77, 0xb4), // blue
	"grpo-2x":         rgb(0x1f, 0x77, 0xb4), // blue: the paper's GRPO control
	"grpo-24":         rgb(0x17, 0xbe, 0xcf), // cyan
	"majority":        rgb(0x2c, 0xa0, 0x2c), // green
	"oracle":          rgb(0x00, 0x00, 0x00), // black
}

// Methods lists the methods that have a colour.
func Methods() []string {
	return []string{"base", "spiral", "spiral-paper", "spiral-balanced", "grpo", "grpo-2x", "grpo-24", "majority", "oracle"}
}

// Color returns the colour of a method. A name it does not know is a
// programmer error: it panics, so that a new method gets its colour here
// before it appears in a figure.
func Color(method string) color.Color {
	c, ok := colors[method]
	if !ok {
		panic(fmt.Sprintf("plotstyle: no colour for method %q", method))
	}
	return c
}

// A Kind is what a line measures; it sets the line's pattern, the colour
// being the method's.
type Kind int

const (
	Search     Kind = iota // the search policy's own traces (pass@k, entropy): solid
	Aggregator             // a trained aggregator's answers: dashed
	Vote                   // a majority vote over the same traces: dotted
	Reference              // a bound or a base line (the oracle, the base model): dash-dot
	Check                  // a selector reading the checks without training (best-of-k by check): long dashes
	Rule                   // the best hand-written rule (the Bayes rule over the checks): dash-dot-dot
)

// Dashes returns the dash pattern of a kind of line (nil: solid).
func Dashes(k Kind) []vg.Length {
	switch k {
	case Aggregator:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case Vote:
		return []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	case Reference:
		return []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}
	case Check:
		return []vg.Length{vg.Points(10), vg.Points(4)}
	case Rule:
		return []vg.Length{vg.Points(8), vg.Points(2), vg.Points(1.5), vg.Points(2), vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// Width is the width of every data line.
var Width = vg.Points(1.8)

// Line adds a line through xys to p in the method's colour and the kind's
// pattern, with a legend entry label (none when label is empty).
func Line(p *plot.Plot, xys plotter.XYs, method string, k Kind, label string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = Color(method)
	l.Width = Width
	l.Dashes = Dashes(k)
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// Band adds a translucent band in the method's colour between lo and hi
// (the same x values, in order), such as the spread of a curve over seeds.
// It adds no legend entry: the band goes with the line of the same colour.
func Band(p *plot.Plot, lo, hi plotter.XYs, method string) error {
	if len(lo) != len(hi) {
		return fmt.Errorf("plotstyle: band of %d low and %d high points", len(lo), len(hi))
	}
	poly := make(plotter.XYs, 0, 2*len(lo))
	poly = append(poly, lo...)
	for i := len(hi) - 1; i >= 0; i-- {
		poly = append(poly, hi[i])
	}
	b, err := plotter.NewPolygon(poly)
	if err != nil {
		return err
	}
	c := Color(method).(color.RGBA)
	b.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40}
	b.LineStyle.Width = 0
	p.Add(b)
	return nil
}

// Points adds markers at xys in the method's colour, with error bars of
// half-width err[i] when err is not nil, and a legend entry label (none
// when empty).
func Points(p *plot.Plot, xys plotter.XYs, err []float64, method string, shape draw.GlyphDrawer, label string) error {
	s, e := plotter.NewScatter(xys)
	if e != nil {
		return e
	}
	s.GlyphStyle.Color = Color(method)
	s.GlyphStyle.Radius = vg.Points(3.5)
	if shape != nil {
		s.GlyphStyle.Shape = shape
	}
	p.Add(s)
	if err != nil {
		if len(err) != len(xys) {
			return fmt.Errorf("plotstyle: %d error bars for %d points", len(err), len(xys))
		}
		yerrs := make(plotter.YErrors, len(err))
		for i, v := range err {
			yerrs[i].Low, yerrs[i].High = v, v
		}
		bars, e := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{xys, yerrs})
		if e != nil {
			return e
		}
		bars.Color = Color(method)
		bars.Width = vg.Points(1.2)
		p.Add(bars)
	}
	if label != "" {
		p.Legend.Add(label, s)
	}
	return nil
}

// New returns a plot with a title, axis labels and a grid.
func New(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// Ticks returns ticks at every multiple of step from lo to hi, labelled
// with format (such as "%.2f"), so that an axis resolves differences of
// step.
func Ticks(lo, hi, step float64, format string) plot.ConstantTicks {
	var t plot.ConstantTicks
	for i := 0; ; i++ {
		v := lo + float64(i)*step
		if v > hi+step/1e6 {
			break
		}
		t = append(t, plot.Tick{Value: v, Label: fmt.Sprintf(format, v)})
	}
	return t
}

// Size is the size of every figure.
var Size = struct{ W, H vg.Length }{W: 8 * vg.Inch, H: 4.5 * vg.Inch}

// Save writes p to path as a PNG at Size, with p's legend in a column to the right of the plot
// area, so that no entry covers data.
func Save(p *plot.Plot, path string) error {
	legend := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	legend.Top, legend.Left = true, true
	c := vgimg.New(Size.W, Size.H)
	dc := draw.New(c)
	var width vg.Length
	if r := legend.Rectangle(dc); r.Max.X > r.Min.X {
		width = r.Max.X - r.Min.X + vg.Points(12)
	}
	p.Draw(draw.Crop(dc, 0, -width, 0, 0))
	if width > 0 {
		lc := draw.Crop(dc, Size.W-width+vg.Points(4), 0, 0, -vg.Points(24))
		legend.Draw(lc)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
