package combin

import (
	"math/rand/v2"
	"testing"
)

// TestSetChecker: a SetChecker gives Family.CheckSets' answer, on valid
// sets and on each kind of bad ones, large and small, and allocates nothing
// once grown (a valid input; an error allocates itself).
func TestSetChecker(t *testing.T) {
	var c SetChecker
	for _, tc := range []struct {
		ordered  bool
		n1, n, K int
	}{{false, 8, 4, 4}, {true, 8, 4, 4}, {false, 1 << 12, 16, 1 << 10}, {true, 64, 8, 40}} {
		f := mustFamily(t, tc.ordered, tc.n1, tc.n)
		s, err := NewSampler(f, tc.K)
		if err != nil {
			t.Fatal(err)
		}
		flat := make([]int, s.Len())
		rnd := rand.New(rand.NewPCG(1, 2))
		if err := s.SampleTo(flat, rnd); err != nil {
			t.Fatal(err)
		}
		if err := c.Check(f, flat); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if a := testing.AllocsPerRun(5, func() { _ = c.Check(f, flat) }); a != 0 {
			t.Errorf("%v, K = %d: %v allocations a call, want 0", f, tc.K, a)
		}
		for _, bad := range []func([]int){
			func(m []int) { m[len(m)-1] = tc.n1 },                     // out of range
			func(m []int) { m[1] = m[0] },                             // repeated
			func(m []int) { copy(m[len(m)-tc.n:], m[:tc.n]) },         // duplicate set
			func(m []int) { m[tc.n], m[tc.n+1] = m[tc.n+1], m[tc.n] }, // reordered set
		} {
			m := append([]int(nil), flat...)
			bad(m)
			want, got := f.CheckSets(m), c.Check(f, m)
			if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
				t.Errorf("%v: SetChecker %v, CheckSets %v", f, got, want)
			}
			var none *SetChecker
			if got := none.Check(f, m); (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
				t.Errorf("%v: nil *SetChecker %v, CheckSets %v", f, got, want)
			}
		}
	}
}
