package plotstyle

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// Every method has its own colour; only "grpo-2x", the paper's GRPO
// control, shares GRPO's.
func TestColorsDistinct(t *testing.T) {
	seen := map[any]string{}
	for _, m := range Methods() {
		c := Color(m)
		if prev, ok := seen[c]; ok && !(prev == "grpo" && m == "grpo-2x") {
			t.Errorf("%s and %s share colour %v", prev, m, c)
		}
		seen[c] = m
	}
	if len(Methods()) != len(colors) {
		t.Errorf("Methods lists %d methods, colours %d", len(Methods()), len(colors))
	}
}

func TestColorUnknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown method")
		}
	}()
	Color("nope")
}

func TestTicks(t *testing.T) {
	got := Ticks(0.1, 0.3, 0.05, "%.2f")
	want := []string{"0.10", "0.15", "0.20", "0.25", "0.30"}
	if len(got) != len(want) {
		t.Fatalf("%d ticks, want %d", len(got), len(want))
	}
	for i, tk := range got {
		if tk.Label != want[i] {
			t.Errorf("tick %d: %q, want %q", i, tk.Label, want[i])
		}
	}
}

// Save writes a PNG of Size with the legend beside the plot area.
func TestSave(t *testing.T) {
	p := New("t", "x", "y")
	xys := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}
	if err := Line(p, xys, "spiral", Search, "spiral"); err != nil {
		t.Fatal(err)
	}
	if err := Band(p, plotter.XYs{{X: 0, Y: -0.1}, {X: 1, Y: 0.9}}, plotter.XYs{{X: 0, Y: 0.1}, {X: 1, Y: 1.1}}, "spiral"); err != nil {
		t.Fatal(err)
	}
	if err := Points(p, xys, []float64{0.1, 0.2}, "grpo-24", nil, "grpo-24"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.png")
	if err := Save(p, path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() <= 0 || b.Dy() <= b.Dx()/4 {
		t.Errorf("image %v", b)
	}
}
