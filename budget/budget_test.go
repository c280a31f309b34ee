package budget

import (
	"errors"
	"strings"
	"testing"

	"spiral"
	"spiral/rsa"
)

func TestBudgetPaper(t *testing.T) {
	// Section 4, Table 1: 8*4096 + 4*4*4096 = 98,304 = 12*8192.
	s, err := SPIRAL(spiral.Paper(), PaperLimits(300))
	if err != nil {
		t.Fatal(err)
	}
	g, err := PaperGRPO().Budget(300)
	if err != nil {
		t.Fatal(err)
	}
	if s.Generated() != 98304 || g.Generated() != 98304 {
		t.Errorf("Generated: SPIRAL %d, GRPO %d; want 98304 for both", s.Generated(), g.Generated())
	}
	// Hand-derived from the formulas, prompt 300 tokens, candidates 4*4096.
	wantS := Budget{
		SearchCalls:          8,
		AggregationCalls:     16,
		SearchGenerated:      8 * 4096,
		AggregationGenerated: 16 * 4096,
		SearchPrefill:        8 * 300,
		AggregationPrefill:   16 * (300 + 4*4096), // 266,944
		CachedPrefill:        300 + 4*(300+4*4096),
	}
	if s != wantS {
		t.Errorf("SPIRAL budget = %+v, want %+v", s, wantS)
	}
	if s.AggregationPrefill != 266944 || s.Prefill() != 269344 || s.Calls() != 24 {
		t.Errorf("AggregationPrefill, Prefill, Calls = %d, %d, %d; want 266944, 269344, 24", s.AggregationPrefill, s.Prefill(), s.Calls())
	}
	wantG := Budget{SearchCalls: 12, SearchGenerated: 98304, SearchPrefill: 3600, CachedPrefill: 300}
	if g != wantG {
		t.Errorf("GRPO budget = %+v, want %+v", g, wantG)
	}
}

func TestBudgetErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"bad config", func() error { _, err := SPIRAL(spiral.Config{}, PaperLimits(0)); return err }(), "Config.SearchTraces: 0 < 1"},
		{"negative prompt", func() error {
			_, err := SPIRAL(spiral.Paper(), Limits{Prompt: -1, Search: 1, Aggregation: 1})
			return err
		}(), "budget: Limits.Prompt: -1 < 0"},
		{"zero search", func() error { _, err := SPIRAL(spiral.Paper(), Limits{Aggregation: 1}); return err }(), "budget: Limits.Search: 0 < 1"},
		{"zero aggregation", func() error { _, err := SPIRAL(spiral.Paper(), Limits{Search: 1}); return err }(), "budget: Limits.Aggregation: 0 < 1"},
		{"bad GRPO", func() error { _, err := (GRPO{Group: 0, MaxLength: -3}).Budget(0); return err }(), "budget: GRPO.MaxLength: -3 < 1"},
		{"GRPO prompt", func() error { _, err := PaperGRPO().Budget(-5); return err }(), "budget: prompt: -5 < 0"},
	}
	for _, tt := range tests {
		var e *InputError
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) || !errors.As(tt.err, &e) {
			t.Errorf("%s: error %v, want an *InputError containing %q", tt.name, tt.err, tt.want)
		}
	}
	// Every bad GRPO field is named at once.
	err := (GRPO{}).Validate()
	if err == nil || !strings.Contains(err.Error(), "budget: GRPO.Group: 0 < 1") || !strings.Contains(err.Error(), "budget: GRPO.MaxLength: 0 < 1") {
		t.Errorf("GRPO{}.Validate() = %v, want both fields named", err)
	}
}

func TestBudgetRSA(t *testing.T) {
	// P = 8, n = 4, T = 10, prompt 300, search 4096, aggregation 2048:
	// step 1 reads search traces, steps 2..10 read aggregation outputs.
	b, err := RSA(rsa.Paper(), Limits{Prompt: 300, Search: 4096, Aggregation: 2048})
	if err != nil {
		t.Fatal(err)
	}
	want := Budget{
		SearchCalls:          8,
		AggregationCalls:     80,
		SearchGenerated:      8 * 4096,
		AggregationGenerated: 80 * 2048,
		SearchPrefill:        8 * 300,
		AggregationPrefill:   8*(300+4*4096) + 9*8*(300+4*2048),
		CachedPrefill:        300 + 8*(300+4*4096) + 9*8*(300+4*2048),
	}
	if b != want {
		t.Errorf("RSA budget = %+v, want %+v", b, want)
	}
	zero := rsa.Paper()
	zero.Steps = 0
	b, err = RSA(zero, PaperLimits(300))
	if err != nil || b != (Budget{SearchCalls: 8, SearchGenerated: 8 * 4096, SearchPrefill: 2400, CachedPrefill: 300}) {
		t.Errorf("T = 0: %+v, %v", b, err)
	}
}

// TestBudgetUnequalLimits: with different maximum lengths for the two roles,
// an aggregation prompt reads n search traces (Limits.Search each), while
// aggregation outputs are counted at Limits.Aggregation. (The paper's 4096
// for both cannot tell the two apart.)
func TestBudgetUnequalLimits(t *testing.T) {
	b, err := SPIRAL(spiral.Paper(), Limits{Prompt: 100, Search: 3000, Aggregation: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := Budget{
		SearchCalls:          8,
		AggregationCalls:     16,
		SearchGenerated:      8 * 3000,
		AggregationGenerated: 16 * 1000,
		SearchPrefill:        8 * 100,
		AggregationPrefill:   16 * (100 + 4*3000),
		CachedPrefill:        100 + 4*(100+4*3000),
	}
	if b != want {
		t.Errorf("budget = %+v, want %+v", b, want)
	}
}
