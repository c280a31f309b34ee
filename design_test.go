package spiral

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral/combin"
)

func TestDesignValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // substring of the error; "" for valid
	}{
		{"paper balanced", func(c *Config) { c.Design = Balanced }, ""},
		{"balanced shuffled", func(c *Config) { c.Design = Balanced; c.Order = Shuffled }, ""},
		{"balanced tuples", func(c *Config) { c.Design = Balanced; c.Family = Tuples }, "Design = Balanced with Family = Tuples"},
		{"undefined", func(c *Config) { c.Design = 7 }, "Design = 7 is neither"},
		{"balanced K = family", func(c *Config) { c.Design = Balanced; c.Sets = 70 }, ""},
		{"balanced K > family", func(c *Config) { c.Design = Balanced; c.Sets = 71 }, "Sets (K) = 71 > C(8, 4) = 70"},
	} {
		c := Paper()
		tc.edit(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestDesignJSON(t *testing.T) {
	c := Paper()
	c.Design = Balanced
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"design":"balanced"`) {
		t.Fatalf("Marshal = %s, want a \"design\":\"balanced\" field", b)
	}
	var got Config
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got != c {
		t.Fatalf("round trip = %+v, want %+v", got, c)
	}
	if err := json.Unmarshal([]byte(`{"design":"fancy"}`), &got); err == nil || !strings.Contains(err.Error(), `"fancy"`) {
		t.Fatalf("Unmarshal of an unknown design: err = %v, want one naming \"fancy\"", err)
	}
}

// TestConfigMPaper checks Config.M against the constants derived by hand
// from the paper: q_K = 1 - 88/1541 gives M = 2*1453/1541 - 1 = 1365/1541 for
// the uniform design; the balanced design covers all 8 traces, M = 8/4 - 1.
func TestConfigMPaper(t *testing.T) {
	c := Paper()
	m, err := c.M()
	if err != nil {
		t.Fatal(err)
	}
	if want := big.NewRat(1365, 1541); m.Cmp(want) != 0 {
		t.Errorf("Paper().M() = %v, want %v", m, want)
	}
	c.Design = Balanced
	if m, err = c.M(); err != nil {
		t.Fatal(err)
	} else if m.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("balanced M() = %v, want 1", m)
	}
	c.Sets = 1
	c.Design = Uniform
	if m, err = c.M(); err != nil || m.Sign() != 0 {
		t.Errorf("K = 1: M() = %v, %v; want 0", m, err)
	}
	if _, err := (Config{}).M(); err == nil {
		t.Error("M() of the zero Config succeeded")
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
		c.Design = Balanced
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

// TestBalancedPlans checks that the Balanced design's plans are valid,
// distinct, balanced, in the configured order, and reproducible.
func TestBalancedPlans(t *testing.T) {
	for _, order := range []Order{IndexOrder, Shuffled} {
		c := Paper()
		c.Design = Balanced
		c.Order = order
		p, err := c.NewPlanner()
		if err != nil {
			t.Fatal(err)
		}
		rnd := rand.New(rand.NewPCG(2026, 10))
		const problems = 500
		flat := make([]int, problems*c.PlanSize())
		if err := p.PlanTo(flat, rnd); err != nil {
			t.Fatal(err)
		}
		var chk planChecker
		for q := range problems {
			one := flat[q*c.PlanSize() : (q+1)*c.PlanSize()]
			if err := chk.check(c, one); err != nil {
				t.Fatalf("%v: problem %d: %v", order, q, err)
			}
			var counts [8]int
			for _, y := range one {
				counts[y]++
			}
			if counts != [8]int{2, 2, 2, 2, 2, 2, 2, 2} {
				t.Fatalf("%v: problem %d: appearances %v, want every trace twice", order, q, counts)
			}
		}
		again := make([]int, len(flat))
		if err := p.PlanTo(again, rand.New(rand.NewPCG(2026, 10))); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(flat, again) {
			t.Fatalf("%v: the same seed gave different plans", order)
		}
	}
}

// TestCheckPlanBalance checks that a plan that is valid for the Uniform
// design but not balanced is rejected under the Balanced design, naming the
// trace.
func TestCheckPlanBalance(t *testing.T) {
	c := Paper()
	plan := Plan{Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}, {0, 2, 4, 6}}}
	if err := c.CheckPlan(plan); err != nil {
		t.Fatalf("uniform: CheckPlan = %v, want nil", err)
	}
	c.Design = Balanced
	err := c.CheckPlan(plan)
	if err == nil || !strings.Contains(err.Error(), "trace 0 is in 3 groups, want 2") {
		t.Fatalf("balanced: CheckPlan = %v, want an error naming trace 0", err)
	}
	ok := Plan{Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}}
	if err := c.CheckPlan(ok); err != nil {
		t.Fatalf("balanced: CheckPlan(balanced plan) = %v, want nil", err)
	}
	// N1 = 5, K*n = 6: every trace once or twice.
	c = Config{SearchTraces: 5, SetSize: 2, Sets: 3, AggregationsPerSet: 1, Design: Balanced}
	if err := c.CheckPlan(Plan{Groups: [][]int{{0, 1}, {2, 3}, {0, 4}}}); err != nil {
		t.Fatalf("N1 = 5: CheckPlan = %v, want nil", err)
	}
	err = c.CheckPlan(Plan{Groups: [][]int{{0, 1}, {0, 2}, {0, 3}}})
	if err == nil || !strings.Contains(err.Error(), "trace 0 is in 3 groups, want 1 or 2") {
		t.Fatalf("N1 = 5: CheckPlan = %v, want an error naming trace 0", err)
	}
}
