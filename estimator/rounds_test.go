package estimator

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"testing"

	"spiral/combin"
)

func balancedBySequences(f combin.Family, K int) (*SetDistribution, error) {
	N, n := f.Traces(), f.SetSize()
	if f.Ordered() || n == 0 {
		return nil, fmt.Errorf("estimator: balanced designs are drawn from subsets, not from %v", f)
	}
	if T, _ := f.Count64(); K < 1 || uint64(K) > T {
		return nil, fmt.Errorf("estimator: K = %d, want in [1, T = %d]", K, T)
	}
	if N > maxRelabelN {
		return nil, fmt.Errorf("estimator: N = %d > %d: too many relabellings to enumerate", N, maxRelabelN)
	}
	slots := K * n
	// Sequences after the fixed first round: N! per further full round and
	// N!/(N-m)! for a last partial round of m slots.
	seqs := big.NewInt(1)
	for rest := slots - min(slots, N); rest > 0; rest -= min(rest, N) {
		m := min(rest, N)
		seqs.Mul(seqs, new(big.Int).MulRange(int64(N-m+1), int64(N)))
	}
	if seqs.Cmp(big.NewInt(maxReferenceSequences)) > 0 {
		return nil, fmt.Errorf("estimator: %v round sequences exceed the enumeration limit %d", seqs, maxReferenceSequences)
	}
	l, err := newLabelledLaw(N, n)
	if err != nil {
		return nil, err
	}
	// A set is a bit mask of its members (N <= 9). masks holds the sets
	// being filled, slot t going to set t/n; a design is keyed by its sorted
	// masks, two bytes each.
	masks := make([]uint16, K)
	for t := range min(slots, N) {
		masks[t/n] |= 1 << t
	}
	sorted := make([]uint16, K)
	key := make([]byte, 2*K)
	index := make(map[string]int)
	var designs [][]uint16
	var counts []int64
	var valid int64
	used := make([][]bool, (slots+N-1)/N) // per round
	for r := range used {
		used[r] = make([]bool, N)
	}
	var rec func(t int)
	rec = func(t int) {
		if t == slots {
			copy(sorted, masks)
			slices.Sort(sorted)
			for k := 1; k < K; k++ {
				if sorted[k] == sorted[k-1] {
					return // two equal sets
				}
			}
			valid++
			for k, m := range sorted {
				key[2*k], key[2*k+1] = byte(m), byte(m>>8)
			}
			if i, ok := index[string(key)]; ok {
				counts[i]++
				return
			}
			index[string(key)] = len(designs)
			designs = append(designs, slices.Clone(sorted))
			counts = append(counts, 1)
			return
		}
		u, k := used[t/N], t/n
		for v := range N {
			bit := uint16(1) << v
			if u[v] || masks[k]&bit != 0 {
				continue // v is in this round, or in this set from the previous round
			}
			u[v], masks[k] = true, masks[k]|bit
			rec(t + 1)
			u[v], masks[k] = false, masks[k]&^bit
		}
	}
	rec(min(slots, N))
	if valid == 0 {
		return nil, fmt.Errorf("estimator: no valid rounds design for %v, K = %d", f, K)
	}
	order := make([]int, len(designs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return slices.Compare(designs[i], designs[j]) }) // a deterministic order of orbits
	sets := make([][]int, K)
	for _, i := range order {
		for k, m := range designs[i] {
			sets[k] = sets[k][:0]
			for v := range N {
				if m&(1<<v) != 0 {
					sets[k] = append(sets[k], v)
				}
			}
		}
		l.addOrbit(sets, big.NewRat(counts[i], valid))
	}
	return l.design()
}

// maxReferenceSequences bounds the round sequences balancedBySequences
// enumerates.
const maxReferenceSequences = 1 << 22

// TestBalancedSetsBySequences: the law BalancedSets finds through the
// classes of traces is the one found by enumerating every round sequence
// (balancedBySequences, the direct reading of the construction), selection
// by selection, on every subset family with N <= 8 and K <= 8 whose round
// sequences number at most 4,194,304 (the long run; the default run those
// with N <= 7 and at most 5,040).
func TestBalancedSetsBySequences(t *testing.T) {
	limit, maxN := int64(5040), 7
	if long() {
		limit, maxN = maxReferenceSequences, 8
	}
	compared := 0
	for N := 2; N <= maxN; N++ {
		for n := 1; n < N; n++ {
			f := family(t, false, N, n)
			T, _ := f.Count64()
			for K := 1; K <= min(int(T), 8); K++ {
				if sequences(N, n, K).Cmp(big.NewInt(limit)) > 0 {
					continue
				}
				want, err := balancedBySequences(f, K)
				if err != nil {
					t.Fatalf("%v K = %d: %v", f, K, err)
				}
				got := must(BalancedSets(f, K))
				if g, w := lawOf(got), lawOf(want); !maps.Equal(g, w) {
					t.Errorf("%v K = %d: %d selections, want %d", f, K, len(g), len(w))
				}
				compared++
			}
		}
	}
	t.Logf("%d (N, n, K) compared", compared)
}

// sequences returns the round sequences balancedBySequences enumerates for
// N traces, sets of n and K sets: N! per round after the first, N!/(N-m)!
// for a last round of m slots.
func sequences(N, n, K int) *big.Int {
	seqs := big.NewInt(1)
	for rest := K*n - min(K*n, N); rest > 0; rest -= min(rest, N) {
		m := min(rest, N)
		seqs.Mul(seqs, new(big.Int).MulRange(int64(N-m+1), int64(N)))
	}
	return seqs
}

// lawOf returns d's selections and their probabilities, as strings.
func lawOf(d *SetDistribution) map[string]string {
	law := map[string]string{}
	for s, p := range d.Selections() {
		law[fmt.Sprint(s)] = p.RatString()
	}
	return law
}
