package combin_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"spiral/combin"
)

// BenchmarkBalanced compares, per design drawn: the uniform Sampler (what
// the paper draws, for reference), the BalancedSampler (dst-first), the
// allocating Family.SampleBalanced, and, at the paper's configuration only,
// a naive balanced sampler that redraws uniform designs until one is
// balanced (a different law, over all balanced designs, shown for cost).
func BenchmarkBalanced(b *testing.B) {
	for _, c := range [][3]int{{8, 4, 4}, {16, 4, 8}, {64, 8, 32}, {7, 3, 30}} {
		f := family(b, false, c[0], c[1])
		K := c[2]
		name := fmt.Sprintf("N=%d,n=%d,K=%d", c[0], c[1], K)
		b.Run(name+"/uniform", func(b *testing.B) { benchSampler(b, f, K) })
		b.Run(name+"/balanced", func(b *testing.B) {
			s, err := combin.NewBalancedSampler(f, K)
			if err != nil {
				b.Fatal(err)
			}
			benchSampleTo(b, s)
		})
		b.Run(name+"/balanced-alloc", func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.SampleBalanced(rnd, K); err != nil {
					b.Fatal(err)
				}
			}
		})
		if c == [3]int{8, 4, 4} {
			b.Run(name+"/naive-reject-uniform", func(b *testing.B) {
				s, _ := combin.NewSampler(f, K)
				dst := make([]int, s.Len())
				count := make([]int, c[0])
				rnd := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				for b.Loop() {
					for {
						_ = s.SampleTo(dst, rnd)
						clear(count)
						ok := true
						for _, v := range dst {
							if count[v]++; count[v] > 2 {
								ok = false
							}
						}
						if ok {
							break
						}
					}
				}
			})
		}
	}
}
