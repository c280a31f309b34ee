package advantage

import (
	"errors"
	"math"
	"testing"

	"spiral/internal/spiraltest"
)

// fuzzProblem decodes one problem from fuzz bytes: the number of traces,
// then sets as (size, members...) and their rewards as (count, values...),
// each value a byte mapped onto a small grid of rewards that includes
// out-of-range and non-finite ones, so that most inputs are valid and some
// are not.
func fuzzProblem(data []byte) (traces int, sets [][]int, rewards [][]float64) {
	next := func() (int, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return int(b), true
	}
	t, ok := next()
	if !ok {
		return 0, nil, nil
	}
	traces = t%12 - 1 // -1 .. 10: 0 and -1 are invalid
	values := [...]float64{0, 1, 0.5, 0.25, -1, 1e15, -1e15, 1e-300, 5e-324, 0.1, 0.2, 3, 1e31, math.NaN(), math.Inf(1), math.Copysign(0, -1)}
	for len(sets) < 8 {
		size, ok := next()
		if !ok {
			break
		}
		set := []int{}
		for range size % 6 {
			m, ok := next()
			if !ok {
				break
			}
			set = append(set, m%13-1)
		}
		count, _ := next()
		rs := []float64{}
		for range count % 6 {
			v, ok := next()
			if !ok {
				break
			}
			rs = append(rs, values[v%len(values)])
		}
		sets = append(sets, set)
		rewards = append(rewards, rs)
	}
	return traces, sets, rewards
}

// FuzzCompute holds the one-problem credit to its contract on arbitrary
// input: an *InputError, or finite results that agree with the exact
// rational reference to within rounding.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{9, 4, 1, 2, 3, 4, 4, 1, 1, 1, 0, 4, 5, 6, 7, 8, 4, 2, 2, 2, 2})
	f.Add([]byte{5, 1, 1, 2, 5, 5, 1, 2, 1, 6})
	f.Add([]byte{3, 2, 1, 2, 1, 1, 2, 2, 1, 1, 9})
	f.Add([]byte{0})
	f.Add([]byte{4, 1, 1, 1, 13})
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, sets, rewards := fuzzProblem(data)
		got, err := Compute(traces, sets, rewards)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) && len(rewards) == len(sets) {
				t.Fatalf("Compute(%d, %v, %v): error %v is not an *InputError", traces, sets, rewards, err)
			}
			return
		}
		want := spiraltest.RefCredit(traces, sets, spiraltest.Rats(rewards), nil)
		scale := 0.0
		for _, rs := range rewards {
			for _, r := range rs {
				scale = max(scale, math.Abs(r))
			}
		}
		near := func(what string, g, w, scale float64) {
			tol := 1e-12 * max(scale, 1e-300)
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Fatalf("%s = %v, not finite (traces %d, sets %v, rewards %v)", what, g, traces, sets, rewards)
			}
			if math.Abs(g-w) > tol {
				t.Fatalf("%s = %v, exact %v (traces %d, sets %v, rewards %v)", what, g, w, traces, sets, rewards)
			}
		}
		for i := range sets {
			// A set's score and aggregation advantages are exact to its own
			// rewards' magnitude, whatever the other sets hold.
			own := 0.0
			for _, r := range rewards[i] {
				own = max(own, math.Abs(r))
			}
			near("SetScores", got.SetScores[i], spiraltest.Float(want.SetScores[i]), own)
			near("SetAdvantages", got.SetAdvantages[i], spiraltest.Float(want.SetAdvantages[i]), scale)
			for j := range rewards[i] {
				near("Aggregation", got.Aggregation[i][j], spiraltest.Float(want.Aggregation[i][j]), own)
			}
		}
		for y := range traces {
			near("Search", got.Search[y], spiraltest.Float(want.Search[y]), scale)
			if got.Appearances[y] != want.Appearances[y] {
				t.Fatalf("Appearances[%d] = %d, want %d", y, got.Appearances[y], want.Appearances[y])
			}
			if want.Search[y].Sign() == 0 && got.Search[y] != 0 && scale <= 1 {
				t.Fatalf("Search[%d] = %v, exactly 0 by definition (sets %v, rewards %v)", y, got.Search[y], sets, rewards)
			}
		}
	})
}

// FuzzGroupRelative holds GroupRelative (through GroupRelativeTokens, with
// lengths of 0 to 4 tokens) to its contract on arbitrary input, the
// passk, clip, whitening and others options included: an *InputError or an
// error for bad options, or finite advantages within the documented bound.
func FuzzGroupRelative(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 1, 3}, uint8(0))
	f.Add([]byte{0, 1, 0, 1, 0, 1}, uint8(1))
	f.Add([]byte{2, 5, 2, 6, 3, 13}, uint8(2))
	f.Add([]byte{}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, preset uint8) {
		values := [...]float64{0, 1, 0.5, 0.25, -1, 1e15, -1e15, 1e-300, 5e-324, 0.1, 0.2, 3, 1e31, math.NaN(), math.Inf(1), math.Copysign(0, -1)}
		var ids []int
		var rewards []float64
		for i := 0; i+1 < len(data); i += 2 {
			ids = append(ids, int(data[i]%8))
			rewards = append(rewards, values[data[i+1]%byte(len(values))])
		}
		opts := []GroupOptions{
			{},
			{LeaveOneOut: true},
			{Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6},
			{Scale: ScaleBatch, Bessel: true, Epsilon: 1e-4, NaNUnscorable: true},
			{Scale: ScaleGroup, Epsilon: 1e-9, NaNUnscorable: true},
			{Best: true, Scale: ScaleGroup, Bessel: true, Epsilon: 1e-6},
			{Whiten: WhitenVerl},
			{Clip: Range{Low: -10, High: 10}, Whiten: WhitenOpenRLHF},
			{LeaveOneOut: true, NaNUnscorable: true, Whiten: WhitenTRL},
			{LeaveOneOut: true, Scale: ScaleOthers, Bessel: true, Epsilon: 1e-6, NaNUnscorable: true},
		}
		opt := opts[int(preset)%len(opts)]
		dst := make([]float64, len(rewards))
		lengths := make([]int, len(rewards)) // 0 to 4 tokens, read by the whitening
		for i := range lengths {
			lengths[i] = int(data[2*i] / 8 % 5)
		}
		_, err := GroupRelativeTokens(dst, rewards, ids, lengths, opt)
		if err != nil {
			return
		}
		n := float64(len(rewards))
		for i, a := range dst {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				t.Fatalf("dst[%d] = %v for rewards %v ids %v opt %+v", i, a, rewards, ids, opt)
			}
			if opt.Scale == ScaleOthers {
				if math.Abs(a) > 4*MaxAbsReward/opt.Epsilon {
					t.Fatalf("dst[%d] = %v above the bound 4 MaxAbsReward/Epsilon", i, a)
				}
			} else if (opt.Scale != ScaleNone || opt.Whiten != WhitenNone) && math.Abs(a) > 2*math.Sqrt(n)*(1+1e-12) {
				t.Fatalf("dst[%d] = %v above the bound 2 sqrt(%v) (the whitening's: sqrt of the total weight, at most 4n)", i, a, n)
			}
			if opt.Clip.Enabled() && opt.Whiten == WhitenNone && (a < opt.Clip.Low || a > opt.Clip.High) {
				t.Fatalf("dst[%d] = %v outside the clip range %+v", i, a, opt.Clip)
			}
			if math.IsNaN(rewards[i]) && a != 0 {
				t.Fatalf("unscorable row %d got %v, want 0", i, a)
			}
		}
	})
}
