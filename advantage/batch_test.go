package advantage

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"spiral/internal/credit"
)

// toBatch lays problems out flat, converting rewards to F.
func toBatch[F float32 | float64](specs []spec) Batch[F] {
	var b Batch[F]
	for _, s := range specs {
		b.Traces = append(b.Traces, s.Traces)
		b.Sets = append(b.Sets, len(s.Groups))
		for i, g := range s.Groups {
			b.SetSizes = append(b.SetSizes, len(g))
			b.Members = append(b.Members, g...)
			b.RewardCounts = append(b.RewardCounts, len(s.Rewards[i]))
			for _, r := range s.Rewards[i] {
				b.Rewards = append(b.Rewards, F(r))
			}
		}
	}
	return b
}

// TestBatchMatchesCompute: ComputeBatch on random batches gives, bitwise,
// what Compute gives problem by problem, at the right offsets.
func TestBatchMatchesCompute(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.Custom(drawSpec), 1, 6).Draw(t, "problems")
		in := toBatch[float64](specs)
		dst, err := NewBatchCredit(in)
		if err != nil {
			t.Fatal(err)
		}
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
		}
		if diff := cmp.Diff(want, dst); diff != "" {
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
		d64, err := NewBatchCredit(in64)
		if err != nil {
			t.Fatal(err)
		}
		d32, err := NewBatchCredit(in32)
		if err != nil {
			t.Fatal(err)
		}
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
		}
		if diff := cmp.Diff(want, d32); diff != "" {
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
		{1, MaxTraces + 1, 1, 1, 1}, {1 << 12, MaxTraces, 1, 1, 1}, {1 << 30, 8, 4, 4, 4}, {1 << 62, 8, 4, 4, 4}} {
		if _, err := NewUniformBatch[float32](bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("NewUniformBatch%v: no error", bad)
		}
	}
}

// TestComputeBatchAllocs: with a reused dst, ComputeBatch allocates
// nothing, for float64 and float32, including a problem with more traces
// than one accumulation chunk.
func TestComputeBatchAllocs(t *testing.T) {
	specs := paperSpecs(16, 1)
	specs = append(specs, spec{Traces: 3*credit.TraceChunk + 5, Groups: [][]int{{0, 150}, {3*credit.TraceChunk + 4, 64, 1}}, Rewards: [][]float64{{1, 0}, {0.5}}})
	in64, in32 := toBatch[float64](specs), toBatch[float32](specs)
	d64, err := NewBatchCredit(in64)
	if err != nil {
		t.Fatal(err)
	}
	d32, err := NewBatchCredit(in32)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { _ = ComputeBatch(&d64, in64) }); n != 0 {
		t.Errorf("float64: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(20, func() { _ = ComputeBatch(&d32, in32) }); n != 0 {
		t.Errorf("float32: %v allocations, want 0", n)
	}
}

// TestManyTraces: a problem with more traces than one accumulation chunk
// agrees with the reference.
func TestManyTraces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		traces := rapid.IntRange(credit.TraceChunk-2, 3*credit.TraceChunk+2).Draw(t, "traces")
		var s spec
		s.Traces = traces
		for range rapid.IntRange(1, 6).Draw(t, "sets") {
			g := rapid.SliceOfNDistinct(rapid.IntRange(0, traces-1), 1, 10, func(y int) int { return y }).Draw(t, "group")
			if slices.ContainsFunc(s.Groups, func(h []int) bool { return slices.Equal(g, h) }) {
				continue
			}
			s.Groups = append(s.Groups, g)
			s.Rewards = append(s.Rewards, rapid.SliceOfN(rapid.Float64Range(0, 1), 1, 4).Draw(t, "rewards"))
		}
		if diff := cmp.Diff(reference(s), mustCompute(t, s), approx(1e-12)); diff != "" {
			t.Fatalf("%d traces (-reference +got):\n%s", traces, diff)
		}
	})
}

// TestWholeFamily: all C(8, 4) = 70 sets of the paper's N1 = 8, n = 4, more
// than the sets whose scores are cached, against the reference.
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
		s.Groups = append(s.Groups, g)
		s.Rewards = append(s.Rewards, []float64{rng.Float64(), rng.Float64(), float64(rng.IntN(2))})
	}
	if len(s.Groups) != 70 || len(s.Groups) <= credit.SetCache {
		t.Fatalf("%d sets, want 70 > credit.SetCache = %d", len(s.Groups), credit.SetCache)
	}
	c := mustCompute(t, s)
	if diff := cmp.Diff(reference(s), c, approx(1e-12)); diff != "" {
		t.Fatalf("(-reference +got):\n%s", diff)
	}
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
