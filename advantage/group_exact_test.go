package advantage

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"spiral/internal/spiraltest"
)

// ulpBound is GroupRelative's promise: every advantage within 4 units in the
// last place of its exact value.
const ulpBound = 4

// exactPrec is the precision of the reference's square root and quotient,
// far beyond float64's 53 bits.
const exactPrec = 400

// exactAdvantage returns the exact advantage of a reward whose deviation
// from its group's mean is dev, for a standard deviation sqrt(ss/dof)
// (ss = 0 and dof = 0 without a Scale) and opt's Epsilon and LeaveOneOut,
// rounded to exactPrec bits only in the square root and the quotient.
func exactAdvantage(dev, ss *big.Rat, dof int, n int, opt GroupOptions) *big.Float {
	a := new(big.Float).SetPrec(exactPrec).SetRat(dev)
	if opt.LeaveOneOut {
		a.Mul(a, new(big.Float).SetPrec(exactPrec).SetRat(big.NewRat(int64(n), int64(n-1))))
	}
	if opt.Scale == ScaleNone {
		return a
	}
	v := new(big.Float).SetPrec(exactPrec).SetRat(new(big.Rat).Quo(ss, big.NewRat(int64(dof), 1)))
	s := new(big.Float).SetPrec(exactPrec).Sqrt(v)
	s.Add(s, new(big.Float).SetPrec(exactPrec).SetFloat64(opt.Epsilon))
	return a.Quo(a, s)
}

// ulpsOff returns |got - exact| in units in the last place of exact rounded
// to float64 (the spacing above it; 2^-1074 for subnormals), and +Inf when
// exact is 0 and got is not.
func ulpsOff(got float64, exact *big.Float) float64 {
	e, _ := exact.Float64()
	if exact.Sign() == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	ulp := math.Nextafter(math.Abs(e), math.Inf(1)) - math.Abs(e)
	d := new(big.Float).SetPrec(exactPrec).SetFloat64(got)
	d.Sub(d, exact).Abs(d)
	q, _ := d.Quo(d, new(big.Float).SetPrec(exactPrec).SetFloat64(ulp)).Float64()
	return q
}

// exactGroups computes every row's exact advantage with big.Rat sums (one
// group per id, NaN rows unscorable), for the modes whose groups have at
// least two distinct scored rewards; other rows are exactly 0.
func exactGroups(rewards []float64, ids []int, opt GroupOptions) []*big.Float {
	type acc struct {
		sum  big.Rat
		n    int
		vals []*big.Rat
	}
	groups := map[int]*acc{}
	var batch acc
	rats := make([]*big.Rat, len(rewards))
	for i, x := range rewards {
		if math.IsNaN(x) {
			continue
		}
		rats[i] = new(big.Rat).SetFloat64(x)
		g := groups[ids[i]]
		if g == nil {
			g = &acc{}
			groups[ids[i]] = g
		}
		g.sum.Add(&g.sum, rats[i])
		g.n++
		g.vals = append(g.vals, rats[i])
		batch.sum.Add(&batch.sum, rats[i])
		batch.n++
		batch.vals = append(batch.vals, rats[i])
	}
	spread := func(a *acc) (mean, ss *big.Rat, dof int) {
		mean = new(big.Rat).Quo(&a.sum, big.NewRat(int64(a.n), 1))
		ss = new(big.Rat)
		for _, v := range a.vals {
			d := new(big.Rat).Sub(v, mean)
			ss.Add(ss, d.Mul(d, d))
		}
		dof = a.n
		if opt.Bessel {
			dof--
		}
		return mean, ss, dof
	}
	var bss *big.Rat
	var bdof int
	if opt.Scale == ScaleBatch && batch.n > 0 {
		_, bss, bdof = spread(&batch)
	}
	type spreadOf struct {
		mean, ss *big.Rat
		dof      int
	}
	spreads := map[*acc]spreadOf{} // each group's spread, computed once
	out := make([]*big.Float, len(rewards))
	for i := range rewards {
		out[i] = new(big.Float)
		g := groups[ids[i]]
		if rats[i] == nil || g.n < 2 {
			continue
		}
		sp, ok := spreads[g]
		if !ok {
			sp.mean, sp.ss, sp.dof = spread(g)
			spreads[g] = sp
		}
		mean, ss, dof := sp.mean, sp.ss, sp.dof
		if ss.Sign() == 0 {
			continue
		}
		if opt.Scale == ScaleBatch {
			ss, dof = bss, bdof
		}
		out[i] = exactAdvantage(new(big.Rat).Sub(rats[i], mean), ss, dof, g.n, opt)
	}
	return out
}

// scaledOptions are the std-dividing presets and the plain variants.
func scaledOptions() []GroupOptions {
	var opts []GroupOptions
	for _, p := range []Preset{VerlGRPO, TRLGRPO, TRLGRPOBatch, OpenRLHFGRPO} {
		o, _ := p.Options()
		o.Clip = Range{} // OpenRLHF's clip would cut the exact value
		opts = append(opts, o)
	}
	return append(opts, GroupOptions{Scale: ScaleGroup}, GroupOptions{Scale: ScaleGroup, LeaveOneOut: true, Bessel: true})
}

// TestGroupStdOneRightExact: groups of G 0/1 rewards with k right answers
// (k = 1, G/2, G-1), for every G from 2 to 200 and sampled sizes to 4096
// (every size with SPIRAL_LONG=1), give every std-dividing preset's
// advantages within ulpBound of the closed form: mean k/G, deviations
// (G-k)/G and -k/G, sum of squares k(G-k)/G. The sum of squares added
// without compensation was 28, 48 and 511 units off at G = 128, 256 and
// 2048 with one right answer.
func TestGroupStdOneRightExact(t *testing.T) {
	var sizes []int
	for g := 2; g <= 4096; g++ {
		if g <= 200 || g%7 == 0 && g <= 600 || spiraltest.Long() || g&(g-1) == 0 || g%509 == 0 || g == 4095 {
			sizes = append(sizes, g)
		}
	}
	worst := 0.0
	for _, opt := range scaledOptions() {
		for _, g := range sizes {
			rewards, ids, dst := make([]float64, g), make([]int, g), make([]float64, g)
			for _, k := range []int{1, g / 2, g - 1} {
				for i := range rewards {
					rewards[i] = 0
					if i < k {
						rewards[i] = 1
					}
				}
				if _, err := GroupRelative(dst, rewards, ids, opt); err != nil {
					t.Fatal(err)
				}
				dof := g
				if opt.Bessel {
					dof--
				}
				ss := big.NewRat(int64(k)*int64(g-k), int64(g))
				right := exactAdvantage(big.NewRat(int64(g-k), int64(g)), ss, dof, g, opt)
				wrong := exactAdvantage(big.NewRat(-int64(k), int64(g)), ss, dof, g, opt)
				seen := map[[2]float64]float64{} // (value, right) -> units off
				for i, a := range dst {
					want, key := wrong, [2]float64{a, 0}
					if i < k {
						want, key = right, [2]float64{a, 1}
					}
					u, ok := seen[key]
					if !ok {
						u = ulpsOff(a, want)
						seen[key] = u
					}
					worst = max(worst, u)
					if u > ulpBound {
						t.Fatalf("%+v, G = %d, k = %d: row %d = %v, exact %s: %.1f units off", opt, g, k, i, a, want.Text('g', 20), u)
					}
				}
			}
		}
	}
	t.Logf("largest error: %.2f units in the last place", worst)
}

// TestGroupStdMaxSize: the largest group GroupRelative takes, combin.MaxSize
// rows with one right answer, within ulpBound (SPIRAL_LONG=1: it needs
// about 600 MB).
func TestGroupStdMaxSize(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	g := maxGroupRows
	rewards, ids, dst := make([]float64, g), make([]int32, g), make([]float64, g)
	rewards[0] = 1
	opt, _ := VerlGRPO.Options()
	if _, err := GroupRelative(dst, rewards, ids, opt); err != nil {
		t.Fatal(err)
	}
	ss := big.NewRat(int64(g-1), int64(g))
	for i, want := range []*big.Float{
		exactAdvantage(big.NewRat(int64(g-1), int64(g)), ss, g-1, g, opt),
		exactAdvantage(big.NewRat(-1, int64(g)), ss, g-1, g, opt),
	} {
		if u := ulpsOff(dst[i], want); u > ulpBound {
			t.Errorf("row %d = %v, exact %s: %.1f units off", i, dst[i], want.Text('g', 20), u)
		}
	}
}

// TestGroupSubnormalExact: rewards {0, 5e-324} give exactly [-1, 1] with a
// population std (and ±1/sqrt 2 to one unit with Bessel's), where the mean
// 2.5e-324 is not a float64; it was [0, 1.414].
func TestGroupSubnormalExact(t *testing.T) {
	for _, tc := range []struct {
		opt  GroupOptions
		want []float64
	}{
		{GroupOptions{Scale: ScaleGroup}, []float64{-1, 1}},
		{GroupOptions{Scale: ScaleBatch}, []float64{-1, 1}},
		{GroupOptions{Scale: ScaleGroup, Bessel: true}, []float64{-math.Sqrt2 / 2, math.Sqrt2 / 2}},
	} {
		got := make([]float64, 2)
		if _, err := GroupRelative(got, []float64{0, 5e-324}, []int{0, 0}, tc.opt); err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-tc.want[0]) > 0x1p-53 || math.Abs(got[1]-tc.want[1]) > 0x1p-53 || tc.want[1] == 1 && got[1] != 1 {
			t.Errorf("%+v: %v, want %v", tc.opt, got, tc.want)
		}
	}
}

// TestGroupExactRapid: random batches of a few groups, with rewards of
// mixed magnitudes (subnormal to 1e30, a large offset shared by a group,
// 0/1, NaN rows under NaNUnscorable), in every mode, give every advantage
// within ulpBound of its exact value (big.Rat sums, a 400-bit square root):
// 40 batches, 100 with SPIRAL_LONG=1.
func TestGroupExactRapid(t *testing.T) {
	spiraltest.Check(t, 40, 100, func(t *rapid.T) {
		opt := GroupOptions{
			Scale:         Scale(rapid.IntRange(0, 2).Draw(t, "scale")),
			Bessel:        rapid.Bool().Draw(t, "bessel"),
			LeaveOneOut:   rapid.Bool().Draw(t, "rloo"),
			Epsilon:       rapid.SampledFrom([]float64{0, 1e-9, 1e-6, 1e-4, 0.5}).Draw(t, "epsilon"),
			NaNUnscorable: true,
		}
		n := rapid.IntRange(1, 48).Draw(t, "rows")
		groups := rapid.IntRange(1, 4).Draw(t, "groups")
		offsets := make([]float64, groups)
		scales := make([]float64, groups)
		for g := range groups {
			offsets[g] = rapid.SampledFrom([]float64{0, 0, 1, -3, 1e15, 1e25}).Draw(t, fmt.Sprint("offset", g))
			scales[g] = math.Ldexp(1, rapid.IntRange(-1074, 90).Draw(t, fmt.Sprint("exponent", g)))
		}
		rewards, ids := make([]float64, n), make([]int, n)
		for i := range rewards {
			g := rapid.IntRange(0, groups-1).Draw(t, "id")
			ids[i] = g
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0:
				rewards[i] = math.NaN()
			case 1, 2:
				rewards[i] = float64(rapid.IntRange(0, 1).Draw(t, "bit"))
			default:
				x := offsets[g] + scales[g]*rapid.Float64Range(-1, 1).Draw(t, "x")
				if math.Abs(x) > MaxAbsReward {
					x = 0
				}
				rewards[i] = x
			}
		}
		dst := make([]float64, n)
		if _, err := GroupRelative(dst, rewards, ids, opt); err != nil {
			t.Fatal(err)
		}
		for i, want := range exactGroups(rewards, ids, opt) {
			if u := ulpsOff(dst[i], want); u > ulpBound {
				t.Fatalf("%+v: row %d (reward %v, group %d) = %v, exact %s: %.1f units off\nrewards %v\nids %v",
					opt, i, rewards[i], ids[i], dst[i], want.Text('g', 20), u, rewards, ids)
			}
		}
	})
}

// TestNoFusedMultiplyAdd: no architecture's compiler fuses a product into
// an addition anywhere in the package (GroupRelative's sum of squares
// included); only the explicit math.FMA calls remain.
func TestNoFusedMultiplyAdd(t *testing.T) { spiraltest.NoFusedMultiplyAdd(t, "spiral/advantage") }

// TestGroupUnhashableIDs: ids of an interface type holding a slice (or a
// struct holding one) are an *InputError naming "ids" and the row, before
// anything is written; comparable dynamic values group as usual.
func TestGroupUnhashableIDs(t *testing.T) {
	type key struct{ v any }
	dst := []float64{7, 7, 7}
	_, err := GroupRelative(dst, []float64{0, 1, 1}, []any{"a", "a", []int{1}}, GroupOptions{})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "ids" || ie.Output != 2 {
		t.Fatalf("slice id: %v, want an *InputError for ids row 2", err)
	}
	if dst[0] != 7 {
		t.Errorf("dst written before the error: %v", dst)
	}
	if _, err := GroupRelative(dst, []float64{0, 1, 1}, []key{{1}, {map[int]int{}}, {1}}, GroupOptions{}); !errors.As(err, &ie) || ie.Output != 1 {
		t.Fatalf("struct holding a map: %v, want an *InputError for ids row 1", err)
	}
	rep, err := GroupRelative(dst, []float64{0, 1, 1}, []any{"a", "a", 3}, GroupOptions{})
	if err != nil || rep.Groups != 2 || dst[0] != -0.5 || dst[1] != 0.5 || dst[2] != 0 {
		t.Fatalf("comparable ids: %v %+v %v", err, rep, dst)
	}
}
