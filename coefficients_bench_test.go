package spiral

import (
	"fmt"
	"testing"

	"spiral/internal/cpubench"
	"spiral/loss"
)

// BenchmarkLossCoefficients times Config.LossCoefficients beside the
// CreditBatch that made its credit, at a large family: N1 = 4096 search
// traces, K = 256 sets of n = 64, N2 = 4, 256 problems (1,310,720
// outputs). Each iteration takes the next of two batches, so that no input
// is reused from one iteration to the next; the constants of the
// configuration are computed before the timing, as a trainer's first step
// computes them.
func BenchmarkLossCoefficients(b *testing.B) {
	c := Config{SearchTraces: 4096, SetSize: 64, Sets: 256, AggregationsPerSet: 4}
	const problems = 256
	pool := make([]Batch, 2)
	credit := make([]BatchCredit, len(pool))
	for i := range pool {
		pool[i] = paperBatch(c, problems, uint64(100+i))
		if err := c.CreditBatch(&credit[i], pool[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run(fmt.Sprintf("problems=%d/credit", problems), func(b *testing.B) {
		var dst BatchCredit
		if err := c.CreditBatch(&dst, pool[0]); err != nil {
			b.Fatal(err)
		}
		i := 0
		cpubench.Loop(b, func() {
			if err := c.CreditBatch(&dst, pool[i]); err != nil {
				b.Fatal(err)
			}
			i = 1 - i
		})
	})
	for _, r := range []loss.Reduction{loss.TokenMean, loss.TRLGRPO} {
		b.Run(fmt.Sprintf("problems=%d/coefficients-%v", problems, r), func(b *testing.B) {
			opt := LossOptions{Update: JointGradient, Reduction: r}
			var dst LossCoefficients
			if err := c.LossCoefficients(&dst, &credit[0], pool[0], opt); err != nil {
				b.Fatal(err)
			}
			i := 0
			cpubench.Loop(b, func() {
				if err := c.LossCoefficients(&dst, &credit[i], pool[i], opt); err != nil {
					b.Fatal(err)
				}
				i = 1 - i
			})
		})
	}
}
