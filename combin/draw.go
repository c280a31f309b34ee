package combin

import (
	"math/bits"
	"math/rand/v2"
)

// A run is m consecutive radices top, top-1, ..., top-m+1 whose product p
// is below 2^64: the digits d_i in [0, top-i), i < m, that one 64-bit value
// gives exactly uniformly.
//
// The value x is Lemire's multiply-and-reject draw of a uniform integer
// below p, read as the digits of p's mixed radix (Brackett-Rozinsky and
// Lemire, "Batched ranged random integer generation", 2024). Multiplying x
// by top gives the first digit as the high word and a remainder as the low
// word; multiplying that remainder by top-1 gives the second digit, and so
// on, so that after the last digit the digits are floor(x p / 2^64) in
// mixed radix and the remainder L is x p mod 2^64. Each of the p results
// comes from exactly floor(2^64/p) values of x with L >= 2^64 mod p; the
// draw rejects the others (L < 2^64 mod p < p, probability below p/2^64)
// and takes another value. The threshold is computed only when L < p.
type run struct {
	top, m int
	p      uint64
}

// runsOf returns the runs of the count radices top, top-1, ...,
// top-count+1 (1 <= count <= top), each as long as its product allows.
func runsOf(top, count int) []run {
	var runs []run
	for i := 0; i < count; {
		r := longestRun(top-i, count-i)
		runs = append(runs, r)
		i += r.m
	}
	return runs
}

// longestRun returns the longest run of at most most radices from top down.
func longestRun(top, most int) run {
	p, m := uint64(top), 1
	for m < most {
		hi, lo := bits.Mul64(p, uint64(top-m))
		if hi != 0 {
			break
		}
		p, m = lo, m+1
	}
	return run{top, m, p}
}

// drawRuns sets d[i] to independent draws from [0, top-i), each exactly
// uniform, for the radices that runs (from runsOf(top, len(d))) cover: the
// m digits of a run from one value x of src, rejected and drawn again when
// x p mod 2^64 < 2^64 mod p (see run). One function draws every run, the
// rejection loop inside it: a call a run fewer than a function per run,
// about 25 instructions a plan of Subsets(8, 4), K = 4
// (bench/cachegrind.sh's planning part).
func drawRuns(d []int, runs []run, src rand.Source) {
	if r, ok := src.(intNSource); ok {
		top := runs[0].top
		for i := range d {
			d[i] = r.IntN(top - i)
		}
		return
	}
	for k := range runs {
		digits := d[:runs[k].m]
		d = d[len(digits):]
		for !runs[k].digits(src.Uint64(), digits) {
		}
	}
}

// digits sets digits, r.m of them, to the digits the value x gives (see
// run), and reports whether x is accepted.
func (r *run) digits(x uint64, digits []int) bool {
	top := uint64(r.top)
	for i := range digits {
		hi, lo := bits.Mul64(x, top-uint64(i))
		digits[i], x = int(hi), lo
	}
	return x >= r.p || x >= -r.p%r.p
}

// drawRun draws the longest run of at most len(d) radices from top down
// into d and returns its length (see run).
func drawRun(d []int, top int, src rand.Source) int {
	if r, ok := src.(intNSource); ok {
		d[0] = r.IntN(top)
		return 1
	}
	r := [1]run{longestRun(top, len(d))}
	drawRuns(d[:r[0].m], r[:], src)
	return r[0].m
}

// intNSource is the source of the samplers' SampleTo and SampleManyTo: a
// *rand.Rand from which each digit is drawn by its own rnd.IntN, the
// stream that SampleTo keeps (see [Sampler.SampleTo]).
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
