//go:build !(386 || arm || mips || mipsle || wasm)

package budget

import (
	"math"
	"strings"
	"testing"

	"spiral"
	"spiral/rsa"
)

// Token counts are int64; the cases below need an int of 64 bits to reach
// an int64 overflow through the int fields of Limits, GRPO and rsa.Config.

func TestBudgetOverflow(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"search", func() error {
			_, err := SPIRAL(spiral.Paper(), Limits{Search: math.MaxInt64 / 4, Aggregation: 1})
			return err
		}()},
		{"prefill", func() error {
			_, err := SPIRAL(spiral.Paper(), Limits{Prompt: math.MaxInt64 / 16, Search: 1, Aggregation: 1})
			return err
		}()},
		{"GRPO", func() error { _, err := (GRPO{Group: 3, MaxLength: math.MaxInt64 / 2}).Budget(0); return err }()},
		{"RSA", func() error {
			_, err := RSA(rsa.Paper(), Limits{Search: math.MaxInt64 / 2, Aggregation: 1})
			return err
		}()},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), "overflows") {
			t.Errorf("%s: error %v, want an overflow", tt.name, tt.err)
		}
	}
	if _, err := RSA(rsa.Config{Population: 8, SetSize: 4, Steps: 1 << 40}, PaperLimits(0)); err == nil {
		t.Error("T = 2^40: nil error")
	}
}

// TestBudgetSumOverflow: every product fits in int64 but Generated's sum
// SearchGenerated + AggregationGenerated = 8*(MaxInt64/8) + 8 does not.
func TestBudgetSumOverflow(t *testing.T) {
	c := spiral.Config{SearchTraces: 8, SetSize: 1, Sets: 1, AggregationsPerSet: 1}
	if _, err := SPIRAL(c, Limits{Search: math.MaxInt64 / 8, Aggregation: 7}); err != nil {
		t.Errorf("sum MaxInt64: %v", err)
	}
	if _, err := SPIRAL(c, Limits{Search: math.MaxInt64 / 8, Aggregation: 8}); err == nil || !strings.Contains(err.Error(), "overflows int64") {
		t.Errorf("sum MaxInt64 + 1: error %v, want overflow", err)
	}
}
