package advantage

import (
	"fmt"
	"math"
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
// them), or G - 1 - [Bessel] is 0, it is left undivided. S_-i is formed
// from the compensated S and the exact square of d_i/2^e, so it is
// accurate to a few units in the last place of S; a row far from others
// that nearly agree loses the digits of S_-i that S does not hold.

// othersRange is a group's smallest and largest scored reward and how
// many rows hold each.
type othersRange struct {
	lo, hi   float64
	nlo, nhi int
}

// othersRanges returns the othersRange of every group.
func othersRanges[F ~float32 | ~float64](rewards []F, group []int32, groups int) []othersRange {
	rs := make([]othersRange, groups)
	for i, x := range rewards {
		if x != x {
			continue
		}
		r, g := float64(x), &rs[group[i]]
		if g.nlo == 0 {
			*g = othersRange{lo: r, hi: r, nlo: 1, nhi: 1}
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
	return rs
}

// othersEqual reports whether the rewards of a mixed group of n rows other
// than r are all equal: the group holds two values and r is the only row
// holding its own.
func (g *othersRange) othersEqual(r float64, n int) bool {
	return g.nlo+g.nhi == n && ((r == g.lo && g.nlo == 1) || (r == g.hi && g.nhi == 1))
}

// advantageOthers returns the advantage of a scored row of a mixed group
// of two or more rows whose passes 2 and 3 ran (scale, inv and ss set),
// the leave-one-out factor G/(G-1) included: r - v, rounded once, where
// the others all hold v, else (G/(G-1)) (r - m)/(s_-i + Epsilon).
func (st *groupStats) advantageOthers(g *othersRange, r float64, opt GroupOptions) float64 {
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
	ss := st.ss
	ss.AddProduct(-e, e)
	ss.AddProduct(-e/float64(n-1), e)
	v := max(ss.Value(), 0) // S_-i/2^2e: the others differ, so its exact value is > 0
	den := math.Sqrt(v/float64(dof)) + opt.Epsilon*st.lifted()*st.inv
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
		return &InputError{Field: "Scale", Problem: -1, Set: -1, Output: -1, Value: float64(opt.Scale),
			Err: fmt.Errorf("others needs LeaveOneOut")}
	}
	if opt.Epsilon <= 0 {
		return &InputError{Field: "Epsilon", Problem: -1, Set: -1, Output: -1, Value: opt.Epsilon,
			Err: fmt.Errorf("%v with Scale others, want > 0", opt.Epsilon)}
	}
	return nil
}
