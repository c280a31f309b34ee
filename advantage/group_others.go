package advantage

import (
	"fmt"
	"math"

	"golang.org/x/exp/constraints"

	"spiral/internal/numeric"
)

// ScaleOthers is NeMo-RL's normalize_rewards under its leave-one-out
// baseline (nemo_rl/algorithms/utils.py,
// calculate_baseline_and_std_per_prompt): the standard deviation that
// divides row i's advantage is that of the group's other G-1 scored
// rewards about their own mean, Bessel-corrected with Bessel,
//
//	s_-i^2 = S_-i / (G - 1 - [Bessel]),   S_-i = S - (G/(G-1)) d_i^2,
//
// S being the group's sum of squared deviations d_j = r_j - m, and the
// advantage is divided only where s_-i > 0 ("don't sharpen the ones with no
// variation"): where the other rows' rewards are all equal (decided exactly,
// from the group's smallest and largest rewards and how many rows hold
// them), it is r_i - r_j, rounded once. S_-i is formed from the compensated
// S and the exact square of d_i/2^e where (G/(G-1)) d_i^2 <= S/2, so that
// at most half of S cancels; for the at most two rows of a group beyond
// that (a reward far from others that nearly agree), S_-i is summed again
// over the others about their own mean m_-i (a compensated pair from the
// group's exact sum), so that it keeps its own digits.

// othersRange is what ScaleOthers reads of a group beyond groupStats: its
// smallest and largest scored reward and how many rows hold each, and the
// rows (at most two) whose S_-i is summed directly, with that sum.
type othersRange struct {
	lo, hi   float64
	nlo, nhi int
	far      [2]int32       // 1 + the row, or 0
	h, l     [2]float64     // m_-i of far[k] as a pair (times the lift)
	ss       [2]numeric.Sum // S_-i of far[k] times 2^-2e
}

// othersRanges returns the othersRange of every group, for groups whose
// sums and passes 2 and 3 are done (scaleGroups).
func othersRanges[F constraints.Float](rewards []F, group []int32, gs []groupStats, opt GroupOptions) []othersRange {
	rs := make([]othersRange, len(gs))
	for i, x := range rewards {
		if x != x {
			continue
		}
		r, g := float64(x), &rs[group[i]]
		if g.nlo == 0 {
			g.lo, g.hi, g.nlo, g.nhi = r, r, 1, 1
			continue
		}
		switch {
		case r < g.lo:
			g.lo, g.nlo = r, 1
		case r == g.lo:
			g.nlo++
		}
		switch {
		case r > g.hi:
			g.hi, g.nhi = r, 1
		case r == g.hi:
			g.nhi++
		}
	}
	// The rows whose (G/(G-1)) d_i^2 exceeds S/2, and their others' means.
	any := false
	for i, x := range rewards {
		st, g := &gs[group[i]], &rs[group[i]]
		n := st.raw.n
		if x != x || n < 3 || !st.raw.mixed || g.othersEqual(float64(x), n) {
			continue
		}
		e := st.dev(float64(x)) * st.inv
		if e*e*float64(n)/float64(n-1) <= st.ss.Value()/2 {
			continue
		}
		k := 0
		if g.far[0] != 0 {
			k = 1
		}
		sum := st.raw.sum
		sum.Add(float64(-float64(x) * st.lifted()))
		g.far[k] = int32(i) + 1
		g.h[k], g.l[k] = numeric.MeanPair(sum, n-1)
		any = true
	}
	if !any {
		return rs
	}
	for j, x := range rewards {
		g := &rs[group[j]]
		if x != x || g.far[0] == 0 {
			continue
		}
		st := &gs[group[j]]
		for k := range 2 {
			if g.far[k] == 0 || int(g.far[k]) == j+1 {
				continue
			}
			d, e := numeric.TwoSum(float64(x)*st.lifted(), -g.h[k])
			dev := (d + (e - g.l[k])) * st.inv
			g.ss[k].AddProduct(dev, dev)
		}
	}
	return rs
}

// othersEqual reports whether the rewards of a mixed group of n rows other
// than r are all equal: the group holds two values and r is the only row
// holding its own.
func (g *othersRange) othersEqual(r float64, n int) bool {
	return g.nlo+g.nhi == n && ((r == g.lo && g.nlo == 1) || (r == g.hi && g.nhi == 1))
}

// advantageOthers returns the advantage of row i, of scored reward r, in a
// mixed group of two or more rows whose passes 2 and 3 ran, the
// leave-one-out factor G/(G-1) included: r - v, rounded once, where the
// others all hold v, else (G/(G-1)) (r - m)/(s_-i + Epsilon).
func (st *groupStats) advantageOthers(g *othersRange, i int, r float64, opt GroupOptions) float64 {
	n := st.raw.n
	if g.othersEqual(r, n) {
		if r == g.lo {
			return r - g.hi
		}
		return r - g.lo
	}
	dof := n - 1 // n >= 3 here: two rows are always others-equal
	if opt.Bessel {
		dof--
	}
	d := st.dev(r)  // times the lift
	e := d * st.inv // |e| <= 1, exact
	var v float64   // S_-i times 2^-2e
	switch int32(i) + 1 {
	case g.far[0]:
		v = g.ss[0].Value()
	case g.far[1]:
		v = g.ss[1].Value()
	default:
		ss := st.ss
		ss.AddProduct(-e, e)
		ss.AddProduct(-e/float64(n-1), e)
		v = max(ss.Value(), 0) // at least half of S remains
	}
	den := math.Sqrt(v/float64(dof)) + float64(opt.Epsilon*st.lifted()*st.inv)
	loo := float64(n) / float64(n-1)
	if math.IsInf(den, 1) {
		return (d / opt.Epsilon) / st.lifted() * loo
	}
	return e / den * loo
}

// validateOthers checks what ScaleOthers needs: LeaveOneOut (NeMo-RL takes
// the standard deviation over the rows its baseline averages) and
// Epsilon > 0, which bounds an advantage whose others nearly agree.
func (opt GroupOptions) validateOthers() error {
	if opt.Scale != ScaleOthers {
		return nil
	}
	if !opt.LeaveOneOut {
		return inputError(InputError{Field: FieldScale, Problem: -1, Set: -1, Output: -1, Value: float64(opt.Scale),
			Err: fmt.Errorf("others needs LeaveOneOut")})
	}
	if opt.Epsilon <= 0 {
		return inputError(InputError{Field: FieldEpsilon, Problem: -1, Set: -1, Output: -1, Value: opt.Epsilon,
			Err: fmt.Errorf("%v with Scale others, want > 0", opt.Epsilon)})
	}
	return nil
}
