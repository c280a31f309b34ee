package advantage

import (
	"fmt"
	"hash/maphash"
	"math"
	"reflect"

	"golang.org/x/exp/constraints"

	"spiral/combin"
	"spiral/internal/inputerr"
	"spiral/internal/numeric"
)

// Scale says what [GroupRelative] divides a centred reward by. Its text
// forms are the values of TRL's scale_rewards: "none", "group", "batch".
type Scale int

const (
	// ScaleNone divides by nothing: A_i = r_i - baseline (Dr. GRPO, RLOO).
	ScaleNone Scale = iota
	// ScaleGroup divides by the standard deviation of the row's own group
	// plus Epsilon (the original GRPO).
	ScaleGroup
	// ScaleBatch divides by the standard deviation of every scored reward
	// of the call, taken about their common mean, plus Epsilon, while the
	// baseline stays the group's own (TRL's scale_rewards="batch", LitePPO's
	// "group mean, batch std").
	ScaleBatch
	// ScaleOthers divides row i's centred reward by the standard deviation
	// of the group's other scored rewards about their own mean, plus
	// Epsilon, and leaves it undivided where that deviation is 0 (the
	// others all equal) or undefined: NeMo-RL's normalize_rewards with its
	// leave-one-out baseline.
	ScaleOthers
)

var scaleText = [...]string{ScaleNone: "none", ScaleGroup: "group", ScaleBatch: "batch", ScaleOthers: "others"}

// String returns "none", "group", "batch" or "others", or "Scale(v)" for an
// undefined value.
func (s Scale) String() string {
	if s >= 0 && int(s) < len(scaleText) {
		return scaleText[s]
	}
	return fmt.Sprintf("Scale(%d)", int(s))
}

// MarshalText encodes s as "none", "group", "batch" or "others"; an
// undefined value is an error.
func (s Scale) MarshalText() ([]byte, error) {
	if s >= 0 && int(s) < len(scaleText) {
		return []byte(scaleText[s]), nil
	}
	return nil, inputerr.Undefined("advantage", FieldScale, int(s), "Scale")
}

// UnmarshalText decodes "none", "group", "batch" or "others"; anything else
// is an error naming the text.
func (s *Scale) UnmarshalText(text []byte) error {
	for v, t := range scaleText {
		if string(text) == t {
			*s = Scale(v)
			return nil
		}
	}
	return inputerr.Name("advantage", FieldScale, text, scaleText[:]...)
}

// GroupOptions selects a member of the GRPO family for [GroupRelative]. The
// zero value is plain mean-centring, A_i = r_i - mean, as in Dr. GRPO and
// as SPIRAL's aggregation advantage A_agg. [Preset] names the conventions
// of verl, TRL and OpenRLHF.
type GroupOptions struct {
	// Scale selects the divisor: none, the group's standard deviation, or
	// the batch's.
	Scale Scale `json:"scale"`
	// Epsilon is added to the standard deviation before dividing. It must
	// be finite and >= 0 and is used only when Scale is not ScaleNone. 0 is
	// safe: a group whose rewards are all equal gets 0 without a division.
	Epsilon float64 `json:"epsilon"`
	// Bessel makes the standard deviation use the denominator n-1 (torch.std's
	// default) instead of n, n being the number of scored rewards it is
	// taken over.
	Bessel bool `json:"bessel"`
	// LeaveOneOut replaces the group mean by the mean of the group's other
	// scored rewards (RLOO):
	//
	//	A_i = r_i - (1/(G-1)) sum_{j != i} r_j = (G/(G-1)) (r_i - mean),
	//
	// then divided as Scale says.
	LeaveOneOut bool `json:"leave_one_out"`
	// NaNUnscorable makes a NaN reward mark its row unscorable, as TRL does
	// with a completion no reward function could score: the row is left out
	// of its group's mean and standard deviation (and the batch's), its
	// advantage is 0, and it is counted in the report. Without it a NaN
	// reward is an error. ±Inf is an error either way.
	NaNUnscorable bool `json:"nan_unscorable"`
	// Best gives the group's best row alone an advantage, verl's
	// grpo_passk: r_max - r_second (divided as Scale says), r_second the
	// largest reward of the other rows (equal to r_max on a tie, so a tied
	// best gets 0); every other row gets 0. It needs Scale none or group
	// and excludes LeaveOneOut. The best row is the first row holding
	// r_max.
	Best bool `json:"best"`
	// Clip, when enabled, clamps every advantage to [Low, High] after the
	// baseline and the Scale and before Whiten: OpenRLHF's
	// --reward.clip_range, default (-10, 10), which clamps the reward
	// after its baseline (a lone right answer among 128 under group_norm,
	// 11.27, becomes 10).
	Clip Range `json:"clip"`
	// Whiten whitens the advantages over the batch after everything else:
	// REINFORCE++-baseline (verl, OpenRLHF) with each row weighted by its
	// length in tokens, or TRL RLOO's normalize_advantages over rows.
	Whiten Whitening `json:"whiten"`
}

// Range is a closed interval [Low, High]; the zero value is disabled.
type Range struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Enabled reports whether r is not the zero value.
func (r Range) Enabled() bool { return r != Range{} }

// Whitening is how [GroupRelative] whitens its advantages over the whole
// call, after the group baseline: a_i -> (a_i - mu)/sigma with mu and the
// variance v taken over the rows with a defined advantage (a scored row
// of a group of two or more scored rows), each weighted by w_i, its length
// in tokens ([GroupRelativeTokens]; 1 with [GroupRelative]); a row of
// weight 0 or without a defined advantage gets 0, and so does every row
// when the total weight W is below 2. Its text forms are the names below.
type Whitening int

const (
	// WhitenNone whitens nothing.
	WhitenNone Whitening = iota
	// WhitenVerl is verl's masked_whiten, used by its
	// reinforce_plus_plus_baseline: mu = sum w a/W, v = sum w (a - mu)^2 /
	// (W - 1) (Bessel over tokens), sigma = sqrt(v + 1e-8).
	WhitenVerl
	// WhitenOpenRLHF is OpenRLHF's normalisation after
	// reinforce_baseline: mu = sum w a/W, v = sum w (a - mu)^2/W,
	// sigma = sqrt(max(v, 1e-8)).
	WhitenOpenRLHF
	// WhitenTRL is TRL RLOOTrainer's normalize_advantages: mu the mean,
	// sigma = sqrt(sum (a - mu)^2/(W - 1)) + 1e-4, over the rows: every
	// row weighs 1 whatever its length.
	WhitenTRL
)

var whitenText = [...]string{WhitenNone: "none", WhitenVerl: "verl", WhitenOpenRLHF: "openrlhf", WhitenTRL: "trl"}

// String returns "none", "verl", "openrlhf" or "trl", or "Whitening(v)".
func (w Whitening) String() string {
	if w >= 0 && int(w) < len(whitenText) {
		return whitenText[w]
	}
	return fmt.Sprintf("Whitening(%d)", int(w))
}

// MarshalText encodes w as its name; an undefined value is an error.
func (w Whitening) MarshalText() ([]byte, error) {
	if w >= 0 && int(w) < len(whitenText) {
		return []byte(whitenText[w]), nil
	}
	return nil, inputerr.Undefined("advantage", FieldWhiten, int(w), "Whitening")
}

// UnmarshalText decodes "none", "verl", "openrlhf" or "trl".
func (w *Whitening) UnmarshalText(text []byte) error {
	for v, t := range whitenText {
		if string(text) == t {
			*w = Whitening(v)
			return nil
		}
	}
	return inputerr.Name("advantage", FieldWhiten, text, whitenText[:]...)
}

// Validate reports whether opt is valid: Scale and Whiten defined, Epsilon
// finite and >= 0, Best without LeaveOneOut or ScaleBatch, Clip finite with
// Low <= High. A bad option is an *[InputError] whose Field is the
// option's name ([FieldScale], [FieldEpsilon], [FieldBest], [FieldClip],
// [FieldWhiten]) and Value
// its value (Clip's Low, 1 for Best), so that a caller can say it in its
// own words.
func (opt GroupOptions) Validate() error {
	bad := func(field string, v float64, err error) error {
		return inputError(InputError{Field: field, Problem: -1, Set: -1, Output: -1, Value: v, Err: err})
	}
	if opt.Scale < ScaleNone || opt.Scale > ScaleOthers {
		return inputerr.Undefined("advantage", FieldScale, int(opt.Scale), "Scale")
	}
	if math.IsNaN(opt.Epsilon) || math.IsInf(opt.Epsilon, 0) || opt.Epsilon < 0 {
		return bad(FieldEpsilon, opt.Epsilon, fmt.Errorf("%v, want finite and >= 0", opt.Epsilon))
	}
	if err := opt.validateOthers(); err != nil {
		return err
	}
	if opt.Best && (opt.LeaveOneOut || opt.Scale == ScaleBatch) {
		return bad(FieldBest, 1, fmt.Errorf("the best output's baseline needs the scale none or group and no leave-one-out baseline (scale %v, leave-one-out %v)", opt.Scale, opt.LeaveOneOut))
	}
	if c := opt.Clip; c.Enabled() && !(c.Low <= c.High && !math.IsInf(c.Low, 0) && !math.IsInf(c.High, 0)) {
		return bad(FieldClip, c.Low, fmt.Errorf("[%v, %v], want finite with Low <= High", c.Low, c.High))
	}
	if opt.Whiten < WhitenNone || opt.Whiten > WhitenTRL {
		return inputerr.Undefined("advantage", FieldWhiten, int(opt.Whiten), "Whitening")
	}
	return nil
}

// GroupReport describes the groups seen by [GroupRelative]. Groups are
// listed by id, in the order of their first row. Every row of a listed
// group gets advantage 0: a dynamic-sampling trainer drops such groups.
type GroupReport[ID comparable] struct {
	// Groups is the number of distinct group ids.
	Groups int
	// Singletons lists the groups with exactly one scored row. A lone
	// reward has no baseline to compare with, so its advantage is 0, never
	// the raw reward.
	Singletons []ID
	// ZeroVariance lists the groups with two or more scored rows whose
	// rewards are all equal (for 0/1 rewards: all wrong or all right).
	ZeroVariance []ID
	// Unscored lists the groups none of whose rows could be scored (every
	// reward NaN under NaNUnscorable).
	Unscored []ID
	// Unscorable is the number of rows whose reward was NaN under
	// NaNUnscorable.
	Unscorable int
}

// maxGroupRows is the largest number of rows GroupRelative takes: the
// module's one size cap, combin.MaxSize = 2^24. Rows are numbered with
// int32, and the call's memory, at most about 100 bytes a row (when every
// row is its own group), stays under 2 GB.
const maxGroupRows = combin.MaxSize

// GroupRelative writes to dst the group-relative advantage of every reward:
// rewards[i] belongs to the group ids[i], rows of one group may be anywhere
// and in any order (verl's layout, whose index array holds a uid per row),
// and dst[i] is the advantage of rewards[i]. For a group of G scored rewards
// with mean m, and s the standard deviation that opt.Scale selects
// (denominator n, or n-1 with Bessel):
//
//	A_i = r_i - m                       ScaleNone (Dr. GRPO)
//	A_i = (G/(G-1)) (r_i - m)           ScaleNone, LeaveOneOut (RLOO)
//	A_i = (r_i - m) / (s + Epsilon)     ScaleGroup (GRPO), ScaleBatch
//	A_i = (r_i - m) / (s_-i + Epsilon)  ScaleOthers, where s_-i > 0
//
// (LeaveOneOut with a Scale divides the RLOO value; Best gives the group's
// best row alone r_max - r_second, divided as Scale says). Then Clip
// clamps, and Whiten whitens over the call (see [Whitening]). With ScaleGroup, s is
// the group's standard deviation about m; with ScaleBatch, it is that of
// every scored reward of the call about their common mean, the same s for
// every row.
//
// A group with one scored row gets 0 and is listed in the report's
// Singletons; a group of two or more equal rewards gets exactly 0 and is
// listed in ZeroVariance; an unscorable row (see
// [GroupOptions.NaNUnscorable]) gets 0. Every advantage is finite: with a
// Scale its magnitude is at most 2 sqrt(n), n the number of scored rewards
// the standard deviation is taken over, with ScaleOthers at most
// 4 [MaxAbsReward]/Epsilon, and without one at most 2 [MaxAbsReward].
//
// Rewards are converted to float64 and results rounded to F when stored.
// The mean is SPIRAL's set mean (a compensated sum, the mean kept as a
// pair m0 + c), so that without a Scale r_i - m = (r_i - m0) - c is A_agg
// bit for bit. With a Scale, the deviations are formed with one rounding
// (numeric.TwoSum), the sum of their squares is compensated (each square split
// exactly by math.FMA, the sum kept as a pair), scaled by a power of two
// at or above the largest deviation so that it neither overflows nor
// underflows, and a group whose rewards are all below 2^-900 in magnitude
// is computed on its rewards times 2^1000 (exactly), so that subnormal
// rewards keep their precision; never E[r^2] - E[r]^2. Every advantage
// (float64) is then within 4 units in the last place of its exact value,
// for every group size up to [combin.MaxSize] (tested against big.Rat and
// a 400-bit square root: at most 2.7 units for 0/1 rewards at every size
// to 4096). No product is fused into an addition on any architecture, so
// the results have the same bits everywhere.
//
// Where this differs from the trainers whose [Preset] it offers: a group of
// one scored row gets 0 and is reported, where verl gives it mean 0 and std
// 1 (so the raw reward r/(1+eps) for GRPO, r for Dr. GRPO and RLOO) and
// OpenRLHF's GRPO and RLOO give NaN; the trainers compute in the tensors'
// dtype (usually float32) and may leave a rounding residue in an all-equal
// group's mean, which the division by std + Epsilon can magnify, where here
// the arithmetic is float64 whatever F is and an all-equal group gets
// exactly 0; and they take one scalar per row from summed token-level
// rewards, where here the caller passes that scalar.
//
// GroupRelative returns an error, before writing anything, if
// len(ids) != len(rewards), if opt is invalid, if there are more than
// [combin.MaxSize] rows, or if a reward is NaN (unless opt.NaNUnscorable),
// infinite or larger in magnitude than [MaxAbsReward]: then an
// *[InputError] with Field "rewards", Output the row, Problem and Set -1,
// wrapping the group's id and [ErrNotFinite] or [ErrTooLarge]; or, when ID
// is an interface type (or holds one) and an id's dynamic value cannot be
// compared (a slice, map or function), an *InputError with Field "ids" and
// Output its row. It panics if len(dst) != len(rewards), a programmer's
// error. Its cost is linear in the number of rows whatever the ids (they are
// numbered with a seeded hash table), and it allocates a fixed number of
// buffers (at most 28 bytes per row, 8 of them only with Whiten, and 112
// per group, 216 with ScaleOthers), plus the report's lists.
func GroupRelative[F constraints.Float, ID comparable](dst, rewards []F, ids []ID, opt GroupOptions) (GroupReport[ID], error) {
	return groupRelative(dst, rewards, ids, nil, opt)
}

// MaxLength is the largest row length [GroupRelativeTokens] accepts, in
// tokens: 2^29, so that the total weight of MaxSize rows stays exact.
const MaxLength = 1 << 29

// GroupRelativeTokens is [GroupRelative] with lengths[i], the length of
// row i in tokens (its response mask's sum), which opt.Whiten reads as
// the row's weight: verl's and OpenRLHF's whitening take the mean and
// variance over tokens, so a row of L tokens counts L times, and a row of
// none is left out and gets 0. The lengths change nothing else. It
// returns an *[InputError] with Field "lengths" and Output the row if
// len(lengths) != len(rewards) (Output -1) or a length is negative or
// above [MaxLength].
func GroupRelativeTokens[F constraints.Float, ID comparable](dst, rewards []F, ids []ID, lengths []int, opt GroupOptions) (GroupReport[ID], error) {
	if len(lengths) != len(rewards) {
		return GroupReport[ID]{}, inputError(InputError{Field: "lengths", Problem: -1, Set: -1, Output: -1, Value: float64(len(lengths)),
			Err: fmt.Errorf("len(lengths) = %d, want len(rewards) = %d", len(lengths), len(rewards))})
	}
	for i, l := range lengths {
		if l < 0 || l > MaxLength {
			return GroupReport[ID]{}, inputError(InputError{Field: "lengths", Problem: -1, Set: -1, Output: i, Value: float64(l),
				Err: fmt.Errorf("length outside [0, %d] tokens", MaxLength)})
		}
	}
	return groupRelative(dst, rewards, ids, lengths, opt)
}

// groupRelative is GroupRelative and GroupRelativeTokens after their own
// checks, as named passes: number the groups, sum them, take the Scale's
// spread, report, then write each row's advantage, whitened if opt asks.
func groupRelative[F constraints.Float, ID comparable](dst, rewards []F, ids []ID, lengths []int, opt GroupOptions) (GroupReport[ID], error) {
	unscorable, err := checkGroupInput(rewards, ids, opt)
	if err != nil {
		return GroupReport[ID]{}, err
	}
	if len(dst) != len(rewards) {
		panic(fmt.Sprintf("advantage: len(dst) = %d, want len(rewards) = %d", len(dst), len(rewards)))
	}
	group, groups := numberGroups(ids)
	gs := make([]groupStats, groups)
	var batch groupStats // every scored reward, with ScaleBatch
	sumGroups(gs, &batch, rewards, group, opt)
	var others []othersRange // with ScaleOthers
	switch opt.Scale {
	case ScaleGroup:
		scaleGroups(gs, rewards, group, opt)
	case ScaleBatch:
		scaleBatch(&batch, rewards, opt)
	case ScaleOthers:
		scaleGroups(gs, rewards, group, opt)
		others = othersRanges(rewards, group, gs, opt)
	}
	rep := groupReport(ids, group, gs)
	rep.Unscorable = unscorable
	if opt.Whiten == WhitenNone {
		advantages(dst, rewards, group, gs, &batch, others, opt)
		return rep, nil
	}
	vals := make([]float64, len(rewards))
	advantages(vals, rewards, group, gs, &batch, others, opt)
	if opt.Whiten == WhitenTRL {
		lengths = nil // TRL whitens rows, whatever their lengths
	}
	whiten(dst, vals, lengths, opt.Whiten)
	return rep, nil
}

// advantages writes each row's advantage to dst (opt.advantage), 0 for a
// row without a defined one (unscorable, or in a group of fewer than two
// scored rows) or NaN when dst holds the values still to be whitened
// (opt.Whiten), which whiten leaves out.
func advantages[F, R constraints.Float](dst []F, rewards []R, group []int32, gs []groupStats, batch *groupStats, others []othersRange, opt GroupOptions) {
	undefined := 0.0
	if opt.Whiten != WhitenNone {
		undefined = math.NaN()
	}
	for i, x := range rewards {
		st := &gs[group[i]]
		a := undefined
		if x == x && st.raw.n >= 2 {
			a = 0
			if st.raw.mixed {
				var o *othersRange
				if others != nil {
					o = &others[group[i]]
				}
				a = opt.advantage(st, batch, o, i, float64(x))
			}
		}
		dst[i] = F(a)
	}
}

// checkGroupInput checks GroupRelative's arguments other than dst and
// returns the number of rows NaNUnscorable marks unscorable.
func checkGroupInput[F constraints.Float, ID comparable](rewards []F, ids []ID, opt GroupOptions) (unscorable int, err error) {
	if len(ids) != len(rewards) {
		return 0, inputError(InputError{Field: "ids", Problem: -1, Set: -1, Output: -1, Value: float64(len(ids)),
			Err: fmt.Errorf("len(ids) = %d, want len(rewards) = %d", len(ids), len(rewards))})
	}
	if err := opt.Validate(); err != nil {
		return 0, err
	}
	if len(rewards) > maxGroupRows {
		return 0, inputError(InputError{Field: "rewards", Problem: -1, Set: -1, Output: -1, Value: float64(len(rewards)),
			Err: fmt.Errorf("len = %d > %d, the most rows a call credits", len(rewards), maxGroupRows)})
	}
	for i, x := range rewards {
		if x != x && opt.NaNUnscorable {
			unscorable++
			continue
		}
		if err := checkReward(float64(x)); err != nil {
			return 0, inputError(InputError{Field: "rewards", Problem: -1, Set: -1, Output: i, Value: float64(x),
				Err: fmt.Errorf("group %v: %w", ids[i], err)})
		}
	}
	// An id whose dynamic value is a slice, map or function cannot be
	// hashed (numberGroups).
	if !strictlyComparable(reflect.TypeFor[ID]()) {
		for i := range ids {
			if !reflect.ValueOf(&ids[i]).Elem().Comparable() {
				return 0, inputError(InputError{Field: "ids", Problem: -1, Set: -1, Output: i,
					Err: fmt.Errorf("id of type %T cannot be compared or hashed", ids[i])})
			}
		}
	}
	return unscorable, nil
}

// sumGroups is the first pass: the compensated sum of each group's scored
// rewards (and, with ScaleBatch, of every scored reward), with a Scale
// their largest magnitude, and with Best each group's two largest. With a
// Scale, a group whose rewards are all below 2^-900 in magnitude is summed
// again times 2^1000 (exactly), so that its mean and deviations keep their
// precision where they would be subnormal. It leaves each mean as a pair.
func sumGroups[F constraints.Float](gs []groupStats, batch *groupStats, rewards []F, group []int32, opt GroupOptions) {
	scaled := opt.Scale != ScaleNone
	for i, x := range rewards {
		if x != x {
			continue // unscorable
		}
		st, r := &gs[group[i]], float64(x)
		if opt.Best {
			st.rank(r, i)
		}
		st.raw.add(r)
		if scaled {
			st.top = max(st.top, math.Abs(r))
		}
		if opt.Scale == ScaleBatch {
			batch.raw.add(r)
			batch.top = max(batch.top, math.Abs(r))
		}
	}
	if scaled {
		again := false
		for g := range gs {
			again = gs[g].lift() || again
		}
		if batch.lift() {
			for _, x := range rewards {
				if x == x {
					batch.raw.add(float64(x) * up)
				}
			}
		}
		if again {
			for i, x := range rewards {
				if st := &gs[group[i]]; x == x && st.up != 0 {
					st.raw.add(float64(x) * up)
				}
			}
		}
	}
	for g := range gs {
		gs[g].m0, gs[g].c = gs[g].raw.pair()
	}
	batch.m0, batch.c = batch.raw.pair()
}

// scaleGroups sets each group's standard deviation (ScaleGroup, and the
// sums ScaleOthers reads): the
// largest deviation rounded up to a power of two 2^e, then the
// compensated sum of squares of the deviations times 2^-e.
func scaleGroups[F constraints.Float](gs []groupStats, rewards []F, group []int32, opt GroupOptions) {
	for i, x := range rewards {
		if x == x {
			st := &gs[group[i]]
			st.scale = max(st.scale, math.Abs(st.dev(float64(x))))
		}
	}
	for g := range gs {
		gs[g].power()
	}
	for i, x := range rewards {
		if st := &gs[group[i]]; x == x && st.inv > 0 {
			st.square(st.dev(float64(x)))
		}
	}
	for g := range gs {
		gs[g].spread(opt)
	}
}

// scaleBatch sets the batch's standard deviation about its own mean
// (ScaleBatch), as scaleGroups does for a group.
func scaleBatch[F constraints.Float](batch *groupStats, rewards []F, opt GroupOptions) {
	for _, x := range rewards {
		if x == x {
			batch.scale = max(batch.scale, math.Abs(batch.dev(float64(x))))
		}
	}
	batch.power()
	if batch.inv > 0 {
		for _, x := range rewards {
			if x == x {
				batch.square(batch.dev(float64(x)))
			}
		}
	}
	batch.spread(opt)
}

// advantage returns the advantage of row i, of scored reward x, in the
// group st of two or more rewards that are not all equal: the baseline
// (Best, LeaveOneOut), the Scale, then Clip. o is the group's othersRange
// with ScaleOthers.
func (opt GroupOptions) advantage(st, batch *groupStats, o *othersRange, i int, x float64) float64 {
	var a float64
	switch {
	case opt.Best:
		if int(st.bestRow) == i {
			a = st.best - st.second // exact when within a factor 2
			if opt.Scale == ScaleGroup {
				a = st.divide(a*st.lifted(), st.lifted())
			}
		}
	case opt.Scale == ScaleNone:
		a = st.centred(x)
	case opt.Scale == ScaleGroup:
		a = st.divide(st.dev(x), st.lifted())
	case opt.Scale == ScaleBatch:
		a = batch.divide(st.dev(x), st.lifted())
	case opt.Scale == ScaleOthers:
		a = st.advantageOthers(o, i, x, opt) // the leave-one-out factor included
	}
	if opt.LeaveOneOut && opt.Scale != ScaleOthers {
		n := st.raw.n
		a *= float64(n) / float64(n-1)
	}
	if opt.Clip.Enabled() {
		a = min(max(a, opt.Clip.Low), opt.Clip.High)
	}
	return a
}

// whiten writes (v_i - mu)/sigma to dst[i] for every defined v_i (not NaN)
// of positive weight (lengths[i], or 1 when lengths is nil) and 0 to the
// others, mu and sigma as w says (see [Whitening]), the sums compensated.
func whiten[F constraints.Float](dst []F, vals []float64, lengths []int, w Whitening) {
	weight := func(i int) float64 {
		if lengths == nil {
			return 1
		}
		return float64(lengths[i])
	}
	var total float64 // W: an integer below 2^53, exact
	var sum numeric.Sum
	for i, v := range vals {
		if v == v && weight(i) > 0 {
			total += weight(i)
			sum.AddProduct(weight(i), v)
		}
	}
	if total < 2 {
		clear(dst)
		return
	}
	h, l := numeric.MeanPair(sum, int(total))
	var ss numeric.Sum
	for i, v := range vals {
		if v == v && weight(i) > 0 {
			d := (v - h) - l
			ss.AddProduct(float64(weight(i)*d), d)
		}
	}
	dof := total
	if w == WhitenVerl || w == WhitenTRL {
		dof--
	}
	variance := ss.Value() / dof
	var sigma float64
	switch w {
	case WhitenVerl:
		sigma = math.Sqrt(variance + 1e-8)
	case WhitenOpenRLHF:
		sigma = math.Sqrt(max(variance, 1e-8))
	case WhitenTRL:
		sigma = math.Sqrt(variance) + 1e-4
	}
	for i, v := range vals {
		if v == v && weight(i) > 0 {
			dst[i] = F(((v - h) - l) / sigma)
		} else {
			dst[i] = 0
		}
	}
}

// up is the factor by which the rewards of a group below tiny are lifted,
// and down its inverse; both exact powers of two.
const (
	tiny = 0x1p-900
	up   = 0x1p1000
	down = 0x1p-1000
)

// groupStats holds the running statistics of one group (or of the batch).
// With a Scale, a group whose rewards are all below tiny in magnitude is
// lifted: its sums hold the rewards times up, and so do m0, c, scale.
type groupStats struct {
	raw    meanAcc     // the scored rewards (times up when lifted)
	m0, c  float64     // the mean, as the pair m0 + c
	top    float64     // max |r|
	up     float64     // up when lifted, else 0
	scale  float64     // max |r - m|, then the power of two at or above it
	inv    float64     // 1/scale, exact; 0 when every deviation is 0
	ss     numeric.Sum // sum of ((r - m)/scale)^2
	den    float64     // (std + Epsilon)/scale, 0 when std is undefined
	direct float64     // Epsilon/scale where den overflows
	// best and second are the largest and second largest rewards
	// (with Best), bestRow the first row holding best.
	best, second float64
	bestRow      int32
}

// rank records r, of row i, among the group's two largest rewards (Best).
func (st *groupStats) rank(r float64, i int) {
	switch {
	case st.raw.n == 0:
		st.best, st.second, st.bestRow = r, math.Inf(-1), int32(i)
	case r > st.best:
		st.best, st.second, st.bestRow = r, st.best, int32(i)
	case r > st.second:
		st.second = r
	}
}

// lift marks a group whose rewards are all below tiny (and not all 0) as
// lifted and empties its sums, which the caller fills again with the
// rewards times up. It reports whether it did.
func (st *groupStats) lift() bool {
	if st.raw.n == 0 || st.top >= tiny || st.top == 0 {
		return false
	}
	st.up = up
	st.raw = meanAcc{}
	return true
}

// lifted returns the factor the group's sums are multiplied by: up or 1.
func (st *groupStats) lifted() float64 {
	if st.up != 0 {
		return up
	}
	return 1
}

// centred returns r - m as (r - m0) - c, for an unlifted group: Scale
// none's deviation, A_agg bit for bit.
func (st *groupStats) centred(x float64) float64 { return (x - st.m0) - st.c }

// dev returns r - m (times up when lifted) to within about one rounding:
// r - m0 is split exactly into d + e (numeric.TwoSum) and the small parts added
// first.
func (st *groupStats) dev(x float64) float64 {
	if st.up != 0 {
		x *= up
	}
	d, e := numeric.TwoSum(x, -st.m0)
	return d + (e - st.c)
}

// power rounds scale up to a power of two 2^e and sets inv = 2^-e, so that
// dividing a deviation by scale is exact. A lifted or unlifted mixed
// group's largest deviation lies between 2^-1000 and 2^102, so both are
// normal.
func (st *groupStats) power() {
	if st.scale == 0 {
		return
	}
	_, exp := math.Frexp(st.scale) // scale = frac 2^exp, frac in [1/2, 1)
	st.scale = math.Ldexp(1, exp)
	st.inv = math.Ldexp(1, -exp)
}

// square adds (d/scale)^2 to the compensated sum of squares.
func (st *groupStats) square(d float64) {
	e := d * st.inv
	st.ss.AddProduct(e, e)
}

// spread sets den = (std + Epsilon)/scale with std = scale sqrt(ss/dof)
// (times the lift), divided through by scale so that nothing underflows:
// den is at least sqrt(1/dof), since the largest deviation contributes at
// least 1/4 to ss. Where Epsilon/scale overflows, std is below Epsilon's
// rounding and direct = Epsilon is used instead, so that a deviation of
// 5e-324 divided by Epsilon 1e-6 gives about 5e-318, not 0.
func (st *groupStats) spread(opt GroupOptions) {
	dof := float64(st.raw.n)
	if opt.Bessel {
		dof--
	}
	if dof > 0 && st.inv > 0 {
		root := math.Sqrt((st.ss.S + st.ss.C) / dof)
		st.den = root + float64(opt.Epsilon*st.lifted()*st.inv)
		if math.IsInf(st.den, 1) {
			st.direct = opt.Epsilon
		}
	}
}

// divide returns d/(std + Epsilon) for a deviation d given in reward units
// times gl (a group's lifted()), this statistic's std being in reward units
// times its own lift: the quotient is formed in the statistic's units and
// the ratio of the lifts, a power of two, applied last.
func (st *groupStats) divide(d, gl float64) float64 {
	switch {
	case st.den == 0:
		return 0
	case st.direct > 0:
		// std is negligible beside Epsilon.
		return (d / st.direct) * (1 / gl)
	}
	return (d * st.inv / st.den) * (st.lifted() / gl)
}

// groupReport lists the groups by class, in the order of their first row,
// allocating each list once at its final length.
func groupReport[ID comparable](ids []ID, group []int32, gs []groupStats) GroupReport[ID] {
	rep := GroupReport[ID]{Groups: len(gs)}
	var singletons, zeroVariance, unscored int
	for g := range gs {
		switch st := &gs[g]; {
		case st.raw.n == 0:
			unscored++
		case st.raw.n == 1:
			singletons++
		case !st.raw.mixed:
			zeroVariance++
		}
	}
	if singletons+zeroVariance+unscored == 0 {
		return rep
	}
	if singletons > 0 {
		rep.Singletons = make([]ID, 0, singletons)
	}
	if zeroVariance > 0 {
		rep.ZeroVariance = make([]ID, 0, zeroVariance)
	}
	if unscored > 0 {
		rep.Unscored = make([]ID, 0, unscored)
	}
	// Groups are numbered in order of first row, so the first row of group
	// next is the first row whose group is next.
	next := int32(0)
	for i, g := range group {
		if g != next {
			continue
		}
		next++
		switch st := &gs[g]; {
		case st.raw.n == 0:
			rep.Unscored = append(rep.Unscored, ids[i])
		case st.raw.n == 1:
			rep.Singletons = append(rep.Singletons, ids[i])
		case !st.raw.mixed:
			rep.ZeroVariance = append(rep.ZeroVariance, ids[i])
		}
	}
	return rep
}

// strictlyComparable reports whether every value of t can be compared and
// hashed: false for an interface type, or an array or struct holding one,
// whose dynamic value may be a slice, map or function.
func strictlyComparable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return false
	case reflect.Array:
		return strictlyComparable(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !strictlyComparable(t.Field(i).Type) {
				return false
			}
		}
	}
	return true
}

// groupSeed keys the hash that numbers group ids: chosen at random once per
// process, so that no choice of ids can make the table degrade.
var groupSeed = maphash.MakeSeed()

// numberGroups numbers the distinct ids in order of first appearance and
// returns the number of each row's id and the number of ids. It uses one
// allocation: an open-addressing table of at most 4 len(ids) int32 entries
// (load factor at most 1/2), each holding 1 + the first row of an id, and
// the rows' numbers. len(ids) must be at most maxGroupRows.
func numberGroups[ID comparable](ids []ID) (group []int32, groups int) {
	size := 8
	for size < 2*len(ids) {
		size <<= 1
	}
	buf := make([]int32, size+len(ids))
	table, group := buf[:size], buf[size:]
	mask := uint64(size - 1)
	var n int32
	for i, id := range ids {
		for h := maphash.Comparable(groupSeed, id) & mask; ; h = (h + 1) & mask {
			e := table[h]
			if e == 0 {
				table[h] = int32(i) + 1
				group[i] = n
				n++
				break
			}
			if ids[e-1] == id {
				group[i] = group[e-1]
				break
			}
		}
	}
	return group, int(n)
}
