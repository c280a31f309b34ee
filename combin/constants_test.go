package combin

import (
	"math"
	"math/big"
	"testing"
)

// coverageByEnumeration lists every K-selection of the small family f and
// returns the exact miss probability of index 0 and the expected number of
// covered traces, over the selections that keep(counts) accepts (counts[v]
// is the number of sets holding v), each equally likely; and the number of
// selections accepted.
func coverageByEnumeration(f Family, K int, keep func(counts []int) bool) (miss, covered *big.Rat, selections int64) {
	sets := collect(f)
	choice, _ := Subsets(len(sets), K)
	counts := make([]int, f.Traces())
	var missed, cover int64
	for c := range choice.All() {
		clear(counts)
		for _, i := range c {
			for _, v := range sets[i] {
				counts[v]++
			}
		}
		if !keep(counts) {
			continue
		}
		selections++
		if counts[0] == 0 {
			missed++
		}
		for _, x := range counts {
			if x > 0 {
				cover++
			}
		}
	}
	if selections == 0 {
		return nil, nil, 0
	}
	return big.NewRat(missed, selections), big.NewRat(cover, selections), selections
}

func checkConstantsExact(t *testing.T, f Family, d Design, K int, c Constants, miss, covered *big.Rat) {
	t.Helper()
	n := big.NewRat(int64(f.SetSize()), 1)
	wantM := new(big.Rat).Quo(covered, n)
	wantM.Sub(wantM, big.NewRat(1, 1))
	wantCover := new(big.Rat).Sub(big.NewRat(1, 1), miss)
	if c.MissProb == nil || c.MissProb.Cmp(miss) != 0 || c.CoverProb.Cmp(wantCover) != 0 || c.M.Cmp(wantM) != 0 {
		t.Fatalf("%v.Constants(%v, %d) = %v, %v, %v; enumeration gives %v, %v, %v", f, d, K, c.MissProb, c.CoverProb, c.M, miss, wantCover, wantM)
	}
	for _, p := range []struct {
		x   *big.Rat
		got float64
	}{{miss, c.MissProbFloat}, {wantCover, c.CoverProbFloat}, {wantM, c.MFloat}} {
		if want, _ := p.x.Float64(); p.got != want {
			t.Fatalf("%v.Constants(%v, %d): float %v, want nearest float %v of %v", f, d, K, p.got, want, p.x)
		}
	}
}

// TestConstantsByEnumeration: for small families of both kinds and every K,
// the uniform constants equal the frequencies over all C(T, K) selections;
// M is checked through the expected number of covered traces, E|union|/n - 1,
// not through q_K.
func TestConstantsByEnumeration(t *testing.T) {
	for _, f := range []Family{
		mustFamily(t, false, 4, 2), mustFamily(t, false, 5, 2), mustFamily(t, false, 6, 3),
		mustFamily(t, false, 5, 1), mustFamily(t, false, 3, 3), mustFamily(t, true, 3, 2),
		mustFamily(t, true, 4, 2), mustFamily(t, true, 3, 1),
	} {
		T, _ := f.Count64()
		for K := 1; K <= int(T); K++ {
			c, err := f.Constants(Uniform, K)
			if err != nil {
				t.Fatal(err)
			}
			miss, covered, _ := coverageByEnumeration(f, K, func([]int) bool { return true })
			checkConstantsExact(t, f, Uniform, K, c, miss, covered)
		}
	}
}

// TestBalancedConstantsByEnumeration: every balanced K-selection of a small
// subset family (appearance counts r or r+1) covers min(N1, K n) traces, so
// the balanced constants hold for any distribution over balanced designs
// that is exchangeable, such as the BalancedSampler's; the miss probability
// of index 0 over all balanced selections equals the constant's.
func TestBalancedConstantsByEnumeration(t *testing.T) {
	for _, f := range []Family{
		mustFamily(t, false, 4, 2), mustFamily(t, false, 5, 2), mustFamily(t, false, 6, 3),
		mustFamily(t, false, 6, 2), mustFamily(t, false, 5, 1), mustFamily(t, false, 3, 3),
		mustFamily(t, false, 7, 3),
	} {
		T, _ := f.Count64()
		N1, n := f.Traces(), f.SetSize()
		for K := 1; K <= int(T); K++ {
			if T > 20 && K > 4 {
				break
			}
			c, err := f.Constants(Balanced, K)
			if err != nil {
				t.Fatal(err)
			}
			balanced := func(counts []int) bool {
				lo, hi := counts[0], counts[0]
				for _, x := range counts {
					lo, hi = min(lo, x), max(hi, x)
				}
				return hi-lo <= 1
			}
			miss, covered, sel := coverageByEnumeration(f, K, balanced)
			if sel == 0 {
				t.Fatalf("%v, K = %d: no balanced selection", f, K)
			}
			if want := big.NewRat(int64(min(N1, K*n)), 1); covered.Cmp(want) != 0 {
				t.Fatalf("%v, K = %d: balanced selections cover %v traces on average, want %v", f, K, covered, want)
			}
			checkConstantsExact(t, f, Balanced, K, c, miss, covered)
		}
	}
}

// TestConstantsPaper pins the paper's configuration.
func TestConstantsPaper(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	u, err := f.Constants(Uniform, 4)
	if err != nil {
		t.Fatal(err)
	}
	if u.M.Cmp(big.NewRat(1365, 1541)) != 0 || u.CoverProb.Cmp(big.NewRat(1453, 1541)) != 0 || u.MissProb.Cmp(big.NewRat(88, 1541)) != 0 {
		t.Errorf("uniform: %v, %v, %v", u.MissProb, u.CoverProb, u.M)
	}
	b, err := f.Constants(Balanced, 4)
	if err != nil {
		t.Fatal(err)
	}
	if b.M.Cmp(big.NewRat(1, 1)) != 0 || b.MissProb.Sign() != 0 || b.MFloat != 1 {
		t.Errorf("balanced: %v, %v, %v", b.MissProb, b.CoverProb, b.M)
	}
	if b, _ := f.Constants(Balanced, 1); b.M.Sign() != 0 || b.MissProb.Cmp(big.NewRat(1, 2)) != 0 {
		t.Errorf("balanced K = 1: %v, %v", b.MissProb, b.M)
	}
}

// TestConstantsFloatPath: beyond MaxExactBits the exact fields are nil and
// the floats agree with the exact values where those can still be computed
// another way (here K = 1 and K = 2 closed forms at large T), and stay in
// range.
func TestConstantsFloatPath(t *testing.T) {
	f := mustFamily(t, false, 64, 32)
	c, err := f.Constants(Uniform, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if c.MissProb != nil || c.CoverProb != nil || c.M != nil {
		t.Fatalf("exact fields set beyond MaxExactBits: %v", c)
	}
	// Each set holds a given trace with probability 1/2, so the miss
	// probability is about 2^-65536: 0 in float64, q_K = 1, M = 1.
	if c.MissProbFloat != 0 || c.CoverProbFloat != 1 || c.MFloat != 1 {
		t.Errorf("Subsets(64, 32), K = 2^16: %v, %v, %v", c.MissProbFloat, c.CoverProbFloat, c.MFloat)
	}
	// A float path answer against a 256-bit product of the K factors:
	// Subsets(2000, 3), K = 20000, is beyond the exact bound.
	g := mustFamily(t, false, 2000, 3)
	K := 20000
	c, err = g.Constants(Uniform, K)
	if err != nil {
		t.Fatal(err)
	}
	want := missProbBigFloat(g, K)
	if c.MissProb != nil || math.Abs(c.MissProbFloat-want) > 1e-12*want || math.Abs(c.CoverProbFloat-(1-want)) > 1e-12 {
		t.Errorf("%v, K = %d: %v, %v; 256-bit product %v", g, K, c.MissProbFloat, c.CoverProbFloat, want)
	}
	if wantM := float64(2000.0/3)*c.CoverProbFloat - 1; c.MFloat != wantM {
		t.Errorf("MFloat = %v, want %v", c.MFloat, wantM)
	}
}

// missProbBigFloat returns prod_{i<K} (T_avoid - i)/(T - i) computed with
// 256-bit floats, for T < 2^64.
func missProbBigFloat(f Family, K int) float64 {
	T, _ := f.Count64()
	A := T - (T - f.avoid64)
	p := new(big.Float).SetPrec(256).SetInt64(1)
	var num, den big.Float
	num.SetPrec(256)
	den.SetPrec(256)
	for i := range uint64(K) {
		if i >= A {
			return 0
		}
		num.SetUint64(A - i)
		den.SetUint64(T - i)
		p.Mul(p, num.Quo(&num, &den))
	}
	x, _ := p.Float64()
	return x
}

func TestConstantsErrors(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	tf := mustFamily(t, true, 8, 4)
	for name, err := range map[string]error{
		"K = 0":          second(f.Constants(Uniform, 0)),
		"K = -1":         second(f.Constants(Balanced, -1)),
		"K > T":          second(f.Constants(Uniform, 71)),
		"design":         second(f.Constants(Design(9), 4)),
		"balanced tuple": second(tf.Constants(Balanced, 4)),
		"zero family":    second(Family{}.Constants(Uniform, 1)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := tf.Constants(Uniform, 4); err != nil {
		t.Error(err)
	}
}

func second[T any](_ T, err error) error { return err }
