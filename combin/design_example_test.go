package combin_test

import (
	"fmt"
	"math/rand/v2"

	"spiral/combin"
)

// A balanced design at the paper's configuration: two random splits of the
// 8 traces into halves, so every trace is in exactly 2 of the 4 sets and
// none is left without credit (the uniform draw leaves 5.71% out).
func ExampleFamily_SampleBalanced() {
	f, _ := combin.Subsets(8, 4)
	sets, err := f.SampleBalanced(rand.New(rand.NewPCG(1, 2)), 4)
	if err != nil {
		panic(err)
	}
	count := make([]int, 8)
	for _, g := range sets {
		fmt.Println(g)
		for _, i := range g {
			count[i]++
		}
	}
	fmt.Println("appearances:", count)
	// Output:
	// [0 2 5 6]
	// [1 3 4 7]
	// [0 2 5 7]
	// [1 3 4 6]
	// appearances: [2 2 2 2 2 2 2 2]
}

// When N does not divide K*n, (K*n) mod N traces appear once more than the
// others: here 5 sets of 3 out of 8 traces, 15 = 1*8 + 7 appearances.
func ExampleBalancedSampler() {
	f, _ := combin.Subsets(8, 3)
	s, err := combin.NewBalancedSampler(f, 5)
	if err != nil {
		panic(err)
	}
	r, extra := s.Replication()
	fmt.Printf("every trace %d or %d times, %d of them %d times\n", r, r+1, extra, r+1)
	dst := make([]int, s.Len())
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 2 {
		if err := s.SampleTo(dst, rnd); err != nil {
			panic(err)
		}
		fmt.Println(dst[0:3], dst[3:6], dst[6:9], dst[9:12], dst[12:15])
	}
	// Output:
	// every trace 1 or 2 times, 7 of them 2 times
	// [4 6 7] [0 1 2] [0 3 5] [2 3 7] [4 5 6]
	// [1 6 7] [2 3 4] [0 2 5] [4 5 7] [1 3 6]
}
