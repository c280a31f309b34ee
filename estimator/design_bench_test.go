package estimator

import (
	"strconv"
	"testing"

	"spiral/combin"
)

// BenchmarkDesignMoments: the exact moments engine against the brute-force
// enumeration from the definitions (designBrute) on a small configuration
// (N = 4, n = 2, K = 3 uniform, V = 2, N2 = 2, index order), and the engine
// alone at the paper's configuration for the balanced and uniform laws.
func BenchmarkDesignMoments(b *testing.B) {
	c := must(NewCategorical(rats("1/3", "2/3")))
	small := must(UniformSets(family(b, false, 4, 2), 3))
	first2 := must(FirstTable(2, 2, rats("1/4", "1")))
	b.Run("small/engine", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			must(small.Moments(c, first2, combin.IndexOrder, 2))
		}
	})
	b.Run("small/brute-force", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			designBrute(small, c, first2, combin.IndexOrder, 2)
		}
	})
	f := family(b, false, 8, 4)
	first := must(FirstTable(2, 4, rats("1/4", "1")))
	for name, d := range map[string]*SetDistribution{"balanced": must(BalancedSets(f, 4)), "uniform": must(UniformSets(f, 4))} {
		b.Run("paper/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				must(d.Moments(c, first, combin.IndexOrder, 0))
			}
		})
	}
}

// BenchmarkBalancedSets: the exact law of the balanced sampler, found
// through the classes of traces and relabelled, at the paper's
// configuration and at Subsets(5, 3) with K = 6 (864,000 round sequences);
// and BalancedClasses alone at 8/3/8 (2^30 round sequences).
func BenchmarkBalancedSets(b *testing.B) {
	for _, c := range [][3]int{{8, 4, 4}, {5, 3, 6}} {
		f := family(b, false, c[0], c[1])
		b.Run(f.String()+"/K="+strconv.Itoa(c[2]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				must(BalancedSets(f, c[2]))
			}
		})
	}
	f := family(b, false, 8, 3)
	b.Run("classes/"+f.String()+"/K=8", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			must(BalancedClasses(f, 8))
		}
	})
}
