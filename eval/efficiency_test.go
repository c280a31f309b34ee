package eval_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/eval"
)

// geomCoverage is the coverage at width k of a model whose samples are
// correct independently with probability p: 1 - (1-p)^k.
func geomCoverage(p float64, k int) float64 {
	return -math.Expm1(float64(k) * math.Log1p(-p))
}

// geomCurve returns geomCoverage(p, m*k) for every k in ks.
func geomCurve(p float64, m int, ks []int) []float64 {
	y := make([]float64, len(ks))
	for i, k := range ks {
		y[i] = geomCoverage(p, m*k)
	}
	return y
}

// widths returns the grid lo, lo+1, ..., hi.
func widths(lo, hi int) []int {
	ks := make([]int, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		ks = append(ks, k)
	}
	return ks
}

// powersOfTwo returns the grid 1, 2, 4, ..., 2^e.
func powersOfTwo(e int) []int {
	ks := make([]int, e+1)
	for i := range ks {
		ks[i] = 1 << i
	}
	return ks
}

// geomEfficiencyTol bounds the relative error of the interpolated
// efficiency for the closed-form method curve B(k) = 1 - exp(-lambda k),
// lambda = -log(1-p_B), when k_B falls in the grid segment [k0, k1].
//
// In u = log k, g(u) = B(e^u) has first derivative g1 = s e^-s and second
// derivative g2 = s e^-s (1-s), with s = lambda k. Linear interpolation on
// a segment of width h = log(k1/k0) is within h^2/8 max|g2| of g, and the interpolant and g cross the target
// in the same segment (they agree at the grid points and both increase),
// so the interpolated log k_B is within (h^2/8 max|g2| + e)/min g1 of the
// true one, e = 1e-15 covering the rounding of the curve values; the
// efficiency is off by the factor exp of that, plus 1e-14 for the
// arithmetic of the interpolation. On [s0, s1], s e^-s is unimodal with its
// maximum 1/e at s = 1, so its minimum is at an end, and |1-s| is largest
// at an end; the bound multiplies the two maxima.
func geomEfficiencyTol(pB float64, k0, k1 int) float64 {
	lambda := -math.Log1p(-pB)
	s0, s1 := lambda*float64(k0), lambda*float64(k1)
	f := func(s float64) float64 { return s * math.Exp(-s) }
	maxF := max(f(s0), f(s1))
	if s0 <= 1 && 1 <= s1 {
		maxF = 1 / math.E
	}
	maxG2 := maxF * max(math.Abs(1-s0), math.Abs(1-s1))
	minG1 := min(f(s0), f(s1))
	h := math.Log(float64(k1) / float64(k0))
	du := (h*h/8*maxG2 + 1e-15) / minG1
	return math.Expm1(du) + 1e-14
}

// TestScalingEfficiencyClosedForm checks the efficiency of p_B over p_A on
// closed-form curves against its exact value log(1-p_B)/log(1-p_A), within
// the interpolation bound of geomEfficiencyTol, on a fine grid
// (k = 1..256) and a coarse one (powers of two), and checks each point's
// status against the definition.
func TestScalingEfficiencyClosedForm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pA, pB float64
		ks     []int
		maxTol float64 // the derived tolerance must be at least this tight
	}{
		{"fine", 0.01, 0.05, widths(1, 256), 2e-3},
		{"fine-close", 0.02, 0.03, widths(1, 256), 2e-3},
		{"coarse", 0.01, 0.05, powersOfTwo(8), 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			A, B := geomCurve(tc.pA, 1, tc.ks), geomCurve(tc.pB, 1, tc.ks)
			res, err := eval.ScalingEfficiency(tc.ks, A, B)
			if err != nil {
				t.Fatal(err)
			}
			exact := math.Log1p(-tc.pB) / math.Log1p(-tc.pA)
			reached, worst := 0, 0.0
			for i, pt := range res.Points {
				if pt.KA != tc.ks[i] || pt.Coverage != A[i] {
					t.Fatalf("point %d: KA %d coverage %v, want %d %v", i, pt.KA, pt.Coverage, tc.ks[i], A[i])
				}
				var want eval.EfficiencyStatus
				switch y := A[i]; {
				case y >= 1 || (i > 0 && y == A[i-1]):
					want = eval.EfficiencySaturated
				case y <= B[0]:
					want = eval.EfficiencyLowerBound
				case y > B[len(B)-1]:
					want = eval.EfficiencyUnreached
				default:
					want = eval.EfficiencyReached
				}
				if pt.Status != want {
					t.Fatalf("k_A = %d: status %v, want %v", pt.KA, pt.Status, want)
				}
				switch pt.Status {
				case eval.EfficiencyLowerBound:
					if pt.KB != float64(tc.ks[0]) || pt.Efficiency != float64(pt.KA)/float64(tc.ks[0]) {
						t.Errorf("k_A = %d: lower bound KB %v efficiency %v", pt.KA, pt.KB, pt.Efficiency)
					}
				case eval.EfficiencyReached:
					reached++
					j := 1
					for B[j] < A[i] {
						j++
					}
					tol := geomEfficiencyTol(tc.pB, tc.ks[j-1], tc.ks[j])
					if tc.ks[j-1] >= 8 && tol > tc.maxTol {
						t.Fatalf("k_A = %d: derived tolerance %g (k_B in [%d, %d]) is looser than %g", pt.KA, tol, tc.ks[j-1], tc.ks[j], tc.maxTol)
					}
					rel := math.Abs(pt.Efficiency/exact - 1)
					if rel > tol {
						t.Errorf("k_A = %d: efficiency %v, exact %v: relative error %.3g > %.3g", pt.KA, pt.Efficiency, exact, rel, tol)
					}
					worst = max(worst, rel/tol)
				default:
					if !math.IsNaN(pt.KB) || !math.IsNaN(pt.Efficiency) {
						t.Errorf("k_A = %d, status %v: KB %v efficiency %v, want NaN", pt.KA, pt.Status, pt.KB, pt.Efficiency)
					}
				}
			}
			if reached < 5 {
				t.Fatalf("only %d reached points", reached)
			}
			// The maximum is one of the points checked above, so within its
			// own tolerance; it sits where k_B is small and the grid coarse
			// in log k, where interpolation overstates the efficiency most.
			if res.MaxIndex < 0 || res.Points[res.MaxIndex].Efficiency != res.Max {
				t.Errorf("max %v at index %d", res.Max, res.MaxIndex)
			}
			t.Logf("%d reached points; exact efficiency %.6f, max %.6f at k_A = %d; worst error/tolerance %.3f", reached, exact, res.Max, res.MaxKA, worst)
		})
	}
}

// TestScalingEfficiencyExactOnGrid checks cases where the interpolation is
// exact. With B(k) = A(m k) (per-sample success 1 - (1-p_A)^m, efficiency
// exactly m), every target A(k_A) with k_A = m q, q a grid width, is a grid
// value of B, so k_B = q and the efficiency is m to the last bit.
func TestScalingEfficiencyExactOnGrid(t *testing.T) {
	for _, tc := range []struct {
		ks []int
		m  int
	}{{powersOfTwo(9), 4}, {widths(1, 300), 3}, {widths(1, 300), 7}} {
		A, B := geomCurve(0.004, 1, tc.ks), geomCurve(0.004, tc.m, tc.ks)
		res, err := eval.ScalingEfficiency(tc.ks, A, B)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, pt := range res.Points {
			if pt.KA%tc.m != 0 || !slices.Contains(tc.ks, pt.KA/tc.m) {
				continue
			}
			want := eval.EfficiencyReached
			if pt.KA/tc.m == tc.ks[0] {
				want = eval.EfficiencyLowerBound
			}
			if pt.Status != want || pt.KB != float64(pt.KA/tc.m) || pt.Efficiency != float64(tc.m) {
				t.Errorf("m = %d, k_A = %d: %v KB %v efficiency %v, want %v KB %d efficiency %d",
					tc.m, pt.KA, pt.Status, pt.KB, pt.Efficiency, want, pt.KA/tc.m, tc.m)
			}
			checked++
		}
		if checked < 8 {
			t.Errorf("m = %d: only %d points checked", tc.m, checked)
		}
		// On the powers of two every reached point is exact, so is the
		// maximum; on the other grids the points in between are not.
		if tc.ks[1] == 2*tc.ks[0] && tc.ks[2] == 4*tc.ks[0] && res.Max != float64(tc.m) {
			t.Errorf("m = %d: max %v", tc.m, res.Max)
		}
	}
}

// TestScalingEfficiencyLinearInLogK checks a method curve that is linear in
// log k, where interpolation in log k is exact everywhere, also between grid
// points: B(k) = 0.05 + 0.1 log2 k and A(k) = B(k/3) (clamped at 0), so
// k_B = k_A/3 at every k_A where A exceeds B(1), and the efficiency is 3 up
// to rounding.
func TestScalingEfficiencyLinearInLogK(t *testing.T) {
	ks := widths(1, 256)
	A, B := make([]float64, len(ks)), make([]float64, len(ks))
	for i, k := range ks {
		B[i] = 0.05 + 0.1*math.Log2(float64(k))
		A[i] = max(0, 0.05+0.1*math.Log2(float64(k)/3))
	}
	res, err := eval.ScalingEfficiency(ks, A, B)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range res.Points {
		switch {
		case pt.KA < 3:
			// A(1) = A(2) = 0: the first is a lower bound (k_B = 1), the
			// second a plateau.
			if pt.KA == 1 && pt.Status != eval.EfficiencyLowerBound || pt.KA == 2 && pt.Status != eval.EfficiencySaturated {
				t.Errorf("k_A = %d: status %v", pt.KA, pt.Status)
			}
		case pt.Status == eval.EfficiencyReached:
			if math.Abs(pt.Efficiency/3-1) > 1e-12 {
				t.Errorf("k_A = %d: efficiency %v, want 3", pt.KA, pt.Efficiency)
			}
		case pt.KA == 3 && pt.Status == eval.EfficiencyLowerBound:
			// A(3) = 0.05 = B(1) up to rounding.
		default:
			t.Errorf("k_A = %d: status %v", pt.KA, pt.Status)
		}
	}
	if math.Abs(res.Max/3-1) > 1e-12 {
		t.Errorf("max %v, want 3", res.Max)
	}
}

// TestScalingEfficiencyStatuses checks a hand-built case with every
// status, its interpolated widths computed by hand, and the maximum.
func TestScalingEfficiencyStatuses(t *testing.T) {
	ks := []int{1, 2, 4, 8, 16, 32}
	A := []float64{0.1, 0.2, 0.4, 0.4, 0.9, 1}
	B := []float64{0.15, 0.3, 0.35, 0.5, 0.6, 0.7}
	res, err := eval.ScalingEfficiency(ks, A, B)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := []eval.EfficiencyPoint{
		// 0.1 <= B(1): k_B = 1.
		{KA: 1, Coverage: 0.1, KB: 1, Efficiency: 1, Status: eval.EfficiencyLowerBound},
		// 0.2 is a third of the way from B(1) = 0.15 to B(2) = 0.3: k_B = 2^(1/3).
		{KA: 2, Coverage: 0.2, KB: math.Cbrt(2), Efficiency: 2 / math.Cbrt(2), Status: eval.EfficiencyReached},
		// 0.4 is a third of the way from B(4) = 0.35 to B(8) = 0.5: k_B = 4 * 2^(1/3).
		{KA: 4, Coverage: 0.4, KB: 4 * math.Cbrt(2), Efficiency: 1 / math.Cbrt(2), Status: eval.EfficiencyReached},
		{KA: 8, Coverage: 0.4, KB: nan, Efficiency: nan, Status: eval.EfficiencySaturated},
		{KA: 16, Coverage: 0.9, KB: nan, Efficiency: nan, Status: eval.EfficiencyUnreached},
		{KA: 32, Coverage: 1, KB: nan, Efficiency: nan, Status: eval.EfficiencySaturated},
	}
	close := func(a, b float64) bool {
		return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-14*math.Abs(b)
	}
	for i, w := range want {
		g := res.Points[i]
		if g.KA != w.KA || g.Coverage != w.Coverage || g.Status != w.Status || !close(g.KB, w.KB) || !close(g.Efficiency, w.Efficiency) {
			t.Errorf("point %d: %+v, want %+v", i, g, w)
		}
	}
	if res.MaxIndex != 1 || res.MaxKA != 2 || !close(res.Max, 2/math.Cbrt(2)) {
		t.Errorf("max %v at k_A = %d (index %d), want %v at 2 (index 1)", res.Max, res.MaxKA, res.MaxIndex, 2/math.Cbrt(2))
	}
	for s, name := range map[eval.EfficiencyStatus]string{
		eval.EfficiencyReached: "reached", eval.EfficiencyLowerBound: "lower bound",
		eval.EfficiencyUnreached: "unreached", eval.EfficiencySaturated: "saturated",
		eval.EfficiencyStatus(0): "EfficiencyStatus(0)",
	} {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), name)
		}
	}

	// No reached point: the maximum is NaN at index -1.
	none, err := eval.ScalingEfficiency([]int{1, 2}, []float64{0.5, 0.9}, []float64{0.6, 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if none.MaxIndex != -1 || none.MaxKA != 0 || !math.IsNaN(none.Max) ||
		none.Points[0].Status != eval.EfficiencyLowerBound || none.Points[1].Status != eval.EfficiencyUnreached {
		t.Errorf("no reached point: %+v", none)
	}
}

// TestScalingEfficiencyProperties checks, on random nondecreasing curves,
// the definition point by point: a reached k_B lies in the grid segment
// where the method first reaches the target and the method's log-k
// interpolant equals the target there; statuses follow their definitions;
// the maximum is the largest reached efficiency; and a curve compared with
// itself has efficiency exactly 1 wherever it is reached.
func TestScalingEfficiencyProperties(t *testing.T) {
	curve := func(t *rapid.T, name string, m int) []float64 {
		y := make([]float64, m)
		v := 0.0
		for i := range y {
			if rapid.IntRange(0, 3).Draw(t, name+"Flat") > 0 {
				v = min(1, v+rapid.Float64Range(0, 0.3).Draw(t, name+"Step"))
			}
			y[i] = v
		}
		return y
	}
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.IntRange(1, 20).Draw(t, "m")
		ks := make([]int, m)
		k := 0
		for i := range ks {
			k += rapid.IntRange(1, 10).Draw(t, "dk")
			ks[i] = k
		}
		A, B := curve(t, "A", m), curve(t, "B", m)
		res, err := eval.ScalingEfficiency(ks, A, B)
		if err != nil {
			t.Fatal(err)
		}
		best := -1
		for i, pt := range res.Points {
			y := A[i]
			switch pt.Status {
			case eval.EfficiencySaturated:
				if !(y == 1 || i > 0 && y == A[i-1]) {
					t.Fatalf("point %d saturated with A = %v after %v", i, y, A)
				}
				continue
			case eval.EfficiencyLowerBound:
				if B[0] < y {
					t.Fatalf("point %d: lower bound but B(k_1) = %v < %v", i, B[0], y)
				}
			case eval.EfficiencyUnreached:
				if B[m-1] >= y {
					t.Fatalf("point %d: unreached but B(k_m) = %v >= %v", i, B[m-1], y)
				}
			case eval.EfficiencyReached:
				j := slices.IndexFunc(B, func(b float64) bool { return b >= y })
				if j < 1 || pt.KB < float64(ks[j-1]) || pt.KB > float64(ks[j]) {
					t.Fatalf("point %d: KB = %v outside segment %d of %v (target %v, B %v)", i, pt.KB, j, ks, y, B)
				}
				u := (math.Log(pt.KB) - math.Log(float64(ks[j-1]))) / math.Log(float64(ks[j])/float64(ks[j-1]))
				if b := B[j-1] + u*(B[j]-B[j-1]); math.Abs(b-y) > 1e-12 {
					t.Fatalf("point %d: interpolated B(KB = %v) = %v, target %v", i, pt.KB, b, y)
				}
				if pt.Efficiency != float64(pt.KA)/pt.KB {
					t.Fatalf("point %d: efficiency %v != KA/KB = %v", i, pt.Efficiency, float64(pt.KA)/pt.KB)
				}
				if best < 0 || pt.Efficiency > res.Points[best].Efficiency {
					best = i
				}
			default:
				t.Fatalf("point %d: status %v", i, pt.Status)
			}
			if y == 1 || i > 0 && y == A[i-1] {
				t.Fatalf("point %d: status %v but the baseline is saturated", i, pt.Status)
			}
		}
		if res.MaxIndex != best {
			t.Fatalf("MaxIndex %d, want %d", res.MaxIndex, best)
		}
		self, err := eval.ScalingEfficiency(ks, A, A)
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range self.Points {
			if pt.Status == eval.EfficiencyReached && pt.Efficiency != 1 {
				t.Fatalf("self-comparison at k_A = %d: efficiency %v", pt.KA, pt.Efficiency)
			}
			if pt.Status == eval.EfficiencyUnreached {
				t.Fatalf("self-comparison at k_A = %d: unreached", pt.KA)
			}
		}
	})
}

// TestScalingEfficiencyErrors checks that bad curves are rejected with an
// error naming the value.
func TestScalingEfficiencyErrors(t *testing.T) {
	ks := []int{1, 2, 4}
	ok := []float64{0.1, 0.2, 0.3}
	for _, tc := range []struct {
		ks   []int
		a, b []float64
		want string
	}{
		{nil, nil, nil, "empty grid"},
		{[]int{0, 1, 2}, ok, ok, "ks[0] = 0: a width < 1"},
		{[]int{1, 2, 2}, ok, ok, "ks[2] = 2: not above the width 2 before it"},
		{[]int{1, 4, 2}, ok, ok, "ks[2] = 2: not above the width 4 before it"},
		{ks, ok[:2], ok, "baseline: len = 2 != len(ks) = 3"},
		{ks, ok, nil, "method: len = 0 != len(ks) = 3"},
		{ks, []float64{0.1, math.NaN(), 0.3}, ok, "baseline[1] = NaN"},
		{ks, ok, []float64{0.1, 0.2, math.Inf(1)}, "method[2] = +Inf"},
		{ks, []float64{-0.1, 0.2, 0.3}, ok, "baseline[0] = -0.1"},
		{ks, ok, []float64{0.1, 0.2, 1.5}, "method[2] = 1.5: not a coverage in [0, 1] (at k = 4)"},
		{ks, []float64{0.1, 0.3, 0.2}, ok, "baseline[2] = 0.2: below the coverage 0.3 before it: coverage must be nondecreasing in k (k = 4 after k = 2)"},
		{ks, ok, []float64{0.5, 0.4, 0.6}, "method[1] = 0.4: below the coverage 0.5"},
	} {
		if _, err := eval.ScalingEfficiency(tc.ks, tc.a, tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ScalingEfficiency(%v, %v, %v): error %v, want one containing %q", tc.ks, tc.a, tc.b, err, tc.want)
		}
	}
}

// TestScalingEfficiencyLongGrid compares a curve of 2^17 grid points with
// itself: every point is reached at its own width, efficiency exactly 1.
// Each k_B is found by bisection, so the grid costs O(m log m); a scan from
// the start of the grid for every point took O(m^2), 2^33 steps here.
func TestScalingEfficiencyLongGrid(t *testing.T) {
	const m = 1 << 17
	ks := widths(1, m)
	y := make([]float64, m)
	for i := range y {
		y[i] = float64(i+1) / (m + 1)
	}
	res, err := eval.ScalingEfficiency(ks, y, y)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range res.Points[1:] {
		if p.Status != eval.EfficiencyReached || p.KB != float64(ks[i+1]) || p.Efficiency != 1 {
			t.Fatalf("point %d: %+v, want reached at its own width", i+1, p)
		}
	}
}
