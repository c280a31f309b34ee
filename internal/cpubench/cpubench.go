// Package cpubench runs a benchmark body under b.Loop and reports, beside
// wall-clock ns/op, the CPU time of the benchmark's own OS thread per
// iteration. It is used by the benchmarks of this module only.
package cpubench

import (
	"runtime"
	"testing"
)

// Loop runs body under b.Loop with allocations reported and, where the
// platform can measure it (Linux: clock_gettime CLOCK_THREAD_CPUTIME_ID,
// nanoseconds), reports cpu-ns/op: the CPU time of the benchmark's own OS
// thread per iteration. On a machine shared with other work, wall-clock
// ns/op counts the time the thread waited for a core; cpu-ns/op does not.
// (Work the runtime does on other threads, such as background garbage
// collection for allocating baselines, is not counted, which flatters them.)
func Loop(b *testing.B, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	start, ok := threadCPU()
	for b.Loop() {
		body()
	}
	if end, _ := threadCPU(); ok {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
