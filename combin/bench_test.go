package combin_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	gc "gonum.org/v1/gonum/stat/combin"

	"spiral/combin"
	"spiral/internal/cpubench"
)

func family(b *testing.B, ordered bool, N, n int) combin.Family {
	b.Helper()
	var f combin.Family
	var err error
	if ordered {
		f, err = combin.Tuples(N, n)
	} else {
		f, err = combin.Subsets(N, n)
	}
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// benchSampler measures one SampleTo call of a reused Sampler.
func benchSampler(b *testing.B, f combin.Family, K int) {
	s, err := combin.NewSampler(f, K)
	if err != nil {
		b.Fatal(err)
	}
	benchSampleTo(b, s)
}

// benchSampleTo measures one SampleTo call of a reused sampler s (a Sampler
// or a BalancedSampler) into a reused dst.
func benchSampleTo(b *testing.B, s interface {
	Len() int
	SampleTo(dst []int, rnd *rand.Rand) error
}) {
	dst := make([]int, s.Len())
	rnd := rand.New(rand.NewPCG(1, 2))
	cpubench.Loop(b, func() { _ = s.SampleTo(dst, rnd) })
}

// benchSample measures one Family.Sample call, which builds a Sampler and
// allocates the result.
func benchSample(b *testing.B, f combin.Family, K int) {
	rnd := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Sample(rnd, K); err != nil {
			b.Fatal(err)
		}
	}
}

// benchNaive is the naive way: list the family with gonum, shuffle it, and
// take the first K sets.
func benchNaive(b *testing.B, list func() [][]int, K, n int) {
	rnd := rand.New(rand.NewPCG(1, 2))
	dst := make([]int, K*n)
	b.ReportAllocs()
	for b.Loop() {
		all := list()
		rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for i := range K {
			copy(dst[i*n:], all[i])
		}
	}
}

func BenchmarkSampleSubsets8x4K4(b *testing.B) {
	f := family(b, false, 8, 4)
	b.Run("Sampler", func(b *testing.B) { benchSampler(b, f, 4) })
	b.Run("Sample", func(b *testing.B) { benchSample(b, f, 4) })
	b.Run("naive-gonum", func(b *testing.B) {
		benchNaive(b, func() [][]int { return gc.Combinations(8, 4) }, 4, 4)
	})
}

func BenchmarkSampleSubsets1024x16K64(b *testing.B) {
	f := family(b, false, 1024, 16)
	b.Run("Sampler", func(b *testing.B) { benchSampler(b, f, 64) })
	b.Run("Sample", func(b *testing.B) { benchSample(b, f, 64) })
}

func BenchmarkSampleTuples8x4K1680(b *testing.B) {
	f := family(b, true, 8, 4)
	b.Run("Sampler", func(b *testing.B) { benchSampler(b, f, 1680) })
	b.Run("Sample", func(b *testing.B) { benchSample(b, f, 1680) })
	b.Run("naive-gonum", func(b *testing.B) {
		benchNaive(b, func() [][]int { return gc.Permutations(8, 4) }, 1680, 4)
	})
}

func BenchmarkSampleTuples8x4K4(b *testing.B) {
	f := family(b, true, 8, 4)
	b.Run("Sampler", func(b *testing.B) { benchSampler(b, f, 4) })
	b.Run("naive-gonum", func(b *testing.B) {
		benchNaive(b, func() [][]int { return gc.Permutations(8, 4) }, 4, 4)
	})
}

// BenchmarkAll reports the cost per set of enumerating the whole family,
// beside gonum's generators.
func BenchmarkAll(b *testing.B) {
	for _, tc := range []struct {
		name    string
		ordered bool
		N, n    int
	}{{"Subsets(8,4)", false, 8, 4}, {"Subsets(20,10)", false, 20, 10}, {"Tuples(8,4)", true, 8, 4}, {"Tuples(10,6)", true, 10, 6}} {
		f := family(b, tc.ordered, tc.N, tc.n)
		T, _ := f.Count64()
		perGroup := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(T), "ns/set")
		}
		b.Run(tc.name+"/All", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for range f.All() {
				}
			}
			perGroup(b)
		})
		b.Run(tc.name+"/gonum-generator", func(b *testing.B) {
			dst := make([]int, tc.n)
			b.ReportAllocs()
			for b.Loop() {
				if tc.ordered {
					g := gc.NewPermutationGenerator(tc.N, tc.n)
					for g.Next() {
						g.Permutation(dst)
					}
				} else {
					g := gc.NewCombinationGenerator(tc.N, tc.n)
					for g.Next() {
						g.Combination(dst)
					}
				}
			}
			perGroup(b)
		})
	}
}

// BenchmarkUnrank reports the cost of one unrank at a random rank, beside
// gonum's IndexToCombination / IndexToPermutation where they apply.
func BenchmarkUnrank(b *testing.B) {
	for _, tc := range []struct {
		name    string
		ordered bool
		N, n    int
	}{{"Subsets(8,4)", false, 8, 4}, {"Subsets(64,8)", false, 64, 8}, {"Tuples(8,4)", true, 8, 4}, {"Tuples(64,8)", true, 64, 8}} {
		f := family(b, tc.ordered, tc.N, tc.n)
		T, _ := f.Count64()
		ranks := make([]uint64, 1024)
		rnd := rand.New(rand.NewPCG(1, 2))
		for i := range ranks {
			ranks[i] = rnd.Uint64N(T)
		}
		dst := make([]int, tc.n)
		b.Run(tc.name+"/UnrankTo", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = f.UnrankTo(dst, ranks[i&1023])
				i++
			}
		})
		b.Run(tc.name+"/gonum", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if tc.ordered {
					gc.IndexToPermutation(dst, int(ranks[i&1023]), tc.N, tc.n)
				} else {
					gc.IndexToCombination(dst, int(ranks[i&1023]), tc.N, tc.n)
				}
				i++
			}
		})
	}
	// Beyond 2^64: big ranks.
	f := family(b, false, 1024, 16)
	T, err := f.Count()
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	ranks := make([]*big.Int, 64)
	for i := range ranks {
		r := new(big.Int)
		for range 4 { // 256 random bits, reduced mod T
			r.Lsh(r, 64)
			r.Or(r, new(big.Int).SetUint64(rnd.Uint64()))
		}
		ranks[i] = r.Mod(r, T)
	}
	b.Run("Subsets(1024,16)/Unrank", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_, _ = f.Unrank(ranks[i&63])
			i++
		}
	})
}

func BenchmarkMissProb(b *testing.B) {
	f := family(b, false, 1024, 16)
	b.Run("Subsets(1024,16)/K=64/Float", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = f.MissProbFloat(64)
		}
	})
	b.Run("Subsets(1024,16)/K=64/exact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = f.MissProb(64)
		}
	})
}

// BenchmarkMissProbFloatRuns measures MissProbFloat where runs of factors
// are added in one step: K = 2^20 and K = 2^40 (which underflows to 0 after
// a few steps) against K = 2^16, the last K added factor by factor.
func BenchmarkMissProbFloatRuns(b *testing.B) {
	f := family(b, false, 1<<20, 2)
	for _, K := range []int{1 << 16, 1 << 20, int(min(uint64(1)<<40, uint64(f.Traces())*uint64(f.Traces()-1)/2))} {
		b.Run(fmt.Sprintf("Subsets(2^20,2)/K=%d", K), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = f.MissProbFloat(K)
			}
		})
	}
}

// BenchmarkConstants measures Family.Constants on the paper's configuration
// (exact) and on N1 = 64, n = 32, K = 2^16 (float path).
func BenchmarkConstants(b *testing.B) {
	for _, c := range [][3]int{{8, 4, 4}, {64, 32, 1 << 16}} {
		f := family(b, false, c[0], c[1])
		for _, d := range []combin.Design{combin.Uniform, combin.Balanced} {
			b.Run(fmt.Sprintf("%v/K=%d/%v", f, c[2], d), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _ = f.Constants(d, c[2])
				}
			})
		}
	}
}

// BenchmarkCheckSets measures the set check on the paper's four sets and on
// 2^14 distinct sets of 16 traces.
func BenchmarkCheckSets(b *testing.B) {
	for _, c := range [][3]int{{8, 4, 4}, {1 << 12, 16, 1 << 14}} {
		f := family(b, false, c[0], c[1])
		s, err := combin.NewSampler(f, c[2])
		if err != nil {
			b.Fatal(err)
		}
		flat := make([]int, s.Len())
		_ = s.SampleTo(flat, rand.New(rand.NewPCG(1, 2)))
		b.Run(fmt.Sprintf("%v/K=%d", f, c[2]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.CheckSets(flat); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDrawTo measures one Sampler.DrawTo of 4 sets of Subsets(8, 4),
// the paper's plan of one problem, on fresh random values every call:
// "stream" takes them from one long-lived PCG, "per-problem" reseeds a PCG
// from a counter for every draw, as a planner does that gives each problem
// its own stream. Shuffle is the shuffle of one set of 4.
func BenchmarkDrawTo(b *testing.B) {
	f := family(b, false, 8, 4)
	s, err := combin.NewSampler(f, 4)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int, s.Len())
	b.Run("Subsets(8,4)/K=4/stream", func(b *testing.B) {
		src := rand.NewPCG(1, 2)
		cpubench.Loop(b, func() { s.DrawTo(dst, src) })
	})
	b.Run("Subsets(8,4)/K=4/per-problem", func(b *testing.B) {
		var key uint64
		src := rand.NewPCG(0, 0)
		cpubench.Loop(b, func() {
			key++
			src.Seed(1, key)
			s.DrawTo(dst, src)
		})
	})
	b.Run("Subsets(8,4)/K=4/SampleTo", func(b *testing.B) {
		rnd := rand.New(rand.NewPCG(1, 2))
		cpubench.Loop(b, func() { _ = s.SampleTo(dst, rnd) })
	})
	b.Run("Shuffle/n=4", func(b *testing.B) {
		src := rand.NewPCG(1, 2)
		cpubench.Loop(b, func() { combin.Shuffle(dst[:4], src) })
	})
}
