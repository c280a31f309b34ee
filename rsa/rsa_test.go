package rsa

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/stat/distuv"
	"pgregory.net/rapid"

	"spiral/combin"
)

func TestRSAValidate(t *testing.T) {
	tests := []struct {
		r    Config
		want []string
	}{
		{Config{}, []string{"rsa: Config.Population: 0 < 1", "rsa: Config.SetSize: 0 < 1"}},
		{Config{Population: 4, SetSize: 5, Steps: -1}, []string{"rsa: Config.SetSize: 5 > P = 4", "rsa: Config.Steps: -1 < 0"}},
		{Config{Population: 4, SetSize: 4, Steps: 1, Sets: DistinctSets}, []string{"rsa: Config.Sets: DistinctSets needs P = 4 <= C(P, n) = C(4, 4) = 1"}},
		{Config{Population: 8, SetSize: 4, Steps: 1, Sets: 3, Order: 4}, []string{"rsa: Config.Sets: 3 is not a defined SetRule", "rsa: Config.Order: 4 is not a defined Order"}},
		{Config{Population: 8, SetSize: 4, Steps: combin.MaxSize}, []string{"exceed 16777216, the most a schedule holds"}},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		if err == nil {
			t.Errorf("%+v: Validate() = nil", tt.r)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: Validate() = %q, want %q in it", tt.r, err, w)
			}
		}
	}
	// A huge population with no steps has an empty schedule: valid. One
	// step of it is refused for the schedule's true size.
	for _, p := range []int{combin.MaxSize + 1, 1 << 30, math.MaxInt} {
		r := Config{Population: p, SetSize: 1, Steps: 0}
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", r, err)
		}
		if s, err := r.Schedule(rand.New(rand.NewPCG(1, 2))); err != nil || len(s) != 0 {
			t.Errorf("%+v: Schedule() = %v, %v; want no steps", r, s, err)
		}
		r.Steps = 1
		want := fmt.Sprintf("T*P*n = 1*%d*1 indices exceed 16777216, the most a schedule holds", p)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: Validate() = %v, want %q in it", r, err, want)
		}
	}
	// P = C(P, n) = 5 distinct subsets: just enough.
	if r := (Config{Population: 5, SetSize: 4, Steps: 1, Sets: DistinctSets}); r.Validate() != nil {
		t.Errorf("%+v: Validate() = %v, want nil", r, r.Validate())
	}
	// Every refusal is an *InputError naming the field or argument.
	var e *InputError
	if err := (Config{Population: 4, SetSize: 5, Steps: 1}).Validate(); !errors.As(err, &e) || e.Field != "Config.SetSize" || e.Value != 5 {
		t.Errorf("Validate() = %v, want an *InputError about Config.SetSize = 5", err)
	}
	if _, err := Paper().Schedule(nil); !errors.As(err, &e) || e.Field != "rnd" {
		t.Errorf("Schedule(nil) = %v, want an *InputError about rnd", err)
	}
	if _, err := Paper().Schedule(nil); err == nil {
		t.Error("Schedule(nil): nil error")
	}
	if _, err := (Config{}).Schedule(rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("Config{}.Schedule: nil error")
	}
}

// checkSchedule checks that s is a valid schedule of r: T steps of P sets,
// each of n distinct indices in [0, P), ascending under combin.IndexOrder, and the
// sets of a step distinct under DistinctSets.
func checkSchedule(t interface{ Fatalf(string, ...any) }, r Config, s [][][]int) {
	if len(s) != r.Steps {
		t.Fatalf("%d steps, want %d", len(s), r.Steps)
	}
	for st, step := range s {
		if len(step) != r.Population {
			t.Fatalf("step %d: %d sets, want P = %d", st, len(step), r.Population)
		}
		seen := map[string]bool{}
		for i, set := range step {
			if len(set) != r.SetSize {
				t.Fatalf("step %d set %d = %v: want n = %d indices", st, i, set, r.SetSize)
			}
			sorted := slices.Sorted(slices.Values(set))
			for j, x := range sorted {
				if x < 0 || x >= r.Population || (j > 0 && sorted[j-1] == x) {
					t.Fatalf("step %d set %d = %v: not n distinct indices in [0, %d)", st, i, set, r.Population)
				}
			}
			if r.Order == combin.IndexOrder && !slices.Equal(sorted, set) {
				t.Fatalf("step %d set %d = %v: not ascending under combin.IndexOrder", st, i, set)
			}
			key := fmt.Sprint(sorted)
			if r.Sets == DistinctSets && seen[key] {
				t.Fatalf("step %d: set %d = %v repeats an earlier set under DistinctSets", st, i, set)
			}
			seen[key] = true
		}
	}
}

func TestRSAScheduleProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := rapid.IntRange(1, 12).Draw(rt, "P")
		n := rapid.IntRange(1, p).Draw(rt, "n")
		r := Config{
			Population: p,
			SetSize:    n,
			Steps:      rapid.IntRange(0, 6).Draw(rt, "T"),
			Sets:       SetRule(rapid.IntRange(0, 1).Draw(rt, "rule")),
			Order:      combin.Order(rapid.IntRange(0, 1).Draw(rt, "order")),
		}
		seed := rapid.Uint64().Draw(rt, "seed")
		s, err := r.Schedule(rand.New(rand.NewPCG(seed, 7)))
		if r.Validate() != nil {
			if err == nil {
				rt.Fatalf("%+v is invalid but Schedule returned no error", r)
			}
			return
		}
		if err != nil {
			rt.Fatalf("Schedule: %v", err)
		}
		checkSchedule(rt, r, s)
		again, _ := r.Schedule(rand.New(rand.NewPCG(seed, 7)))
		if !slices.EqualFunc(s, again, func(a, b [][]int) bool { return slices.EqualFunc(a, b, slices.Equal) }) {
			rt.Fatalf("same seed, different schedules")
		}
	})
}

// TestRSARepeatRate checks the rule that tells the modes apart: at P = 8,
// n = 4, a step of IndependentSets repeats some subset with probability
// 1 - (70)_8/70^8 (the birthday problem over 70 subsets), DistinctSets never.
func TestRSARepeatRate(t *testing.T) {
	want := 1.0
	for i := range 8 {
		want *= float64(70-i) / 70
	}
	want = 1 - want // 0.33973
	const steps = 4000
	r := Config{Population: 8, SetSize: 4, Steps: steps}
	for _, rule := range []SetRule{IndependentSets, DistinctSets} {
		r.Sets = rule
		s, err := r.Schedule(rand.New(rand.NewPCG(11, 12)))
		if err != nil {
			t.Fatal(err)
		}
		repeats := 0
		for _, step := range s {
			seen := map[[4]int]bool{}
			dup := false
			for _, set := range step {
				k := [4]int(set)
				dup = dup || seen[k]
				seen[k] = true
			}
			if dup {
				repeats++
			}
		}
		got := float64(repeats) / steps
		if rule == DistinctSets {
			if repeats != 0 {
				t.Errorf("DistinctSets: %d steps with a repeated subset", repeats)
			}
			continue
		}
		se := math.Sqrt(want * (1 - want) / steps)
		if math.Abs(got-want) > 5*se {
			t.Errorf("IndependentSets: repeat rate %.4f, want %.4f ± 5*%.4f", got, want, se)
		}
	}
}

// TestRSAUniform checks, by a chi-square test at a fixed seed, that member
// 0's subset is uniform over the 70 subsets under both rules, and that
// combin.Shuffled puts the smallest index of a set at each of the 4 positions
// uniformly. Thresholds are the chi-square quantiles at 1 - 1e-6.
func TestRSAUniform(t *testing.T) {
	const steps = 7000
	for _, rule := range []SetRule{IndependentSets, DistinctSets} {
		r := Config{Population: 8, SetSize: 4, Steps: steps, Sets: rule, Order: combin.Shuffled}
		s, err := r.Schedule(rand.New(rand.NewPCG(3, uint64(rule))))
		if err != nil {
			t.Fatal(err)
		}
		subsets := map[[4]int]float64{}
		var pos [4]float64
		for _, step := range s {
			set := step[0]
			subsets[[4]int(slices.Sorted(slices.Values(set)))]++
			pos[slices.Index(set, slices.Min(set))]++
		}
		if len(subsets) != 70 {
			t.Errorf("%v: %d distinct subsets seen for member 0, want 70", rule, len(subsets))
		}
		chi := 0.0
		for _, c := range subsets {
			e := float64(steps) / 70
			chi += (c - e) * (c - e) / e
		}
		chi += float64(70-len(subsets)) * float64(steps) / 70
		if lim := (distuv.ChiSquared{K: 69}).Quantile(1 - 1e-6); chi > lim {
			t.Errorf("%v: subsets chi-square %.1f > %.1f", rule, chi, lim)
		}
		chi = 0
		for _, c := range pos {
			e := float64(steps) / 4
			chi += (c - e) * (c - e) / e
		}
		if lim := (distuv.ChiSquared{K: 3}).Quantile(1 - 1e-6); chi > lim {
			t.Errorf("%v: position of the minimum chi-square %.1f > %.1f (counts %v)", rule, chi, lim, pos)
		}
	}
}

// TestScheduleGolden pins schedules for one seed: a change of algorithm,
// machine or Go release that changes them fails here.
func TestScheduleGolden(t *testing.T) {
	s, err := Paper().Schedule(rand.New(rand.NewPCG(2026, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 4, 5, 7}, {0, 1, 6, 7}, {2, 4, 5, 6}, {0, 1, 4, 7}, {2, 4, 5, 6}, {0, 2, 6, 7}, {2, 3, 4, 6}, {0, 2, 5, 6}}
	if diff := cmp.Diff(want, s[0]); diff != "" {
		t.Errorf("RSA schedule step 0 for seed (2026, 1) changed (-want +got):\n%s", diff)
	}
	r := Config{Population: 8, SetSize: 4, Steps: 2, Sets: DistinctSets, Order: combin.Shuffled}
	s, err = r.Schedule(rand.New(rand.NewPCG(2026, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want2 := [][][]int{
		{{7, 5, 4, 0}, {6, 7, 0, 1}, {5, 6, 4, 2}, {5, 1, 7, 0}, {2, 0, 1, 5}, {3, 0, 4, 7}, {1, 2, 0, 7}, {3, 1, 0, 4}},
		{{1, 5, 3, 4}, {4, 7, 2, 0}, {4, 3, 6, 7}, {7, 1, 6, 3}, {4, 6, 7, 5}, {1, 7, 0, 3}, {1, 0, 6, 2}, {1, 5, 7, 0}},
	}
	if diff := cmp.Diff(want2, s); diff != "" {
		t.Errorf("%+v schedule for seed (2026, 1) changed (-want +got):\n%s", r, diff)
	}
}
