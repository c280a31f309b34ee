package credit

import (
	"math"

	"spiral/internal/numeric"
)

// Shape is the shape of a uniform batch: every problem has Traces traces
// and Sets sets of SetSize members and Outputs outputs each.
type Shape struct{ Traces, Sets, SetSize, Outputs int }

// Uniform computes the credit of every problem of in into dst, resized for
// in (Resize), for a batch of len(zero) problems of shape sh laid out one
// after another, without unscorable marks and with exact sums
// (Input.ExactSums); zero[q] receives what Problem reports for problem q.
// Every problem must be sound, as for Problem.
//
// It gives Problem's bits (TestUniformAsProblem) with about 400
// instructions a problem of the paper's shape fewer
// (BenchmarkStepParts/problems=256/credit, cachegrind): the sets' means in
// one loop over the batch, without the slicing of a Span and the calls of
// a problem, then one call a problem for the rest, whose search sums go
// straight into Search and Appearances, cleared once for the batch.
func Uniform(dst *Output[float64], in *Input[float64], zero []bool, sh Shape) {
	p, k := len(zero), sh.Sets
	if p == 0 {
		return
	}
	sc := &dst.sc
	sc.means = resize(sc.means, p*k)
	rewards, n2 := in.Rewards[:p*k*sh.Outputs], sh.Outputs
	uniformSets(sc.means, dst.Aggregation, rewards, n2)
	if n2&(n2-1) != 0 {
		uniformRemainders(sc.means, dst.Aggregation, rewards, n2)
	}
	uniformProblems(dst, in.Members[:p*k*sh.SetSize], zero, sh)
}

// setMean is what Uniform keeps of a set between its passes: the mean h +
// l, and the exact sum S of the values it divides, div of them.
type setMean struct {
	h, l, S float64
	div     int
}

// uniformSets is setScoresExact for every set of the batch, with each
// set's rewards at rewards[s*n2 : (s+1)*n2]: it writes the aggregation
// advantages and leaves each set's mean in means.
func uniformSets(means []setMean, agg, rewards []float64, n2 int) {
	agg = agg[:len(rewards)]
	fn2 := float64(n2)
	o := 0 // the set's first output
	for s := range means {
		rs := rewards[o : o+n2]
		x0 := rs[0]
		// S, and dd, the sum of the (x - x0)^2, which is 0 exactly when
		// every reward equals x0: each x - x0 is exact, and when it is not
		// 0 its square is at least 2^-32 (the rewards are multiples of
		// 2^-16 of magnitude at most 2^34, ExactSums), so no square
		// underflows or overflows. (Kept in floating point, not ORed as
		// bits in an integer register, the loop's values fit in the
		// registers: about 25 instructions a problem fewer,
		// BenchmarkStepParts/problems=256/credit, cachegrind.)
		var S, dd float64
		for _, x := range rs {
			S += x
			d := x - x0
			dd += float64(d * d)
		}
		// The mean h + l as numeric.MeanPair(Sum{S: S}, n2) gives it. S is
		// exact and never -0 (the sum starts at +0), so MeanPair's
		// TwoSum(S, 0) is (S, +0) and h = S/n2. When n2 is a power of two,
		// S/n2 is exact (S is a multiple of 2^-16 and n2 <= 2^24: no
		// underflow), so l is +0; uniformRemainders computes l for other
		// n2, in a loop of its own: the math.FMA it takes has a fallback
		// call for processors without FMA, around which the compiler would
		// spill this loop's values.
		h, m := S/fn2, setMean{S: S, div: n2}
		if dd == 0 { // every reward equals x0
			h, m = x0, setMean{S: x0, div: 1}
		}
		m.h = h
		means[s] = m
		for j, x := range rs {
			agg[o+j] = x - h
		}
		o += n2
	}
}

// uniformRemainders completes uniformSets for n2 not a power of two: the
// remainder l of each set's mean as numeric.MeanPair computes it, (S - n2
// h + 0)/n2 (the exact remainder is never -0, as S is not, so adding +0
// changes nothing), and the aggregation advantages (x - h) - l. (For n2 a
// power of two, uniformSets' x - h are these: l is +0.)
func uniformRemainders(means []setMean, agg, rewards []float64, n2 int) {
	fn2 := float64(n2)
	for s := range means {
		m := &means[s]
		if m.div == 1 {
			continue // l = 0
		}
		m.l = math.FMA(-m.h, fn2, m.S) / fn2
		o := s * n2
		for j, x := range rewards[o : o+n2] {
			agg[o+j] = (x - m.h) - m.l
		}
	}
}

// uniformProblems is setAdvantages and Problem's search pass for every
// problem of the batch, from the set means in sc.means: it writes each
// problem's scored sets, set scores, set advantages, search advantages and
// appearances, and zero[q], what Problem reports.
func uniformProblems(dst *Output[float64], members []int, zero []bool, sh Shape) {
	k, n1, n2, kn := sh.Sets, sh.Traces, sh.Outputs, sh.Sets*sh.SetSize
	means := dst.sc.means[:len(zero)*k]
	scored, scores := dst.ScoredOutputs[:len(means)], dst.SetScores[:len(means)]
	for s, m := range means {
		scored[s] = n2
		scores[s] = m.h + m.l
	}
	setAdv := dst.SetAdvantages[:len(means)]
	search := dst.Search[:len(zero)*n1]
	app := dst.Appearances[:len(search)]
	clear(search)
	clear(app)
	scoredSets := dst.ScoredSets[:len(zero)]
	for q := range zero {
		s, t := q*k, q*n1
		zero[q] = problem(means[s:s+k], setAdv[s:s+k], search[t:t+n1], app[t:t+n1], members[q*kn:q*kn+kn])
		scoredSets[q] = k
	}
}

// problem is setAdvantages and Problem's search pass for one problem of
// a uniform batch, whose sets' means are in sets (every set scored), and
// whose search and app are zero: it writes A_set to setAdv, the search
// advantages to search and the appearances to app, and returns what
// Problem returns.
func problem(sets []setMean, setAdv, search []float64, app, members []int) (zero bool) {
	k := len(sets)
	setAdv = setAdv[:k]
	var hsum float64
	divs := 0 // the sum of the sets' divisors: k when every set's rewards are equal
	for i := range sets {
		hsum += sets[i].h
		divs += sets[i].div
	}
	equal := divs == k
	P := hsum / float64(k)
	var ebar numeric.Sum
	e0 := 0.0
	mixed := false
	for i := range sets {
		s := &sets[i]
		if d, de := numeric.TwoSum(s.h, -P); s.l == 0 && de == 0 {
			s.h = d
		} else {
			s.h, s.l = deviation(numeric.Sum{S: s.S}, s.div, P)
		}
		if i == 0 {
			e0 = s.h + s.l
		} else if s.h+s.l != e0 {
			mixed = true
		}
		ebar.Add(s.h)
		ebar.C += s.l
	}
	var b1, b2, advMax float64
	if mixed {
		b1, b2 = numeric.MeanPair(ebar, k)
	}
	// A_set, added into the search sums of its members as it comes (in
	// the order of Problem's scatter).
	app = app[:len(search)]
	n := len(members) / k
	for i, s := range sets {
		a := 0.0
		if mixed {
			t, te := numeric.TwoSum(s.h, -b1)
			a = t + ((te + s.l) - b2)
		}
		setAdv[i] = a
		if math.Abs(a) > advMax {
			advMax = math.Abs(a)
		}
		for _, y := range members[:n] {
			search[y] += a
			app[y]++
		}
		members = members[n:]
	}
	// |a| > tol compared as bits, which order non-negative floats as their
	// values (a is finite): tol - |a|, both below 2^63, is negative exactly
	// when |a| > tol, and its sign spread over the word keeps a. About 15
	// instructions a problem fewer than math.Abs, a float comparison and a
	// conditional move (BenchmarkStepParts/problems=256/credit, cachegrind).
	tol := int64(math.Float64bits(searchTol(k, advMax, 0)))
	var written uint64 // the bits of every search advantage written, ORed
	for y, c := range app {
		bits := math.Float64bits(search[y] / float64(max(c, 1)))
		bits &= uint64((tol - int64(bits&^(1<<63))) >> 63)
		written |= bits
		search[y] = math.Float64frombits(bits)
	}
	return equal && written&^(1<<63) == 0
}
