package combin

import (
	"math/rand/v2"
	"testing"
)

// TestDocumentedAllocs: the calls whose documentation says they do not
// allocate, and that no other test counts: MissProbFloat and both
// samplers' SampleManyTo, at small and large families.
func TestDocumentedAllocs(t *testing.T) {
	for _, f := range []Family{mustFamily(t, false, 8, 4), mustFamily(t, true, 8, 4), mustFamily(t, false, 4096, 64)} {
		if a := testing.AllocsPerRun(20, func() { _, _ = f.MissProbFloat(4) }); a != 0 {
			t.Errorf("%v.MissProbFloat: %v allocations, want 0", f, a)
		}
		s, err := NewSampler(f, 4)
		if err != nil {
			t.Fatal(err)
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		dst := make([]int, 8*s.Len())
		if a := testing.AllocsPerRun(20, func() { _ = s.SampleManyTo(dst, rnd) }); a != 0 {
			t.Errorf("%v: Sampler.SampleManyTo: %v allocations, want 0", f, a)
		}
		if f.Ordered() {
			continue // balanced designs are drawn from subsets
		}
		b, err := NewBalancedSampler(f, 4)
		if err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _ = b.SampleManyTo(dst, rnd) }); a != 0 {
			t.Errorf("%v: BalancedSampler.SampleManyTo: %v allocations, want 0", f, a)
		}
	}
}
