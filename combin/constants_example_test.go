package combin_test

import (
	"errors"
	"fmt"

	"spiral/combin"
)

// The constants of the paper's configuration (N1 = 8, n = 4, K = 4) under
// both designs, and of a configuration whose exact constants are too large
// to compute, where only the float fields are set.
func ExampleFamily_Constants() {
	f, _ := combin.Subsets(8, 4)
	for _, d := range []combin.Design{combin.Uniform, combin.Balanced} {
		c, err := f.Constants(d, 4)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: miss %s, q_K %s, M %s = %.4f\n", d, c.MissProb.RatString(), c.CoverProb.RatString(), c.M.RatString(), c.MFloat)
	}
	big, _ := combin.Subsets(64, 32)
	c, _ := big.Constants(combin.Uniform, 1<<16)
	fmt.Println("Subsets(64, 32), K = 2^16: exact M computed:", c.M != nil, "float", c.MFloat)
	// Output:
	// uniform: miss 88/1541, q_K 1453/1541, M 1365/1541 = 0.8858
	// balanced: miss 0, q_K 1, M 1 = 1.0000
	// Subsets(64, 32), K = 2^16: exact M computed: false float 1
}

// Checking sets from outside: the third set repeats the first as a set (the
// order of its members does not matter for subsets).
func ExampleCheckSets() {
	members := []int{0, 1, 2, 3, 4, 5, 1, 0}
	err := combin.CheckSets(8, false, []int{2, 4, 2}, members)
	fmt.Println(err)
	var e *combin.InputError
	var se *combin.SetError
	if errors.As(err, &e) && errors.As(err, &se) {
		fmt.Println(e.Field, "set", e.Set, se.Reason, "of set", se.Other)
	}
	fmt.Println(combin.CheckSets(8, true, []int{2, 4, 2}, []int{0, 1, 2, 3, 4, 5, 1, 0}))
	fmt.Println(combin.CheckSets(8, false, []int{3}, []int{0, 9, 1}))
	fmt.Println(combin.CheckSets(8, false, []int{2}, []int{0, 1, 5}))
	// Output:
	// combin: members, set 2: identical to set 0
	// members set 2 duplicate of set 0
	// <nil>
	// combin: members, set 0, member 1 = 9: out of range [0, 8)
	// combin: members[2] = 5: in no set (the sets end before it)
}
