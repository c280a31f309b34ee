package estimator

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
)

// maxRoundSteps bounds the steps of roundClasses' enumeration: the choices
// of how many traces of each class a part of a round takes. A variable only
// so that a test can reach the bound in fewer steps.
var maxRoundSteps = 1 << 22

// roundPart is the part of one round's slots that goes to one set: its
// set, its number of slots, and whether it is the set's last part.
type roundPart struct {
	set, size int
	last      bool
}

// roundLaw is the rounds construction's law of K sets of n among N traces
// (see BalancedSets) up to relabelling: labelled designs, each K sorted
// member masks in ascending order, and for each the number of ways of
// filling the rounds' parts (the first round fixed) that give it, out of
// total valid ones. The construction's law conditioned on being valid is
// the uniform relabelling of count/total over designs.
type roundLaw struct {
	designs [][]uint16
	counts  []uint64
	total   uint64
}

// roundClasses returns the roundLaw of N <= 16 traces, sets of n and K
// sets, or an error if finding it takes more than maxRoundSteps steps.
//
// Each round is a uniformly random ordering of the traces cut into parts,
// one per set it meets; a set is sorted, so only which traces fill each
// part matters, and every filling is equally likely. The first round is
// fixed by relabelling. The traces then fall into classes, those that
// every earlier part holds or misses alike; relabelling within a class
// keeps every earlier part, so a filling matters only through how many
// traces each part takes from each class. The enumeration takes the lowest
// ones and counts the C(available, taken) fillings each choice stands for,
// so its cost is the number of such choices, not of fillings.
func roundClasses(N, n, K int) (roundLaw, error) {
	slots := K * n
	var rounds [][]roundPart
	for start := 0; start < slots; start += N {
		var parts []roundPart
		for t := start; t < min(start+N, slots); {
			k := t / n
			end := min((k+1)*n, start+N, slots)
			parts = append(parts, roundPart{set: k, size: end - t, last: end == (k+1)*n})
			t = end
		}
		rounds = append(rounds, parts)
	}
	masks := make([]uint16, K) // the members so far of each set
	var first []uint16         // the first round's classes
	t := 0
	for _, p := range rounds[0] {
		m := uint16(1)<<(t+p.size) - uint16(1)<<t
		masks[p.set] |= m
		first = append(first, m)
		t += p.size
	}
	if rest := uint16(1)<<N - uint16(1)<<t; rest != 0 {
		first = append(first, rest)
	}
	var law roundLaw
	index := map[string]int{}
	key := make([]byte, 2*K)
	sorted := make([]uint16, K)
	steps, overflow := 0, false
	got := make([][]uint16, len(rounds)) // the traces each part of a round took
	for r := range got {
		got[r] = make([]uint16, len(rounds[r]))
	}
	var round func(r int, classes []uint16, weight uint64)
	var take func(r, j, a, need int, classes, avail []uint16, weight uint64)
	// part fills part j of round r, or, after the last, starts the next
	// round with the classes split by the round's parts.
	part := func(r, j int, classes, avail []uint16, weight uint64) {
		if j < len(rounds[r]) {
			take(r, j, 0, rounds[r][j].size, classes, avail, weight)
			return
		}
		var next []uint16
		for a, c := range classes {
			for _, g := range got[r] {
				if x := c & g; x != 0 {
					next = append(next, x)
				}
			}
			if avail[a] != 0 {
				next = append(next, avail[a])
			}
		}
		round(r+1, next, weight)
	}
	round = func(r int, classes []uint16, weight uint64) {
		if r < len(rounds) {
			part(r, 0, classes, slices.Clone(classes), weight)
			return
		}
		copy(sorted, masks)
		slices.Sort(sorted)
		for k, m := range sorted {
			key[2*k], key[2*k+1] = byte(m), byte(m>>8)
		}
		var carry uint64
		if i, ok := index[string(key)]; ok {
			law.counts[i], carry = bits.Add64(law.counts[i], weight, 0)
		} else {
			index[string(key)] = len(law.designs)
			law.designs = append(law.designs, slices.Clone(sorted))
			law.counts = append(law.counts, weight)
		}
		overflow = overflow || carry != 0
		law.total, carry = bits.Add64(law.total, weight, 0)
		overflow = overflow || carry != 0
	}
	// take chooses how many of the traces still available in classes a, a+1,
	// ... part j of round r takes, need more to take. A part never takes
	// from a class its set holds (the set's part in the previous round, a
	// union of classes).
	take = func(r, j, a, need int, classes, avail []uint16, weight uint64) {
		if steps++; steps > maxRoundSteps || overflow {
			return
		}
		p := rounds[r][j]
		if need == 0 {
			masks[p.set] |= got[r][j]
			if !p.last || !slices.Contains(masks[:p.set], masks[p.set]) {
				part(r, j+1, classes, avail, weight)
			}
			masks[p.set] &^= got[r][j]
			return
		}
		room := 0
		for b := a; b < len(classes); b++ {
			if classes[b]&masks[p.set] == 0 {
				room += bits.OnesCount16(avail[b])
			}
		}
		if room < need {
			return
		}
		if classes[a]&masks[p.set] != 0 {
			take(r, j, a+1, need, classes, avail, weight)
			return
		}
		have, saved, before := bits.OnesCount16(avail[a]), avail[a], got[r][j]
		for c := 0; c <= min(have, need); c++ {
			if c > 0 {
				low := avail[a] & -avail[a]
				got[r][j] |= low
				avail[a] &^= low
			}
			hi, w := bits.Mul64(weight, uint64(binom(have, c)))
			if hi != 0 {
				overflow = true
				break
			}
			take(r, j, a+1, need-c, classes, avail, w)
		}
		avail[a], got[r][j] = saved, before
	}
	round(1, first, 1)
	switch {
	case overflow:
		return roundLaw{}, fmt.Errorf("estimator: the rounds of N = %d, n = %d, K = %d count more than 2^64 fillings", N, n, K)
	case steps > maxRoundSteps:
		return roundLaw{}, fmt.Errorf("estimator: the rounds of N = %d, n = %d, K = %d take more than %d steps to enumerate", N, n, K, maxRoundSteps)
	}
	return law, nil
}

// sets yields, in ascending order of their masks, each design of l as
// sorted sets of trace indices (reused between calls) with its index.
func (l roundLaw) sets(N int) iter.Seq2[int, [][]int] {
	return func(yield func(int, [][]int) bool) {
		order := make([]int, len(l.designs))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(i, j int) int { return slices.Compare(l.designs[i], l.designs[j]) })
		var sets [][]int
		for _, i := range order {
			sets = sets[:0]
			for _, m := range l.designs[i] {
				var g []int
				for v := range N {
					if m&(1<<v) != 0 {
						g = append(g, v)
					}
				}
				sets = append(sets, g)
			}
			if !yield(i, sets) {
				return
			}
		}
	}
}
