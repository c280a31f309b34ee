package combin_test

import (
	"math/big"
	"slices"
	"testing"

	"spiral/combin"
)

// isGroup reports, independently of the package, whether g is a set of
// the family of n-subsets (ascending) or n-tuples of {0, ..., N-1}.
func isGroup(g []int, N, n int, ordered bool) bool {
	if len(g) != n {
		return false
	}
	seen := make(map[int]bool, n)
	for j, y := range g {
		if y < 0 || y >= N || seen[y] || (!ordered && j > 0 && g[j-1] >= y) {
			return false
		}
		seen[y] = true
	}
	return true
}

// FuzzRankUnrank checks Rank and Unrank, in their big.Int, uint64 and dst
// forms, on families of up to N = 127 (so both the machine-word and the
// big-number paths run): a family is made exactly when 1 <= n <= N; every
// rank below T unranks to a set that ranks back to it, and the next rank
// to a lexicographically larger set; a rank of T or more is an error;
// and an arbitrary sequence of indices ranks without error exactly when it
// is a set, and then unranks back to itself.
func FuzzRankUnrank(f *testing.F) {
	f.Add(false, uint16(8), uint16(4), []byte{69}, []byte{1, 2, 3, 4})
	f.Add(true, uint16(8), uint16(4), []byte{6, 143}, []byte{8, 1, 5, 2})
	f.Add(false, uint16(200), uint16(100), []byte{255, 255, 255, 255, 255, 255, 255, 255, 255}, []byte{1, 3})
	f.Fuzz(func(t *testing.T, ordered bool, N16, n16 uint16, rankBytes, groupBytes []byte) {
		N, n := int(N16%128), int(n16%128)
		makeFamily := combin.Subsets
		if ordered {
			makeFamily = combin.Tuples
		}
		fam, err := makeFamily(N, n)
		if (err == nil) != (1 <= n && n <= N) {
			t.Fatalf("family(%d, %d): error %v", N, n, err)
		}
		if err != nil {
			return
		}
		T, err := fam.Count() // N <= 127: T has at most 127*7 bits
		if err != nil {
			t.Fatal(err)
		}
		t64, fits := fam.Count64()
		if fits != T.IsUint64() || (fits && t64 != T.Uint64()) {
			t.Fatalf("%v: Count64 = %d, %v; Count = %v", fam, t64, fits, T)
		}

		raw := new(big.Int).SetBytes(rankBytes)
		if raw.Cmp(T) >= 0 {
			if g, err := fam.Unrank(raw); err == nil {
				t.Fatalf("%v: Unrank(%v >= T = %v) = %v", fam, raw, T, g)
			}
			if raw.IsUint64() {
				if g, err := fam.Unrank64(raw.Uint64()); err == nil {
					t.Fatalf("%v: Unrank64(%v >= T) = %v", fam, raw, g)
				}
			}
		}
		r := new(big.Int).Mod(raw, T)
		g, err := fam.Unrank(r)
		if err != nil || !isGroup(g, N, n, ordered) {
			t.Fatalf("%v: Unrank(%v) = %v, %v", fam, r, g, err)
		}
		if back, err := fam.Rank(g); err != nil || back.Cmp(r) != 0 {
			t.Fatalf("%v: Rank(Unrank(%v) = %v) = %v, %v", fam, r, g, back, err)
		}
		if r.IsUint64() {
			r64 := r.Uint64()
			if g64, err := fam.Unrank64(r64); err != nil || !slices.Equal(g64, g) {
				t.Fatalf("%v: Unrank64(%d) = %v, %v; Unrank %v", fam, r64, g64, err, g)
			}
			if back, err := fam.Rank64(g); err != nil || back != r64 {
				t.Fatalf("%v: Rank64(%v) = %d, %v, want %d", fam, g, back, err, r64)
			}
			if fits {
				dst := make([]int, n)
				if err := fam.UnrankTo(dst, r64); err != nil || !slices.Equal(dst, g) {
					t.Fatalf("%v: UnrankTo(%d) = %v, %v", fam, r64, dst, err)
				}
			}
		} else if back, err := fam.Rank64(g); err == nil {
			t.Fatalf("%v: Rank64(%v) = %d, but the rank %v does not fit a uint64", fam, g, back, r)
		}
		if next := new(big.Int).Add(r, big.NewInt(1)); next.Cmp(T) < 0 {
			h, err := fam.Unrank(next)
			if err != nil || slices.Compare(h, g) <= 0 {
				t.Fatalf("%v: Unrank(%v) = %v, not after Unrank(%v) = %v (%v)", fam, next, h, r, g, err)
			}
		}

		// An arbitrary sequence of indices (byte b is index b-1).
		seq := make([]int, len(groupBytes))
		for j, b := range groupBytes {
			seq[j] = int(b) - 1
		}
		valid := isGroup(seq, N, n, ordered)
		sr, err := fam.Rank(seq)
		if (err == nil) != valid {
			t.Fatalf("%v: Rank(%v) = %v, %v; a set: %v", fam, seq, sr, err, valid)
		}
		if !valid {
			if _, err := fam.Rank64(seq); err == nil {
				t.Fatalf("%v: Rank64(%v) accepts a non-set", fam, seq)
			}
			return
		}
		if sr.Sign() < 0 || sr.Cmp(T) >= 0 {
			t.Fatalf("%v: Rank(%v) = %v outside [0, %v)", fam, seq, sr, T)
		}
		if back, err := fam.Unrank(sr); err != nil || !slices.Equal(back, seq) {
			t.Fatalf("%v: Unrank(Rank(%v) = %v) = %v, %v", fam, seq, sr, back, err)
		}
	})
}
