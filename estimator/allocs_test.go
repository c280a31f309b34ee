package estimator

import (
	"math/rand/v2"
	"testing"
)

// TestDocumentedAllocs: Categorical.Sample, Categorical.ScoreTo and
// Table.Float, whose documentation says they do not allocate, do not.
func TestDocumentedAllocs(t *testing.T) {
	c, err := UniformCategorical(5)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	if a := testing.AllocsPerRun(50, func() { _ = c.Sample(rnd) }); a != 0 {
		t.Errorf("Categorical.Sample: %v allocations, want 0", a)
	}
	dst := make([]float64, 5)
	if a := testing.AllocsPerRun(50, func() { c.ScoreTo(dst, 3) }); a != 0 {
		t.Errorf("Categorical.ScoreTo: %v allocations, want 0", a)
	}
	tab, err := RandomTable(rnd, 3, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	y := []int{2, 0, 1, 2}
	if a := testing.AllocsPerRun(50, func() { _ = tab.Float(y) }); a != 0 {
		t.Errorf("Table.Float: %v allocations, want 0", a)
	}
}
