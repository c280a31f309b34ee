package advantage

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzComputeBatch decodes bytes into a batch of any layout, sound or not,
// with any rewards and marks, and checks that ComputeBatch returns an error
// or finite results, never panics, and leaves dst untouched on error.
func FuzzComputeBatch(f *testing.F) {
	f.Add([]byte{1, 8, 4, 4, 4, 0, 1, 2, 3, 1, 2, 4, 5, 0, 4, 5, 6, 2, 3, 5, 6})
	f.Add([]byte{2, 3, 2, 1, 2, 0, 1, 1, 0, 0xff, 0xf8, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(int8(b))
		}
		var in Batch[float64]
		for range max(0, next()%4) {
			in.Traces = append(in.Traces, next())
			in.Sets = append(in.Sets, next()%5)
		}
		for range max(0, next()%12) {
			in.SetSizes = append(in.SetSizes, next()%5)
			in.RewardCounts = append(in.RewardCounts, next()%5)
		}
		for range max(0, next()%40) {
			in.Members = append(in.Members, next()%10)
		}
		if next()&1 == 1 {
			in.Check = Tuples
		}
		marks := next()&1 == 1
		for range max(0, next()%40) {
			var x float64
			if len(data) >= 8 {
				x = math.Float64frombits(binary.LittleEndian.Uint64(data))
				data = data[8:]
			} else {
				x = float64(next()) / 4
			}
			in.Rewards = append(in.Rewards, x)
			if marks {
				in.Unscorable = append(in.Unscorable, next()&1 == 1)
			}
		}
		var dst BatchCredit[float64]
		err := ComputeBatch(&dst, in)
		var be *BatchError
		if err != nil && !asBatchError(err, &be) {
			if dst.Search != nil {
				t.Fatalf("dst written on error %v", err)
			}
			return
		}
		for _, xs := range [][]float64{dst.SetScores, dst.SetAdvantages, dst.Search, dst.Aggregation} {
			for _, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("non-finite output %v for %+v", x, in)
				}
			}
		}
	})
}

func asBatchError(err error, be **BatchError) bool {
	e, ok := err.(*BatchError)
	*be = e
	return ok
}
