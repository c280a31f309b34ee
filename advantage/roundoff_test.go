package advantage

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// TestSearchRoundingZero is the problem on which a property test of the
// root package found a search advantage of 6.9e-18 where the exact value
// is 0: set scores (2/3, 1/3, 7/12, 1/4), fbar = 11/24, and trace 2 only in
// the first and the last set, whose set advantages are +5/24 and -5/24.
// Every exact search advantage is 0, so every computed one must be exactly
// 0, or a dynamic-sampling trainer would keep a problem with no signal.
func TestSearchRoundingZero(t *testing.T) {
	groups := [][]int{{2, 1}, {1, 0}, {0, 1}, {1, 2}}
	rewards := [][]float64{{0, 1, 1}, {0, 0.5, 0.5}, {0.25, 0.5, 1}, {0, 0.25, 0.5}}
	c, err := Compute(3, groups, rewards)
	if err != nil {
		t.Fatal(err)
	}
	for y, a := range c.Search {
		if a != 0 {
			t.Errorf("Search[%d] = %g, want exactly 0 (set advantages %v)", y, a, c.SetAdvantages)
		}
	}
}

// TestSearchExactZerosRapid checks, on random problems with rewards k/12,
// that every search advantage whose exact (big.Rat) value is 0 comes out
// exactly 0, and that the others are within 1e-12 of their exact value.
func TestSearchExactZerosRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		traces := rapid.IntRange(2, 6).Draw(t, "traces")
		n := rapid.IntRange(1, traces).Draw(t, "n")
		k := rapid.IntRange(2, 6).Draw(t, "K")
		var groups [][]int
		seen := map[string]bool{}
		for range k {
			g := rapid.Permutation(seq(traces)).Draw(t, "perm")[:n]
			key := string(rune(len(g)))
			for _, y := range g {
				key += string(rune('a' + y))
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			groups = append(groups, g)
		}
		if len(groups) < 2 {
			t.Skip("fewer than 2 distinct groups")
		}
		rewards := make([][]float64, len(groups))
		exactR := make([][]*big.Rat, len(groups))
		for i := range groups {
			m := rapid.IntRange(1, 4).Draw(t, "N2")
			for range m {
				num := rapid.IntRange(0, 12).Draw(t, "r")
				rewards[i] = append(rewards[i], float64(num)/12)
				exactR[i] = append(exactR[i], big.NewRat(int64(num), 12))
			}
		}
		c, err := Compute(traces, groups, rewards)
		if err != nil {
			t.Fatal(err)
		}
		want := exactSearch(traces, groups, exactR)
		for y, w := range want {
			wf, _ := w.Float64()
			switch {
			case w.Sign() == 0 && c.Search[y] != 0:
				t.Fatalf("Search[%d] = %g, want exactly 0", y, c.Search[y])
			case w.Sign() != 0 && !(math.Abs(c.Search[y]-wf) <= 1e-12):
				t.Fatalf("Search[%d] = %g, want %v", y, c.Search[y], w.RatString())
			}
		}
	})
}

// exactSearch is SPIRAL.md section 2 in rational arithmetic.
func exactSearch(traces int, groups [][]int, rewards [][]*big.Rat) []*big.Rat {
	k := len(groups)
	f := make([]*big.Rat, k)
	fbar := new(big.Rat)
	for i, rs := range rewards {
		f[i] = new(big.Rat)
		for _, r := range rs {
			f[i].Add(f[i], r)
		}
		f[i].Quo(f[i], big.NewRat(int64(len(rs)), 1))
		fbar.Add(fbar, f[i])
	}
	fbar.Quo(fbar, big.NewRat(int64(k), 1))
	out := make([]*big.Rat, traces)
	for y := range out {
		s, c := new(big.Rat), 0
		for i, g := range groups {
			for _, m := range g {
				if m == y {
					s.Add(s, new(big.Rat).Sub(f[i], fbar))
					c++
				}
			}
		}
		if c > 0 {
			s.Quo(s, big.NewRat(int64(c), 1))
		}
		out[y] = s
	}
	return out
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
