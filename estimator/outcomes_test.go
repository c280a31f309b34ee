package estimator

import (
	"fmt"
	"math/big"
	"slices"
	"testing"
)

// TestOutputOutcomes: the enumeration yields every sequence of
// (answer, reward) pairs of nonzero probability with its exact probability,
// against a recursive enumeration; the probabilities add up to exactly 1.
func TestOutputOutcomes(t *testing.T) {
	p := []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big.NewRat(1, 6)}
	reward := []*big.Rat{big.NewRat(1, 4), big.NewRat(1, 1), big.NewRat(0, 1)}
	for N2 := 1; N2 <= 3; N2++ {
		leaves := 1
		for range N2 {
			leaves *= 2 * len(p)
		}
		var want []string
		var rec func(prob *big.Rat, digits []int)
		rec = func(prob *big.Rat, digits []int) {
			if len(digits) == N2 {
				if prob.Sign() != 0 {
					// Digit j is the j-th least significant in base 2V.
					z, r := make([]int, N2), make([]int, N2)
					for j, d := range digits {
						z[j], r[j] = d/2, d%2
					}
					want = append(want, fmt.Sprint(prob, z, r))
				}
				return
			}
			for z := range p {
				for r := range 2 {
					q := new(big.Rat).Mul(prob, p[z])
					if r == 1 {
						q.Mul(q, reward[z])
					} else {
						q.Mul(q, new(big.Rat).Sub(big.NewRat(1, 1), reward[z]))
					}
					rec(q, append(slices.Clone(digits), 2*z+r))
				}
			}
		}
		rec(big.NewRat(1, 1), nil)
		// The recursion varies the last digit fastest, the enumeration the
		// first: compare them as sets of lines.
		var got []string
		total := new(big.Rat)
		for o := range outputOutcomes(p, reward, N2, leaves) {
			got = append(got, fmt.Sprint(o.Prob, o.Z, o.R))
			total.Add(total, o.Prob)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("N2 = %d: outcomes\n%v\nwant\n%v", N2, got, want)
		}
		if total.Cmp(big.NewRat(1, 1)) != 0 {
			t.Errorf("N2 = %d: probabilities add up to %v", N2, total)
		}
	}
}
