package spiral

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"spiral/combin"
	"spiral/internal/cpubench"
)

// paperPlanLoop draws the plans of Paper() (Subsets(8, 4), K = 4, Uniform,
// IndexOrder) as one plain loop: the baseline of the planning part of the
// step (BenchmarkStepParts/problems=256/plan), the same plans without the
// layers (Planner, Sampler, runs of digits) and without the interface
// rand.Source. TestPaperPlanLoop checks that it draws PlanTo's plans.
type paperPlanLoop struct {
	table [70][4]int // the 70 sets in lexicographic order
	pick  [70]int    // the identity between plans
}

func newPaperPlanLoop() *paperPlanLoop {
	l := new(paperPlanLoop)
	f, _ := combin.Subsets(8, 4)
	i := 0
	for g := range f.All() {
		copy(l.table[i][:], g)
		i++
	}
	for i := range l.pick {
		l.pick[i] = i
	}
	return l
}

// planTo writes the plans of keys into dst, 16 members each.
func (l *paperPlanLoop) planTo(dst []int, seed, step uint64, keys []uint64) {
	var p uint64 = 70 * 69 * 68 * 67 // the run of the four digits
	var src rand.PCG
	for q, key := range keys {
		src.Seed(StreamSeed(seed, step, key))
		var d [4]int
		for {
			x := src.Uint64()
			for i := range d {
				hi, lo := bits.Mul64(x, uint64(70-i))
				d[i], x = int(hi), lo
			}
			if x >= p || x >= -p%p {
				break
			}
		}
		out := (*[16]int)(dst[q*16:])
		for i, di := range d {
			j := i + di
			g := l.pick[j]
			l.pick[j] = l.pick[i]
			set := &l.table[g]
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = set[0], set[1], set[2], set[3]
		}
		for i, di := range d {
			l.pick[i+di] = i + di
		}
	}
}

// TestPaperPlanLoop: the plain loop draws the plans PlanTo draws.
func TestPaperPlanLoop(t *testing.T) {
	pl, err := Paper().NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	ks := keys(2000)
	var ps Plans
	l := newPaperPlanLoop()
	got := make([]int, len(ks)*16)
	for step := uint64(1); step <= 3; step++ {
		if err := pl.PlanTo(&ps, 7, step, ks); err != nil {
			t.Fatal(err)
		}
		l.planTo(got, 7, step, ks)
		if want := ps.AppendMembers(nil); !slices.Equal(got, want) {
			t.Fatalf("step %d: the plain loop's plans differ from PlanTo's", step)
		}
	}
}

// BenchmarkPaperPlanLoop times the plain loop on the keys and steps of
// BenchmarkStepParts/problems=256/plan; bench/cachegrind.sh counts its
// instructions when named:
//
//	bench/cachegrind.sh BenchmarkPaperPlanLoop/problems=256 256
func BenchmarkPaperPlanLoop(b *testing.B) {
	const problems = 256
	b.Run(fmt.Sprintf("problems=%d", problems), func(b *testing.B) {
		l := newPaperPlanLoop()
		ks := keys(problems)
		dst := make([]int, problems*16)
		step := uint64(0)
		cpubench.Loop(b, func() {
			step++
			l.planTo(dst, 1, step, ks)
		})
	})
}
