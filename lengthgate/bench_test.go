package lengthgate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral/internal/cpubench"

	"pgregory.net/rapid"
)

// naiveGate is the baseline the benchmark compares against: the obvious way
// to get "no partial update", gating into a freshly allocated scratch slice
// in one validating pass and copying it out on success.
func naiveGate(g Gate, dst, adv []float64, lengths []int) (Report, error) {
	if err := g.Validate(); err != nil {
		return Report{}, err
	}
	if len(adv) != len(lengths) {
		return Report{}, fmt.Errorf("lengthgate: len(adv) = %d != len(lengths) = %d", len(adv), len(lengths))
	}
	out := make([]float64, len(adv))
	r := Report{Outputs: len(adv)}
	for i, a := range adv {
		l := lengths[i]
		if l < 0 {
			return Report{}, fmt.Errorf("lengthgate: lengths[%d] = %d < 0", i, l)
		}
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return Report{}, fmt.Errorf("lengthgate: adv[%d] = %v is not finite", i, a)
		}
		out[i] = a
		if a > 0 && g.Target > 0 {
			if l == g.Target {
				r.AtTarget++
			}
			if l > g.Target || (l == g.Target && g.Boundary == GateAtTarget) {
				r.Gated++
				r.Add(Report{MassRemoved: a}) // the mass rounded once
				out[i] = 0
			}
		}
		if a > 0 {
			r.Positive++
		}
	}
	copy(dst, out)
	return r, nil
}

// batch is 256 problems x 24 outputs (the paper's batch: 8 search traces and
// 16 aggregation outputs per problem), advantages in [-1, 1) and lengths
// uniform in [100, 6000) tokens, about a third of which (1903 of the 5900
// values) exceed the target 4096.
func batch() (adv [][]float64, lengths [][]int) {
	return randomBatch(rand.New(rand.NewPCG(4, 4096)))
}

// poolBatches is the number of batches a benchmark cycles through: 16
// batches of 256 problems, about 100,000 outcomes of the gate's branches,
// far more than a branch predictor's history, so that the branches see
// fresh data each iteration as in training.
const poolBatches = 16

// batchPool returns poolBatches batches like batch's, each from its own
// generator.
func batchPool() (adv [][][]float64, lengths [][][]int) {
	for i := range poolBatches {
		a, l := randomBatch(rand.New(rand.NewPCG(5, uint64(i))))
		adv, lengths = append(adv, a), append(lengths, l)
	}
	return adv, lengths
}

// randomBatch draws a batch as batch describes from rng.
func randomBatch(rng *rand.Rand) (adv [][]float64, lengths [][]int) {
	for range 256 {
		a := make([]float64, 24)
		l := make([]int, 24)
		for j := range a {
			a[j] = 2*rng.Float64() - 1
			l[j] = 100 + rng.IntN(5900)
		}
		adv, lengths = append(adv, a), append(lengths, l)
	}
	return adv, lengths
}

func TestNaiveGateAgrees(t *testing.T) {
	adv, lengths := batch()
	for _, g := range []Gate{{}, {Target: 4096}, {Target: 4096, Boundary: KeepAtTarget}, {Target: 1000}} {
		for i := range adv {
			want := make([]float64, 24)
			got := make([]float64, 24)
			rw, _ := naiveGate(g, want, adv[i], lengths[i])
			rg, err := ApplyGate(g, got, adv[i], lengths[i])
			if err != nil || !sameReport(rg, rw) || !slices.Equal(got, want) {
				t.Fatalf("%+v problem %d: %v %+v, naive %v %+v", g, i, got, rg, want, rw)
			}
		}
	}
}

// TestNaiveGateAgreesOnDrawnCases: the branch-free gate gives what the
// plain rule (naiveGate) gives, bit for bit, advantages and report
// (MassRemoved exactly), on drawn gates, lengths around the target and
// advantages of every sign, through Apply and ApplyGate.
func TestNaiveGateAgreesOnDrawnCases(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, adv, lengths := drawCase(t)
		want := make([]float64, len(adv))
		rw, err := naiveGate(g, want, adv, lengths)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(adv)
		ra, err := g.Apply(got, lengths)
		if err != nil || !sameBits(got, want) || ra.String() != rw.String() {
			t.Fatalf("Apply %v %+v %v, naive %v %+v", got, ra, err, want, rw)
		}
		dst := make([]float64, len(adv))
		if rd, err := ApplyGate(g, dst, adv, lengths); err != nil || !sameBits(dst, want) || rd != ra {
			t.Fatalf("ApplyGate %v %+v %v, naive %v %+v", dst, rd, err, want, rw)
		}
	})
}

// BenchmarkGate256x24 gates a batch of 256 problems x 24 outputs per
// iteration, the next batch of a pool of poolBatches each time (fresh
// inputs).
func BenchmarkGate256x24(b *testing.B) {
	pool, lengths := batchPool()
	g := Gate{Target: 4096}
	dst := make([]float64, 24)
	// each runs body on the next batch of the pool each iteration.
	each := func(b *testing.B, adv [][][]float64, body func(adv []float64, lengths []int)) {
		w := 0
		cpubench.Loop(b, func() {
			for i := range adv[w] {
				body(adv[w][i], lengths[w][i])
			}
			if w++; w == len(adv) {
				w = 0
			}
		})
	}
	// clone returns a copy of the pool for the in-place gates.
	clone := func() [][][]float64 {
		c := make([][][]float64, len(pool))
		for w := range pool {
			for _, a := range pool[w] {
				c[w] = append(c[w], slices.Clone(a))
			}
		}
		return c
	}
	b.Run("ApplyTo", func(b *testing.B) {
		each(b, pool, func(adv []float64, lengths []int) {
			if _, err := ApplyGate(g, dst, adv, lengths); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("Apply/in-place", func(b *testing.B) {
		each(b, clone(), func(adv []float64, lengths []int) {
			if _, err := g.Apply(adv, lengths); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("naive", func(b *testing.B) {
		each(b, pool, func(adv []float64, lengths []int) {
			if _, err := naiveGate(g, dst, adv, lengths); err != nil {
				b.Fatal(err)
			}
		})
	})
}
