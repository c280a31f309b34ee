package budget_test

import (
	"fmt"

	"spiral"
	"spiral/budget"
	"spiral/rsa"
)

// Matched generated-token ceilings, as in the paper's Table 1, and the
// prefill it does not count: every aggregation call also reads n = 4
// candidate traces of up to 4096 tokens. The prompt length (300 tokens) is
// illustrative.
func Example() {
	s, err := budget.SPIRAL(spiral.Paper(), budget.PaperLimits(300))
	if err != nil {
		panic(err)
	}
	g, err := budget.PaperGRPO().Budget(300)
	if err != nil {
		panic(err)
	}
	r, err := budget.RSA(rsa.Paper(), budget.PaperLimits(300))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%-7s %6s %9s %8s %14s\n", "method", "calls", "generated", "prefill", "cached prefill")
	for _, m := range []struct {
		name string
		b    budget.Budget
	}{{"SPIRAL", s}, {"GRPO", g}, {"RSA", r}} {
		fmt.Printf("%-7s %6d %9d %8d %14d\n", m.name, m.b.Calls(), m.b.Generated(), m.b.Prefill(), m.b.CachedPrefill)
	}
	// Output:
	// method   calls generated  prefill cached prefill
	// SPIRAL      24     98304   269344          67036
	// GRPO        12     98304     3600            300
	// RSA         88    360448  1337120        1335020
}
