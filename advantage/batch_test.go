package advantage

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"spiral/combin"
	"spiral/internal/spiraltest"
)

// TestBatchMatchesCompute: ComputeBatch on random batches gives, bitwise,
// what Compute gives problem by problem, at the right offsets.
func TestBatchMatchesCompute(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 1, 6).Draw(t, "problems")
		in := toBatch[float64](specs)
		var dst BatchCredit[float64]
		if err := ComputeBatch(&dst, in); err != nil {
			t.Fatal(err)
		}
		var want BatchCredit[float64]
		for _, s := range specs {
			c := mustCompute(t, s)
			want.SetScores = append(want.SetScores, c.SetScores...)
			want.SetAdvantages = append(want.SetAdvantages, c.SetAdvantages...)
			want.Search = append(want.Search, c.Search...)
			want.Appearances = append(want.Appearances, c.Appearances...)
			want.Aggregation = append(want.Aggregation, slices.Concat(c.Aggregation...)...)
			for _, rs := range s.Rewards {
				want.ScoredOutputs = append(want.ScoredOutputs, len(rs))
			}
			want.ScoredSets = append(want.ScoredSets, len(s.Sets))
			want.Rejected = append(want.Rejected, false)
		}
		if diff := cmp.Diff(want, dst, cmpopts.IgnoreUnexported(BatchCredit[float64]{})); diff != "" {
			t.Fatalf("ComputeBatch vs Compute per problem (-want +got):\n%s", diff)
		}
	})
}

// TestBatchFloat32: float32 rewards give the float64 results rounded to
// float32, bitwise: the arithmetic inside is float64 either way.
func TestBatchFloat32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 1, 4).Draw(t, "problems")
		for i := range specs {
			specs[i].Rewards = mapRewards(specs[i].Rewards, func(r float64) float64 { return float64(float32(r)) })
		}
		in64, in32 := toBatch[float64](specs), toBatch[float32](specs)
		var d64 BatchCredit[float64]
		var d32 BatchCredit[float32]
		if err := ComputeBatch(&d64, in64); err != nil {
			t.Fatal(err)
		}
		if err := ComputeBatch(&d32, in32); err != nil {
			t.Fatal(err)
		}
		want := BatchCredit[float32]{
			SetScores:     round32(d64.SetScores),
			SetAdvantages: round32(d64.SetAdvantages),
			Search:        round32(d64.Search),
			Appearances:   d64.Appearances,
			Aggregation:   round32(d64.Aggregation),
			ScoredOutputs: d64.ScoredOutputs,
			ScoredSets:    d64.ScoredSets,
			Rejected:      d64.Rejected,
		}
		if diff := cmp.Diff(want, d32, cmpopts.IgnoreUnexported(BatchCredit[float32]{})); diff != "" {
			t.Fatalf("float32 vs float64 rounded (-want +got):\n%s", diff)
		}
	})
}

func round32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

// TestUniformBatch: the paper's layout, and a batch built from it agrees
// with Compute.
func TestUniformBatch(t *testing.T) {
	b, err := NewUniformBatch[float64](256, 8, 4, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := []int{len(b.Traces), len(b.Sets), len(b.SetSizes), len(b.Members), len(b.RewardCounts), len(b.Rewards)}
	if want := []int{256, 256, 1024, 4096, 1024, 4096}; !slices.Equal(got, want) {
		t.Fatalf("lengths %v, want %v", got, want)
	}
	for _, xs := range [][]int{b.Traces, b.SetSizes, b.Sets, b.RewardCounts} {
		if slices.Min(xs) != slices.Max(xs) {
			t.Fatalf("non-uniform shape %v", xs)
		}
	}
	if b.Traces[0] != 8 || b.Sets[0] != 4 || b.SetSizes[0] != 4 || b.RewardCounts[0] != 4 {
		t.Fatalf("shape %d %d %d %d, want 8 4 4 4", b.Traces[0], b.Sets[0], b.SetSizes[0], b.RewardCounts[0])
	}

	for _, bad := range [][5]int{{0, 8, 4, 4, 4}, {1, 0, 4, 4, 4}, {1, 8, 0, 4, 4}, {1, 8, 4, 0, 4}, {1, 8, 4, 4, 0}, {1, 3, 4, 4, 4},
		{1, combin.MaxSize + 1, 1, 1, 1}, {2, combin.MaxSize, 1, 1, 1}, {1 << 30, 8, 4, 4, 4}, {math.MaxInt, 8, 4, 4, 4},
		{1, 8, 1 << 22, 8, 1}, {1, 8, 1 << 22, 1, 8}, {1, 8, math.MaxInt, 1, 1}, {1, math.MaxInt, 1, 1, 1}, {math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt}} {
		if _, err := NewUniformBatch[float32](bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("NewUniformBatch%v: no error", bad)
		}
	}
}

// TestComputeBatchAllocs: a zero BatchCredit grows on the first call;
// reused, ComputeBatch allocates nothing, for float64 and float32, with and
// without unscorable outputs, including a problem with many traces.
func TestComputeBatchAllocs(t *testing.T) {
	specs := paperSpecs(16, 1)
	specs = append(specs, spec{Traces: 200, Sets: [][]int{{0, 150}, {199, 64, 1}}, Rewards: [][]float64{{1, 0}, {0.5}}})
	in64, in32 := toBatch[float64](specs), toBatch[float32](specs)
	var d64 BatchCredit[float64]
	var d32 BatchCredit[float32]
	if n := testing.AllocsPerRun(20, func() { _ = ComputeBatch(&d64, in64) }); n != 0 {
		t.Errorf("float64: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(20, func() { _ = ComputeBatch(&d32, in32) }); n != 0 {
		t.Errorf("float32: %v allocations, want 0", n)
	}
	in64.Unscorable = make([]bool, len(in64.Rewards))
	in64.Unscorable[3] = true
	in64.Rewards[3] = math.NaN()
	if n := testing.AllocsPerRun(20, func() { _ = ComputeBatch(&d64, in64) }); n != 0 {
		t.Errorf("unscorable: %v allocations, want 0", n)
	}
}

// TestManyTraces: problems with many traces and few sets, and many sets,
// against the exact reference: 40 problems of up to 30 sets; with
// SPIRAL_LONG=1, 100 of up to 80.
func TestManyTraces(t *testing.T) {
	spiraltest.Check(t, 40, 100, func(t *rapid.T) {
		traces := rapid.IntRange(60, 200).Draw(t, "traces")
		var s spec
		s.Traces = traces
		maxSets := 30
		if spiraltest.Long() {
			maxSets = 80
		}
		for range rapid.IntRange(1, maxSets).Draw(t, "sets") {
			g := rapid.SliceOfNDistinct(rapid.IntRange(0, traces-1), 1, 10, func(y int) int { return y }).Draw(t, "set")
			if slices.ContainsFunc(s.Sets, func(h []int) bool { return sameSet(g, h) }) {
				continue
			}
			s.Sets = append(s.Sets, g)
			s.Rewards = append(s.Rewards, rapid.SliceOfN(rapid.Float64Range(0, 1), 1, 4).Draw(t, "rewards"))
		}
		checkAccuracy(t, s, mustCompute(t, s))
	})
}

// TestWholeFamily: all C(8, 4) = 70 sets of the paper's N1 = 8, n = 4,
// against the exact reference.
func TestWholeFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	s := spec{Traces: 8}
	for mask := range 1 << 8 {
		if bits.OnesCount(uint(mask)) != 4 {
			continue
		}
		var g []int
		for y := range 8 {
			if mask&(1<<y) != 0 {
				g = append(g, y)
			}
		}
		s.Sets = append(s.Sets, g)
		s.Rewards = append(s.Rewards, []float64{rng.Float64(), rng.Float64(), float64(rng.IntN(2))})
	}
	if len(s.Sets) != 70 {
		t.Fatalf("%d sets, want 70", len(s.Sets))
	}
	c := mustCompute(t, s)
	checkAccuracy(t, s, c)
	for y, n := range c.Appearances {
		if n != 35 {
			t.Errorf("trace %d in %d sets, want C(7, 3) = 35", y, n)
		}
	}
}

// TestSpans: each problem's Span cuts out exactly its own slices.
func TestSpans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 0, 5).Draw(t, "problems")
		in := toBatch[float64](specs)
		n := 0
		for p, sp := range in.Spans() {
			if p != n {
				t.Fatalf("problem %d yielded as %d", n, p)
			}
			s := specs[p]
			if got := toBatch[float64]([]spec{s}); !slices.Equal(got.Members, in.Members[sp.Member:sp.Member+sp.Members]) ||
				!slices.Equal(got.Rewards, in.Rewards[sp.Reward:sp.Reward+sp.Rewards]) ||
				!slices.Equal(got.SetSizes, in.SetSizes[sp.Set:sp.Set+sp.Sets]) ||
				!slices.Equal(got.RewardCounts, in.RewardCounts[sp.Set:sp.Set+sp.Sets]) ||
				sp.Traces != s.Traces {
				t.Fatalf("problem %d: span %+v does not cut out %+v", p, sp, s)
			}
			before := toBatch[float64](specs[:p])
			if sp.Trace != sum(before.Traces) || sp.Set != len(before.SetSizes) ||
				sp.Member != len(before.Members) || sp.Reward != len(before.Rewards) {
				t.Fatalf("problem %d: span %+v does not start after problems 0..%d", p, sp, p-1)
			}
			n++
		}
		if n != len(specs) {
			t.Fatalf("%d spans, want %d", n, len(specs))
		}
	})

	// A batch whose Sets run past SetSizes stops early; breaking stops.
	in := toBatch[float64](paperSpecs(3, 1))
	in.Sets[1] = 100
	n := 0
	for range in.Spans() {
		n++
	}
	if n != 1 {
		t.Errorf("spans of a bad batch: %d, want 1", n)
	}
	for range toBatch[float64](paperSpecs(3, 1)).Spans() {
		break
	}
}

// TestLargeProblems: a problem of N1 = 2^20 traces with 16,384 sets of 16
// and one of 65,536 distinct sets of 2 are credited (in time linear in
// their size): every trace's appearances are right, and the search
// advantages weighted by appearances sum to n sum_i A_set = 0. By default
// the problems are a quarter of that (N1 = 2^18 with 4,096 sets of 16;
// 16,384 distinct sets of 2 of 256 traces); SPIRAL_LONG=1 runs full size.
func TestLargeProblems(t *testing.T) {
	shift := 2 // a quarter of the traces and the sets by default
	if spiraltest.Long() {
		shift = 0
	}
	for _, tc := range []struct {
		traces, sets, size int
		member             func(i, j int) int
	}{
		{1 << (20 - shift), 16384 >> shift, 16, func(i, j int) int { return (i*37 + j*65521) % (1 << (20 - shift)) }},
		{512 >> (shift / 2), 65536 >> shift, 2, nil}, // the pairs (a, b), a < b, in order
	} {
		s := spec{Traces: tc.traces}
		a, b := 0, 1
		rng := rand.New(rand.NewPCG(5, 0))
		for i := range tc.sets {
			g := make([]int, tc.size)
			for j := range g {
				if tc.member != nil {
					g[j] = tc.member(i, j)
				}
			}
			if tc.member == nil {
				g[0], g[1] = a, b
				if b++; b == tc.traces {
					a++
					b = a + 1
				}
			}
			s.Sets = append(s.Sets, g)
			s.Rewards = append(s.Rewards, []float64{float64(rng.IntN(2)), rng.Float64()})
		}
		c := mustCompute(t, s)
		want := make([]int, tc.traces)
		for _, g := range s.Sets {
			for _, y := range g {
				want[y]++
			}
		}
		if !slices.Equal(c.Appearances, want) {
			t.Errorf("%d traces, %d sets: appearances differ", tc.traces, tc.sets)
		}
		var total, scale float64
		for y, a := range c.Search {
			total += float64(c.Appearances[y]) * a
			scale += float64(c.Appearances[y]) * math.Abs(a)
		}
		if math.Abs(total) > 1e-12*scale {
			t.Errorf("%d traces, %d sets: sum |G(y)| A_search(y) = %g, want 0 (scale %g)", tc.traces, tc.sets, total, scale)
		}
	}
}

// TestHugeSizes: sizes up to MaxInt give an error or a batch within
// combin.MaxSize entries, never a panic or a huge allocation; a Batch
// claiming more than combin.MaxSize traces is refused before anything is
// allocated.
func TestHugeSizes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.OneOf(rapid.IntRange(-2, 64), rapid.IntRange(combin.MaxSize-2, combin.MaxSize+2), rapid.IntRange(0, math.MaxInt), rapid.Just(math.MaxInt))
		a := rapid.SliceOfN(size, 5, 5).Draw(t, "args")
		// Entries of the batch, in float64 (no overflow): a batch that is
		// valid but large is not built, to keep the test small.
		problems, traces, sets, n, n2 := float64(a[0]), float64(a[1]), float64(a[2]), float64(a[3]), float64(a[4])
		entries := max(problems*traces, problems*sets*n, problems*sets*n2)
		if slices.Min(a) >= 1 && a[3] <= a[1] && entries <= combin.MaxSize && entries > 1<<16 {
			return
		}
		b, err := NewUniformBatch[float32](a[0], a[1], a[2], a[3], a[4])
		if (err == nil) != (slices.Min(a) >= 1 && a[3] <= a[1] && entries <= combin.MaxSize) {
			t.Fatalf("NewUniformBatch%v: error %v", a, err)
		}
		if err == nil && (len(b.Members) > combin.MaxSize || len(b.Rewards) > combin.MaxSize || sum(b.Traces) > combin.MaxSize) {
			t.Fatalf("NewUniformBatch%v: %d members, %d rewards, %d traces", a, len(b.Members), len(b.Rewards), sum(b.Traces))
		}
		valid := a[0] >= 1 && a[1] >= 1 && a[0] <= combin.MaxSize-a[1]
		if a[0] >= 0 && a[1] >= 0 && a[0] <= combin.MaxSize-a[1] && a[0]+a[1] > 1<<16 {
			// Within the cap, a dst of that size is allocated even when a
			// problem of no traces is rejected: not worth the test's time.
			return
		}
		in := Batch[float64]{Traces: []int{a[0], a[1]}, Sets: []int{1, 1}, SetSizes: []int{1, 1}, Members: []int{0, 0}, RewardCounts: []int{1, 1}, Rewards: []float64{1, 0}}
		var dst BatchCredit[float64]
		if err := ComputeBatch(&dst, in); valid != (err == nil) {
			t.Fatalf("traces %d and %d: error %v", a[0], a[1], err)
		}
	})
}

// TestPinnedBits pins the bits of every output of a batch with real
// rewards of mixed magnitudes and unscorable outputs, float64 and float32:
// the results are the same on every architecture (the kernel has no
// multiply-add the compiler could fuse), so a change here is a change of
// the arithmetic, which the conformance vectors of cmd/spiral would also
// see.
func TestPinnedBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 0))
	specs := paperSpecs(64, 5)
	for p := range specs {
		scale := []float64{1, 1e-3, 1e8, 1e15, 0x1p-1060}[p%5]
		for i, rs := range specs[p].Rewards {
			for j := range rs {
				rs[j] = (rng.Float64() - 0.25) * scale
			}
			specs[p].Rewards[i] = rs
		}
		if p%3 == 0 {
			specs[p].Unscorable = [][]bool{{false, true, false, false}, {false, false, false, false}, {true, true, true, true}, {false, false, true, false}}
		}
	}
	h := fnv.New64a()
	put := func(x uint64) { _ = binary.Write(h, binary.LittleEndian, x) }
	in64 := toBatch[float64](specs)
	var d64 BatchCredit[float64]
	if err := ComputeBatch(&d64, in64); err != nil {
		t.Fatal(err)
	}
	for _, xs := range [][]float64{d64.SetScores, d64.SetAdvantages, d64.Search, d64.Aggregation} {
		for _, x := range xs {
			put(math.Float64bits(x))
		}
	}
	in32 := toBatch[float32](specs)
	var d32 BatchCredit[float32]
	if err := ComputeBatch(&d32, in32); err != nil {
		t.Fatal(err)
	}
	for _, xs := range [][]float32{d32.SetScores, d32.SetAdvantages, d32.Search, d32.Aggregation} {
		for _, x := range xs {
			put(uint64(math.Float32bits(x)))
		}
	}
	if got, want := h.Sum64(), uint64(0xada14dbab0559da4); got != want {
		t.Errorf("output bits hash to %#x, want %#x", got, want)
	}
}
