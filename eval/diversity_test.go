package eval_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"spiral/eval"
)

// AnswerEntropy on distributions whose entropy is known exactly.
func TestAnswerEntropyExact(t *testing.T) {
	cases := []struct {
		answers []int
		want    float64
	}{
		{[]int{7}, 0},
		{[]int{3, 3, 3, 3}, 0},
		{[]int{1, 2}, 1},
		{[]int{1, 2, 3, 4}, 2},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8}, 3},
		{[]int{5, 5, 9, 9}, 1},
		{[]int{1, 1, 2, 3}, 1.5}, // 1/2·1 + 2·(1/4·2)
		{[]int{4, 4, 4, 8}, 2 - 0.75*math.Log2(3)},
	}
	for _, c := range cases {
		got, err := eval.AnswerEntropy(c.answers)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-15 {
			t.Errorf("AnswerEntropy(%v) = %v, want %v", c.answers, got, c.want)
		}
	}
}

// The entropy does not depend on the answers' order or names.
func TestAnswerEntropyInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		a := make([]int, 1+r.IntN(40))
		for i := range a {
			a[i] = r.IntN(6)
		}
		h, _ := eval.AnswerEntropy(a)
		b := make([]string, len(a))
		for i, x := range a {
			b[i] = string(rune('a' + 5 - x))
		}
		r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		hb, _ := eval.AnswerEntropy(b)
		if math.Abs(h-hb) > 1e-12 || h < 0 || h > math.Log2(float64(len(a)))+1e-12 {
			t.Fatalf("%v: %v, relabelled and shuffled %v", a, h, hb)
		}
	}
}

func TestAnswerEntropyErrors(t *testing.T) {
	_, err := eval.AnswerEntropy([]int{})
	var ae *eval.InputError
	if !errors.As(err, &ae) || ae.Field != "answers" {
		t.Errorf("no answers: %v", err)
	}
}

// ratPass is pass@k as an exact rational.
func ratPass(t *testing.T, p eval.PassCount, k int) *big.Rat {
	t.Helper()
	r, err := eval.PassAtKRat(p.N, p.C, k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(t *testing.T, what string, got float64, want *big.Rat) {
	t.Helper()
	w, _ := want.Float64()
	if math.Abs(got-w) > 1e-14 {
		t.Errorf("%s = %v, want %v (%s)", what, got, w, want.RatString())
	}
}

// CoverageOverlap against the formula in exact rationals, and on a case by
// hand.
func TestCoverageOverlapExact(t *testing.T) {
	// By hand, k = 1: a = (1/2, 0, 1), b = (1/2, 1, 1/4).
	a := []eval.PassCount{{N: 2, C: 1}, {N: 3, C: 0}, {N: 1, C: 1}}
	b := []eval.PassCount{{N: 4, C: 2}, {N: 5, C: 5}, {N: 4, C: 1}}
	o, err := eval.CoverageOverlap(a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := eval.Overlap{
		Both:    (0.25 + 0 + 0.25) / 3,
		OnlyA:   (0.25 + 0 + 0.75) / 3,
		OnlyB:   (0.25 + 1 + 0) / 3,
		Neither: (0.25 + 0 + 0) / 3,
	}
	if math.Abs(o.Both-want.Both)+math.Abs(o.OnlyA-want.OnlyA)+math.Abs(o.OnlyB-want.OnlyB)+math.Abs(o.Neither-want.Neither) > 1e-15 {
		t.Errorf("overlap %+v, want %+v", o, want)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		p := 1 + r.IntN(6)
		k := 1 + r.IntN(5)
		a, b := make([]eval.PassCount, p), make([]eval.PassCount, p)
		for i := range p {
			a[i].N, b[i].N = k+r.IntN(9), k+r.IntN(9)
			a[i].C, b[i].C = r.IntN(a[i].N+1), r.IntN(b[i].N+1)
		}
		o, err := eval.CoverageOverlap(a, b, k)
		if err != nil {
			t.Fatal(err)
		}
		both, onlyA, onlyB, neither := new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
		one := big.NewRat(1, 1)
		for i := range p {
			pa, pb := ratPass(t, a[i], k), ratPass(t, b[i], k)
			qa, qb := new(big.Rat).Sub(one, pa), new(big.Rat).Sub(one, pb)
			both.Add(both, new(big.Rat).Mul(pa, pb))
			onlyA.Add(onlyA, new(big.Rat).Mul(pa, qb))
			onlyB.Add(onlyB, new(big.Rat).Mul(qa, pb))
			neither.Add(neither, new(big.Rat).Mul(qa, qb))
		}
		inv := big.NewRat(1, int64(p))
		near(t, "Both", o.Both, both.Mul(both, inv))
		near(t, "OnlyA", o.OnlyA, onlyA.Mul(onlyA, inv))
		near(t, "OnlyB", o.OnlyB, onlyB.Mul(onlyB, inv))
		near(t, "Neither", o.Neither, neither.Mul(neither, inv))
		// Both + OnlyA is A's coverage at k.
		cov, _ := eval.CoverageCurve(a, k)
		if math.Abs(o.Both+o.OnlyA-cov[k-1]) > 1e-14 {
			t.Errorf("Both + OnlyA = %v, coverage %v", o.Both+o.OnlyA, cov[k-1])
		}
		// Two policies: UniqueCoverage is OnlyA and OnlyB.
		u, err := eval.UniqueCoverage([][]eval.PassCount{a, b}, k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(u[0]-o.OnlyA) > 1e-15 || math.Abs(u[1]-o.OnlyB) > 1e-15 {
			t.Errorf("unique %v, overlap %+v", u, o)
		}
	}
}

// UniqueCoverage of three policies against the formula in exact
// rationals.
func TestUniqueCoverageExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	one := big.NewRat(1, 1)
	for range 100 {
		p, m, k := 1+r.IntN(5), 1+r.IntN(4), 1+r.IntN(4)
		pols := make([][]eval.PassCount, m)
		for j := range pols {
			pols[j] = make([]eval.PassCount, p)
			for i := range p {
				n := k + r.IntN(8)
				pols[j][i] = eval.PassCount{N: n, C: r.IntN(n + 1)}
			}
		}
		u, err := eval.UniqueCoverage(pols, k)
		if err != nil {
			t.Fatal(err)
		}
		for j := range m {
			sum := new(big.Rat)
			for i := range p {
				term := ratPass(t, pols[j][i], k)
				for l := range m {
					if l != j {
						term.Mul(term, new(big.Rat).Sub(one, ratPass(t, pols[l][i], k)))
					}
				}
				sum.Add(sum, term)
			}
			near(t, "unique", u[j], sum.Mul(sum, big.NewRat(1, int64(p))))
		}
	}
}

func TestOverlapErrors(t *testing.T) {
	var ae *eval.InputError
	a := []eval.PassCount{{N: 2, C: 1}}
	if _, err := eval.CoverageOverlap(a, nil, 1); !errors.As(err, &ae) || ae.Field != "b" {
		t.Errorf("lengths: %v", err)
	}
	if _, err := eval.CoverageOverlap(a, a, 3); !errors.As(err, &ae) || ae.Field != eval.FieldProblemsN || ae.Output != 0 {
		t.Errorf("k > N: %v", err)
	}
	if _, err := eval.UniqueCoverage(nil, 1); !errors.As(err, &ae) || ae.Field != "policies" {
		t.Errorf("no policies: %v", err)
	}
	if _, err := eval.UniqueCoverage([][]eval.PassCount{a, {}}, 1); !errors.As(err, &ae) || ae.Output != 1 {
		t.Errorf("lengths: %v", err)
	}
}

// PairedAccuracy on a case by hand, its SE against the sample variance of
// the differences computed directly.
func TestPairedAccuracy(t *testing.T) {
	a := []bool{true, true, false, false, true, true}
	b := []bool{true, false, true, false, false, true}
	p, err := eval.PairedAccuracy(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if p.N != 6 || p.Both != 2 || p.OnlyA != 2 || p.OnlyB != 1 || p.Neither != 1 {
		t.Errorf("counts %+v", p)
	}
	// d = (0, 1, -1, 0, 1, 0): mean 1/6, sum of squares about it 3 - 6/36.
	if math.Abs(p.Diff-1.0/6) > 1e-15 {
		t.Errorf("Diff %v", p.Diff)
	}
	wantSE := math.Sqrt((3 - 6.0/36) / 5 / 6)
	if math.Abs(p.SE-wantSE) > 1e-15 {
		t.Errorf("SE %v, want %v", p.SE, wantSE)
	}
	one, _ := eval.PairedAccuracy([]bool{true}, []bool{false})
	if one.Diff != 1 || !math.IsNaN(one.SE) {
		t.Errorf("one item: %+v", one)
	}
	var ae *eval.InputError
	if _, err := eval.PairedAccuracy(nil, nil); !errors.As(err, &ae) {
		t.Errorf("no items: %v", err)
	}
	if _, err := eval.PairedAccuracy(a, b[:2]); !errors.As(err, &ae) || ae.Field != "b" {
		t.Errorf("lengths: %v", err)
	}
}
