package advantage

import (
	"fmt"
	"math"

	"golang.org/x/exp/constraints"
)

// GroupOptions selects a member of the GRPO family for [GroupRelative]. The
// zero value is plain mean-centring, A_i = r_i - mean, as in Dr. GRPO and
// as SPIRAL's aggregation advantage A_agg.
//
// verl's default GRPO (compute_grpo_outcome_advantage with
// norm_adv_by_std_in_grpo=True) is
//
//	GroupOptions{ScaleByStd: true, Bessel: true, Epsilon: 1e-6}
//
// since it divides by torch.std, which is Bessel-corrected, plus 1e-6; its
// Dr. GRPO setting (norm_adv_by_std_in_grpo=False) is the zero value, and
// its RLOO estimator is GroupOptions{LeaveOneOut: true}.
type GroupOptions struct {
	// ScaleByStd divides each centred reward by (std + Epsilon), std being
	// the standard deviation of the group's rewards, as the original GRPO
	// does.
	ScaleByStd bool
	// Epsilon is added to std before dividing. It must be finite and >= 0;
	// it is used only with ScaleByStd. 0 is safe: a group whose rewards
	// are all equal gets 0 without any division.
	Epsilon float64
	// Bessel makes std use the denominator G-1 (the sample standard
	// deviation, torch.std's default) instead of G (the population
	// standard deviation). Used only with ScaleByStd.
	Bessel bool
	// LeaveOneOut replaces the group mean by the mean of the other rewards
	// of the group (RLOO):
	//
	//	A_i = r_i - (1/(G-1)) sum_{j != i} r_j = (G/(G-1)) (r_i - mean).
	//
	// With ScaleByStd as well, this is then divided by (std + Epsilon).
	LeaveOneOut bool
}

// GroupReport describes the groups seen by [GroupRelative]. Groups are
// listed by id, in the order of their first row. The advantages of every
// row of a listed group are 0: a dynamic-sampling trainer drops such groups.
type GroupReport[ID comparable] struct {
	// Groups is the number of distinct group ids.
	Groups int
	// Singletons lists the groups with exactly one row. A lone reward has
	// no baseline to compare with, so its advantage is 0, never the raw
	// reward.
	Singletons []ID
	// ZeroVariance lists the groups with two or more rows whose rewards
	// are all equal (for 0/1 rewards: all wrong or all right).
	ZeroVariance []ID
}

// GroupRelative writes to dst the group-relative advantage of every reward:
// rewards[i] belongs to the group ids[i], rows of one group may be anywhere
// and in any order (verl's layout, whose index array holds a uid per row),
// and dst[i] is the advantage of rewards[i]. For a group of G rewards with
// mean m and standard deviation s (denominator G, or G-1 with Bessel):
//
//	A_i = r_i - m                          zero GroupOptions (Dr. GRPO)
//	A_i = (G/(G-1)) (r_i - m)              LeaveOneOut (RLOO)
//	A_i = (r_i - m) / (s + Epsilon)        ScaleByStd (GRPO)
//
// A group of one row gets 0 and is listed in the report's Singletons; a
// group of two or more equal rewards gets exactly 0 and is listed in
// ZeroVariance.
//
// Rewards are converted to float64 and results rounded to F when stored.
// Means and variances are two-pass: the mean m0 = sum/G, then the mean c of
// the deviations r_i - m0, then r_i - m = (r_i - m0) - c, and s from the
// sum of squares of those centred values (scaled by their largest magnitude,
// so that it neither overflows nor underflows); never E[r^2] - E[r]^2.
//
// Where this differs from verl (verl/trainer/ppo/core_algos.py): verl gives
// a group of one the mean 0 and std 1, so its advantage is the raw reward
// r/(1+eps) (GRPO) or r (Dr. GRPO, RLOO), where here it is 0 and reported;
// verl computes in the tensors' dtype (usually float32), here the arithmetic
// is float64 whatever F is; and verl takes one scalar per row from summed
// token-level rewards, where here the caller passes that scalar.
//
// GroupRelative returns an error, before writing anything, if
// len(ids) != len(rewards), if opt.Epsilon is negative or not finite, or if
// a reward is NaN, infinite or larger in magnitude than [MaxAbsReward] (the
// error names its row and group). It panics if len(dst) != len(rewards), a
// programmer's error. It allocates a map from id to group number, the
// group number of each row, and O(1) statistics per group.
func GroupRelative[F constraints.Float, ID comparable](dst, rewards []F, ids []ID, opt GroupOptions) (GroupReport[ID], error) {
	if len(ids) != len(rewards) {
		return GroupReport[ID]{}, fmt.Errorf("advantage: len(ids) = %d, want len(rewards) = %d", len(ids), len(rewards))
	}
	if math.IsNaN(opt.Epsilon) || math.IsInf(opt.Epsilon, 0) || opt.Epsilon < 0 {
		return GroupReport[ID]{}, fmt.Errorf("advantage: Epsilon = %v, want finite and >= 0", opt.Epsilon)
	}
	for i, x := range rewards {
		if err := checkReward(float64(x)); err != nil {
			return GroupReport[ID]{}, fmt.Errorf("advantage: rewards[%d] = %v (group %v): %w", i, x, ids[i], err)
		}
	}
	if len(dst) != len(rewards) {
		panic(fmt.Sprintf("advantage: len(dst) = %d, want len(rewards) = %d", len(dst), len(rewards)))
	}

	// Pass 1: number the groups in order of first appearance, and take the
	// first-pass mean m0 of each.
	type stats struct {
		raw, dev meanAcc
		m0, c    float64 // first-pass mean, and mean deviation from it
		scale    float64 // max |r - m| in the group
		ss       float64 // sum of ((r - m)/scale)^2
		den      float64 // (std + Epsilon)/scale, for ScaleByStd
	}
	number := make(map[ID]int)
	group := make([]int, len(rewards))
	var gs []stats
	var rep GroupReport[ID]
	var order []ID
	for i, id := range ids {
		g, ok := number[id]
		if !ok {
			g = len(gs)
			number[id] = g
			gs = append(gs, stats{})
			order = append(order, id)
		}
		group[i] = g
		gs[g].raw.add(float64(rewards[i]))
	}
	for g := range gs {
		gs[g].m0 = gs[g].raw.mean()
	}
	// Pass 2: the mean deviation c, so that r - m = (r - m0) - c.
	for i, x := range rewards {
		st := &gs[group[i]]
		st.dev.add(float64(x) - st.m0)
	}
	for g := range gs {
		gs[g].c = gs[g].dev.mean()
	}
	centred := func(i int) float64 {
		st := &gs[group[i]]
		return (float64(rewards[i]) - st.m0) - st.c
	}
	// Passes 3 and 4: the scaled sum of squares of the centred rewards.
	if opt.ScaleByStd {
		for i := range rewards {
			st := &gs[group[i]]
			st.scale = max(st.scale, math.Abs(centred(i)))
		}
		for i := range rewards {
			if st := &gs[group[i]]; st.scale > 0 {
				e := centred(i) / st.scale
				st.ss += e * e
			}
		}
		// std + Epsilon with std = scale*sqrt(ss/dof), divided through by
		// scale: scale*sqrt(ss/dof) underflows to 0 for a subnormal scale
		// (rewards {0 x 9, 5e-324}), which gave 0/0. den is at least
		// sqrt(1/dof), and Epsilon/scale may be +Inf (advantages ±0).
		for g := range gs {
			st := &gs[g]
			dof := float64(st.raw.n)
			if opt.Bessel {
				dof--
			}
			if dof > 0 && st.scale > 0 {
				st.den = math.Sqrt(st.ss/dof) + opt.Epsilon/st.scale
			}
		}
	}

	rep.Groups = len(gs)
	for g, id := range order {
		switch st := &gs[g]; {
		case st.raw.n == 1:
			rep.Singletons = append(rep.Singletons, id)
		case !st.raw.mixed:
			rep.ZeroVariance = append(rep.ZeroVariance, id)
		}
	}

	// Pass 5: write the advantages.
	for i := range rewards {
		st := &gs[group[i]]
		n := st.raw.n
		// scale == 0 would mean every centred reward is 0 although the
		// rewards differ; it guards the division, not a known case.
		if n == 1 || !st.raw.mixed || st.scale == 0 && opt.ScaleByStd {
			dst[i] = 0
			continue
		}
		a := centred(i)
		if opt.LeaveOneOut {
			a *= float64(n) / float64(n-1)
		}
		if opt.ScaleByStd {
			a = (a / st.scale) / st.den // a/scale is in [-2, 2]
		}
		dst[i] = F(a)
	}
	return rep, nil
}
