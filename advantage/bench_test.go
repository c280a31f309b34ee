package advantage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"spiral/internal/cpubench"
)

// The paper's configuration: N1 = 8 traces, K = 4 sets of n = 4, N2 = 4
// rewards per set; one problem, and a batch of 256. Each case runs
// ComputeBatch into a reused dst (float64 and float32), and Compute
// (which allocates its result).
func BenchmarkCredit(b *testing.B) {
	for _, problems := range []int{1, 256} {
		specs := paperSpecs(problems, 1)
		in64, in32 := toBatch[float64](specs), toBatch[float32](specs)
		b.Run(fmt.Sprintf("problems=%d/ComputeBatch/float64", problems), func(b *testing.B) {
			var dst BatchCredit[float64]
			cpubench.Loop(b, func() {
				if err := ComputeBatch(&dst, in64); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("problems=%d/ComputeBatch/float32", problems), func(b *testing.B) {
			var dst BatchCredit[float32]
			cpubench.Loop(b, func() {
				if err := ComputeBatch(&dst, in32); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("problems=%d/Compute-per-problem", problems), func(b *testing.B) {
			cpubench.Loop(b, func() {
				for _, s := range specs {
					if _, err := Compute(s.Traces, s.Sets, s.Rewards); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// Large problems: N1 = 2^20 traces with 16,384 sets of 16, and 65,536
// distinct sets of 2 of 512 traces; the cost is linear in the input.
func BenchmarkLargeProblem(b *testing.B) {
	for _, tc := range []struct {
		name               string
		traces, sets, size int
	}{
		{"N1=2^20/K=16384/n=16", 1 << 20, 16384, 16},
		{"N1=512/K=65536/n=2", 512, 65536, 2},
	} {
		in, err := NewUniformBatch[float64](1, tc.traces, tc.sets, tc.size, 2)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 0))
		a, c := 0, 1
		for i := range tc.sets {
			g := in.Members[i*tc.size : (i+1)*tc.size]
			if tc.size == 2 {
				g[0], g[1] = a, c
				if c++; c == tc.traces {
					a++
					c = a + 1
				}
				continue
			}
			for j := range g {
				g[j] = (i*37 + j*65521) % tc.traces
			}
		}
		for i := range in.Rewards {
			in.Rewards[i] = float64(rng.IntN(2))
		}
		b.Run(tc.name, func(b *testing.B) {
			var dst BatchCredit[float64]
			cpubench.Loop(b, func() {
				if err := ComputeBatch(&dst, in); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// GRPO's batch in the paper's comparison: 256 problems of 12 traces each,
// 0/1 rewards, verl's layout (a uid string per row), rows shuffled.
// GroupRelative with verl's options against the plain per-group reference
// of the tests (a map of row lists, as verl's loop).
func BenchmarkGroupRelative(b *testing.B) {
	const problems, g = 256, 12
	rng := rand.New(rand.NewPCG(2, 0))
	rewards := make([]float64, problems*g)
	ids := make([]string, problems*g)
	for i := range rewards {
		rewards[i] = float64(rng.IntN(2))
		ids[i] = fmt.Sprintf("uid-%04d", i/g)
	}
	rng.Shuffle(len(ids), func(i, j int) {
		ids[i], ids[j] = ids[j], ids[i]
		rewards[i], rewards[j] = rewards[j], rewards[i]
	})
	opt := GroupOptions{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6}
	b.Run("GroupRelative", func(b *testing.B) {
		dst := make([]float64, len(rewards))
		cpubench.Loop(b, func() {
			if _, err := GroupRelative(dst, rewards, ids, opt); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("naive-reference", func(b *testing.B) {
		cpubench.Loop(b, func() { _, _ = groupReference(rewards, ids, opt) })
	})
}
