package lengthgate

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestSoftOverlongBreakPoints checks R_length at DAPO's break points for
// L_max = 4096, buffer = 1024 (illustrative values): every expected value is
// a dyadic rational, so float64 must hit it exactly.
func TestSoftOverlongBreakPoints(t *testing.T) {
	tests := []struct {
		s    SoftOverlong
		l    int
		want float64
	}{
		{NewSoftOverlong(4096, 1024), 0, 0},
		{NewSoftOverlong(4096, 1024), 3071, 0},
		{NewSoftOverlong(4096, 1024), 3072, 0},              // L_max - buffer: last unpenalised length
		{NewSoftOverlong(4096, 1024), 3073, -1.0 / 1024},    // first penalised length
		{NewSoftOverlong(4096, 1024), 3328, -0.25},          // a quarter of the way
		{NewSoftOverlong(4096, 1024), 3584, -0.5},           // midway
		{NewSoftOverlong(4096, 1024), 4095, -1023.0 / 1024}, // just below L_max
		{NewSoftOverlong(4096, 1024), 4096, -1},             // L_max
		{NewSoftOverlong(4096, 1024), 4097, -1},             // beyond L_max: DAPO's third case
		{NewSoftOverlong(4096, 1024), 1 << 30, -1},          // far beyond
		{SoftOverlong{4096, 1024, 0.5}, 3584, -0.25},        // factor scales the ramp
		{SoftOverlong{4096, 1024, 0.5}, 4096, -0.5},         // ... the end point
		{SoftOverlong{4096, 1024, 0.5}, 5000, -0.5},         // ... and the overlong case
		{SoftOverlong{4096, 1024, 0.3}, 3584, -0.3 / 2},     // 0.3/2 is exact in float64
		{SoftOverlong{4096, 1024, 0.3}, 3072, 0},
		{SoftOverlong{20480, 4096, 1}, 16384, 0}, // DAPO's own setting
		{SoftOverlong{20480, 4096, 1}, 18432, -0.5},
		{SoftOverlong{20480, 4096, 1}, 20480, -1},
		{NewSoftOverlong(4096, 0), 4096, 0}, // buffer 0: a hard cut
		{NewSoftOverlong(4096, 0), 4097, -1},
		{NewSoftOverlong(4096, 4096), 0, 0}, // buffer == L_max
		{NewSoftOverlong(4096, 4096), 1, -1.0 / 4096},
		{NewSoftOverlong(4096, 4096), 2048, -0.5},
		{NewSoftOverlong(1, 1), 1, -1},                  // smallest valid
		{NewSoftOverlong(3, 3), 1, -0.3333333333333333}, // -1/3 correctly rounded
	}
	for _, tc := range tests {
		got, err := tc.s.Penalty(tc.l)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(tc.want) {
			t.Errorf("%+v.Penalty(%d) = %v, want %v", tc.s, tc.l, got, tc.want)
		}
	}
}

// verl is verl's DAPORewardManager expression, restated:
// min(-exceed_len / overlong_buffer_len * overlong_penalty_factor, 0).
func verl(maxLen, buffer int, factor float64, l int) float64 {
	exceed := l - (maxLen - buffer)
	return math.Min(-float64(exceed)/float64(buffer)*factor, 0)
}

func drawSoftOverlong(t *rapid.T) SoftOverlong {
	maxLen := rapid.IntRange(1, 40000).Draw(t, "maxLen")
	return SoftOverlong{
		MaxLength: maxLen,
		Buffer:    rapid.IntRange(0, maxLen).Draw(t, "buffer"),
		Factor:    rapid.OneOf(rapid.Just(1.0), rapid.Float64Range(1e-3, 10)).Draw(t, "factor"),
	}
}

func TestSoftOverlongProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSoftOverlong(t)
		l := rapid.OneOf(
			rapid.IntRange(0, 2*s.MaxLength),
			rapid.IntRange(max(s.MaxLength-s.Buffer-1, 0), s.MaxLength-s.Buffer+1),
			rapid.IntRange(s.MaxLength-1, s.MaxLength+1),
		).Draw(t, "L")
		p, err := s.Penalty(l)
		if err != nil {
			t.Fatal(err)
		}
		if p > 0 || p < -s.Factor {
			t.Fatalf("penalty %v outside [-%v, 0]", p, s.Factor)
		}
		start := s.MaxLength - s.Buffer
		switch {
		case l <= start:
			if math.Float64bits(p) != 0 {
				t.Fatalf("penalty(%d) = %v, want +0", l, p)
			}
		case l > s.MaxLength:
			if p != -s.Factor {
				t.Fatalf("penalty(%d) = %v past L_max, want -%v", l, p, s.Factor)
			}
		default:
			// Inside the ramp: the same expression as verl, bit for bit ...
			if v := verl(s.MaxLength, s.Buffer, s.Factor, l); math.Float64bits(v) != math.Float64bits(p) {
				t.Fatalf("penalty(%d) = %v, verl gives %v", l, p, v)
			}
			// ... and within two roundings of the exact rational
			// -factor * (L - (L_max - buffer)) / buffer.
			exact := new(big.Rat).SetFrac64(int64(l-start), int64(s.Buffer))
			exact.Mul(exact, new(big.Rat).SetFloat64(s.Factor)).Neg(exact)
			e, _ := exact.Float64()
			if s.Factor == 1 && p != e { // one correctly rounded division
				t.Fatalf("penalty(%d) = %v, exact %v", l, p, exact.FloatString(20))
			}
			if math.Abs(p-e) > 2*math.Abs(e)*0x1p-53 {
				t.Fatalf("penalty(%d) = %v, exact %v", l, p, exact.FloatString(20))
			}
		}
		// Exact end points of the ramp.
		if p0, _ := s.Penalty(start); p0 != 0 {
			t.Fatalf("penalty(L_max - buffer) = %v", p0)
		}
		if pm, _ := s.Penalty(s.MaxLength); s.Buffer > 0 && pm != -s.Factor {
			t.Fatalf("penalty(L_max) = %v, want -%v", pm, s.Factor)
		}
		// Non-increasing in L.
		if next, _ := s.Penalty(l + 1); next > p {
			t.Fatalf("penalty(%d) = %v < penalty(%d) = %v", l, p, l+1, next)
		}
	})
}

func TestSoftOverlongApply(t *testing.T) {
	s := NewSoftOverlong(4096, 1024)
	rewards := []float64{1, 1, 1, 1, 0, 0.3}
	lengths := []int{2000, 3072, 3584, 4096, 5000, 100}
	got := slices.Clone(rewards)
	r, err := s.Apply(got, lengths)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 1, 0.5, 0, -1, 0.3}; !sameBits(got, want) {
		t.Errorf("shaped = %v, want %v", got, want)
	}
	if want := (PenaltyReport{Outputs: 6, Penalized: 3, Overlong: 1, Total: -2.5}); r.String() != want.String() {
		t.Errorf("report = %+v, want %+v", r, want)
	}
	var sum PenaltyReport
	sum.Add(r)
	sum.Add(r)
	if want := (PenaltyReport{Outputs: 12, Penalized: 6, Overlong: 2, Total: -5}); sum != want {
		t.Errorf("sum = %+v, want %+v", sum, want)
	}

	// dst-first leaves the source alone; float32 agrees.
	dst := make([]float64, len(rewards))
	if r2, err := ApplySoftOverlong(s, dst, rewards, lengths); err != nil || r2 != r || !sameBits(dst, got) || rewards[3] != 1 {
		t.Errorf("ApplyTo = %v %+v %v, source %v", dst, r2, err, rewards)
	}
	r32 := []float32{1, 1, 1, 1, 0, 0.3}
	if r3, err := ApplySoftOverlong(s, r32, r32, lengths); err != nil || r3 != r || !slices.Equal(r32, []float32{1, 1, 0.5, 0, -1, 0.3}) {
		t.Errorf("float32: %v %+v %v", r32, r3, err)
	}
}

func TestSoftOverlongApplyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSoftOverlong(t)
		n := rapid.IntRange(0, 30).Draw(t, "n")
		rewards := rapid.SliceOfN(rapid.Float64Range(-1, 1), n, n).Draw(t, "rewards")
		lengths := rapid.SliceOfN(rapid.IntRange(0, 2*s.MaxLength), n, n).Draw(t, "lengths")
		got := slices.Clone(rewards)
		r, err := s.Apply(got, lengths)
		if err != nil {
			t.Fatal(err)
		}
		want := PenaltyReport{Outputs: n}
		for i, x := range rewards {
			p, _ := s.Penalty(lengths[i])
			if p == 0 {
				if math.Float64bits(got[i]) != math.Float64bits(x) {
					t.Fatalf("reward %d changed without penalty: %v -> %v", i, x, got[i])
				}
				continue
			}
			if got[i] != x+p {
				t.Fatalf("reward %d: %v + %v gave %v", i, x, p, got[i])
			}
			want.Penalized++
			if lengths[i] > s.MaxLength {
				want.Overlong++
			}
			want.Total += p
		}
		// The total is the sum of the penalties, to within the rounding of
		// a plain sum of them.
		if math.Abs(r.Total-want.Total) <= float64(n)*0x1p-52*math.Abs(want.Total) {
			want.Total = r.Total
		}
		if r.String() != want.String() {
			t.Fatalf("report %+v, want %+v", r, want)
		}
	})
}

func TestSoftOverlongBadInput(t *testing.T) {
	ok := NewSoftOverlong(4096, 1024)
	tests := []struct {
		name    string
		s       SoftOverlong
		rewards []float64
		lengths []int
		want    string
	}{
		{"zero value", SoftOverlong{}, []float64{1}, []int{1}, "MaxLength: 0 < 1"},
		{"negative L_max", SoftOverlong{-5, 0, 1}, []float64{1}, []int{1}, "MaxLength: -5 < 1"},
		{"negative buffer", SoftOverlong{4096, -1, 1}, []float64{1}, []int{1}, "Buffer: -1 < 0"},
		{"buffer > L_max", SoftOverlong{4096, 4097, 1}, []float64{1}, []int{1}, "Buffer: 4097 > L_max = 4096"},
		{"zero factor", SoftOverlong{4096, 1024, 0}, []float64{1}, []int{1}, "Factor: 0, want in (0, 1e+30]"},
		{"negative factor", SoftOverlong{4096, 1024, -1}, []float64{1}, []int{1}, "Factor: -1"},
		{"NaN factor", SoftOverlong{4096, 1024, math.NaN()}, []float64{1}, []int{1}, "Factor: NaN"},
		{"Inf factor", SoftOverlong{4096, 1024, math.Inf(1)}, []float64{1}, []int{1}, "Factor: +Inf"},
		{"factor above MaxFactor", SoftOverlong{4096, 1024, 1e308}, []float64{-1e308}, []int{5000}, "Factor: 1e+308, want in (0, 1e+30]"},
		{"factor just above MaxFactor", SoftOverlong{4096, 1024, math.Nextafter(MaxFactor, math.Inf(1))}, []float64{0}, []int{5000}, "Factor: 1.0000000000000002e+30"},
		{"mismatch", ok, []float64{1, 1}, []int{1}, "lengths: len = 1, want 2, one per value"},
		{"negative length", ok, []float64{1, 1}, []int{5000, -7}, "lengths[1] = -7: length < 0"},
		{"NaN reward", ok, []float64{1, 1, math.NaN()}, []int{5000, 5000, 5000}, "rewards[2] = NaN: not finite"},
		{"Inf reward", ok, []float64{math.Inf(-1), 1}, []int{5000, 5000}, "rewards[0] = -Inf: not finite"},
	}
	for _, tc := range tests {
		rewards := slices.Clone(tc.rewards)
		r, err := tc.s.Apply(rewards, tc.lengths)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if r != (PenaltyReport{}) || !sameBits(rewards, tc.rewards) {
			t.Errorf("%s: changed on error: %v %+v", tc.name, rewards, r)
		}
		dst := slices.Repeat([]float64{42}, len(tc.rewards))
		if _, err := ApplySoftOverlong(tc.s, dst, tc.rewards, tc.lengths); err == nil || slices.ContainsFunc(dst, func(x float64) bool { return x != 42 }) {
			t.Errorf("%s: ApplyTo wrote %v on error %v", tc.name, dst, err)
		}
	}
	if _, err := ok.Penalty(-1); err == nil || !strings.Contains(err.Error(), "length: -1 < 0") {
		t.Errorf("Penalty(-1): %v", err)
	}
	if _, err := (SoftOverlong{4096, 1024, 0}).Penalty(1); err == nil {
		t.Error("Penalty with Factor 0: no error")
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(dst) = 0 != len(rewards) = 1") {
				t.Errorf("recover() = %v", r)
			}
		}()
		ApplySoftOverlong(ok, nil, []float64{1}, []int{1})
	}()
}

func TestOverlongFilter(t *testing.T) {
	f := OverlongFilter{MaxLength: 4096}
	lengths := []int{0, 1000, 4095, 4096, 4097}
	keep := make([]bool, len(lengths))
	dropped, err := f.Mask(keep, lengths)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, true, false, false}; !slices.Equal(keep, want) || dropped != 2 {
		t.Errorf("keep = %v (dropped %d), want %v (2)", keep, dropped, want)
	}

	for _, tc := range []struct {
		f       OverlongFilter
		lengths []int
		want    string
	}{
		{OverlongFilter{}, []int{1}, "MaxLength: 0 < 1"},
		{OverlongFilter{-3}, []int{1}, "MaxLength: -3 < 1"},
		{f, []int{5000, 1, -2}, "lengths[2] = -2: length < 0"},
	} {
		keep := []bool{true, false, true}[:len(tc.lengths)]
		before := slices.Clone(keep)
		if _, err := tc.f.Mask(keep, tc.lengths); err == nil || !strings.Contains(err.Error(), tc.want) || !slices.Equal(keep, before) {
			t.Errorf("Mask(%v) with %+v: err = %v, keep = %v", tc.lengths, tc.f, err, keep)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(keep) = 1 != len(lengths) = 2") {
			t.Errorf("recover() = %v", r)
		}
	}()
	f.Mask(make([]bool, 1), []int{1, 2})
}

// TestSoftOverlongFinite: no finite input gives a non-finite output. Factor
// 1e308 with reward -1e308 (which summed to -Inf), two full penalties of
// 1e308 (whose report Total overflowed) and Factor 1e39 on float32 rewards
// (a penalty beyond float32's range) are refused; with any accepted factor,
// up to MaxFactor, the most negative finite reward of either type stays
// finite once shaped, and so do the report's Total and sums of reports.
func TestSoftOverlongFinite(t *testing.T) {
	huge := SoftOverlong{MaxLength: 4096, Buffer: 1024, Factor: 1e308}
	rewards := []float64{-1e308, 0}
	if _, err := huge.Apply(rewards, []int{5000, 5000}); err == nil || rewards[0] != -1e308 {
		t.Errorf("Factor 1e308: err %v, rewards %v", err, rewards)
	}
	r32 := []float32{0}
	if _, err := ApplySoftOverlong(SoftOverlong{4096, 1024, 1e39}, r32, r32, []int{5000}); err == nil || r32[0] != 0 {
		t.Errorf("float32 with Factor 1e39: err %v, rewards %v", err, r32)
	}

	rapid.Check(t, func(t *rapid.T) {
		s := SoftOverlong{MaxLength: 4096, Buffer: rapid.IntRange(0, 4096).Draw(t, "buffer"),
			Factor: rapid.SampledFrom([]float64{MaxFactor, 1e29, 1, 5e-324}).Draw(t, "factor")}
		n := rapid.IntRange(1, 50).Draw(t, "n")
		lengths := rapid.SliceOfN(rapid.IntRange(3000, 6000), n, n).Draw(t, "lengths")
		r64 := rapid.SliceOfN(rapid.SampledFrom([]float64{-math.MaxFloat64, math.MaxFloat64, -MaxFactor, 0}), n, n).Draw(t, "rewards")
		rep, err := s.Apply(r64, lengths)
		if err != nil {
			t.Fatal(err)
		}
		r32 := rapid.SliceOfN(rapid.SampledFrom([]float32{-math.MaxFloat32, math.MaxFloat32, -1e30, 0}), n, n).Draw(t, "rewards32")
		rep32, err := ApplySoftOverlong(s, r32, r32, lengths)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r64 {
			if math.IsInf(r64[i], 0) || math.IsInf(float64(r32[i]), 0) {
				t.Fatalf("row %d: shaped %v, %v", i, r64[i], r32[i])
			}
		}
		var total PenaltyReport
		for range 1000 {
			total.Add(rep)
			total.Add(rep32)
		}
		if math.IsInf(rep.Total, 0) || math.IsInf(total.Total, 0) || rep.Total < -s.Factor*float64(n) {
			t.Fatalf("Total %v, summed %v", rep.Total, total.Total)
		}
	})
}

// TestMaskTruncated: TRL's mask_truncated_completions on token ids (EOS 2,
// padding 0): a completion is truncated when its last token is neither EOS
// nor padding. MaskTruncated on the end-of-sequence flag gives TRL's mask,
// which differs from the length-based OverlongFilter (L_max = 4) on a
// completion that ended with EOS at exactly L_max and on one that stopped
// early without EOS.
func TestMaskTruncated(t *testing.T) {
	const eos, pad, maxLength = 2, 0, 4
	completions := [][]int{{5, 6, 2}, {5, 6, 7, 8}, {5, 6, 7, 2}, {5, 6}, {9, 2, 0}}
	ended := make([]bool, len(completions))
	lengths := make([]int, len(completions))
	trlKeep := make([]bool, len(completions))
	for i, ids := range completions {
		last := ids[len(ids)-1]
		isTruncated := last != eos && last != pad // TRL: ids[-1] not in [eos, pad]
		trlKeep[i] = !isTruncated
		ended[i] = last == eos || last == pad
		lengths[i] = len(ids)
	}
	keep := make([]bool, len(completions))
	if dropped := MaskTruncated(keep, ended); !slices.Equal(keep, trlKeep) || dropped != 2 {
		t.Errorf("MaskTruncated: %v (dropped %d), TRL %v", keep, dropped, trlKeep)
	}
	byLength := make([]bool, len(completions))
	if _, err := (OverlongFilter{MaxLength: maxLength}).Mask(byLength, lengths); err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true, true}; !slices.Equal(byLength, want) {
		t.Errorf("OverlongFilter: %v, want %v", byLength, want)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(keep) = 1 != len(ended) = 2") {
			t.Errorf("recover() = %v", r)
		}
	}()
	MaskTruncated(make([]bool, 1), []bool{true, false})
}

// TestHostileInputs: any settings and inputs, sizes up to math.MaxInt and
// values up to ±math.MaxFloat64, NaN and ±Inf included, give an error or
// finite results within the documented bounds, never a panic, and nothing
// is written on error.
func TestHostileInputs(t *testing.T) {
	// Mostly valid values, so that both the error path and the computing
	// path are taken often.
	anyInt := rapid.OneOf(rapid.IntRange(0, 10000), rapid.IntRange(0, 10000),
		rapid.SampledFrom([]int{math.MaxInt, math.MaxInt - 1, 1 << 30, 0, -1, math.MinInt}))
	anyFloat := rapid.OneOf(rapid.Float64Range(-10, 10), rapid.Float64Range(-10, 10), rapid.Float64(),
		rapid.SampledFrom([]float64{math.MaxFloat64, -math.MaxFloat64, -math.MaxFloat32, math.Inf(1), math.NaN(), MaxFactor, 0, 5e-324}))
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(t, "n")
		lengths := rapid.SliceOfN(anyInt, n, n).Draw(t, "lengths")
		value := anyFloat
		s := SoftOverlong{anyInt.Draw(t, "max"), anyInt.Draw(t, "buffer"), anyFloat.Draw(t, "factor")}
		if rapid.Bool().Draw(t, "valid") { // valid settings, finite values
			s.MaxLength = max(s.MaxLength, 1)
			s.Buffer = rapid.IntRange(0, s.MaxLength).Draw(t, "valid buffer")
			s.Factor = rapid.OneOf(rapid.Float64Range(5e-324, MaxFactor), rapid.SampledFrom([]float64{1, MaxFactor})).Draw(t, "valid factor")
			value = rapid.OneOf(rapid.Float64Range(-10, 10),
				rapid.SampledFrom([]float64{math.MaxFloat64, -math.MaxFloat64, -math.MaxFloat32, math.MaxFloat32, -MaxFactor, 0}))
		}
		values := rapid.SliceOfN(value, n, n).Draw(t, "values")
		before := slices.Clone(values)
		shaped := slices.Clone(values)
		rep, err := s.Apply(shaped, lengths)
		switch {
		case err != nil:
			if !sameBits(shaped, before) {
				t.Fatalf("written on error %v", err)
			}
		case math.IsInf(rep.Total, 0) || rep.Total > 0 || rep.Total < -s.Factor*float64(n):
			t.Fatalf("%+v: Total %v", s, rep.Total)
		default:
			for i, x := range shaped {
				if p := x - before[i]; math.IsInf(x, 0) || math.IsNaN(x) || p > 0 {
					t.Fatalf("%+v: row %d: %v -> %v", s, i, before[i], x)
				}
			}
		}
		r32 := make([]float32, n)
		for i, x := range values {
			r32[i] = float32(x)
		}
		if _, err := ApplySoftOverlong(s, r32, r32, lengths); err == nil {
			for i, x := range r32 {
				if math.IsInf(float64(x), 0) || x != x {
					t.Fatalf("%+v: float32 row %d = %v", s, i, x)
				}
			}
		}

		g := Gate{anyInt.Draw(t, "target"), Boundary(rapid.IntRange(-1, 2).Draw(t, "boundary"))}
		gated := slices.Clone(values)
		grep, err := g.Apply(gated, lengths)
		if err != nil {
			if !sameBits(gated, before) {
				t.Fatalf("gate wrote on error %v", err)
			}
		} else if math.IsInf(grep.MassRemoved, 0) || grep.MassRemoved < 0 || grep.Gated > grep.Positive {
			t.Fatalf("%+v: report %+v", g, grep)
		}

		f := OverlongFilter{anyInt.Draw(t, "filter")}
		keep := make([]bool, n)
		if dropped, err := f.Mask(keep, lengths); err == nil && (dropped < 0 || dropped > n) {
			t.Fatalf("dropped %d of %d", dropped, n)
		}
	})
}
