package cpubench

import (
	"syscall"
	"unsafe"
)

// threadCPU returns the CPU time, in nanoseconds, that the calling OS thread
// has used, and true. It reads clock_gettime(CLOCK_THREAD_CPUTIME_ID),
// which counts in nanoseconds from the scheduler's own accounting;
// getrusage(RUSAGE_THREAD), sampled at the timer tick, is too coarse for
// runs of a millisecond.
func threadCPU() (int64, bool) {
	const clockThreadCPUTimeID = 3 // CLOCK_THREAD_CPUTIME_ID, Linux
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
