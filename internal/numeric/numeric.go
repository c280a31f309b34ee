// Package numeric is the module's one place for numerics that several
// packages share: error-free transformations and compensated sums of
// float64 values, the exact ratio of falling factorials (the hypergeometric
// ratio behind combin's miss probability and eval's pass@k) with its product
// tree, and the caps that bound the size of exact arithmetic and of the
// slices a call may make.
//
// Every product that must be rounded is rounded explicitly, and every
// multiply-add that must be exact is one math.FMA (correctly rounded on
// every architecture), so no result depends on whether the compiler fuses
// a multiply and an add.
package numeric

import (
	"math"
)

// The module's three caps. Every size a caller's numbers can reach is
// bounded before any work or allocation by one of them, or by a bound that
// a package derives from one of them for its own algorithm and documents
// (such as combin's (K+1) b^2 <= 2^36 for AppearanceDist, from b <=
// MaxExactBits). A package that exports a cap exports one of these under
// its own name (combin.MaxSize, combin.MaxExactBits).
const (
	// MaxSize bounds every length a caller's numbers can make the module
	// hold: N1, K*n, the members of a list of sets, the rows of a batch,
	// the length of a curve (2^24 elements, 128 MiB of float64).
	MaxSize = 1 << 24
	// MaxExactBits bounds the size, in bits, of the numerators and
	// denominators that an exact (math/big) answer works with, so that each
	// exact answer comes within a fraction of a second.
	MaxExactBits = 1 << 17
	// MaxWork bounds the elementary steps (a loop's iterations, a draw's
	// retries) that one call may take on a caller's numbers before it
	// refuses them, a few seconds at most.
	MaxWork = 1 << 30
)

// TwoSum returns s = fl(a + b) and the rounding error e of that addition,
// so that s + e = a + b exactly (Knuth's branch-free two-sum), unless a + b
// overflows.
func TwoSum(a, b float64) (s, e float64) {
	s = a + b
	z := s - a
	return s, (a - (s - z)) + (b - z)
}

// TwoProd returns p = fl(a b) and the rounding error e of that product, so
// that p + e = a b exactly, by one math.FMA, unless a b overflows or its
// error falls below the smallest subnormal (when the exponents of a and b
// add up to less than about -969).
func TwoProd(a, b float64) (p, e float64) {
	p = float64(a * b)
	return p, math.FMA(a, b, -p)
}

// Sum is a compensated sum: the total is S + C, S the float64 sum of the
// values added and C the sum of the exact rounding errors of those
// additions (TwoSum). Its error is at most 2^-53 |total| + n 2^-106 sum
// |x_i| for n values x_i, whatever their order and cancellation, where a
// plain sum's is n 2^-53 sum |x_i|. The zero Sum is empty.
type Sum struct{ S, C float64 }

// Add adds x.
func (z *Sum) Add(x float64) {
	var e float64
	z.S, e = TwoSum(z.S, x)
	z.C += e
}

// AddProduct adds a b, its rounding error included (TwoProd), such as a
// squared deviation d d for a compensated sum of squares.
func (z *Sum) AddProduct(a, b float64) {
	p, e := TwoProd(a, b)
	z.Add(p)
	z.C += e
}

// Value returns the total rounded to float64, fl(S + C).
func (z Sum) Value() float64 { return z.S + z.C }

// MeanPair returns the mean of n >= 1 values whose sum is s, as an
// unevaluated pair h + l: h = fl((S + C)/n), the mean rounded, and
// l = (T - n h + E)/n, the part of the mean that h misses, where
// T + E = S + C exactly with T = fl(S + C) (TwoSum) and T - n h, the
// remainder of a rounded division, is exact by one math.FMA. So h + l is
// within about 2^-105 |mean| of the mean (plus the subnormal spacing),
// even when S and C nearly cancel, as after a sum whose terms cancel: S
// alone, with C comparable to S, would leave an error of up to 2^-53 |C|/n.
// A deviation x - mean is then (x - h) - l, accurate to a few units in the
// last place of the deviation itself even when the mean is large and the
// deviation small. MeanPair panics if n < 1.
func MeanPair(s Sum, n int) (h, l float64) {
	if n < 1 {
		panic("numeric: MeanPair of no values")
	}
	fn := float64(n)
	t, e := TwoSum(s.S, s.C)
	h = t / fn
	l = (math.FMA(-h, fn, t) + e) / fn
	return h, l
}
