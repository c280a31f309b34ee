package lengthgate_test

import (
	"fmt"

	"spiral/lengthgate"
)

// The paper's maximum output length is 4096 tokens per trace; it does not
// disclose L_target. With an illustrative target of 4096, three outputs of
// 1000, 4096 and 5000 tokens with the same positive advantage, and one
// overlong failure, under both boundary rules:
func ExampleGate() {
	lengths := []int{1000, 4096, 5000, 5000}
	for _, b := range []lengthgate.Boundary{lengthgate.GateAtTarget, lengthgate.KeepAtTarget} {
		adv := []float64{0.25, 0.25, 0.25, -0.75}
		r, err := lengthgate.Gate{Target: 4096, Boundary: b}.Apply(adv, lengths)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-12v %v gated %d of %d positive, mass %.2f, %d at L == target\n",
			b, adv, r.Gated, r.Positive, r.MassRemoved, r.AtTarget)
	}
	// Output:
	// GateAtTarget [0.25 0 0 -0.75] gated 2 of 3 positive, mass 0.50, 1 at L == target
	// KeepAtTarget [0.25 0.25 0 -0.75] gated 1 of 3 positive, mass 0.25, 1 at L == target
}

// Search and aggregation may use different targets. The values here are
// illustrative: search traces gated at 4096 tokens, aggregation outputs at
// 2048. The search advantages are A_search of four traces in the paper's
// worked example (A_set = +0.25, 0, -0.25, 0): one only in G1 (+0.25), one
// in G1 and G3 (0), one only in G3 (-0.25), another only in G1 (+0.25). The
// aggregation advantages are A_agg of G1, whose rewards are (1, 1, 1, 0).
func ExampleGates() {
	gates := lengthgate.Gates{
		Search:      lengthgate.Gate{Target: 4096},
		Aggregation: lengthgate.Gate{Target: 2048},
	}
	searchAdv := []float64{0.25, 0, -0.25, 0.25}
	searchLen := []int{3900, 4096, 4096, 4096}
	aggAdv := []float64{0.25, 0.25, 0.25, -0.75}
	aggLen := []int{800, 2500, 1900, 3000}

	var total lengthgate.GatesReport // accumulated across problems
	r, err := gates.Apply(searchAdv, searchLen, aggAdv, aggLen)
	if err != nil {
		fmt.Println(err)
		return
	}
	total.Add(r)
	fmt.Println("search:     ", searchAdv, "gated", total.Search.Gated)
	fmt.Println("aggregation:", aggAdv, "gated", total.Aggregation.Gated)
	// Output:
	// search:      [0.25 0 -0.25 0] gated 1
	// aggregation: [0.25 0 0.25 -0.75] gated 1
}

// The gate acts on advantages after the baselines, never on rewards. One
// set's rewards (1, 1, 1, 0), the first output overlong (illustrative):
// gating its advantage touches only its own credit; zeroing its reward
// instead moves the set mean and so every other output's advantage.
func Example_gateAfterBaselines() {
	withinSet := func(r []float64) (f float64, adv []float64) {
		for _, x := range r {
			f += x
		}
		f /= float64(len(r))
		for _, x := range r {
			adv = append(adv, x-f) // A_agg = r - f
		}
		return f, adv
	}
	lengths := []int{5000, 1000, 1000, 1000}
	gate := lengthgate.Gate{Target: 4096}

	f, adv := withinSet([]float64{1, 1, 1, 0})
	if _, err := gate.Apply(adv, lengths); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("gate the advantage: f =", f, "A =", adv)

	f, adv = withinSet([]float64{0, 1, 1, 0}) // the wrong order: reward zeroed
	fmt.Println("gate the reward:    f =", f, "A =", adv)
	// Output:
	// gate the advantage: f = 0.75 A = [0 0.25 0.25 -0.75]
	// gate the reward:    f = 0.5 A = [-0.5 0.5 0.5 -0.5]
}

// DAPO's soft overlong punishment with L_max = 4096 and an illustrative
// buffer of 1024 tokens (DAPO itself used L_max = 20480, buffer = 4096): no
// penalty up to 3072 tokens, then linear down to -1 at 4096, and -1 beyond.
// It is added to the rewards before any baseline.
func ExampleSoftOverlong() {
	s := lengthgate.NewSoftOverlong(4096, 1024)
	lengths := []int{2000, 3072, 3584, 4096, 5000}
	for _, l := range lengths {
		p, _ := s.Penalty(l)
		fmt.Printf("L = %4d: %v\n", l, p)
	}
	rewards := []float64{1, 1, 1, 1, 0}
	r, err := s.Apply(rewards, lengths)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shaped rewards:", rewards, "penalized", r.Penalized, "total", r.Total)
	// Output:
	// L = 2000: 0
	// L = 3072: 0
	// L = 3584: -0.5
	// L = 4096: -1
	// L = 5000: -1
	// shaped rewards: [1 1 0.5 0 -1] penalized 3 total -2.5
}

// DAPO's overlong filtering with L_max = 4096: outputs that reached the
// limit are taken as truncated and removed from the loss (their rewards
// still count in the baselines).
func ExampleOverlongFilter() {
	f := lengthgate.OverlongFilter{MaxLength: 4096}
	lengths := []int{1000, 4095, 4096}
	keep := make([]bool, len(lengths))
	dropped, err := f.Mask(keep, lengths)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(keep, "dropped", dropped)
	// Output:
	// [true true false] dropped 1
}

// TRL's mask_truncated_completions keys on the end-of-sequence token, not
// on the length: with L_max = 4096, an output that ended with EOS at
// exactly 4096 tokens stays, and one that stopped at 1200 tokens without
// EOS is dropped.
func ExampleMaskTruncated() {
	lengths := []int{1000, 4096, 1200}
	ended := []bool{true, true, false} // from the generator's finish reason
	keep := make([]bool, len(ended))
	dropped := lengthgate.MaskTruncated(keep, ended)
	fmt.Println(lengths, keep, "dropped", dropped)
	// Output:
	// [1000 4096 1200] [true true false] dropped 1
}

// A trainer logs the gate's effect over a batch by adding per-problem
// reports.
func ExampleReport_Add() {
	gate := lengthgate.Gate{Target: 4096}
	problems := []struct {
		adv     []float64
		lengths []int
	}{
		{[]float64{0.5, -0.5}, []int{5000, 5000}},
		{[]float64{0.25, 0.25, -0.5}, []int{1000, 4096, 200}},
	}
	var batch lengthgate.Report
	for _, p := range problems {
		r, err := gate.Apply(p.adv, p.lengths)
		if err != nil {
			fmt.Println(err)
			return
		}
		batch.Add(r)
	}
	fmt.Printf("%+v fraction %.2f\n", batch, batch.GatedFraction())
	// Output:
	// {Outputs:5 Positive:3 AtTarget:1 Gated:2 MassRemoved:0.75} fraction 0.67
}
