package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"spiral"
	"spiral/combin"
)

// benchLines is the number of paper-configuration lines per benchmark op.
const benchLines = 4096

// paperLines returns count credit input lines at the paper's configuration
// (N1 = 8, n = 4, K = 4, N2 = 4), plans drawn by the Planner and rewards
// 0/1 or uniform in [0, 1), and the decoded problems.
func paperLines(tb testing.TB, count int, seed uint64) ([]byte, []creditIn) {
	tb.Helper()
	rnd := rand.New(rand.NewPCG(seed, 0))
	c := spiral.Paper()
	var buf bytes.Buffer
	var o jsonOut
	ins := make([]creditIn, count)
	for q := range ins {
		p, err := c.Plan(seed, 0, uint64(q))
		if err != nil {
			tb.Fatal(err)
		}
		ins[q] = creditIn{Traces: 8, Sets: p.Sets, Rewards: rewardsOf(rnd, repeat(4, 4), q%2)}
		buf.Write(o.encode(ins[q]))
		buf.WriteByte('\n')
	}
	return buf.Bytes(), ins
}

// BenchmarkCredit measures credit's throughput on paper-configuration lines
// (benchLines lines per op), to io.Discard and through an OS pipe, beside
// what the same problems cost in parts and without the bridge: decoding
// alone, the library's Config.Credit alone (what the bridge calls per
// line), and Config.CreditBatch over all of them (a Go trainer's path).
func BenchmarkCredit(b *testing.B) {
	input, ins := paperLines(b, benchLines, 1)
	perLine := func(b *testing.B) {
		b.ReportMetric(float64(b.N)*benchLines/b.Elapsed().Seconds(), "lines/s")
	}
	b.Run("bridge", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(input)))
		for b.Loop() {
			lines, failed, err := stream(bytes.NewReader(input), io.Discard, MaxLine, &creditHandler{base: spiral.Config{Order: combin.Shuffled}})
			if err != nil || failed != 0 || lines != benchLines {
				b.Fatal(lines, failed, err)
			}
		}
		perLine(b)
	})
	b.Run("bridge-os-pipe", func(b *testing.B) {
		// Output through a real pipe, drained by another goroutine: the
		// write system calls a trainer's pipe costs.
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan error)
		go func() {
			_, err := io.Copy(io.Discard, r)
			drained <- err
		}()
		b.ReportAllocs()
		b.SetBytes(int64(len(input)))
		for b.Loop() {
			lines, failed, err := stream(bytes.NewReader(input), w, MaxLine, &creditHandler{base: spiral.Config{Order: combin.Shuffled}})
			if err != nil || failed != 0 || lines != benchLines {
				b.Fatal(lines, failed, err)
			}
		}
		perLine(b)
		w.Close()
		if err := <-drained; err != nil {
			b.Fatal(err)
		}
		r.Close()
	})
	b.Run("decode-only", func(b *testing.B) {
		b.ReportAllocs()
		var in creditLine // reused, as the bridge does
		for b.Loop() {
			for line := range bytes.Lines(input) {
				if _, err := creditSchema.decode(line, &in); err != nil {
					b.Fatal(err)
				}
			}
		}
		perLine(b)
	})
	b.Run("library-Credit", func(b *testing.B) {
		b.ReportAllocs()
		c := spiral.Paper()
		for b.Loop() {
			for _, in := range ins {
				if _, err := c.Credit(spiral.Plan{Sets: in.Sets}, in.Rewards, spiral.Lengths{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		perLine(b)
	})
	b.Run("library-CreditBatch", func(b *testing.B) {
		b.ReportAllocs()
		c := spiral.Paper()
		var batch spiral.Batch
		var members []int
		for _, in := range ins {
			for _, g := range in.Sets {
				members = append(members, g...)
			}
			for _, rs := range in.Rewards {
				batch.Rewards = append(batch.Rewards, rs...)
			}
		}
		batch.Plans = new(spiral.Plans)
		if err := c.CheckPlans(batch.Plans, members); err != nil {
			b.Fatal(err)
		}
		var dst spiral.BatchCredit
		for b.Loop() {
			if err := c.CreditBatch(&dst, batch); err != nil {
				b.Fatal(err)
			}
		}
		perLine(b)
	})
}
