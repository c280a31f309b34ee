package lengthgate

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"spiral/internal/spiraltest"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// eq8 is the test oracle: the paper's Eq. 8 written case by case, with the
// package's documented choices for the cases the paper leaves open.
func eq8(g Gate, a float64, l int) float64 {
	if g.Target == 0 { // disabled
		return a
	}
	switch {
	case a < 0:
		return a // first case, A < 0
	case a > 0 && l < g.Target:
		return a // first case, A > 0 and L < L_target
	case a > 0 && l > g.Target:
		return 0 // second case
	case a > 0 && l == g.Target:
		if g.Boundary == KeepAtTarget {
			return a
		}
		return 0
	default:
		return a // A == 0 (or -0) passes unchanged
	}
}

func TestGateEq8Table(t *testing.T) {
	negZero := math.Copysign(0, -1)
	gated := Gate{Target: 4096}
	kept := Gate{Target: 4096, Boundary: KeepAtTarget}
	tests := []struct {
		name      string
		g         Gate
		a         float64
		l         int
		want      float64
		wantGated bool
		atTarget  bool
	}{
		{"A<0, L<T", gated, -0.75, 1000, -0.75, false, false},
		{"A<0, L==T, GateAtTarget", gated, -0.75, 4096, -0.75, false, false},
		{"A<0, L==T, KeepAtTarget", kept, -0.75, 4096, -0.75, false, false},
		{"A<0, L>T", gated, -0.75, 5000, -0.75, false, false},
		{"A<0, L>T, KeepAtTarget", kept, -0.75, 5000, -0.75, false, false},
		{"A>0, L<T", gated, 0.25, 1000, 0.25, false, false},
		{"A>0, L==T-1", gated, 0.25, 4095, 0.25, false, false},
		{"A>0, L<T, KeepAtTarget", kept, 0.25, 4095, 0.25, false, false},
		{"A>0, L==T, GateAtTarget", gated, 0.25, 4096, 0, true, true},
		{"A>0, L==T, KeepAtTarget", kept, 0.25, 4096, 0.25, false, true},
		{"A>0, L==T+1", gated, 0.25, 4097, 0, true, false},
		{"A>0, L>T, KeepAtTarget", kept, 0.25, 5000, 0, true, false},
		{"smallest A>0, L>T", gated, math.SmallestNonzeroFloat64, 5000, 0, true, false},
		{"largest A>0, L>T", gated, math.MaxFloat64, 5000, 0, true, false},
		{"A==0, L<T", gated, 0, 1000, 0, false, false},
		{"A==0, L==T", gated, 0, 4096, 0, false, false},
		{"A==0, L>T", gated, 0, 5000, 0, false, false},
		{"A==-0, L>T", gated, negZero, 5000, negZero, false, false},
		{"L==0, T==1", Gate{Target: 1}, 0.5, 0, 0.5, false, false},
		{"L==1, T==1", Gate{Target: 1}, 0.5, 1, 0, true, true},
		{"disabled, A>0, huge L", Gate{}, 0.25, math.MaxInt, 0.25, false, false},
		{"disabled KeepAtTarget, A>0, L==0", Gate{Boundary: KeepAtTarget}, 0.25, 0, 0.25, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if o := eq8(tc.g, tc.a, tc.l); math.Float64bits(o) != math.Float64bits(tc.want) {
				t.Fatalf("oracle eq8 = %v, table says %v", o, tc.want)
			}
			adv := []float64{tc.a}
			r, err := tc.g.Apply(adv, []int{tc.l})
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(adv[0]) != math.Float64bits(tc.want) {
				t.Errorf("A_mod = %v, want %v", adv[0], tc.want)
			}
			want := Report{Outputs: 1}
			if tc.a > 0 {
				want.Positive = 1
			}
			if tc.atTarget {
				want.AtTarget = 1
			}
			if tc.wantGated {
				want.Gated, want.MassRemoved = 1, tc.a
			}
			if r != want {
				t.Errorf("report = %+v, want %+v", r, want)
			}
			if tc.a > 0 && tc.g.KeepsPositive(tc.l) == tc.wantGated {
				t.Errorf("KeepsPositive(%d) = %v, but gated = %v", tc.l, tc.g.KeepsPositive(tc.l), tc.wantGated)
			}
		})
	}
}

// TestGatePaperLengths gates one problem's advantages at the paper's maximum
// output length, 4096 tokens, used as an illustrative target.
func TestGatePaperLengths(t *testing.T) {
	lengths := []int{1000, 4096, 5000, 4096, 5000, 0}
	adv := []float64{0.25, 0.25, 0.25, -0.75, -0.25, 0}
	for _, tc := range []struct {
		b    Boundary
		want []float64
		rep  Report
	}{
		{GateAtTarget, []float64{0.25, 0, 0, -0.75, -0.25, 0}, Report{Outputs: 6, Positive: 3, AtTarget: 1, Gated: 2, MassRemoved: 0.5}},
		{KeepAtTarget, []float64{0.25, 0.25, 0, -0.75, -0.25, 0}, Report{Outputs: 6, Positive: 3, AtTarget: 1, Gated: 1, MassRemoved: 0.25}},
	} {
		got := slices.Clone(adv)
		r, err := Gate{Target: 4096, Boundary: tc.b}.Apply(got, lengths)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) || r != tc.rep {
			t.Errorf("%v: got %v %+v, want %v %+v", tc.b, got, r, tc.want, tc.rep)
		}
		if f, want := r.GatedFraction(), float64(tc.rep.Gated)/3; f != want {
			t.Errorf("%v: GatedFraction = %v, want %v", tc.b, f, want)
		}
	}
}

func TestReportAdd(t *testing.T) {
	a := Report{Outputs: 24, Positive: 10, AtTarget: 1, Gated: 3, MassRemoved: 0.75}
	b := Report{Outputs: 24, Positive: 4, AtTarget: 0, Gated: 2, MassRemoved: 0.5}
	var sum Report
	sum.Add(a)
	sum.Add(b)
	if want := (Report{Outputs: 48, Positive: 14, AtTarget: 1, Gated: 5, MassRemoved: 1.25}); sum != want {
		t.Errorf("sum = %+v, want %+v", sum, want)
	}
	var gs GatesReport
	gs.Add(GatesReport{Search: a, Aggregation: b})
	gs.Add(GatesReport{Search: b, Aggregation: a})
	if gs.Search != sum || gs.Aggregation != sum {
		t.Errorf("GatesReport sum = %+v, want both %+v", gs, sum)
	}
	if f := (Report{}).GatedFraction(); f != 0 {
		t.Errorf("empty GatedFraction = %v, want 0", f)
	}
}

func TestBoundaryString(t *testing.T) {
	for b, want := range map[Boundary]string{GateAtTarget: "GateAtTarget", KeepAtTarget: "KeepAtTarget", 7: "Boundary(7)"} {
		if s := b.String(); s != want {
			t.Errorf("%d.String() = %q, want %q", int(b), s, want)
		}
	}
	if GateAtTarget != (Gate{}).Boundary {
		t.Error("GateAtTarget is not the zero value")
	}
}

func TestGateBadInput(t *testing.T) {
	ok := Gate{Target: 4096}
	tests := []struct {
		name    string
		g       Gate
		adv     []float64
		lengths []int
		want    string
	}{
		{"negative target", Gate{Target: -1}, []float64{1}, []int{1}, "Target: -1 < 0"},
		{"undefined boundary", Gate{Target: 5, Boundary: 2}, []float64{1}, []int{1}, "Boundary: 2 is not a defined Boundary"},
		{"negative boundary", Gate{Target: 5, Boundary: -1}, []float64{1}, []int{1}, "Boundary: -1 is not a defined Boundary"},
		{"short lengths", ok, []float64{1, 2}, []int{1}, "lengths: len = 1, want 2, one per value"},
		{"long lengths", ok, []float64{1}, []int{1, 2}, "lengths: len = 2, want 1, one per value"},
		{"negative length", ok, []float64{1, 1, 1}, []int{5000, 1, -3}, "lengths[2] = -3: length < 0"},
		{"NaN", ok, []float64{1, math.NaN(), 1}, []int{5000, 5000, 5000}, "adv[1] = NaN: not finite"},
		{"+Inf", ok, []float64{1, 1, math.Inf(1)}, []int{5000, 5000, 5000}, "adv[2] = +Inf: not finite"},
		{"-Inf", ok, []float64{math.Inf(-1)}, []int{5000}, "adv[0] = -Inf: not finite"},
		{"NaN, disabled gate", Gate{}, []float64{math.NaN()}, []int{1}, "adv[0] = NaN"},
		{"negative length, disabled gate", Gate{}, []float64{1}, []int{-1}, "lengths[0] = -1: length < 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			adv, lengths := slices.Clone(tc.adv), slices.Clone(tc.lengths)
			r, err := tc.g.Apply(adv, lengths)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "lengthgate: ") {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if r != (Report{}) {
				t.Errorf("report on error = %+v, want zero", r)
			}
			if !sameBits(adv, tc.adv) || !slices.Equal(lengths, tc.lengths) {
				t.Errorf("inputs changed on error: %v %v", adv, lengths)
			}
			dst := make([]float64, len(tc.adv))
			for i := range dst {
				dst[i] = 42
			}
			if _, err := ApplyGate(tc.g, dst, tc.adv, tc.lengths); err == nil {
				t.Fatal("ApplyTo: no error")
			}
			for _, x := range dst {
				if x != 42 {
					t.Fatalf("ApplyTo wrote dst on error: %v", dst)
				}
			}
		})
	}
}

func TestApplyToPanicsOnDst(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(dst) = 1 != len(adv) = 2") {
			t.Errorf("recover() = %v", r)
		}
	}()
	ApplyGate(Gate{Target: 1}, make([]float64, 1), []float64{1, 2}, []int{1, 2})
}

func TestGatesPerRole(t *testing.T) {
	gs := Gates{Search: Gate{Target: 4096}, Aggregation: Gate{Target: 2048, Boundary: KeepAtTarget}}
	sAdv := []float64{0.5, 0.5, -0.5}
	sLen := []int{3000, 4096, 8000}
	aAdv := []float64{0.25, 0.25, 0.25, -0.75}
	aLen := []int{2048, 3000, 1000, 3000}
	r, err := gs.Apply(sAdv, sLen, aAdv, aLen)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.5, 0, -0.5}; !slices.Equal(sAdv, want) {
		t.Errorf("search = %v, want %v", sAdv, want)
	}
	if want := []float64{0.25, 0, 0.25, -0.75}; !slices.Equal(aAdv, want) {
		t.Errorf("aggregation = %v, want %v", aAdv, want)
	}
	want := GatesReport{
		Search:      Report{Outputs: 3, Positive: 2, AtTarget: 1, Gated: 1, MassRemoved: 0.5},
		Aggregation: Report{Outputs: 4, Positive: 3, AtTarget: 1, Gated: 1, MassRemoved: 0.25},
	}
	if r != want {
		t.Errorf("report = %+v, want %+v", r, want)
	}
	if s := Shared(Gate{Target: 7}); s.Search != s.Aggregation || s.Search.Target != 7 {
		t.Errorf("Shared = %+v", s)
	}
	var zero Gates
	adv := []float64{1, -1}
	if r, err := zero.Apply(adv, []int{1 << 20, 0}, nil, nil); err != nil || !slices.Equal(adv, []float64{1, -1}) || r.Search.Gated != 0 {
		t.Errorf("zero Gates changed something: %v %+v %v", adv, r, err)
	}
}

// TestGatesNoPartialUpdate: an error in the aggregation inputs must leave the
// (valid) search advantages untouched too.
func TestGatesNoPartialUpdate(t *testing.T) {
	gs := Shared(Gate{Target: 10})
	for _, tc := range []struct {
		name string
		gs   Gates
		aAdv []float64
		aLen []int
		want string
		sAdv []float64
		sLen []int
	}{
		{name: "agg NaN", gs: gs, aAdv: []float64{1, math.NaN()}, aLen: []int{1, 1}, want: "aggAdv[1] = NaN"},
		{name: "agg length", gs: gs, aAdv: []float64{1}, aLen: []int{-4}, want: "aggLengths[0] = -4: length < 0"},
		{name: "agg mismatch", gs: gs, aAdv: []float64{1}, aLen: nil, want: "aggLengths: len = 0, want 1, one per value"},
		{name: "agg gate", gs: Gates{Search: Gate{Target: 10}, Aggregation: Gate{Target: -2}}, aAdv: []float64{1}, aLen: []int{100}, want: "lengthgate: Aggregation.Target: -2 < 0"},
		{name: "search gate", gs: Gates{Search: Gate{Target: 10, Boundary: 9}}, aAdv: []float64{1}, aLen: []int{100}, want: "lengthgate: Search.Boundary: 9 is not a defined Boundary"},
		{name: "search mismatch", gs: gs, sAdv: []float64{1, 1}, sLen: []int{100}, aAdv: []float64{1}, aLen: []int{100}, want: "searchLengths: len = 1, want 2, one per value"},
	} {
		if tc.sAdv == nil {
			tc.sAdv, tc.sLen = []float64{1, 1}, []int{100, 100}
		}
		sAdv, aAdv := slices.Clone(tc.sAdv), slices.Clone(tc.aAdv)
		_, err := tc.gs.Apply(sAdv, tc.sLen, aAdv, tc.aLen)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if !sameBits(sAdv, tc.sAdv) || !sameBits(aAdv, tc.aAdv) {
			t.Errorf("%s: changed on error: %v %v", tc.name, sAdv, aAdv)
		}
	}
}

func sameBits[F Float](a, b []F) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// drawCase draws a valid gate and a problem's advantages and lengths, with
// lengths concentrated around the target so every branch is hit.
func drawCase(t *rapid.T) (Gate, []float64, []int) {
	g := Gate{
		Target:   rapid.OneOf(rapid.Just(0), rapid.IntRange(1, 5000)).Draw(t, "target"),
		Boundary: rapid.SampledFrom([]Boundary{GateAtTarget, KeepAtTarget}).Draw(t, "boundary"),
	}
	n := rapid.IntRange(0, 40).Draw(t, "n")
	value := rapid.OneOf(
		rapid.Float64Range(-2, 2),
		rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 0.25, -0.75, math.SmallestNonzeroFloat64, -math.MaxFloat64, 1e300}),
	)
	length := rapid.OneOf(
		rapid.IntRange(0, 6000),
		rapid.IntRange(max(g.Target-1, 0), g.Target+1),
	)
	adv := rapid.SliceOfN(value, n, n).Draw(t, "adv")
	lengths := rapid.SliceOfN(length, n, n).Draw(t, "lengths")
	return g, adv, lengths
}

func TestGateProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, before, lengths := drawCase(t)
		after := slices.Clone(before)
		r, err := g.Apply(after, lengths)
		if err != nil {
			t.Fatal(err)
		}
		var want Report
		var removed []float64
		want.Outputs = len(before)
		for i, a := range before {
			b := after[i]
			if o := eq8(g, a, lengths[i]); math.Float64bits(o) != math.Float64bits(b) {
				t.Fatalf("adv[%d] = %v at L = %d: got %v, Eq. 8 gives %v", i, a, lengths[i], b, o)
			}
			if b > a {
				t.Fatalf("adv[%d] increased: %v -> %v", i, a, b)
			}
			if a <= 0 && math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("non-positive adv[%d] changed: %v -> %v", i, a, b)
			}
			if a > 0 {
				want.Positive++
				if g.Target > 0 && lengths[i] == g.Target {
					want.AtTarget++
				}
			}
			if b != a {
				want.Gated++
				removed = append(removed, a-b)
			}
		}
		checkPromise(t, "float64", r, want, removed)

		// Idempotent.
		again := slices.Clone(after)
		r2, err := g.Apply(again, lengths)
		if err != nil || !sameBits(again, after) || r2.Gated != 0 || r2.MassRemoved != 0 || r2.Positive != r.Positive-r.Gated {
			t.Fatalf("second application changed something: %v -> %v, %+v, %v", after, again, r2, err)
		}

		// ApplyTo leaves its source alone and writes what Apply computed.
		src := slices.Clone(before)
		dst := make([]float64, len(src))
		r3, err := ApplyGate(g, dst, src, lengths)
		if err != nil || r3 != r || !sameBits(dst, after) || !sameBits(src, before) {
			t.Fatalf("ApplyTo: %v %+v %v (source now %v)", dst, r3, err, src)
		}

		// float32 goes through the same branches.
		a32 := make([]float32, len(before))
		for i, a := range before {
			a32[i] = float32(a)
		}
		r4, err := ApplyGate(g, a32, a32, lengths)
		if err != nil && !strings.Contains(err.Error(), ": not finite") {
			t.Fatal(err)
		}
		if err == nil { // (1e300 overflows float32 to +Inf, which is rejected)
			var want32 Report
			var removed32 []float64
			want32.Outputs = len(before)
			for i, a := range before {
				a := float32(a) // may underflow to 0
				w := float32(eq8(g, float64(a), lengths[i]))
				if math.Float32bits(a32[i]) != math.Float32bits(w) {
					t.Fatalf("float32 adv[%d] = %v, want %v", i, a32[i], w)
				}
				if a > 0 {
					want32.Positive++
					if g.Target > 0 && lengths[i] == g.Target {
						want32.AtTarget++
					}
				}
				if w != a {
					want32.Gated++
					removed32 = append(removed32, float64(a))
				}
			}
			checkPromise(t, "float32", r4, want32, removed32)
		}
	})
}

// checkPromise checks what Report promises: its counts are want's, and
// MassRemoved is the sum of removed rounded once, within one unit in the
// last place of the exact sum (taken with math/big); the report's hidden
// error term is not compared.
func checkPromise(t *rapid.T, kind string, r, want Report, removed []float64) {
	exact := new(big.Float).SetPrec(4096)
	for _, x := range removed {
		exact.Add(exact, new(big.Float).SetFloat64(x))
	}
	w, _ := exact.Float64()
	w = min(w, math.MaxFloat64) // a sum that overflows stops there
	ulp := math.Nextafter(w, math.Inf(1)) - w
	want.MassRemoved = r.MassRemoved
	if r.String() != want.String() || math.Abs(r.MassRemoved-w) > ulp {
		t.Fatalf("%s report %v, want counts %v and MassRemoved %v (exact sum of %v)", kind, r, want, w, removed)
	}
}

func TestGateTargetAboveEveryLength(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, before, lengths := drawCase(t)
		longest := 0
		for _, l := range lengths {
			longest = max(longest, l)
		}
		above := Gate{Target: longest + rapid.IntRange(1, 100).Draw(t, "margin"), Boundary: rapid.SampledFrom([]Boundary{GateAtTarget, KeepAtTarget}).Draw(t, "boundary")}
		atLongest := Gate{Target: max(longest, 1), Boundary: KeepAtTarget}
		for _, g := range []Gate{above, atLongest} {
			after := slices.Clone(before)
			r, err := g.Apply(after, lengths)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(after, before) || r.Gated != 0 || r.MassRemoved != 0 {
				t.Fatalf("%+v changed %v to %v (%+v)", g, before, after, r)
			}
		}
	})
}

// TestGateBadInputProperty corrupts one position of a valid problem and
// checks the error names it and nothing was written.
func TestGateBadInputProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, adv, lengths := drawCase(t)
		if len(adv) == 0 {
			return
		}
		i := rapid.IntRange(0, len(adv)-1).Draw(t, "i")
		var want string
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			adv[i] = math.NaN()
			want = fmt.Sprintf("adv[%d] = NaN", i)
		case 1:
			adv[i] = math.Inf(1)
			want = fmt.Sprintf("adv[%d] = +Inf", i)
		case 2:
			adv[i] = math.Inf(-1)
			want = fmt.Sprintf("adv[%d] = -Inf", i)
		case 3:
			lengths[i] = -rapid.IntRange(1, 1<<30).Draw(t, "neg")
			want = fmt.Sprintf("lengths[%d] = %d: length < 0", i, lengths[i])
		}
		// Make earlier positions valid so the first error is at i.
		for j := range i {
			adv[j] = 0.5
			lengths[j] = 1 << 20
		}
		before, lbefore := slices.Clone(adv), slices.Clone(lengths)
		_, err := g.Apply(adv, lengths)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		if !sameBits(adv, before) || !slices.Equal(lengths, lbefore) {
			t.Fatalf("partial update: %v -> %v", before, adv)
		}
	})
}

// TestMassRemovedFinite: the mass removed stops at math.MaxFloat64 rather
// than overflowing, within one call and across reports.
func TestMassRemovedFinite(t *testing.T) {
	adv := []float64{math.MaxFloat64, math.MaxFloat64, 1}
	r, err := Gate{Target: 10}.Apply(adv, []int{11, 11, 11})
	if err != nil {
		t.Fatal(err)
	}
	if r.MassRemoved != math.MaxFloat64 || r.Gated != 3 {
		t.Errorf("report %+v, want MassRemoved = MaxFloat64", r)
	}
	r.Add(r)
	if r.MassRemoved != math.MaxFloat64 {
		t.Errorf("after Add: %v", r.MassRemoved)
	}
}

// sameReport reports whether a and b have the same exported fields.
func sameReport(a, b Report) bool { return a.String() == b.String() }

// TestNoFusedMultiplyAdd: no architecture's compiler fuses a product into
// a sum here (the overlong penalty added to a reward), so results have the
// same bits everywhere (long only: it compiles the package for five
// architectures).
func TestNoFusedMultiplyAdd(t *testing.T) { spiraltest.NoFusedMultiplyAdd(t, "spiral/lengthgate") }
