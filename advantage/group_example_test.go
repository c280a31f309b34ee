package advantage_test

import (
	"fmt"

	"spiral/advantage"
)

// A trainer's convention chosen by name, as a configuration file would
// give it. TRL's batch scaling centres each row on its own group's mean and
// divides by the standard deviation of the whole batch (Bessel, + 1e-4).
func ExamplePreset() {
	var p advantage.Preset
	if err := p.UnmarshalText([]byte("trl-grpo-batch")); err != nil {
		fmt.Println(err)
		return
	}
	opt, err := p.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v: %+v\n", p, opt)

	rewards := []float64{1, 0, 1, 1, 1, 0}
	ids := []string{"p", "p", "q", "q", "q", "q"}
	dst := make([]float64, len(rewards))
	if _, err := advantage.GroupRelative(dst, rewards, ids, opt); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", dst)
	// Output:
	// trl-grpo-batch: {Scale:batch Epsilon:0.0001 Bessel:true LeaveOneOut:false NaNUnscorable:true Best:false Clip:{Low:0 High:0} Whiten:none}
	// [0.9681 -0.9681 0.4840 0.4840 0.4840 -1.4521]
}

// Dynamic sampling with OpenRLHF's reward range (0, 1) on raw 0/1 rewards:
// a problem all wrong or all right is resampled.
func ExampleInRewardRange() {
	keep := advantage.RewardRange{Low: 0, High: 1}
	for _, rewards := range [][]float64{{1, 0, 1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}} {
		ok, err := advantage.InRewardRange(keep, rewards, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rewards, ok)
	}
	// Output:
	// [1 0 1 1] true
	// [0 0 0 0] false
	// [1 1 1 1] false
}
