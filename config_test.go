package spiral

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/advantage"
	"spiral/combin"
	"spiral/lengthgate"
	"spiral/loss"
)

func TestPaperConfig(t *testing.T) {
	c := Paper()
	if err := c.Validate(); err != nil {
		t.Fatalf("Paper().Validate() = %v", err)
	}
	want := Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4}
	if c.SearchTraces != want.SearchTraces || c.SetSize != want.SetSize || c.Sets != want.Sets || c.AggregationsPerSet != want.AggregationsPerSet ||
		c.Ordered || c.Order != combin.IndexOrder || c.Design != combin.Uniform || c.Gates != (lengthgate.Gates{}) || c.Overlong != nil || c.RewardRange.Enabled() {
		t.Errorf("Paper() = %+v, want %+v", c, want)
	}
	if g, a, p := c.Generations(), c.AggregationOutputs(), c.PlanSize(); g != 24 || a != 16 || p != 16 {
		t.Errorf("Generations, AggregationOutputs, PlanSize = %d, %d, %d; want 24, 16, 16", g, a, p)
	}
}

func TestConfigValidate(t *testing.T) {
	paper := Paper()
	with := func(f func(*Config)) Config { c := paper; f(&c); return c }
	tests := []struct {
		name string
		c    Config
		want []string // substrings, every one must appear
	}{
		{"zero value", Config{}, []string{"spiral: Config.SearchTraces: 0 < 1", "spiral: Config.SetSize: 0 < 1", "spiral: Config.Sets: 0 < 1", "spiral: Config.AggregationsPerSet: 0 < 1"}},
		{"n > N1", with(func(c *Config) { c.SetSize = 9 }), []string{"Config.SetSize: 9 > N1 = 8"}},
		{"K > C(8,4)", with(func(c *Config) { c.Sets = 71 }), []string{"Config.Sets: 71 > C(8, 4) = 70"}},
		{"K > (8)_4", with(func(c *Config) { c.Ordered = true; c.Sets = 1681 }), []string{"Config.Sets: 1681 > (8)_4 = 1680"}},
		{"balanced K > family", with(func(c *Config) { c.Design = combin.Balanced; c.Sets = 71 }), []string{"Config.Sets: 71 > C(8, 4) = 70"}},
		{"negative N2", with(func(c *Config) { c.AggregationsPerSet = -2 }), []string{"Config.AggregationsPerSet: -2 < 1"}},
		{"bad order", with(func(c *Config) { c.Order = 5 }), []string{"Config.Order: 5 is not a defined Order"}},
		{"bad design", with(func(c *Config) { c.Design = 7 }), []string{"Config.Design: 7 is not a defined Design"}},
		{"shuffled tuples", with(func(c *Config) { c.Ordered = true; c.Order = combin.Shuffled }), []string{"Config.Order: shuffled tuples"}},
		{"balanced tuples", with(func(c *Config) { c.Ordered = true; c.Design = combin.Balanced }), []string{"Config.Design: balanced tuples"}},
		{"bad gate", with(func(c *Config) { c.Gates.Aggregation.Target = -1 }), []string{"spiral: Config.Gates.Aggregation.Target: -1 < 0"}},
		{"bad overlong", with(func(c *Config) { c.Overlong = &lengthgate.SoftOverlong{MaxLength: 10, Buffer: 4} }), []string{"spiral: Config.Overlong.Factor: 0, want"}},
		{"bad range", with(func(c *Config) { c.RewardRange = advantage.RewardRange{Low: 1, High: 0} }), []string{"spiral: Config.RewardRange.Low: reward range (1, 0)"}},
		{"N1 too large", with(func(c *Config) { c.SearchTraces = 1 << 30 }), []string{"Config.SearchTraces: 1073741824 > 16777216, the most"}},
		{"K*N2 too large", Config{SearchTraces: 1 << 10, SetSize: 2, Sets: 1 << 12, AggregationsPerSet: 1 << 13}, []string{"Config.Sets: K*N2 = 4096*8192 > 16777216, the most"}},
		{"K*n too large", Config{SearchTraces: 1 << 20, SetSize: 1 << 10, Sets: 1 << 15, AggregationsPerSet: 1}, []string{"Config.Sets: K*n = 32768*1024 > 16777216, the most"}},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %q, want it to contain %q", tt.name, err, w)
			}
		}
		// Every error is an *InputError naming a Config field, in the
		// root's words alone.
		if e, ok := errors.AsType[*InputError](err); !ok || !strings.HasPrefix(e.Field, "Config.") ||
			strings.Contains(err.Error(), "lengthgate:") || strings.Contains(err.Error(), "advantage:") || strings.Contains(err.Error(), "combin:") {
			t.Errorf("%s: Validate() = %q (%T), want *InputErrors naming Config fields with one package prefix", tt.name, err, err)
		}
	}
	good := []Config{
		paper,
		with(func(c *Config) { c.Sets = 70 }),
		with(func(c *Config) { c.Sets = 1 }),
		with(func(c *Config) { c.Ordered = true; c.Sets = 1680 }),
		with(func(c *Config) { c.Order = combin.Shuffled }),
		with(func(c *Config) { c.Design = combin.Balanced; c.Order = combin.Shuffled; c.Sets = 70 }),
		with(func(c *Config) { c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096}) }),
		with(func(c *Config) { o := lengthgate.NewSoftOverlong(4096, 512); c.Overlong = &o }),
		with(func(c *Config) { c.RewardRange = advantage.RewardRange{Low: 0, High: 1} }),
		{SearchTraces: 1, SetSize: 1, Sets: 1, AggregationsPerSet: 1},
		// Families far beyond 2^64 sets: K is below their size, checked
		// without computing it.
		{SearchTraces: 1 << 20, SetSize: 1 << 19, Sets: 2, AggregationsPerSet: 1},
		{SearchTraces: combin.MaxSize, SetSize: 8, Sets: 1 << 20, AggregationsPerSet: 16},
	}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", c, err)
		}
	}
}

func TestConfigJSON(t *testing.T) {
	c := Paper()
	c.Order = combin.Shuffled
	c.Design = combin.Balanced
	c.Gates.Search = lengthgate.Gate{Target: 3000, Boundary: lengthgate.KeepAtTarget}
	o := lengthgate.NewSoftOverlong(4096, 512)
	c.Overlong = &o
	c.RewardRange = advantage.RewardRange{Low: 0, High: 1}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"ordered":false`, `"order":"shuffled"`, `"design":"balanced"`, `"overlong":{`, `"reward_range":{"low":0,"high":1}`} {
		if !strings.Contains(string(data), w) {
			t.Errorf("json.Marshal = %s, want %s in it", data, w)
		}
	}
	var back Config
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Overlong == nil || *back.Overlong != o {
		t.Fatalf("round trip: Overlong = %v, want %+v", back.Overlong, o)
	}
	back.Overlong = c.Overlong
	if back != c {
		t.Errorf("round trip: %+v, want %+v", back, c)
	}
	for _, bad := range []string{`{"order":"random"}`, `{"design":"fancy"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("json.Unmarshal(%s) = nil error", bad)
		}
	}
	if _, err := json.Marshal(Config{Order: 9}); err == nil {
		t.Error("json.Marshal of Order 9: nil error")
	}
}

// TestConfigMPaper checks M against the constants derived by hand from the
// paper: q_K = 1 - 88/1541 gives M = 2*1453/1541 - 1 = 1365/1541 for the
// uniform design; the balanced design covers all 8 traces, M = 8/4 - 1 = 1.
func TestConfigMPaper(t *testing.T) {
	c := Paper()
	for _, tc := range []struct {
		design combin.Design
		k      int
		want   *big.Rat
	}{
		{combin.Uniform, 4, big.NewRat(1365, 1541)},
		{combin.Balanced, 4, big.NewRat(1, 1)},
		{combin.Uniform, 1, new(big.Rat)},
		{combin.Balanced, 1, new(big.Rat)},
	} {
		c.Design, c.Sets = tc.design, tc.k
		m, err := c.M()
		if err != nil || m.Cmp(tc.want) != 0 {
			t.Errorf("%v K = %d: M() = %v, %v; want %v", tc.design, tc.k, m, err, tc.want)
		}
		mf, err := c.MFloat()
		if want, _ := tc.want.Float64(); err != nil || mf != want {
			t.Errorf("%v K = %d: MFloat() = %v, %v; want %v", tc.design, tc.k, mf, err, want)
		}
	}
	if _, err := (Config{}).M(); err == nil {
		t.Error("M() of the zero Config succeeded")
	}
	if _, err := (Config{}).MFloat(); err == nil {
		t.Error("MFloat() of the zero Config succeeded")
	}
}

// TestConfigMRapid checks M against its definitions over random configs:
// uniform, (N1/n)(1 - MissProb) - 1 from combin's exact miss probability;
// balanced, E[#covered traces]/n - 1 with every trace covered when K*n >= N1
// and K*n traces covered (disjoint sets) otherwise.
func TestConfigMRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n1 := rapid.IntRange(1, 12).Draw(t, "N1")
		n := rapid.IntRange(1, n1).Draw(t, "n")
		fam, err := combin.Subsets(n1, n)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := fam.Count64()
		k := rapid.IntRange(1, int(min(size, 20))).Draw(t, "K")
		c := Config{SearchTraces: n1, SetSize: n, Sets: k, AggregationsPerSet: 1}
		m, err := c.M()
		if err != nil {
			t.Fatal(err)
		}
		miss, err := fam.MissProb(k)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Rat).Sub(big.NewRat(1, 1), miss)
		want.Mul(want, big.NewRat(int64(n1), int64(n)))
		want.Sub(want, big.NewRat(1, 1))
		if m.Cmp(want) != 0 {
			t.Fatalf("uniform M = %v, want (N1/n)(1 - %v) - 1 = %v", m, miss, want)
		}
		c.Design = combin.Balanced
		if m, err = c.M(); err != nil {
			t.Fatal(err)
		}
		covered := min(n1, k*n)
		want = big.NewRat(int64(covered-n), int64(n))
		if m.Cmp(want) != 0 {
			t.Fatalf("balanced M = %v, want %d/%d - 1 = %v", m, covered, n, want)
		}
	})
}

// TestConfigMLarge: configurations whose exact M is too costly still get
// MFloat. At N1 = 64, n = 32 a set avoids a given trace with probability
// C(63, 32)/C(64, 32) = 1/2, so K = 2^16 sets miss it with probability
// about 2^-65536 and M = (64/32) q_K - 1 = 1 to every float64 digit.
func TestConfigMLarge(t *testing.T) {
	c := Config{SearchTraces: 64, SetSize: 32, Sets: 1 << 16, AggregationsPerSet: 1}
	m, err := c.MFloat()
	if err != nil || m != 1 {
		t.Errorf("N1 = 64, n = 32, K = 2^16: MFloat() = %v, %v; want 1", m, err)
	}
	if exact, err := c.M(); err == nil && exact.Cmp(big.NewRat(1, 1)) >= 0 {
		t.Errorf("M() = %v, want below 1 (q_K < 1) or an error", exact)
	}
	w, err := c.RoleWeights(LossOptions{})
	if err != nil || w.SearchFloat != m || w.SearchMultiplier != 1 {
		t.Errorf("RoleWeights = %+v, %v; want SearchFloat = SearchMultiplier = 1", w, err)
	}
	// N1 = 2^20, n = 2^19, K = 2: a family of C(2^20, 2^19) sets, about
	// 2^1048566.
	c = Config{SearchTraces: 1 << 20, SetSize: 1 << 19, Sets: 2, AggregationsPerSet: 1}
	if m, err := c.MFloat(); err != nil || math.Abs(m-0.5) > 1e-9 {
		// Two random halves cover a trace with probability 3/4: M = 2*3/4 - 1.
		t.Errorf("N1 = 2^20, n = 2^19, K = 2: MFloat() = %v, %v; want 0.5", m, err)
	}
}

// TestRoleWeightsPaper checks the role weights at the paper's configuration
// against the values derived by hand: M = 1365/1541, a = N2 - 1 = 3
// (WithinSet) or N2 = 4 (LeaveOneOut), K = 4, N1 = 8, K*N2 = 16, N1 + K*N2
// = 24.
func TestRoleWeightsPaper(t *testing.T) {
	c := Paper()
	for _, tc := range []struct {
		b           AggregationBaseline
		r           loss.Reduction
		split       bool
		search, agg string
	}{
		{WithinSet, loss.Sum, false, "1365/1541", "12"},
		{LeaveOneOut, loss.Sum, false, "1365/1541", "16"},
		{WithinSet, loss.SeqMeanTokenSum, true, "1365/12328", "3/4"},
		{LeaveOneOut, loss.SeqMeanTokenSum, true, "1365/12328", "1"},
		{WithinSet, loss.SeqMeanTokenSum, false, "455/12328", "1/2"},
		{LeaveOneOut, loss.SeqMeanTokenSum, false, "455/12328", "2/3"},
		{WithinSet, loss.TRLRLOO, false, "455/12328", "1/2"},
		{WithinSet, loss.TRLDrGRPO, true, "1365/12328", "3/4"},
		{WithinSet, loss.SeqMeanTokenSumNorm, true, "1365/1541", "12"},
	} {
		c.AggregationBaseline = tc.b
		w, err := c.RoleWeights(LossOptions{Reduction: tc.r, SplitRoles: tc.split})
		if err != nil {
			t.Fatal(err)
		}
		if w.Search.RatString() != tc.search || w.Aggregation.RatString() != tc.agg {
			t.Errorf("%v %v: weights %v, %v; want %s, %s", tc.b, tc.r, w.Search, w.Aggregation, tc.search, tc.agg)
		}
		checkFloats(t, w)
	}
}

// checkFloats checks that w's floats are its exact weights and their
// inverses, rounded.
func checkFloats(t interface {
	Helper()
	Errorf(string, ...any)
}, w RoleWeights) {
	t.Helper()
	for _, x := range []struct {
		exact             *big.Rat
		float, multiplier float64
	}{{w.Search, w.SearchFloat, w.SearchMultiplier}, {w.Aggregation, w.AggregationFloat, w.AggregationMultiplier}} {
		f, _ := x.exact.Float64()
		inv := 0.0
		if x.exact.Sign() != 0 {
			inv, _ = new(big.Rat).Inv(x.exact).Float64()
		}
		if x.float != f || x.multiplier != inv {
			t.Errorf("weight %v: float %v, multiplier %v; want %v, %v", x.exact, x.float, x.multiplier, f, inv)
		}
	}
}

// TestRoleWeightsFollowDesign: the search weight is the design's M, for
// every design and reduction, so that a trainer scaling by
// SearchMultiplier gets an unbiased search update under Balanced too
// (where the uniform design's 1365/1541 would be 13% off).
func TestRoleWeightsFollowDesign(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n1 := rapid.IntRange(2, 10).Draw(t, "N1")
		n := rapid.IntRange(1, n1).Draw(t, "n")
		fam, _ := combin.Subsets(n1, n)
		size, _ := fam.Count64()
		c := Config{
			SearchTraces:       n1,
			SetSize:            n,
			Sets:               rapid.IntRange(1, int(min(size, 12))).Draw(t, "K"),
			AggregationsPerSet: rapid.IntRange(2, 6).Draw(t, "N2"),
			Design:             combin.Design(rapid.IntRange(0, 1).Draw(t, "design")),
		}
		b := AggregationBaseline(rapid.IntRange(0, 1).Draw(t, "baseline"))
		r := rapid.SampledFrom([]loss.Reduction{loss.Sum, loss.SeqMeanTokenSum}).Draw(t, "reduction")
		split := rapid.Bool().Draw(t, "split")
		m, err := c.M()
		if err != nil {
			t.Fatal(err)
		}
		c.AggregationBaseline = b
		w, err := c.RoleWeights(LossOptions{Reduction: r, SplitRoles: split})
		if err != nil {
			t.Fatal(err)
		}
		div := int64(1)
		if r == loss.SeqMeanTokenSum {
			div = int64(c.Generations())
			if split {
				div = int64(n1)
			}
		}
		if want := new(big.Rat).Quo(m, big.NewRat(div, 1)); w.Search.Cmp(want) != 0 {
			t.Fatalf("%+v %v %v: Search = %v, want M/%d = %v", c, b, r, w.Search, div, want)
		}
		checkFloats(t, w)
	})
}

func TestRoleWeightsZeroAndErrors(t *testing.T) {
	c := Paper()
	c.Sets = 1
	w, err := c.RoleWeights(LossOptions{})
	if err != nil || w.Search.Sign() != 0 || w.SearchMultiplier != 0 {
		t.Errorf("K = 1: %+v, %v; want a zero search weight and multiplier", w, err)
	}
	c = Paper()
	c.AggregationsPerSet = 1
	w, err = c.RoleWeights(LossOptions{Reduction: loss.SeqMeanTokenSum})
	if err != nil || w.Aggregation.Sign() != 0 || w.AggregationMultiplier != 0 {
		t.Errorf("N2 = 1 within the set: %+v, %v; want a zero aggregation weight and multiplier", w, err)
	}
	for _, tc := range []struct {
		c    Config
		b    AggregationBaseline
		r    loss.Reduction
		want string
	}{
		{c, LeaveOneOut, loss.Sum, "Config.AggregationBaseline: LeaveOneOut needs N2 >= 2"},
		{Paper(), 2, loss.Sum, "Config.AggregationBaseline: 2 is not a defined AggregationBaseline"},
		{Paper(), WithinSet, 99, "LossOptions.Reduction: 99 is not"},
		{Paper(), WithinSet, loss.TokenMean, "token-mean weights each output by its length"},
		{Paper(), WithinSet, loss.SeqMeanTokenMean, "the loss coefficients of each batch give its exact update"},
		{Config{}, WithinSet, loss.Sum, "Config.SearchTraces: 0"},
	} {
		tc.c.AggregationBaseline = tc.b
		if _, err := tc.c.RoleWeights(LossOptions{Reduction: tc.r}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RoleWeights(%v, %v) = %v, want an error with %q", tc.b, tc.r, err, tc.want)
		}
	}
	if WithinSet.String() != "WithinSet" || JointGradient.String() != "JointGradient" || Update(9).String() != "Update(9)" {
		t.Error("String methods")
	}
}

// TestHugeSizes: sizes anywhere in int's range get an error or an answer
// from every method that takes a Config, never a panic, and (the package's
// tests run in seconds) never a long computation: the hardest families,
// C(N1, N1/2) with N1 up to combin.MaxSize, included.
func TestHugeSizes(t *testing.T) {
	valid, drawn := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		drawn++
		n1 := rapid.OneOf(rapid.IntRange(-3, 70), rapid.IntRange(1<<19, combin.MaxSize), rapid.IntRange(1<<19, combin.MaxSize), rapid.IntRange(combin.MaxSize, math.MaxInt)).Draw(t, "N1")
		c := Config{
			SearchTraces:       n1,
			SetSize:            rapid.SampledFrom([]int{1, 2, n1 / 2, n1 / 2, n1 - 1, n1, -1}).Draw(t, "n"),
			Sets:               rapid.SampledFrom([]int{1, 2, 3, 1 << 16, 1 << 16, 1 << 23, math.MaxInt}).Draw(t, "K"),
			AggregationsPerSet: rapid.SampledFrom([]int{1, 4, 4, 1 << 20}).Draw(t, "N2"),
			Ordered:            rapid.Bool().Draw(t, "ordered"),
			Design:             combin.Design(rapid.IntRange(0, 1).Draw(t, "design")),
		}
		err := c.Validate()
		mf, err2 := c.MFloat()
		if (err == nil) != (err2 == nil) || err == nil && !(mf >= 0 && mf <= (float64(c.SearchTraces)/float64(c.SetSize)-1)*(1+1e-9)) {
			t.Fatalf("%+v: Validate %v, MFloat %v, %v", c, err, mf, err2)
		}
		_, _ = c.M()
		_, _ = c.RoleWeights(LossOptions{Reduction: loss.SeqMeanTokenSum})
		if err == nil {
			valid++
			if c.PlanSize() <= 1<<16 {
				if _, err := c.Plan(1, 2, 3); err != nil {
					t.Fatalf("%+v: valid, but Plan: %v", c, err)
				}
			}
		}
	})
	// A tenth of the draws, whatever the number of checks (-short and
	// -rapid.checks change it), must be valid for the test to mean much.
	if valid*10 < drawn {
		t.Errorf("only %d of %d configurations drawn were valid", valid, drawn)
	}
}

// TestValidConfigSeesEveryField: validConfig.same tells a remembered Config
// from one that differs in any single field, every field of Config and of
// the structs it holds found by reflection, and from the same Config whose
// Overlong punishment was changed in place. A field added to Config and
// not compared by same fails here.
func TestValidConfigSeesEveryField(t *testing.T) {
	base := func() Config {
		c := Paper()
		c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096})
		o := lengthgate.NewSoftOverlong(4096, 1024)
		c.Overlong = &o
		c.RewardRange = advantage.RewardRange{Low: 0.1, High: 0.9}
		return c
	}
	var v validConfig
	c := base()
	if err := v.validate(&c); err != nil {
		t.Fatal(err)
	}
	if !v.same(&c) {
		t.Fatal("a remembered Config is not the same as itself")
	}
	if again := base(); !v.same(&again) {
		t.Error("an equal Config whose Overlong points elsewhere is not the same")
	}
	// change sets one leaf field of x (a Config or a struct in it) to another
	// value, for every leaf, and checks that same notices.
	var change func(path string, x reflect.Value, c *Config)
	change = func(path string, x reflect.Value, c *Config) {
		for i := range x.NumField() {
			f, name := x.Field(i), path+x.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Struct:
				change(name+".", f, c)
				continue
			case reflect.Int:
				f.SetInt(f.Int() + 1)
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Float64:
				f.SetFloat(f.Float() + 0.5)
			case reflect.Pointer:
				o := *c.Overlong
				o.Buffer++
				f.Set(reflect.ValueOf(&o))
			default:
				t.Fatalf("%s: kind %v not changed by the test", name, f.Kind())
			}
			if v.same(c) {
				t.Errorf("Config.%s changed: same still reports the remembered Config", name)
			}
			*c = base()
		}
	}
	c = base()
	change("", reflect.ValueOf(&c).Elem(), &c)
	for _, f := range []func(o *lengthgate.SoftOverlong){
		func(o *lengthgate.SoftOverlong) { o.MaxLength++ },
		func(o *lengthgate.SoftOverlong) { o.Buffer++ },
		func(o *lengthgate.SoftOverlong) { o.Factor = 0 },
	} {
		c = base()
		f(c.Overlong)
		if v.same(&c) {
			t.Errorf("Overlong changed to %+v: same still reports the remembered Config", *c.Overlong)
		}
	}
	c = base()
	c.Overlong = nil
	if v.same(&c) {
		t.Error("Overlong nil: same still reports the remembered Config")
	}
}

// TestRememberedConfig: a BatchCredit reused across calls with Configs
// changed between them (valid and invalid, the Overlong punishment also
// changed in place through the same pointer) gives the errors and the
// credit, bit for bit, of a fresh BatchCredit for each call: remembering
// a valid Config never skips a check that would fail.
func TestRememberedConfig(t *testing.T) {
	c0 := benchConfig()
	pool := []Batch{paperBatch(c0, 3, 1), paperBatch(c0, 2, 2)}
	rapid.Check(t, func(t *rapid.T) {
		c := c0
		o := lengthgate.NewSoftOverlong(4096, 1024)
		var reused BatchCredit
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			switch rapid.IntRange(0, 7).Draw(t, "change") {
			case 1:
				c.Gates.Search.Target = rapid.SampledFrom([]int{-1, 0, 4096, 100}).Draw(t, "target")
			case 2:
				c.Gates.Aggregation.Boundary = lengthgate.Boundary(rapid.IntRange(0, 2).Draw(t, "boundary"))
			case 3:
				c.Overlong = rapid.SampledFrom([]*lengthgate.SoftOverlong{nil, &o}).Draw(t, "overlong")
			case 4:
				o.Factor = rapid.SampledFrom([]float64{1, 0.5, 0, -1, math.NaN()}).Draw(t, "factor") // in place
			case 5:
				c.RewardRange = rapid.SampledFrom([]advantage.RewardRange{{}, {Low: 0.2, High: 0.8}, {Low: 0.8, High: 0.2}, {Low: math.NaN(), High: 1}}).Draw(t, "range")
			case 6:
				c.AggregationBaseline = AggregationBaseline(rapid.IntRange(0, 2).Draw(t, "baseline"))
			case 7:
				c.Order = combin.Order(rapid.SampledFrom([]int{0, 1, 5}).Draw(t, "order"))
			}
			in := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "batch")]
			var fresh BatchCredit
			errReused, errFresh := c.CreditBatch(&reused, in), c.CreditBatch(&fresh, in)
			if fmt.Sprint(errReused) != fmt.Sprint(errFresh) {
				t.Fatalf("step %d, %+v: reused BatchCredit: %v; fresh: %v", step, c, errReused, errFresh)
			}
			if errFresh != nil {
				continue
			}
			for _, pair := range [][2][]float64{{reused.Search, fresh.Search}, {reused.Aggregation, fresh.Aggregation}} {
				if !slices.EqualFunc(pair[0], pair[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
					t.Fatalf("step %d, %+v: reused %v, fresh %v", step, c, pair[0], pair[1])
				}
			}
		}
	})
}
