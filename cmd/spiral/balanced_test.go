package main

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"spiral"
	"spiral/combin"
)

// TestConstantsBalanced checks constants -balanced against the balanced
// design's definitions: every trace covered when K n >= N (M = N/n - 1, 1 at
// the paper's configuration), K n of N traces covered by disjoint sets
// otherwise, and spiral.Config.M for the same configuration.
func TestConstantsBalanced(t *testing.T) {
	for _, tc := range []struct {
		N, n, K             int
		miss, cover, m      string
		expectedAppearances float64
	}{
		{8, 4, 4, "0/1", "1/1", "1/1", 2},
		{8, 3, 4, "0/1", "1/1", "5/3", 1.5},
		{10, 2, 3, "2/5", "3/5", "2/1", 0.6},
	} {
		stdout, stderr, code := runCmd(t, "", "constants", "-traces", strconv.Itoa(tc.N), "-size", strconv.Itoa(tc.n), "-sets", strconv.Itoa(tc.K), "-balanced")
		if code != exitOK {
			t.Fatalf("N=%d n=%d K=%d: exit %d, stderr %q", tc.N, tc.n, tc.K, code, stderr)
		}
		var got constantsOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		if deref(got.MissProb) != tc.miss || deref(got.CoverProb) != tc.cover || deref(got.M) != tc.m || got.ExpectedAppearances != tc.expectedAppearances {
			t.Errorf("N=%d n=%d K=%d: got %+v, want miss %s cover %s m %s appearances %v", tc.N, tc.n, tc.K, got, tc.miss, tc.cover, tc.m, tc.expectedAppearances)
		}
		c := spiral.Config{SearchTraces: tc.N, SetSize: tc.n, Sets: tc.K, AggregationsPerSet: 1, Design: combin.Balanced}
		m, err := c.M()
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := new(big.Rat).SetString(deref(got.M)); m.Cmp(want) != 0 {
			t.Errorf("N=%d n=%d K=%d: m = %s, Config.M() = %v", tc.N, tc.n, tc.K, deref(got.M), m)
		}
	}
	_, stderr, code := runCmd(t, "", "constants", "-traces", "8", "-size", "4", "-sets", "4", "-balanced", "-ordered")
	if code != exitUsage || !strings.Contains(stderr, "-balanced: balanced tuples") {
		t.Errorf("-balanced -ordered: exit %d, stderr %q", code, stderr)
	}
}

// TestPlanBalanced checks that plan -balanced writes balanced plans: at the
// paper's configuration every trace is in exactly 2 of the 4 sets.
func TestPlanBalanced(t *testing.T) {
	stdout, stderr, code := runCmd(t, "", "plan", "-traces", "8", "-size", "4", "-sets", "4", "-balanced", "-seed", "7", "-problems", "50")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	c := spiral.Paper()
	c.Design = combin.Balanced
	for i, line := range lines {
		var p struct{ Sets [][]int }
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := c.CheckPlan(spiral.Plan{Sets: p.Sets}); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var counts [8]int
		for _, g := range p.Sets {
			for _, y := range g {
				counts[y]++
			}
		}
		if counts != [8]int{2, 2, 2, 2, 2, 2, 2, 2} {
			t.Fatalf("line %d: appearances %v, want 2 each", i+1, counts)
		}
	}
}

// deref returns *s, or "null" for nil.
func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
