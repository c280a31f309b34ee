package estimator

import (
	"math/rand/v2"
	"testing"

	"spiral/combin"
)

// mcPaper returns the paper's configuration (Subsets(8, 4), K = 4,
// N2 = 4) on a V = 2 policy p = (1/3, 2/3) with a fixed random table.
func mcPaper(tb testing.TB) MonteCarlo {
	tb.Helper()
	f, err := combin.Subsets(8, 4)
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := NewCategorical(rats("1/3", "2/3"))
	if err != nil {
		tb.Fatal(err)
	}
	tab, err := RandomTable(rand.New(rand.NewPCG(5, 5)), 2, 4, 8)
	if err != nil {
		tb.Fatal(err)
	}
	return MonteCarlo{Family: f, K: 4, N2: 4, Policy: pol, Objective: tab}
}

// BenchmarkMonteCarloReplicate measures one replicate at the paper's
// configuration on one goroutine: the allocation-free worker, and the same
// replicate written plainly (mcNaiveReplicate: allocating sampler and credit,
// definitions of docs/method.md#the-credit-signals) as the baseline.
func BenchmarkMonteCarloReplicate(b *testing.B) {
	mc := mcPaper(b)
	b.Run("worker", func(b *testing.B) {
		w, err := newMCWorker(&mc, mc.N2)
		if err != nil {
			b.Fatal(err)
		}
		w.pcg.Seed(1, 2)
		b.ReportAllocs()
		for b.Loop() {
			if err := w.replicate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("naive", func(b *testing.B) {
		rnd := rand.New(rand.NewPCG(1, 2))
		b.ReportAllocs()
		for b.Loop() {
			mcNaiveReplicate(b, &mc, rnd)
		}
	})
}

// BenchmarkMonteCarloRun measures Run at the paper's configuration, one
// worker and GOMAXPROCS workers, in replicates per second.
func BenchmarkMonteCarloRun(b *testing.B) {
	const R = 1 << 20
	for _, tc := range []struct {
		name    string
		workers int
	}{{"workers=1", 1}, {"workers=GOMAXPROCS", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			mc := mcPaper(b)
			mc.Workers = tc.workers
			b.ReportAllocs()
			seed := uint64(0)
			for b.Loop() {
				seed++
				if _, err := mc.Run(R, seed); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(R)*float64(b.N)/b.Elapsed().Seconds(), "replicates/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(R)/float64(b.N), "ns/replicate")
		})
	}
}
