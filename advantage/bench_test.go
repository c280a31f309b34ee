package advantage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"spiral/internal/cpubench"
)

// The paper's configuration: N1 = 8 traces, K = 4 sets of n = 4, N2 = 4
// rewards per set; one problem, and a batch of 256. Each case runs
// ComputeBatch into a reused dst (float64 and float32), Compute (which
// allocates its result), and the plain reference of the tests.
func BenchmarkCredit(b *testing.B) {
	for _, problems := range []int{1, 256} {
		specs := paperSpecs(problems, 1)
		in64, in32 := toBatch[float64](specs), toBatch[float32](specs)
		b.Run(fmt.Sprintf("problems=%d/ComputeBatch/float64", problems), func(b *testing.B) {
			dst, err := NewBatchCredit(in64)
			if err != nil {
				b.Fatal(err)
			}
			cpubench.Loop(b, func() {
				if err := ComputeBatch(&dst, in64); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("problems=%d/ComputeBatch/float32", problems), func(b *testing.B) {
			dst, err := NewBatchCredit(in32)
			if err != nil {
				b.Fatal(err)
			}
			cpubench.Loop(b, func() {
				if err := ComputeBatch(&dst, in32); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("problems=%d/Compute-per-problem", problems), func(b *testing.B) {
			cpubench.Loop(b, func() {
				for _, s := range specs {
					if _, err := Compute(s.Traces, s.Groups, s.Rewards); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		b.Run(fmt.Sprintf("problems=%d/naive-reference", problems), func(b *testing.B) {
			cpubench.Loop(b, func() {
				for _, s := range specs {
					_ = reference(s)
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
