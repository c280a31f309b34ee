package cpubench

import "syscall"

// threadCPU returns the CPU time, in nanoseconds, that the calling OS thread
// has used (getrusage RUSAGE_THREAD, microsecond resolution), and true.
func threadCPU() (int64, bool) {
	const rusageThread = 1 // RUSAGE_THREAD, Linux only
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
