package combin

import (
	"math/bits"
	"math/rand/v2"
)

// drawRun sets d[i], for i < m, to independent draws from [0, top-i), each
// exactly uniform, and returns m >= 1: the longest run of at most len(d)
// radices top, top-1, ... whose product p is below 2^64. It needs
// 1 <= len(d) <= top.
//
// The run takes one value x of src (more only after a rejection, of
// probability below p/2^64): it is Lemire's multiply-and-reject draw of a
// uniform integer below p, read as the digits of p's mixed radix
// (Brackett-Rozinsky and Lemire, "Batched ranged random integer
// generation", 2024). Multiplying x by top gives the first digit as the
// high word and a remainder as the low word; multiplying that remainder by
// top-1 gives the second digit, and so on, so that after the last digit
// the digits are floor(x p / 2^64) in mixed radix and the remainder L is
// x p mod 2^64. Each of the p results comes from exactly floor(2^64/p)
// values of x with L >= 2^64 mod p; the draw rejects the others (L < 2^64
// mod p < p), whose threshold is computed only when L < p.
func drawRun(d []int, top int, src rand.Source) int {
	if r, ok := src.(intNSource); ok {
		d[0] = r.IntN(top)
		return 1
	}
	p, m := uint64(top), 1
	for m < len(d) {
		hi, lo := bits.Mul64(p, uint64(top-m))
		if hi != 0 {
			break
		}
		p, m = lo, m+1
	}
	for {
		x := src.Uint64()
		for i := range m {
			hi, lo := bits.Mul64(x, uint64(top-i))
			d[i], x = int(hi), lo
		}
		if x >= p || x >= -p%p {
			return m
		}
	}
}

// intNSource is the source of the samplers' SampleTo and SampleManyTo: a
// *rand.Rand from which drawRun takes one digit per value, by rnd.IntN, so
// that a given rnd gives the sets it gave before DrawTo drew digits in runs.
type intNSource struct{ *rand.Rand }

// uniformInt returns a uniform draw from [0, n), n >= 1: drawRun of one
// radix.
func uniformInt(n int, src rand.Source) int {
	var d [1]int
	drawRun(d[:], n, src)
	return d[0]
}

// Shuffle puts x in a uniformly random order, each of the len(x)!
// orders exactly equally likely, by a Fisher-Yates shuffle whose swap
// partners are drawn in runs by one 64-bit value of src each (see
// [Sampler.DrawTo]): one value for up to 20 elements. It does not
// allocate. The same src state gives the same order on every machine.
func Shuffle(x []int, src rand.Source) {
	var d [64]int
	for i := 0; i < len(x)-1; {
		m := drawRun(d[:min(len(d), len(x)-1-i)], len(x)-i, src)
		for j, dj := range d[:m] {
			k := i + j
			x[k], x[k+dj] = x[k+dj], x[k]
		}
		i += m
	}
}
