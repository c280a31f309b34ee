package combin_test

import (
	"fmt"
	"math/rand/v2"

	"spiral/combin"
)

// The paper's configuration: N1 = 8 search traces, sets of n = 4, K = 4 sets
// drawn from the 70 possible ones. A trace is left out of every set with
// probability C(35, 4)/C(70, 4) = 88/1541, about 5.71%, and appears in 2
// sets on average.
func Example() {
	f, err := combin.Subsets(8, 4)
	if err != nil {
		panic(err)
	}
	miss, _ := f.MissProb(4)
	missFloat, _ := f.MissProbFloat(4)
	dist, _ := f.AppearanceDist(4)
	T, _ := f.Count()
	avoid, _ := f.Avoiding()
	fmt.Println(f, "has", T, "sets;", avoid, "avoid a given trace")
	fmt.Printf("P(trace in no set) = %v = %.4f\n", miss, missFloat)
	fmt.Println("P(trace in exactly j sets), j = 0..4:", dist)
	// Output:
	// Subsets(8, 4) has 70 sets; 35 avoid a given trace
	// P(trace in no set) = 88/1541 = 0.0571
	// P(trace in exactly j sets), j = 0..4: [88/1541 385/1541 595/1541 385/1541 88/1541]
}

func ExampleFamily_All() {
	subsets, _ := combin.Subsets(4, 2)
	for g := range subsets.All() {
		fmt.Print(g)
	}
	fmt.Println()
	tuples, _ := combin.Tuples(3, 2)
	for g := range tuples.All() {
		fmt.Print(g)
	}
	fmt.Println()
	// Output:
	// [0 1][0 2][0 3][1 2][1 3][2 3]
	// [0 1][0 2][1 0][1 2][2 0][2 1]
}

func ExampleFamily_Sample() {
	f, _ := combin.Subsets(8, 4)
	rnd := rand.New(rand.NewPCG(1, 2)) // a fixed seed gives the same sets everywhere
	sets, err := f.Sample(rnd, 4)
	if err != nil {
		panic(err)
	}
	fmt.Println(sets)
	// Output:
	// [[1 4 6 7] [1 2 5 7] [2 3 4 5] [2 3 4 6]]
}

// A trainer builds one Sampler per (family, K) and reuses it every step; the
// sets land in one flat slice, set i at dst[i*n : (i+1)*n].
func ExampleSampler() {
	f, _ := combin.Subsets(8, 4)
	s, err := combin.NewSampler(f, 4)
	if err != nil {
		panic(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	dst := make([]int, s.Len())
	for step := range 2 {
		if err := s.SampleTo(dst, rnd); err != nil {
			panic(err)
		}
		fmt.Println("step", step, dst)
	}
	// Output:
	// step 0 [1 4 6 7 1 2 5 7 2 3 4 5 2 3 4 6]
	// step 1 [0 2 3 5 0 1 2 6 1 2 3 4 0 4 6 7]
}

func ExampleFamily_Rank() {
	// [1 2 5 7] comes after the C(7, 3) = 35 sets that start with 0, and the
	// 4 + 3 + 1 sets [1 2 3 *], [1 2 4 *] and [1 2 5 6].
	f, _ := combin.Subsets(8, 4)
	r, _ := f.Rank([]int{1, 2, 5, 7})
	g, _ := f.Unrank(r)
	fmt.Println(r, g)

	// Exact beyond 2^64: the last of the C(1024, 16) subsets.
	big, _ := combin.Subsets(1024, 16)
	last := []int{1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023}
	r, _ = big.Rank(last)
	_, fits := big.Count64()
	fmt.Println(r, fits)
	// Output:
	// 43 [1 2 5 7]
	// 62090774884893856698834397859880895 false
}
