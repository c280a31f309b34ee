package main

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"spiral"
	"spiral/combin"
)

// cycleReader yields lines[0], lines[1], ... cyclically, total lines in
// all, calling every(k) after each k-th line it starts.
type cycleReader struct {
	lines       [][]byte
	total, next int
	cur         []byte
	every       int
	hook        func(k int)
}

func (r *cycleReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.cur) == 0 {
			if r.next == r.total {
				break
			}
			if r.next%r.every == 0 {
				r.hook(r.next)
			}
			r.cur = r.lines[r.next%len(r.lines)]
			r.next++
		}
		c := copy(p[n:], r.cur)
		r.cur = r.cur[c:]
		n += c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// checkingWriter checks that output line k is want[k % len(want)],
// keeping only the current line.
type checkingWriter struct {
	want    [][]byte
	partial []byte
	lines   int
	bad     int
}

func (w *checkingWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			w.partial = append(w.partial, c)
			continue
		}
		if !bytes.Equal(w.partial, w.want[w.lines%len(w.want)]) {
			w.bad++
		}
		w.lines++
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

// TestStreamManyLines streams many paper-configuration lines through
// credit (10,000; 1,000,000 with SPIRAL_LONG=1) and
// checks that every one gets its own correct output line, in order, and
// that memory does not grow with the input: the live heap, measured after
// a garbage collection every tenth of the input, stays within 16 MiB of
// where it started, while the input and output are each several
// megabytes (about 300 and 600 bytes a line; gigabytes in the long run).
func TestStreamManyLines(t *testing.T) {
	total := 10_000
	if long() {
		total = 1_000_000
	}
	const distinct = 256
	input, _ := paperLines(t, distinct, 7)
	lines := bytes.SplitAfter(input, []byte("\n"))[:distinct]
	// The expected output of each distinct line, from the bridge itself;
	// TestCreditMatchesLibrary and the vectors check that it is right.
	var want [][]byte
	var out bytes.Buffer
	if _, failed, err := stream(bytes.NewReader(input), &out, MaxLine, &creditHandler{base: spiral.Config{Order: combin.Shuffled}}); err != nil || failed != 0 {
		t.Fatal(failed, err)
	}
	want = bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))

	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	start := heap()
	peak := start
	in := &cycleReader{lines: lines, total: total, every: total / 10, hook: func(int) { peak = max(peak, heap()) }}
	w := &checkingWriter{want: want}
	n, failed, err := stream(in, w, MaxLine, &creditHandler{base: spiral.Config{Order: combin.Shuffled}})
	peak = max(peak, heap())
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(total) || failed != 0 || w.lines != total || w.bad != 0 || len(w.partial) != 0 {
		t.Errorf("%d lines in, %d failed, %d lines out, %d wrong", n, failed, w.lines, w.bad)
	}
	if grew := int64(peak) - int64(start); grew > 16<<20 {
		t.Errorf("live heap grew by %d bytes over %d lines", grew, total)
	}
	t.Logf("%d lines; live heap from %d to at most %d bytes", total, start, peak)
}
